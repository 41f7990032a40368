"""Parse a split pattern written in the ``regex`` module's syntax into a small tree.

The supported subset is what split patterns use; everything else is refused
with a ``RegexError`` naming the construct and its offset (one line)::

    alternation  a|b          groups  (...) (?:...) (?P<n>...) (?<n>...)  (all non-capturing here)
    classes      [...] [^...] ranges, escapes and properties inside
    properties   \\p{L} \\p{Lu} ... \\P{..} \\p{^..} \\pL   (general categories, ``unicode_classes``)
    shorthands   \\s \\S \\d \\D \\w \\W  .   (``.``: any code point but ``\\n``; with ``s``, any)
    literals     any other character, ``\\x41 \\x{41} \\u0041 \\U00000041 \\n \\t \\.`` etc.
    quantifiers  * + ? {m} {m,} {m,n} {,n}, each greedy, lazy (``?``) or possessive (``+``)
    atomic       (?>...)
    lookahead    (?=...) (?!...)
    flags        (?i) (?s) at the very start; scoped (?i:...) (?-i:...) (?s:...)

    anchors      ^ \\A (start of the text) $ (its end, or before a final ``\\n``) \\Z \\z (its end)

Refused: backreferences, lookbehind, ``\\b \\B \\G``,
conditionals, recursion, ``\\X``, ``\\K``, ``\\N{..}``, octal escapes,
nested sets and set operations, POSIX classes, script and binary properties,
any flag but ``i`` and ``s`` (``u`` is accepted: it is the default), and a
flag group anywhere but at the start.  Nested and ambiguous repeats (``(a+)+``,
``(a|aa)*``) are accepted, as ``regex`` accepts them: ``regex_compile`` runs
them in linear time (``regex_loops``), never on ``re``'s exponential backtracking.

The tree (tuples, so it is cheap and comparable)::

    ("set", items, negated, icase)  one code point; items are ("range", lo, hi)
                                   or ("class", name) for \\p / \\s / \\d / \\w / "any"
    ("seq", [node, ...])
    ("alt", [node, ...])
    ("repeat", node, min, max or None, mode)   mode: "greedy", "lazy", "possessive"
    ("atomic", node)
    ("look", node, negative)
    ("anchor", "^" or "$" or "\\Z")

A class name is ``"gc:Lu"`` (a general category or one-letter group),
``"gc:LC"`` (cased letters, ``L&``), ``"space"``, ``"digit"``, ``"word"`` or
``"any"``; ``negated`` complements the set.  Cost: one pass, linear in the text.
"""

from __future__ import annotations

__all__ = ["RegexError", "parse_regex"]

# The one- and two-letter general category names \\p{..} accepts, with their long forms.
GC_NAMES = {
    "l": "L", "letter": "L", "lu": "Lu", "uppercaseletter": "Lu", "ll": "Ll", "lowercaseletter": "Ll",
    "lt": "Lt", "titlecaseletter": "Lt", "lm": "Lm", "modifierletter": "Lm", "lo": "Lo",
    "otherletter": "Lo", "lc": "LC", "l&": "LC", "casedletter": "LC",
    "m": "M", "mark": "M", "mn": "Mn", "nonspacingmark": "Mn", "mc": "Mc", "spacingmark": "Mc",
    "me": "Me", "enclosingmark": "Me",
    "n": "N", "number": "N", "nd": "Nd", "decimalnumber": "Nd", "nl": "Nl", "letternumber": "Nl",
    "no": "No", "othernumber": "No",
    "p": "P", "punctuation": "P", "pc": "Pc", "connectorpunctuation": "Pc", "pd": "Pd",
    "dashpunctuation": "Pd", "ps": "Ps", "openpunctuation": "Ps", "pe": "Pe", "closepunctuation": "Pe",
    "pi": "Pi", "initialpunctuation": "Pi", "pf": "Pf", "finalpunctuation": "Pf", "po": "Po",
    "otherpunctuation": "Po",
    "s": "S", "symbol": "S", "sm": "Sm", "mathsymbol": "Sm", "sc": "Sc", "currencysymbol": "Sc",
    "sk": "Sk", "modifiersymbol": "Sk", "so": "So", "othersymbol": "So",
    "z": "Z", "separator": "Z", "zs": "Zs", "spaceseparator": "Zs", "zl": "Zl", "lineseparator": "Zl",
    "zp": "Zp", "paragraphseparator": "Zp",
    "c": "C", "other": "C", "cc": "Cc", "control": "Cc", "cf": "Cf", "format": "Cf", "cs": "Cs",
    "surrogate": "Cs", "co": "Co", "privateuse": "Co", "cn": "Cn", "unassigned": "Cn",
}  # fmt: skip

_SHORTHANDS = {"s": "space", "d": "digit", "w": "word"}
_CONTROL_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "f": 0x0C, "v": 0x0B, "a": 0x07}
_REFUSED_ESCAPES = {
    "b": "word boundaries (\\b)",
    "B": "word boundaries (\\B)",
    "G": "anchors (\\G)",
    "X": "grapheme clusters (\\X)",
    "K": "match resets (\\K)",
    "N": "named characters (\\N{...})",
    "m": "word-start anchors (\\m)",
    "M": "word-end anchors (\\M)",
    "g": "group references (\\g)",
    "h": "\\h",
    "R": "\\R",
}
_FLAGS = "is"
_ACCEPTED_FLAGS = "u"


class RegexError(ValueError):
    """A pattern outside the supported subset, or malformed: the message is one line."""


def parse_regex(text):
    """The tree of ``text`` (see the module docstring); ``RegexError`` when refused."""
    return _Parser(text).parse()


class _Parser(object):
    def __init__(self, text):
        self.text = text
        self.pos = 0

    def fail(self, what, pos=None):
        raise RegexError("%s at offset %d of the pattern" % (what, self.pos if pos is None else pos))

    def refuse(self, what, pos=None):
        self.fail("unsupported in split patterns: %s" % what, pos)

    def peek(self, k=0):
        i = self.pos + k
        return self.text[i] if i < len(self.text) else ""

    def parse(self):
        flags = self.leading_flags()
        node = self.alternation(flags)
        if self.pos < len(self.text):
            self.fail("unbalanced ')'")
        return node

    def leading_flags(self):
        """Flags of a ``(?is)`` group at the very start (they apply to the whole pattern)."""
        flags = ""
        while self.text.startswith("(?", self.pos):
            end = self.text.find(")", self.pos)
            body = self.text[self.pos + 2 : end] if end != -1 else ""
            if not body or any(c not in _FLAGS + _ACCEPTED_FLAGS for c in body):
                break
            flags += "".join(c for c in body if c in _FLAGS)
            self.pos = end + 1
        return flags

    def alternation(self, flags):
        branches = [self.sequence(flags)]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence(flags))
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self, flags):
        items = []
        while self.pos < len(self.text) and self.peek() not in "|)":
            start = self.pos
            atom = self.atom(flags)
            items.append(self.quantified(atom, start))
        return items[0] if len(items) == 1 else ("seq", items)

    def quantified(self, atom, start):
        while True:
            bounds = self.quantifier()
            if bounds is None:
                return atom
            if atom[0] in ("look", "anchor"):
                self.refuse("a quantified lookahead or anchor", start)
            lo, hi = bounds
            mode = "greedy"
            if self.peek() == "?":
                mode, self.pos = "lazy", self.pos + 1
            elif self.peek() == "+":
                mode, self.pos = "possessive", self.pos + 1
            atom = ("repeat", atom, lo, hi, mode)

    def quantifier(self):
        c = self.peek()
        if c in ("*", "+", "?") and c:
            self.pos += 1
            return {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        if c != "{":
            return None
        end = self.text.find("}", self.pos)
        body = self.text[self.pos + 1 : end] if end != -1 else ""
        parts = body.split(",")
        if end == -1 or len(parts) > 2 or not all(p.strip().isdigit() or p.strip() == "" for p in parts):
            return None  # not a quantifier: "{" is a literal, as in regex
        if len(parts) == 1:
            if not parts[0].strip():
                return None
            lo = hi = int(parts[0])
        else:
            if not parts[0].strip() and not parts[1].strip():
                return None
            lo = int(parts[0]) if parts[0].strip() else 0
            hi = int(parts[1]) if parts[1].strip() else None
        if hi is not None and hi < lo:
            self.fail("a quantifier {%s} with its maximum below its minimum" % body)
        self.pos = end + 1
        return lo, hi

    def atom(self, flags):
        c = self.peek()
        if c == "(":
            return self.group(flags)
        if c == "[":
            return self.char_class(flags)
        if c == ".":
            self.pos += 1
            if "s" in flags:
                return ("set", (("class", "any"),), False, False)
            return ("set", (("range", 0x0A, 0x0A),), True, False)
        if c in "^$":
            self.pos += 1
            return ("anchor", c)
        if c in "*+?":
            self.fail("nothing to repeat")
        if c == "\\":
            item = self.escape(in_class=False)
            if item[0] == "anchor":
                return ("anchor", {"A": "^", "Z": "\\Z", "z": "\\Z"}.get(item[1], item[1]))
            if item[0] == "class" and item[1].startswith("not:"):
                return ("set", (("class", item[1][4:]),), True, "i" in flags)
            return ("set", (item,), False, "i" in flags)
        self.pos += 1
        return ("set", (("range", ord(c), ord(c)),), False, "i" in flags)

    def group(self, flags):
        start = self.pos
        self.pos += 1
        kind = None
        if self.peek() == "?":
            self.pos += 1
            c = self.peek()
            if c == ":":
                self.pos += 1
            elif c in "=!":
                self.pos += 1
                kind = ("look", c == "!")
            elif c == ">":
                self.pos += 1
                kind = ("atomic",)
            elif c == "<" and self.peek(1) in "=!":
                self.refuse("lookbehind", start)
            elif c == "P" and self.peek(1) == "<" or c == "<":
                end = self.text.find(">", self.pos)
                if end == -1:
                    self.fail("an unterminated group name", start)
                self.pos = end + 1
            elif c == "P" and self.peek(1) in "=>":
                self.refuse("backreferences", start)
            elif c == "#":
                self.refuse("comments", start)
            else:
                flags = self.scoped_flags(flags, start)
        body = self.alternation(flags)
        if self.peek() != ")":
            self.fail("a missing ')'", start)
        self.pos += 1
        if kind is None:
            return body
        if kind[0] == "look":
            return ("look", body, kind[1])
        return ("atomic", body)

    def scoped_flags(self, flags, start):
        """``(?i:``, ``(?-i:``, ``(?is-s:``: the flags inside the group."""
        on, off, side = "", "", "on"
        while self.peek() and self.peek() not in ":)":
            c = self.peek()
            if c == "-" and side == "on":
                side = "off"
            elif c in _FLAGS:
                if side == "on":
                    on += c
                else:
                    off += c
            elif c not in _ACCEPTED_FLAGS:
                self.refuse("the group or flag (?%s" % self.text[start + 2 : self.pos + 1], start)
            self.pos += 1
        if self.peek() != ":":
            self.refuse("a flag group (?...) that is not at the start of the pattern", start)
        self.pos += 1
        return "".join(sorted((set(flags) | set(on)) - set(off)))

    def char_class(self, flags):
        start = self.pos
        self.pos += 1
        negated = False
        if self.peek() == "^":
            negated, self.pos = True, self.pos + 1
        items = []
        first = True
        while True:
            c = self.peek()
            if not c:
                self.fail("an unterminated character class", start)
            if c == "]" and not first:
                self.pos += 1
                break
            first = False
            if c == "[":
                self.refuse("nested sets, set operations and POSIX classes inside [...]")
            for op in ("&&", "--", "||", "~~"):
                if self.text.startswith(op, self.pos):
                    self.refuse("set operations (%s)" % op)
            item = self.class_item()
            if item[0] == "range" and self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                high = self.class_item()
                if high[0] != "range":
                    self.fail("a range with a class as its end")
                if high[1] < item[1]:
                    self.fail("a range whose end comes before its start")
                item = ("range", item[1], high[1])
            items.append(item)
        return ("set", tuple(items), negated, "i" in flags)

    def class_item(self):
        c = self.peek()
        if c == "\\":
            item = self.escape(in_class=True)
            if item[0] == "class" and item[1].startswith("not:"):
                return ("notclass", item[1][4:])
            return item
        self.pos += 1
        return ("range", ord(c), ord(c))

    def escape(self, in_class):
        """The item after a backslash: ("range", cp, cp) or ("class", name / "not:"+name)."""
        start = self.pos
        self.pos += 1
        c = self.peek()
        if not c:
            self.fail("a trailing backslash", start)
        self.pos += 1
        if c in ("p", "P"):
            name, negated = self.property_name(start)
            return ("class", ("not:" if negated != (c == "P") else "") + name)
        if c.lower() in _SHORTHANDS:
            return ("class", ("not:" if c.isupper() else "") + _SHORTHANDS[c.lower()])
        if c in "AZz" and not in_class:
            return ("anchor", c)
        if c in _CONTROL_ESCAPES:
            return ("range", _CONTROL_ESCAPES[c], _CONTROL_ESCAPES[c])
        if c in ("x", "u", "U"):
            cp = self.hex_escape(c, start)
            return ("range", cp, cp)
        if c.isdigit():
            self.refuse("backreferences and octal escapes (\\%s)" % c, start)
        if c in _REFUSED_ESCAPES and not (in_class and c == "b"):
            self.refuse(_REFUSED_ESCAPES[c], start)
        if c.isalpha() or (in_class and c == "b"):
            self.refuse("the escape \\%s" % c, start)
        return ("range", ord(c), ord(c))

    def hex_escape(self, c, start):
        if c == "x" and self.peek() == "{":
            end = self.text.find("}", self.pos)
            digits = self.text[self.pos + 1 : end] if end != -1 else ""
            self.pos = end + 1
        else:
            width = {"x": 2, "u": 4, "U": 8}[c]
            digits = self.text[self.pos : self.pos + width]
            self.pos += width
            if len(digits) != width:
                digits = ""
        try:
            cp = int(digits, 16)
        except ValueError:
            cp = -1
        if not 0 <= cp <= 0x10FFFF or not digits.strip() or digits.strip() != digits:
            self.fail("a bad escape \\%s" % self.text[start + 1 : self.pos], start)
        return cp

    def property_name(self, start):
        """(general category name, negated) of ``\\p{..}`` / ``\\pL``; other properties are refused."""
        if self.peek() == "{":
            end = self.text.find("}", self.pos)
            if end == -1:
                self.fail("an unterminated \\p{", start)
            raw = self.text[self.pos + 1 : end]
            self.pos = end + 1
        else:
            raw = self.peek()
            self.pos += 1
        negated = raw.startswith("^")
        key = raw[1:] if negated else raw
        key = key.replace(" ", "").replace("_", "").replace("-", "").lower()
        for prefix in ("generalcategory=", "gc=", "generalcategory:", "gc:"):
            if key.startswith(prefix):
                key = key[len(prefix) :]
        if key == "any":
            return "any", negated
        if key not in GC_NAMES:
            self.refuse("the property \\p{%s} (only general categories are pinned)" % raw, start)
        return "gc:" + GC_NAMES[key], negated
