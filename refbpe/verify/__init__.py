"""Verification: compare another implementation's output with the reference,
and explain the first divergence.

Merges (``refbpe verify CORPUS... --vocab-size N --against PATH``)
    The reference merges come from ``count.count_words`` + ``merge.learn_merges``
    (or from a word-count file, see below).  At the first index k where the
    merge lists differ, both pairs' counts after the first k merges (which the
    two lists share) are computed under the reference semantics:

    * their pair has the maximum count too: a tie, broken differently.  Their
      choice is checked against the known tie rules (``TIE_RULES``):
      refbpe/CS336 take the greatest (left bytes, right bytes); HF tokenizers,
      rustbpe and bpeasy the smallest (left id, right id); minbpe and tiktoken's
      ``_educational`` the pair counted first (scanning the text in order).
    * its count is lower (or zero): the counts differ.  When the corpus is
      given (and small enough), their whole merge list is replayed under
      counting variants (special tokens counted as text, line-by-line reading,
      a prefix space) to say which one their merges are consistent with.

Word-count files (``*.counts.tsv[.gz]``, or ``--counts``)
    The format of ``refbpe.countfile``: ``count<TAB>escaped bytes`` lines.  ``refbpe count CORPUS... -o FILE``
    writes one; it lets another implementation's merge phase be verified
    alone.  Several files are added up.

Encodings (``refbpe verify --encode TEXT --ids IDS --against MODEL``)
    Their ids for TEXT (a ``.npy`` array or a JSON list) against refbpe's
    encoding of TEXT with the model at MODEL (any format), reporting the first
    differing position with its pre-token.

Modules: ``merges`` (the merge comparison), ``encoding`` (the id
comparison), ``replay`` (merges replayed over word counts), ``ties`` (tie
rules), ``variants`` (counting variants), ``display`` (bytes shown readably),
``profiles`` (``--profile``, and which trainer profile reproduces their model).
The command line is ``refbpe.cli.verify``.
"""

from .encoding import verify_encoding
from .merges import verify_merges
from .replay import PairReplay
from .ties import TIE_RULES
from .variants import VARIANTS, count_variant

__all__ = ["PairReplay", "TIE_RULES", "VARIANTS", "count_variant", "verify_encoding", "verify_merges"]
