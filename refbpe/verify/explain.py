"""Why their merges differ: one replay of their merges, every hypothesis alongside.

``replay_hypotheses`` applies their merges, in their order, to the reference
word counts (``replay.PairReplay``) and, at each step and before applying it,
asks every live hypothesis whether their pair is a maximum under it:

* the reference counts (``fit``: how many of their merges they replay), with
  the tie rules (``ties``) still consistent with every tie so far;
* each counting or merging variant (``overlays``), as a difference from the
  reference counts, with the order-free tie rules.

A hypothesis dies at the first step it cannot explain (their pair not at the
maximum count, or a tie no consistent rule breaks their way); the variants
are dropped then, so a wrong one costs only the steps until its first
failure.  The replay itself stops when the reference counts and every
variant are dead.  Cost: one replay of at most all their merges, plus, per
live variant and step, the pairs its difference touches.

The verdict (``conclude``) names a cause only when a hypothesis explains all
of their merges; otherwise it gives the first step the reference counts
cannot explain, with the counts involved, and partial fits as partial fits.
"""

from ..pretokenize.patterns import get_pattern
from .overlays import VARIANTS, make_overlays
from .replay import PairReplay
from .ties import ORDER_FREE, TIE_RULES, FirstCounted, rule_choices

__all__ = ["replay_hypotheses"]


class Hypothesis(object):
    """One line of explanation being replayed: the reference counts or a variant."""

    def __init__(self, name, source, rules, detail=None):
        self.name = name
        self.source = source
        self.rules = set(rules)
        self.detail = detail
        self.alive = True
        self.fit = None  # steps explained (set on failure or at the end)
        self.ties = 0
        self.rules_dead_at = None  # step at which the last tie rule failed
        self.rule_first_miss = {}  # rule -> step of its first wrong tie
        self.failure = None  # the first step it cannot explain: {"step", "kind", counts...}
        self.tie_failure = None  # the tie at which the last consistent tie rule failed
        self.exhausted = None  # no pair left after all their merges
        self.lowest = None  # the least count of a merge it explained
        self.left = None  # the best count left after all their merges (when it explains them all)
        self.aliases = []
        self.complete = False  # explains all their merges, and their stopping there

    def summary(self, total):
        out = {
            "variant": self.name,
            "description": VARIANT_TEXT_ALL.get(self.name, ""),
            "consistent_merges": self.fit,
            "of": total,
            "tie_rules_consistent": sorted(self.rules) if self.ties else None,
            "ties": self.ties,
        }
        if self.detail:
            out.update(self.detail)
        return out


VARIANT_TEXT_ALL = dict(
    [("reference", "the reference: whole text, special tokens removed")] + [(n, d) for n, _, d in VARIANTS]
)


def _check(h, j, pair, key, ctx):
    """Whether ``h`` explains their merge ``j``; records the failure if not."""
    src = h.source
    m, tied = src.top()
    c = src.count_key(key) if key is not None else 0
    if m < ctx.min_count or c != m:
        top = tied
        h.failure = {
            "step": j,
            "kind": "count",
            "count": c,
            "max_count": m,
            "top": sorted(ctx.ref.pair(q) for q in top[:20]),
            "rules_before": sorted(h.rules),
        }
        return False
    if h.lowest is None or c < h.lowest:
        h.lowest = c
    if len(tied) < 2:
        return True
    h.ties += 1
    pairs = [ctx.ref.pair(k) for k in tied]
    rules = h.rules
    choices = rule_choices(pairs, ctx.their_ids, ctx.ref_ids, rules=[r for r in ORDER_FREE if r in rules])
    if "first-counted" in rules and ctx.first is not None:
        k = ctx.first.choose(tied)
        choices["first-counted"] = ctx.ref.pair(k) if k is not None else None
    agree = set(r for r, p in choices.items() if p == pair)
    for r in rules - agree:
        h.rule_first_miss.setdefault(r, j)
    if rules and not agree:
        h.rules_dead_at = j
        h.tie_failure = {
            "step": j,
            "kind": "tie",
            "count": c,
            "max_count": m,
            "top": sorted(pairs[:20]),
            "choices": choices,
            "rules_before": sorted(rules),
        }
        if h.name != "reference":
            h.failure = h.tie_failure
    h.rules = rules & agree
    return bool(h.rules) or h.name == "reference"


RULE_NAMES = [r for r, _ in TIE_RULES]


class _Context(object):
    pass


def _probe(ctx, our_pair, their_pair):
    """The reference counts of both pairs at the first divergence, and the tie there."""
    ref = ctx.ref
    m = ref.best()
    out = {"max": m, "ours": ref.count(our_pair) if our_pair else None}
    out["theirs"] = ref.count(their_pair) if their_pair else None
    keys = ref.tied_keys(m) if m > 0 else []
    out["tied"] = sorted(ref.pair(q) for q in keys)
    out["choices"], out["agree"] = {}, []
    if their_pair and out["theirs"] == m and len(keys) > 1:
        choices = rule_choices(out["tied"], ctx.their_ids, ctx.ref_ids)
        if ctx.first is not None:
            q = ctx.first.choose(keys)
            choices["first-counted"] = ref.pair(q) if q is not None else None
        out["choices"] = choices
        out["agree"] = [r for r in RULE_NAMES if choices.get(r) == their_pair]
    return out


def replay_hypotheses(
    word_counts,
    their_merges,
    their_ids,
    ref_ids,
    texts,
    special_tokens,
    variants=True,
    probe=None,
    wanted=None,
    readings=None,
    pattern=None,
    fuse=True,
    park=True,
    min_count=1,
    short=None,
):
    """Replay ``their_merges``; returns (reference Hypothesis, [variant Hypotheses],
    the probe at ``probe = (k, our pair k)``: counts at the first divergence).

    Two passes: the reference counts alone, as far as they explain their
    merges; then, only if they do not explain all of them with a known tie
    rule, the variants (each from the first merge).  A tie-rule difference so
    costs one replay, and a count difference a short one plus the variants'.
    When their pair at the first divergence ``k`` has a lower reference count
    than ours there (``_falls_short``, over the few words that can hold
    either pair), the reference counts fail at ``k``: pass 1 is then skipped,
    and pass 2 checks them (and takes the probe) as pass 1 would have, from
    the first merge (``fuse=False`` runs both passes; the tests compare).
    ``short`` (True: the caller knows it, from the reference training's trace)
    spares ``_falls_short``'s replay.
    The answers are the same: each check reads the counts of one step, and
    the pairs tied at a count come in the heaps' order, whoever cleaned them.
    Once one variant is left and nothing else reads the reference heap, its
    overlay parks its own pairs' entries there (``Overlay.read_alone``;
    ``park=False`` never does: the tests compare).

    ``readings`` (a ``readings.Readings`` of ``texts``) keeps the reading
    differences for later users (the profiles' word tables).

    A hypothesis is ``complete`` when it explains every one of their merges
    and their stopping there: ``wanted`` merges made, or no pair left (of at
    least ``min_count``, the reference's minimum count: a pair below it
    explains no merge).
    ``pattern`` is the split the word counts were counted with (None: GPT-2's):
    ``texts`` are re-read by GPT-2's scanner for the first-counted rule, so it is
    tried only under GPT-2's pattern on the latest table (``make_overlays`` says
    which variants each pattern gets).
    """
    ctx = _Context()
    ctx.their_ids, ctx.ref_ids = their_ids, ref_ids
    ctx.min_count = min_count = max(1, min_count)
    n = len(their_merges)
    k, our_pair = probe if probe is not None else (None, None)
    # Fused: the reference counts are known to fail at k, so pass 2 checks them from the start.
    fused = fuse and variants and (short or _falls_short(word_counts, their_merges, k, our_pair))
    ref = ctx.ref = PairReplay(word_counts)
    pristine = ref.copy() if variants and not fused else None  # pass 2 starts from it, not a recount
    gpt2 = get_pattern(pattern).key == "gpt2"
    ctx.first = FirstCounted(texts, special_tokens, ref) if texts is not None and gpt2 else None
    rules = ORDER_FREE + (["first-counted"] if ctx.first is not None else [])
    reference = Hypothesis("reference", ref, rules)
    probed = None
    # 1. The reference counts, until they fail, or (when variants follow) until
    # no tie rule is left: then no tie rule is the cause, and pass 2 carries on
    # the reference counts to find ``fit`` instead of replaying them twice.
    stop = 0  # the step at which pass 1 stopped with the counts still explaining it (None: failed)
    if not fused:
        stop, probed = _pass_one(ctx, reference, their_merges, k, our_pair, variants)
        if probed is None and k is not None:
            probed = _probe(ctx, our_pair, None)
    others = []
    if stop is None:
        _complete(reference, n, wanted)
        reference.complete = reference.complete and bool(reference.rules)
        if not variants or reference.complete:
            return reference, others, probed
    # 2. The variants, as differences over a fresh replay (the first one let go).
    if not fused:
        reference.source = ctx.ref = ctx.first = ref = None
        ref = ctx.ref = pristine
        reference.source = ref
    for o in make_overlays(ref, texts, special_tokens, readings=readings, pattern=pattern):
        others.append(Hypothesis(o.name, o, ORDER_FREE, o.detail))
        others[-1].aliases = o.aliases
    ref.observers = [h.source for h in others if h.source.observes]
    live = list(others)
    counting = stop is not None
    for j, pair in enumerate(their_merges):
        key = ref.key(pair)
        if fused and j == k:
            probed = _probe(ctx, our_pair, pair)
        if counting and j >= stop and not _check(reference, j, pair, key, ctx):
            reference.fit, counting = j, False
        alive = [h for h in live if _check(h, j, pair, key, ctx)]
        for h in live:
            if h not in alive:
                h.alive, h.fit = False, j
        if len(alive) < len(live):
            ref.observers = [h.source for h in alive if h.source.observes]
        live = alive
        if not live and not counting:
            break
        if park and len(live) == 1 and not counting and not (fused and j < k):
            live[0].source.read_alone()  # nothing else reads the reference heap any more
        a, b = ref.token_id(pair[0], True), ref.token_id(pair[1], True)
        z = ref.token_id(pair[0] + pair[1], True)
        for h in live:
            h.source.before_apply(a, b, z)
        changed = ref.apply(pair, track=bool(live))
        for h in live:
            h.source.refresh(changed)
    if counting:
        reference.fit, reference.left = n, ref.best()
        reference.exhausted = reference.left < min_count
    if stop is not None:
        _complete(reference, n, wanted)
        reference.complete = False  # no tie rule is left, or (fused) the counts failed
    reference.source = None
    for h in live:
        h.fit = n
        h.exhausted = h.source.best() < min_count
    for h in others:
        _complete(h, n, wanted)
    return reference, others, probed


def _pass_one(ctx, reference, their_merges, k, our_pair, variants):
    """Pass 1 of ``replay_hypotheses``: (the step it stopped at with the counts still
    explaining their merges, or None, the probe at ``k`` if reached)."""
    ref, probed = ctx.ref, None
    for j, pair in enumerate(their_merges):
        if j == k:
            probed = _probe(ctx, our_pair, pair)
        if not _check(reference, j, pair, ref.key(pair), ctx):
            reference.fit = j
            return None, probed
        if variants and not reference.rules:
            return j + 1, probed
        ref.apply(pair)
    reference.fit, reference.left = len(their_merges), ref.best()
    reference.exhausted = reference.left < ctx.min_count
    return None, probed


def _falls_short(word_counts, their_merges, k, our_pair):
    """Whether their merge ``k`` has a lower reference count than ``our_pair`` after
    their first ``k`` merges (the same as ours).  The words that hold neither
    pair's bytes hold neither pair: a replay of the others counts both.
    (Not replaying the first ``k`` merges, the costliest, twice: english_small's
    hf model, medians of 3 cold processes, 0.72 -> 0.55 s of merges under
    CPython, 0.42 -> 0.35 s under PyPy, whose second replay was warm;
    perf/verify_stages.py, PairReplay.apply.)"""
    if k is None or our_pair is None or k >= len(their_merges):
        return False
    theirs = their_merges[k]
    spelled = (theirs[0] + theirs[1], our_pair[0] + our_pair[1])
    few = PairReplay({w: n for w, n in word_counts.items() if spelled[0] in w or spelled[1] in w})
    for pair in their_merges[:k]:
        few.apply(pair)
    return few.count(theirs) < few.count(our_pair)


def _complete(h, n, wanted):
    h.complete = h.fit == n and (wanted is None or n >= wanted or bool(h.exhausted))
