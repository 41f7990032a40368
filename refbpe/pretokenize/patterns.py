"""The split patterns refbpe speaks, by name: each a hand-written scanner.

    gpt2         GPT-2's pattern (``pretokenize``): the CS336 default
    cl100k_base  GPT-4's, as tiktoken writes it today (``pretokenize_cl100k``)
    llama3       Llama 3's, cl100k's original form before tiktoken 0.8 (and
                 rustbpe's/nanochat's ``GPT4_PATTERN``); it differs from
                 ``cl100k_base`` only on a whitespace run holding a newline at
                 the very end of the text (``"x\\n  "``)
    o200k_base   GPT-4o's (``pretokenize_o200k``)

A ``Pattern`` bundles the regex text (``regex`` module syntax, for exports and
for the tests that hold each scanner to it) and the scanner's functions, all
with ``pretokenize``'s interface: ``piece_ends(data)``, ``pretokenize(data,
out=None)``, ``count_pretokens(data, counts=None, small=None)`` over UTF-8
bytes.  (Importing this module builds the scanners' class tables, 1.1 MB
each: about 50 ms on CPython.)  ``get_pattern(name, unicode=VERSION)`` is the
same scanner reading another Unicode version's table (``unicode_tables``).
"""

from . import cl100k as pretokenize_cl100k
from . import gpt2 as pretokenize
from . import o200k as pretokenize_o200k
from .unicode_tables import LATEST, class_table, unicode_version

__all__ = ["Pattern", "get_pattern", "pattern_names", "pattern_key", "DEFAULT_PATTERN"]

DEFAULT_PATTERN = "gpt2"


class Pattern(object):
    """A named split pattern: ``name``, ``regex`` (its text) and its scanner.

    ``unicode`` is the Unicode version its scanner classifies code points by;
    ``key`` names both (``"gpt2"`` for the latest version, ``"gpt2@16.0.0"``
    for another): ``get_pattern(key)`` is this pattern again, so the key is
    what travels to worker processes and into files.
    """

    def __init__(self, name, regex, piece_ends, unicode=LATEST):
        self.name = name
        self.regex = regex
        self.piece_ends = piece_ends
        self.unicode = unicode
        self.key = name if unicode == LATEST else "%s@%s" % (name, unicode)

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

    def __repr__(self):
        return "Pattern(%r)" % self.key

    def __reduce__(self):
        return (get_pattern, (self.key,))


_SCANNERS = {
    "gpt2": pretokenize.piece_ends,
    "cl100k_base": pretokenize_cl100k.piece_ends,
    "llama3": pretokenize_cl100k.llama3_piece_ends,
    "o200k_base": pretokenize_o200k.piece_ends,
}
_TABLES = {"gpt2": class_table, "cl100k_base": class_table, "llama3": class_table}
_TABLES["o200k_base"] = pretokenize_o200k.flag_table
_BOUND = {}  # (name, version) -> Pattern, for versions other than the latest

_PATTERNS = {
    p.name: p
    for p in (
        Pattern("gpt2", pretokenize.GPT2_PATTERN, pretokenize.piece_ends),
        Pattern("cl100k_base", pretokenize_cl100k.CL100K_PATTERN, pretokenize_cl100k.piece_ends),
        Pattern("llama3", pretokenize_cl100k.LLAMA3_PATTERN, pretokenize_cl100k.llama3_piece_ends),
        Pattern("o200k_base", pretokenize_o200k.O200K_PATTERN, pretokenize_o200k.piece_ends),
    )
}


def pattern_names():
    """The known names, the default first."""
    return [DEFAULT_PATTERN] + sorted(n for n in _PATTERNS if n != DEFAULT_PATTERN)


def get_pattern(name=None, unicode=None):
    """The ``Pattern`` called ``name`` (None: the default; a key ``"name@version"`` names the version too)
    reading Unicode version ``unicode`` (None: the key's, else the latest).

    A ``Pattern`` is returned as is, or bound to ``unicode`` when that is given.
    """
    if isinstance(name, Pattern):
        name, version = name.name, name.unicode
    else:
        name, _, version = (DEFAULT_PATTERN if name is None else str(name)).partition("@")
    name = name or DEFAULT_PATTERN  # "@16.0.0": the default pattern, another version
    base = _PATTERNS.get(name)
    if base is None:
        raise ValueError("unknown pattern %r (known: %s)" % (name, ", ".join(pattern_names())))
    version = unicode_version(unicode if unicode is not None else version or None)
    if version == LATEST:
        return base
    bound = _BOUND.get((name, version))
    if bound is None:
        bound = _BOUND[(name, version)] = Pattern(name, base.regex, _VersionScanner(name, version), version)
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


def pattern_key(pattern=None, unicode=None, fallback=None):
    """A pattern key (``"name@version"``, either part may be empty) from ``pattern`` and ``unicode``,
    each part not given taken from the key ``fallback``; None when none is given.

    ``pattern_key("llama3", "16") == "llama3@16.0.0"``; ``pattern_key(None, "16") == "@16.0.0"``
    (whose name is the caller's default: a profile's, or a manifest's via ``fallback``).
    """
    name, _, version = str(pattern or "").partition("@")
    fallback_name, _, fallback_version = str(fallback or "").partition("@")
    name = name or fallback_name
    version = unicode or version or fallback_version
    if name and name not in _PATTERNS:
        get_pattern(name)  # raises, naming the known patterns
    if version:
        version = unicode_version(version)
    if not name and not version:
        return None
    return "%s@%s" % (name, version) if version else name
