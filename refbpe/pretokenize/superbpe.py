"""SuperBPE's two pre-tokenizations (Liu et al. 2025), as its official trainer sets them.

The official scripts (``scripts/train_tokenizer.sh``, ``scripts/extend_tokenizer.sh``)
build HF's ``Sequence[Split(Regex(R), behavior="isolated"), ByteLevel(add_prefix_space=False,
use_regex=False)]``: the pieces are the regex's matches *and* the stretches between
them (``isolated``), and ByteLevel only maps bytes.

    superbpe-stage1  R1, whitespace pre-tokenization: o200k's word classes without its
                     contractions; a word takes at most one leading non-letter
    superbpe-stage2  R2 = ``\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]{2,}[\\r\\n/]*| +(?!\\S)``: only
                     digit runs, runs of 2+ punctuation and trailing spaces are cut out;
                     everything between them (words with the single spaces between
                     them, single punctuation, newlines) is one piece, a superword

Unlike the hand-written scanners of ``patterns`` these run the ``regex`` module
(HF runs Oniguruma), so the Unicode classes are the installed ``regex``'s, not
refbpe's pinned tables; they are not in ``patterns.pattern_names()`` for that
reason, and ``patterns.get_pattern`` finds them by name.

Example: ``"Hello, world!!  42\\n"`` in stage 2 is ``"Hello, world"``, ``"!!"``,
``" "``, ``" "``, ``"42"``, ``"\\n"`` (the space before ``42`` is followed by a
non-space, so it is not cut: it joins the gap, here alone).

Cost: one regex pass plus one UTF-8 offset pass, O(len(data)).
"""

from __future__ import annotations

from typing import List

import regex

__all__ = ["STAGE1_PATTERN", "STAGE2_PATTERN", "stage1_piece_ends", "stage2_piece_ends"]

STAGE1_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
STAGE2_PATTERN = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"

_STAGE1 = regex.compile(STAGE1_PATTERN)
_STAGE2 = regex.compile(STAGE2_PATTERN)


def _isolated_ends(compiled, data: bytes) -> List[int]:
    """Byte end offsets of the matches of ``compiled`` and of the gaps between them."""
    text = data.decode("utf-8", "surrogatepass")
    char_ends = []
    at = 0
    for m in compiled.finditer(text):
        start, end = m.span()
        if start > at:
            char_ends.append(start)
        if end > start:
            char_ends.append(end)
        at = end
    if at < len(text):
        char_ends.append(len(text))
    if len(data) == len(text):  # ASCII: characters are bytes
        return char_ends
    byte_ends, pos, done = [], 0, 0
    for end in char_ends:
        pos += len(text[done:end].encode("utf-8", "surrogatepass"))
        done = end
        byte_ends.append(pos)
    return byte_ends


def stage1_piece_ends(data: bytes) -> List[int]:
    """End offsets of the stage-1 pieces of UTF-8 ``data``.

    >>> stage1_piece_ends(b"Hello, world")
    [5, 6, 12]
    """
    return _isolated_ends(_STAGE1, data)


def stage2_piece_ends(data: bytes) -> List[int]:
    """End offsets of the stage-2 pieces of UTF-8 ``data``.

    >>> stage2_piece_ends(b"Hello, world!!  42")
    [12, 14, 15, 16, 18]
    """
    return _isolated_ends(_STAGE2, data)
