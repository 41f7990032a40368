"""The split patterns refbpe speaks: four by name, each a hand-written scanner, and any regex.

    gpt2         GPT-2's pattern (``gpt2``): the CS336 default
    cl100k_base  GPT-4's, as tiktoken writes it today (``cl100k``)
    llama3       Llama 3's, cl100k's original form before tiktoken 0.8 (and
                 rustbpe's/nanochat's ``GPT4_PATTERN``); it differs from
                 ``cl100k_base`` only on a whitespace run holding a newline at
                 the very end of the text (``"x\\n  "``)
    o200k_base   GPT-4o's (``o200k``)

and, found by name but not listed, SuperBPE's two (``superbpe-stage1``,
``superbpe-stage2``: ``superbpe``).

``Pattern.from_regex(text)`` makes a pattern of any regex in the ``regex``
module's syntax (the supported subset: ``regex_syntax``), compiled with the
pinned Unicode classes for the standard ``re`` module over bytes
(``regex_compile``), so its pieces are the same on every interpreter.  The
text of a known pattern gives that pattern, with its scanner.  A custom
pattern's ``name`` is ``"regex:"`` followed by its text: a string, so it
travels wherever a name does (worker processes, reports, manifests) and
``get_pattern`` turns it back into the pattern.

A ``Pattern`` bundles the regex text (``regex`` module syntax, for exports and
for the tests that hold each scanner to it), the scanner, ``piece_ends(data)``
(the end offsets of the pieces of UTF-8 ``data``), and ``cut_points``, where its
texts may be cut (``cuts``).  What every caller wants of a scanner is written
here once, over ``piece_ends``: the pieces as ``bytes`` (``pretokenize``) or
``str`` (``pretokenize_str``), and their counts (``count_pretokens``).
(Importing this module builds the scanners' class tables, 1.1 MB each: about
50 ms on CPython.)  ``get_pattern(name, unicode=VERSION)`` is the same scanner
reading another Unicode version's table (``unicode_tables``); its ``key``
(``"gpt2@16.0.0"``) names both.  A custom regex reads the latest tables.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Union

from . import cl100k, gpt2, o200k, superbpe
from .cuts import DIGIT_CUT, NEWLINE_CUT, NEWLINE_CUT_NOT_BEFORE_SLASH, NO_CUTS, WHITESPACE_CUT
from .gpt2 import count_pieces
from .regex_compile import compile_split_regex
from .unicode_tables import LATEST, class_table, unicode_version

__all__ = ["Pattern", "get_pattern", "pattern_names", "pattern_key", "REGEX_PREFIX", "ALIASES"]

DEFAULT_PATTERN = "gpt2"
REGEX_PREFIX = "regex:"


class Pattern(object):
    """A split pattern: ``name``, ``regex`` (its text), its scanner and its ``cut_points``.

    ``piece_ends(data)`` gives the end offsets of the pre-tokens of UTF-8
    ``data``; the other methods build on it.  ``unicode`` is the Unicode
    version its scanner classifies code points by; ``key`` names both
    (``"gpt2"`` for the latest version, ``"gpt2@16.0.0"`` for another):
    ``get_pattern(key)`` is this pattern again, so the key is what travels to
    worker processes and into files.  ``context_bounded``: whether a piece's
    extent depends on at most the next two pieces (true of the hand-written
    patterns; ``Tokenizer.encode_iterable`` relies on it); a custom pattern
    makes no such promise.  Cost: every method is one pass over the data,
    O(len(data)).

    >>> gpt2 = get_pattern("gpt2")
    >>> gpt2.pretokenize_str("I've 12345 apples"), gpt2.piece_ends(b"I've 12345 apples")
    (['I', "'ve", ' 12345', ' apples'], [1, 4, 10, 17])
    """

    def __init__(
        self,
        name: str,
        regex: str,
        piece_ends: Callable[[bytes], List[int]],
        cut_points: re.Pattern = NO_CUTS,
        context_bounded: bool = True,
        label: Optional[str] = None,
        unicode: str = LATEST,
    ) -> None:
        self.name = name
        self.regex = regex
        self.piece_ends = piece_ends
        self.cut_points = cut_points
        self.context_bounded = context_bounded
        self.label = label or name
        self.unicode = unicode
        self.key = name if unicode == LATEST else "%s@%s" % (name, unicode)

    @classmethod
    def from_regex(cls, regex: str, name: Optional[str] = None, classes: Optional[Any] = None) -> Pattern:
        """The pattern of ``regex`` (``regex`` module syntax); ``regex_syntax.RegexError`` when refused.

        A known pattern's exact text, or one of its ``ALIASES``, gives that
        pattern (its hand-written scanner).  ``name`` labels it in messages;
        ``classes`` provides the Unicode class sets (default: the pinned
        tables, ``unicode_classes``).  Cost: compiling, O(pattern size x class
        ranges); matching, the ``re`` module's (``regex_engine`` under PyPy, and
        for a pattern ``re`` could backtrack on exponentially: repeats of groups
        in time linear in the text).

            >>> digits_in_pairs = Pattern.from_regex(r"\\p{L}+|\\p{N}{1,2}|\\s+|[^\\s\\p{L}\\p{N}]+")
            >>> digits_in_pairs.pretokenize_str("abc 12345!")
            ['abc', ' ', '12', '34', '5', '!']
        """
        if classes is None and regex in _BY_REGEX:
            return _BY_REGEX[regex]
        compiled = compile_split_regex(regex, classes)
        label = name or "custom"
        return cls(REGEX_PREFIX + regex, regex, compiled.piece_ends, compiled.cut_points, False, label)

    def pretokenize(self, data: bytes, out: Optional[List[bytes]] = None) -> List[bytes]:
        """The pre-tokens of UTF-8 ``data`` as ``bytes``, appended to ``out`` (a new list by default).

        ``b"".join(pretokenize(data)) == data`` always holds::

            >>> get_pattern("gpt2").pretokenize(b"I'm  here")
            [b'I', b"'m", b' ', b' here']
        """
        if out is None:
            out = []
        start = 0
        for end in self.piece_ends(data):
            out.append(data[start:end])
            start = end
        return out

    def pretokenize_str(self, text: str) -> List[str]:
        """Pre-tokens of ``text`` as ``str`` (for tests and debugging)."""
        data = text.encode("utf-8", "surrogatepass")
        return [p.decode("utf-8", "surrogatepass") for p in self.pretokenize(data)]

    def count_pretokens(
        self, data: bytes, counts: Optional[Dict[bytes, int]] = None, small: Optional[Dict[int, int]] = None
    ) -> Dict[bytes, int]:
        """Add the pre-token counts of UTF-8 ``data`` to ``counts`` (bytes -> int; a new
        dict by default); given ``small``, pieces under 8 bytes are left there under
        packed int keys (``gpt2.count_pieces``)."""
        return count_pieces(data, self.piece_ends(data), counts, small)

    def __repr__(self) -> str:
        return "Pattern(%r)" % self.key

    def __reduce__(self):
        return (get_pattern, (self.key,))


_SCANNERS = {
    "gpt2": gpt2.piece_ends,
    "cl100k_base": cl100k.piece_ends,
    "llama3": cl100k.llama3_piece_ends,
    "o200k_base": o200k.piece_ends,
}
_TABLES = {"gpt2": class_table, "cl100k_base": class_table, "llama3": class_table}
_TABLES["o200k_base"] = o200k.flag_table
_BOUND = {}  # (name, version) -> Pattern, for versions other than the latest

_PATTERNS = {
    p.name: p
    for p in (
        Pattern("gpt2", gpt2.GPT2_PATTERN, gpt2.piece_ends, WHITESPACE_CUT),
        Pattern("cl100k_base", cl100k.CL100K_PATTERN, cl100k.piece_ends, NEWLINE_CUT),
        Pattern("llama3", cl100k.LLAMA3_PATTERN, cl100k.llama3_piece_ends, NEWLINE_CUT),
        Pattern("o200k_base", o200k.O200K_PATTERN, o200k.piece_ends, NEWLINE_CUT_NOT_BEFORE_SLASH),
    )
}
_UNLISTED = {
    p.name: p
    for p in (
        Pattern("superbpe-stage1", superbpe.STAGE1_PATTERN, superbpe.stage1_piece_ends),
        Pattern("superbpe-stage2", superbpe.STAGE2_PATTERN, superbpe.stage2_piece_ends, DIGIT_CUT),
    )
}
_BY_REGEX = {p.regex: p for p in list(_PATTERNS.values()) + list(_UNLISTED.values())}
# Other spellings of known patterns (tests/test_custom_patterns.py proves each equal to its scanner).
ALIASES = {
    # GPT-2's encoder.py
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""": "gpt2",
    # rustbpe's and nanochat's GPT4_PATTERN
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s+""": "llama3",
}
_BY_REGEX.update((text, _PATTERNS[name]) for text, name in ALIASES.items())


def pattern_names() -> List[str]:
    """The known names, the default first.  Cost: O(1) (four names).

    >>> pattern_names()
    ['gpt2', 'cl100k_base', 'llama3', 'o200k_base']
    """
    return [DEFAULT_PATTERN] + sorted(n for n in _PATTERNS if n != DEFAULT_PATTERN)


def get_pattern(name: Union[str, Pattern, None] = None, unicode: Optional[str] = None) -> Pattern:
    """The ``Pattern`` called ``name`` (None: the default; a key ``"name@version"``
    names the version too; ``"regex:TEXT"``: ``Pattern.from_regex(TEXT)``)
    reading Unicode version ``unicode`` (None: the key's, else the latest).  A
    ``Pattern`` is returned as is, or bound to ``unicode`` when that is given.

    ValueError for an unknown name or version.  Cost: O(1), a dict lookup (a
    version's table is built once, on first use: about 3 ms; a regex is compiled).

    >>> get_pattern("cl100k_base").pretokenize_str("I've 12345 apples")
    ['I', "'ve", ' ', '123', '45', ' apples']
    >>> get_pattern("gpt2", unicode="16.0").key
    'gpt2@16.0.0'
    """
    if isinstance(name, Pattern):
        if unicode is None:
            return name
        name, version = name.name, name.unicode
    elif isinstance(name, str) and name.startswith(REGEX_PREFIX):
        if unicode is not None and unicode_version(unicode) != LATEST:
            raise ValueError("a pattern given as a regex reads the latest Unicode tables (%s)" % LATEST)
        return Pattern.from_regex(name[len(REGEX_PREFIX) :])
    else:
        name, _, version = (DEFAULT_PATTERN if name is None else str(name)).partition("@")
    name = name or DEFAULT_PATTERN  # "@16.0.0": the default pattern, another version
    base = _PATTERNS.get(name) or _UNLISTED.get(name)
    if base is None:
        raise ValueError(
            "unknown pattern %r (known: %s, or %sTEXT for any regex)"
            % (name, ", ".join(pattern_names()), REGEX_PREFIX)
        )
    version = unicode_version(unicode if unicode is not None else version or None)
    if version == LATEST:
        return base
    if name not in _SCANNERS:
        raise ValueError("pattern %r reads only the latest Unicode tables (%s)" % (name, LATEST))
    bound = _BOUND.get((name, version))
    if bound is None:
        scanner = _VersionScanner(name, version)
        bound = _BOUND[(name, version)] = Pattern(
            name, base.regex, scanner, base.cut_points, base.context_bounded, None, version
        )
    return bound


class _VersionScanner(object):
    """``piece_ends`` of pattern ``name`` reading Unicode ``version``'s table; pickled by name."""

    def __init__(self, name, version):
        self.name, self.version = name, version
        self._scan, self._table = _SCANNERS[name], _TABLES[name](version)

    def __call__(self, data):
        return self._scan(data, self._table)

    def __reduce__(self):
        return (_VersionScanner, (self.name, self.version))


def pattern_key(
    pattern: Optional[str] = None, unicode: Optional[str] = None, fallback: Optional[str] = None
) -> Optional[str]:
    """A pattern key (``"name@version"``, either part may be empty) from ``pattern`` and
    ``unicode``, each part not given taken from the key ``fallback``; None when none is given.
    A custom ``regex:...`` pattern is a key of its own (it reads the latest tables).

    ``pattern_key(None, "16")`` is ``"@16.0.0"``, whose name is the caller's default
    (a profile's, or a manifest's via ``fallback``).  Cost: O(1).

    >>> pattern_key("llama3", "16")
    'llama3@16.0.0'
    """
    for given in (pattern, fallback if not pattern else None):
        if isinstance(given, str) and given.startswith(REGEX_PREFIX):
            return get_pattern(given, unicode).key
    name, _, version = str(pattern or "").partition("@")
    fallback_name, _, fallback_version = str(fallback or "").partition("@")
    name = name or fallback_name
    version = unicode or version or fallback_version
    if name and name not in _PATTERNS and name not in _UNLISTED:
        get_pattern(name)  # raises, naming the known patterns
    if version:
        version = unicode_version(version)
    if not name and not version:
        return None
    return "%s@%s" % (name, version) if version else name
