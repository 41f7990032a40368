"""How long ``refbpe fuzz`` takes to find and to shrink each planted bug, the trainer run as a command.

For each planted bug of ``tests/planted_trainers.py`` (``FUZZ_BUGS``) and each
seed, runs ``refbpe fuzz --train 'python planted_trainers.py train BUG ...'``
(``--counts`` for the wrapping counter) under the fuzzing interpreter, with no
example database, and reads ``--json``: the class that found it, the seconds
to find and to shrink, the examples and the minimal input's size.  Prints one
row per bug with the medians over the seeds::

    .venv/bin/python perf/fuzz_find.py                                  # PyPy fuzzer, CPython trainer
    .venv/bin/python perf/fuzz_find.py --fuzzer .venv/bin/python --seeds 0,1,2 --bugs stale-heap

The trainer runs under ``--trainer`` (default this interpreter: a command
starts faster under CPython than under PyPy).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from planted_trainers import FUZZ_BUGS  # noqa: E402


def one_run(fuzzer, trainer, bug, seed, budget):
    command = "%s %s train %s {input} {vocab_size} {out} {special_token}" % (
        trainer,
        os.path.join(ROOT, "tests", "planted_trainers.py"),
        bug,
    )
    with tempfile.TemporaryDirectory() as d:
        argv = [fuzzer, "-m", "refbpe", "fuzz", "--train", command, "--seed", str(seed), "--json"]
        argv += ["--budget", str(budget), "--out", d, "--db", "none"]
        if bug == "int32-counts":
            argv.append("--counts")
        r = subprocess.run(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=ROOT)
        )
    if r.returncode not in (0, 1):
        raise SystemExit("fuzz failed: %s" % r.stderr.decode())
    return json.loads(r.stdout)["finding"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fuzzer", default=os.path.join(ROOT, ".venv-pypy", "bin", "python"))
    p.add_argument("--trainer", default=sys.executable)
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--bugs", default=",".join(b for b in FUZZ_BUGS if b != "none"))
    p.add_argument("--budget", type=float, default=60)
    args = p.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    print("fuzzer %s, trainer %s, seeds %s, budget %g s" % (args.fuzzer, args.trainer, seeds, args.budget))
    print("%-24s %-34s %9s %10s %9s %6s" % ("bug", "classes", "find s", "shrink s", "examples", "bytes"))
    for bug in args.bugs.split(","):
        found = [one_run(args.fuzzer, args.trainer, bug, s, args.budget) for s in seeds]
        hits = [f for f in found if f]
        if not hits:
            print("%-24s not found in %g s" % (bug, args.budget))
            continue
        size = [f.get("input_bytes", sum(len(w) // 2 for w in f.get("counts", {}))) for f in hits]
        print(
            "%-24s %-34s %9.1f %10.1f %9d %6d%s"
            % (
                bug,
                ",".join(sorted({f["class"] for f in hits})),
                statistics.median(f["find_seconds"] for f in hits),
                statistics.median(f["shrink_seconds"] for f in hits),
                statistics.median(f["examples"] for f in hits),
                statistics.median(size),
                "" if len(hits) == len(found) else "  (found by %d of %d seeds)" % (len(hits), len(found)),
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
