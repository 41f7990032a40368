"""The code point sets a split pattern's classes stand for, from refbpe's pinned tables.

``PinnedClasses`` answers ``Pattern.from_regex`` (``regex_compile``) with range
sets (``utf8_ranges``), so a custom pattern classifies code points exactly as
the hand-written scanners do, on every interpreter:

    \\p{L} \\p{N} \\s           ``_unicode_table``      (the GPT-2 scanner's table)
    \\p{Ll} \\p{M}             ``_unicode_categories`` (the GPT-4/GPT-4o scanners' table)
    every other category,     ``_unicode_properties`` (general categories, ``\\w``,
    \\d (= \\p{Nd}), \\w, (?i)   and the case partners ``(?i)`` matching uses)

(``tests/test_custom_patterns.py`` checks the three tables agree where they
overlap.)  Another Unicode version is another provider with the same methods:
``set_of(name)`` for a class name of ``regex_syntax`` (``"gc:Lu"``, ``"space"``,
``"digit"``, ``"word"``, ``"any"``) and ``case_partners()``.  Each set is built
once per provider (a few ms) and cached.
"""

from __future__ import annotations

from . import _unicode_categories, _unicode_properties, _unicode_table
from .utf8_ranges import MAX_CODE_POINT, union

__all__ = ["PinnedClasses", "pinned_classes"]

_GROUPS = {"L": "Lu Ll Lt Lm Lo", "LC": "Lu Ll Lt", "M": "Mn Mc Me", "N": "Nd Nl No", "Z": "Zs Zl Zp"}
_GROUPS.update({"P": "Pc Pd Ps Pe Pi Pf Po", "S": "Sm Sc Sk So", "C": "Cc Cf Cs Co Cn"})


def _runs_to_sets(runs):
    """{class value: range set} of a RUNS table."""
    out = {}
    bounds = list(runs) + [(MAX_CODE_POINT + 1, None)]
    for (start, value), (end, _) in zip(bounds, bounds[1:]):
        out.setdefault(value, []).append((start, end - 1))
    return {value: union(ranges) for value, ranges in out.items()}


class PinnedClasses(object):
    """Class sets from the tables pinned in this package (Unicode ``version``)."""

    version = _unicode_table.UNICODE_VERSION

    def __init__(self):
        self._cache = {}
        self._partners = None

    def set_of(self, name):
        """The range set of class ``name``; ``KeyError`` for an unknown name."""
        if name not in self._cache:
            self._cache[name] = self._build(name)
        return self._cache[name]

    def _build(self, name):
        if name == "any":
            return ((0, MAX_CODE_POINT),)
        if name in ("gc:L", "gc:N", "space"):
            table = _runs_to_sets(_unicode_table.RUNS)
            return table.get({"gc:L": 1, "gc:N": 2, "space": 3}[name], ())
        if name in ("gc:Ll", "gc:M"):
            return _runs_to_sets(_unicode_categories.RUNS).get({"gc:Ll": 1, "gc:M": 4}[name], ())
        if name == "digit":
            return self.set_of("gc:Nd")
        if name == "word":
            return _runs_to_sets(_unicode_properties.WORD_RUNS).get(1, ())
        if not name.startswith("gc:"):
            raise KeyError(name)
        gc = name[3:]
        if gc in _GROUPS:
            return union(*(self.set_of("gc:" + part) for part in _GROUPS[gc].split()))
        names = _unicode_properties.GENERAL_CATEGORIES
        if gc not in names:
            raise KeyError(name)
        return _runs_to_sets(_unicode_properties.GC_RUNS).get(names.index(gc), ())

    def case_partners(self):
        """{code point: the other code points ``(?i)`` matches it with} (symmetric, not transitive)."""
        if self._partners is None:
            self._partners = {row[0]: row[1:] for row in _unicode_properties.CASE_PARTNERS}
        return self._partners


_PINNED = PinnedClasses()


def pinned_classes():
    """The shared provider for the pinned tables."""
    return _PINNED
