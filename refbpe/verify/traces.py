"""Comparing two training traces step by step: ``compare_traces``.

A trace (``formats.trace``) records each merge with its pair's count.  When
their pair counts are off, the merge order often stays the same for hundreds
of steps, so the merge lists agree while the counts already differ: the first
step whose count (or pair) differs is where their counting went wrong.

With the word counts, the words that hold the pair at that step are listed
(the reference's merges up to the step replayed over them,
``replay.PairReplay``): each word, its count in the corpus, the pair's
occurrences in it and the count they add.  Their total differs from the
reference's by ``d``; a word whose corpus count divides ``d`` could account for
it alone (``d / count`` occurrences more or fewer), so those come first, and
among them the words that hold the pair more than once (where counting per
occurrence and per word part).
Cost: one pass over the two traces; with the word counts, one replay of the
reference's first ``k`` merges (O(length) per word holding each pair).

    >>> ours = [{"step": 0, "pair": (b"a", b"b"), "count": 3}]
    >>> compare_traces(ours, [{"step": 0, "pair": (b"a", b"b"), "count": 4}])["first_difference"]["kind"]
    'count'
"""

from .display import pair_json, show, show_pair
from .replay import PairReplay

__all__ = ["compare_traces", "render_trace_comparison"]

SHOWN_WORDS = 10


def compare_traces(ours, theirs, word_counts=None, limit=SHOWN_WORDS):
    """The report (a dict) of trace ``theirs`` against the reference's ``ours``
    (records with ``step``, ``pair`` and ``count``)."""
    report = {"identical": True, "steps": [len(ours), len(theirs)], "first_difference": None, "words": []}
    for k in range(min(len(ours), len(theirs))):
        o, t = ours[k], theirs[k]
        if o["pair"] != t["pair"] or o["count"] != t["count"]:
            kind = "pair" if o["pair"] != t["pair"] else "count"
            report["identical"] = False
            report["first_difference"] = {
                "step": k,
                "kind": kind,
                "ours": dict(pair_json(o["pair"]), count=o["count"]),
                "theirs": dict(pair_json(t["pair"]), count=t["count"]),
            }
            if word_counts is not None:
                merges = [r["pair"] for r in ours[:k]]
                report["words"] = _words_holding(word_counts, merges, t["pair"], t["count"], limit)
            return report
    if len(ours) != len(theirs):
        k = min(len(ours), len(theirs))
        report["identical"] = False
        report["first_difference"] = {"step": k, "kind": "length", "ours": None, "theirs": None}
    return report


def _words_holding(word_counts, merges, pair, their_count, limit):
    """The words that hold ``pair`` after ``merges``, those that could explain
    the difference from ``their_count`` alone first."""
    replay = PairReplay(word_counts)
    for m in merges:
        replay.apply(m)
    key = replay.key(pair)
    if key is None:
        return []
    a, b = key >> 32, key & 0xFFFFFFFF
    difference = their_count - replay.count_key(key)
    words = {w: word for word, w in replay.index.items()}
    rows = []
    for w in set(replay.where.get(key, ())):
        ids = replay.words[w]
        n = sum(1 for i in range(len(ids) - 1) if ids[i] == a and ids[i + 1] == b)
        if n == 0:
            continue
        freq = replay.freqs[w]
        row = {
            "word": words[w].hex(),
            "text": show(words[w]),
            "count": freq,
            "occurrences": n,
            "adds": n * freq,
        }
        if difference and difference % freq == 0 and n + difference // freq >= 0:
            row["implied_occurrences"] = n + difference // freq
        rows.append(row)
    # Words that could explain it alone first; among them, those holding the pair more than once
    # (where counting per occurrence and per word part), then by what they add.
    rows.sort(key=lambda r: ("implied_occurrences" not in r, r["occurrences"] == 1, -r["adds"], r["word"]))
    return rows[:limit]


def render_trace_comparison(report):
    """The report as text."""
    if report["identical"]:
        return "identical: %s steps, the same pairs and counts" % format(report["steps"][0], ",")
    d = report["first_difference"]
    if d["kind"] == "length":
        return "DIFFERENT: the traces agree for %d steps, then ours has %d and theirs %d" % (
            d["step"],
            report["steps"][0],
            report["steps"][1],
        )
    ours, theirs = d["ours"], d["theirs"]
    pair = lambda p: show_pair((bytes.fromhex(p["left"]), bytes.fromhex(p["right"])))  # noqa: E731
    if d["kind"] == "count":
        head = "DIFFERENT at step %d: the same pair %s, counted %s by them and %s by the reference" % (
            d["step"],
            pair(ours),
            format(theirs["count"], ","),
            format(ours["count"], ","),
        )
    else:
        head = "DIFFERENT at step %d: theirs %s (count %s), the reference %s (count %s)" % (
            d["step"],
            pair(theirs),
            format(theirs["count"], ","),
            pair(ours),
            format(ours["count"], ","),
        )
    lines = [head]
    if report["words"]:
        lines.append(
            "  words holding %s at that step (word: corpus count x occurrences = count added):" % pair(theirs)
        )
        for r in report["words"]:
            line = "    %s: %s x %d = %s" % (
                r["text"],
                format(r["count"], ","),
                r["occurrences"],
                format(r["adds"], ","),
            )
            if "implied_occurrences" in r:
                line += "  (their total fits %d occurrences here)" % r["implied_occurrences"]
            lines.append(line)
    return "\n".join(lines)
