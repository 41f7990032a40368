"""Counting variants: the word counts another trainer would see, and replays under them.

A count difference at the first divergence often comes from how the other
trainer reads its text (line by line, special tokens as text, a prefix
space).  ``count_variant`` counts the corpus under one such reading;
``replay_consistency`` says how many of their merges each reading explains.
"""

from ..patterns import get_pattern
from ..specials import special_pattern, split_specials
from .replay import PairReplay
from .ties import rule_choices

__all__ = ["VARIANTS", "count_variant", "replay_consistency"]

# (name, description, specials counted as text, line mode, prefix space)
VARIANTS = [
    ("reference", "the reference: whole text, special tokens removed, no prefix space", False, None, False),
    ("specials-as-text", "special tokens counted as ordinary text", True, None, False),
    (
        "lines",
        "reading line by line (each line, newline included, pre-tokenized on its own)",
        False,
        "keep",
        False,
    ),
    (
        "lines+specials-as-text",
        "reading line by line and counting special tokens as text (as HF tokenizers' trainer does)",
        True,
        "keep",
        False,
    ),
    ("lines-stripped", "reading line by line with the newline removed", False, "strip", False),
    (
        "lines-stripped+specials-as-text",
        "line by line without newlines, special tokens counted as text",
        True,
        "strip",
        False,
    ),
    ("prefix-space", "a space added before each text segment (add_prefix_space)", False, None, True),
    ("prefix-space+specials-as-text", "a prefix space and special tokens counted as text", True, None, True),
    ("lines+prefix-space", "line by line with a prefix space on each line", False, "keep", True),
    (
        "lines+prefix-space+specials-as-text",
        "line by line, prefix space, special tokens counted as text",
        True,
        "keep",
        True,
    ),
]


def count_variant(texts, special_tokens, specials_as_text, lines, prefix_space, pattern=None):
    """{bytes: count} of ``texts`` under a counting variant (split ``pattern``, GPT-2's by default)."""
    pretokenize = get_pattern(pattern).pretokenize
    pattern = None if specials_as_text else special_pattern(special_tokens)
    counts = {}

    def add(segment):
        if prefix_space and not segment.startswith(" "):
            segment = " " + segment
        for piece in pretokenize(segment.encode("utf-8", "surrogatepass")):
            counts[piece] = counts.get(piece, 0) + 1

    for text in texts:
        units = [text]
        if lines:
            units = (
                text.splitlines(True)
                if lines == "keep"
                else [u.rstrip("\r\n") for u in text.splitlines(True)]
            )
        for unit in units:
            for segment, is_special in split_specials(unit, pattern):
                if not is_special and segment:
                    add(segment)
    return counts


def replay_consistency(word_counts, merges, their_ids, ref_ids, limit=None):
    """How far ``merges`` are consistent with maximum counts under ``word_counts``.

    Returns (steps consistent, tie rules consistent at every tie so far, ties seen).
    """
    replay = PairReplay(word_counts)
    rules = None
    ties = 0
    n = len(merges) if limit is None else min(limit, len(merges))
    for j in range(n):
        pair = merges[j]
        m = replay.max_count()
        c = replay.count(pair)
        if c == 0 or c != m:
            return j, sorted(rules) if rules is not None else None, ties
        tied = replay.tied(m)
        if len(tied) > 1:
            ties += 1
            agree = {r for r, p in rule_choices(tied, their_ids, ref_ids).items() if p == pair}
            rules = agree if rules is None else rules & agree
        replay.apply(pair)
    return n, sorted(rules) if rules is not None else None, ties
