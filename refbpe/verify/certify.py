"""Certifying a merge list against word counts, without training: ``certify``.

Their merges are replayed in their order over the reference word counts
(``replay.PairReplay``: exact integer counts, so a counter that wrapped at
2^31 or 2^32 shows), and every step is checked:

1. their pair occurs (a merge of a vanished pair is the mark of a stale heap);
2. its count is the maximum;
3. among the pairs of that count, it is the one the tie rule picks;
4. its count is at least the minimum count (``min_frequency``), if any.

A failing step is reported and the replay goes on with their pair, so every
wrong step is listed, not only the first.  After the last merge, if the
vocab size asked for wanted more merges and a pair still occurs, the trainer
stopped early.

Two states hold the replay.  When their merges each make a new token from
tokens made before and the rule is one the engine orders by (greatest bytes,
smallest ids in refbpe's layout or in theirs), the merge engine's own state
does (``merge_check.MergeCheck``): their pair is applied whether or not it is the
rule's choice, which is read from the engine's heap, so a certified run costs the
engine's own steps: what ``train`` costs from the same counts, less the writing of
the model and plus the reading of theirs (``perf/certify_cost.py``; docs/evidence.md
says why half is out of reach).  Otherwise (any
other order-free rule, a merge list that spells a token twice) a
``PairReplay`` does, with the rule's order on a lazily cleaned heap
beside it: O(length) per word holding each pair.  The tied set and the
runner-up are read (a scan of the counts) only for the failing steps listed.

    >>> certify({b"abab": 2, b"ab": 1}, [(b"a", b"b"), (b"ab", b"ab")])["certified"]
    True
    >>> certify({b"abab": 2, b"ab": 1}, [(b"b", b"a")])["failures"][0]["kind"]
    'not-maximum'
"""

import heapq

from ..learn.merge_check import MergeCheck
from ..learn.profiles import ProfileLimit, get_profile
from .display import pair_json, show_pair
from .profile_rules import id_mismatch
from .replay import SHIFT, PairReplay
from .ties import ORDER_FREE, RULE_TEXT, FirstCounted

__all__ = ["certify", "certify_settings", "PROFILE_TIE_RULES", "render_certificate"]

# The tie rule each single-stage trainer profile merges by (``Profile.tie_rule``).
PROFILE_TIE_RULES = {name: get_profile(name).tie_rule for name in ("cs336", "rustbpe", "hf")}
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


class _ReplayState(object):
    """Any merge list over a ``PairReplay``, the rule's choice on a heap beside it.

    The same interface as ``merge_check.MergeCheck`` (the fast path): ``check_all``,
    ``choice``, ``count``, ``pair_of``, ``bytes_of``, ``tied``, ``runner_up``.
    """

    def __init__(self, word_counts, merges, rule, their_ids):
        self.replay = replay = PairReplay(word_counts)
        self.merges = merges
        self.entry, self.key = _rule_order(rule, replay.tokens, their_ids)
        self.heap = [self.entry(c, self.key(p), p) for p, c in replay.counts.items() if c > 0]
        heapq.heapify(self.heap)

    def choice(self):
        heap, counts = self.heap, self.replay.counts
        while heap:
            e = heap[0]
            if counts.get(e.pair, 0) == e.count:
                return e.pair
            heapq.heappop(heap)
        return None

    def pair_of(self, k):
        return self.replay.key(tuple(self.merges[k]))

    def bytes_of(self, p):
        return self.replay.pair(p)

    def count(self, p):
        return self.replay.count_key(p)

    def tied(self, count):
        return self.replay.tied_keys(count)

    def runner_up(self, p):
        return max([c for q, c in self.replay.counts.items() if q != p and c > 0] or [0])

    def check_all(self, min_count, failed):
        """``merge_check.MergeCheck.check_all``: each of their merges applied, ``failed(step,
        theirs, choice)`` called first where the rule takes another pair or theirs is rarer
        than ``min_count``."""
        for step in range(len(self.merges)):
            best = self.choice()
            theirs = self.pair_of(step)
            if best is None or theirs != best or self.count(best) < min_count:
                failed(step, theirs, best)
            self.apply(step)

    def apply(self, k):
        replay = self.replay
        for p in replay.apply(tuple(self.merges[k]), track=True):
            c = replay.counts.get(p, 0)
            if c > 0:
                heapq.heappush(self.heap, self.entry(c, self.key(p), p))


class _TextOrderState(_ReplayState):
    """``_ReplayState`` under ``first-counted``: the tied pair met first in ``texts``."""

    def __init__(self, word_counts, merges, texts, special_tokens):
        self.replay = PairReplay(word_counts)
        self.merges = merges
        self.first = FirstCounted(texts, special_tokens, self.replay)

    def choice(self):
        m = self.replay.best()
        return self.first.choose(self.replay.tied_keys(m)) if m > 0 else None

    def apply(self, k):
        self.replay.apply(tuple(self.merges[k]))


_ENGINE_RULES = ("greatest-bytes", "smallest-ids-refbpe-layout", "smallest-ids")


def _state(word_counts, merges, rule, their_ids, texts=None, special_tokens=()):
    """The engine's state (``merge_check.MergeCheck``) when it can hold the rule and the
    merges, else the replay's (any merge list, any order-free rule; ``first-counted``
    over ``texts``, whose GPT-2 pieces ``word_counts`` count)."""
    if rule == "first-counted":
        if texts is None:
            raise ValueError("tie rule first-counted reads the corpus text in order: give CORPUS files")
        return _TextOrderState(word_counts, merges, texts, special_tokens)
    if rule in _ENGINE_RULES and MergeCheck.valid(merges) and (rule != "smallest-ids" or their_ids):
        if rule == "greatest-bytes":
            tie = "bytes"
        elif rule == "smallest-ids-refbpe-layout":
            tie = "ids"
        else:
            far = 1 << 62
            tie = [their_ids.get(bytes([i]), far) for i in range(256)]
            tie += [their_ids.get(a + b, far) for a, b in merges]
        return MergeCheck(word_counts, merges, tie)
    _rule_order(rule, None, their_ids)  # refuse an unknown rule or missing ids now
    return _ReplayState(word_counts, merges, rule, their_ids)


def certify(
    word_counts,
    merges,
    tie_rule="greatest-bytes",
    their_ids=None,
    merges_wanted=None,
    limit=20,
    min_count=1,
    texts=None,
    special_tokens=(),
):
    """Check ``merges`` step by step against ``word_counts``; the report (a dict).

    ``tie_rule`` is one of ``ties.ORDER_FREE``; ``their_ids`` ({bytes: id})
    serves the rules on their own ids; ``merges_wanted`` (the merges their
    vocab size asked for) enables the early-stop check; ``limit`` bounds the
    failures listed (``failing`` counts them all).  ``min_count`` (HF's
    ``min_frequency``): a merge of a pair that occurs fewer times fails
    (``below-minimum``), and stopping while the best pair left does is no
    early stop.  ``tie_rule`` may be ``first-counted`` given the ``texts`` (cut
    at ``special_tokens``) whose GPT-2 pieces ``word_counts`` count.
    """
    merges = [tuple(m) for m in merges]
    min_count = max(1, min_count)
    state = _state(word_counts, merges, tie_rule, their_ids, texts, special_tokens)
    failures, failing = [], 0

    def failed(step, theirs, best):
        nonlocal failing
        failing += 1
        if len(failures) < limit:
            failures.append(_failure(state, step, theirs, best, min_count))

    state.check_all(min_count, failed)
    early = None
    if merges_wanted is not None and len(merges) < merges_wanted:
        best = state.choice()
        if best is not None and state.count(best) >= min_count:
            early = {
                "after": len(merges),
                "pair": pair_json(state.bytes_of(best)),
                "count": state.count(best),
            }
    return {
        "certified": failing == 0 and early is None,
        "merges": len(merges),
        "merges_wanted": merges_wanted,
        "words": len(word_counts),
        "tie_rule": tie_rule,
        "min_count": min_count,
        "failing": failing,
        "failures": failures,
        "early_stop": early,
    }


def certify_settings(
    word_counts, theirs, settings, vocab_size=None, special_tokens=(), tie_rule=None, limit=20, texts=None
):
    """``certify`` of ``theirs`` (a ``formats.Model``) under a run's recorded ``settings``
    (``Profile.settings``: its minimum count, tie rule unless ``tie_rule``, and the
    merges ``vocab_size`` asks for under its layout), over ``word_counts`` counted
    as it counts.  Under a profile other than cs336, whose ids are part of its
    output as ``verify --profile`` compares them, their ids (where their format has
    them) must be the layout's: ``id_mismatch`` (id, ours, theirs) otherwise."""
    profile = get_profile(settings["profile"])
    special_tokens = list(special_tokens)
    wanted = None
    if vocab_size is not None:
        wanted = profile.merges_wanted(word_counts, vocab_size, special_tokens, settings)
    rule = tie_rule or settings.get("tie_rule") or profile.tie_rule
    their_ids = theirs.id_of() if theirs.carries_ids else None
    merges = [(bytes(a), bytes(b)) for a, b in theirs.merges]
    report = certify(
        word_counts, merges, rule, their_ids, wanted, limit, settings["min_frequency"], texts, special_tokens
    )
    report["settings"] = settings
    if profile.name != "cs336" and theirs.carries_ids:
        try:
            vocab = profile.vocab_of(merges, special_tokens, settings, word_counts)
            bad = id_mismatch(vocab, theirs, special_tokens)
        except ProfileLimit as e:
            report["profile_limit"], bad = str(e), None
            report["certified"] = False
        if bad is not None:
            report["id_mismatch"] = {"id": bad[0], "ours": bad[1], "theirs": bad[2]}
            report["certified"] = False
    return report


def _failure(state, step, theirs, best, min_count=1):
    """The report of a failing step: their pair is absent, below the maximum, lost the tie,
    or (the rule's own choice) occurs fewer than ``min_count`` times."""
    count = 0 if theirs is None else state.count(theirs)
    maximum = 0 if best is None else state.count(best)
    kind = "absent" if count == 0 else "not-maximum" if count < maximum else "tie"
    if kind == "tie" and theirs == best:
        kind = "below-minimum"
    failure = {
        "step": step,
        "kind": kind,
        "theirs": pair_json(state.merges[step]),
        "count": count,
        "maximum": 0,
    }
    if best is not None:
        tied = sorted(state.bytes_of(k) for k in state.tied(maximum))
        failure.update(
            maximum=maximum,
            choice=pair_json(state.bytes_of(best)),
            runner_up=state.runner_up(best),
            tied=len(tied),
            tied_pairs=[pair_json(p) for p in tied[:SHOWN_TIES]],
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
    if report.get("min_count", 1) > 1:
        head += ", minimum count %s" % format(report["min_count"], ",")
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
        elif f["kind"] == "below-minimum":
            text = "theirs %s occurs %s times, below the minimum count %s (min_frequency)" % (
                theirs,
                format(f["count"], ","),
                format(report["min_count"], ","),
            )
        else:
            text = "%s pairs share the maximum count %s; the rule picks %s, theirs is %s" % (
                format(f["tied"], ","),
                format(f["maximum"], ","),
                show_pair(_unhex(f["choice"])),
                theirs,
            )
        lines.append("  " + where + text)
        if f.get("tied", 0) > 1 and f["kind"] not in ("absent", "below-minimum"):
            shown = ", ".join(show_pair(_unhex(p)) for p in f["tied_pairs"])
            more = f["tied"] - len(f["tied_pairs"])
            lines.append(
                "    tied at %s: %s%s"
                % (format(f["maximum"], ","), shown, " (+%d more)" % more if more else "")
            )
    hidden = report["failing"] - len(report["failures"])
    if hidden:
        lines.append("  ... and %s more failing step(s)" % format(hidden, ","))
    bad = report.get("id_mismatch")
    if bad is not None:
        lines.append(
            "  ids: id %d is %s in profile %s's layout, %s in theirs"
            % (bad["id"], bad["ours"], report["settings"]["profile"], bad["theirs"])
        )
    if report.get("profile_limit"):
        lines.append("  " + report["profile_limit"])
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
