"""Regenerate ``refbpe/_unicode_table.py`` from the ``regex`` module (run on CPython).

    python -m refbpe._gen_unicode_table

Every code point U+0000..U+10FFFF is put in one of four classes, exactly as the
``regex`` module's GPT-2 pattern sees it:

    LETTER  \\p{L}      NUMBER  \\p{N}      SPACE  \\s      OTHER  everything else

(the classes are disjoint: no code point is both a letter and a number, and no
whitespace character is either).  The table is written as sorted run starts, so
the generated module is small, diffable and free of any interpreter's own
``unicodedata``.  The Unicode version is found by probing characters first
assigned in each version, and recorded next to the table.
"""

import os
import sys

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
        "Regenerate with ``python -m refbpe._gen_unicode_table`` (CPython + regex).",
        "RUNS lists (first code point, class) of each maximal run; a run lasts until",
        "the next start.  Classes: 0 other, 1 letter (\\\\p{L}), 2 number (\\\\p{N}),",
        "3 whitespace (\\\\s), as the ``regex`` module defines them.",
        '"""',
        "",
        "UNICODE_VERSION = %r" % version,
        "GENERATED_WITH_REGEX = %r" % regex_version,
        "",
        "RUNS = (",
    ]
    row = []
    for start, cls in run_list:
        row.append("(0x%X, %d)," % (start, cls))
        if len(row) == 6:
            lines.append("    " + " ".join(row))
            row = []
    if row:
        lines.append("    " + " ".join(row))
    lines.append(")")
    return "\n".join(lines) + "\n"


def main():
    import regex

    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_unicode_table.py")
    text = render(regex_unicode_version(), regex.__version__, runs(classify_all()))
    tmp = target + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(text)
    os.replace(tmp, target)
    print("wrote %s (Unicode %s)" % (target, regex_unicode_version()), file=sys.stderr)


if __name__ == "__main__":
    main()
