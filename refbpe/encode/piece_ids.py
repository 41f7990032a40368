"""The piece encoders: the ids of one pre-token, and of the pre-tokens of a text.

``PieceEncoder`` (a base of ``Tokenizer``) merges the lowest-ranked adjacent
pair of a piece first (``_merge_piece``, O(n^2); pieces of ``_LONG_PIECE``
bytes or more over a linked list and a heap, O(n log n)), with tiktoken's rule
first where the tokenizer has ranks (a piece that is a token is that token:
``_encode_whole``; a long CJK piece is cut first, and only one with no place to
cut can be a token).  ``_encode_piece`` hands a long piece of few byte values of
tiktoken's tables to the backtracking search (``backtrack``) instead, which finds
the same ids.  A long
CJK piece is cut where no token spans it (``piece_cuts``) and its parts encoded
once each.  ``_encode_bytes`` walks a text's pre-tokens through two bounded
caches (not the CJK pieces it cuts: their parts are kept instead).  The tables are ``ranks``'.

Invariant: the ids of a piece are those of applying each merge, in rank
order, to the whole piece (the ``tokenizer`` module docstring argues why the
lowest-ranked-pair-first loop gives them).  These are the hot loops of
encoding; each trick keeps its reason and the perf/ script behind it.
"""

from __future__ import annotations

import heapq

from .backtrack import Backtracker
from .piece_cuts import PieceCuts
from .ranks import NO_MERGE, dense

__all__ = ["PieceEncoder"]

# Pieces this long (bytes) or longer take the O(n log n) path.  Crossovers measured by
# perf/piece_lengths.py under PyPy: 96-128 bytes for English and random letters, 32-48 for
# random Han, 128-192 for the real pieces of the chinese corpus (--corpus chinese).
_LONG_PIECE = 192

# Pieces this long (bytes) or longer that end in a character of three bytes (CJK, kana,
# Hangul, Thai, Devanagari, ...) are cut where no token spans them (_encode_in_parts); the
# test reads one byte.  Two-byte scripts (Russian) and code are left whole: their pieces
# rarely have such a place.  perf/micro.py encode-parts measures each text with and without.
_CUT_FROM = 8

# Pieces this long (bytes) or longer that end in a character of three bytes or more skip the
# piece cache (_encode_bytes): those it cuts (_extend_in_parts), whose parts it caches instead.
_UNCACHED_FROM = _CUT_FROM

# Pieces this long (bytes) or longer of tiktoken's tables, with at most _SEARCH_ALPHABET byte
# values in their first 256 bytes, go to the backtracking search (backtrack.py) first.  Measured
# by perf/piece_lengths.py --backtrack under PyPy (100K-byte pieces, cl100k_base and o200k_base;
# the search's best of three against the heap's, its first piece on a fresh tokenizer in
# parentheses): runs of spaces, 'a' and a box-drawing character 0.03-0.10x (0.16-0.82x), of 'ab'
# 0.14-1.02x (0.26-1.15x); random strings over 2, 4 and 16 letters 0.46-0.62x and digits 0.66x
# (0.58-1.03x); runs of '=' and '-' make it give up early, 1.0x (1.1-1.4x).  Left to the heap:
# random letters and words 0.94-1.15x (2-3.4x), random ASCII and bytes 1.1-2.5x (4-5.5x),
# Cyrillic, Greek and emoji 0.42-0.62x (0.6-2.5x).  Pieces of 16 and 32 bytes take it 1.08-2.34x
# the merging loop's time.  A first search costs the JIT about 30 traces more: a first 8 MB call
# of the chinese corpus, whose box-drawing lines are 200-byte runs, took 0.13-0.19 s more CPU
# with pieces of 192 bytes searched (perf/encode_first.py --trees), so only pieces the heap
# spends tens of milliseconds on are searched.  A merge list keeps its rank-by-rank heap
# (_encode_long_piece), which the search does not beat (GPT-2's: 1.24-3.6x the heap's time on 13
# of the 17 families).
_SEARCH_FROM = 1 << 16
_SEARCH_ALPHABET = 16
_CACHE_LIMIT = 1 << 15  # entries per cache generation at first (see _encode_bytes)
# A cache generation doubles, up to this many times, when a quarter of it came back from the
# previous one (_grown_after): the text's pieces outlive a generation.
_CACHE_DOUBLINGS = 2
_PARTS_LIMIT = 1 << 16  # parts kept by _encode_in_parts (short: a few MB)


class PieceEncoder(object):
    """The piece encoders of a ``Tokenizer`` (its base; the methods read its tables and caches)."""

    def _empty_caches(self):
        """The piece caches of ``_encode_bytes``, empty: each of two generations."""
        self._cache = {}  # pieces of 8 bytes or more -> ids
        self._small_cache = {}  # shorter pieces, under packed-int keys -> ids
        self._old, self._small_old = {}, {}  # the previous generation of each
        self._kept = 0  # entries taken from the previous generation (the small cache's do not grow)
        self._grown = 0  # doublings of a generation (``_grown_after``)

    def _encode_piece(self, piece):
        """Ids of one pre-token: ``_merge_piece``'s, found by the backtracking search
        (``backtrack.Backtracker``) where it measured faster (perf/piece_lengths.py
        --backtrack), when it does not give up: pieces of ``_SEARCH_FROM`` bytes or more of
        tables that need not grow (tiktoken's) with at most ``_SEARCH_ALPHABET`` byte values
        in their first 256 bytes (runs, DNA, hex, digits)."""
        if len(piece) >= _SEARCH_FROM and not self._ranks_grow and len(set(piece[:256])) <= _SEARCH_ALPHABET:
            backtracker = self._backtracker
            if backtracker is None:
                backtracker = self._backtracker = self._make_backtracker()
            if backtracker:
                found = backtracker.encode(piece)
                if found is not None:
                    return found
        return self._merge_piece(piece)

    def _make_backtracker(self):
        """The ``Backtracker`` of these tables, or False when the vocab lacks a byte (the
        merging loop raises) or its ids are far apart."""
        size = max(self.vocab, default=0) + 1
        if self._byte_gap or not dense(size, len(self.vocab)):
            return False
        id_of = self._id_of if self._rank_of is None else self._rank_of
        tokens = self.__dict__.get("_sorted_tokens") or sorted(id_of)
        return Backtracker(
            self._ranks, self._shift, self._byte_id, tokens, id_of, self.vocab, size, self._merge_piece
        )

    def _merge_piece(self, piece):
        """Ids of one pre-token: lowest-ranked adjacent pair first.

        ``chain`` holds the ids and the merges between them interleaved:
        ``chain[2k]`` is the k-th id and ``chain[2k + 1]`` the packed rank of
        the pair (k, k + 1).  A merge replaces the left id and deletes one
        slice of two (its rank and the right id); then only its two
        neighbours are looked up again, and only when both can be parts of a
        pair (``_index_pairs``).  Against rescanning every pair after each
        merge this is O(1) instead of O(n) lookups per merge, though on
        ordinary text's short pieces the two are close (perf/micro.py
        encode-neighbours under PyPy: 1.0-1.1x).  One list, built straight
        from the bytes where every byte has a token (``_byte_gap``) and scanned
        by a ``while`` loop, against two lists built from a list of ids and
        scanned by ``for`` over a ``range``: warm 8 MB calls 4-20% faster on 13
        of 15 texts and encodings, the others level (perf/encode_first.py
        --trees, with ``_encode_bytes``' key loop; each step in the
        CHANGELOG), though the loop alone races level
        (perf/micro.py encode-interleaved).  That is O(n) per merge, O(n^2) per
        piece; pieces of ``_LONG_PIECE`` bytes or more go to
        ``_encode_long_piece``, O(n log n).
        """
        byte_id = self._byte_id
        n = len(piece)
        if n < 2 or n >= _LONG_PIECE or self._byte_gap:
            ids = [byte_id[b] for b in piece]
            if None in ids:
                raise ValueError("the vocab lacks a single-byte token needed for %r" % piece)
            if n < 2:
                return ids
            if self._ranks_grow:
                return self._encode_long_piece(ids)
            return self._encode_long_piece_by_slot(ids)
        table, shift = self._ranks, self._shift
        can_left, can_right = self._left, self._right
        mask = (1 << shift) - 1
        none = NO_MERGE
        byte_pairs = self._byte_pairs
        chain = [0] * (2 * n - 1)
        left = piece[0]
        chain[0] = byte_id[left]
        for k in range(1, n):
            right = piece[k]
            chain[2 * k - 1] = byte_pairs[(left << 8) | right]
            chain[2 * k] = byte_id[right]
            left = right
        while True:
            best, q = none, -1
            k, m = 1, len(chain)
            while k < m:
                if chain[k] < best:
                    best, q = chain[k], k
                k += 2
            if q < 0:
                break
            new = best & mask
            chain[q - 1] = new
            del chain[q : q + 2]
            if q > 1:
                a = chain[q - 3]
                chain[q - 2] = table.get((a << shift) | new, none) if can_left[a] and can_right[new] else none
            if q < len(chain):
                b = chain[q + 1]
                chain[q] = table.get((new << shift) | b, none) if can_left[new] and can_right[b] else none
        return chain[::2]

    def _encode_long_piece(self, ids):
        """``_encode_piece`` for long pieces: merges by rank over a linked list, O(n log n).

        ``slots[v]`` lists the slots where the pair of packed rank ``v`` starts,
        and a heap holds the ranks that have slots.  Merges are done rank by
        rank, lowest first: a merge only makes pairs that contain its new token,
        which rank later, so no slot is ever added to the rank being done, and
        doing a whole rank at once is doing its pair's occurrences one at a
        time.  Its slots are sorted first, so overlapping occurrences
        (``a a a``) are merged leftmost first, as the loop of ``_encode_piece``
        does.  A merge kills the right slot (id -1), relinks, and lists the new
        pairs on its two sides.  Listed slots are not removed but checked when
        their rank comes: a slot is current when it is live and the pair there
        still has that rank (a slot's pair never comes back once it changed: a
        merge only lengthens the tokens on either side).

        Only for tables whose ranks grow (``_ranks_grow``: a merge list in
        creation order); others go to ``_encode_long_piece_by_slot``.

        Cost for n bytes: at most n - 1 merges, each O(1) plus two listings;
        sorting the lists and the heap of ranks, O(n log n).  Measured by
        perf/piece_lengths.py --long under PyPy: one heap entry per slot
        (``_encode_long_piece_by_slot``) takes 1.8-2x the time (1M random
        letters, GPT-2 vocab: 1.34 s against 0.66 s).
        """
        table, shift = self._ranks, self._shift
        mask = (1 << shift) - 1
        n = len(ids)
        slots = {}
        for k in range(n - 1):
            v = table.get((ids[k] << shift) | ids[k + 1])
            if v is not None:
                _list_slot(slots, None, v, k)
        pending = list(slots)
        heapq.heapify(pending)
        nxt = list(range(1, n + 1))  # n: past the end
        prv = list(range(-1, n - 1))
        while pending:
            v = heapq.heappop(pending)
            at = slots.pop(v)
            at.sort()
            z = v & mask
            for i in at:
                left = ids[i]
                j = nxt[i]
                if left < 0 or j >= n or table.get((left << shift) | ids[j]) != v:
                    continue  # stale: this slot was merged, or its pair changed
                ids[i] = z
                ids[j] = -1
                r = nxt[j]
                nxt[i] = r
                if r < n:
                    prv[r] = i
                    w = table.get((z << shift) | ids[r])
                    if w is not None:
                        _list_slot(slots, pending, w, i)
                k = prv[i]
                if k >= 0:
                    w = table.get((ids[k] << shift) | z)
                    if w is not None:
                        _list_slot(slots, pending, w, k)
        return [t for t in ids if t >= 0]

    def _encode_long_piece_by_slot(self, ids):
        """``_encode_piece`` for long pieces when ranks need not grow (tiktoken's tables):
        a heap of (rank, slot) over a linked list, O(n log n).

        A tiktoken token may rank below one of its parts (cl100k_base: four
        spaces rank 257, three 262), so a merge can make a pair that ranks
        below the merge itself, and ``_encode_long_piece``'s rank-by-rank order
        would be wrong.  Here every slot is its own heap entry, packed as
        ``rank << 40 | slot``: the smallest is the lowest rank, leftmost first,
        as the loop of ``_encode_piece`` chooses.  An entry is checked when
        popped: current when its slot is live and the pair there still has
        that rank.
        """
        table, shift = self._ranks, self._shift
        mask = (1 << shift) - 1
        n = len(ids)
        heap = []
        for k in range(n - 1):
            v = table.get((ids[k] << shift) | ids[k + 1])
            if v is not None:
                heap.append(((v >> shift) << 40) | k)
        heapq.heapify(heap)
        nxt = list(range(1, n + 1))  # n: past the end
        prv = list(range(-1, n - 1))
        slot_mask = (1 << 40) - 1
        while heap:
            entry = heapq.heappop(heap)
            i, rank = entry & slot_mask, entry >> 40
            left = ids[i]
            j = nxt[i]
            if left < 0 or j >= n:
                continue
            v = table.get((left << shift) | ids[j])
            if v is None or v >> shift != rank:
                continue  # stale: the pair at this slot changed
            z = v & mask
            ids[i] = z
            ids[j] = -1
            r = nxt[j]
            nxt[i] = r
            if r < n:
                prv[r] = i
                w = table.get((z << shift) | ids[r])
                if w is not None:
                    heapq.heappush(heap, ((w >> shift) << 40) | i)
            k = prv[i]
            if k >= 0:
                w = table.get((ids[k] << shift) | z)
                if w is not None:
                    heapq.heappush(heap, ((w >> shift) << 40) | k)
        return [t for t in ids if t >= 0]

    def _encode_one(self, piece):
        if len(piece) >= _CUT_FROM and piece[-3] >= 0xE0:
            return self._encode_in_parts(piece)
        return self._encode_whole(piece)

    def _encode_whole(self, piece):
        if self._rank_of is not None:
            whole = self._rank_of.get(piece)  # tiktoken: a piece that is a token is that token
            if whole is not None:
                return [whole]
        return self._encode_piece(piece)

    def _encode_in_parts(self, piece):
        """``_encode_one`` of a piece cut where no token spans it (``piece_cuts``), each part
        encoded once by ``_encode_piece`` and kept (up to ``_PARTS_LIMIT`` parts, then the
        cache starts again): the parts of CJK text repeat where its pieces do not.  A piece
        with such a place is no token (a token equal to it would span the place), so
        tiktoken's rule is looked up only for a piece that has none (``_encode_whole``).
        With ``PieceCuts``' character steps, warm 8 MB calls of Chinese 14-17% faster under
        o200k_base and cl100k_base, mixed text up to 4%, GPT-2's level (perf/encode_first.py
        --trees, two runs)."""
        cuts, parts, chars = self._cutter()
        return cuts.encode_in_parts(piece, parts, self._encode_piece, self._encode_whole, chars)

    def _extend_in_parts(self, data, start, end, out):
        """``_encode_in_parts`` of ``data[start:end]``, its ids appended to ``out`` as its parts
        are found and the piece not sliced (``PieceCuts.extend_in_parts``): warm 8 MB calls of
        Chinese 13-15% faster under GPT-2, 4-7% under o200k_base, cl100k_base's level, mixed
        text level to 5% faster (perf/encode_first.py --trees, two runs).  A part that is one
        three-byte character is kept by code point in ``_chars`` (512 KB, made at the first cut):
        warm calls of Chinese 2-10% faster, mixed text level to 7%, first calls within 6% either
        way (perf/encode_first.py --trees, two runs of 5 rounds)."""
        cuts, parts, chars = self._cutter()
        cuts.extend_in_parts(data, start, end, parts, self._encode_piece, self._encode_whole, out, chars)

    def _cutter(self):
        """The ``PieceCuts`` of the vocab and the one-character parts kept by code point (both
        made when a piece is first cut), and the other parts kept."""
        cuts = self._cuts
        if cuts is None:
            cuts = self._cuts = PieceCuts(self._id_of)
            self._chars = [None] * 0x10000  # at most one entry per three-byte character: no limit
        parts = self._parts
        if len(parts) >= _PARTS_LIMIT:
            parts = self._parts = {}
        return cuts, parts, self._chars

    @staticmethod
    def _cached_form(ids):
        return ids[0] if len(ids) == 1 else ids

    @staticmethod
    def _cached_long_form(ids):
        """``_cached_form``, and two ids as a tuple: PyPy keeps a pair of ints in one object (a
        list of two is two, the list and its items), so a look-up reads one memory block fewer
        (``_encode_bytes``)."""
        return (ids[0], ids[1]) if len(ids) == 2 else PieceEncoder._cached_form(ids)

    def _encode_bytes(self, data, out, ends=None):
        """Append the ids of UTF-8 ``data`` (pieces ending at ``ends``) to ``out``.

        Short pieces are looked up in the cache under the packed-int key of
        ``gpt2.count_pieces``, built without slicing (perf/micro.py
        encode-small-key under PyPy: 1.2x faster than slicing and hashing
        ``bytes`` per piece), by a ``while`` loop: against ``for`` over a
        ``range``, warm 8 MB calls of code 3-15% faster and GPT-2's English
        8-10%, the others within 3% either way (perf/encode_first.py --trees,
        two runs).  A piece that is one token is cached as that int, not a
        list: one memory access fewer per lookup (perf/micro.py
        encode-int-cache: 1.1-1.2x).  A long piece (8 bytes or more) of two tokens is
        cached as a tuple of the two, for the same reason: warm 8 MB calls of Russian under
        o200k_base 7-8% faster (18% of its pieces are long ones of two tokens), the other 14 texts and
        encodings within 3-4% either way (perf/encode_first.py --trees, three runs).  Short
        pieces keep lists: tuples there too made o200k_base's code 4-5% slower.

        A piece that is cut (``_UNCACHED_FROM`` bytes or more, CJK at its end) goes
        past the piece cache: such pieces rarely repeat (8 MB of the chinese corpus, cl100k_base:
        212,661 of them, 181,687 distinct, 172,025 occurring once), their parts do
        (``_encode_in_parts`` keeps those), and caching them only churned the cache.
        perf/micro.py encode-cjk, warm calls, best of 5: through the cache took 1.05-1.11x as
        long on Chinese, 1.03-1.08x on mixed text (o200k_base and cl100k_base).

        Each cache has two generations of at most ``_CACHE_LIMIT`` entries: a
        miss looks in the previous one before encoding, and a full cache
        becomes the previous one, so frequent pieces survive and memory stays
        bounded.  Measured under PyPy by ``perf/encode_corpus.py single``
        (its second-pass column: CPU seconds of a second ``encode`` of the same
        8 MB of english_medium): one generation of 1 << 15, cleared when full,
        0.59 s; two generations of 1 << 15, 0.37-0.40 s (tiktoken 0.59 s in
        the same run); one of 1 << 18, 0.36 s but 55 MB more per process.
        A generation starts at ``_CACHE_LIMIT`` entries and doubles (``_grown_after``)
        while the pieces found in the previous one make a quarter of it.  The small cache's
        (int keys) are their largest, ``_CACHE_LIMIT << _CACHE_DOUBLINGS``, from the start: against
        growing there, warm 8 MB calls of code 4-9% faster, English 1-4%, the others within
        3% either way (perf/encode_first.py --trees, two runs), and 1.8 MB more held after
        120 MB of five corpora (the "grows" row of perf/experiments/miss_costs.py --fill).
        """
        if ends is None:
            ends = self._piece_ends(data)
        small, cache = self._small_cache, self._cache
        append = out.append
        start = 0
        for end in ends:
            if end - start < 8:
                key = 1
                p = start
                while p < end:
                    key = (key << 8) | data[p]
                    p += 1
                ids = small.get(key)
                if ids is None:
                    ids = self._small_miss(key, data, start, end)
                    small = self._small_cache
            elif end - start >= _UNCACHED_FROM and data[end - 3] >= 0xE0:
                self._extend_in_parts(data, start, end, out)  # cut; its parts are cached, not it
                start = end
                continue
            else:
                piece = data[start:end]
                ids = cache.get(piece)
                if ids is None:
                    ids = self._miss(piece)
                    cache = self._cache
            if type(ids) is int:
                append(ids)
            elif type(ids) is tuple:  # a long piece of two tokens (``_cached_long_form``)
                append(ids[0])
                append(ids[1])
            else:
                out.extend(ids)
            start = end

    def _small_miss(self, key, data, start, end):
        ids = self._small_old.get(key)
        if ids is None:
            ids = self._cached_form(self._encode_one(data[start:end]))
        if len(self._small_cache) >= _CACHE_LIMIT << _CACHE_DOUBLINGS:  # its largest from the start
            self._small_old, self._small_cache = self._small_cache, {}
        self._small_cache[key] = ids
        return ids

    def _miss(self, piece):
        ids = self._old.get(piece)
        if ids is None:
            ids = self._cached_long_form(self._encode_one(piece))
        else:
            self._kept += 1
        if len(self._cache) >= _CACHE_LIMIT << self._grown:
            self._grown = _grown_after(self._kept, self._grown)
            self._old, self._cache, self._kept = self._cache, {}, 0
        self._cache[piece] = ids
        return ids


def _grown_after(kept, grown):
    """The doublings of a cache generation that fills up with ``kept`` of its pieces found in
    the previous one: one more (up to ``_CACHE_DOUBLINGS``) when they are a quarter of it.

    A text whose pieces come back after a generation (words of English and Russian, lines of
    code: a third to a half of each generation of 1 << 15 under o200k_base) gets larger
    generations; one whose pieces rarely repeat (Chinese, whose long pieces are cut and kept
    as parts instead: 2% of a generation) keeps the small ones and their memory.  Measured
    under PyPy by ``perf/encode_first.py --trees`` (warm 8 MB calls against generations of a
    fixed 1 << 15): Russian 12-25% faster (GPT-2, cl100k_base, o200k_base), English, code,
    Chinese and mixed text level; ``perf/experiments/miss_costs.py --fill`` (120 MB of five
    corpora, o200k_base): 68 MB held by the caches at the end against 26 MB (fixed 1 << 17:
    64 MB), CPU level.
    """
    if grown < _CACHE_DOUBLINGS and kept >= (_CACHE_LIMIT << grown) >> 2:
        return grown + 1
    return grown


def _list_slot(slots, pending, v, k):
    """List slot ``k`` under rank ``v``; a rank listed for the first time joins ``pending``."""
    at = slots.get(v)
    if at is None:
        slots[v] = [k]
        if pending is not None:
            heapq.heappush(pending, v)
    else:
        at.append(k)
