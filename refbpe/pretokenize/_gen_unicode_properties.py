"""Regenerate ``refbpe/pretokenize/_unicode_properties.py`` from the ``regex`` module (run on CPython).

    python -m refbpe.pretokenize._gen_unicode_properties

The table behind ``Pattern.from_regex`` (``unicode_classes``), for what the
scanners' tables (``_unicode_table``, ``_unicode_categories``) do not separate:

    GC_RUNS      the general category of every code point U+0000..U+10FFFF
                 (``\\p{Lu}``, ``\\p{Lt}``, ..., ``\\p{Cn}``), as sorted run starts
    WORD_RUNS    ``\\w`` (1) or not (0), as ``regex`` defines it for text
    CASE_PARTNERS for every code point ``c`` that has any, ``(c, d, ...)``: the
                 other code points ``(?i)c`` matches (``(?i)k`` matches ``K`` and
                 U+212A KELVIN SIGN), as ``regex`` folds case (simple case folding).
                 The relation is symmetric but not transitive: ``(?i)I`` matches
                 ``i`` and U+0131 dotless i, ``(?i)i`` matches ``I`` and U+0130.

Each code point's category is found with one match of a 30-group pattern (the
group that matched names it); the case partners by matching ``(?i)c`` for every
code point ``c`` that is cased or changes under case mapping or folding (no
other code point has a case partner).  About 10 s on CPython.
"""

import os
import sys

from ._gen_unicode_table import generated_header, group_table, regex_unicode_version, runs
from .table_text import text_rows

GENERAL_CATEGORIES = (
    "Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
    "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co",
)  # fmt: skip


def general_categories():
    """A bytearray of length 0x110000: the index in GENERAL_CATEGORIES of each code point."""
    import regex

    return group_table(regex.compile("|".join("(\\p{%s})" % gc for gc in GENERAL_CATEGORIES[1:])))


def word_table():
    """A bytearray of length 0x110000: 1 where ``\\w`` matches."""
    import regex

    word = regex.compile(r"\w")
    return bytearray(1 if word.match(chr(cp)) else 0 for cp in range(0x110000))


def case_partners():
    """``(c, partners...)`` for each code point ``c`` that ``(?i)c`` matches others with."""
    import regex

    cased = regex.compile(r"[\p{Cased}\p{Changes_When_Casemapped}\p{Changes_When_Casefolded}]")
    candidates = [chr(cp) for cp in range(0x110000) if cased.match(chr(cp))]
    text = "".join(candidates)
    out = []
    for ch in candidates:
        partners = sorted(set(regex.findall("(?i)" + regex.escape(ch), text)) - {ch})
        if partners:
            out.append(tuple(ord(c) for c in [ch] + partners))
    return out


def render(version, regex_version, gc_runs, word_runs, partners):
    lines = [
        '"""General categories, ``\\\\w`` and case partners for ``Pattern.from_regex``: GENERATED.',
        "",
        "Regenerate with ``python -m refbpe.pretokenize._gen_unicode_properties`` (CPython + regex).",
        "GC_RUNS lists (first code point, index in GENERAL_CATEGORIES) of each maximal run;",
        "WORD_RUNS (first code point, 1 if ``\\\\w`` else 0); a run lasts until the next start.",
        "CASE_PARTNERS: (c, the other code points ``(?i)c`` matches...), as ``regex`` folds case.",
        "Each tuple is written as its numbers in hex joined by ':' (FIRST:INDEX, C:D:E).",
        '"""',
    ]
    lines += generated_header("groups, pairs", version, regex_version)
    lines.append("GENERAL_CATEGORIES = (")
    lines += [
        "    " + " ".join("%r," % gc for gc in GENERAL_CATEGORIES[i : i + 10])
        for i in range(0, len(GENERAL_CATEGORIES), 10)
    ]
    lines += [")", "", "GC_RUNS = pairs("] + text_rows(gc_runs, "    ")
    lines += [")", "", "WORD_RUNS = pairs("] + text_rows(word_runs, "    ")
    lines += [")", "", "CASE_PARTNERS = groups("] + text_rows(partners, "    ") + [")"]
    return "\n".join(lines) + "\n"


def main():
    import regex

    version = regex_unicode_version()
    text = render(version, regex.__version__, runs(general_categories()), runs(word_table()), case_partners())
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_unicode_properties.py")
    with open(target + ".tmp", "w", encoding="ascii") as f:
        f.write(text)
    os.replace(target + ".tmp", target)
    print("wrote %s (Unicode %s)" % (target, version), file=sys.stderr)


if __name__ == "__main__":
    main()
