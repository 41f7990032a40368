"""Where a text may be cut without changing its pieces: each split pattern's rule.

Counting chunks separately and adding the counts equals counting the whole
input when every cut ``c`` satisfies both (``corpus.io`` applies them):

1. The pieces on both sides of ``c`` are the same whether or not the text
   is cut there (the pattern's rule, below), or a special token's bytes start
   at ``c``.
2. No occurrence of any special token straddles ``c`` (``corpus.io.is_safe_cut``).

Each rule is a compiled ``re`` bytes search whose match *ends* at a candidate
cut; ``Pattern.cut_points`` holds its pattern's.

``gpt2``: a byte ``\\t \\n \\v \\f \\r`` standing alone between two ASCII
non-whitespace bytes (in the whole text that character is a piece of its own,
by the last alternative ``\\s+``; at the end of a chunk it is one too, and it
is not U+0020, so it never glues onto the next word; matches never look
behind).  A longer whitespace run would not do: at the end of a chunk
``\\s+(?!\\S)`` takes all of it, in the whole text all but its last character.

The GPT-4 family (``cl100k_base``, ``llama3``, ``o200k_base``): a tab or
vertical whitespace before a letter is that word's prefix there (``"\\tx"`` is
one piece), so only a lone CR or LF between two ASCII non-whitespace bytes is
a cut (no word takes one; a punctuation run that takes it stops before the
next, non-space byte; at the end of a chunk it is the same piece).  For
``o200k_base`` the byte after it must not be ``/``, which a punctuation run
would take with the newline (``[\\r\\n/]*``).

Any other pattern (``Pattern.from_regex``): the rule ``regex_cuts`` derives
from the pattern, with its proof (for nanochat's pattern: a newline between
an ASCII letter or digit and an ASCII non-space, as above); when it finds
none (a pattern with an anchor, say), ``NO_CUTS``, so texts are cut only at
special tokens and between inputs.  That is always exact (a match never
spans a special token, each segment is matched on its own, and anchors see
the segment's ends), and costs parallelism: a file without special tokens is
one work unit, held in memory whole.
"""

import re

__all__ = ["WHITESPACE_CUT", "NEWLINE_CUT", "NEWLINE_CUT_NOT_BEFORE_SLASH", "DIGIT_CUT", "NO_CUTS"]

# A whitespace byte other than U+0020 between two ASCII bytes that are not
# whitespace for the pattern (U+001C..U+001F are not \s).
WHITESPACE_CUT = re.compile(
    b"(?<=[\\x00-\\x08\\x0e-\\x1f\\x21-\\x7f])[\\t\\n\\x0b\\x0c\\r](?=[\\x00-\\x08\\x0e-\\x1f\\x21-\\x7f])"
)

# The GPT-4 family: a lone CR or LF between ASCII non-whitespace bytes (o200k: not before "/").
NEWLINE_CUT = re.compile(
    b"(?<=[\\x00-\\x08\\x0e-\\x1f\\x21-\\x7f])[\\n\\r](?=[\\x00-\\x08\\x0e-\\x1f\\x21-\\x7f])"
)
NEWLINE_CUT_NOT_BEFORE_SLASH = re.compile(
    b"(?<=[\\x00-\\x08\\x0e-\\x1f\\x21-\\x7f])[\\n\\r](?=[\\x00-\\x08\\x0e-\\x1f\\x21-\\x2e\\x30-\\x7f])"
)

# SuperBPE's stage 2 keeps text between its matches whole (newlines and single spaces too), so
# a piece ends for sure only at a digit run: after an ASCII digit before an ASCII non-digit
# (the run's grouping in threes is the same in both parts), or after an ASCII letter before a
# digit.  No match crosses either, and neither part's matches look past the cut.
DIGIT_CUT = re.compile(b"[0-9](?=[\\x00-\\x2f\\x3a-\\x7f])|[A-Za-z](?=[0-9])")

# Never matches: only special tokens and input boundaries cut.
NO_CUTS = re.compile(b"(?!)")
