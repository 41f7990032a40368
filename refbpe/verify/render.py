"""The text of a verify report: rendered from the report alone, so that it
carries every conclusion the JSON holds.

Layout: one ``warning [code]: ...`` line per warning, then the verdict, whose
first word is ``identical`` or the cause (``setup``, ``tie-rule``, ``counts``,
``pre-tokenization``, ``merge-application``, ``min-count``, ``newline-translation``,
``unknown``), then the evidence:
the first divergence with its counts, how far the reference counts replay
their merges, what the earlier ties follow, and partial fits as partial fits.
"""

from .overlays import VARIANT_TEXT
from .ties import RULE_TEXT

__all__ = ["render_text"]


def _pair(p):
    return p["text"] if p else "-"


def _variant_text(e):
    extra = ", chunks of %d characters" % e["chunk_size"] if e.get("chunk_size") else ""
    if e.get("unicode"):
        extra = ": Unicode %s, at %s%s" % (
            e["unicode"],
            " ".join(e["code_points"]),
            " and %d more" % (e["code_points_total"] - len(e["code_points"]))
            if e["code_points_total"] > len(e["code_points"])
            else "",
        )
    out = "'%s' (%s%s)" % (e["name"], VARIANT_TEXT.get(e["name"], ""), extra)
    if e.get("same_counts_as"):
        out += " [on this corpus the same counts as %s]" % ", ".join(
            "'%s'%s" % (a["name"], _alias_detail(a)) for a in e["same_counts_as"]
        )
    return out


def _alias_detail(a):
    if a.get("chunk_size"):
        return " %d" % a["chunk_size"]
    return " Unicode %s" % a["unicode"] if a.get("unicode") else ""


def render_text(r):
    lines = ["warning [%s]: %s" % (w["code"], w["message"]) for w in r["warnings"]]
    lines.append(_verdict(r))
    lines.extend(_evidence(r))
    return "\n".join(lines)


def _verdict(r):
    ours, theirs = r["ours"], r["theirs"]
    if r["identical"]:
        return "identical: %d merges and the vocab (%d tokens, as a set of byte strings) agree" % (
            ours["num_merges"],
            ours["vocab_size"],
        )
    cause = r["cause"]
    head = "%s: DIFFERENT - " % cause
    convention = r.get("convention")
    if cause == "min-count":
        flag = "--min-frequency %d" % (convention["min_count"] if convention["min_count"] > 1 else 0)
        if convention["min_count"] <= 1:  # the reference stopped at its minimum count, they go on
            return head + (
                "they merge past the reference's minimum count (%d merges, down to a count of %s): every one "
                "of their merges has the maximum count, and no minimum count is theirs; reproduced by %s "
                "(refbpe train %s)"
                % (theirs["num_merges"], convention["min_count_up_to"], convention["setting"], flag)
            )
        return head + (
            "they stop after %d merges with pairs left (the best occurs %d times): every one of their merges "
            "has the maximum count, and a minimum count stops there; reproduced by %s "
            "(HF's BpeTrainer; refbpe train %s)"
            % (theirs["num_merges"], convention["left"], convention["setting"], flag)
        )
    if cause == "newline-translation":
        return (
            head
            + "the reference on the text with \\r\\n and \\r read as \\n gives exactly their merges: %s"
            % (convention["setting"])
        )
    if cause == "setup" and convention and convention["name"] == "id-layout" and r["merges_identical"]:
        return head + "the same merges and vocab set under another id layout: %s" % convention["setting"]
    if cause == "setup":
        codes = [w["code"] for w in r["warnings"] if w["code"] != "special-token-absent"]
        return head + "the two trainings were not set up alike (%s); fix that first" % ", ".join(codes)
    if cause == "tie-rule":
        e = r["explanations"][0]
        return head + "their ties are broken by %s (%s): it reproduces all %d of their merges" % (
            r["tie_rule"],
            RULE_TEXT[r["tie_rule"]],
            e["of"],
        )
    if r.get("variant"):
        e = r["explanations"][0]
        rules = e.get("tie_rules")
        return head + "%s reproduces all %d of their merges%s" % (
            _variant_text(e),
            e["of"],
            " (ties broken by %s)" % rules[0] if rules else "",
        )
    cd = r.get("count_difference")
    if cause == "counts" and cd:
        return head + (
            "a count difference at merge %d: their choice %s needs a count of at least %d "
            "(the count of %s, which the reference takes), but the reference counts it %d"
            % (
                cd["step"],
                _pair(cd["theirs"]),
                cd["reference_choice"]["count"] if cd["reference_choice"] else 0,
                _pair(cd["reference_choice"]),
                cd["theirs"]["count"],
            )
        )
    if r["merges_identical"]:
        v = r["vocab"]
        return (
            head
            + "the merges agree but the vocab differs as a set: %d of ours missing in theirs, %d extra"
            % (
                v["num_missing_in_theirs"],
                v["num_extra_in_theirs"],
            )
        )
    if cd and cd["kind"] == "tie":
        return head + (
            "every one of their merges has the maximum count under the reference, but no known tie rule "
            "reproduces all their ties (the rules the earlier ties follow fail at merge %d): an unknown tie "
            "rule, or a count difference that lands on ties" % cd["step"]
        )
    fd = r.get("first_divergence")
    if fd and "inherited" in fd:  # --extend: a divergence is located, not explained
        where = "one of the parent's inherited merges" if fd["inherited"] else "after the inherited merges"
        return head + "their merge %d is %s, ours is %s: %s%s" % (
            fd["index"],
            _pair(fd["theirs"]),
            _pair(fd["ours"]),
            where,
            " (they extend another parent, or none)" if fd["inherited"] else "",
        )
    return head + "their merges (%d) and ours (%d) differ in number only" % (
        theirs["num_merges"],
        ours["num_merges"],
    )


def _evidence(r):
    d = r.get("divergence")
    if d is None:
        return []
    out = []
    k = d["index"]
    head = "first divergence at merge %d (0-based)" % k
    if d["kind"] == "length":
        if d["theirs"] is None:
            out.append(
                "%s: theirs stops after %d merges, ours continues with %s (count %d)"
                % (head, r["theirs"]["num_merges"], _pair(d["ours"]), d["ours"]["count"])
            )
        else:
            out.append(
                "%s: ours stops after %d merges, theirs continues with %s (count %d under the reference)"
                % (head, r["ours"]["num_merges"], _pair(d["theirs"]), d["theirs"]["count"])
            )
    else:
        out.append("%s: theirs %s, ours %s" % (head, _pair(d["theirs"]), _pair(d["ours"])))
        if d["tie"]:
            line = "a tie: both pairs occur %d times (%d pairs share the maximum)" % (
                d["max_count"],
                d["tied_pairs"],
            )
            if d["tie_rules"]:
                line += "; at this tie their choice agrees with: %s" % ", ".join(d["tie_rules"])
            out.append(line)
        elif d["kind"] == "count_difference":
            out.append(
                "counts differ: under the reference semantics their pair occurs %d times, "
                "ours %d (the maximum)" % (d["theirs"]["count"], d["ours"]["count"])
            )
        else:
            out.append(
                "counts differ: their pair does not occur at all under the reference semantics "
                "(ours occurs %d times)" % d["ours"]["count"]
            )
    total = r["theirs"]["num_merges"]
    if r["fit"] == total:
        line = "every one of their merges has the maximum count under the reference semantics"
        if r["cause"] == "tie-rule":
            line += ": only tie-breaking differs (their ties all agree with: %s)" % ", ".join(r["tie_rules"])
        out.append(line)
    else:
        out.append("the reference counts replay the first %d of their %d merges" % (r["fit"], total))
    cd = r.get("count_difference")
    if cd:
        follow = cd["earlier_ties_follow"]
        out.append(
            "their first %d merges are ours; %s"
            % (
                k,
                "the ties before merge %d all follow: %s" % (cd["step"], ", ".join(follow))
                if follow
                else "no known tie rule follows all the earlier ties",
            )
        )
        if cd["tie_failure_step"] is not None and cd["kind"] == "count":
            out.append(
                "the last tie rule consistent with their ties failed at merge %d" % cd["tie_failure_step"]
            )
    for e in r["explanations"][1:]:
        what = e["name"] if e["kind"] == "tie-rule" else _variant_text(e)
        out.append("also reproduces all their merges: %s %s" % (e["kind"], what))
    if r["partial_fits"]:
        out.append(
            "partial fits (not the cause): "
            + "; ".join(
                "'%s'%s fits the first %d of %d"
                % (
                    p["name"],
                    " (chunks of %d)" % p["chunk_size"] if p.get("chunk_size") else "",
                    p["fits"],
                    p["of"],
                )
                for p in r["partial_fits"][:5]
            )
        )
    return out
