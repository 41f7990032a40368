"""Comparing another trainer's merges and vocab with the reference: ``verify_merges``.

Phases:

1. Train the reference on the word counts (``merge.learn_merges``).
2. Compare: the merge lists in order, the vocab as a set of byte strings (what
   CS336's tests compare), then ids (a note, or a difference under
   ``exact_ids``).  Equal merges end here: one training's cost in all.
3. Explain a divergence: replay their merges under the reference counts and
   every variant at once (``explain.replay_hypotheses``); when none explains
   them all, the conventions (``conventions``: the text read in text mode, an
   early stop at a minimum count), each proved by reproducing their merges.
4. Setup checks (``setup_checks``), now that it is known whether they ran out
   of pairs.
5. Conclude: the cause (a setup mismatch first, then a convention), with the
   one hypothesis that explains all their merges, or the facts when none does
   (``conclude``).

The result is one report (a dict, the JSON contract in docs/verify.md); ``render``
makes the text from it, so the text carries every conclusion the JSON holds.
"""

from ..learn.extend import keep_parent_ids
from ..learn.merge import learn_merges
from ..learn.tie_rules import TEXT_ORDER, engine_tie
from ..learn.train import build_vocab, check_training_args
from ..pretokenize.patterns import get_pattern
from .conventions import id_layout, min_count_stop, newline_translation
from .display import pair_json, show
from .explain import replay_hypotheses
from .overlays import VARIANT_CAUSE, VARIANTS
from .readings import versioned
from .render import render_text
from .setup_checks import SETUP_CODES, setup_warnings, warning
from .ties import TIE_RULES, rule_choices, train_first_counted

__all__ = ["verify_merges", "CAUSES"]

CAUSES = (
    "setup",
    "tie-rule",
    "counts",
    "pre-tokenization",
    "unicode-version",
    "merge-application",
    "min-count",
    "newline-translation",
    "setting",
    "unknown",
)
_VARIANT_ORDER = {n: i for i, (n, _, _) in enumerate(VARIANTS)}
_RULE_ORDER = [r for r, _ in TIE_RULES]


def _ref_ids(merges):
    """{bytes: id} in the refbpe layout of ``merges`` (bytes 0-255, merge k = 256 + k)."""
    ids = {bytes([i]): i for i in range(256)}
    for k, (a, b) in enumerate(merges):
        ids.setdefault(a + b, 256 + k)
    return ids


def _first_difference(ours, theirs):
    for i in range(min(len(ours), len(theirs))):
        if ours[i] != theirs[i]:
            return i
    return None if len(ours) == len(theirs) else min(len(ours), len(theirs))


def _vocab_report(our_vocab, theirs, exact_ids, ignore_ids):
    our_set, their_set = set(our_vocab.values()), set(theirs.vocab.values())
    missing, extra = sorted(our_set - their_set), sorted(their_set - our_set)
    ids_same, mismatches = None, []
    if theirs.carries_ids and not ignore_ids:
        ids_same = our_vocab == theirs.vocab
        for i in sorted(set(our_vocab) | set(theirs.vocab)):
            if len(mismatches) >= 10 or ids_same:
                break
            if our_vocab.get(i) != theirs.vocab.get(i):
                mismatches.append(
                    {
                        "id": i,
                        "ours": show(our_vocab[i]) if i in our_vocab else None,
                        "theirs": show(theirs.vocab[i]) if i in theirs.vocab else None,
                    }
                )
    return {
        "identical_as_set": not missing and not extra,
        "ids_identical": ids_same,
        "ids_compared": bool(theirs.carries_ids and exact_ids and not ignore_ids),
        "missing_in_theirs": [show(b) for b in missing[:20]],
        "num_missing_in_theirs": len(missing),
        "extra_in_theirs": [show(b) for b in extra[:20]],
        "num_extra_in_theirs": len(extra),
        "first_id_mismatches": mismatches,
    }


def verify_merges(
    word_counts,
    vocab_size,
    special_tokens,
    theirs,
    texts=None,
    hypotheses=True,
    ignore_ids=False,
    exact_ids=False,
    setup=None,
    pattern=None,
    extend=None,
    readings=None,
    given=False,
    min_frequency=0,
    tie_rule=None,
):
    """The report (a dict) comparing ``theirs`` (a ``formats.Model``) with the
    reference trained on ``word_counts`` (stopping before a pair of fewer than
    ``min_frequency`` occurrences, as ``train --min-frequency``; breaking ties by
    ``tie_rule``, ``learn.tie_rules``' names, default CS336's: ``first-counted``
    needs ``texts``, counted with GPT-2's pattern, and no ``extend``).

    ``extend`` (an ``extend.Parent``): the reference extends that parent
    (``refbpe.learn.extend``); a divergence is then reported without hypotheses
    (their replays assume every merge is the rule's choice, and inherited
    merges are not).

    ``texts`` (the corpus, when at hand) enables the first-counted tie rule
    and the reading variants; ``hypotheses=False`` replays no variant.
    ``setup`` may hold what only the caller knows: ``declared`` (the special
    tokens their file declares itself), ``their_vocab`` (the byte strings it
    holds), ``their_size``, ``absent`` (given special tokens the corpus lacks).
    ``pattern`` names the split pattern ``word_counts`` were counted with: the
    reading variants and first-counted re-read the text with GPT-2's scanner
    and its safe cuts, so under another pattern they are not tried; the
    Unicode versions are, under every named pattern (``readings.versioned``).
    ``readings`` (a ``readings.Readings`` of ``texts``) keeps their reading
    differences for the caller (``profile_rules`` derives word tables from them).
    ``given``: the vocab size and special tokens were given to their trainer
    too (fuzz, the pack), so a mismatch there is their result, not a setup to
    fix first: the cause is then what the replay and the conventions show.
    """
    if extend is not None:
        special_tokens = extend.with_specials(special_tokens)
    vocab_size, special_tokens = check_training_args(vocab_size, special_tokens)
    setup = dict(setup or {})
    if not versioned(get_pattern(pattern)):
        texts = None
    if tie_rule == TEXT_ORDER and get_pattern(pattern).key != "gpt2":
        raise ValueError("tie rule first-counted reads GPT-2's pieces: not under pattern %s" % pattern)
    # 1. The reference.
    wanted = vocab_size - 256 - len(special_tokens)
    min_count = max(1, min_frequency)
    rule = tie_rule or "greatest-bytes"
    trace = None  # the reference training's (count, ties, runner-up) per merge, when taken
    if rule == TEXT_ORDER:
        if texts is None or extend is not None:
            raise ValueError("tie rule first-counted reads the corpus text in order (and no --extend)")
        ours = train_first_counted(word_counts, texts, special_tokens, wanted, min_count)
        our_vocab = build_vocab(ours, special_tokens)
    elif extend is None:
        trace = [] if hypotheses else None
        ours = learn_merges(word_counts, wanted, tie=engine_tie(rule), min_count=min_count, trace=trace)
        our_vocab = build_vocab(ours, special_tokens)
    else:
        ours = learn_merges(
            word_counts, wanted, tie=engine_tie(rule), min_count=min_count, inherited=extend.merges
        )
        our_vocab = keep_parent_ids(build_vocab(ours, special_tokens), special_tokens, extend)
    their_merges = [(bytes(a), bytes(b)) for a, b in theirs.merges]

    # 2. Compare.
    k = _first_difference(ours, their_merges)
    vocab = _vocab_report(our_vocab, theirs, exact_ids, ignore_ids)
    report = {
        "identical": False,
        "merges_identical": k is None,
        "ours": {"num_merges": len(ours), "vocab_size": len(our_vocab), "special_tokens": special_tokens},
        "theirs": {
            "path": theirs.path,
            "format": theirs.format,
            "num_merges": len(their_merges),
            "vocab_size": setup.get("their_size", len(theirs.vocab)),
            "special_tokens": list(setup.get("declared", theirs.special_tokens)),
        },
        "vocab": vocab,
        "cause": None,
        "tie_rule": None,
        "variant": None,
        "fit": len(their_merges) if k is None else None,
        "first_divergence": None,
        "divergence": None,
        "warnings": [],
        "explanations": [],
        "partial_fits": [],
        "pattern": get_pattern(pattern).name,
    }

    # 3. Explain.
    reference = others = None
    if k is not None and extend is not None:
        report["first_divergence"] = {
            "index": k,
            "theirs": pair_json(their_merges[k]) if k < len(their_merges) else None,
            "ours": pair_json(ours[k]) if k < len(ours) else None,
            "inherited": k < len(extend.merges),
        }
    elif k is not None:
        reference, others, probe = replay_hypotheses(
            word_counts,
            their_merges,
            theirs.id_of() if theirs.carries_ids else None,
            _ref_ids(their_merges),
            texts,
            special_tokens,
            variants=hypotheses,
            probe=(k, ours[k] if k < len(ours) else None),
            wanted=wanted,
            readings=readings,
            pattern=pattern,
            min_count=min_count,
            short=_unique_best(trace, k, len(their_merges)),
        )
        report["fit"] = reference.fit
        _divergence(report, k, ours, their_merges, probe, reference, others)

    # 3b. Conventions (docs/verify.md): text mode, a minimum count, when no hypothesis explains them.
    convention = None
    if reference is not None and not any(h.complete for h in [reference] + others):
        convention = newline_translation(
            texts, special_tokens, pattern, wanted, their_merges, min_count
        ) or _min_count(reference, word_counts, their_merges, wanted, min_count)

    # 4. Setup checks.
    ran_out = (k is None and len(ours) < wanted) or any(
        h.exhausted for h in ([reference] if reference else []) + (others or []) if h.complete
    )
    ran_out = ran_out or convention is not None
    warnings = setup_warnings(
        vocab_size,
        special_tokens,
        setup.get("their_vocab", set(theirs.vocab.values())),
        setup.get("declared", theirs.special_tokens),
        setup.get("their_size", len(theirs.vocab)),
        setup.get("absent"),
        ran_out,
        given,
    )
    ids_differ = k is None and vocab["identical_as_set"] and vocab["ids_identical"] is False
    if ids_differ:
        m = vocab["first_id_mismatches"][0]
        convention = id_layout(theirs.vocab, their_merges, special_tokens)
        warnings.append(
            warning(
                "ids-differ",
                "the same merges and vocab set under other ids (first: id %d is %s in ours, %s in theirs%s)%s"
                % (
                    m["id"],
                    m["ours"],
                    m["theirs"],
                    "; theirs: %s" % convention["setting"] if convention else "",
                    ": a difference under --exact-ids"
                    if exact_ids
                    else "; CS336's tests compare the merges and the vocab as a set, so this passes "
                    "(--exact-ids to require the same ids)",
                ),
            )
        )
    report["warnings"] = warnings
    report["convention"] = convention
    report["setting"] = convention["setting"] if convention else None

    # 5. Conclude.
    report["identical"] = k is None and vocab["identical_as_set"] and not (exact_ids and ids_differ)
    if not report["identical"]:
        _conclude(report, k, ours, their_merges, reference, others, exact_ids and ids_differ, given)
    report["explanation"] = render_text(report)
    return report


def _unique_best(trace, k, theirs):
    """Whether the reference's merge ``k`` was the only pair at its count (``trace``, the
    training's, None when not taken) and they made a merge ``k`` (of ``theirs``): then
    their other pair there falls short of it.
    (Instead of ``explain._falls_short``'s replay of the words that hold either pair, for a
    trace costing the training nothing measurable: english_small's hf model, PairReplay()
    0.099-0.107 -> 0.089-0.095 CPU s and PairReplay.apply 0.48-0.54 -> 0.44-0.49 s, train
    0.32-0.36 -> 0.31-0.34 s, 4 cold PyPy processes alternating; perf/verify_stages.py.)"""
    return trace is not None and k < min(len(trace), theirs) and trace[k][2] < trace[k][0]


def _min_count(reference, word_counts, their_merges, wanted, min_count):
    """``conventions.min_count_stop``, from what the reference hypothesis's replay
    of their merges found where it tells: it checked each merge at the maximum
    count and at least ``min_count``, as ``min_count_stop`` checks each at the
    maximum and above 0.  A failure with their pair below the maximum (or with
    no pair) stops that replay at the same step; only one at a maximum below
    ``min_count`` is replayed on.  (A second replay of their merges: a swapped-tie
    verify 3.33 -> 3.03 CPU s in a cold PyPy process; perf/verify_stages.py, total.)"""
    if reference.fit == len(their_merges):
        return min_count_stop(
            word_counts, their_merges, wanted, min_count, replayed=(reference.lowest, reference.left)
        )
    f = reference.failure
    if f["count"] != f["max_count"] or f["count"] <= 0:
        return None
    return min_count_stop(word_counts, their_merges, wanted, min_count)


def _divergence(report, k, ours, their_merges, probe, reference, others):
    """The first divergence: the contract's ``first_divergence`` and the detailed ``divergence``."""
    our_pair = ours[k] if k < len(ours) else None
    their_pair = their_merges[k] if k < len(their_merges) else None
    c_ours, c_theirs, m = probe["ours"], probe["theirs"], probe["max"]
    report["first_divergence"] = {
        "index": k,
        "theirs": pair_json(their_pair) if their_pair else None,
        "ours": pair_json(our_pair) if our_pair else None,
        "counts": {"theirs": c_theirs, "ours": c_ours, "max": m, "tied": len(probe["tied"])},
    }
    if their_pair is None or our_pair is None:
        kind = "length"
    elif c_theirs == m:
        kind = "tie"
    else:
        kind = "count_difference" if c_theirs else "missing_pair"
    total = len(their_merges)
    hyps = [reference.summary(total)] + [h.summary(total) for h in others]
    hyps.sort(key=lambda h: -h["consistent_merges"])
    report["divergence"] = {
        "index": k,
        "kind": kind,
        "tie": kind == "tie",
        "max_count": m,
        "ours": dict(pair_json(our_pair), count=c_ours) if our_pair else None,
        "theirs": dict(pair_json(their_pair), count=c_theirs) if their_pair else None,
        "tied_pairs": len(probe["tied"]),
        "tied_examples": [pair_json(p)["text"] for p in probe["tied"][:10]],
        "tie_rules": probe["agree"],
        "rule_choices": {r: pair_json(p)["text"] for r, p in probe["choices"].items() if p is not None},
        "hypotheses": hyps,
        "hints": [],
    }


def _complete(report, reference, others, total):
    """Every hypothesis that explains all their merges (room for trainer profiles too)."""
    out = []
    if reference.complete and reference.ties:
        for r in _RULE_ORDER:
            if r in reference.rules:
                out.append({"kind": "tie-rule", "name": r, "fits": total, "of": total})
    full = [h for h in others if h.complete]
    full.sort(key=lambda h: (_VARIANT_ORDER[h.name], sorted((h.detail or {}).items())))
    for h in full:
        e = {"kind": "variant", "name": h.name, "fits": total, "of": total}
        e["tie_rules"] = sorted(h.rules, key=_RULE_ORDER.index) if h.ties else None
        if h.detail:
            e.update(h.detail)
        if h.aliases:
            e["same_counts_as"] = h.aliases
        out.append(e)
    return out


def _conclude(report, k, ours, their_merges, reference, others, ids_mismatch, given=False):
    total = len(their_merges)
    setup = [w for w in report["warnings"] if w["code"] in SETUP_CODES and not given]
    if k is not None and reference is None:  # an extension: no hypotheses replayed
        report["cause"] = "setup" if setup or ids_mismatch else "unknown"
        return
    if k is not None:
        report["explanations"] = _complete(report, reference, others, total)
        report["partial_fits"] = [
            {"name": h.name, "fits": h.fit, "of": total, **(h.detail or {})}
            for h in sorted(others, key=lambda h: -h.fit)
            if h.fit and h.fit < total and h.fit > reference.fit
        ]
    if setup or ids_mismatch:
        report["cause"] = "setup"
        return
    convention = report.get("convention")
    if convention and convention["name"] in ("min-count", "newline-translation"):
        report["cause"] = convention["name"]
        return
    explanations = report["explanations"]
    if k is None or (k >= min(len(ours), total) and not explanations):
        report["cause"] = "unknown"  # vocab differs with equal merges, or one list a prefix of the other
        return
    if explanations:
        best = explanations[0]
        if best["kind"] == "tie-rule":
            report["cause"] = "tie-rule"
            report["tie_rule"] = best["name"]
            report["tie_rules"] = [e["name"] for e in explanations if e["kind"] == "tie-rule"]
        else:
            report["cause"] = VARIANT_CAUSE[best["name"]]
            report["variant"] = best["name"]
            report["variant_tie_rules"] = best.get("tie_rules")
            if best.get("unicode"):
                report["unicode"] = best["unicode"]  # the version that reproduces them
        return
    report["cause"] = "counts" if reference.fit < total else "unknown"
    report["count_difference"] = _count_difference(reference, their_merges)


def _count_difference(reference, their_merges):
    """What their choice needs at the first step the reference counts cannot explain."""
    f = reference.failure if reference.fit < len(their_merges) else reference.tie_failure
    if f is None:
        return None
    j = f["step"]
    pair = their_merges[j]
    top = f["top"]
    rules = [r for r in _RULE_ORDER if r in f["rules_before"]]
    # The pair the reference takes at j: under the tie rule the earlier ties follow.
    rule = rules[0] if rules else "greatest-bytes"
    choice = rule_choices(top, None, None, rules=[rule]).get(rule) if top else None
    return {
        "step": j,
        "kind": f["kind"],
        "theirs": dict(pair_json(pair), count=f["count"]),
        "reference_choice": dict(pair_json(choice), count=f["max_count"]) if choice else None,
        "tied_at_max": len(top),
        "earlier_ties_follow": rules,
        "tie_failure_step": reference.tie_failure["step"] if reference.tie_failure else None,
    }
