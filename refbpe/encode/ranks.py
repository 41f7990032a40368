"""The tokenizer's rank tables: which adjacent pair of ids merges, and when.

``RankTables`` (a base of ``Tokenizer``) builds one table, ``_ranks``
{packed (left id, right id): rank << shift | merged id}, from a merge list
(``_merge_ranks``) or from tiktoken's ranks, where every split of every token
into two tokens is a pair (``_rank_pairs``), and the aids that make a lookup
cheap or unneeded (``_index_pairs``).  Invariant: the smallest packed value is
the lowest rank, so the piece encoders (``piece_ids``) compare ints only.
``_ranks_grow`` says whether a merge can ever make a pair that ranks below it
(never, for a merge list), which ``PieceEncoder._encode_long_piece`` needs.

Cost: O(vocab + merges) for a merge list, plus a 65,536-entry table of byte
pairs; for ranks, one look-up per (token, prefix token) pair.
"""

from __future__ import annotations

__all__ = ["NO_MERGE", "RankTables", "ZeroDefault", "dense"]

NO_MERGE = 1 << 62  # above every packed rank


class RankTables(object):
    """The rank tables of a ``Tokenizer`` (its base; the methods read and set its attributes)."""

    def _merge_ranks(self):
        """{packed (left id, right id): rank << shift | merged id}.

        One int per pair: the smallest value is the lowest rank, and no tuple
        is built or unpacked per lookup.
        """
        self._shift = shift = max(16, (max(self.vocab, default=0) + 1).bit_length())
        ranks = {}
        for rank, (a, b) in enumerate(self.merges):
            try:
                left, right, merged = self._id_of[a], self._id_of[b], self._id_of[a + b]
            except KeyError:
                raise ValueError("merge %d (%r, %r) uses a token missing from the vocab" % (rank, a, b))
            ranks.setdefault((left << shift) | right, (rank << shift) | merged)
        return ranks

    def _rank_pairs(self):
        """{packed (left id, right id): rank << shift | id} for every token that is two tokens
        joined, in any split (the id of a tiktoken token is its rank).

        Int keys, as ``_merge_ranks``, not byte slices of the piece: one hash of
        an int per lookup instead of a slice and a hash of bytes (the int-key
        gain of the packed cache keys is measured by perf/micro.py encode-small-key).

        The left parts of a token are the tokens it begins with: in sorted order
        those come before it, each beginning the next, so a stack finds them and
        only the right part is looked up: 776K look-ups for o200k_base's 446K
        pairs instead of two per split of every token.  Measured by
        perf/encode_profile.py (engine column, PyPy): o200k_base 0.55 s against
        0.80-0.87 s looking up both parts of every split."""
        rank_of, shift = self._rank_of, self._shift
        get = rank_of.get
        pairs = {}
        prefixes = []  # [(token, rank)] of the tokens that begin ``token``, each beginning the next
        self._sorted_tokens = tokens = sorted(rank_of)  # kept for ``backtrack``'s trie
        for token in tokens:
            while prefixes and not token.startswith(prefixes[-1][0]):
                prefixes.pop()
            r = rank_of[token]
            for left_token, left in prefixes:
                right = get(token[len(left_token) :])
                if right is not None:
                    pairs[(left << shift) | right] = (r << shift) | r
            prefixes.append((token, r))
        return pairs

    def _index_pairs(self):
        """Two aids to the pair table ``_ranks``, which is too big for the CPU caches.

        ``_byte_pairs[b1 << 8 | b2]`` is the entry of two single-byte tokens (a
        pre-token's first lookups), and ``_left[i]`` / ``_right[i]`` say whether
        id ``i`` is the left / right part of any pair at all, so most misses
        cost no lookup.  The encode throughput this serves is measured by
        perf/encode_patterns.py (cl100k_base and o200k_base against tiktoken).
        """
        shift, table, none = self._shift, self._ranks, NO_MERGE
        mask = (1 << shift) - 1
        size = max(self.vocab, default=0) + 1
        if dense(size, len(self.vocab)):
            left, right = bytearray(size), bytearray(size)
        else:  # ids far apart (a rank of 2,000,000,000 in a short file): sized by the vocab instead
            left, right = ZeroDefault(), ZeroDefault()
        for key in table:
            left[key >> shift] = 1
            right[key & mask] = 1
        if isinstance(left, bytearray):
            left, right = bytes(left), bytes(right)
        self._left, self._right = left, right
        self._ranks_grow = _ranks_grow(table, shift)
        self._byte_gap = None in self._byte_id  # a byte with no token: ``_merge_piece`` checks each piece
        byte_id = [none if i is None else i for i in self._byte_id]
        self._byte_pairs = [
            table.get((byte_id[b1] << shift) | byte_id[b2], none)
            if byte_id[b1] != none and byte_id[b2] != none
            else none
            for b1 in range(256)
            for b2 in range(256)
        ]


def dense(size, count):
    """Whether a table indexed by id up to ``size`` stays within a small multiple of the ``count``
    ids it holds: then a list or bytes, else a dict (memory by what is there, not by the largest id)."""
    return size <= 4 * count + 65536


class ZeroDefault(dict):
    """A dict read like a zero-filled array: a missing id is 0."""

    def __missing__(self, key):
        return 0


def _ranks_grow(table, shift):
    """Whether every pair ranks after the pairs that make its parts.

    True for a table built from a merge list (a merge can only use tokens
    made before it); then a merge never makes a pair that ranks below it,
    which ``Tokenizer._encode_long_piece`` relies on.  O(size of the table).
    """
    mask = (1 << shift) - 1
    made_at = {}
    for v in table.values():
        z, rank = v & mask, v >> shift
        if rank < made_at.get(z, rank + 1):
            made_at[z] = rank
    for key, v in table.items():
        rank = v >> shift
        if rank <= made_at.get(key >> shift, -1) or rank <= made_at.get(key & mask, -1):
            return False
    return True
