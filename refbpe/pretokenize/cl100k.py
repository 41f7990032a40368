"""GPT-4 (``cl100k_base``) and Llama 3 pre-tokenization: a scanner over UTF-8 bytes.

tiktoken's pattern, with the meaning the ``regex`` module gives it::

    '(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+|
     ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s

Llama 3's original (tiktoken before 0.8, also rustbpe's ``GPT4_PATTERN``)
lacks ``\\s++$``; the two differ only on a whitespace run that holds a
newline and reaches the end of the text (``"x\\n  "``: cl100k ``x|\\n  ``,
Llama 3 ``x|\\n|  ``).  The classes are GPT-2's (``_unicode_table``: letter,
number, whitespace, other; marks are "other"), so the pinned table is shared.
At a match start, in the pattern's order:

1. ``'`` and ``s d m t`` or ``ll ve re`` in any case (``(?i)`` folds simply:
   U+017F LONG S is an ``s``) is a contraction (``contractions``).
2. One optional character that is not CR, LF, letter or number, then a
   maximal letter run: a word.  (Possessive, but no backtracking would
   change it: the prefix is never a letter.)
3. One to three numbers.
4. An optional U+0020, a maximal run of "other", then any CR/LF bytes.
5. Whitespace run ``[i, k)``: to the end of the text, all of it (cl100k);
   else up to its last CR or LF if it has one; else, reaching the end, all of
   it (Llama 3); else all but its last character, or the one character.

Each match depends only on the text from its start and at most two
characters after its end, as for GPT-2 (see ``tokenizer``), and never looks
behind.  Cost: one pass, each byte read O(1) times, O(n) for ``n`` bytes.
"""

from .._util.lists import list_with_room
from .contractions import contraction_end
from .gpt2 import CLASS_OF, LETTER, NUMBER, OTHER, SPACE
from .gpt2 import decode_at as _decode_at

__all__ = ["CL100K_PATTERN", "LLAMA3_PATTERN", "piece_ends", "llama3_piece_ends"]

CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
    r"""\s*[\r\n]|\s+(?!\S)|\s"""
)
LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
    r"""\s*[\r\n]+|\s+(?!\S)|\s+"""
)

_APOSTROPHE, _SPACE, _LF, _CR = 0x27, 0x20, 0x0A, 0x0D


def piece_ends(data, table=CLASS_OF):
    """End offsets of the cl100k_base pre-tokens of UTF-8 ``data``, in order (``table``: as GPT-2's)."""
    return _scan(data, True, table)


def llama3_piece_ends(data, table=CLASS_OF):
    """End offsets of the Llama 3 (original cl100k) pre-tokens of UTF-8 ``data``."""
    return _scan(data, False, table)


def _scan(data, whole_run_at_end, table=CLASS_OF):
    ends = list_with_room(len(data) >> 2)
    append = ends.append
    n = len(data)
    i = 0
    while i < n:
        b = data[i]
        if b < 0x80:
            cls, w = table[b], 1
            if b == _APOSTROPHE and i + 1 < n:
                j = contraction_end(data, i, n)
                if j:
                    append(j)
                    i = j
                    continue
        else:
            cp, w = _decode_at(data, i, b)
            cls = table[cp]
        j = i + w
        if cls == LETTER:
            pass  # rule 2 without the prefix: the letter run continues below
        elif cls == NUMBER:
            # Rule 3: at most three numbers.
            count = 1
            while count < 3 and j < n:
                b = data[j]
                if b < 0x80:
                    if table[b] != NUMBER:
                        break
                    j += 1
                else:
                    cp, w = _decode_at(data, j, b)
                    if table[cp] != NUMBER:
                        break
                    j += w
                count += 1
            append(j)
            i = j
            continue
        else:
            # OTHER or SPACE: rule 2 with a prefix, else rule 4, else rule 5.
            next_cls = -1
            if j < n and b != _LF and b != _CR:
                b1 = data[j]
                if b1 < 0x80:
                    next_cls, w1 = table[b1], 1
                else:
                    cp, w1 = _decode_at(data, j, b1)
                    next_cls = table[cp]
                if next_cls == LETTER:
                    j += w1
                    cls = LETTER
            if cls != LETTER:
                # Rules 4 and 5 inlined, as the letter run below: PyPy's JIT does not inline
                # a function holding a loop (python_code scans 1.55x faster, chinese 1.2x:
                # perf/encode_profile.py, scan column).
                if cls == OTHER or (b == _SPACE and next_cls == OTHER):
                    if cls != OTHER:
                        j += w1
                    while j < n:  # the run of "other"
                        b = data[j]
                        if b < 0x80:
                            if table[b] != OTHER:
                                break
                            j += 1
                        else:
                            cp, w = _decode_at(data, j, b)
                            if table[cp] != OTHER:
                                break
                            j += w
                    while j < n and (data[j] == _LF or data[j] == _CR):
                        j += 1
                    append(j)
                    i = j
                    continue
                last = i  # where the whitespace run's last character starts
                after_newline = j if b == _LF or b == _CR else 0
                while j < n:
                    b = data[j]
                    if b < 0x80:
                        if table[b] != SPACE:
                            break
                        last = j
                        j += 1
                        if b == _LF or b == _CR:
                            after_newline = j
                    else:
                        cp, w = _decode_at(data, j, b)
                        if table[cp] != SPACE:
                            break
                        last = j
                        j += w
                if j == n and whole_run_at_end:
                    pass  # \s++$
                elif after_newline:
                    j = after_newline  # \s*[\r\n]: up to the run's last CR or LF
                elif j < n and last > i:
                    j = last  # \s+(?!\S)
                append(j)
                i = j
                continue
        # A letter run from j (rule 2).
        # (Inlined rather than a helper, as in the GPT-2 scanner: perf/micro.py pretokenize-inline.)
        while j < n:
            b = data[j]
            if b < 0x80:
                if table[b] != LETTER:
                    break
                j += 1
            else:
                cp, w = _decode_at(data, j, b)
                if table[cp] != LETTER:
                    break
                j += w
        append(j)
        i = j
    return ends
