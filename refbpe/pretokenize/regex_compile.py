"""A split pattern in ``regex`` syntax, compiled for the standard ``re`` module over UTF-8 bytes.

The ``regex`` module is not exact on PyPy for non-ASCII text, and each
interpreter's own Unicode tables differ; the standard ``re`` module over
``bytes`` has neither problem, since it only compares bytes.  So the pattern
(parsed by ``regex_syntax``) is rewritten into a bytes pattern that means the
same thing:

1. Every class (a literal, ``[...]``, ``\\p{..}``, ``\\s``, ``.``) becomes the
   set of code points it matches, from a class provider (``unicode_classes``:
   the pinned tables), closed under ``(?i)`` case partners when the flag is on
   and then complemented when negated (as ``regex`` does: ``(?i)[^k]`` matches
   neither ``k``, ``K`` nor U+212A), and is spelled as an alternation of UTF-8
   byte sequences (``utf8_ranges``), which matches exactly one code point.
2. Quantifiers then count code points.  Greedy and lazy ones, alternation and
   lookahead are ``re``'s own, with the same backtracking order as ``regex``.
3. Possessive quantifiers and atomic groups (``re`` has them only from 3.11):
   ``X{m,}+`` of a single class ``X`` is ``X{m,}(?!X)`` (greedy, and no shorter
   count can succeed because the next code point is an ``X``); ``X?+`` is
   ``(?:X|(?!X))``; any other is ``(?=(Y))\\k`` with ``k`` the new group
   (a lookahead does not backtrack once it succeeded, and the reference then
   consumes exactly what it matched).

Matching is leftmost-first on both sides, so the pieces are ``regex``'s.
Two properties make the pieces of a text its tiling: the pattern must not match
the empty string (checked when compiling: ``RegexError``), and it must match at
every position, which is checked while scanning: a character no alternative
matches is an ``UnmatchedText`` error naming its offset (tiktoken and rustbpe
would silently drop it; refbpe's pieces always cover the text).

Cost: compiling is linear in the pattern and its classes' ranges (tens of ms
for ``\\p{L}``, cached by pattern text and provider).  On CPython scanning is
``re``'s (``findall`` when the bytes pattern has no group, else ``finditer``);
on PyPy, whose ``re`` is slow, the same tree is written as Python code by
``regex_engine`` when it can be (nanochat's pattern counts at 1.6x the time of
the ``llama3`` scanner there, ``perf/custom_patterns.py``); the tests hold both
engines to ``regex`` and to each other.  ``re`` backtracks exponentially on
some repeats of groups (``(a|aa)+$`` on ``aaa...!``), which ``regex_engine``
runs in linear time: a pattern holding one (``regex_risk``) runs on the
generated code on CPython too, and one too large for it is refused
(``RegexError``, naming the fix), so nothing ``re`` runs can take time
exponential in the text.
"""

from __future__ import annotations

import platform
import re

from .cuts import NO_CUTS
from .regex_cuts import derive_cut_points
from .regex_engine import build_matcher
from .regex_risk import backtracks_exponentially
from .regex_syntax import RegexError, parse_regex
from .unicode_classes import pinned_classes
from .utf8_ranges import byte_regex, complement, to_ranges, union

__all__ = ["compile_split_regex", "UnmatchedText"]


class UnmatchedText(ValueError):
    """The split pattern matches no piece at some position of a text."""


class CompiledSplit(object):
    """``regex`` text compiled to a ``re`` bytes pattern (``byte_pattern``) and, when
    ``regex_engine`` can, to closures (``engine`` says which ``piece_ends`` runs)."""

    def __init__(self, regex, byte_pattern, groups, matcher=None, cut_points=NO_CUTS):
        self.regex = regex
        self.byte_pattern = byte_pattern
        self.cut_points = cut_points  # where its texts may be cut (``regex_cuts``)
        self._re = re.compile(byte_pattern)
        self._findall = self._re.findall if not groups else None
        self._finditer = self._re.finditer
        self.engine = "generated" if matcher else "re"
        if matcher:
            self._scan, self._atoms = matcher
            self.piece_ends = self._generated_piece_ends

    def _generated_piece_ends(self, data):
        ends, gap = self._scan(self._atoms(data), data, len(data))
        if gap >= 0:
            self._raise_gap(data, [data[:gap]])
        return ends

    def pieces(self, data):
        """The pieces of UTF-8 ``data`` as ``bytes``; ``UnmatchedText`` where none matches."""
        if self.engine == "generated":
            out, start = [], 0
            for end in self.piece_ends(data):
                out.append(data[start:end])
                start = end
            return out
        if self._findall is not None:
            pieces = self._findall(data)
        else:
            pieces = [m.group() for m in self._finditer(data)]
        if sum(map(len, pieces)) != len(data):
            self._raise_gap(data, pieces)
        return pieces

    def piece_ends(self, data):
        """End offsets of the pieces of UTF-8 ``data``, in order."""
        ends = []
        append = ends.append
        end = 0
        for piece in self.pieces(data):
            end += len(piece)
            append(end)
        return ends

    def _raise_gap(self, data, pieces):
        pos = 0
        for piece in pieces:
            if not data.startswith(piece, pos):
                break
            pos += len(piece)
        char = data[pos : pos + 4].decode("utf-8", "replace")[:1]
        raise UnmatchedText(
            "the split pattern matches nothing at byte %d (U+%04X); refbpe needs a pattern that matches "
            "every character (add a last alternative such as |\\s+|\\S)" % (pos, ord(char) if char else 0)
        )


_COMPILED = {}
_ON_PYPY = platform.python_implementation() == "PyPy"


def compile_split_regex(regex, classes=None, engine=None):
    """The ``CompiledSplit`` of ``regex`` (``RegexError`` when refused), cached per provider.

    ``engine``: ``"re"``, ``"generated"`` (``regex_engine``'s Python code, when it
    supports the pattern) or None: generated code on PyPy, ``re`` on CPython
    (each the faster there), the generated code on both for a pattern ``re``
    may backtrack on exponentially (``regex_risk``); such a pattern is refused
    when the generated code cannot take it, or ``engine="re"`` is asked for."""
    classes = classes or pinned_classes()
    key = (regex, id(classes), engine)  # the entry keeps ``classes`` alive: its id stays its own
    if key not in _COMPILED:
        tree = parse_regex(regex)
        if _nullable(tree):
            raise RegexError("the split pattern can match the empty string, which is not a piece")
        risky = backtracks_exponentially(tree, _nullable)
        writer = _Writer(classes)
        byte_pattern = writer.write(tree)
        matcher = None
        if (engine or ("generated" if _ON_PYPY or risky else "re")) == "generated":
            matcher = build_matcher(tree, writer.code_points, _nullable)
        if risky and matcher is None:
            raise RegexError(
                "the split pattern repeats a group that can match in more than one way, as (a|aa)+ does, "
                "and %s: re could take time exponential in the text on it; make the group atomic, "
                "(?>a|aa)+, or the repeat possessive, (a|aa)++" % _NOT_GENERATED[engine == "re"]
            )
        cut_points = derive_cut_points(tree, writer.code_points)
        _COMPILED[key] = (classes, CompiledSplit(regex, byte_pattern, writer.groups, matcher, cut_points))
    return _COMPILED[key][1]


_NOT_GENERATED = {
    False: "is too large for the matcher that runs such repeats in linear time",
    True: "was asked to run on re",
}


def _nullable(node):
    kind = node[0]
    if kind == "set":
        return False
    if kind == "seq":
        return all(_nullable(n) for n in node[1])
    if kind == "alt":
        return any(_nullable(n) for n in node[1])
    if kind == "repeat":
        return node[2] == 0 or _nullable(node[1])
    if kind == "atomic":
        return _nullable(node[1])
    return True  # a lookahead or anchor matches no character


class _Writer(object):
    """Writes the bytes pattern of a tree, numbering the groups it needs."""

    def __init__(self, classes):
        self.classes = classes
        self.groups = 0
        self._partners = None
        self._ranges = {}  # set node -> its range set

    def write(self, node):
        return getattr(self, "_" + node[0])(node)

    def code_points(self, node):
        """The range set of a ``set`` node, computed once per node (the cut points ask for the
        same few sets about a thousand times when o200k's regex is compiled)."""
        ranges = self._ranges.get(node)
        if ranges is None:
            ranges = self._ranges[node] = self._code_points(node)
        return ranges

    def _code_points(self, node):
        _, items, negated, icase = node
        parts = []
        for item in items:
            if item[0] == "range":
                parts.append(((item[1], item[2]),))
            elif item[0] == "class":
                parts.append(self.classes.set_of(item[1]))
            else:  # "notclass"
                parts.append(complement(self.classes.set_of(item[1])))
        ranges = union(*parts)
        if icase:
            ranges = self.case_closed(ranges)
        return complement(ranges) if negated else ranges

    def case_closed(self, ranges):
        if self._partners is None:
            self._partners = self.classes.case_partners()
        extra = []
        for cp, partners in self._partners.items():
            if _in(ranges, cp):
                extra.extend(partners)
        return union(ranges, to_ranges(extra))

    def _set(self, node):
        return byte_regex(self.code_points(node))

    def quantifiable(self, node):
        """The text of ``node`` as one unit a quantifier can follow."""
        text = self.write(node)
        return text if node[0] in ("set", "alt") else b"(?:" + text + b")"

    def _seq(self, node):
        return b"".join(self.write(n) for n in node[1])

    def _alt(self, node):
        return b"(?:" + b"|".join(self.write(n) for n in node[1]) + b")"

    def _look(self, node):
        return (b"(?!" if node[2] else b"(?=") + self.write(node[1]) + b")"

    def _anchor(self, node):
        return node[1].encode("ascii")

    def _atomic(self, node):
        return self.atomic(node[1])

    def atomic(self, body):
        """``(?=(body))\\k``: body matched once, never backtracked into."""
        self.groups += 1
        k = self.groups
        return b"(?=(" + self.write(body) + b"))\\%d" % k

    def _repeat(self, node):
        _, body, lo, hi, mode = node
        if mode != "possessive":
            text = self.quantifiable(body) + _bounds(lo, hi)
            return text + b"?" if mode == "lazy" else text
        if body[0] == "set":
            one = self._set(body)  # a group: (?:...)
            if hi is None:
                return one + _bounds(lo, None) + b"(?!" + one + b")"
            if (lo, hi) == (0, 1):
                return b"(?:" + one + b"|(?!" + one + b"))"
        return self.atomic(("repeat", body, lo, hi, "greedy"))


def _bounds(lo, hi):
    if (lo, hi) == (0, None):
        return b"*"
    if (lo, hi) == (1, None):
        return b"+"
    if (lo, hi) == (0, 1):
        return b"?"
    if hi is None:
        return b"{%d,}" % lo
    if lo == hi:
        return b"{%d}" % lo
    return b"{%d,%d}" % (lo, hi)


def _in(ranges, cp):
    lo_i, hi_i = 0, len(ranges)
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        lo, hi = ranges[mid]
        if cp < lo:
            hi_i = mid
        elif cp > hi:
            lo_i = mid + 1
        else:
            return True
    return False
