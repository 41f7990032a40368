"""Regenerate ``refbpe/pretokenize/_unicode_table.py`` and ``refbpe/pretokenize/_unicode_categories.py``
from the ``regex`` module (run on CPython).

    python -m refbpe.pretokenize._gen_unicode_table

Every code point U+0000..U+10FFFF is put in one of four classes, exactly as the
``regex`` module's GPT-2 pattern sees it:

    LETTER  \\p{L}      NUMBER  \\p{N}      SPACE  \\s      OTHER  everything else

(the classes are disjoint: no code point is both a letter and a number, and no
whitespace character is either).  The table is written as sorted run starts, so
the generated module is small, diffable and free of any interpreter's own
``unicodedata``.  The Unicode version is found by probing characters first
assigned in each version, and recorded next to the table.

The second table, for the GPT-4 and GPT-4o patterns (``cl100k_base``,
``o200k_base``), splits letters and adds marks:

    LOWER  \\p{Ll}    UPPER  \\p{Lu} \\p{Lt}    CASELESS  \\p{Lm} \\p{Lo}
    MARK   \\p{M}     NUMBER \\p{N}     SPACE  \\s      OTHER  everything else

(LOWER, UPPER and CASELESS together are exactly ``\\p{L}``; o200k's two word
alternatives treat Lu/Lt alike and Lm/Lo alike, which is why they share a
class).  Next to it go the case-insensitive contraction letters: every code
point ``(?i)x`` matches for each ``x`` of ``s d m t l v e r``, as ``regex``
folds case (simple case folding: ``(?i)s`` also matches U+017F LONG S).

Older versions (``_unicode_versions.py``) come from Unicode's own data, one
``unicodedata2`` release per version (its general categories; White_Space has
not changed since Unicode 6.3, so ``WHITE_SPACE`` below is every version's
``\\s``).  Each is stored as the runs where it differs from the latest table::

    python -m refbpe.pretokenize._gen_unicode_table --ucd DIR [--ucd DIR ...]

where each DIR holds one unpacked ``unicodedata2`` wheel (``pip download
unicodedata2==16.0.0`` and unzip).  ``unicodedata2`` 18.0.0 reproduces the
``regex`` table exactly (``tests/test_unicode_versions.py``), so the
versions share one definition of the classes.  Pseudo-versions model a peer
that matches no Unicode version (``PSEUDO_VERSIONS``).
"""

import argparse
import glob
import importlib.util
import os
import sys

from .table_text import text_rows

OTHER, LETTER, NUMBER, SPACE = 0, 1, 2, 3

# A character first assigned in each Unicode version (checked against the
# UCD's DerivedAge.txt); the newest one ``regex`` knows gives its version.
VERSION_PROBES = (
    ("13.0.0", 0x1FAD0),  # BLUEBERRIES
    ("14.0.0", 0x1FAE0),  # MELTING FACE
    ("15.0.0", 0x1FA75),  # LIGHT BLUE HEART
    ("15.1.0", 0x2EBF0),  # CJK Extension I, first character
    ("16.0.0", 0x1C89),  # CYRILLIC CAPITAL LETTER TJE
    ("17.0.0", 0x11B60),  # SHARADA VOWEL SIGN OE (Unicode 17)
    ("18.0.0", 0x3D000),  # CJK Extension J, first character
)


def regex_unicode_version():
    """The Unicode version the installed ``regex`` module implements."""
    import regex

    assigned = regex.compile(r"\p{Assigned}")
    version = None
    for name, cp in VERSION_PROBES:
        if assigned.match(chr(cp)):
            version = name
    return version


def classify_all():
    """A bytearray of length 0x110000 with the class of every code point."""
    import regex

    letter, number, space = regex.compile(r"\p{L}"), regex.compile(r"\p{N}"), regex.compile(r"\s")
    table = bytearray(0x110000)
    for cp in range(0x110000):
        ch = chr(cp)
        if letter.match(ch):
            table[cp] = LETTER
        elif number.match(ch):
            table[cp] = NUMBER
        elif space.match(ch):
            table[cp] = SPACE
    return table


CAT_OTHER, CAT_LOWER, CAT_UPPER, CAT_CASELESS, CAT_MARK, CAT_NUMBER, CAT_SPACE = range(7)
CATEGORY_NAMES = ("other", "Ll", "Lu Lt", "Lm Lo", "M", "N", "\\s")
CONTRACTION_LETTERS = "sdmtlver"


def classify_categories():
    """A bytearray of length 0x110000 with the CAT_* class of every code point."""
    import regex

    # One match per code point; the group that matched is the class.
    return group_table(regex.compile(r"(\p{Ll})|([\p{Lu}\p{Lt}])|([\p{Lm}\p{Lo}])|(\p{M})|(\p{N})|(\s)"))


def group_table(pattern):
    """A bytearray of length 0x110000: for each code point, the number of the group of
    ``pattern`` (a compiled ``regex`` of one group per alternative) that matches it, 0 for none."""
    table = bytearray(0x110000)
    for cp in range(0x110000):
        m = pattern.match(chr(cp))
        if m:
            table[cp] = m.lastindex
    return table


def case_variants():
    """{letter: sorted code points that ``(?i)letter`` matches} for the contraction letters."""
    import regex

    out = {}
    for letter in CONTRACTION_LETTERS:
        pattern = regex.compile("(?i)" + letter)
        out[letter] = tuple(cp for cp in range(0x110000) if pattern.fullmatch(chr(cp)))
    return out


def render_categories(version, regex_version, run_list, variants):
    lines = [
        '"""Code point classes for the GPT-4 / GPT-4o pre-tokenizers: GENERATED, do not edit.',
        "",
        "Regenerate with ``python -m refbpe.pretokenize._gen_unicode_table`` (CPython + regex).",
        "RUNS lists (first code point, class) of each maximal run, written FIRST:CLASS in hex;",
        "a run lasts until the next start.  Classes: 0 other, 1 \\\\p{Ll}, 2 \\\\p{Lu} or \\\\p{Lt},",
        "3 \\\\p{Lm} or \\\\p{Lo}, 4 \\\\p{M}, 5 \\\\p{N}, 6 whitespace (\\\\s), as the ``regex``",
        "module defines them.  CASE_VARIANTS: the code points ``(?i)x`` matches, for each",
        "contraction letter.",
        '"""',
    ]
    lines += generated_header("pairs", version, regex_version)
    lines.append("CASE_VARIANTS = {")
    for letter in CONTRACTION_LETTERS:
        lines.append("    %r: (%s)," % (letter, ", ".join("0x%X" % cp for cp in variants[letter])))
    lines += ["}", "", "RUNS = pairs("] + text_rows(run_list, "    ") + [")"]
    return "\n".join(lines) + "\n"


def generated_header(reader, version, regex_version=None):
    """The lines of a generated module after its docstring: the import of its table
    reader (``table_text``) and its versions."""
    lines = ["", "from .table_text import %s" % reader, ""]
    if regex_version is None:
        return lines + ["LATEST = %r" % version, ""]
    return lines + ["UNICODE_VERSION = %r" % version, "GENERATED_WITH_REGEX = %r" % regex_version, ""]


def runs(table):
    """(start, class) for every maximal run of equal classes."""
    out = []
    prev = None
    for cp, cls in enumerate(table):
        if cls != prev:
            out.append((cp, cls))
            prev = cls
    return out


def render(version, regex_version, run_list):
    lines = [
        '"""Code point classes for the GPT-2 pre-tokenizer: GENERATED, do not edit.',
        "",
        "Regenerate with ``python -m refbpe.pretokenize._gen_unicode_table`` (CPython + regex).",
        "RUNS lists (first code point, class) of each maximal run, written FIRST:CLASS in hex;",
        "a run lasts until the next start.  Classes: 0 other, 1 letter (\\\\p{L}), 2 number",
        "(\\\\p{N}), 3 whitespace (\\\\s), as the ``regex`` module defines them.",
        '"""',
    ]
    lines += generated_header("pairs", version, regex_version)
    lines += ["RUNS = pairs("] + text_rows(run_list, "    ") + [")"]
    return "\n".join(lines) + "\n"


# The White_Space property (regex's ``\\s``), unchanged since Unicode 6.3.
WHITE_SPACE = (
    (0x9, 0xA, 0xB, 0xC, 0xD, 0x20, 0x85, 0xA0, 0x1680)
    + tuple(range(0x2000, 0x200B))
    + (
        0x2028,
        0x2029,
        0x202F,
        0x205F,
        0x3000,
    )
)
_CATEGORY_OF_GC = {"Ll": CAT_LOWER, "Lu": CAT_UPPER, "Lt": CAT_UPPER, "Lm": CAT_CASELESS, "Lo": CAT_CASELESS}
_CATEGORY_OF_GC.update({"Mn": CAT_MARK, "Mc": CAT_MARK, "Me": CAT_MARK})
_CATEGORY_OF_GC.update({"Nd": CAT_NUMBER, "Nl": CAT_NUMBER, "No": CAT_NUMBER})

# Peers that match no Unicode version: (name, base version, {first, last: category}),
# each found by probing the peer (perf/probe_unicode.py, docs/unicode.md).
PSEUDO_VERSIONS = ()


def load_unicodedata(path):
    """The ``unicodedata2`` module in directory ``path`` (an unpacked wheel), loaded under its own name."""
    found = glob.glob(os.path.join(path, "unicodedata2*.so")) + glob.glob(
        os.path.join(path, "unicodedata2*.pyd")
    )
    if not found:
        raise SystemExit("no unicodedata2 extension module in %s" % path)
    spec = importlib.util.spec_from_file_location("unicodedata2", found[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def classify_ucd(unicodedata):
    """As ``classify_categories``, from a ``unicodedata``-like module's general categories."""
    table = bytearray(0x110000)
    category = unicodedata.category
    for cp in range(0x110000):
        table[cp] = _CATEGORY_OF_GC.get(category(chr(cp)), CAT_OTHER)
    for cp in WHITE_SPACE:
        table[cp] = CAT_SPACE
    return table


def delta_runs(table, latest):
    """(first, last, class) for each maximal run where ``table`` differs from ``latest``, one class each."""
    out = []
    for cp in range(0x110000):
        if table[cp] != latest[cp]:
            if out and out[-1][1] == cp - 1 and out[-1][2] == table[cp]:
                out[-1] = (out[-1][0], cp, table[cp])
            else:
                out.append((cp, cp, table[cp]))
    return out


def render_versions(latest_version, deltas):
    """The text of ``_unicode_versions.py``: ``deltas`` is {version: delta_runs}."""
    lines = [
        '"""Code point classes of older Unicode versions: GENERATED, do not edit.',
        "",
        "Regenerate with ``python -m refbpe.pretokenize._gen_unicode_table --ucd DIR ...``",
        "(one unpacked ``unicodedata2`` wheel per version).  DELTAS[version] lists",
        "(first, last, class) for the runs where that version's class (the classes of",
        "``_unicode_categories``) differs from the latest table's, LATEST; written",
        "FIRST:LAST:CLASS in hex.",
        '"""',
    ]
    lines += generated_header("triples", latest_version)
    lines.append("DELTAS = {")
    for version in sorted(deltas, key=_version_key):
        lines += ["    %r: triples(" % version] + text_rows(deltas[version], "        ") + ["    ),"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _version_key(version):
    return tuple(int(x) if x.isdigit() else -1 for x in version.split("."))


def pseudo_version_tables(tables):
    """{name: table} for ``PSEUDO_VERSIONS``, each its base version's table with its overrides."""
    out = {}
    for name, base, overrides in PSEUDO_VERSIONS:
        table = bytearray(tables[base])
        for (first, last), cls in overrides.items():
            table[first : last + 1] = bytes([cls]) * (last - first + 1)
        out[name] = table
    return out


def version_deltas(ucd_dirs, latest):
    """{version: delta_runs} for the ``unicodedata2`` in each of ``ucd_dirs``, and the pseudo-versions."""
    tables = {}
    for path in ucd_dirs:
        module = load_unicodedata(path)
        tables[module.unidata_version] = classify_ucd(module)
    tables.update(pseudo_version_tables(tables))
    return {v: delta_runs(t, latest) for v, t in tables.items() if t != latest}


def _write(name, text):
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    tmp = target + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(text)
    os.replace(tmp, target)
    print("wrote %s (Unicode %s)" % (target, regex_unicode_version()), file=sys.stderr)


def main(argv=None):
    import regex

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--ucd", action="append", default=[], metavar="DIR", help="an unpacked unicodedata2 wheel"
    )
    args = parser.parse_args(argv)
    version = regex_unicode_version()
    _write("_unicode_table.py", render(version, regex.__version__, runs(classify_all())))
    categories = classify_categories()
    _write(
        "_unicode_categories.py",
        render_categories(version, regex.__version__, runs(categories), case_variants()),
    )
    if args.ucd:
        _write("_unicode_versions.py", render_versions(version, version_deltas(args.ucd, categories)))


if __name__ == "__main__":
    main()
