"""A backtracking matcher for split patterns, written as Python code, for PyPy (and CPython).

PyPy's ``re`` runs split patterns at about 2 MB/s (``perf/custom_patterns.py``),
ten times slower than the hand-written scanners, whose loops its JIT compiles;
this module writes a custom pattern as that kind of loop and ``exec``s it.  It
also runs, on both interpreters, the patterns ``re`` could backtrack on
exponentially (``regex_risk``), since it runs repeats of groups in linear time.
The tree of ``regex_syntax`` (classes resolved to code point sets by
``regex_compile``) becomes:

* An atom per byte: the code points are partitioned into atoms, the classes of
  the pattern being unions of atoms, so the text ``d`` is mapped to ``A``, one
  atom id per byte (ASCII with ``bytes.translate``, other characters one by
  one), continuation bytes and a sentinel at the end getting ``CONT``, in no
  class; a class test is then ``S[A[p]]``.
* ``scan(A, d, n)``: one loop over the pieces with the whole pattern inlined
  in it as nested ``if``s (``inline``): a sequence nests, an alternation tries
  its branches in order (each followed by the rest of the sequence), a
  quantified class runs forward to its longest extent and then backs off one
  code point at a time (greedy), stops there (possessive, or greedy with
  nothing after it), or grows from its minimum (lazy); a failure falls through
  to the next choice.  Bounded quantifiers of groups whose body has no choice
  are unrolled (up to 16).
* What cannot be inlined (a match ending inside two nested backtracking loops,
  lookahead and atomic bodies other than a class, the continuation of a loop)
  is one function per node in continuation-passing style (``build``:
  ``f(A, d, n, p)`` returns the end of a match or -1 and calls a continuation
  fixed when it is written), which ``scan`` calls.
* Any other repeat of a group (unbounded, or whose body has a choice or can
  match the empty string, or over 16) is a loop of such functions that
  remembers its result per position (``regex_loops``, whose ``LoopWriter``
  this generator is), or a plain loop when what follows cannot fail.

Lookahead and atomic groups run their body to its first end and never re-enter
it, anchors test the position, an iteration of a repeat that matches the empty
string ends it: the semantics of ``regex``.  ``build_matcher`` returns None for
what it does not do (more than 254 atoms, or over 5000 nodes once the repeats
of groups are copied out); ``regex_compile`` then keeps ``re``, or refuses the
pattern if ``re`` could backtrack on it exponentially.  Cost: linear in the
text times the backtracking the pattern asks for, as any backtracking engine,
except that repeats of groups never multiply it: each loop node runs at most
once per position of a text, so a text costs O(expanded pattern x text) at
most plus what repeats of classes back off over (``a*a*$`` is quadratic, as
in ``regex``); writing the code takes a few ms.
"""

from __future__ import annotations

from .gpt2 import decode_at
from .regex_loops import LoopWriter, expanded_size
from .regex_risk import cannot_fail
from .utf8_ranges import MAX_CODE_POINT

__all__ = ["build_matcher"]

CONT = 255
_MAX_UNROLL = 16  # a repeat of a group without choices up to this count is unrolled
_MAX_LINES = 20000  # a larger inlined matcher falls back to one function per node
_MAX_NODES = 5000  # a larger expanded pattern (repeats of groups copied out) is not written
# The byte width of the UTF-8 sequence a lead byte starts (1 for ASCII and stray bytes).
_WIDTH = bytes(1 if b < 0xC0 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4 for b in range(256))


def atom_table(sets):
    """(bytes of the atom of every code point, [member table of each set]) for range sets ``sets``."""
    bounds = {0, MAX_CODE_POINT + 1}
    for ranges in sets:
        for lo, hi in ranges:
            bounds.add(lo)
            bounds.add(hi + 1)
    starts = sorted(bounds)
    signature_atom = {}
    table = bytearray(MAX_CODE_POINT + 1)
    members = [bytearray(256) for _ in sets]
    cursors = [0] * len(sets)
    for start, end in zip(starts, starts[1:]):
        sig = []
        for k, ranges in enumerate(sets):
            c = cursors[k]
            while c < len(ranges) and ranges[c][1] < start:
                c += 1
            cursors[k] = c
            sig.append(c < len(ranges) and ranges[c][0] <= start)
        sig = tuple(sig)
        atom = signature_atom.setdefault(sig, len(signature_atom))
        if atom >= CONT:
            return None
        if atom:
            table[start:end] = bytes([atom]) * (end - start)
        for k, inside in enumerate(sig):
            if inside:
                members[k][atom] = 1
    return bytes(table), [bytes(m) for m in members]


class _TooNested(Exception):
    """A match would end inside two nested loops: ``scan`` cannot inline the pattern."""


class _Generator(LoopWriter):
    """Writes one Python function per node; ``build`` returns the function's name."""

    def __init__(self, set_index, members, nullable):
        LoopWriter.__init__(self)
        self.nullable = nullable
        self.max_unroll = _MAX_UNROLL
        self.args = "A, d, n"  # with ``T`` when the pattern has loop nodes (``regex_loops``)
        self.set_index = set_index  # set node -> index in members
        self.members = members
        self.constants = {"W": _WIDTH, "CONT": CONT}
        self.lines = []
        self.count = 0
        self.assign = False  # successes set ``e`` (inlined into scan) instead of returning
        self.loops = 0  # backtracking loops around the code being written

    def table(self, node):
        name = "S%d" % self.set_index[node]
        self.constants[name] = self.members[self.set_index[node]]
        return name

    def function(self, body, name=None):
        """Adds ``def mN(A, d, n, p):`` with ``body`` (lines, indented 4) and returns its name."""
        if name is None:
            self.count += 1
            name = "m%d" % self.count
        self.lines.append("def %s(%s, p):" % (name, self.args))
        self.lines += ["    " + line for line in body]
        self.lines.append("")
        return name

    def call(self, k, pos):
        """The expression continuing with ``k`` at ``pos``: the identity is inlined."""
        return pos if k is None else "%s(%s, %s)" % (k, self.args, pos)

    def search(self, node):
        """The function of ``node`` matched on its own, up to its first end (lookahead and
        atomic bodies): no enclosing iteration's start matters to it."""
        outer, self.guard = self.guard, None
        f = self.build(node, None)
        self.guard = outer
        return f or self.function(["return p"])  # an empty body: the identity

    def build(self, node, k):
        f = getattr(self, "_" + node[0])(node, k)
        if f != k and k in self.sure and cannot_fail(node):
            self.sure.add(f)
        return f

    def _set(self, node, k):
        s = self.table(node)
        return self.function(["if %s[A[p]]:" % s, "    return " + self.call(k, "p + W[d[p]]"), "return -1"])

    def _seq(self, node, k):
        for item in reversed(node[1]):
            k = self.build(item, k)
        return k

    def _alt(self, node, k):
        body = ["a = A[p]  # A has a CONT sentinel at n"]
        for branch in node[1]:
            f = self.build(branch, k) or self.function(["return p"])
            first = self.first(branch)
            if first is None:
                body += ["r = %s(%s, p)" % (f, self.args), "if r >= 0:", "    return r"]
            else:
                self.count += 1
                name = "F%d" % self.count
                self.constants[name] = first
                body += [
                    "if %s[a]:" % name,
                    "    r = %s(%s, p)" % (f, self.args),
                    "    if r >= 0:",
                    "        return r",
                ]
        return self.function(body + ["return -1"])

    def _look(self, node, k):
        test = "<" if node[2] else ">="
        f = self.call(self.search(node[1]), "p")
        return self.function(["if %s %s 0:" % (f, test), "    return " + self.call(k, "p"), "return -1"])

    def _atomic(self, node, k):
        f = self.call(self.search(node[1]), "p")
        return self.function(["e = " + f, "if e < 0:", "    return -1", "return " + self.call(k, "e")])

    def _anchor(self, node, k):
        test = {"^": "p == 0", "$": "p == n or (p == n - 1 and d[p] == 10)"}.get(node[1], "p == n")
        return self.function(["if %s:" % test, "    return " + self.call(k, "p"), "return -1"])

    def _repeat(self, node, k):
        _, body, lo, hi, mode = node
        if body[0] == "set":
            if self.in_body and hi is None and mode != "possessive" and k is not None:
                return self.class_loop(self.table(body), lo, mode, k)
            return self._repeat_set(self.table(body), lo, hi, mode, k)
        if mode == "possessive":
            return self._atomic(("atomic", ("repeat", body, lo, hi, "greedy")), k)
        if self.memoised(node):
            return self.group_repeat(node, k)
        for _ in range(hi - lo):  # unrolled: lo copies, then hi - lo nested optional ones
            once = self.build(body, k)
            first, then = (k, once) if mode == "lazy" else (once, k)
            k = self.function(
                [
                    "r = " + self.call(first, "p"),
                    "if r >= 0:",
                    "    return r",
                    "return " + self.call(then, "p"),
                ]
            )
        for _ in range(lo):
            k = self.build(body, k)
        return k

    def _repeat_set(self, s, lo, hi, mode, k):
        if k is None and mode == "greedy":
            mode = "possessive"  # nothing follows: the longest run is the first success
        limit = "" if hi is None else "count != %d and " % hi
        run = ["q = p", "count = 0", "while %s%s[A[q]]:" % (limit, s), "    q += W[d[q]]", "    count += 1"]
        if hi is None and lo == 0:
            run = ["q = p", "while %s[A[q]]:" % s, "    q += W[d[q]]"]
        if mode == "possessive":
            check = [] if hi is None and lo == 0 else ["if count < %d:" % lo, "    return -1"]
            return self.function(run + check + ["return " + self.call(k, "q")])
        if mode == "greedy":
            if hi is None and lo == 0:
                back = [
                    "while True:",
                    "    r = %s" % self.call(k, "q"),
                    "    if r >= 0 or q == p:",
                    "        return r",
                ]
            else:
                back = [
                    "while count >= %d:" % lo,
                    "    r = %s" % self.call(k, "q"),
                    "    if r >= 0 or q == p:",
                ]
                back += ["        return r"]
            back += ["    q -= 1", "    while A[q] == CONT:", "        q -= 1"]
            if not (hi is None and lo == 0):
                back += ["    count -= 1", "return -1"]
            return self.function(run + back)
        body = ["count = 0", "while count < %d:" % lo, "    if not %s[A[p]]:" % s, "        return -1"]
        body += ["    p += W[d[p]]", "    count += 1", "while True:", "    r = " + self.call(k, "p")]
        body += ["    if r >= 0:", "        return r"]
        stop = "not %s[A[p]]" % s if hi is None else "count == %d or not %s[A[p]]" % (hi, s)
        body += ["    if %s:" % stop, "        return -1", "    p += W[d[p]]", "    count += 1"]
        return self.function(body)

    def first(self, node):
        """A member table of the atoms a match of ``node`` can start with, or None:
        any (it may match the empty string, or starts with an assertion)."""
        kind = node[0]
        if kind == "set":
            return self.members[self.set_index[node]]
        if kind in ("look", "anchor"):
            return None
        if kind == "atomic":
            return self.first(node[1])
        if kind == "repeat":
            return self.first(node[1]) if node[2] > 0 else None
        if kind == "alt":
            tables = [self.first(b) for b in node[1]]
            if any(t is None for t in tables):
                return None
            return bytes(max(column) for column in zip(*tables))
        tables = []  # seq: up to the first item that cannot match the empty string
        for item in node[1]:
            if item[0] in ("look", "anchor"):
                return None
            optional = item[0] == "repeat" and item[2] == 0
            t = self.first(item[1] if optional else item)
            if t is None:
                return None
            tables.append(t)
            if not optional:
                return bytes(max(column) for column in zip(*tables))
        return None

    def inline(self, items, pos, depth, out):
        """Lines (indented ``depth``) that match ``items`` from the variable ``pos`` and
        ``return`` the end on success, falling through on failure: the sequence
        nests, so no call is made for a class, a quantified class or an alternation."""
        pad = "    " * depth
        if not items:
            self.succeed(pos, pad, out)
            return
        node, rest = items[0], items[1:]
        kind = node[0]
        if kind == "seq":
            self.inline(list(node[1]) + rest, pos, depth, out)
        elif kind == "alt":
            # Each branch followed by the rest; a failure falls into the next.
            self.choices([[branch] + rest for branch in node[1]], pos, depth, out)
        elif kind == "set":
            q = self.var()
            out += [
                pad + "if %s[A[%s]]:" % (self.table(node), pos),
                pad + "    %s = %s + W[d[%s]]" % (q, pos, pos),
            ]
            self.inline(rest, q, depth + 1, out)
        elif kind == "anchor":
            test = {"^": "%s == 0", "$": "%s == n or (%s == n - 1 and d[%s] == 10)"}.get(node[1], "%s == n")
            out.append(pad + "if %s:" % test.replace("%s", pos))
            self.inline(rest, pos, depth + 1, out)
        elif kind == "look" and node[1][0] == "set":
            out.append(pad + "if %s%s[A[%s]]:" % ("not " if node[2] else "", self.table(node[1]), pos))
            self.inline(rest, pos, depth + 1, out)
        elif kind == "look":
            f = self.top_call(self.search(node[1]), pos)
            out.append(pad + "if %s %s 0:" % (f, "<" if node[2] else ">="))
            self.inline(rest, pos, depth + 1, out)
        elif kind == "atomic":
            e = self.var()
            out += [pad + "%s = %s" % (e, self.top_call(self.search(node[1]), pos)), pad + "if %s >= 0:" % e]
            self.inline(rest, e, depth + 1, out)
        elif node[1][0] != "set":
            _, body, lo, hi, mode = node
            if mode == "possessive":
                self.inline([("atomic", ("repeat", body, lo, hi, "greedy"))] + rest, pos, depth, out)
            elif self.memoised(node) and lo <= 1 and cannot_fail(("seq", rest)):
                self.inline_sure_repeat(node, rest, pos, depth, out)
            elif self.memoised(node):  # the rest written as functions: the loop's continuation
                e = self.var()
                f = self.group_repeat(node, self.build(("seq", rest), None) if rest else None)
                f = f or self.function(["return p"])
                out += [pad + "%s = %s" % (e, self.top_call(f, pos)), pad + "if %s >= 0:" % e]
                self.succeed(e, pad + "    ", out)
            elif lo > 0:
                self.inline([body, ("repeat", body, lo - 1, hi - 1, mode)] + rest, pos, depth, out)
            elif hi > 0:
                more = [body, ("repeat", body, 0, hi - 1, mode)] + rest
                self.choices([rest, more] if mode == "lazy" else [more, rest], pos, depth, out)
            else:
                self.inline(rest, pos, depth, out)
        else:
            self.inline_repeat_set(node, rest, pos, depth, out)

    def inline_sure_repeat(self, node, rest, pos, depth, out):
        """A repeat of a group followed by what cannot fail: its mandatory iteration (at most one:
        the rest is written after each way it ends) inlined, then its greedy ones as a loop
        keeping the first that matches (``sure_loop``)."""
        _, body, lo, hi, mode = node
        if lo > 0:
            again = ("repeat", body, lo - 1, None if hi is None else hi - 1, mode)
            self.inline([body, again] + rest, pos, depth, out)
            return
        if mode == "lazy" or hi == 0:
            self.inline(rest, pos, depth, out)
            return
        pad, q, r, count = "    " * depth, self.var(), self.var(), self.var()
        self.in_body += 1
        once = self.top_call(self.search(body), q)
        self.in_body -= 1
        out += [pad + "%s = %s" % (q, pos)]
        if hi is None:
            out += [pad + "while True:"]
        else:
            out += [pad + "%s = 0" % count, pad + "while %s < %d:" % (count, hi)]
            out += [pad + "    %s += 1" % count]
        out += [pad + "    %s = %s" % (r, once), pad + "    if %s < 0 or %s == %s:" % (r, r, q)]
        out += [pad + "        break", pad + "    %s = %s" % (q, r)]
        self.inline(rest, q, depth, out)

    def succeed(self, pos, pad, out):
        """A match ends at ``pos``: return it, or (inlined into ``scan``) set ``e``."""
        if not self.assign:
            out.append(pad + "return " + pos)
            return
        if self.loops > 1:
            raise _TooNested()
        out.append(pad + "e = " + pos)
        if self.loops:
            out.append(pad + "break")

    def choices(self, options, pos, depth, out):
        """Each option in turn until one matches."""
        for k, items in enumerate(options):
            if self.assign and k:
                out.append("    " * depth + "if e < 0:")
                self.inline(items, pos, depth + 1, out)
            else:
                self.inline(items, pos, depth, out)

    def in_loop(self, items, pos, depth, out):
        self.loops += 1
        self.inline(items, pos, depth, out)
        self.loops -= 1

    def inline_repeat_set(self, node, rest, pos, depth, out):
        _, body, lo, hi, mode = node
        s = self.table(body)
        pad = "    " * depth
        q, count = self.var(), self.var()
        if not rest and mode == "greedy":
            mode = "possessive"  # nothing follows: the longest run is the first success
        if mode == "lazy":
            out += [pad + "%s = %s" % (q, pos), pad + "%s = 0" % count, pad + "while True:"]
            out += [pad + "    if %s >= %d:" % (count, lo)]
            self.in_loop(rest, q, depth + 2, out)
            stop = "not %s[A[%s]]" % (s, q) if hi is None else "%s == %d or not %s[A[%s]]" % (count, hi, s, q)
            out += [pad + "    if %s:" % stop, pad + "        break", pad + "    %s += W[d[%s]]" % (q, q)]
            out += [pad + "    %s += 1" % count]
            return
        counted = not (hi is None and lo <= 1)
        out.append(pad + "%s = %s" % (q, pos))
        if hi == 1:  # at most one: a test, not a loop
            out += [pad + "if %s[A[%s]]:" % (s, q), pad + "    %s += W[d[%s]]" % (q, q)]
            counted = False
        elif counted:
            limit = "" if hi is None else "%s != %d and " % (count, hi)
            out += [pad + "%s = 0" % count, pad + "while %s%s[A[%s]]:" % (limit, s, q)]
            out += [pad + "    %s += W[d[%s]]" % (q, q), pad + "    %s += 1" % count]
        else:
            out += [pad + "while %s[A[%s]]:" % (s, q), pad + "    %s += W[d[%s]]" % (q, q)]
        if counted:
            enough = "%s >= %d" % (count, lo)
        else:
            enough = "%s != %s" % (q, pos) if lo == 1 else "True"
        if mode == "possessive":
            if enough == "True":
                self.inline(rest, q, depth, out)
            else:
                out.append(pad + "if %s:" % enough)
                self.inline(rest, q, depth + 1, out)
            return
        out.append(pad + "while %s:" % enough)
        self.in_loop(rest, q, depth + 1, out)
        out += [pad + "    if %s == %s:" % (q, pos), pad + "        break", pad + "    %s -= 1" % q]
        out += [pad + "    while A[%s] == CONT:" % q, pad + "        %s -= 1" % q]
        if counted:
            out.append(pad + "    %s -= 1" % count)

    def var(self):
        self.count += 1
        return "v%d" % self.count

    def inline_scan(self, node):
        """``scan`` with ``node`` inlined into its loop (no call per piece), or None when a
        match could end inside two nested loops or Python refuses the code (nesting limits)."""
        body = []
        self.assign, self.loops = True, 0
        try:
            self.inline([node], "p", 2, body)
        except _TooNested:
            return None
        finally:
            self.assign = False
        return self._exec(self.scan_lines(["        e = -1"] + body), len(body))

    def scan_lines(self, attempt):
        """``scan``: ``attempt`` (lines setting ``e``, the end of the piece at ``p``) in a loop."""
        make, empty = self.scan_state()
        head = ["def scan(A, d, n):"] + make + ["    ends = []", "    append = ends.append", "    p = 0"]
        tail = ["        if e <= p:", "            return ends, p", "        append(e)", "        p = e"]
        return head + ["    while p < n:"] + empty + attempt + tail + ["    return ends, -1"]

    def inline_function(self, node):
        """``top(A, d, n, p)``: ``node`` inlined; None when Python refuses the code (nesting limits)."""
        body = []
        self.inline([node], "p", 1, body)
        if self._exec(["def top(%s, p):" % self.args] + body + ["    return -1"], len(body)) is None:
            return None
        return "top"

    def _exec(self, lines, size):
        source = "\n".join(lines) + "\n"
        try:
            compile(source, "<split pattern>", "exec")
        except (SyntaxError, RecursionError, MemoryError):
            return None
        if size > _MAX_LINES:
            return None
        self.lines.append(source)
        return True

    def write_scan(self, tree):
        """``scan`` for ``tree``: inlined when it can be, else calling one function per node."""
        if self.inline_scan(tree):
            return self.scanner(None)
        return self.scanner(self.inline_function(tree) or self.build(tree, None))

    def scanner(self, top):
        """The source's entry point: ``scan(A, d, n) -> (ends, -1 or the offset no piece matches)``."""
        if top is not None:
            self.lines += self.scan_lines(["        e = " + self.top_call(top, "p")])
        return self._namespace()["scan"]

    def _namespace(self):
        namespace = dict(self.constants)
        exec(compile("\n".join(self.lines) + "\n", "<split pattern>", "exec"), namespace)
        return namespace


def _set_nodes(node, out):
    if node[0] == "set":
        out.append(node)
    elif node[0] in ("seq", "alt"):
        for n in node[1]:
            _set_nodes(n, out)
    elif node[0] in ("look", "atomic", "repeat"):
        _set_nodes(node[1], out)
    return out


def build_matcher(tree, code_points, nullable):
    """``(scan(A, d, n), atoms(d))`` for ``tree``, or None when unsupported.

    ``code_points(set_node)`` gives a set node's range set; ``nullable(node)``
    whether a node can match the empty string."""
    if expanded_size(tree) > _MAX_NODES:
        return None
    nodes = _set_nodes(tree, [])
    index, sets = {}, []
    for node in nodes:
        if node not in index:
            index[node] = len(sets)
            sets.append(code_points(node))
    built = atom_table(sets)
    if built is None:
        return None
    table, members = built
    generator = _Generator(index, members, nullable)
    if generator.plan(tree, True):
        scan = generator.write_scan(tree)
        if generator.state_used():
            return scan, _atoms_function(table)
        generator = _Generator(index, members, nullable)  # its loops need no state: written without
        generator.plan(tree, False)
    return generator.write_scan(tree), _atoms_function(table)


def _atoms_function(table):
    ascii_map = bytes(table[b] if b < 0x80 else CONT for b in range(256))

    def atoms(d):
        """One atom id per byte of UTF-8 ``d`` (``CONT`` on continuation bytes)."""
        A = d.translate(ascii_map) + b"\xff"  # CONT at n: a sentinel in no class
        if d.isascii():
            return A
        A = bytearray(A)
        i, n = 0, len(d)
        while i < n:
            b = d[i]
            if b < 0x80:
                i += 1
                continue
            if b < 0xC0:  # a stray continuation byte: in no class
                i += 1
                continue
            cp, w = decode_at(d, i, b)
            A[i] = table[cp]
            i += w
        return A

    return atoms
