"""Where UTF-8 text can be cut without changing its pre-tokens (or special tokens).

Byte offset x of a text is a *safe cut* when the character before it is not
whitespace and the character at it is (classes as ``pretokenize`` pins them),
and no special-token occurrence spans it.  Every GPT-2 pre-token that holds a
non-space character has whitespace at most as its first character, so a
pre-token boundary always falls there; and the token ending at x ends in a
non-space, so no look-ahead (``\\s+(?!\\S)``) reaches across x.  Hence, for
the reference counting ``f``: ``f(text) == f(text[:x]) + f(text[x:])``.
The two ends of a text are safe too.

This lets a reading variant (lines, chunks, special tokens as text) be
counted as a difference from the reference over small windows around the
places where it reads differently, instead of recounting the corpus.

Only an ASCII whitespace byte is taken as the space at x (a cut before a
non-ASCII space is never offered): fewer safe cuts make windows longer,
never wrong.  Cost: O(distance to the nearest safe cut) per query; text
without ASCII whitespace (e.g. unspaced CJK) makes windows long.  Bytes, not
``str``: PyPy indexes a non-ASCII ``str`` several times slower (measured by
perf/verify_cost.py: reading_delta of english_small's lines, 1.4 s as str).
"""

import bisect
import re

from ..pretokenize.gpt2 import SPACE, char_class

__all__ = ["Cutter", "is_space", "ASCII_SPACE"]

ASCII_SPACE = bytes(1 if char_class(i) == SPACE else 0 for i in range(128))
_SPACE_BYTES = re.escape(bytes(i for i in range(128) if ASCII_SPACE[i]))
_CANDIDATE = re.compile(b"[^" + _SPACE_BYTES + b"][" + _SPACE_BYTES + b"]")


def is_space(c):
    """Whether the ``str`` character ``c`` is whitespace under the pinned classes."""
    i = ord(c)
    return bool(ASCII_SPACE[i]) if i < 128 else char_class(i) == SPACE


class Cutter(object):
    """Safe cuts of one UTF-8 text (``bytes``); ``pattern`` is the bytes special-token pattern or None."""

    def __init__(self, data, pattern):
        self.data = data
        self._before, self._after = {}, {}  # remembered: variants share line ends and chunk ends
        self.starts, self.ends = [], []
        if pattern is not None:
            for m in pattern.finditer(data):
                self.starts.append(m.start())
                self.ends.append(m.end())

    def inside_special(self, x):
        """Whether a special-token occurrence spans x (starts before it, ends after)."""
        i = bisect.bisect_left(self.starts, x) - 1
        return i >= 0 and self.ends[i] > x

    def space_before(self, x):
        """Whether the character ending at byte x - 1 is whitespace."""
        d = self.data
        b = d[x - 1]
        if b < 0x80:
            return ASCII_SPACE[b] == 1
        start = x - 1
        while start > 0 and start > x - 4 and 0x80 <= d[start] < 0xC0:
            start -= 1
        cp = ord(d[start:x].decode("utf-8", "surrogatepass"))
        return char_class(cp) == SPACE

    def space_at(self, x):
        """Whether the character starting at byte x is whitespace."""
        d = self.data
        b = d[x]
        if b < 0x80:
            return ASCII_SPACE[b] == 1
        end = x + 1
        while end < len(d) and end < x + 4 and 0x80 <= d[end] < 0xC0:
            end += 1
        return char_class(ord(d[x:end].decode("utf-8", "surrogatepass"))) == SPACE

    def safe(self, x):
        d = self.data
        if x <= 0 or x >= len(d):
            return True
        b = d[x]
        return b < 0x80 and ASCII_SPACE[b] == 1 and not self.space_before(x) and not self.inside_special(x)

    def before(self, x):
        """The greatest safe cut <= x."""
        y = self._before.get(x)
        if y is None:
            y = x
            while not self.safe(y):
                y -= 1
            self._before[x] = y
        return y

    def after(self, x):
        """The smallest safe cut >= x."""
        y = self._after.get(x)
        if y is None:
            d, y = self.data, x
            while not self.safe(y):
                # Candidates (a byte that is no ASCII space, then one that is) found
                # by ``re`` at C speed, each checked by ``safe``: about 3x faster
                # than a byte loop under CPython (cProfile of reading_delta).
                m = _CANDIDATE.search(d, y)  # y is not safe: the next candidate starts at y or later
                y = m.start() + 1 if m is not None else len(d)
            self._after[x] = y
        return y
