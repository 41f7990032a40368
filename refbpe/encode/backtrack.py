"""The backtracking piece encoder: longest token first, each adjacent pair checked, back off.

The merging loop of ``piece_ids`` (lowest-keyed adjacent pair first, leftmost on a tie; the
key of a pair is its packed value in the pair table ``_ranks``, for a merge list and for
tiktoken's ranks alike) has three properties that let its result be found left to right,
without merging (the algorithm of the ``bpe`` crate of github/rust-gems, backtracking encoder):

1. *A token sequence is the encoding of its bytes iff each token encodes to itself and each
   adjacent pair does* (``encode(x + y) == [x, y]``: the pair is *valid*).  Only if: a merge
   inside one final token never crosses its bounds, so each stretch of the final tokens is
   merged as it would be alone (at each step the lowest pair of the stretch is the lowest of
   the whole, leftmost among equals).  If: run the whole; before its first merge across a
   token boundary, each token's bytes are merged as alone, and the merges of two neighbours
   x, y interleave as in the run of ``x + y`` alone (a step picks the lowest of the pairs
   present; pairs elsewhere change neither side).  The crossing merge, chosen over everything
   in the whole, is chosen in the run of ``x + y`` too, unless that run crossed earlier:
   either way (x, y) is not valid.  So with valid pairs nothing crosses, and each token
   completes.
2. *The encoding is unique*, so any sequence of self-encoding tokens with valid pairs that
   covers the piece is it; and every prefix of such a sequence is the encoding of the bytes
   it covers.  Hence a depth-first search over "a token starting here, valid with the last
   one" finds it; a position from which no token continues is dead whatever led there (the
   tokens before it are the encoding of the bytes before it), so it is marked and never
   entered again.  Tokens are tried longest first (the longest is usually right), from a trie
   over the vocab's bytes; on failure the next shorter token that is a prefix of it; when
   none is left the last token is popped and its next shorter one tried.
3. *A pair is checked without merging* when the two tokens' own runs are monotone (the keys
   they merge by never decrease: always for a merge list in creation order, whose merges use
   earlier merges' tokens; checked per token otherwise, and true of every token of gpt2,
   cl100k_base and o200k_base as tiktoken's ranks).  Then the run of ``x + y`` is the two runs merged by key
   (x's first on a tie: it is to the left), and the pair across the boundary changes only
   when x's rightmost part or y's leftmost part is made.  Going back in time from (x, y):
   the later of the two makings is undone (x's when its key is larger, else y's), giving the
   pair before it; a pair (a, b) across the boundary would have merged before the making
   that ended it iff its key is below that making's key (x's side; the crossing pair is to
   the right of x's pairs, so a tie goes to x) or at most it (y's side).  (x, y) is valid
   iff no such pair is found down to two single bytes.  Per token the tables hold the key
   of the merge that made it and its two parts then (``_learn``: the one split into a
   prefix token and the rest whose pair is in the table and that the run reaches, which is
   the same walk without the last pair); a token whose run is not monotone, or whose parts'
   runs are not, is checked by merging ``x + y`` with the merging loop instead.

Tables, all built as the search first needs them (a tokenizer that never meets a long piece
builds none): the trie's nodes, each a range of the sorted tokens, all of a node's children
made when it is first walked through (each child's range found by ``bisect``); per token, its
kind (unknown, monotone self-encoding, self-encoding checked by merging, not self-encoding),
the key that made it and its two parts (three lists and a bytearray of the vocab's size: about
5 MB for o200k_base); the pair table's Bloom filter (``pair_filter``, 1 MB, one pass over the
table).  A token that does not encode to itself is never tried (tiktoken's
"a piece that is a token is that token" is the caller's, on the whole piece).

Cost: a position is entered at most once (the search leaves one only when it is dead); there
it tries at most the L tokens that start there (L: the longest token), each checked by a walk
of at most 2L steps down two part trees, and each token taken costs a trie walk of at most L
bytes: O(n L^2) for a piece of n bytes at worst, against O(n log n) for the heap of
``piece_ids``; in practice 1-14 steps per byte.  The search gives up past ``_STEPS_PER_BYTE``
steps per byte covered and returns None (the caller merges the piece), so what it costs
beyond the heap is O(n), besides the tables it learns (bounded by the vocab).  In Python the
constant matters more than the order: a pair walk is a few look-ups in the pair table, which
is too big for the CPU caches (a Bloom filter of its keys answers most misses,
``pair_filter``), and the merging loop does a short piece in about as many; so this encoder
serves only the long pieces of tiktoken's tables made of few byte values
(``piece_ids._encode_piece``, measured by perf/piece_lengths.py --backtrack).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Callable, Dict, List, Optional

from .ranks import NO_MERGE

__all__ = ["Backtracker"]

_UNKNOWN, _MONOTONE, _BY_MERGING, _NOT_SELF = 0, 1, 2, 3

# The search gives up when its steps (candidates, trie steps, pair-walk steps, bytes of pairs
# checked by merging) pass this many per byte of the piece it has covered, plus _STEPS_FLOOR:
# a search that keeps backing off gives up early, and the heap does the piece.  Measured by
# perf/piece_lengths.py --backtrack (steps per byte, 100K-byte pieces, its allowance lifted):
# 1.1-13.5 on runs of spaces, 'a', 'ab', random strings, words, digits, Cyrillic, Greek, emoji
# and random bytes with gpt2, cl100k_base and o200k_base; 44-124 on a run of '=' and 110-208 on
# one of '-' (cl100k_base, o200k_base: tokens of 20 lengths), where the heap is faster.
_STEPS_PER_BYTE = 16
_STEPS_FLOOR = 4096

# The pair walk's look-ups mostly miss (no such pair): a one-hash Bloom filter of the table's
# keys, 2 ** 23 bits (1 MB), answers most of them without touching the table (446K keys for
# o200k_base: 5% false hits).  Both multipliers keep x * a + y * b within 63 bits for ids
# below 2 ** 30 (no big ints under PyPy).
_FILTER_BITS = 23
_FILTER_MASK = (1 << _FILTER_BITS) - 1
_MIX_LEFT, _MIX_RIGHT = 0x9E3779B1, 0x85EBCA77


def pair_filter(table, shift):
    """The Bloom filter (bytes) of the pairs (left id, right id) that are keys of ``table``."""
    mask = (1 << shift) - 1
    bits = bytearray(1 << (_FILTER_BITS - 3))
    for key in table:
        h = (key >> shift) * _MIX_LEFT + (key & mask) * _MIX_RIGHT
        h = (h ^ (h >> 29)) & _FILTER_MASK
        bits[h >> 3] |= 1 << (h & 7)
    return bytes(bits)


class Backtracker(object):
    """The backtracking encoder over one tokenizer's pair table.

    ``table`` {packed (left id, right id): packed key} and ``shift``: the tokenizer's
    ``_ranks`` and ``_shift`` (``key & mask`` is the merged id); ``byte_id``: the id of
    each byte; ``tokens``: the bytes of every token the merging loop can make, sorted (others
    may be there: they fail ``_learn``); ``id_of``: their ids, as the loop makes them;
    ``vocab`` {id: bytes}; ``size``: one past the largest id; ``merge``: the merging loop,
    the check of pairs that cannot be walked.
    """

    def __init__(
        self,
        table: Dict[int, int],
        shift: int,
        byte_id: List[int],
        tokens: List[bytes],
        id_of: Dict[bytes, int],
        vocab: Dict[int, bytes],
        size: int,
        merge: Callable[[bytes], List[int]],
    ) -> None:
        self._table, self._shift = table, shift
        self._byte_id, self._tokens, self._id_of, self._vocab = byte_id, tokens, id_of, vocab
        self._merge = merge
        self._filter = None  # ``pair_filter`` of the table, built by the first search
        self._kind = bytearray(size)
        self._made = [-1] * size  # the key of the merge that made the token (-1: one byte)
        self._left = [0] * size  # its two parts then
        self._right = [0] * size
        # trie nodes: node 0 is the root (the empty prefix); a node is a range of ``tokens``
        self._child = {}  # (node << 8) | byte -> child node
        self._lo, self._hi, self._depth = [0], [len(tokens)], [0]
        self._token = [-1]  # the id of the node's prefix, -1 if it is no token
        self._shorter = [-1]  # the deepest proper ancestor that is a token, -1 if none
        self._expanded = bytearray(1)
        self.steps = 0  # the steps of the last search (perf/piece_lengths.py --backtrack shows them)

    # -- the search ------------------------------------------------------------------------

    def encode(self, piece: bytes) -> Optional[List[int]]:
        """The ids of ``piece`` (bytes), as the merging loop gives them; None if the search
        went past its allowance of steps (the caller then merges)."""
        n = len(piece)
        if not n:
            return []
        child, token, depth, shorter = self._child, self._token, self._depth, self._shorter
        expanded, kind = self._expanded, self._kind
        table, shift, made, left, right = self._table, self._shift, self._made, self._left, self._right
        none = NO_MERGE
        filter_bits = self._filter
        if filter_bits is None:
            filter_bits = self._filter = pair_filter(table, shift)
        allowance = _STEPS_PER_BYTE
        budget = _STEPS_FLOOR  # steps left: _STEPS_FLOOR + allowance * pos - steps taken
        dead = bytearray(n + 1)
        stack = []  # the nodes of the tokens taken
        pos = 0
        last = -1  # the last token taken
        start = 0  # where the next longest match starts; -1 when ``node`` holds the candidate
        node = 0
        while True:
            if start >= 0:
                # the longest token at ``start``: walk the trie as far as the piece follows it
                node, found, p = 0, -1, start
                while p < n:
                    b = piece[p]
                    nxt = child.get((node << 8) | b)
                    if nxt is None:
                        if expanded[node]:
                            break
                        nxt = self._expand(node, b)
                        expanded = self._expanded
                        if nxt < 0:
                            break
                    node = nxt
                    p += 1
                    if token[node] >= 0:
                        found = node
                budget -= p - start
                node = found
                start = -1
            budget -= 1  # a candidate
            t = token[node]
            k = kind[t]
            if k == _UNKNOWN:
                self._learn(t)
                k = kind[t]
            end = pos + depth[node]
            good = k != _NOT_SELF and not dead[end]
            if good and last >= 0:
                if k != _MONOTONE or kind[last] != _MONOTONE:
                    budget -= depth[node] + len(self._vocab[last])
                    good = self._valid_by_merging(last, t)
                else:
                    x, y, limit = last, t, none
                    while True:
                        budget -= 1
                        h = x * _MIX_LEFT + y * _MIX_RIGHT
                        h = (h ^ (h >> 29)) & _FILTER_MASK
                        if filter_bits[h >> 3] >> (h & 7) & 1 and table.get((x << shift) | y, none) < limit:
                            good = False
                            break
                        kx, ky = made[x], made[y]
                        if kx > ky:
                            limit = kx
                            x = right[x]
                        elif ky < 0:
                            break
                        else:
                            limit = ky + 1
                            y = left[y]
            if budget < 0:
                self.steps = _STEPS_FLOOR + allowance * pos - budget
                return None
            if good:
                stack.append(node)
                budget += allowance * (end - pos)
                pos = end
                if pos == n:
                    self.steps = _STEPS_FLOOR + allowance * pos - budget
                    return [token[v] for v in stack]
                last = t
                start = pos
                continue
            node = shorter[node]
            if node < 0:  # no token continues from ``pos``: back off one token
                dead[pos] = 1
                node = stack.pop()
                pos -= depth[node]
                budget -= allowance * depth[node]
                last = token[stack[-1]] if stack else -1
                # ``node`` is tried again: its end is dead now, so its next shorter one is next

    def _expand(self, node, b):
        """Make every child of ``node`` (one per next byte of its tokens, each group found by
        ``bisect``), mark it expanded, and return its child for byte ``b`` (-1 if none)."""
        tokens, child = self._tokens, self._child
        lo, hi, d = self._lo[node], self._hi[node], self._depth[node]
        self._expanded[node] = 1
        ancestor = node if self._token[node] >= 0 else self._shorter[node]
        i = lo
        if i < hi and len(tokens[i]) == d:  # the prefix itself sorts first
            i += 1
        while i < hi:
            prefix = tokens[i][: d + 1]
            c = prefix[d]
            j = bisect_left(tokens, prefix[:d] + bytes((c + 1,)), i, hi) if c < 255 else hi
            new = len(self._lo)
            self._lo.append(i)
            self._hi.append(j)
            self._depth.append(d + 1)
            self._token.append(self._id_of[prefix] if len(tokens[i]) == d + 1 else -1)
            self._shorter.append(ancestor)
            self._expanded.append(0)
            child[(node << 8) | c] = new
            i = j
        return child.get((node << 8) | b, -1)

    # -- the pair check ----------------------------------------------------------------------

    def _valid_by_merging(self, x, y):
        return self._merge(self._vocab[x] + self._vocab[y]) == [x, y]

    def _walk(self, x, y, limit):
        """No pair across the boundary of x, y merges before the making that ``limit`` stands
        for, nor before any earlier making (module docstring, 3); both tokens monotone."""
        table, shift, made, left, right = self._table, self._shift, self._made, self._left, self._right
        while True:
            if table.get((x << shift) | y, NO_MERGE) < limit:
                return False
            kx, ky = made[x], made[y]
            if kx > ky:
                limit = kx
                x = right[x]
            elif ky < 0:
                return True
            else:
                limit = ky + 1
                y = left[y]

    def _reaches(self, x, y):
        """Whether the run of ``x + y`` reaches [x, y] (both monotone): the pair walk without
        its last pair."""
        kx, ky = self._made[x], self._made[y]
        if kx > ky:
            return self._walk(self._right[x], y, kx)
        if ky < 0:
            return True
        return self._walk(x, self._left[y], ky + 1)

    # -- what each token is ------------------------------------------------------------------

    def _learn(self, t):
        """Set the kind of token ``t`` (and of the tokens it is made of, first: a stack, not
        recursion, for tokens of any length), its key and its parts."""
        kind = self._kind
        todo = [t]
        while todo:
            u = todo[-1]
            if kind[u] != _UNKNOWN:
                todo.pop()
                continue
            data = self._vocab[u]
            if len(data) == 1:
                kind[u] = _MONOTONE if self._byte_id[data[0]] == u else _NOT_SELF
                todo.pop()
                continue
            splits = self._splits(u, data)
            unknown = [p for pair in splits for p in pair if kind[p] == _UNKNOWN]
            if unknown:
                todo.extend(unknown)
                continue
            kind[u] = self._kind_from(u, data, splits)
            todo.pop()

    def _splits(self, u, data):
        """[(l, r)]: ``data`` (the bytes of ``u``) as a token that is a proper prefix of it and
        the rest, when the pair merges into ``u``; longest prefix first."""
        table, shift, id_of = self._table, self._shift, self._id_of
        mask = (1 << shift) - 1
        prefixes = []
        node = 0
        for d in range(len(data) - 1):
            b = data[d]
            nxt = self._child.get((node << 8) | b)
            if nxt is None:
                nxt = -1 if self._expanded[node] else self._expand(node, b)
            if nxt < 0:
                break
            node = nxt
            if self._token[node] >= 0:
                prefixes.append((d + 1, self._token[node]))
        out = []
        for length, left in reversed(prefixes):
            right = id_of.get(data[length:])
            if right is not None and table.get((left << shift) | right, NO_MERGE) & mask == u:
                out.append((left, right))
        return out

    def _kind_from(self, u, data, splits):
        """The kind of ``u`` once its splits' parts are known.  The run of its bytes ends in
        one merge of two self-encoding parts it reaches: at most one split passes
        ``_reaches``; if every split's parts are monotone and none passes, ``u`` is not made."""
        kind, made = self._kind, self._made
        for left, right in splits:
            if kind[left] == _NOT_SELF or kind[right] == _NOT_SELF:
                continue
            if kind[left] != _MONOTONE or kind[right] != _MONOTONE:
                return _BY_MERGING if self._merge(data) == [u] else _NOT_SELF
            if self._reaches(left, right):
                key = self._table[(left << self._shift) | right]
                made[u], self._left[u], self._right[u] = key, left, right
                return _MONOTONE if key >= made[left] and key >= made[right] else _BY_MERGING
        return _NOT_SELF
