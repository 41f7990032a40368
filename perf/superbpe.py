"""SuperBPE: `refbpe train --profile superbpe` against the official trainer and against plain BPE.

    .venv/bin/python perf/superbpe.py [--corpora english_small,english_medium] [--vocab-size 10000]
        [--transition 8000] [--repeats 3] [--workers 2] [--interpreter pypy] [--official PATH]

Per corpus, each run a whole process (``harness.measure``), alternating (run 1 of
each, then run 2, ...) so that load from elsewhere hits all of them:

- ``superbpe``: ``refbpe train CORPUS --profile superbpe --transition T``;
- ``official``: the official SuperBPE recipe at the same settings (vocab size,
  transition, no special token), the Rust build of ``tests/superbpe_official/``
  (``superbpe-train train OUT V T CORPUS``: the fork's tokenizers crate, all
  cores through rayon); ``--official`` or ``REFBPE_SUPERBPE_TRAINER`` names it,
  and without it the row is left out with a message;
- ``plain``: the plain profile SuperBPE's first stage is (``--profile hf
  --sequences lines --no-add-prefix-space``), for docs/superbpe.md's Cost table.

Printed per corpus: medians and the least of wall time, medians of CPU seconds
(the process and its workers: the figure to read on a shared machine) and the
``--report`` phases (count, merge) of refbpe's runs; then superbpe / official
and superbpe / plain of each, the goals (``GOAL_OFFICIAL``, ``GOAL_PLAIN``) met
or missed on wall time, whether refbpe's merges and vocab are the official
trainer's (stage 2's tokenizer.json), and the load average before and after.
"""

import argparse
import json
import os
import shutil
import statistics
import tempfile

from harness import corpus, interpreter, progress, run_result

GOAL_OFFICIAL = 0.5  # the issue's: refbpe's SuperBPE at most half the official trainer's time
GOAL_PLAIN = 2.0  # and within 2x the plain profile's (vocab 10K, T = 8K)
OFFICIAL_VARIABLE = "REFBPE_SUPERBPE_TRAINER"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", "--corpus", default="english_small,english_medium")
    ap.add_argument("--vocab-size", type=int, default=10000)
    ap.add_argument("--transition", type=int, default=8000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--interpreter", default="pypy", choices=["pypy", "cpython"])
    ap.add_argument("--official", default=os.environ.get(OFFICIAL_VARIABLE), help="superbpe-train's path")
    ap.add_argument("--no-plain", action="store_true", help="leave the plain profile out")
    args = ap.parse_args()
    if not args.official or not os.path.isfile(args.official):
        print(
            "the official trainer is not built: tests/superbpe_official/README.md says how; "
            "--official or %s names it (its row is left out)" % OFFICIAL_VARIABLE
        )
        args.official = None
    for name in args.corpora.split(","):
        work = tempfile.mkdtemp(prefix="refbpe-perf-")
        try:
            _corpus(args, name, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _corpus(args, name, work):
    python = interpreter(args.interpreter)
    path = corpus(name)
    refbpe = [python, "-m", "refbpe", "train", path, "--vocab-size", str(args.vocab_size)]
    refbpe += ["--workers", str(args.workers), "--quiet"]
    profiles = {"superbpe": ["--profile", "superbpe", "--transition", str(args.transition)]}
    if not args.no_plain:
        profiles["plain"] = ["--profile", "hf", "--sequences", "lines", "--no-add-prefix-space"]
    jobs = []
    for label, options in profiles.items():
        out, report = os.path.join(work, label), os.path.join(work, label + ".json")
        jobs.append(Job(label, refbpe + options + ["-o", out, "--report", report], out, report))
    if args.official:
        out = os.path.join(work, "official")
        cmd = [args.official, "train", out, str(args.vocab_size), str(args.transition), path]
        jobs.append(Job("official", cmd, out))
    load_before = os.getloadavg()
    _run(args.repeats, jobs)
    runs = {job.label: job.summary() for job in jobs}
    print(
        "\n%s, vocab %d, transition %d, refbpe on %s with %d workers, %d runs each"
        % (name, args.vocab_size, args.transition, args.interpreter, args.workers, args.repeats)
    )
    print("%-9s %8s %8s %8s %8s %8s" % ("", "wall s", "least s", "cpu s", "count s", "merge s"))
    for label, r in runs.items():
        phases = ["%8.2f" % r[k] if r[k] is not None else "%8s" % "-" for k in ("count", "merge")]
        print("%-9s %8.2f %8.2f %8.2f %s" % (label, r["wall"], r["least"], r["cpu"], " ".join(phases)))
    s = runs["superbpe"]
    for other, goal in (("official", GOAL_OFFICIAL), ("plain", GOAL_PLAIN)):
        if other not in runs:
            continue
        o = runs[other]
        ratio = s["wall"] / o["wall"]
        print(
            "superbpe / %-8s wall %.2fx (least %.2fx), cpu %.2fx; goal <= %.1fx: %s"
            % (
                other,
                ratio,
                s["least"] / o["least"],
                s["cpu"] / o["cpu"],
                goal,
                "met" if ratio <= goal else "missed",
            )
        )
    if args.official:
        same = _same_model(os.path.join(work, "superbpe"), os.path.join(work, "official", "stage2"))
        print("refbpe's merges and vocab are the official trainer's: %s" % ("yes" if same else "NO"))
    print("load average before %s, after %s" % (_load(load_before), _load(os.getloadavg())))


class Job(object):
    """One command, run ``repeats`` times from an empty output directory ``out``."""

    def __init__(self, label, cmd, out, report=None):
        self.label, self.cmd, self.out, self.report = label, cmd, out, report
        self.runs = []

    def run(self, i, repeats):
        shutil.rmtree(self.out, ignore_errors=True)  # the official trainer wants no earlier merges.txt
        r = run_result(self.cmd)
        progress(self.label, i, repeats, r)
        count = merge = None
        if self.report:
            with open(self.report) as f:
                phases = json.load(f)
            count, merge = phases["count"]["seconds"], phases["merge"]["seconds"]
        self.runs.append((r["wall"], r["cpu_seconds"], count, merge))

    def summary(self):
        walls, cpus, counts, merges = zip(*self.runs)
        return {
            "wall": statistics.median(walls),
            "least": min(walls),
            "cpu": statistics.median(cpus),
            "count": statistics.median(counts) if self.report else None,
            "merge": statistics.median(merges) if self.report else None,
        }


def _run(repeats, jobs):
    for i in range(repeats):
        for job in jobs:
            job.run(i, repeats)


def _same_model(ours, theirs):
    """Whether the ``tokenizer.json`` files in ``ours`` and ``theirs`` hold the same merges and vocab."""
    models = []
    for directory in (ours, theirs):
        with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as f:
            model = json.load(f)["model"]
        merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
        models.append((merges, model["vocab"]))
    return models[0] == models[1]


def _load(avg):
    return "/".join("%.1f" % x for x in avg)


if __name__ == "__main__":
    main()
