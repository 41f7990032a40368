"""Special tokens: split text on them before pre-tokenization.

Special tokens are matched leftmost first and, among those starting at the
same position, longest first (a regex alternation sorted by length, longest
first, gives exactly that).  Matching is literal, so it works the same on
``str`` and on UTF-8 ``bytes``: an encoded token can only match at a character
boundary, because UTF-8 is self-synchronising.
"""

import re

__all__ = ["special_pattern", "split_specials"]


def special_pattern(special_tokens, as_bytes=False):
    """A compiled alternation of ``special_tokens``, longest first, or None."""
    tokens = sorted(set(special_tokens or ()), key=lambda t: (-len(t.encode("utf-8")), t))
    tokens = [t for t in tokens if t]
    if not tokens:
        return None
    if as_bytes:
        return re.compile(b"|".join(re.escape(t.encode("utf-8")) for t in tokens))
    return re.compile("|".join(re.escape(t) for t in tokens))


def split_specials(text, pattern):
    """Yield ``(segment, is_special)`` pairs covering ``text`` in order.

    Empty text segments are skipped.  ``pattern`` comes from ``special_pattern``
    (bytes or str to match ``text``) or is None for "no special tokens".
    """
    if pattern is None:
        if text:
            yield text, False
        return
    pos = 0
    for m in pattern.finditer(text):
        start, end = m.span()
        if start > pos:
            yield text[pos:start], False
        yield text[start:end], True
        pos = end
    if pos < len(text):
        yield text[pos:], False
