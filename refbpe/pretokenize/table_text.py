"""How the generated Unicode tables write their tuples, and read them back at import.

A table is a sequence of tuples of non-negative integers (``(first code
point, class)`` runs, ``(first, last, class)`` differences, ``(c, partners...)``
groups).  Written out (``text_rows``, by the generators ``_gen_unicode_table``
and ``_gen_unicode_properties``), each tuple is its numbers in hex joined by
``:`` (``1E3A:0``), the tuples apart by one space, in quoted rows of at most
100 characters that Python joins into one string: about half the size of tuple
literals, and as easy to diff.  A generated module reads its tables back with
``pairs``, ``triples`` (fixed widths) or ``groups`` (any width), which give the
tuples exactly as they were written.

Cost: O(size of the text); ``pairs`` and ``triples`` convert the numbers with
``map`` and pair them with ``zip``, both C loops on either interpreter.
"""

from itertools import repeat

__all__ = ["pairs", "triples", "groups", "text_rows"]

ROW_WIDTH = 100


def pairs(text):
    """The pairs written in ``text`` (``A:B A:B ...``, in hex)."""
    return _fixed_width(text, 2)


def triples(text):
    """The triples written in ``text`` (``A:B:C A:B:C ...``, in hex)."""
    return _fixed_width(text, 3)


def _fixed_width(text, width):
    numbers = map(int, text.replace(":", " ").split(), repeat(16))
    return tuple(zip(*[numbers] * width))  # ``width`` numbers at a time from the one iterator


def groups(text):
    """The tuples, of any lengths, written in ``text`` (``A:B A:B:C ...``, in hex)."""
    return tuple(tuple(int(x, 16) for x in group.split(":")) for group in text.split())


def text_rows(tuples, indent):
    """The source lines that write ``tuples`` for ``pairs``, ``triples`` or ``groups``: quoted
    rows after ``indent``, each at most ``ROW_WIDTH`` characters and ending in a space."""
    rows, row = [], ""
    for t in tuples:
        item = ":".join("%X" % x for x in t) + " "
        if row and len(indent) + len(row) + len(item) + 2 > ROW_WIDTH:
            rows.append('%s"%s"' % (indent, row))
            row = ""
        row += item
    if row:
        rows.append('%s"%s"' % (indent, row))
    return rows
