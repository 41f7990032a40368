"""Where a custom split pattern's texts may be cut: a rule derived from the pattern itself.

A cut at ``c`` is safe when the pieces of the whole text are those of
``text[:c]`` followed by those of ``text[c:]``.  ``derive_cut_points`` finds
ASCII triples ``w x | y`` (``w = text[c-2]``, ``x = text[c-1]``, ``y = text[c]``)
for which that holds for any text around them, by a proof over the pattern's
tree, and returns them as a compiled ``re`` search whose match ends at the cut
(``(?<=[W])x(?=[Y])``), like the hand-made rules of ``cuts``.

The argument.  The pattern has no lookbehind (refused) and, for a rule to be
derived, no anchor, so the attempt at any start ``s`` depends only on the text
from ``s``, and characters are consumed one class test at a time.  Call a
*position* each class occurrence in the tree (Glushkov's construction);
``follow(p)`` the positions (and lookaheads) that can be tested right after
``p`` consumed a character, through any path, quantifier or alternative
(assertions are transparent; counts are ignored, which only adds follows).

1. No attempt from ``s <= c - 2`` reads ``c``: to read it, it must consume
   ``w`` at ``c - 2`` and then ``x`` at ``c - 1``; that needs a position
   holding ``w`` followed by one holding ``x`` (or by a lookahead whose body
   can start with ``x``), and ``w`` is chosen so that there is none.
2. The attempt from ``s = c - 1`` tries the top-level alternatives in order;
   the first one that surely matches when its first character is ``x``,
   whatever follows (``_sure``), ends the list.  In the ones tried, every
   test made at ``c`` after consuming ``x`` (the follows of the positions
   holding ``x`` among their first positions, and the first classes of the
   lookaheads there) fails for ``y``: ``y`` is chosen outside all of them.
3. So every attempt from before ``c`` tests ``c`` only with classes that
   ``y`` is not in, exactly as the end of the text fails them: it behaves the
   same on ``text[:c]``, and never consumes ``c``.  The matches before ``c``
   are therefore the same in both texts and end by ``c``; the pieces tile the
   text, so one ends at ``c``, and the scan restarts there as on ``text[c:]``.

Only ASCII ``w``, ``x``, ``y`` are used, so the cut is at an ASCII byte and
the lookbehind on one byte is exact.  A pattern with an anchor, or no triple
at all, gets ``cuts.NO_CUTS``.  Cost: linear in the pattern's size times 128
characters, once per pattern.  For nanochat's pattern the rule is a newline
after a letter or digit and before any ASCII non-whitespace, the hand-made
rule of the GPT-4 family with fewer ``w``.
"""

from __future__ import annotations

import re

from .cuts import NO_CUTS

__all__ = ["derive_cut_points"]

_ASCII = range(128)


class _Glushkov(object):
    """Positions (set nodes by occurrence), lookaheads, and their first/follow relations."""

    def __init__(self, code_points):
        self.code_points = code_points  # set node -> range set
        self.classes = []  # position -> frozenset of ASCII code points in its class
        self.looks = {}  # lookahead id -> (body first classes (ASCII), body first positions)
        self.follow = {}  # position -> set of items: ("p", k) or ("look", id)

    def position(self, node):
        ranges = self.code_points(node)
        ascii_members = frozenset(cp for cp in _ASCII if any(lo <= cp <= hi for lo, hi in ranges))
        self.classes.append(ascii_members)
        k = len(self.classes) - 1
        self.follow[k] = set()
        return k

    def walk(self, node):
        """(first items, last positions, nullable) of ``node``, adding its follows."""
        kind = node[0]
        if kind == "set":
            k = self.position(node)
            return {("p", k)}, {k}, False
        if kind == "look":
            first, _, _ = self.walk(node[1])
            look = len(self.looks)
            self.looks[look] = first
            return {("look", look)}, set(), True
        if kind == "atomic":
            return self.walk(node[1])
        if kind == "alt":
            first, last, nullable = set(), set(), False
            for branch in node[1]:
                f, la, n = self.walk(branch)
                first |= f
                last |= la
                nullable = nullable or n
            return first, last, nullable
        if kind == "repeat":
            first, last, nullable = self.walk(node[1])
            if node[3] is None or node[3] > 1:
                for p in last:
                    self.follow[p] |= first
            return first, last, nullable or node[2] == 0
        first, last, nullable = set(), set(), True  # seq
        for item in node[1]:
            f, la, n = self.walk(item)
            for p in last:
                self.follow[p] |= f
            if nullable:
                first |= f
            last = la | last if n else la
            nullable = nullable and n
        return first, last, nullable

    def item_class(self, item):
        """The ASCII code points a follow item's test accepts (a lookahead: its body's first)."""
        if item[0] == "p":
            return self.classes[item[1]]
        out = set()
        for inner in self.looks[item[1]]:
            out |= self.item_class(inner)
        return out

    def positions_holding(self, items, cp):
        """The positions among ``items`` (and inside lookaheads among them) whose class holds ``cp``."""
        out = []
        for item in items:
            if item[0] == "p":
                if cp in self.classes[item[1]]:
                    out.append(item[1])
            else:
                out += self.positions_holding(self.looks[item[1]], cp)
        return out


def _has_anchor(node):
    if node[0] == "anchor":
        return True
    if node[0] in ("seq", "alt"):
        return any(_has_anchor(n) for n in node[1])
    if node[0] in ("look", "atomic", "repeat"):
        return _has_anchor(node[1])
    return False


def _always_succeeds(node):
    """True when ``node`` matches (possibly nothing) whatever the text."""
    if node[0] == "repeat":
        return node[2] == 0
    if node[0] == "seq":
        return all(_always_succeeds(n) for n in node[1])
    if node[0] == "alt":
        return any(_always_succeeds(n) for n in node[1])
    return False


def _sure(node, cp, code_points):
    """True when ``node`` surely matches a non-empty string at a character ``cp``, whatever follows."""
    kind = node[0]
    if kind == "set":
        return _holds(code_points(node), cp)
    if kind == "alt":
        return any(_sure(b, cp, code_points) for b in node[1])
    if kind == "repeat":
        body, lo, hi, mode = node[1], node[2], node[3], node[4]
        ok_count = lo <= 1 and (hi is None or hi >= 1) and not (mode == "lazy" and lo == 0)
        return ok_count and body[0] == "set" and _holds(code_points(body), cp)
    if kind != "seq":
        return False
    items = node[1]
    for i, item in enumerate(items):
        if _sure(item, cp, code_points) and all(_always_succeeds(n) for n in items[i + 1 :]):
            return True
        if not _may_be_empty_at(item, cp, code_points):
            return False
    return False


def _may_be_empty_at(node, cp, code_points):
    """True when ``node`` can match the empty string at a character ``cp`` (then backtracking reaches it)."""
    if node[0] != "repeat" or node[2] != 0:
        return False
    if node[4] != "possessive":
        return True
    body = node[1]
    return body[0] == "set" and not _holds(code_points(body), cp)


def _holds(ranges, cp):
    return any(lo <= cp <= hi for lo, hi in ranges)


def derive_cut_points(tree, code_points):
    """The compiled rule-1 search for ``tree`` (``cuts``'s convention), or ``NO_CUTS``."""
    if _has_anchor(tree):
        return NO_CUTS
    g = _Glushkov(code_points)
    branches = tree[1] if tree[0] == "alt" else [tree]
    firsts = [g.walk(b)[0] for b in branches]
    all_first = set().union(*firsts)
    alternatives = []
    for x in _ASCII:
        ys = _allowed_after(g, branches, firsts, x, code_points)
        ws = _allowed_before(g, all_first, x)
        if ys and ws:
            alternatives.append(b"(?<=%s)%s(?=%s)" % (_byte_class(ws), b"\\x%02x" % x, _byte_class(ys)))
    if not alternatives:
        return NO_CUTS
    return re.compile(b"|".join(alternatives))


def _allowed_after(g, branches, firsts, x, code_points):
    """The ASCII ``y`` no attempt starting at ``x`` tests successfully (step 2)."""
    tested = set()
    for branch, first in zip(branches, firsts):
        for p in g.positions_holding(first, x):
            for item in g.follow[p]:
                tested |= g.item_class(item)
        if _sure(branch, x, code_points):
            break
    return [y for y in _ASCII if y not in tested]


def _allowed_before(g, all_first, x):
    """The ASCII ``w`` after which no attempt can go on to consume ``x`` (step 1)."""
    out = []
    for w in _ASCII:
        holders = [p for p in range(len(g.classes)) if w in g.classes[p]]
        if not any(x in g.item_class(item) for p in holders for item in g.follow[p]):
            out.append(w)
    return out


def _byte_class(values):
    return b"[" + b"".join(b"\\x%02x" % v for v in values) + b"]"
