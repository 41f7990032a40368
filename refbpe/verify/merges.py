"""Comparing another trainer's merges and vocab with the reference: ``verify_merges``.

The reference merges come from ``merge.learn_merges`` over the given word
counts.  At the first index k where the merge lists differ, both pairs' counts
after the k shared merges are computed under the reference semantics: a tie
is checked against the known tie rules (``ties``), a count difference against
the counting variants (``variants``) when the corpus is at hand.
"""

from ..merge import learn_merges
from ..train import build_vocab, check_training_args
from .display import pair_json, show, show_pair
from .replay import PairReplay
from .ties import RULE_TEXT, TIE_RULES, first_counted, rule_choices
from .variants import VARIANTS, count_variant, replay_consistency

__all__ = ["verify_merges"]


def _ref_ids(merges, count):
    ids = {bytes([i]): i for i in range(256)}
    for k, (a, b) in enumerate(merges[:count]):
        ids.setdefault(a + b, 256 + k)
    return ids


def verify_merges(
    word_counts,
    vocab_size,
    special_tokens,
    theirs,
    texts=None,
    hypotheses=True,
    ignore_ids=False,
    pattern=None,
):
    """The report (a dict) comparing ``theirs`` (a ``formats.Model``) with the
    reference trained on ``word_counts``.  ``texts`` (the corpus, when
    available) enables the first-counted tie rule and the counting variants."""
    vocab_size, special_tokens = check_training_args(vocab_size, special_tokens)
    wanted = vocab_size - 256 - len(special_tokens)
    ours = learn_merges(word_counts, wanted)
    our_vocab = build_vocab(ours, special_tokens)
    their_merges = [(bytes(a), bytes(b)) for a, b in theirs.merges]

    k = None
    for i in range(min(len(ours), len(their_merges))):
        if ours[i] != their_merges[i]:
            k = i
            break
    if k is None and len(ours) != len(their_merges):
        k = min(len(ours), len(their_merges))

    report = {
        "identical": False,
        "first_divergence": k,
        "merges_identical": k is None,
        "ours": {"num_merges": len(ours), "vocab_size": len(our_vocab), "special_tokens": special_tokens},
        "theirs": {
            "path": theirs.path,
            "format": theirs.format,
            "num_merges": len(their_merges),
            "vocab_size": len(theirs.vocab),
            "special_tokens": theirs.special_tokens,
        },
    }
    lines = []

    # Vocab: as a set of byte strings, then ids where the format has them.
    our_set, their_set = set(our_vocab.values()), set(theirs.vocab.values())
    missing = sorted(our_set - their_set)
    extra = sorted(their_set - our_set)
    ids_same = None
    id_mismatches = []
    if theirs.carries_ids:
        ids_same = our_vocab == theirs.vocab
        if not ids_same:
            for i in sorted(set(our_vocab) | set(theirs.vocab)):
                if our_vocab.get(i) != theirs.vocab.get(i):
                    id_mismatches.append(
                        {
                            "id": i,
                            "ours": show(our_vocab[i]) if i in our_vocab else None,
                            "theirs": show(theirs.vocab[i]) if i in theirs.vocab else None,
                        }
                    )
                    if len(id_mismatches) >= 10:
                        break
    report["vocab"] = {
        "identical_as_set": not missing and not extra,
        "ids_identical": ids_same,
        "ids_compared": bool(theirs.carries_ids and not ignore_ids),
        "missing_in_theirs": [show(b) for b in missing[:20]],
        "num_missing_in_theirs": len(missing),
        "extra_in_theirs": [show(b) for b in extra[:20]],
        "num_extra_in_theirs": len(extra),
        "first_id_mismatches": id_mismatches,
    }
    ids_ok = ids_same is None or ignore_ids or ids_same
    report["identical"] = k is None and not missing and not extra and ids_ok

    if k is None:
        lines.append("merges identical (%d merges)" % len(ours))
        if missing or extra:
            lines.append(
                "vocab differs as a set: %d of ours missing in theirs (e.g. %s), %d extra in theirs (e.g. %s)"
                % (
                    len(missing),
                    ", ".join(show(b) for b in missing[:3]) or "-",
                    len(extra),
                    ", ".join(show(b) for b in extra[:3]) or "-",
                )
            )
        elif not ids_ok:
            lines.append(
                "vocab is the same set of byte strings but the ids differ "
                "(first: id %d is %s in ours, %s in theirs); "
                "pass --ignore-ids to compare the set only"
                % (id_mismatches[0]["id"], id_mismatches[0]["ours"], id_mismatches[0]["theirs"])
            )
        else:
            lines.append("vocab identical (%d tokens)" % len(our_vocab))
        report["explanation"] = "; ".join(lines)
        report["divergence"] = None
        return report

    their_ids = theirs.id_of()
    ref_ids = _ref_ids(ours, k)
    replay = PairReplay(word_counts)
    for pair in ours[:k]:
        replay.apply(pair)
    m = replay.max_count()
    div = {"index": k, "max_count": m}
    report["divergence"] = div
    our_pair = ours[k] if k < len(ours) else None
    their_pair = their_merges[k] if k < len(their_merges) else None
    div["ours"] = dict(pair_json(our_pair), count=replay.count(our_pair)) if our_pair else None
    div["theirs"] = dict(pair_json(their_pair), count=replay.count(their_pair)) if their_pair else None
    div["tie"] = False
    div["tie_rules"] = []
    div["hints"] = []
    head = "first divergence at merge %d (0-based)" % k

    if their_pair is None or our_pair is None:
        div["kind"] = "length"
        if their_pair is None:
            lines.append(
                "%s: theirs stops after %d merges, ours continues with %s (count %d)"
                % (head, len(their_merges), show_pair(our_pair), replay.count(our_pair))
            )
            div["hints"].append(
                "a different number of merges: check how vocab_size counts special tokens and the 256 bytes"
            )
        else:
            lines.append(
                "%s: ours stops after %d merges (%s), theirs continues with %s (count %d under the reference)"
                % (
                    head,
                    len(ours),
                    "no pair left" if m == 0 else "vocab size reached",
                    show_pair(their_pair),
                    replay.count(their_pair),
                )
            )
            div["hints"].append(
                "they learn more merges: check --vocab-size and how special tokens are counted in it"
            )
    else:
        c_ours, c_theirs = replay.count(our_pair), replay.count(their_pair)
        lines.append("%s: theirs %s, ours %s" % (head, show_pair(their_pair), show_pair(our_pair)))
        if c_theirs == m:
            tied = replay.tied(m)
            div["kind"] = "tie"
            div["tie"] = True
            div["tied_pairs"] = len(tied)
            div["tied_examples"] = [show_pair(p) for p in tied[:10]]
            choices = rule_choices(tied, their_ids, ref_ids)
            if texts is not None:
                first = first_counted(texts, special_tokens, ours[:k], tied, pattern)
                if first is not None:
                    choices["first-counted"] = first
            agree = [r for r, _ in TIE_RULES if choices.get(r) == their_pair]
            div["tie_rules"] = agree
            div["rule_choices"] = {r: show_pair(p) for r, p in choices.items()}
            lines.append("a tie: both pairs occur %d times (%d pairs share the maximum)" % (m, len(tied)))
            if agree:
                lines.append(
                    "their choice agrees with: " + "; ".join("%s (%s)" % (r, RULE_TEXT[r]) for r in agree)
                )
            else:
                lines.append(
                    "their choice agrees with none of the known tie rules (%s)"
                    % ", ".join(r for r, _ in TIE_RULES)
                )
        else:
            div["kind"] = "count_difference" if c_theirs > 0 else "missing_pair"
            if c_theirs > 0:
                lines.append(
                    "counts differ: under the reference semantics their pair occurs %d times, "
                    "ours %d (the maximum)" % (c_theirs, c_ours)
                )
            else:
                lines.append(
                    "counts differ: their pair does not occur at all under the reference semantics "
                    "(ours occurs %d times)" % c_ours
                )
            div["hints"] = [
                "different pre-tokenization "
                "(another regex, or another Unicode version for \\p{L}/\\p{N}/\\s)",
                "reading line by line (whitespace runs and newlines are then counted differently)",
                "special tokens counted as text (or documents not split at them)",
                "a prefix space added to each text (add_prefix_space)",
                "counts kept in 32-bit integers (overflow)"
                if m >= 1 << 31
                else "a bug in their incremental count updates",
            ]
    if hypotheses and texts is not None and their_merges:
        hyp = []
        for name, desc, as_text, line_mode, prefix in VARIANTS:
            wc = (
                word_counts
                if name == "reference"
                else count_variant(texts, special_tokens, as_text, line_mode, prefix, pattern)
            )
            steps, rules, ties = replay_consistency(
                wc, their_merges, their_ids, _ref_ids(their_merges, len(their_merges))
            )
            hyp.append(
                {
                    "variant": name,
                    "description": desc,
                    "consistent_merges": steps,
                    "of": len(their_merges),
                    "tie_rules_consistent": rules,
                    "ties": ties,
                }
            )
        hyp.sort(key=lambda h: -h["consistent_merges"])
        div["hypotheses"] = hyp
        best = hyp[0]
        ref = [h for h in hyp if h["variant"] == "reference"][0]
        if best["consistent_merges"] > ref["consistent_merges"]:
            full = best["consistent_merges"] == best["of"]
            msg = (
                "their merges are consistent with maximum counts under '%s' (%s) for %s merges "
                "(vs %d under the reference)"
                % (
                    best["variant"],
                    best["description"],
                    "all %d" % best["of"]
                    if full
                    else "the first %d of %d" % (best["consistent_merges"], best["of"]),
                    ref["consistent_merges"],
                )
            )
            if best["tie_rules_consistent"]:
                msg += ", breaking every tie by: %s" % ", ".join(best["tie_rules_consistent"])
            lines.append(msg)
            div["hints"].insert(0, "counting as '%s': %s" % (best["variant"], best["description"]))
        elif ref["consistent_merges"] == ref["of"]:
            msg = (
                "every one of their merges has the maximum count under the reference semantics: "
                "only tie-breaking differs"
            )
            if ref["tie_rules_consistent"]:
                msg += " (their ties all agree with: %s)" % ", ".join(ref["tie_rules_consistent"])
            lines.append(msg)
    if div["hints"] and div["kind"] != "tie":
        lines.append("possible causes: " + "; ".join(div["hints"]))
    report["explanation"] = "\n".join(lines)
    return report
