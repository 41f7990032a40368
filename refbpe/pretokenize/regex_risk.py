"""Which split patterns a plain backtracking matcher (``re``) may take exponential time on.

A backtracking matcher tries the ways of matching in order.  It takes time
exponential in the text when a repeat can match one stretch of text in
exponentially many ways and what follows fails, as ``(a|aa)+$``, ``(a+)+$``,
``(aa?)*$`` or ``(a|a)*$`` do on ``aaaa...!``: every iteration can end at
several places (its body holds a *choice*), and each choice is tried again
for every way of matching the iterations before it.  So a repeat is *risky*
when it can run twice or more (``*``, ``+``, ``{m,n}`` with ``n >= 2``) and
its body is a group that holds a choice or can match the empty string, unless
it is possessive with at most one mandatory iteration.  A choice is an
alternation, or a repeat that can stop at more than one count and is not
possessive (``a?``, ``a+``, ``a{1,3}``).  Possessive repeats and atomic groups
commit to their first match and a lookahead's body is a search of its own, so
they offer the path around them no choice (a risky repeat inside them is
found on its own); but finding that first match backtracks over the mandatory
iterations, which for ``(?:a|aa){3000}+`` is exponential in any text shorter
than 3000 ``a``.

Without a risky repeat, every repeat that can run twice has a body that matches
at most one way from a given position, so its iterations run one way and it
offers a path only a choice of how many: the paths of an attempt are
polynomial in the text (a chain of ``k`` repeats of classes, ``a*a*a*$``, is
``n^k``, in ``re`` and ``regex`` alike).  ``backtracks_exponentially(tree)``
is that sufficient condition: a pattern it passes is safe for ``re``; one it
flags may still be safe (``(?:ab|cd)+``), and runs on ``regex_engine``'s
matcher, which memoises its loops (linear in the text) on CPython too.  Cost:
linear in the pattern.
"""

from __future__ import annotations

__all__ = ["has_choice", "backtracks_exponentially"]


def has_choice(node):
    """Whether ``node`` can match from one position in more than one way (the tree of ``regex_syntax``).

    >>> has_choice(("repeat", ("set", (("range", 97, 97),), False, False), 0, 1, "greedy"))
    True
    """
    kind = node[0]
    if kind == "alt":
        return True
    if kind == "seq":
        return any(has_choice(n) for n in node[1])
    if kind == "repeat":
        body, lo, hi, mode = node[1], node[2], node[3], node[4]
        if mode == "possessive":
            return False
        return lo != hi or has_choice(body)
    return False  # a class, an anchor, a lookahead or an atomic group: one way or none


def backtracks_exponentially(node, nullable):
    """Whether ``node`` holds a risky repeat (module docstring); ``nullable(node)``: whether a
    node can match the empty string."""
    kind = node[0]
    if kind in ("seq", "alt"):
        return any(backtracks_exponentially(n, nullable) for n in node[1])
    if kind in ("look", "atomic"):
        return backtracks_exponentially(node[1], nullable)
    if kind != "repeat":
        return False
    body, lo, hi, mode = node[1], node[2], node[3], node[4]
    if body[0] != "set" and (hi is None or hi >= 2) and (has_choice(body) or nullable(body)):
        if mode != "possessive" or (lo >= 2 and has_choice(body)):
            return True
    return backtracks_exponentially(body, nullable)
