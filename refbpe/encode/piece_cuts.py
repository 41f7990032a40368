"""Where a pre-token may be cut without changing its ids: places no token of the vocab spans.

BPE, by a merge list or by tiktoken's ranks, only ever joins two adjacent parts of a piece
into a token of the vocab, so every part is a substring of the piece that is a token.  If no
token is ``piece[i:j]`` with ``i < k < j`` (no token *spans* the place ``k``), no part ever
does, and the parts left and right of ``k`` are merged as each would be alone: each step
joins the lowest-ranked adjacent pair of the whole piece, leftmost on a tie; a step on the
left side is then the lowest pair of that side (leftmost among the side's equals), and the
other side does not change it.  So ``ids(piece) == ids(piece[:k]) + ids(piece[k:])`` for the
merging loop (not for tiktoken's "a piece that is a token is that token": a piece with a
place no token spans is no token, so the caller checks that rule only on a piece with none,
``encode_in_parts``' ``whole``).

Long pieces are runs of CJK and other scripts whose characters take 2-4 bytes; their parts
repeat far more than the pieces do, so each part is encoded once and kept (the caller's
``parts``; a part that is one three-byte character in the caller's ``chars``, a list indexed
by its code point: no slice of the text and no hash of bytes). Only places between two
multi-byte characters are tried. A token spanning such a place either holds both characters
whole, and then the pair is in ``joined`` (every two adjacent multi-byte characters inside a
token), or begins or ends inside one of them, and then the two bytes around the place are in
``partial`` (the byte pairs around a character boundary of a token that begins or ends inside
one of the two characters). Both tests may say "spanned" for a place no token spans (a cut
missed); neither can miss a token that spans it.

Characters are the runs of a lead byte and its continuation bytes; a place is tried only
between two runs that are well-formed UTF-8 (lead and length agree), so any bytes may be
cut: a malformed run is never a side of a cut.

Cost: building, O(total bytes of the tokens holding a multi-byte character);
``encode_in_parts``, O(len(piece)) with one set look-up per place between two multi-byte
characters, plus ``encode`` of each part not yet in ``parts``.
"""

from typing import Callable, Dict, Iterable, List, Optional

__all__ = ["PieceCuts"]


def _well_formed_multibyte(key):
    """True if ``key`` (a run's bytes, big-endian) is a 2-, 3- or 4-byte UTF-8 sequence."""
    return 0xC000 <= key < 0xE000 or 0xE00000 <= key < 0xF00000 or 0xF0000000 <= key < 0xF8000000


def _runs(token):
    """[(start, end, key)] of the runs of ``token``: a lead byte (or a stray continuation byte at
    the start) and the continuation bytes after it; ``key``, the run's bytes big-endian."""
    starts = [0] + [k for k in range(1, len(token)) if token[k] & 0xC0 != 0x80] + [len(token)]
    return [(s, e, int.from_bytes(token[s:e], "big")) for s, e in zip(starts, starts[1:])]


class PieceCuts(object):
    """The places no token spans, for a vocab given as its tokens' bytes (special tokens may be
    left out: the merging loop never makes one)."""

    def __init__(self, tokens: Iterable[bytes]) -> None:
        joined = set()
        partial = bytearray(1 << 16)
        key_of = {}  # a character -> its UTF-8 bytes as an int
        for token in tokens:
            if len(token) < 2 or token.isascii():
                continue
            try:
                text = token.decode("utf-8")
            except UnicodeDecodeError:
                _enter_runs(token, joined, partial)
                continue
            # UTF-8 text: its runs are its characters, all whole, so only two adjacent
            # multi-byte ones enter (``joined``).  Decoding instead of cutting runs: a fresh
            # process builds o200k_base's table in 0.07 s instead of 0.15 s, cl100k_base's in
            # 0.02 s instead of 0.09 s, part of a first call (perf/micro.py cut-table).
            previous = 0
            for c in text:
                if c < "\x80":
                    previous = 0
                    continue
                key = key_of.get(c)
                if key is None:
                    key = key_of[c] = int.from_bytes(c.encode("utf-8"), "big")
                if previous:
                    joined.add((previous << 32) | key)
                previous = key
        self._joined = joined
        self._partial = bytes(partial)

    def encode_in_parts(
        self,
        piece: bytes,
        parts: Dict[bytes, List[int]],
        encode: Callable,
        whole: Optional[Callable] = None,
        chars: Optional[List[Optional[List[int]]]] = None,
    ) -> List[int]:
        """``encode(piece)``, as the ids of its parts between the places no token spans, each
        part's ``encode`` looked up in ``parts`` (or ``chars``, ``extend_in_parts``) first and
        added to it; one pass.  A piece with no such place is ``whole(piece)`` (``encode`` by
        default)."""
        ids: List[int] = []
        self.extend_in_parts(piece, 0, len(piece), parts, encode, whole or encode, ids, chars)
        return ids

    def extend_in_parts(
        self,
        data: bytes,
        start: int,
        end: int,
        parts: Dict[bytes, List[int]],
        encode: Callable,
        whole: Callable,
        out: List[int],
        chars: Optional[List[Optional[List[int]]]] = None,
    ) -> None:
        """``encode_in_parts`` of the piece ``data[start:end]``, its ids appended to ``out``:
        the piece is not sliced unless it has no place to cut.

        The loop steps a character at a time; a three-byte character (CJK, kana, Hangul:
        what this is for) is read in one step, any other run byte by byte.  ``chars`` (a list of
        65,536, or None): a part that is one three-byte character is kept there by code point
        (``_char_ids``), the other parts in ``parts`` by their bytes."""
        joined, partial = self._joined, self._partial
        previous = 0  # the character before ``i``: its bytes if multi-byte and well-formed, else 0
        part_start = start
        i = start
        while i < end:  # not ``for`` over a ``range``: ``PieceEncoder._merge_piece`` says why
            b = data[i]
            j = i + 3
            if (
                0xE0 <= b < 0xF0
                and j <= end
                and data[i + 1] & 0xC0 == 0x80
                and data[i + 2] & 0xC0 == 0x80
                and (j == end or data[j] & 0xC0 != 0x80)
            ):
                key = (b << 16) | (data[i + 1] << 8) | data[i + 2]
            else:  # any other run: a lead byte (or a stray continuation byte) and its continuation bytes
                key = b
                j = i + 1
                while j < end and data[j] & 0xC0 == 0x80:
                    key = ((key << 8) | data[j]) & 0xFFFFFFFFFF  # its last five bytes: not well-formed
                    j += 1
                if not _well_formed_multibyte(key):
                    previous = 0
                    i = j
                    continue
            # ``data[i - 1:i + 1]``: the two bytes around the place
            if previous and not partial[(data[i - 1] << 8) | b] and (previous << 32) | key not in joined:
                if chars is not None and i - part_start == 3 and previous >= 0xE00000:
                    out.extend(_char_ids(chars, previous, data, part_start, encode))
                else:
                    out.extend(_part_ids(parts, data[part_start:i], encode))
                part_start = i
            previous = key
            i = j
        if part_start == start:
            out.extend(whole(data[start:end]))
        elif chars is not None and end - part_start == 3 and previous >= 0xE00000:
            out.extend(_char_ids(chars, previous, data, part_start, encode))
        else:
            out.extend(_part_ids(parts, data[part_start:end], encode))


def _enter_runs(token, joined, partial):
    """Enter the places inside ``token`` (any bytes) in ``joined`` and ``partial``, run by run."""
    runs = _runs(token)
    for (s1, e1, first), (s2, e2, second) in zip(runs, runs[1:]):
        if _well_formed_multibyte(first) and _well_formed_multibyte(second):
            joined.add((first << 32) | second)
        elif not (_whole(first, e1 - s1) and _whole(second, e2 - s2)):
            partial[(token[e1 - 1] << 8) | token[s2]] = 1


def _whole(key, length):
    """Whether a run (its ``key`` and ``length``) is a whole character: ASCII or well-formed."""
    return key < 0x80 if length == 1 else _well_formed_multibyte(key)


def _char_ids(chars, key, data, start, encode):
    """The ids of the three-byte character ``key`` at ``data[start]``, kept in ``chars`` by code
    point (no slice, no hash)."""
    point = ((key >> 4) & 0xF000) | ((key >> 2) & 0x0FC0) | (key & 0x3F)
    found = chars[point]
    if found is None:
        found = chars[point] = encode(data[start : start + 3])
    return found


def _part_ids(parts, part, encode):
    found = parts.get(part)
    if found is None:
        found = parts[part] = encode(part)
    return found
