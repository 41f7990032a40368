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

Both are scanners over UTF-8 bytes with refbpe's pinned Unicode classes (the
official tokenizer runs Oniguruma's): R1 is ``o200k``'s scanner without the
contractions; R2's scanner is here.  ``patterns.get_pattern`` finds them by
name; ``pattern_names()`` leaves them out (they are SuperBPE's, not a model
family's).

R2's scanner, at each position in order (the regex's leftmost-first search):
a number starts up to three numbers; U+0020 followed by two or more "other"
characters (not ``\\s``, ``\\p{L}``, ``\\p{N}``; marks are other), or such a run
alone, takes the run and then any ``\r``, ``\n``, ``/``; a run of U+0020 is
taken whole when whitespace or the end follows it, else all but its last
space (a single space before a non-space is no match).  Anything else is gap
text, which runs until the next match.

Example: ``"Hello, world!!  42\\n"`` in stage 2 is ``"Hello, world"``, ``"!!"``,
``" "``, ``" "``, ``"42"``, ``"\\n"`` (the space before ``42`` is followed by a
non-space, so it is not cut: it joins the gap, here alone).

Cost: each byte is read O(1) times (a punctuation or space run at most twice): O(len(data)).
"""

from __future__ import annotations

from typing import List, Optional

from .gpt2 import decode_at
from .o200k import FLAGS_OF, LETTER, NOT_OTHER, NUMBER, SPACE, piece_ends_without_contractions

__all__ = ["STAGE1_PATTERN", "STAGE2_PATTERN", "stage1_piece_ends", "stage2_piece_ends"]

STAGE1_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
STAGE2_PATTERN = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"

_TAIL = (0x0A, 0x0D, 0x2F)  # \n \r /


def stage1_piece_ends(data: bytes) -> List[int]:
    """End offsets of the stage-1 pieces of UTF-8 ``data`` (o200k without contractions).

    >>> stage1_piece_ends(b"Hello, world don't")
    [5, 6, 12, 16, 18]
    """
    return piece_ends_without_contractions(data)


def stage2_piece_ends(data: bytes) -> List[int]:
    """End offsets of the stage-2 pieces of UTF-8 ``data``: matches and the gaps between.

    >>> stage2_piece_ends(b"Hello, world!!  42")
    [12, 14, 15, 16, 18]
    """
    ends = []
    n = len(data)
    last = i = 0
    while i < n:
        f, w = _flags_at(data, i)
        if f & LETTER:  # a letter starts no match
            i += w
            continue
        e = _match_at(data, i, n, f, w)
        if e is None:
            i += w
            continue
        if i > last:
            ends.append(i)
        ends.append(e)
        last = i = e
    if last < n:
        ends.append(n)
    return ends


def _flags_at(data, i):
    b = data[i]
    if b < 0x80:
        return FLAGS_OF[b], 1
    cp, w = decode_at(data, i, b)
    return FLAGS_OF[cp], w


def _match_at(data, i, n, f, w) -> Optional[int]:
    """The end of R2's match starting at ``i`` (its flags ``f``, width ``w``), or None."""
    if f & NUMBER:
        j, count = i + w, 1
        while count < 3 and j < n:
            g, v = _flags_at(data, j)
            if not g & NUMBER:
                break
            j += v
            count += 1
        return j
    if data[i] == 0x20:
        j, count = _other_run(data, i + 1, n)
        if count >= 2:
            return _tail(data, j, n)
        j = i + 1
        while j < n and data[j] == 0x20:
            j += 1
        if j == n or _flags_at(data, j)[0] & SPACE:
            return j
        return j - 1 if j - 1 > i else None
    if not f & NOT_OTHER:
        j, count = _other_run(data, i, n)
        if count >= 2:
            return _tail(data, j, n)
    return None


def _other_run(data, j, n):
    """(end, characters) of the run of other characters from ``j``."""
    count = 0
    while j < n:
        g, v = _flags_at(data, j)
        if g & NOT_OTHER:
            break
        j += v
        count += 1
    return j, count


def _tail(data, j, n):
    while j < n and data[j] in _TAIL:
        j += 1
    return j
