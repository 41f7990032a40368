"""Encoding and decoding with a trained (or GPT-2) vocabulary.

``encode`` splits on special tokens (longest first), pre-tokenizes each
stretch between them with the split pattern's scanner (GPT-2's by default;
``pattern=`` names another, ``refbpe.patterns``), and turns each pre-token into
ids by applying the merges in creation order.  Merging the lowest-ranked adjacent
pair, one occurrence at a time from the left, is the same as applying each
merge to the whole pre-token in turn: a merge only creates pairs with the new
token, and those rank later than the merge that made it.

Ids: an ordinary token's bytes map to the smallest id holding them; a special
token maps to the largest id holding its bytes, and is appended at the next
free id when no id does (the CS336 rule).  The two differ only when a special
token's bytes equal a learned token's: the learned one is used inside text,
the special one where the special token is matched.

Pre-tokens repeat heavily, so their ids are cached (bounded).  A long CJK pre-token rarely
repeats, but its parts do: where no token of the vocab spans a place, the ids of the two
sides are the ids of the whole (``piece_cuts``), so such a piece is cut there and its parts
are encoded once each.

``from_tiktoken`` loads a tiktoken encoding and encodes as tiktoken does
(``naive.naive_rank_encode`` is that rule written plainly): a pre-token that
is itself a token is that token, and otherwise the adjacent parts whose
concatenation has the lowest rank are joined first, leftmost on a tie.  That
can differ from applying the merge list: a token may be formed from two parts
that are not the merge defining it, and a piece may be a token that no merge
sequence reaches.  So the pair table then holds every split of every token
into two tokens (``_rank_pairs``), and the merging loop is the same.  Passing
``allowed_special`` or ``disallowed_special`` to ``encode`` gives tiktoken's
special-token rules (only allowed ones are matched; disallowed text raises
ValueError); without them ``encode`` is the CS336 one: every special token
is matched.

Every ``str`` and every byte string is encoded, as tiktoken encodes it
(``Encoding`` in ``tiktoken_api.py`` is tiktoken's API on this engine, built by
``from_ranks``).  A ``str`` holding surrogates, which UTF-8 cannot encode, is
first repaired by tiktoken's UTF-16 round trip: a pair becomes its character,
a lone surrogate U+FFFD (``encode_iterable`` holds back a final high surrogate
that the next chunk may pair).  Bytes that are not UTF-8 (``encode_utf8``):
the valid prefix is encoded, the tokens of its last pre-token (with the
whitespace tokens before it when it starts with whitespace) are taken back,
and their bytes with everything from the first invalid byte on are encoded
as one piece (``_encode_invalid_tail``).

``encode_iterable`` streams: it keeps back the text that more input could
still change (the last two pre-tokens, and any tail that may be the start of a
special token) and encodes the rest, so its memory is bounded by one chunk
plus the longest pre-token (plus a 64K-character batch, gathered so that a
stream of short lines is not scanned once per line).  Why two pre-tokens: a
piece's extent is decided by at most the two characters after it (a
contraction reads two ahead, a whitespace run checks the character after the
next), and every piece is at least one character long.  The GPT-4-family
patterns look further only inside what the last two pieces hold: a
whitespace run still open at the end forms at most two pieces (cl100k_base's
``\\s++$`` makes it one), an o200k word still followed by nothing may yet
join an L character (with a mark piece before it: two pieces), and a
contraction or ``[\\r\\n/]*`` only extends the last piece
(``tests/test_pattern_api.py`` streams every pattern in chunks of 1-7
characters).
"""

from __future__ import annotations

import heapq
import os
from typing import (
    AbstractSet,
    Any,
    Collection,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from .._util.lists import list_with_room
from ..encodings.registry import load_tiktoken
from ..formats.gpt2_files import MANIFEST, read_gpt2, read_manifest_pattern, read_model_dir
from ..formats.tiktoken import merges_from_ranks
from ..pretokenize.patterns import Pattern, get_pattern, pattern_key
from ..specials import special_pattern, split_specials
from .piece_cuts import PieceCuts

__all__ = ["Tokenizer"]

# Pieces this long (bytes) or longer take the O(n log n) path.  Crossovers measured by
# perf/piece_lengths.py under PyPy: 96-128 bytes for English and random letters, 32-48 for
# random Han, 128-192 for the real pieces of the chinese corpus (--corpus chinese).
_LONG_PIECE = 192

# Pieces this long (bytes) or longer that end in a character of three bytes (CJK, kana,
# Hangul, Thai, Devanagari, ...) are cut where no token spans them (_encode_in_parts); the
# test reads one byte.  Two-byte scripts (Russian) and code are left whole: their pieces
# rarely have such a place.  perf/micro.py encode-parts measures each text with and without.
_CUT_FROM = 8
_CACHE_LIMIT = 1 << 15  # entries per cache generation (see _encode_bytes)
_PARTS_LIMIT = 1 << 16  # parts kept by _encode_in_parts (short: a few MB)
_NO_MERGE = 1 << 62  # above every packed rank
_BATCH = 1 << 16  # characters gathered before a scan: bounds memory, amortises per-call work


class Tokenizer(object):
    """Byte-level BPE tokenizer with the CS336 ``Tokenizer`` interface.

    ``vocab`` {id: bytes} and ``merges`` [(bytes, bytes)] as the trainers
    return them; ``special_tokens`` are matched before pre-tokenizing (one
    missing from the vocab is appended at the next free id); ``pattern`` names
    the split pattern (``get_pattern``; GPT-2's by default) and ``unicode`` the
    Unicode version its classes are read from (``unicode_tables``; the latest
    by default, or the version a pattern key names).

    Cost: building it, O(vocab + merges) plus a 65,536-entry table of byte
    pairs; ``encode``, one pass over the text plus, per distinct pre-token of
    L bytes, O(L^2) (O(L log L) from 192 bytes on), repeated pre-tokens being
    cached (and of a CJK pre-token, O(L) plus that per distinct part between
    places no token spans); ``decode``, O(output bytes).

    >>> from refbpe import train_from_texts
    >>> vocab, merges = train_from_texts(["low low lower<|endoftext|>lowest"], 260, ["<|endoftext|>"])
    >>> tok = Tokenizer(vocab, merges, ["<|endoftext|>"])
    >>> ids = tok.encode("lower low<|endoftext|>")
    >>> ids, [tok.vocab[i] for i in ids], tok.decode(ids)
    ([258, 114, 32, 257, 259], [b'lowe', b'r', b' ', b'low', b'<|endoftext|>'], 'lower low<|endoftext|>')
    """

    def __init__(
        self,
        vocab: Dict[int, bytes],
        merges: Iterable[Tuple[bytes, bytes]],
        special_tokens: Optional[Iterable[str]] = None,
        *,
        pattern: Union[str, Pattern, None] = None,
        unicode: Optional[str] = None,
    ) -> None:
        split = get_pattern(pattern, unicode)
        self.pattern = split.name
        self.unicode = split.unicode  # the Unicode version the split reads (``unicode_tables``)
        self._piece_ends = split.piece_ends
        self._context_bounded = split.context_bounded
        self.vocab = dict(vocab)
        self.merges = [(bytes(a), bytes(b)) for a, b in merges]
        self.special_tokens = list(special_tokens or [])
        present = set(self.vocab.values())
        for token in self.special_tokens:
            if token.encode("utf-8") not in present:
                self.vocab[max(self.vocab, default=-1) + 1] = token.encode("utf-8")
                present.add(token.encode("utf-8"))
        self._id_of = {}
        largest = {}
        for i in sorted(self.vocab):
            self._id_of.setdefault(self.vocab[i], i)
            largest[self.vocab[i]] = i
        self._special_id = {t: largest[t.encode("utf-8")] for t in self.special_tokens}
        self._byte_id = [self._id_of.get(bytes([b])) for b in range(256)]
        self._ranks = self._merge_ranks()
        self._index_pairs()
        self._pattern = special_pattern(self.special_tokens)
        self._cache = {}  # pieces of 8 bytes or more -> ids
        self._small_cache = {}  # shorter pieces, under packed-int keys -> ids
        self._old, self._small_old = {}, {}  # the previous generation of each
        self._parts = {}  # parts of pieces (``_encode_in_parts``) -> ids
        self._cuts = None  # ``PieceCuts`` of the vocab, built when first needed
        self._rank_of = None  # tiktoken's {token bytes: rank}, set by from_tiktoken

    @classmethod
    def from_tiktoken(
        cls,
        path_or_name: Union[str, os.PathLike],
        special_tokens: Optional[Dict[str, int]] = None,
        *,
        pattern: Optional[str] = None,
        unicode: Optional[str] = None,
    ) -> Tokenizer:
        """A tiktoken encoding: ``cl100k_base``, ``o200k_base`` (by name, found as
        ``tiktoken_encodings`` says) or a ``.tiktoken`` ranks file's path.

        ``special_tokens`` ({token: id}) and ``pattern`` (a name) replace the
        known encoding's; ``unicode`` the Unicode version of its split (default
        tiktoken's, ``registry.TIKTOKEN_UNICODE``, for a known encoding).
        Ids equal tiktoken's (see the module docstring)."""
        vocab, merges, specials, pattern = load_tiktoken(path_or_name, special_tokens, pattern, merges=False)
        special_ids = set(specials.values())
        ranks = {t: i for i, t in vocab.items() if i not in special_ids}
        tok = cls.from_ranks(ranks, specials, pattern=pattern, unicode=unicode)
        tok._merges = merges  # None: rebuilt from the ranks when first asked for (``merges``)
        return tok

    @property
    def merges(self) -> List[Tuple[bytes, bytes]]:
        """The merge list [(bytes, bytes)] in rank order.

        Of a ranks file (``from_tiktoken``) it is rebuilt from the ranks when
        first asked for (``formats.tiktoken.merges_from_ranks``; FormatError if a
        token is not the merge of two lower-ranked ones): encoding by ranks does
        not use it, and rebuilding it was half of o200k_base's load time
        (perf/encode_profile.py, its merges column: 1.36 of 2.64 CPU seconds).
        """
        if self._merges is None:
            self._merges = merges_from_ranks(self._rank_of)
        return self._merges

    @merges.setter
    def merges(self, merges: List[Tuple[bytes, bytes]]) -> None:
        self._merges = merges

    @classmethod
    def from_ranks(
        cls,
        mergeable_ranks: Dict[bytes, int],
        special_tokens: Optional[Dict[str, int]] = None,
        *,
        pattern: Union[str, Pattern, None] = None,
        unicode: Optional[str] = None,
    ) -> Tokenizer:
        """The engine of tiktoken's ``Encoding``: ranks {token bytes: rank} (a rank is an id)
        and {special token: id}; ids equal tiktoken's (see the module docstring).

        ``pattern``: a name or a ``Pattern``, ``unicode`` the Unicode version of its split
        (``Tokenizer``'s arguments).  No merge list is rebuilt (``merges``
        is empty; ``from_tiktoken``'s is rebuilt when first asked for).  O(total token length) to build."""
        specials = dict(special_tokens or {})
        vocab = {r: t for t, r in mergeable_ranks.items()}
        if len(vocab) != len(mergeable_ranks):
            raise ValueError("two mergeable tokens share a rank")
        for token, i in specials.items():
            if i in vocab and mergeable_ranks.get(vocab[i]) == i:
                raise ValueError("special token %r: id %d is already the token %r" % (token, i, vocab[i]))
            vocab.setdefault(i, token.encode("utf-8"))  # two specials may share an id; the first decodes
        tok = cls(vocab, [], None, pattern=pattern, unicode=unicode)
        tok.special_tokens = sorted(specials, key=specials.get)
        tok._special_id = specials
        tok._pattern = special_pattern(tok.special_tokens)
        tok._rank_of = dict(mergeable_ranks)
        tok._byte_id = [tok._rank_of.get(bytes([b])) for b in range(256)]
        tok._ranks = tok._rank_pairs()
        tok._index_pairs()
        return tok

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
        for token in sorted(rank_of):
            while prefixes and not token.startswith(prefixes[-1][0]):
                prefixes.pop()
            r = rank_of[token]
            for left_token, left in prefixes:
                right = get(token[len(left_token) :])
                if right is not None:
                    pairs[(left << shift) | right] = (r << shift) | r
            prefixes.append((token, r))
        return pairs

    @classmethod
    def from_files(
        cls,
        vocab_path: Union[str, os.PathLike],
        merges_path: Union[str, os.PathLike],
        special_tokens: Optional[Iterable[str]] = None,
    ) -> Tokenizer:
        """Load GPT-2 format ``vocab.json`` and ``merges.txt``."""
        vocab, merges = read_gpt2(vocab_path, merges_path)
        return cls(vocab, merges, special_tokens)

    @classmethod
    def from_dir(
        cls,
        directory: Union[str, os.PathLike],
        *,
        pattern: Optional[str] = None,
        unicode: Optional[str] = None,
    ) -> Tokenizer:
        """Load a directory written by ``refbpe train`` (special tokens included);
        the split pattern is ``pattern``, else the one its manifest names, else
        GPT-2's; its Unicode version ``unicode``, else the manifest's, else the latest."""
        vocab, merges, special_tokens = read_model_dir(directory)
        pattern = pattern_key(pattern, unicode, read_manifest_pattern(os.path.join(directory, MANIFEST)))
        return cls(vocab, merges, special_tokens, pattern=pattern)

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

    def _index_pairs(self):
        """Two aids to the pair table ``_ranks``, which is too big for the CPU caches.

        ``_byte_pairs[b1 << 8 | b2]`` is the entry of two single-byte tokens (a
        pre-token's first lookups), and ``_left[i]`` / ``_right[i]`` say whether
        id ``i`` is the left / right part of any pair at all, so most misses
        cost no lookup.  The encode throughput this serves is measured by
        perf/encode_patterns.py (cl100k_base and o200k_base against tiktoken).
        """
        shift, table, none = self._shift, self._ranks, _NO_MERGE
        mask = (1 << shift) - 1
        size = max(self.vocab, default=0) + 1
        left, right = bytearray(size), bytearray(size)
        for key in table:
            left[key >> shift] = 1
            right[key & mask] = 1
        self._left, self._right = bytes(left), bytes(right)
        self._ranks_grow = _ranks_grow(table, shift)
        byte_id = [none if i is None else i for i in self._byte_id]
        self._byte_pairs = [
            table.get((byte_id[b1] << shift) | byte_id[b2], none)
            if byte_id[b1] != none and byte_id[b2] != none
            else none
            for b1 in range(256)
            for b2 in range(256)
        ]

    def _encode_piece(self, piece):
        """Ids of one pre-token: lowest-ranked adjacent pair first.

        ``ranks[k]`` holds the merge of pair (k, k + 1); after a merge only
        its two neighbours are looked up again, and only when both can be
        parts of a pair (``_index_pairs``).  Against rescanning every pair after
        each merge this is O(1) instead of O(n) lookups per merge, though on
        ordinary text's short pieces the two are close (perf/micro.py
        encode-neighbours under PyPy: 1.0-1.1x).  That is O(n) per merge,
        O(n^2) per piece; pieces of ``_LONG_PIECE`` bytes or more go to
        ``_encode_long_piece``, O(n log n).
        """
        byte_id = self._byte_id
        ids = [byte_id[b] for b in piece]
        if None in ids:
            raise ValueError("the vocab lacks a single-byte token needed for %r" % piece)
        if len(ids) >= _LONG_PIECE:
            if self._ranks_grow:
                return self._encode_long_piece(ids)
            return self._encode_long_piece_by_slot(ids)
        table, shift = self._ranks, self._shift
        can_left, can_right = self._left, self._right
        mask = (1 << shift) - 1
        none = _NO_MERGE
        byte_pairs = self._byte_pairs
        ranks = [byte_pairs[(piece[k] << 8) | piece[k + 1]] for k in range(len(piece) - 1)]
        while ranks:
            best, at = none, -1
            for k in range(len(ranks)):
                if ranks[k] < best:
                    best, at = ranks[k], k
            if at < 0:
                break
            ids[at] = best & mask
            del ids[at + 1]
            del ranks[at]
            new = ids[at]
            if at > 0:
                a = ids[at - 1]
                ranks[at - 1] = (
                    table.get((a << shift) | new, none) if can_left[a] and can_right[new] else none
                )
            if at < len(ranks):
                b = ids[at + 1]
                ranks[at] = table.get((new << shift) | b, none) if can_left[new] and can_right[b] else none
        return ids

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
        if self._rank_of is not None:
            whole = self._rank_of.get(piece)  # tiktoken: a piece that is a token is that token
            if whole is not None:
                return [whole]
        if len(piece) >= _CUT_FROM and piece[-3] >= 0xE0:
            return self._encode_in_parts(piece)
        return self._encode_piece(piece)

    def _encode_in_parts(self, piece):
        """``_encode_piece`` of a piece cut where no token spans it (``piece_cuts``), each part
        encoded once and kept (up to ``_PARTS_LIMIT`` parts, then the cache starts again): the
        parts of CJK text repeat where its pieces do not."""
        cuts = self._cuts
        if cuts is None:
            cuts = self._cuts = PieceCuts(self._id_of)
        parts = self._parts
        if len(parts) >= _PARTS_LIMIT:
            parts = self._parts = {}
        return cuts.encode_in_parts(piece, parts, self._encode_piece)

    @staticmethod
    def _cached_form(ids):
        return ids[0] if len(ids) == 1 else ids

    def _encode_bytes(self, data, out, ends=None):
        """Append the ids of UTF-8 ``data`` (pieces ending at ``ends``) to ``out``.

        Short pieces are looked up in the cache under the packed-int key of
        ``gpt2.count_pieces``, built without slicing (perf/micro.py
        encode-small-key under PyPy: 1.2x faster than slicing and hashing
        ``bytes`` per piece).  A piece that is one token is cached as that int,
        not a list: one memory access fewer per lookup (perf/micro.py
        encode-int-cache: 1.1-1.2x).

        Each cache has two generations of at most ``_CACHE_LIMIT`` entries: a
        miss looks in the previous one before encoding, and a full cache
        becomes the previous one, so frequent pieces survive and memory stays
        bounded.  Measured under PyPy by ``perf/encode_corpus.py single``
        (its second-pass column: CPU seconds of a second ``encode`` of the same
        8 MB of english_medium): one generation of 1 << 15, cleared when full,
        0.59 s; two generations of 1 << 15, 0.37-0.40 s (tiktoken 0.59 s in
        the same run); one of 1 << 18, 0.36 s but 55 MB more per process.
        """
        if ends is None:
            ends = self._piece_ends(data)
        small, cache = self._small_cache, self._cache
        append = out.append
        start = 0
        for end in ends:
            if end - start < 8:
                key = 1
                for p in range(start, end):
                    key = (key << 8) | data[p]
                ids = small.get(key)
                if ids is None:
                    ids = self._small_miss(key, data, start, end)
                    small = self._small_cache
            else:
                piece = data[start:end]
                ids = cache.get(piece)
                if ids is None:
                    ids = self._miss(piece)
                    cache = self._cache
            if type(ids) is int:
                append(ids)
            else:
                out.extend(ids)
            start = end

    def _small_miss(self, key, data, start, end):
        ids = self._small_old.get(key)
        if ids is None:
            ids = self._cached_form(self._encode_one(data[start:end]))
        if len(self._small_cache) >= _CACHE_LIMIT:
            self._small_old, self._small_cache = self._small_cache, {}
        self._small_cache[key] = ids
        return ids

    def _miss(self, piece):
        ids = self._old.get(piece)
        if ids is None:
            ids = self._cached_form(self._encode_one(piece))
        if len(self._cache) >= _CACHE_LIMIT:
            self._old, self._cache = self._cache, {}
        self._cache[piece] = ids
        return ids

    def encode(
        self,
        text: str,
        *,
        allowed_special: Union[str, AbstractSet[str], None] = None,
        disallowed_special: Union[str, Collection[str], None] = None,
    ) -> List[int]:
        """Token ids of ``text``.

        Without keywords every special token in ``text`` is matched (CS336).
        With either keyword, tiktoken's rules: only ``allowed_special`` tokens
        (a set, or ``"all"``; default none) are matched, and text equal to a
        ``disallowed_special`` token (a collection, or ``"all"``, the default:
        every special token not allowed) raises ValueError.
        """
        pattern = self._pattern
        if allowed_special is not None or disallowed_special is not None:
            pattern = self._tiktoken_specials(text, allowed_special, disallowed_special)
        return self.encode_matching(text, pattern)

    def encode_matching(self, text: str, specials: Any) -> List[int]:
        """Ids of ``text`` where only what ``specials`` matches is a special token.

        ``specials``: ``specials.special_pattern`` of some of the special
        tokens, or None.  A ``str`` that UTF-8 cannot encode (surrogates) is
        repaired as tiktoken repairs it, then encoded (``_utf16_repaired``).
        """
        try:
            return self._encode_text(text, specials)
        except UnicodeEncodeError:
            return self._encode_text(_utf16_repaired(text), specials)

    def _encode_text(self, text, pattern):
        out = list_with_room(len(text) >> 2)
        for segment, is_special in split_specials(text, pattern):
            if is_special:
                out.append(self._special_id[segment])
            else:
                self._encode_bytes(segment.encode("utf-8"), out)
        return out

    def encode_utf8(self, data: bytes, segments: Optional[List[Tuple[int, int]]] = None) -> List[int]:
        """Token ids of UTF-8 ``data``: ``encode(data.decode("utf-8"))`` without the round trip.

        ``segments``, a list, gets ``(bytes, tokens)`` of each stretch of text
        between special tokens (one more entry than there are special tokens;
        ``encode_corpus`` adds them up into documents).  Bytes that are not
        UTF-8 are encoded as tiktoken's ``_encode_bytes`` does
        (``_encode_invalid_tail``), never an error.
        """
        pattern = self.__dict__.get("_bytes_pattern", False)
        if pattern is False:
            pattern = self._bytes_pattern = special_pattern(self.special_tokens, as_bytes=True)
        return self._encode_utf8(data, pattern, segments)

    def encode_utf8_ordinary(self, data: bytes) -> List[int]:
        """Token ids of any bytes, special tokens taken as text: tiktoken's ``Encoding._encode_bytes``."""
        return self._encode_utf8(data, None, None)

    def _encode_utf8(self, data, pattern, segments):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            return self._encode_invalid_tail(data, e.start, pattern, segments)
        return self._encode_valid_utf8(data, pattern, segments)

    def _encode_invalid_tail(self, data, valid, pattern, segments):
        """Ids of ``data`` whose first ``valid`` bytes are UTF-8 and the rest not: tiktoken's rule.

        The valid prefix is encoded as usual; then the tokens of its last
        pre-token (and, when that one is whitespace, of the whitespace tokens
        before it) are taken back, and their bytes with everything from the
        first invalid byte on are encoded as one piece (a piece that is a token
        is that token).  Pieces are cut in Unicode space, so bytes that are not
        UTF-8 cannot be; tiktoken treats them as a truncated last piece.
        """
        out = self._encode_valid_utf8(data[:valid], pattern, segments)
        taken = self._last_piece_length(data[:valid], pattern)
        if taken and self._is_space_token(out[-taken]):
            while taken < len(out) and self._is_space_token(out[-taken - 1]):
                taken += 1
        unstable = b"".join([self.vocab[i] for i in out[len(out) - taken :]]) + data[valid:]
        del out[len(out) - taken :]
        ids = self._encode_one(unstable)
        out.extend(ids)
        if segments is not None:
            nbytes, ntokens = segments[-1]
            segments[-1] = (nbytes + len(data) - valid, ntokens - taken + len(ids))
        return out

    def _last_piece_length(self, data, pattern):
        """How many tokens the last pre-token of valid UTF-8 ``data`` encodes to (0 after a special token)."""
        start = 0
        for m in pattern.finditer(data) if pattern is not None else ():
            start = m.end()
        ends = self._piece_ends(data[start:])
        if not ends:
            return 0
        first = start + (ends[-2] if len(ends) > 1 else 0)
        ids = self._encode_one(data[first:])
        return len(ids)

    def _is_space_token(self, i):
        special = self.__dict__.get("_special_ids")
        if special is None:
            special = self._special_ids = set(self._special_id.values())
        return i not in special and all(b in b" \n\t" for b in self.vocab[i])

    def _encode_valid_utf8(self, data, pattern, segments):
        out = list_with_room(len(data) >> 2)
        pos = 0
        for m in pattern.finditer(data) if pattern is not None else ():
            before = len(out)
            if m.start() > pos:
                self._encode_bytes(data[pos : m.start()], out)
            if segments is not None:
                segments.append((m.start() - pos, len(out) - before))
            out.append(self._special_id[m.group().decode("utf-8")])
            pos = m.end()
        before = len(out)
        if pos < len(data):
            self._encode_bytes(data[pos:] if pos else data, out)
        if segments is not None:
            segments.append((len(data) - pos, len(out) - before))
        return out

    def encode_with_offsets(self, text: str) -> Tuple[List[int], List[int]]:
        """``(ids, offsets)``: ``offsets[k]`` is the index in ``text`` of the character token k starts in.

        Byte-level tokens can split a character; one that starts inside a
        character gets that character's index (tiktoken's
        ``decode_with_offsets`` convention), so offsets never decrease.
        ``encode_with_offsets("héllo")`` with a token ``"\\xa9llo"`` after
        ``"h\\xc3"`` gives offsets ``[0, 1]``.  O(len(ids)) after a per-id table.
        """
        ids = self.encode(text)
        table = self.__dict__.get("_offset_table")
        if table is None:
            # id -> (characters started in the token, 1 if it starts inside one)
            table = self._offset_table = {
                i: (sum(1 for c in t if not 0x80 <= c < 0xC0), 1 if t and 0x80 <= t[0] < 0xC0 else 0)
                for i, t in self.vocab.items()
            }
        offsets = []
        chars = 0
        for i in ids:
            starts, inside = table[i]
            offsets.append(chars - inside if chars else 0)
            chars += starts
        return ids, offsets

    def encode_ordinary(self, text: str) -> List[int]:
        """Token ids of ``text`` with special tokens treated as plain text (tiktoken's name)."""
        return self.encode(text, allowed_special=(), disallowed_special=())

    def _tiktoken_specials(self, text, allowed_special, disallowed_special):
        """The special-token pattern for tiktoken's rules; raise if a disallowed one is in ``text``."""
        known = set(self.special_tokens)
        if allowed_special == "all":
            allowed = known
        else:
            allowed = set(allowed_special or ())
        if disallowed_special is None or disallowed_special == "all":
            disallowed = known - allowed
        else:
            disallowed = set(disallowed_special)
        if disallowed:
            m = special_pattern(sorted(disallowed)).search(text)
            if m:
                raise ValueError(
                    "text contains the disallowed special token %r; pass allowed_special to encode it "
                    "as a special token, or disallowed_special=() to encode it as text" % m.group()
                )
        if allowed == known:
            return self._pattern
        return special_pattern(sorted(allowed & known))

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        """Yield the ids of ``"".join(iterable)`` lazily, in bounded memory.

        The chunks may cut anywhere, even inside a special token: the ids are
        ``encode``'s of the joined text.  Cost: ``encode``'s, and memory for one
        chunk plus the longest pre-token (module docstring).

        >>> vocab = {i: bytes([i]) for i in range(256)}
        >>> vocab[256] = b"ow"
        >>> tok = Tokenizer(vocab, [(b"o", b"w")], ["<|eot|>"])
        >>> list(tok.encode_iterable(["lo", "w<|e", "ot|>o", "w"]))
        [108, 256, 257, 256]
        """
        pending = []
        size = 0
        for chunk in iterable:
            pending.append(chunk)
            size += len(chunk)
            if size < _BATCH:
                continue  # many small chunks (lines): one scan per batch
            ids, rest = self._encode_final_part("".join(pending))
            pending, size = [rest], len(rest)
            for i in ids:
                yield i
        for i in self.encode("".join(pending)):
            yield i

    def _encode_final_part(self, text):
        """(ids of the longest prefix no continuation can change, the rest).

        The ids come from the pieces as scanned in context: re-scanning the
        prefix alone could end it differently (``"\n\n"`` at the end of a
        text is one piece, before a letter it is two).
        """
        text = _repaired_but_last(text)
        out = []
        hold = self._special_prefix_start(text)
        cut = 0
        if self._pattern is not None:
            for m in self._pattern.finditer(text):
                if m.start() >= hold:
                    break
                if m.start() > cut:
                    self._encode_bytes(text[cut : m.start()].encode("utf-8", "surrogatepass"), out)
                out.append(self._special_id[m.group()])
                cut = m.end()
        if cut >= hold:
            return out, text[cut:]
        if not self._context_bounded:
            return out, text[cut:]  # any piece may depend on what follows: wait for a special token
        # No special token starts in text[cut:hold]; keep back its last two
        # pre-tokens, whose extent may depend on what follows.
        body = text[cut:hold].encode("utf-8", "surrogatepass")
        ends = self._piece_ends(body)
        if len(ends) <= 2:
            return out, text[cut:]
        final = ends[-3]
        self._encode_bytes(body, out, ends[:-2])
        done = len(body[:final].decode("utf-8", "surrogatepass"))
        return out, text[cut + done :]

    def _special_prefix_start(self, text):
        """Earliest index whose suffix is a proper prefix of a special token."""
        longest = max((len(t) for t in self.special_tokens), default=0)
        for start in range(max(0, len(text) - longest + 1), len(text)):
            tail = text[start:]
            if any(t.startswith(tail) and t != tail for t in self.special_tokens):
                return start
        return len(text)

    # -- decoding ---------------------------------------------------------

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``; invalid UTF-8 becomes U+FFFD."""
        vocab = self.vocab
        try:
            data = b"".join([vocab[i] for i in ids])
        except KeyError as e:
            raise ValueError("unknown token id %r" % (e.args[0],))
        except TypeError:
            bad = next(i for i in ids if not isinstance(i, int) or i not in vocab)
            raise ValueError("unknown token id %r" % (bad,))
        return data.decode("utf-8", "replace")


def _utf16_repaired(text):
    """``text`` as tiktoken repairs a ``str`` that UTF-8 cannot encode: each surrogate pair
    joined into its character, each lone surrogate replaced by U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _repaired_but_last(text):
    """``_utf16_repaired`` for all of ``text`` but a final high surrogate, which the next
    chunk of a stream may pair (``encode_iterable``)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        if "\ud800" <= text[-1] <= "\udbff":
            return _utf16_repaired(text[:-1]) + text[-1]
        return _utf16_repaired(text)


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


def _list_slot(slots, pending, v, k):
    """List slot ``k`` under rank ``v``; a rank listed for the first time joins ``pending``."""
    at = slots.get(v)
    if at is None:
        slots[v] = [k]
        if pending is not None:
            heapq.heappush(pending, v)
    else:
        at.append(k)
