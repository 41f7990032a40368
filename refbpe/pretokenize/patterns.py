"""The split patterns refbpe speaks: four by name, each a hand-written scanner, and any regex.

    gpt2         GPT-2's pattern (``pretokenize``): the CS336 default
    cl100k_base  GPT-4's, as tiktoken writes it today (``pretokenize_cl100k``)
    llama3       Llama 3's, cl100k's original form before tiktoken 0.8 (and
                 rustbpe's/nanochat's ``GPT4_PATTERN``); it differs from
                 ``cl100k_base`` only on a whitespace run holding a newline at
                 the very end of the text (``"x\\n  "``)
    o200k_base   GPT-4o's (``pretokenize_o200k``)

``Pattern.from_regex(text)`` makes a pattern of any regex in the ``regex``
module's syntax (the supported subset: ``regex_syntax``), compiled with the
pinned Unicode classes for the standard ``re`` module over bytes
(``regex_compile``), so its pieces are the same on every interpreter.  The
text of a known pattern gives that pattern, with its scanner.  A custom
pattern's ``name`` is ``"regex:"`` followed by its text: a string, so it
travels wherever a name does (worker processes, reports, manifests) and
``get_pattern`` turns it back into the pattern.

A ``Pattern`` bundles the regex text (``regex`` module syntax, for exports and
for the tests that hold each scanner to it), the scanner's functions, all
with ``pretokenize``'s interface: ``piece_ends(data)``, ``pretokenize(data,
out=None)``, ``count_pretokens(data, counts=None, small=None)`` over UTF-8
bytes, and ``cut_points``, where its texts may be cut (``cuts``).  (Importing
this module builds the scanners' class tables, 1.1 MB each: about 50 ms on
CPython.)
"""

from . import cl100k as pretokenize_cl100k
from . import gpt2 as pretokenize
from . import o200k as pretokenize_o200k
from .cuts import NEWLINE_CUT, NEWLINE_CUT_NOT_BEFORE_SLASH, NO_CUTS, WHITESPACE_CUT
from .regex_compile import compile_split_regex

__all__ = ["Pattern", "get_pattern", "pattern_names", "DEFAULT_PATTERN", "REGEX_PREFIX", "ALIASES"]

DEFAULT_PATTERN = "gpt2"
REGEX_PREFIX = "regex:"


class Pattern(object):
    """A split pattern: ``name``, ``regex`` (its text), its scanner and its ``cut_points``.

    ``context_bounded``: whether a piece's extent depends on at most the next
    two pieces (true of the hand-written patterns; ``Tokenizer.encode_iterable``
    relies on it); a custom pattern makes no such promise."""

    def __init__(self, name, regex, piece_ends, cut_points=NO_CUTS, context_bounded=True, label=None):
        self.name = name
        self.regex = regex
        self.piece_ends = piece_ends
        self.cut_points = cut_points
        self.context_bounded = context_bounded
        self.label = label or name

    @classmethod
    def from_regex(cls, regex, name=None, classes=None):
        """The pattern of ``regex`` (``regex`` module syntax); ``regex_syntax.RegexError`` when refused.

        A known pattern's exact text, or one of its ``ALIASES``, gives that
        pattern (its hand-written scanner).  ``name`` labels it in messages; ``classes`` provides the
        Unicode class sets (default: the pinned tables, ``unicode_classes``).

            >>> digits_in_pairs = Pattern.from_regex(r"\\p{L}+|\\p{N}{1,2}|\\s+|[^\\s\\p{L}\\p{N}]+")
            >>> digits_in_pairs.pretokenize_str("abc 12345!")
            ['abc', ' ', '12', '34', '5', '!']
        """
        if classes is None and regex in _BY_REGEX:
            return _BY_REGEX[regex]
        compiled = compile_split_regex(regex, classes)
        label = name or "custom"
        return cls(REGEX_PREFIX + regex, regex, compiled.piece_ends, compiled.cut_points, False, label)

    def pretokenize(self, data, out=None):
        """The pre-tokens of UTF-8 ``data`` as ``bytes``, appended to ``out``."""
        if out is None:
            out = []
        start = 0
        for end in self.piece_ends(data):
            out.append(data[start:end])
            start = end
        return out

    def pretokenize_str(self, text):
        """Pre-tokens of ``text`` as ``str`` (for tests and debugging)."""
        data = text.encode("utf-8", "surrogatepass")
        return [p.decode("utf-8", "surrogatepass") for p in self.pretokenize(data)]

    def count_pretokens(self, data, counts=None, small=None):
        """``pretokenize.count_pretokens`` with this pattern's scanner."""
        return pretokenize.count_pieces(data, self.piece_ends(data), counts, small)

    def __reduce__(self):
        return (get_pattern, (self.name,))

    def __repr__(self):
        return "Pattern(%r)" % self.name


_O200K_CUT = NEWLINE_CUT_NOT_BEFORE_SLASH
_LLAMA3_PIECE_ENDS = pretokenize_cl100k.llama3_piece_ends
_PATTERNS = {
    p.name: p
    for p in (
        Pattern("gpt2", pretokenize.GPT2_PATTERN, pretokenize.piece_ends, WHITESPACE_CUT),
        Pattern("cl100k_base", pretokenize_cl100k.CL100K_PATTERN, pretokenize_cl100k.piece_ends, NEWLINE_CUT),
        Pattern("llama3", pretokenize_cl100k.LLAMA3_PATTERN, _LLAMA3_PIECE_ENDS, NEWLINE_CUT),
        Pattern("o200k_base", pretokenize_o200k.O200K_PATTERN, pretokenize_o200k.piece_ends, _O200K_CUT),
    )
}
_BY_REGEX = {p.regex: p for p in _PATTERNS.values()}
# Other spellings of known patterns (tests/test_custom_patterns.py proves each equal to its scanner).
ALIASES = {
    # GPT-2's encoder.py
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""": "gpt2",
    # rustbpe's and nanochat's GPT4_PATTERN
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s+""": "llama3",
}
_BY_REGEX.update((text, _PATTERNS[name]) for text, name in ALIASES.items())


def pattern_names():
    """The known names, the default first."""
    return [DEFAULT_PATTERN] + sorted(n for n in _PATTERNS if n != DEFAULT_PATTERN)


def get_pattern(name=None):
    """The ``Pattern`` called ``name`` (None: the default; ``"regex:TEXT"``: ``from_regex(TEXT)``);
    a ``Pattern`` is returned as is."""
    if isinstance(name, Pattern):
        return name
    if isinstance(name, str) and name.startswith(REGEX_PREFIX):
        return Pattern.from_regex(name[len(REGEX_PREFIX) :])
    try:
        return _PATTERNS[DEFAULT_PATTERN if name is None else name]
    except (KeyError, TypeError):
        raise ValueError(
            "unknown pattern %r (known: %s, or %sTEXT for any regex)"
            % (name, ", ".join(pattern_names()), REGEX_PREFIX)
        )
