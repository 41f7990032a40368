"""Code point class tables by Unicode version: which version a scanner reads.

The latest version's tables are the pinned ones (``_unicode_table``,
``_unicode_categories``, from the ``regex`` module); each older version is
stored as the runs where it differs (``_unicode_versions``, from Unicode's
own data).  A table is a ``bytes`` of length 0x110000 indexed by code point:

    category_table(v)   the finer classes (0 other, 1 Ll, 2 Lu/Lt, 3 Lm/Lo,
                        4 M, 5 N, 6 \\s): cl100k's and o200k's reading
    class_table(v)      GPT-2's classes (0 other, 1 letter, 2 number, 3 space),
                        the categories collapsed (marks are "other")

A version is named as Unicode numbers it (``"16.0.0"``; ``"16"`` and
``"16.0"`` are the same), or by a pseudo-version for a peer that matches no
Unicode version (docs/unicode.md).  Invariants: White_Space (``\\s``) and the
case variants of the contraction letters are the same in every version; only
letters, numbers and marks move.

Cost: the latest tables are built once at import, as before versions
existed; another version is a copy of the latest plus its runs (a few hundred)
and a ``bytes.translate``, built on first use and cached: 1.1 MB per table,
and no more time than building the latest (docs/unicode.md gives figures).
"""

from ._unicode_categories import RUNS as _CATEGORY_RUNS
from ._unicode_categories import UNICODE_VERSION as LATEST
from ._unicode_table import RUNS as _CLASS_RUNS
from ._unicode_versions import DELTAS

__all__ = [
    "LATEST",
    "UNICODE_VERSIONS",
    "unicode_version",
    "category_table",
    "class_table",
    "changed_code_points",
]

UNICODE_VERSIONS = tuple(sorted(set(DELTAS) | {LATEST}, key=lambda v: [int(x) for x in v.split(".")]))

# A category (``_unicode_categories``) as a GPT-2 class: letters, other, number, space.
_CLASS_OF_CATEGORY = bytes((0, 1, 1, 1, 0, 2, 3)) + bytes(249)


def unicode_version(name=None):
    """The canonical name of version ``name`` (None: the latest); ValueError names the known ones."""
    if name is None:
        return LATEST
    text = str(name).strip()
    parts = text.split(".")
    if all(p.isdigit() for p in parts) and 1 <= len(parts) <= 3:
        text = ".".join(str(int(p)) for p in parts + ["0"] * (3 - len(parts)))
    if text not in UNICODE_VERSIONS:
        raise ValueError("unknown Unicode version %r (known: %s)" % (name, ", ".join(UNICODE_VERSIONS)))
    return text


def _from_runs(runs):
    table = bytearray(0x110000)
    bounds = list(runs) + [(0x110000, 0)]
    for (start, cls), (end, _) in zip(bounds, bounds[1:]):
        if cls:
            table[start:end] = bytes([cls]) * (end - start)
    return bytes(table)


_CATEGORY_TABLES = {}
_CLASS_TABLES = {}


def category_table(version=None):
    """The category table of ``version`` (see the module docstring)."""
    return _table_of(_CATEGORY_TABLES, version, _CATEGORY_RUNS, _categories_changed)


def _categories_changed(version):
    changed = bytearray(category_table(LATEST))
    for first, last, cls in DELTAS[version]:
        changed[first : last + 1] = bytes([cls]) * (last - first + 1)
    return bytes(changed)


def class_table(version=None):
    """The GPT-2 class table of ``version`` (see the module docstring)."""
    return _table_of(_CLASS_TABLES, version, _CLASS_RUNS, _classes_of_categories)


def _classes_of_categories(version):
    return category_table(version).translate(_CLASS_OF_CATEGORY)


def _table_of(cache, version, latest_runs, derive):
    """The table of ``version``, built once into ``cache``: the latest from its runs,
    another by ``derive(version)``."""
    version = unicode_version(version)
    table = cache.get(version)
    if table is None:
        table = _from_runs(latest_runs) if version == LATEST else derive(version)
        cache[version] = table
    return table


def changed_code_points(version, other=None):
    """Sorted code points whose category differs between ``version`` and ``other`` (None: the latest)."""
    a, b = unicode_version(version), unicode_version(other)
    spans = set()
    for v in (a, b):
        for first, last, _ in DELTAS.get(v, ()):
            spans.update(range(first, last + 1))
    ta, tb = category_table(a), category_table(b)
    return sorted(cp for cp in spans if ta[cp] != tb[cp])
