"""Sets of code points as sorted ranges, and their UTF-8 encodings as a byte regex.

A set is a tuple of disjoint, sorted, non-adjacent ``(lo, hi)`` inclusive
ranges over U+0000..U+10FFFF (surrogates included: lone surrogates reach the
scanners encoded with ``surrogatepass``, as three bytes ``ED A0..BF 80..BF``).

``byte_regex(ranges)`` spells the set for the standard ``re`` module over UTF-8
bytes: it splits each range until every piece is one sequence of byte ranges
(the method of Rust's ``utf8-ranges``: first at the 1/2/3/4-byte boundaries,
then where a continuation byte stops spanning 80..BF), so ``[\\x{800}-\\x{FFFF}]``
becomes ``[\\xe0][\\xa0-\\xbf][\\x80-\\xbf]|[\\xe1-\\xef][\\x80-\\xbf][\\x80-\\xbf]``.
UTF-8 is prefix-free, so on valid UTF-8 the alternation matches exactly one
encoded code point of the set, whatever the order of its branches; the
one-byte branch comes first, for speed on ASCII text.  Cost: linear in the
number of ranges (at most 3 x 4 pieces each).

    >>> to_ranges([0x61, 0x62, 0x63, 0x78])
    ((97, 99), (120, 120))
    >>> byte_regex(((0x61, 0x63), (0xE9, 0xE9))) == rb"(?:[\\x61-\\x63]|\\xc3[\\xa9])"
    True
"""

from __future__ import annotations

__all__ = [
    "MAX_CODE_POINT",
    "to_ranges",
    "union",
    "complement",
    "byte_regex",
]

MAX_CODE_POINT = 0x10FFFF
_LENGTH_LIMITS = (0x7F, 0x7FF, 0xFFFF)


def to_ranges(code_points):
    """The set of the given code points."""
    out = []
    for cp in sorted(set(code_points)):
        if out and out[-1][1] + 1 == cp:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return tuple((lo, hi) for lo, hi in out)


def union(*sets):
    """The union of range sets."""
    merged = []
    for lo, hi in sorted(r for s in sets for r in s):
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1][1] = hi
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


def complement(ranges):
    """Every code point not in ``ranges``."""
    out, nxt = [], 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return tuple(out)


def intersect(a, b):
    """Code points in both."""
    return complement(union(complement(a), complement(b)))


def contains(ranges, cp):
    """True when ``cp`` is in ``ranges`` (a linear scan: for tests and error messages)."""
    return any(lo <= cp <= hi for lo, hi in ranges)


def _encode(cp):
    if cp < 0x80:
        return (cp,)
    if cp < 0x800:
        return (0xC0 | cp >> 6, 0x80 | cp & 0x3F)
    if cp < 0x10000:
        return (0xE0 | cp >> 12, 0x80 | cp >> 6 & 0x3F, 0x80 | cp & 0x3F)
    return (0xF0 | cp >> 18, 0x80 | cp >> 12 & 0x3F, 0x80 | cp >> 6 & 0x3F, 0x80 | cp & 0x3F)


def utf8_sequences(lo, hi):
    """The UTF-8 encodings of ``lo..hi`` as byte-range sequences ``((b0lo, b0hi), ...)``, in order."""
    out = []
    stack = [(lo, hi)]
    while stack:
        lo, hi = stack.pop()
        pieces = _split(lo, hi)
        if pieces:
            stack.extend(reversed(pieces))
            continue
        out.append(tuple(zip(_encode(lo), _encode(hi))))
    return out


def _split(lo, hi):
    """Two ranges covering ``lo..hi`` when it is not one byte-range sequence, else None."""
    for limit in _LENGTH_LIMITS:
        if lo <= limit < hi:
            return [(lo, limit), (limit + 1, hi)]
    if hi <= 0x7F:
        return None
    for i in (1, 2, 3):
        mask = (1 << (6 * i)) - 1
        if lo & ~mask != hi & ~mask:
            if lo & mask:
                return [(lo, lo | mask), ((lo | mask) + 1, hi)]
            if hi & mask != mask:
                return [(lo, (hi & ~mask) - 1), (hi & ~mask, hi)]
    return None


def _byte_class(lo, hi):
    if lo == hi:
        return _byte(lo)
    return b"[" + _byte(lo) + b"-" + _byte(hi) + b"]"


def _byte(b):
    return b"\\x%02x" % b


def byte_regex(ranges):
    """A ``re`` bytes pattern (a non-capturing group) matching one UTF-8 encoded code point of ``ranges``."""
    if not ranges:
        return b"(?!)"
    ascii_parts, tree = [], {}
    for lo, hi in ranges:
        for seq in utf8_sequences(lo, hi):
            if len(seq) == 1:
                ascii_parts.append(seq[0])
            else:
                node = tree
                for r in seq:
                    node = node.setdefault(r, {})
    branches = []
    if ascii_parts:
        branches.append(b"[" + b"".join(_ascii_range(lo, hi) for lo, hi in ascii_parts) + b"]")
    branches += _render(tree)
    return b"(?:" + b"|".join(branches) + b")"


def _ascii_range(lo, hi):
    return _byte(lo) if lo == hi else _byte(lo) + b"-" + _byte(hi)


def _render(tree):
    """The branches of a trie of byte ranges; sibling leaves share one class."""
    leaves = [r for r, child in tree.items() if not child]
    branches = []
    if leaves:
        branches.append(b"[" + b"".join(_ascii_range(lo, hi) for lo, hi in leaves) + b"]")
    for r, child in tree.items():
        if child:
            inner = _render(child)
            tail = inner[0] if len(inner) == 1 else b"(?:" + b"|".join(inner) + b")"
            branches.append(_byte_class(*r) + tail)
    return branches
