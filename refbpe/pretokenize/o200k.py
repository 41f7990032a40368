"""GPT-4o (``o200k_base``) pre-tokenization: a scanner over UTF-8 bytes.

tiktoken's pattern, with the meaning the ``regex`` module gives it (``U`` is
``[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]``, ``L`` is ``[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]``,
``C`` is ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``, ``P`` is ``[^\\r\\n\\p{L}\\p{N}]``)::

    P?U*L+C? | P?U+L*C? | \\p{N}{1,3} | ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]* | \\s*[\\r\\n]+ | \\s+(?!\\S) | \\s+

Classes come from one Unicode version's ``unicode_tables.category_table``
(``flag_table``), as bit flags: U, L, ``\\p{L}``, ``\\p{N}``, ``\\s``.  A mark
(``\\p{M}``) is U and L but not ``\\p{L}``, so it is also a P (it can prefix a
word) and "other" for rule 4.  The backtracking of the two word alternatives,
unrolled (``a`` is where U* starts: after the prefix, or at the match start
without it; ``k`` ends the maximal U run):

1. ``P?U*L+``: if the character at ``k`` is an L, the word runs to the end of
   the L run from ``k``; else U* gives back characters until its last L
   character: the word ends after the last L in ``[a, k)``; with none, no
   match at this ``a``.
2. ``P?U+L*`` is tried only when 1 failed with and without the prefix, so
   the L run after ``k`` is empty: the word is ``[a, k)`` if not empty.

In the regex order (prefix first, then without): a match starting at a mark
``m`` whose prefixed attempt fails is ``m`` alone (without the prefix, U*L+
ends at its last L, which is ``m`` itself).  After a word, a contraction
(any case; U+017F LONG S is an ``s``: ``contractions``) is taken when present.  Then:

3. One to three numbers.
4. An optional U+0020, a maximal run of ``[^\\s\\p{L}\\p{N}]``, then any bytes
   of ``\\r \\n /``.
5. Whitespace run ``[i, k)``: up to its last CR or LF if it has one; else to
   the end of the text if it gets there; else all but its last character, or
   the one character.

Matches never look behind.  Cost: the U* give-back is remembered during the
forward scan (the end of the last L seen), so each byte is read O(1) times:
O(n) for ``n`` bytes.
"""

from .._util.lists import list_with_room
from .contractions import contraction_end
from .gpt2 import decode_at as _decode_at
from .unicode_tables import category_table, unicode_version

__all__ = [
    "O200K_PATTERN",
    "O200K_ALTERNATIVES",
    "piece_ends",
    "piece_ends_without_contractions",
    "FLAGS_OF",
    "flag_table",
    "U",
    "L",
    "LETTER",
    "NUMBER",
    "SPACE",
    "NOT_OTHER",
]

O200K_ALTERNATIVES = [
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
]
O200K_PATTERN = "|".join(O200K_ALTERNATIVES)

U, L, LETTER, NUMBER, SPACE = 1, 2, 4, 8, 16
# _unicode_categories classes: other, Ll, Lu/Lt, Lm/Lo, M, N, \s.
_FLAGS = (0, L | LETTER, U | LETTER, U | L | LETTER, U | L, NUMBER, SPACE)
NOT_OTHER = SPACE | LETTER | NUMBER  # rule 4's [^\s\p{L}\p{N}] has none of these


_FLAG_TABLES = {}


def flag_table(version=None):
    """The flags of every code point in Unicode ``version`` (None: the latest), built once."""
    version = unicode_version(version)
    if version not in _FLAG_TABLES:
        _FLAG_TABLES[version] = category_table(version).translate(bytes(_FLAGS) + bytes(256 - len(_FLAGS)))
    return _FLAG_TABLES[version]


FLAGS_OF = flag_table()

_APOSTROPHE, _SPACE, _LF, _CR, _SLASH = 0x27, 0x20, 0x0A, 0x0D, 0x2F


def _after_contraction(data, e, n):
    """``e`` moved past a contraction starting at ``e``, if one does."""
    if e + 1 < n and data[e] == _APOSTROPHE:
        return contraction_end(data, e, n) or e
    return e


def piece_ends(data, table=FLAGS_OF):
    """End offsets of the o200k_base pre-tokens of UTF-8 ``data``, in order (``table``: a ``flag_table``)."""
    return _scan(data, _after_contraction, table)


def piece_ends_without_contractions(data, table=FLAGS_OF):
    """The same pattern without its contractions (``C``): SuperBPE's stage 1 (``superbpe``)."""
    return _scan(data, _no_contraction, table)


def _no_contraction(data, e, n):
    return e


def _scan(data, after_word, table):
    """``piece_ends`` with ``after_word(data, e, n)`` moving a word's end past what may follow it."""
    ends = list_with_room(len(data) >> 2)
    append = ends.append
    n = len(data)
    i = 0
    while i < n:
        b = data[i]
        if b < 0x80:
            f, w = table[b], 1
        else:
            cp, w = _decode_at(data, i, b)
            f = table[cp]
        j = i + w
        if f & LETTER or not (f & NUMBER or b == _LF or b == _CR):
            # A word: from a letter without a prefix; else alternative 1 after the prefix
            # P, then (a mark) without it, then 2.  ``_word_end`` inlined: PyPy's JIT does
            # not inline a function holding a loop, and the call per word made o200k's
            # scan 1.7-2.7x slower (perf/encode_profile.py, scan column; english 2.7x).
            k = i if f & LETTER else j  # where U* starts
            last_l_end = e = 0
            while k < n:  # the U run
                c = data[k]
                if c < 0x80:
                    g, v = table[c], 1
                else:
                    cp, v = _decode_at(data, k, c)
                    g = table[cp]
                if not g & U:
                    if g & L:  # L+ from k: the maximal L run (in ASCII, L is a-z)
                        e = k + v
                        while e < n:
                            c = data[e]
                            if c < 0x80:
                                if not 0x61 <= c <= 0x7A:
                                    break
                                e += 1
                            else:
                                cp, v = _decode_at(data, e, c)
                                if not table[cp] & L:
                                    break
                                e += v
                    break
                k += v
                if g & L:
                    last_l_end = k
            if not e:
                e = last_l_end  # U* gives back characters up to its last L
            if not e:
                if f & LETTER:
                    e = k
                elif f & U:
                    e = j  # a mark: U*L+ without the prefix ends after the mark itself
                elif k > j:
                    e = k
            if e:
                if e + 1 < n and data[e] == _APOSTROPHE:
                    e = after_word(data, e, n)
                append(e)
                i = e
                continue
        if f & NUMBER:
            count = 1
            while count < 3 and j < n:
                b = data[j]
                if b < 0x80:
                    if not table[b] & NUMBER:
                        break
                    j += 1
                else:
                    cp, w = _decode_at(data, j, b)
                    if not table[cp] & NUMBER:
                        break
                    j += w
                count += 1
            append(j)
            i = j
            continue
        if not f & NOT_OTHER or (b == _SPACE and j < n and _is_other_at(data, j, table)):
            if f & NOT_OTHER:
                j = _char_end(data, j)
            while j < n:
                b = data[j]
                if b < 0x80:
                    if table[b] & NOT_OTHER:
                        break
                    j += 1
                else:
                    cp, w = _decode_at(data, j, b)
                    if table[cp] & NOT_OTHER:
                        break
                    j += w
            while j < n and (data[j] == _LF or data[j] == _CR or data[j] == _SLASH):
                j += 1
            append(j)
            i = j
            continue
        # Rule 5 for the whitespace run from i, inlined as the word rules are (python_code
        # scans 1.25x faster: perf/encode_profile.py, scan column).
        last = i  # where the run's last character starts
        after_newline = j if b == _LF or b == _CR else 0
        while j < n:
            b = data[j]
            if b < 0x80:
                if not table[b] & SPACE:
                    break
                last = j
                j += 1
                if b == _LF or b == _CR:
                    after_newline = j
            else:
                cp, w = _decode_at(data, j, b)
                if not table[cp] & SPACE:
                    break
                last = j
                j += w
        if after_newline:
            j = after_newline  # \s*[\r\n]+
        elif j < n and last > i:
            j = last  # \s+(?!\S)
        append(j)
        i = j
    return ends


def _is_other_at(data, j, table):
    b = data[j]
    if b < 0x80:
        return not table[b] & NOT_OTHER
    cp, _ = _decode_at(data, j, b)
    return not table[cp] & NOT_OTHER


def _char_end(data, j):
    b = data[j]
    return j + (1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4)
