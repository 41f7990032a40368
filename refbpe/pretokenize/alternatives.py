"""Which alternative of a split pattern produced a pre-token (for ``verify``'s explanations).

``alternative(pattern, data, start, end)`` names the alternative of the
pattern's regex that matched ``data[start:end]``, a piece the pattern's scanner
produced from ``data`` (the whole text, because the whitespace alternatives
look at what follows).  Decided from the piece's classes alone, as the
scanners decide it:

* a contraction: ``'`` and ``s d m t``, ``ll ve re`` (any case for the GPT-4
  family) at the start of a piece that is nothing else;
* a word: the piece holds a letter (o200k: a letter or a mark; its first
  alternative when the word, without a trailing contraction, holds an L
  character: ``\\p{Ll}``, ``\\p{Lm}``, ``\\p{Lo}`` or ``\\p{M}``, its second when
  it holds none, since the second is tried only when the first failed);
* a number run, or a run of "other" (with its optional U+0020 and trailing
  newlines);
* whitespace: by whether it ends the text, holds CR/LF, or is followed by
  whitespace (``\\s+(?!\\S)``) or by a non-space (the last alternative).

Classes are read in the pattern's Unicode version (``Pattern.unicode``).
``tests/test_alternatives.py`` holds this to ``regex`` with each alternative
in a capturing group.  Cost: O(length of the piece).
"""

from .gpt2 import LETTER, NUMBER, OTHER, SPACE
from .o200k import O200K_ALTERNATIVES, U, flag_table
from .o200k import L as L_FLAG
from .patterns import get_pattern
from .unicode_tables import class_table

__all__ = ["alternatives", "alternative"]

_GPT2 = [
    r"""'(?:[sdmt]|ll|ve|re)""",
    r""" ?\p{L}+""",
    r""" ?\p{N}+""",
    r""" ?[^\s\p{L}\p{N}]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
]
_CL100K = [
    r"""'(?i:[sdmt]|ll|ve|re)""",
    r"""[^\r\n\p{L}\p{N}]?+\p{L}++""",
    r"""\p{N}{1,3}+""",
    r""" ?[^\s\p{L}\p{N}]++[\r\n]*+""",
    r"""\s++$""",
    r"""\s*[\r\n]""",
    r"""\s+(?!\S)""",
    r"""\s""",
]
_LLAMA3 = [
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)""",
    r"""[^\r\n\p{L}\p{N}]?\p{L}+""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
]


_O200K = O200K_ALTERNATIVES
_ALTERNATIVES = {"gpt2": _GPT2, "cl100k_base": _CL100K, "llama3": _LLAMA3, "o200k_base": _O200K}


def alternatives(pattern):
    """The alternatives of ``pattern``'s regex, in order (``"|".join`` of them is the regex)."""
    return list(_ALTERNATIVES[get_pattern(pattern).name])


def _chars(data, start, end):
    """Code points of ``data[start:end]`` (valid UTF-8)."""
    return [ord(c) for c in data[start:end].decode("utf-8", "surrogatepass")]


def _space_alternative(name, data, cps, end, class_of):
    at_end = end == len(data)
    has_newline = 0x0A in cps or 0x0D in cps
    followed_by_space = not at_end and class_of[_next_cp(data, end)] == SPACE
    if name == "cl100k_base" and at_end:
        return 4  # \s++$
    if has_newline and name != "gpt2":
        return {"cl100k_base": 5, "llama3": 4, "o200k_base": 4}.get(name)
    if at_end or followed_by_space:
        return {"gpt2": 4, "cl100k_base": 6, "llama3": 5, "o200k_base": 5}[name]
    return {"gpt2": 5, "cl100k_base": 7, "llama3": 6, "o200k_base": 6}[name]


def _next_cp(data, i):
    b = data[i]
    width = 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4
    return ord(data[i : i + width].decode("utf-8", "surrogatepass"))


def _is_contraction(cps, any_case):
    if len(cps) < 2 or cps[0] != 0x27:
        return False
    rest = "".join(chr(c) for c in cps[1:])
    if any_case:
        rest = rest.replace("\u017f", "s").lower()
    return rest in ("s", "d", "m", "t", "ll", "ve", "re")


def alternative(pattern, data, start, end):
    """(index, regex text) of the alternative that produced the piece ``data[start:end]``;
    None for a pattern given as a regex (only the scanners' alternatives are known)."""
    split = get_pattern(pattern)
    if split.name not in _ALTERNATIVES:
        return None
    alts = alternatives(split.name)
    cps = _chars(data, start, end)
    index = _index(split.name, data, cps, end, class_table(split.unicode), flag_table(split.unicode))
    return index, alts[index]


def _index(name, data, cps, end, class_of, flags_of):
    classes = [class_of[c] for c in cps]
    if name == "o200k_base":
        return _o200k_index(data, cps, end, class_of, flags_of)
    if _is_contraction(cps, name != "gpt2"):
        return 0
    if LETTER in classes:
        return 1
    body = classes[1:] if len(cps) > 1 and cps[0] == 0x20 else classes
    if body[0] == NUMBER:
        return 2
    if body[0] == OTHER:
        return 3
    return _space_alternative(name, data, cps, end, class_of)


def _o200k_index(data, cps, end, class_of, flags_of):
    flags = [flags_of[c] for c in cps]
    # A word starts with a U or L character, or with a prefix and then one: a
    # run of "other" never has one there, or a word alternative would have matched.
    prefixed = len(cps) > 1 and cps[0] not in (0x0A, 0x0D) and class_of[cps[0]] not in (LETTER, NUMBER)
    if flags[0] & (U | L_FLAG) or (prefixed and flags[1] & (U | L_FLAG)):
        word = list(flags)
        if len(cps) >= 3 and _is_contraction(cps[-3:], True) and any(f & (U | L_FLAG) for f in word[:-3]):
            word = word[:-3]
        elif len(cps) >= 2 and _is_contraction(cps[-2:], True) and any(f & (U | L_FLAG) for f in word[:-2]):
            word = word[:-2]
        if any(f & L_FLAG for f in word):
            return 0
        return 1
    classes = [class_of[c] for c in cps]
    body = classes[1:] if len(cps) > 1 and cps[0] == 0x20 else classes
    if body[0] == NUMBER:
        return 2
    if body[0] != SPACE:
        return 3
    return _space_alternative("o200k_base", data, cps, end, class_of)
