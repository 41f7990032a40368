"""The GPT-4 family's contractions: ``'`` then ``s d m t`` or ``ll ve re``, in any case.

cl100k_base, Llama 3 and o200k_base spell them ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``
(or the same set grouped otherwise).  ``(?i)`` folds simply, so a letter
matches its case variants (``_unicode_categories.CASE_VARIANTS``: U+017F
LONG S is an ``s``), each 1 or 2 bytes of UTF-8.  The tables are module
constants (frozensets of the variants' UTF-8), built once at import; the
scanners' hot loops call ``contraction_end`` only at a ``'``.  Cost: at most
three slice lookups.
(GPT-2's contractions are lower-case only: ``gpt2`` has its own.)

    >>> contraction_end(b"it'S", 2, 4), contraction_end(b"we'LL", 2, 5), contraction_end(b"a'x", 1, 3)
    (4, 5, 0)
"""

from ._unicode_categories import CASE_VARIANTS

__all__ = ["contraction_end"]


def _utf8_set(letters):
    return frozenset(chr(cp).encode("utf-8") for x in letters for cp in CASE_VARIANTS[x])


_ONE_LETTER = _utf8_set("sdmt")  # 's 'd 'm 't
_TWO_LETTERS = frozenset(
    a + b
    for first, second in (("l", "l"), ("v", "e"), ("r", "e"))
    for a in _utf8_set(first)
    for b in _utf8_set(second)
)


def contraction_end(data, i, n):
    """End of the contraction starting with the ``'`` at ``i`` of UTF-8 ``data``, or 0."""
    for w in (1, 2):  # case variants are 1 or 2 bytes (U+017F); try each width
        if data[i + 1 : i + 1 + w] in _ONE_LETTER:
            return i + 1 + w
    if data[i + 1 : i + 3] in _TWO_LETTERS:
        return i + 3
    return 0
