"""Tie rules: which pair another trainer takes when several share the maximum count.

Each rule picks one pair out of the tied set.  ``rule_choices`` gives every
order-free rule's pick; ``first_counted`` needs the text, scanned in order.
"""

from ..patterns import get_pattern
from ..specials import special_pattern, split_specials
from .replay import bpe

__all__ = ["TIE_RULES", "RULE_TEXT", "rule_choices", "first_counted"]

# (name, who uses it).  Each rule picks one pair out of the tied set.
TIE_RULES = [
    ("greatest-bytes", "greatest (left bytes, right bytes), as the CS336 reference and refbpe"),
    ("smallest-ids", "smallest (left id, right id) in their id layout, as HF tokenizers, rustbpe and bpeasy"),
    (
        "smallest-ids-refbpe-layout",
        "smallest (left id, right id) with bytes as ids 0-255 and merge k as 256+k, as rustbpe and bpeasy",
    ),
    ("smallest-bytes", "smallest (left bytes, right bytes)"),
    ("greatest-ids", "greatest (left id, right id) in their id layout"),
    (
        "first-counted",
        "the pair counted first scanning the text in order, as minbpe and tiktoken's _educational trainer",
    ),
]
RULE_TEXT = dict(TIE_RULES)


def rule_choices(tied, their_ids, ref_ids):
    """{rule name: chosen pair} for the order-free rules."""
    big = float("inf")

    def ids(table, p):
        return (table.get(p[0], big), table.get(p[1], big))

    out = {
        "greatest-bytes": max(tied),
        "smallest-bytes": min(tied),
        "smallest-ids-refbpe-layout": min(tied, key=lambda p: ids(ref_ids, p)),
    }
    if their_ids is not None:
        out["smallest-ids"] = min(tied, key=lambda p: ids(their_ids, p))
        out["greatest-ids"] = max(
            tied, key=lambda p: (-1, -1) if big in ids(their_ids, p) else ids(their_ids, p)
        )
    return out


def first_counted(texts, special_tokens, merges, tied, pattern=None):
    """The pair of ``tied`` met first scanning ``texts`` pre-token by pre-token
    (split ``pattern``, GPT-2's by default) with ``merges`` applied; None when none is met."""
    pretokenize = get_pattern(pattern).pretokenize
    tied = set(tied)
    ranks = {m: r for r, m in enumerate(merges)}
    pattern = special_pattern(special_tokens)
    cache = {}
    for text in texts:
        for segment, is_special in split_specials(text, pattern):
            if is_special:
                continue
            for piece in pretokenize(segment.encode("utf-8", "surrogatepass")):
                toks = cache.get(piece)
                if toks is None:
                    toks = cache[piece] = bpe(piece, ranks)
                for p in zip(toks, toks[1:]):
                    if p in tied:
                        return p
    return None
