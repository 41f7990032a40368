"""Certifying a merge list against word counts, without training: ``certify``.

Their merges are replayed in their order over the reference word counts
(``replay.PairReplay``: exact integer counts, so a counter that wrapped at
2^31 or 2^32 shows), and every step is checked:

1. their pair occurs (a merge of a vanished pair is the mark of a stale heap);
2. its count is the maximum;
3. among the pairs of that count, it is the one the tie rule picks.

A failing step is reported and the replay goes on with their pair, so every
wrong step is listed, not only the first.  After the last merge, if the
vocab size asked for wanted more merges and a pair still occurs, the trainer
stopped early.

The rule's choice is the top of a heap ordered by (count, the rule's order),
with lazy deletion: each changed pair gets a fresh entry, and an entry whose
count is no longer current is dropped when it reaches the top.  So a step
costs the replay's own work (O(length) per word holding the pair) plus
O(log H) per changed pair; the tied set is listed only for a failing step.

    >>> certify({b"abab": 2, b"ab": 1}, [(b"a", b"b"), (b"ab", b"ab")])["certified"]
    True
    >>> certify({b"abab": 2, b"ab": 1}, [(b"b", b"a")])["failures"][0]["kind"]
    'not-maximum'
"""

import heapq

from .display import pair_json, show_pair
from .replay import SHIFT, PairReplay
from .ties import ORDER_FREE, RULE_TEXT

__all__ = ["certify", "PROFILE_TIE_RULES", "render_certificate"]

# The tie rule each trainer profile merges by (``refbpe.profiles``).
PROFILE_TIE_RULES = {"cs336": "greatest-bytes", "rustbpe": "smallest-ids-refbpe-layout", "hf": "smallest-ids"}
_MASK = (1 << SHIFT) - 1
_FAR = float("inf")
SHOWN_TIES = 10


class _Greater(object):
    """A heap entry; the greater ``key`` wins a tie."""

    __slots__ = ("count", "key", "pair")

    def __init__(self, count, key, pair):
        self.count, self.key, self.pair = count, key, pair

    def __lt__(self, other):
        if self.count != other.count:
            return self.count > other.count
        return self.key > other.key


class _Smaller(_Greater):
    """A heap entry; the smaller ``key`` wins a tie."""

    __slots__ = ()

    def __lt__(self, other):
        if self.count != other.count:
            return self.count > other.count
        return self.key < other.key


def _rule_order(rule, tokens, their_ids):
    """(entry class, key(packed pair)) for an order-free tie rule."""
    if rule not in ORDER_FREE:
        raise ValueError(
            "certify checks the order-free tie rules (%s), not %r" % (", ".join(ORDER_FREE), rule)
        )
    entry = _Greater if rule.startswith("greatest") else _Smaller
    if rule.endswith("-bytes"):
        return entry, lambda p: (tokens[p >> SHIFT], tokens[p & _MASK])
    if rule.endswith("-concat"):
        return entry, lambda p: (
            tokens[p >> SHIFT] + tokens[p & _MASK],
            tokens[p >> SHIFT],
            tokens[p & _MASK],
        )
    if rule.endswith("refbpe-layout"):
        return entry, lambda p: (p >> SHIFT, p & _MASK)
    if their_ids is None:
        raise ValueError("tie rule %s needs their ids: their model's format has none" % rule)
    far = _FAR if entry is _Smaller else -1
    return entry, lambda p: (their_ids.get(tokens[p >> SHIFT], far), their_ids.get(tokens[p & _MASK], far))


class _Choice(object):
    """The rule's choice among the current pairs: a lazily cleaned heap beside a ``PairReplay``."""

    def __init__(self, replay, entry, key):
        self.replay, self.entry, self.key = replay, entry, key
        self.heap = [entry(c, key(p), p) for p, c in replay.counts.items() if c > 0]
        heapq.heapify(self.heap)

    def top(self):
        """The entry of the pair the rule picks now, or None when no pair occurs."""
        heap, counts = self.heap, self.replay.counts
        while heap:
            e = heap[0]
            if counts.get(e.pair, 0) == e.count:
                return e
            heapq.heappop(heap)
        return None

    def runner_up(self, pair):
        """The greatest count among the pairs other than ``pair``."""
        heap, counts = self.heap, self.replay.counts
        kept, best = [], 0
        while heap:
            e = heap[0]
            if counts.get(e.pair, 0) != e.count:
                heapq.heappop(heap)
                continue
            if e.pair != pair:
                best = e.count
                break
            kept.append(heapq.heappop(heap))
        for e in kept:
            heapq.heappush(heap, e)
        return best

    def apply(self, pair):
        replay = self.replay
        for p in replay.apply(pair, track=True):
            c = replay.counts.get(p, 0)
            if c > 0:
                heapq.heappush(self.heap, self.entry(c, self.key(p), p))


def certify(word_counts, merges, tie_rule="greatest-bytes", their_ids=None, merges_wanted=None, limit=20):
    """Check ``merges`` step by step against ``word_counts``; the report (a dict).

    ``tie_rule`` is one of ``ties.ORDER_FREE``; ``their_ids`` ({bytes: id})
    serves the rules on their own ids; ``merges_wanted`` (the merges their
    vocab size asked for) enables the early-stop check; ``limit`` bounds the
    failures listed (``failing`` counts them all).
    """
    replay = PairReplay(word_counts)
    entry, key = _rule_order(tie_rule, replay.tokens, their_ids)
    choice = _Choice(replay, entry, key)
    failures, failing = [], 0
    for step, pair in enumerate(merges):
        failure = _check_step(step, tuple(pair), replay, choice)
        if failure is not None:
            failing += 1
            if len(failures) < limit:
                failures.append(failure)
        choice.apply(tuple(pair))
    early = None
    if merges_wanted is not None and len(merges) < merges_wanted:
        top = choice.top()
        if top is not None:
            early = {"after": len(merges), "pair": pair_json(replay.pair(top.pair)), "count": top.count}
    return {
        "certified": failing == 0 and early is None,
        "merges": len(merges),
        "merges_wanted": merges_wanted,
        "words": len(replay.words),
        "tie_rule": tie_rule,
        "failing": failing,
        "failures": failures,
        "early_stop": early,
    }


def _check_step(step, pair, replay, choice):
    """The failure at ``step`` (a dict), or None when their pair is the rule's choice."""
    key = replay.key(pair)
    count = replay.count_key(key)
    top = choice.top()
    if top is not None and top.pair == key:
        return None
    if count == 0:
        kind = "absent"
    elif count < top.count:
        kind = "not-maximum"
    else:
        kind = "tie"
    failure = {"step": step, "kind": kind, "theirs": pair_json(pair), "count": count, "maximum": 0}
    if top is not None:
        tied = replay.tied_keys(top.count)
        failure.update(
            maximum=top.count,
            choice=pair_json(replay.pair(top.pair)),
            runner_up=choice.runner_up(top.pair),
            tied=len(tied),
            tied_pairs=[pair_json(p) for p in sorted(replay.pair(k) for k in tied)[:SHOWN_TIES]],
        )
    return failure


def _unhex(p):
    return (bytes.fromhex(p["left"]), bytes.fromhex(p["right"]))


def render_certificate(report):
    """The report as text: a verdict line, then one line per failing step."""
    n = report["merges"]
    head = "%s merges replayed over %s words, tie rule %s (%s)" % (
        format(n, ","),
        format(report["words"], ","),
        report["tie_rule"],
        RULE_TEXT[report["tie_rule"]],
    )
    if report["certified"]:
        return "certified: " + head
    lines = ["NOT certified: %s failing step(s) of %s" % (format(report["failing"], ","), head)]
    for f in report["failures"]:
        theirs = show_pair(_unhex(f["theirs"]))
        where = "merge %d: " % f["step"]
        if f["kind"] == "absent":
            text = "theirs %s does not occur" % theirs
            if "choice" in f:
                text += "; the rule picks %s (count %s)" % (
                    show_pair(_unhex(f["choice"])),
                    format(f["maximum"], ","),
                )
            else:
                text += "; no pair is left"
        elif f["kind"] == "not-maximum":
            text = "theirs %s occurs %s times, below the maximum %s of %s (runner-up %s)" % (
                theirs,
                format(f["count"], ","),
                format(f["maximum"], ","),
                show_pair(_unhex(f["choice"])),
                format(f["runner_up"], ","),
            )
        else:
            text = "%s pairs share the maximum count %s; the rule picks %s, theirs is %s" % (
                format(f["tied"], ","),
                format(f["maximum"], ","),
                show_pair(_unhex(f["choice"])),
                theirs,
            )
        lines.append("  " + where + text)
        if f.get("tied", 0) > 1 and f["kind"] != "absent":
            shown = ", ".join(show_pair(_unhex(p)) for p in f["tied_pairs"])
            more = f["tied"] - len(f["tied_pairs"])
            lines.append(
                "    tied at %s: %s%s"
                % (format(f["maximum"], ","), shown, " (+%d more)" % more if more else "")
            )
    hidden = report["failing"] - len(report["failures"])
    if hidden:
        lines.append("  ... and %s more failing step(s)" % format(hidden, ","))
    early = report["early_stop"]
    if early is not None:
        lines.append(
            "  stopped after merge %d while %s still occurs %s times (the vocab size asks for %s merges)"
            % (
                early["after"],
                show_pair(_unhex(early["pair"])),
                format(early["count"], ","),
                format(report["merges_wanted"], ","),
            )
        )
    return "\n".join(lines)
