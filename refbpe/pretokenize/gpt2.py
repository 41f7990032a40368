"""GPT-2 pre-tokenization: a hand-written scanner over UTF-8 bytes.

The pattern, with the meaning the ``regex`` module gives it::

    '(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+

``regex`` is not used at run time: on PyPy it is only correct for ASCII, and each
interpreter's own Unicode tables differ.  Instead every code point is classified
by a generated table (letter / number / space / other) of one Unicode version,
the latest (``_unicode_table``) unless the caller passes another
(``unicode_tables``), and the alternation is unrolled by hand.  At a match start:

1. ``'`` followed by ``s d m t`` or ``ll ve re`` (lower case) is a contraction.
2. An optional single U+0020 followed by a letter, number or "other" character
   starts a run of that class; the run is maximal (greedy ``+``).
3. A whitespace run reaching the end of the text is one piece.  A whitespace run
   followed by a non-space keeps its last character for the next piece
   (``\\s+(?!\\S)`` backtracks by one), unless the run is that single character
   (the last alternative ``\\s+``).  The kept character, if it is U+0020, then
   glues onto the next word by rule 2.

Each match depends only on the text from its start (no look-behind), which is
what lets callers cut text at piece boundaries.  Input is valid UTF-8 (the
callers encode ``str`` or validate bytes); lone surrogates arrive encoded with
``surrogatepass`` and classify as "other", as ``regex`` does.

The scanner gives the pieces' end offsets (``piece_ends``); the pieces as
``bytes`` or ``str``, and their counts, are ``patterns.Pattern``'s, written once
for every scanner (``get_pattern("gpt2").pretokenize``); ``count_pieces``, the
counting they share, is here.

Speed: PyPy's JIT turns the index loop below into machine code; indexing a
1.1 MB ``bytes`` class table per character is a single bounds-checked load
(perf/micro.py pretokenize-table under PyPy: a dict is 4-5x slower, bisect
about 30x).
"""

import struct

from .._util.lists import list_with_room
from ._unicode_table import UNICODE_VERSION
from .unicode_tables import class_table

__all__ = [
    "GPT2_PATTERN",
    "piece_ends",
    "count_pieces",
    "add_small_counts",
    "add_small_pairs",
    "decode_at",
    "CLASS_OF",
    "char_class",
    "OTHER",
    "LETTER",
    "NUMBER",
    "SPACE",
]

_BIG_ENDIAN_U64 = struct.Struct(">Q")  # a packed small key's bytes: see add_small_pairs

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

OTHER, LETTER, NUMBER, SPACE = 0, 1, 2, 3


CLASS_OF = class_table(UNICODE_VERSION)  # the latest version's; ``unicode_tables`` has the others

_APOSTROPHE = 0x27
_SPACE = 0x20


def char_class(cp, table=CLASS_OF):
    """The class (OTHER, LETTER, NUMBER, SPACE) of code point ``cp`` in ``table`` (a ``class_table``)."""
    return table[cp]


def _decode_at(data, i, lead):
    """(code point, width) of the multi-byte UTF-8 sequence starting at ``i``."""
    if lead < 0xE0:
        return ((lead & 0x1F) << 6) | (data[i + 1] & 0x3F), 2
    if lead < 0xF0:
        return ((lead & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F), 3
    return (
        ((lead & 0x07) << 18)
        | ((data[i + 1] & 0x3F) << 12)
        | ((data[i + 2] & 0x3F) << 6)
        | (data[i + 3] & 0x3F),
        4,
    )


decode_at = _decode_at  # for the other scanners


def piece_ends(data, table=CLASS_OF):
    """End offsets of the GPT-2 pre-tokens of UTF-8 ``data``, in order.

    The scanner itself: it returns offsets (a list of small ints, unboxed under
    PyPy) so that callers choose whether to build ``bytes`` pieces at all.
    ``table`` classifies code points (``unicode_tables.class_table``: the
    latest Unicode version by default).
    """
    ends = list_with_room(len(data) >> 2)
    append = ends.append
    n = len(data)
    i = 0
    while i < n:
        # Find the class of the piece starting at i and the end j of its
        # first character (with a leading U+0020 glued on when rule 2 applies).
        b = data[i]
        if b < 0x80:
            cls = table[b]
            if b == _APOSTROPHE and i + 1 < n:
                b1 = data[i + 1]
                if b1 == 0x73 or b1 == 0x74 or b1 == 0x64 or b1 == 0x6D:  # s t d m
                    append(i + 2)
                    i += 2
                    continue
                if i + 2 < n:
                    b2 = data[i + 2]
                    if (b1 == 0x6C and b2 == 0x6C) or (b2 == 0x65 and (b1 == 0x76 or b1 == 0x72)):  # ll ve re
                        append(i + 3)
                        i += 3
                        continue
            j = i + 1
            if b == _SPACE and j < n:
                b1 = data[j]
                if b1 < 0x80:
                    next_cls, w = table[b1], 1
                else:
                    cp, w = _decode_at(data, j, b1)
                    next_cls = table[cp]
                if next_cls != SPACE:
                    cls = next_cls
                    j += w
        else:
            cp, w = _decode_at(data, i, b)
            cls = table[cp]
            j = i + w
        if cls != SPACE:
            # Letters, numbers or "other": the maximal run of that class.
            # (Inlined rather than a helper: perf/micro.py pretokenize-inline, 1.4x under PyPy.)
            while j < n:
                b = data[j]
                if b < 0x80:
                    if table[b] != cls:
                        break
                    j += 1
                else:
                    cp, w = _decode_at(data, j, b)
                    if table[cp] != cls:
                        break
                    j += w
            append(j)
            i = j
            continue
        # Whitespace run [i, j); `last` is where its last character starts.
        last = i
        while j < n:
            b = data[j]
            if b < 0x80:
                if table[b] != SPACE:
                    break
                last = j
                j += 1
            else:
                cp, w = _decode_at(data, j, b)
                if table[cp] != SPACE:
                    break
                last = j
                j += w
        if j < n and last > i:
            j = last  # \s+(?!\S): leave the last space for the next piece
        append(j)
        i = j
    return ends


def count_pieces(data, ends, counts=None, small=None):
    """Add the counts of the pieces of UTF-8 ``data`` ending at ``ends`` (any
    scanner's ``piece_ends``) to ``counts`` (bytes -> int).

    A piece shorter than 8 bytes (most of them) is counted under an int key,
    its bytes packed big-endian after a leading 1 bit, built without slicing:
    no ``bytes`` object is made.  The speed gain is small (perf/micro.py
    pretokenize-int-keys under PyPy: 0.95-1.08x of counting ``bytes``
    slices); the int keys matter for the worker results, which travel packed
    (``count.pack_counts``).  The key is built by a ``while`` loop, not ``for``
    over a ``range``: counting english_medium 3-8% faster with one worker and
    6% with two (perf/count_workers.py --trees, two runs; encoding's key loop
    gained alike, ``PieceEncoder._encode_bytes``).  Given a dict ``small``,
    those int keys are left in it (callers that add up many tables convert
    once, with ``add_small_counts``); otherwise they become ``bytes`` keys of
    ``counts`` at the end.
    """
    if counts is None:
        counts = {}
    keep_small = small is not None
    if not keep_small:
        small = {}
    start = 0
    for end in ends:
        if end - start < 8:
            key = 1
            p = start
            while p < end:
                key = (key << 8) | data[p]
                p += 1
            small[key] = small.get(key, 0) + 1
        else:
            piece = data[start:end]
            counts[piece] = counts.get(piece, 0) + 1
        start = end
    if not keep_small:
        add_small_counts(small, counts)
    return counts


def add_small_counts(small, counts):
    """Add counts kept under packed int keys (see ``count_pieces``) to ``counts``."""
    return add_small_pairs(small.items(), counts)


def add_small_pairs(pairs, counts):
    """``add_small_counts`` of ``(packed int key, count)`` pairs; returns ``counts``.

    A key's bytes are the last ones of its eight big-endian bytes (``struct``): under PyPy
    1.3x as fast as ``int.to_bytes`` of the key less its leading bit (perf/micro.py
    count-settle), which is the main process's last step of a count with workers."""
    pack = _BIG_ENDIAN_U64.pack
    get = counts.get
    for key, n in pairs:
        piece = pack(key)[8 - ((key.bit_length() - 1) >> 3) :]  # the bytes after the leading 1 bit
        counts[piece] = get(piece, 0) + n
    return counts
