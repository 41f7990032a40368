"""Which split patterns a plain backtracking matcher (``re``) may take exponential time on.

A backtracking matcher tries the ways of matching in order.  It takes time
exponential in the text when a repeat can match one stretch of text in
exponentially many ways and what follows fails, as ``(a|aa)+$``, ``(a+)+$``,
``(aa?)*$`` or ``(a|a)*$`` do on ``aaaa...!``: every iteration can end at
several places (its body holds a *choice*), and each choice is tried again
for every way of matching the iterations before it.  A choice is an
alternation, or a repeat that can stop at more than one count and is not
possessive (``a?``, ``a+``, ``a{1,3}``); possessive repeats and atomic groups
commit to their first match, so they offer the path around them none.

So a repeat is *risky* when it can run twice or more (``*``, ``+``,
``{m,n}`` with ``n >= 2``), its body is a group that holds a choice or can
match the empty string, and either

* what follows it can fail, and it is not possessive: a failure after the
  loop sends the matcher back into its iterations.  What cannot fail (nothing
  more, or only optional parts: ``cannot_fail``) never does, so a repeat that
  ends its alternative keeps the first iteration that matches each time
  (``(?:\\p{L}|\\p{L}\\p{M})+`` at the end of a split pattern is safe); or
* it has two or more mandatory iterations: finding them backtracks over the
  body's choices whatever follows (``(?:a|aa){3000}+`` on fewer than 3000 ``a``).

A lookahead's or atomic group's body is a search of its own, ending at its
end (which cannot fail); the risky repeats inside are found the same way.

Without a risky repeat every repeat that runs twice or more either matches
each iteration one way from a given position (it offers a path only a
choice of how many) or is never backtracked into: the paths of an attempt are
polynomial in the text (a chain of ``k`` repeats of classes, ``a*a*a*$``, is
``n^k``, in ``re`` and ``regex`` alike).  ``backtracks_exponentially(tree)``
is that sufficient condition: a pattern it passes is safe for ``re``; one it
flags may still be safe (``(?:ab|cd)+$``), and runs on ``regex_engine``'s
matcher, which remembers its loops (linear in the text), on CPython too.
Cost: linear in the pattern.
"""

from __future__ import annotations

__all__ = ["has_choice", "cannot_fail", "backtracks_exponentially"]


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


def cannot_fail(node):
    """Whether ``node`` matches at every position (the empty string at least, unconditionally)."""
    kind = node[0]
    if kind == "seq":
        return all(cannot_fail(n) for n in node[1])
    if kind == "alt":
        return any(cannot_fail(n) for n in node[1])
    if kind == "repeat":
        return node[2] == 0 or cannot_fail(node[1])
    if kind == "atomic":
        return cannot_fail(node[1])
    return False  # a class, a lookahead, an anchor


def backtracks_exponentially(node, nullable, sure=True):
    """Whether ``node`` holds a risky repeat (module docstring); ``nullable(node)``: whether a
    node can match the empty string; ``sure``: whether what follows ``node`` cannot fail."""
    kind = node[0]
    if kind == "alt":
        return any(backtracks_exponentially(n, nullable, sure) for n in node[1])
    if kind == "seq":
        items = node[1]
        for i, item in enumerate(items):
            after = sure and all(cannot_fail(n) for n in items[i + 1 :])
            if backtracks_exponentially(item, nullable, after):
                return True
        return False
    if kind in ("look", "atomic"):
        return backtracks_exponentially(node[1], nullable)
    if kind != "repeat":
        return False
    body, lo, hi, mode = node[1], node[2], node[3], node[4]
    if body[0] != "set" and (hi is None or hi >= 2) and (has_choice(body) or nullable(body)):
        if (mode != "possessive" and not sure) or (lo >= 2 and has_choice(body)):
            return True
    # An iteration is followed by the next one, or what follows the repeat (the end of the atomic
    # group a possessive one is); the next can fail while it is mandatory.
    return backtracks_exponentially(body, nullable, (sure or mode == "possessive") and lo <= 1)
