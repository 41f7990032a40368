"""The split patterns refbpe speaks, by name: each a hand-written scanner.

    gpt2         GPT-2's pattern (``gpt2``): the CS336 default
    cl100k_base  GPT-4's, as tiktoken writes it today (``cl100k``)
    llama3       Llama 3's, cl100k's original form before tiktoken 0.8 (and
                 rustbpe's/nanochat's ``GPT4_PATTERN``); it differs from
                 ``cl100k_base`` only on a whitespace run holding a newline at
                 the very end of the text (``"x\\n  "``)
    o200k_base   GPT-4o's (``o200k``)

A ``Pattern`` bundles the regex text (``regex`` module syntax, for exports and
for the tests that hold each scanner to it) and the scanner, ``piece_ends(data)``
(the end offsets of the pieces of UTF-8 ``data``).  What every caller wants of
a scanner is written here once, over ``piece_ends``: the pieces as ``bytes``
(``pretokenize``) or ``str`` (``pretokenize_str``), and their counts
(``count_pretokens``).  (Importing this module builds the scanners' class
tables, 1.1 MB each: about 50 ms on CPython.)
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Union

from . import cl100k, gpt2, o200k
from .gpt2 import count_pieces

__all__ = ["Pattern", "get_pattern", "pattern_names"]

DEFAULT_PATTERN = "gpt2"


class Pattern(object):
    """A named split pattern: ``name``, ``regex`` (its text) and its scanner.

    ``piece_ends(data)`` gives the end offsets of the pre-tokens of UTF-8
    ``data``; the other methods build on it.  Cost: every method is one pass
    over the data, O(len(data)).

    >>> gpt2 = get_pattern("gpt2")
    >>> gpt2.pretokenize_str("I've 12345 apples"), gpt2.piece_ends(b"I've 12345 apples")
    (['I', "'ve", ' 12345', ' apples'], [1, 4, 10, 17])
    """

    def __init__(self, name: str, regex: str, piece_ends: Callable[[bytes], List[int]]) -> None:
        self.name = name
        self.regex = regex
        self.piece_ends = piece_ends

    def pretokenize(self, data: bytes, out: Optional[List[bytes]] = None) -> List[bytes]:
        """The pre-tokens of UTF-8 ``data`` as ``bytes``, appended to ``out`` (a new list by default).

        ``b"".join(pretokenize(data)) == data`` always holds::

            >>> get_pattern("gpt2").pretokenize(b"I'm  here")
            [b'I', b"'m", b' ', b' here']
        """
        if out is None:
            out = []
        start = 0
        for end in self.piece_ends(data):
            out.append(data[start:end])
            start = end
        return out

    def pretokenize_str(self, text: str) -> List[str]:
        """Pre-tokens of ``text`` as ``str`` (for tests and debugging)."""
        data = text.encode("utf-8", "surrogatepass")
        return [p.decode("utf-8", "surrogatepass") for p in self.pretokenize(data)]

    def count_pretokens(
        self, data: bytes, counts: Optional[Dict[bytes, int]] = None, small: Optional[Dict[int, int]] = None
    ) -> Dict[bytes, int]:
        """Add the pre-token counts of UTF-8 ``data`` to ``counts`` (bytes -> int; a new
        dict by default); given ``small``, pieces under 8 bytes are left there under
        packed int keys (``gpt2.count_pieces``)."""
        return count_pieces(data, self.piece_ends(data), counts, small)

    def __repr__(self) -> str:
        return "Pattern(%r)" % self.name


_PATTERNS = {
    p.name: p
    for p in (
        Pattern("gpt2", gpt2.GPT2_PATTERN, gpt2.piece_ends),
        Pattern("cl100k_base", cl100k.CL100K_PATTERN, cl100k.piece_ends),
        Pattern("llama3", cl100k.LLAMA3_PATTERN, cl100k.llama3_piece_ends),
        Pattern("o200k_base", o200k.O200K_PATTERN, o200k.piece_ends),
    )
}


def pattern_names() -> List[str]:
    """The known names, the default first.  Cost: O(1) (four names).

    >>> pattern_names()
    ['gpt2', 'cl100k_base', 'llama3', 'o200k_base']
    """
    return [DEFAULT_PATTERN] + sorted(n for n in _PATTERNS if n != DEFAULT_PATTERN)


def get_pattern(name: Union[str, Pattern, None] = None) -> Pattern:
    """The ``Pattern`` called ``name`` (None: the default); a ``Pattern`` is returned as is.

    ValueError for an unknown name.  Cost: O(1), a dict lookup.

    >>> get_pattern("cl100k_base").pretokenize_str("I've 12345 apples")
    ['I', "'ve", ' ', '123', '45', ' apples']
    """
    if isinstance(name, Pattern):
        return name
    try:
        return _PATTERNS[DEFAULT_PATTERN if name is None else name]
    except (KeyError, TypeError):
        raise ValueError("unknown pattern %r (known: %s)" % (name, ", ".join(pattern_names())))
