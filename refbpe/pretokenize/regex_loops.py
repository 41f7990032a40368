"""Repeats of groups in ``regex_engine``'s generated matcher: loops remembered per position.

``regex_engine`` writes a pattern as functions in continuation-passing style:
``f(A, d, n, T, p)`` matches its node from ``p`` and then calls the
continuation fixed when its code was written, returning the end of the whole
match or -1.  So the result of a function depends on the position alone (for
a given text): it can be remembered.  A repeat of a group ``(B){lo,hi}``
(unbounded; or whose body has a choice, ``regex_risk.has_choice``, or can
match the empty string; or over 16; the others are unrolled) is written as

* its mandatory iterations: ``lo`` copies of the body, each continuing into
  the next, the last into the optional part;
* its optional part: one *loop node* ``L(p)`` that tries an iteration (the
  body, continuing into ``L``) and the repeat's continuation ``k(p)``, in the
  order its mode asks (greedy: iteration first; lazy: ``k`` first); a bounded
  repeat has ``hi - lo`` such nodes, each iteration continuing into the next
  node, the last one's into ``k``.

Every loop node, and every mandatory copy when there are two or more and the
body has a choice, remembers its result per position in a dict of ``T``
(``T[i]``, one per node): it runs at most once per position, so a text costs
O(expanded pattern size x text) however the body's choices combine
(``(a|aa)+$``, ``(a+)+$``, ``(a|a){0,50}$``), which ``re`` and ``regex``
backtrack on exponentially.  An unbounded repeat of a class inside such a body
is a loop node too (``class_loop``), else its run would be scanned again from
every position the group reaches (``(a+)+$``: quadratic).  The dicts live for
one ``scan`` (one text) and survive from one attempt to the next: the result
of a node at a position does not depend on where the attempt started (no
lookbehind, no captures), so a failing tail is explored once per text, not
once per attempt.  ``T[0]`` is the highest position remembered; an attempt
starting past it empties the dicts (no attempt looks before its start), so
they hold only what lies ahead: a few entries on ordinary text.

When what follows the repeat cannot fail (nothing, or only optional parts:
``regex_risk.cannot_fail``), the first iteration that matches is the one kept, so the
greedy part is a plain loop, no recursion and no memory (``sure_loop``): the
usual case of a split pattern, whose repeats end their alternative.

An iteration that matches the empty string ends the loop, as in ``regex``:
its continuation is the repeat's ``k``, not the loop node.  That check needs
the position the iteration started at, which the loop node keeps in ``T``
(``T[s]``, saved and restored around the body); a remembered node inside such
a body depends on it only when called at that very position, so there it
neither reads nor writes its dict (the *guard*).  Possessive repeats are
atomic groups of greedy ones (``regex_engine``).

Recursion: each iteration is a few nested calls, so a loop over a long
stretch would pass Python's recursion limit.  ``T[1]`` counts the loop nodes
being evaluated; past ``T[2]`` (``levels``, from the body's size) a node
raises ``Deep`` instead of recursing, and ``drive`` (which every call from
``scan`` goes through) evaluates that node afresh at the bottom of the stack,
where its result is remembered, then retries the call it came from, which now
finds it: each retry redoes at most ``levels`` unremembered levels.  A scan
started deep in the caller's stack meets ``RecursionError`` instead, and
``drive`` halves ``T[2]``.
"""

from __future__ import annotations

from .regex_risk import has_choice

__all__ = ["LoopWriter", "expanded_size"]

# T[0]: the highest position a dict holds (-1: none); T[1]: loop nodes being evaluated, nested;
# T[2]: how many may nest before one raises ``Deep``; then dicts ("memo") and iteration starts.
_FIXED = ["high", "depth", "levels"]
_ITSELF = object()  # the loop node an iteration of an unbounded repeat continues into
_FRAMES = 400  # Python frames one ``drive`` call may take at first (the default limit is 1000)


class Deep(Exception):
    """A loop node at ``levels`` nested evaluations: ``drive`` evaluates it at the bottom."""

    def __init__(self, node, p):
        Exception.__init__(self)
        self.node, self.p = node, p


def drive(f, A, d, n, T, p, starts):
    """``f(A, d, n, T, p)``, with every ``Deep`` node it meets evaluated first (module docstring).

    ``starts``: the indices of ``T`` holding iteration starts, reset to -1 for each fresh call
    (a call that returns leaves ``T``'s counters as it found them).  Called from deep in the
    caller's stack, a ``RecursionError`` halves the levels allowed and tries again."""
    try:
        return f(A, d, n, T, p)
    except Deep as deep:
        pending = [(f, p), (deep.node, deep.p)]
    except RecursionError:
        pending = [(f, p)]
        T[2] = _shallower(T[2])
    r = -1
    while pending:
        g, q = pending[-1]
        T[1] = 0
        for s in starts:
            T[s] = -1
        try:
            r = g(A, d, n, T, q)
        except Deep as deep:
            pending.append((deep.node, deep.p))
            continue
        except RecursionError:
            T[2] = _shallower(T[2])
            continue
        pending.pop()
    return r


def _shallower(levels):
    if levels == 1:
        raise RecursionError("a split pattern's loop nested in too deep a call stack")
    return levels // 2


class LoopWriter(object):
    """The repeats of groups, for ``regex_engine``'s generator (a mixin: it supplies
    ``function``, ``call``, ``build``, ``args`` and ``nullable``)."""

    def __init__(self):
        self.slots = list(_FIXED)  # what each index of T holds: "memo", "start", or one of _FIXED
        self.guard = None  # the T index of the innermost enclosing iteration start, if any
        self.in_body = 0  # repeats of groups around the code being written
        self.sure = {None}  # functions that never return -1 (the identity continuation, ...)
        self.levels = 0  # set by ``plan``

    def slot(self, kind):
        self.slots.append(kind)
        return len(self.slots) - 1

    def memoised(self, node):
        """Whether the repeat ``node`` (of a group) is written as loop nodes, not unrolled."""
        body, hi = node[1], node[3]
        if hi is None or hi > self.max_unroll:
            return True
        return hi >= 2 and (has_choice(body) or self.nullable(body))

    def plan(self, tree, stateful):
        """Passes ``T`` to every function when ``stateful`` and ``tree`` has loop nodes; ``levels``
        from its largest body.  Whether it has them."""
        widest = [0]

        def walk(node):
            kind = node[0]
            if kind in ("seq", "alt"):
                for item in node[1]:
                    walk(item)
            elif kind in ("look", "atomic"):
                walk(node[1])
            elif kind == "repeat" and node[1][0] != "set":
                if self.memoised(node):
                    widest[0] = max(widest[0], expanded_size(node[1]))
                walk(node[1])

        walk(tree)
        self.levels = max(1, _FRAMES // (widest[0] + 2))
        if widest[0] and stateful:
            self.args = "A, d, n, T"
        return widest[0] > 0

    def state_used(self):
        """Whether the code written needs ``T``: a loop node remembers, or an iteration start."""
        return len(self.slots) > len(_FIXED)

    def group_repeat(self, node, k):
        """The function matching the repeat ``node`` of a group, then ``k``."""
        _, body, lo, hi, mode = node
        self.in_body += 1
        if k in self.sure:
            entry = k if mode == "lazy" else self.sure_loop(body, k, None if hi is None else hi - lo)
        elif hi is None:
            entry = self.loop(body, mode, k, _ITSELF)
        else:
            entry = k
            for _ in range(hi - lo):
                entry = self.loop(body, mode, k, entry)
        remember = lo >= 2 and has_choice(body)
        for _ in range(lo):
            entry = self.build(body, entry)
            if remember:
                entry = self.remembered(["r = " + self.call(entry, "p")])
        self.in_body -= 1
        return entry

    def class_loop(self, s, lo, mode, k):
        """``X{lo,}`` of the class whose member table is ``s``, then ``k``, as a loop node.

        Inside the body of a repeated group the loop of ``_repeat_set`` (run to the longest
        extent, back off) would run again from every position the group reaches,
        quadratic in a run of ``X`` (``(a+)+$``); a loop node per position runs it once."""
        self.count += 1
        name = "m%d" % self.count
        step = "%s(%s, p + W[d[p]])" % (name, self.args)
        if mode == "lazy":
            core = ["r = " + self.call(k, "p"), "if r < 0 and %s[A[p]]:" % s, "    r = " + step]
        else:
            core = ["r = -1", "if %s[A[p]]:" % s, "    r = " + step]
            core += ["if r < 0:", "    r = " + self.call(k, "p")]
        loop = self.remembered(core, name)
        if lo == 0:
            return loop
        count = ["count = 0", "while count < %d:" % lo, "    if not %s[A[p]]:" % s, "        return -1"]
        count += ["    p += W[d[p]]", "    count += 1"]
        return self.function(count + ["return %s(%s, p)" % (loop, self.args)])

    def sure_loop(self, body, k, most):
        """Up to ``most`` greedy iterations (no bound: None), then ``k``, which cannot fail: the
        first iteration that matches is the one kept, so a loop without recursion or memory."""
        once = self.call(self.search(body), "p")
        lines = ["count = 0", "while count < %d:" % most] if most is not None else ["while True:"]
        lines += ["    q = " + once, "    if q < 0 or q == p:", "        break", "    p = q"]
        lines += ["    count += 1"] if most is not None else []
        return self.function(lines + ["return " + self.call(k, "p")])

    def loop(self, body, mode, k, then):
        """A loop node: an iteration continuing into ``then`` (``_ITSELF``: this node), or ``k``."""
        self.count += 1
        name = "m%d" % self.count
        target = name if then is _ITSELF else then
        outer = self.guard
        check = self.nullable(body) and target != k
        if check:
            s = self.slot("start")
            target = self.function(  # an iteration that matched nothing ends the loop
                ["if p == T[%d]:" % s, "    return " + self.call(k, "p"), "return " + self.call(target, "p")]
            )
            self.guard = s
        once = self.build(body, target)
        self.guard = outer
        iteration = ["r = " + self.call(once, "p")]
        if check:
            iteration = ["v = T[%d]" % s, "T[%d] = p" % s] + iteration + ["T[%d] = v" % s]
        if mode == "lazy":
            core = ["r = " + self.call(k, "p"), "if r < 0:"] + ["    " + line for line in iteration]
        else:
            core = iteration + ["if r < 0:", "    r = " + self.call(k, "p")]
        return self.remembered(core, name)

    def remembered(self, core, name=None):
        """A function running ``core`` (which sets ``r``) at most once per position (module docstring)."""
        m = self.slot("memo")
        if name is None:
            self.count += 1
            name = "m%d" % self.count
        look = ["r = T[%d].get(p, -2)" % m, "if r != -2:", "    return r"]
        look += ["if T[1] >= T[2]:", "    raise Deep(%s, p)" % name]
        store = ["T[%d][p] = r" % m, "if p > T[0]:", "    T[0] = p"]
        if self.guard is not None:
            look = ["u = p != T[%d]" % self.guard, "if u:"] + ["    " + line for line in look]
            store = ["if u:"] + ["    " + line for line in store]
        body = look + ["T[1] += 1"] + core + ["T[1] -= 1"] + store + ["return r"]
        return self.function(body, name)

    def top_call(self, f, pos):
        """The call of ``f`` at ``pos`` from ``scan`` (through ``drive`` when there are loop nodes)."""
        if self.args == "A, d, n":
            return "%s(%s, %s)" % (f, self.args, pos)
        return "D(%s, %s, %s, STARTS)" % (f, self.args, pos)

    def scan_state(self):
        """Lines of ``scan`` making ``T``, and those emptying its dicts at an attempt past ``T[0]``."""
        if self.args == "A, d, n":
            return [], []
        self.constants["Deep"] = Deep
        self.constants["D"] = drive
        self.constants["STARTS"] = tuple(i for i, kind in enumerate(self.slots) if kind == "start")
        initial = {"memo": "{}", "depth": "0", "levels": str(self.levels)}
        cells = [initial.get(kind, "-1") for kind in self.slots]
        make = ["    T = [%s]" % ", ".join(cells)]
        empty = ["        if 0 <= T[0] < p:"]
        empty += ["            T[%d].clear()" % i for i, kind in enumerate(self.slots) if kind == "memo"]
        empty += ["            T[0] = -1"]
        return make, empty


def expanded_size(node):
    """The number of nodes ``node`` is written as, repeats of groups expanded into their copies."""
    kind = node[0]
    if kind in ("seq", "alt"):
        return 1 + sum(expanded_size(n) for n in node[1])
    if kind in ("look", "atomic"):
        return 1 + expanded_size(node[1])
    if kind == "repeat" and node[1][0] != "set":
        lo, hi = node[2], node[3]
        copies = lo + 1 if hi is None else max(hi, 1)
        return 1 + copies * expanded_size(node[1])
    return 1
