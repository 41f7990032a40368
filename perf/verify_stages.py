"""Where ``refbpe verify``'s time goes: CPU seconds per stage, in-process, one interpreter.

Runs ``refbpe verify CORPUS --against MODEL`` (the CLI's ``run``) once to warm
up imports, then ``--repeats`` times with timers wrapped around its stages
(inclusive CPU seconds of each stage's function, and its number of calls),
and prints the medians::

    .venv/bin/python perf/verify_stages.py --against tokenizer.json --vocab 2000
    .venv-pypy/bin/python perf/verify_stages.py --against tokenizer.json --vocab 2000 --repeats 3

A stage nested in another is counted in both (``reading deltas`` inside
``overlays``).  The first run of each process is what ``refbpe verify`` pays
(PyPy's JIT warms up in it), so ``--repeats 1`` (the default) times a cold
process; later repeats show the warm cost.  The models of
``perf/verify_cost.py --build DIR`` serve as ``--against`` (``DIR/tokenizer.json``
is its ``hf`` model).

``--observers N`` times instead, in this cold process, ``PairReplay.apply`` over the
first N merges of ``--against`` with the counting and merging variants observing it
(``overlays``: once-per-pretoken, double-counted-equal-pairs, right-to-left,
overlapping-merges), as in the first steps of a verify that explains a divergence.
"""

import argparse
import contextlib
import io

from harness import SPECIAL, corpus, cpu_seconds, stopwatch

import refbpe.cli.verify as cli_verify
import refbpe.verify.explain as explain
import refbpe.verify.merges as merges
import refbpe.verify.overlays as overlays
import refbpe.verify.profile_rules as profile_rules
import refbpe.verify.readings as readings
from refbpe.cli.commands import build_parser
from refbpe.cli.pypy_jit import tune_verify_jit
from refbpe.verify import replay, ties

STAGES = [
    ("reference counts", cli_verify, "reference_counts"),
    ("their model", cli_verify, "their_model"),
    ("train (learn_merges)", merges, "learn_merges"),
    ("replay_hypotheses", merges, "replay_hypotheses"),
    ("  PairReplay()", replay.PairReplay, "__init__"),
    ("  PairReplay.copy", replay.PairReplay, "copy"),
    ("  first-counted", ties.FirstCounted, "choose"),
    ("  overlays", explain, "make_overlays"),
    ("    reading deltas", readings.Readings, "delta"),
    ("    unicode deltas", readings, "unicode_delta"),
    ("    WordsOverlay init", overlays.WordsOverlay, "__init__"),
    ("  PairReplay.apply", replay.PairReplay, "apply"),
    ("  checks", explain, "_check"),
    ("  overlay refresh", overlays.Overlay, "refresh"),
    ("  overlay before_apply", overlays.WordsOverlay, "before_apply"),
    ("profile_verdict", cli_verify, "profile_verdict"),
    ("  word tables", profile_rules.WordTables, "get"),
    ("  profile training", profile_rules, "compare_with_profile"),
]


def _timed(fn, totals, name):
    def wrapper(*args, **kwargs):
        t = cpu_seconds()
        try:
            return fn(*args, **kwargs)
        finally:
            s = totals.setdefault(name, [0.0, 0])
            s[0] += cpu_seconds() - t
            s[1] += 1

    return wrapper


def time_observers(args):
    from refbpe.loader import read_model
    from refbpe.verify import count_variant

    text = open(args.corpus, encoding="utf-8").read()
    r = replay.PairReplay(count_variant([text], [SPECIAL]))
    model = read_model(args.against, "auto", [SPECIAL], strict=False)
    merges = [(bytes(a), bytes(b)) for a, b in model.merges][: args.observers]
    r.observers = [
        overlays.OncePerPretoken(r),
        overlays.DoubleCountedEqualPairs(r),
        overlays.WordsOverlay("right-to-left", r, merge=overlays.merge_right_to_left),
        overlays.WordsOverlay("overlapping-merges", r, merge=overlays.merge_overlapping),
    ]
    with stopwatch() as clock:
        for pair in merges:
            r.apply(pair, track=True)
    deltas = sum(len(o.delta) for o in r.observers)
    print("apply with observers, %d merges: %.3f CPU s (%d delta keys)" % (len(merges), clock.cpu, deltas))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=corpus("english_small"))
    ap.add_argument("--against", required=True)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--observers", type=int, metavar="N", help="time the replay's observers over N merges")
    args = ap.parse_args()
    tune_verify_jit()  # as ``refbpe verify`` does (after the imports here, before them there)
    if args.observers:
        return time_observers(args)
    argv = ["verify", args.corpus, "--against", args.against, "--vocab-size", str(args.vocab)]
    argv += ["--special-token", SPECIAL, "--workers", "1"]
    totals = {}
    for name, owner, attr in STAGES:
        setattr(owner, attr, _timed(getattr(owner, attr), totals, name))
    runs = []
    for _ in range(args.repeats):
        totals.clear()
        with stopwatch() as whole, contextlib.redirect_stdout(io.StringIO()):
            cli_verify.run(build_parser().parse_args(argv))
        totals["total"] = [whole.cpu, 1]
        runs.append(dict(totals))
    print("%-24s %8s %6s" % ("stage", "cpu s", "calls"))
    for name in ["total"] + [n for n, _, _ in STAGES]:
        xs = sorted(r.get(name, [0.0, 0])[0] for r in runs)
        calls = runs[0].get(name, [0.0, 0])[1]
        print("%-24s %8.3f %6d" % (name, xs[len(xs) // 2], calls))


if __name__ == "__main__":
    main()
