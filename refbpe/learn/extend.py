"""Extending a trained model: its first K merges replayed on a corpus, then training goes on.

Definition (docs/extend.md).  Extending a parent with merges m_1..m_n to vocab
size M on a corpus C under a profile P:

1. the inherited merges are m_1..m_K (K = n unless ``inherit_merges`` says
   fewer); each is applied to C's word counts in its order, left to right
   without overlap, whatever C's counts would have chosen (a merge whose pair
   does not occur in C still makes its token);
2. then P's rule chooses the next merges on the result, up to M.

So on the corpus the parent was trained on, under its profile, training to N
then extending to M equals training to M (the prefix property: the first N
choices are the same choices), and on any corpus the result equals replaying
the K merges and continuing (``naive.naive_train_bpe_from_counts(extend=)``
spells that out).

Ids: every token the child keeps from the parent (its bytes, the K merges'
tokens, its special tokens) keeps the parent's id; the child's other tokens
(new merges, new special tokens, bytes the parent lacked) take the free ids
from the smallest up, in the order of the profile's own layout.  The parent's
special tokens are the child's first special tokens.  Ids have gaps only when
the parent's dropped merges (K < n) held ids that no new token fills.

Example: a parent [(b"o", b"w")] with ``<|endoftext|>`` at id 257 extended by
one merge: ``ow`` keeps 256, the special keeps 257, the new merge takes 258.

Cost: reading the parent O(file size) and hashing its files; relabelling
O(vocab); training: one replay of the K merges plus the new merges
(``inherited.replay``).
"""

from __future__ import annotations

import hashlib
import itertools
import os
from typing import Dict, Iterable, List, Optional, Tuple, Union

from ..formats.detect import FILE_OF, gpt2_paths
from ..formats.model import Model, special_ids

__all__ = ["Parent", "load_parent", "keep_parent_ids"]


class Parent(object):
    """The part of a parent model an extension keeps.

    ``merges``: its first K merges; ``ids`` {bytes: id} of its kept ordinary
    tokens (bytes and the K merges' tokens); ``special_ids`` {str: id} of its
    special tokens, in its order; ``record``: what the manifest says of it
    (format, sha256 of each file, K, its number of merges).
    """

    def __init__(
        self,
        merges: List[Tuple[bytes, bytes]],
        ids: Dict[bytes, int],
        special_ids: Dict[str, int],
        record: Dict[str, object],
    ) -> None:
        self.merges = merges
        self.ids = ids
        self.special_ids = special_ids
        self.record = record

    @property
    def special_tokens(self) -> List[str]:
        return list(self.special_ids)

    def with_specials(self, special_tokens: Iterable[str]) -> List[str]:
        """The child's special tokens: the parent's, then the others of ``special_tokens``."""
        out = self.special_tokens
        out += [t for t in special_tokens if t not in self.special_ids]
        return out


def load_parent(source: Union[Model, Parent], inherit_merges: Optional[int] = None) -> Parent:
    """The ``Parent`` of ``source`` (a ``Model``, as ``refbpe.read_model`` returns
    for any format, or a ``Parent``), keeping its first ``inherit_merges`` merges
    (all by default).  The record hashes the files the model was read from
    (``Model.path``).  ValueError when K is out of range."""
    if isinstance(source, Parent):
        if inherit_merges is None or inherit_merges == len(source.merges):
            return source
        raise ValueError("a loaded parent keeps its merges; load it again with inherit_merges")
    if not isinstance(source, Model):
        raise TypeError(
            "extend takes a Model (refbpe.read_model(path)) or an extend.Parent, got %r" % (source,)
        )
    model = source
    files = _file_hashes(model.path, model.format) if model.path else None
    n = len(model.merges)
    k = n if inherit_merges is None else inherit_merges
    if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= n:
        raise ValueError(
            "inherit_merges must be an integer from 0 to the parent's %d merges, got %r" % (n, k)
        )
    merges = list(model.merges[:k])
    specials = special_ids(model.vocab, model.special_tokens)
    made = {a + b for a, b in merges}
    taken = set(specials.values())
    ids = {}
    for i in sorted(model.vocab):
        token = model.vocab[i]
        if i not in taken and (len(token) == 1 or token in made):
            ids.setdefault(token, i)
    record = {"format": model.format, "files": files, "inherit_merges": k, "parent_merges": n}
    return Parent(merges, ids, specials, record)


def keep_parent_ids(
    vocab: Dict[int, bytes], special_tokens: Iterable[str], parent: Parent
) -> Dict[int, bytes]:
    """``vocab`` (a profile's own layout) renumbered so the parent's tokens keep their ids.

    >>> p = Parent([(b"o", b"w")], {b"ow": 256, **{bytes([i]): i for i in range(256)}},
    ...            {"<|endoftext|>": 257}, {})
    >>> fresh = {**{i: bytes([i]) for i in range(256)}, 256: b"ow", 257: b"low", 258: b"<|endoftext|>"}
    >>> out = keep_parent_ids(fresh, ["<|endoftext|>"], p)
    >>> out[256], out[257], out[258]
    (b'ow', b'<|endoftext|>', b'low')
    """
    special_at = {i: t for t, i in special_ids(vocab, special_tokens).items()}
    new_id = {}
    for i in sorted(vocab):
        if i in special_at:
            j = parent.special_ids.get(special_at[i])
        else:
            j = parent.ids.get(vocab[i])
        if j is not None:
            new_id[i] = j
    used = set(new_id.values())
    free = (k for k in itertools.count() if k not in used)
    for i in sorted(vocab):
        if i not in new_id:
            new_id[i] = next(free)
    return {new_id[i]: vocab[i] for i in sorted(vocab)}


def _file_hashes(path, fmt):
    """{file name: sha256} of the files ``path`` was read from (gpt2: vocab.json, merges.txt)."""
    if fmt == "gpt2":
        files = list(gpt2_paths(path))
    elif os.path.isdir(path):
        files = [os.path.join(path, FILE_OF[fmt])]
    elif os.path.isfile(path):
        files = [path]
    else:
        files = []  # a named encoding (cl100k_base): no file of its own here
    out = {}
    for f in files:
        h = hashlib.sha256()
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        out[os.path.basename(f)] = h.hexdigest()
    return out
