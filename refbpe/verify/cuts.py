"""Where text can be cut without changing its pre-tokens (or special tokens).

Position x of a text is a *safe cut* when the character before it is not
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
Cost: O(distance to the nearest safe cut) per query; text without whitespace
(e.g. unspaced CJK) makes windows long, never wrong.
"""

import bisect

from ..pretokenize import SPACE, char_class

__all__ = ["Cutter"]


class Cutter(object):
    """Safe cuts of one text; ``pattern`` is the special-token pattern or None."""

    def __init__(self, text, pattern):
        self.text = text
        self.starts, self.ends = [], []
        if pattern is not None:
            for m in pattern.finditer(text):
                self.starts.append(m.start())
                self.ends.append(m.end())

    def inside_special(self, x):
        """Whether a special-token occurrence spans x (starts before it, ends after)."""
        i = bisect.bisect_left(self.starts, x) - 1
        return i >= 0 and self.ends[i] > x

    def safe(self, x):
        t = self.text
        if x <= 0 or x >= len(t):
            return True
        return (
            char_class(ord(t[x - 1])) != SPACE
            and char_class(ord(t[x])) == SPACE
            and not self.inside_special(x)
        )

    def before(self, x):
        """The greatest safe cut <= x."""
        while not self.safe(x):
            x -= 1
        return x

    def after(self, x):
        """The smallest safe cut >= x."""
        while not self.safe(x):
            x += 1
        return x
