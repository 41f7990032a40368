"""The tie rules a training can be held to, by the names ``refbpe.verify.ties`` gives them.

Each rule picks one pair among those of the maximum count; ``--tie-rule`` selects
one by the same name in train, verify, certify and fuzz.  The merge engine orders
its heap by all but one (``engine_tie``: a tie of ``heap.entry_maker``):

    rule                         engine tie
    greatest-bytes               "bytes" (CS336's, the default)
    smallest-bytes               "smallest-bytes"
    greatest-concat              "greatest-concat": the greatest (a + b, a, b)
    smallest-concat              "smallest-concat"
    smallest-ids-refbpe-layout   "ids": the smallest packed pair (bytes 0-255, merge k = 256 + k)
    greatest-ids-refbpe-layout   "greatest-ids"
    smallest-ids                 in the profile's own id layout: "ids" (cs336 and rustbpe, whose
    greatest-ids                 layout is refbpe's) or HF's ranks (``profiles._hf_ranks``), the
                                 greatest by the ranks reversed

``first-counted`` (the tied pair met first reading the text in order: minbpe,
tiktoken's ``_educational``) needs the pre-tokens in text order, which word
counts do not keep: the engine refuses it (a ValueError), and verify,
certify and fuzz replay it over the text instead (``verify.ties.train_first_counted``).

Cost: one entry per heap push, as the default rule's; the bytes and concat rules
compare a tuple of byte strings (``heap._KeyEntry``), the id rules one int.
"""

__all__ = ["TIE_RULE_NAMES", "TEXT_ORDER", "check_tie_rule", "engine_tie"]

TEXT_ORDER = "first-counted"
TIE_RULE_NAMES = (
    "greatest-bytes",
    "smallest-bytes",
    "greatest-concat",
    "smallest-concat",
    "smallest-ids",
    "smallest-ids-refbpe-layout",
    "greatest-ids",
    "greatest-ids-refbpe-layout",
    TEXT_ORDER,
)
_BY_BYTES = {
    "greatest-bytes": "bytes",
    "smallest-bytes": "smallest-bytes",
    "greatest-concat": "greatest-concat",
    "smallest-concat": "smallest-concat",
    "smallest-ids-refbpe-layout": "ids",
    "greatest-ids-refbpe-layout": "greatest-ids",
}


def check_tie_rule(rule):
    """``rule`` if it is a known name, else a ValueError naming the known ones."""
    if rule not in TIE_RULE_NAMES:
        raise ValueError("unknown tie rule %r (known: %s)" % (rule, ", ".join(TIE_RULE_NAMES)))
    return rule


def engine_tie(rule, ranks=None):
    """The merge engine's tie for ``rule``; ``ranks``: each id's place in the profile's own
    layout when it is not refbpe's (HF's), for ``smallest-ids`` and ``greatest-ids``."""
    check_tie_rule(rule)
    if rule == TEXT_ORDER:
        raise ValueError(
            "tie rule first-counted takes the tied pair met first in the text, an order the word counts "
            "do not keep: training does not offer it (verify, certify and fuzz replay it over the text)"
        )
    if rule in _BY_BYTES:
        return _BY_BYTES[rule]
    if ranks is None:  # the profile's own layout is refbpe's
        return "ids" if rule == "smallest-ids" else "greatest-ids"
    if rule == "smallest-ids":
        return list(ranks)
    top = max(ranks)
    return [top - r for r in ranks]  # the smallest reversed rank is the greatest rank
