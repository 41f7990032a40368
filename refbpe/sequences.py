"""Input cut into sequences, and the pre-tokens of the sequences counted, in one process.

A trainer pre-tokenizes each *sequence* on its own, so where the input is cut
changes the word table.  refbpe's own reading (``count``) cuts each file at
its special tokens; HF's ``tokenizer.train([files])`` reads each line (with its
newline) as a sequence and leaves special tokens in the text, and HF's
``ByteLevel(add_prefix_space=True)`` puts a space before every sequence that
does not start with one.  The cuts:

    documents   each text cut at the special tokens, which are dropped; every
                piece is a sequence, empty ones included (as ``text.split(T)``)
    lines       each text cut after every ``\\n``; a last line without one is a
                sequence too; special tokens stay in the text
    items       each text is one sequence as it is (an iterator's items)

Cost: one pass over the text per step (cut, then scan); the text of one file
is in memory at a time.  This path runs in the calling process; refbpe's
parallel reader (``count.count_words``) is used instead wherever it gives the
same table (documents, the GPT-2 pattern, no prefix space).
"""

from .patterns import get_pattern
from .pretokenize import add_small_counts
from .specials import special_pattern

__all__ = ["SEQUENCE_CUTS", "cut_sequences", "count_sequences", "count_texts"]

SEQUENCE_CUTS = ("documents", "lines", "items")


def cut_sequences(text, cut, special_tokens=()):
    """The sequences of ``text`` (a str) under ``cut`` (see the module docstring)."""
    if cut == "items":
        return [text]
    if cut == "lines":
        lines = text.split("\n")
        last = lines.pop()
        return [line + "\n" for line in lines] + ([last] if last else [])
    if cut == "documents":
        pattern = special_pattern(special_tokens)
        return [text] if pattern is None else pattern.split(text)
    raise ValueError("unknown sequence cut %r (known: %s)" % (cut, ", ".join(SEQUENCE_CUTS)))


def count_sequences(sequences, pattern=None, add_prefix_space=False, counts=None):
    """Add the pre-token counts of every sequence (a str) to ``counts`` (bytes -> int).

    ``add_prefix_space``: a space is put before a sequence that does not start
    with one (HF's ``ByteLevel``); an empty sequence stays empty, as in HF.
    """
    scanner = get_pattern(pattern)
    if counts is None:
        counts = {}
    small = {}
    for seq in sequences:
        if add_prefix_space and seq and not seq.startswith(" "):
            seq = " " + seq
        if seq:
            scanner.count_pretokens(seq.encode("utf-8", "surrogatepass"), counts, small)
    return add_small_counts(small, counts)


def count_texts(texts, cut, special_tokens=(), pattern=None, add_prefix_space=False):
    """``{pre-token bytes: count}`` of ``texts`` (strs), each cut into sequences by ``cut``."""
    counts = {}
    for text in texts:
        count_sequences(cut_sequences(text, cut, special_tokens), pattern, add_prefix_space, counts)
    return counts
