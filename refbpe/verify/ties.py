"""Tie rules: which pair another trainer takes when several share the maximum count.

Each rule is one order on pairs (``a`` and ``b`` are byte strings) and picks
the greatest pair of the tied set under it::

    greatest-bytes      max (a, b)                         CS336 reference, refbpe
    smallest-bytes      min (a, b)
    greatest-concat     max (a + b, a, b)
    smallest-concat     min (a + b, a, b)
    smallest-ids        min (id a, id b), their ids        HF tokenizers
    smallest-ids-refbpe-layout   min ids, bytes 0-255 then merge k = 256 + k   rustbpe, bpeasy
    greatest-ids        max (id a, id b), their ids
    greatest-ids-refbpe-layout   max ids, refbpe layout
    first-counted       the pair met first scanning the text in order   minbpe, tiktoken _educational

A rule is consistent with a trainer if it picks their pair at every tie of
the replay.  ``first-counted`` needs the corpus text; ``FirstCounted`` scans
pre-tokens in text order with the replay's current segmentation, reading only
as far as the first tied pair (the text prefix is pre-tokenized once, on
demand, and kept as word indices).

``train_first_counted`` trains under ``first-counted`` (the merge engine
cannot: ``learn.tie_rules``), for ``--tie-rule first-counted``: a replay that
reads the tied pairs at each step (O(pairs tied) plus the text read so far, per
merge: meant for small inputs, as fuzz's).
"""

from ..pretokenize.patterns import get_pattern
from ..specials import special_pattern, split_specials
from .cutter import Cutter
from .replay import PairReplay

__all__ = ["TIE_RULES", "RULE_TEXT", "ORDER_FREE", "rule_choices", "FirstCounted", "train_first_counted"]

_GPT2 = get_pattern("gpt2")  # the tie rules are replayed on GPT-2's pieces

TIE_RULES = [
    ("greatest-bytes", "greatest (left bytes, right bytes), as the CS336 reference and refbpe"),
    ("smallest-bytes", "smallest (left bytes, right bytes)"),
    ("greatest-concat", "greatest concatenation left + right bytes"),
    ("smallest-concat", "smallest concatenation left + right bytes"),
    ("smallest-ids", "smallest (left id, right id) in their own id layout, as HF tokenizers"),
    (
        "smallest-ids-refbpe-layout",
        "smallest (left id, right id) with bytes as ids 0-255 and merge k as 256+k, as rustbpe and bpeasy",
    ),
    ("greatest-ids", "greatest (left id, right id) in their own id layout"),
    ("greatest-ids-refbpe-layout", "greatest (left id, right id) with merge k as id 256+k"),
    (
        "first-counted",
        "the pair counted first scanning the text in order, as minbpe and tiktoken's _educational trainer",
    ),
]
RULE_TEXT = dict(TIE_RULES)
ORDER_FREE = [r for r, _ in TIE_RULES if r != "first-counted"]
_BIG = float("inf")


def _ids(table, p):
    return (table.get(p[0], _BIG), table.get(p[1], _BIG))


def rule_choices(tied, their_ids, ref_ids, rules=None):
    """{rule: chosen pair} for the order-free ``rules`` (default: all) over ``tied``.

    ``their_ids`` ({bytes: id}, or None when their format has no ids) and
    ``ref_ids`` (the refbpe layout of their merges) serve the id rules; a pair
    whose side has no id sorts after every pair that has one.
    """
    out = {}
    for r in ORDER_FREE if rules is None else rules:
        if r == "greatest-bytes":
            out[r] = max(tied)
        elif r == "smallest-bytes":
            out[r] = min(tied)
        elif r == "greatest-concat":
            out[r] = max(tied, key=lambda p: (p[0] + p[1], p[0], p[1]))
        elif r == "smallest-concat":
            out[r] = min(tied, key=lambda p: (p[0] + p[1], p[0], p[1]))
        elif r.startswith(("smallest-ids", "greatest-ids")):
            table = ref_ids if r.endswith("refbpe-layout") else their_ids
            if table is None:
                continue
            if r.startswith("smallest"):
                out[r] = min(tied, key=lambda p: _ids(table, p))
            else:
                out[r] = max(tied, key=lambda p: (-1, -1) if _BIG in _ids(table, p) else _ids(table, p))
    return out


class FirstCounted(object):
    """The tied pair met first in text order, under a replay's segmentation.

    ``replay`` is a ``replay.PairReplay`` whose ``index`` maps pre-token bytes
    to word numbers.  Pre-tokens come from ``texts`` in order (special tokens
    removed), ``step`` characters at a time, cut at safe cuts (``cutter``) so that
    no pre-token is split.
    """

    def __init__(self, texts, special_tokens, replay, step=1 << 16):
        self.replay = replay
        self.sequence = []  # word numbers in text order (-1: a one-byte word)
        self._pieces = self._generate(texts, special_pattern(special_tokens, as_bytes=True), step)

    def _generate(self, texts, pattern, step):
        for text in texts:
            data = text.encode("utf-8", "surrogatepass")
            cutter = Cutter(data, pattern)
            pos = 0
            while pos < len(data):
                end = cutter.after(min(len(data), pos + step))
                for segment, is_special in split_specials(data[pos:end], pattern):
                    if not is_special:
                        for piece in _GPT2.pretokenize(segment):
                            yield piece
                pos = end

    def choose(self, tied_keys):
        tied = set(tied_keys)
        words, index, seq = self.replay.words, self.replay.index, self.sequence
        i = 0
        while True:
            if i == len(seq):
                piece = next(self._pieces, None)
                if piece is None:
                    return None
                seq.append(index.get(piece, -1))
            w = seq[i]
            i += 1
            if w < 0:
                continue
            ids = words[w]
            for j in range(len(ids) - 1):
                p = (ids[j] << 32) | ids[j + 1]
                if p in tied:
                    return p


def train_first_counted(word_counts, texts, special_tokens, wanted, min_count=1):
    """The merges a trainer under ``first-counted`` makes: at each step, among the pairs
    of the maximum count (at least ``min_count``), the one met first in ``texts`` (cut at
    ``special_tokens``, GPT-2's pieces: ``word_counts`` must be their counts); at most
    ``wanted``."""
    replay = PairReplay(word_counts)
    first = FirstCounted(texts, special_tokens, replay)
    merges = []
    while len(merges) < wanted:
        m = replay.best()
        if m < max(1, min_count):
            break
        k = first.choose(replay.tied_keys(m))
        if k is None:
            raise ValueError("first-counted: a tied pair is not in the text (word counts of another text?)")
        pair = replay.pair(k)
        merges.append(pair)
        replay.apply(pair)
    return merges
