"""What ``certify`` and ``train --trace`` cost against ``train``, from the same word counts.

The corpus is counted once (``refbpe count``) and a model trained once from
the counts; then, round-robin (``--repeats`` rounds, each job once per round),
whole processes of::

    refbpe train --counts C --vocab-size V -o DIR              (train)
    refbpe train --counts C --vocab-size V -o DIR --trace T    (train --trace)
    refbpe certify DIR --counts C --vocab-size V                (certify)

and three phase runs, a process each, that read the counts and then train (with a
trace or without) or certify in-process, timing CPU seconds with
``harness.stopwatch``: imports, reading the counts (shared by both commands),
reading their model (certify's ``read_model``: its first read, as the command
pays it), and the phase itself (``train_from_counts``; ``certify``).  Medians of
CPU seconds (``wait4`` rusage, the figure a loaded machine disturbs least) and
wall seconds, the least CPU seconds of the rounds, and the ratios certify / train
and train --trace / train, whole and by phase; the load
average before and after::

    .venv/bin/python perf/certify_cost.py                         # PyPy, english_medium, vocab 10,000
    .venv/bin/python perf/certify_cost.py --repeats 5 --tree /work/main   # another source tree
"""

import argparse
import json
import os
import statistics
import sys
import tempfile

from harness import INTERPRETERS, ROOT, corpus, cpu_seconds, run_result, stopwatch, tree_env
from harness import SPECIAL as EOT

from refbpe.corpus.countfile import sum_counts
from refbpe.formats import read_model
from refbpe.learn.train import train_from_counts
from refbpe.verify.certify import certify


def phase(what, counts_path, model, vocab):
    """In a child: the CPU seconds of the start and imports, of reading the counts and of ``what``."""
    imports = cpu_seconds()  # the start and imports: all this process has used so far
    with stopwatch() as reading:
        counts = sum_counts([counts_path])
    with stopwatch() as loading:
        theirs = read_model(model, "auto", [EOT], strict=False) if what == "certify" else None
    with stopwatch() as checking:
        if what in ("train", "trace"):
            train_from_counts(counts, vocab, [EOT], trace=[] if what == "trace" else None)
            ok = True
        else:
            ok = certify(counts, theirs.merges, "greatest-bytes", None, vocab - 257)["certified"]
    figures = {"imports": imports, "read": reading.cpu, "model": loading.cpu, "phase": checking.cpu, "ok": ok}
    print("RESULT " + json.dumps(figures))


def median(xs):
    return statistics.median(xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=corpus("english_medium"))
    ap.add_argument("--vocab", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--python", default=INTERPRETERS["pypy"], help="the interpreter (default PyPy)")
    ap.add_argument("--tree", default=ROOT, help="the source tree the children import refbpe from")
    ap.add_argument("--phase", nargs=3, metavar=("WHAT", "COUNTS", "MODEL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:
        phase(args.phase[0], args.phase[1], args.phase[2], args.vocab)
        return
    env = tree_env(args.tree)
    here = os.path.abspath(args.tree)  # ``-m refbpe`` imports from the working directory first
    refbpe = [args.python, "-m", "refbpe"]
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        counts, model = os.path.join(tmp, "c.counts.tsv"), os.path.join(tmp, "model")
        common = ["--counts", counts, "--vocab-size", str(args.vocab), "--special-token", EOT]
        count = ["count", args.corpus, "--special-token", EOT, "-o", counts, "--quiet"]
        run_result(refbpe + count, env, cwd=here)
        run_result(refbpe + ["train"] + common + ["-o", model, "--quiet"], env, cwd=here)
        jobs = {
            "train": refbpe + ["train"] + common + ["-o", os.path.join(tmp, "t"), "--quiet"],
            "train --trace": refbpe
            + ["train"]
            + common
            + ["-o", os.path.join(tmp, "tt"), "--quiet", "--trace", os.path.join(tmp, "t.jsonl")],
            "certify": refbpe + ["certify", model] + common,
            "phase train": [
                args.python,
                os.path.abspath(__file__),
                "--vocab",
                str(args.vocab),
                "--phase",
                "train",
                counts,
                model,
            ],
            "phase trace": [
                args.python,
                os.path.abspath(__file__),
                "--vocab",
                str(args.vocab),
                "--phase",
                "trace",
                counts,
                model,
            ],
            "phase certify": [
                args.python,
                os.path.abspath(__file__),
                "--vocab",
                str(args.vocab),
                "--phase",
                "certify",
                counts,
                model,
            ],
        }
        runs = {k: [] for k in jobs}
        for _ in range(args.repeats):
            for name, cmd in jobs.items():
                r = run_result(cmd, env, cwd=here)
                if name.startswith("phase") and not r["result"]["ok"]:
                    raise SystemExit("%s: the model was not certified" % name)
                runs[name].append(r)
    after = os.getloadavg()
    print(
        "== %s  %s  vocab %d  %s  (medians of %d; load average %.1f before, %.1f after)"
        % (
            os.path.basename(args.python),
            os.path.basename(args.corpus),
            args.vocab,
            os.path.abspath(args.tree),
            args.repeats,
            load[0],
            after[0],
        )
    )
    cpu = {k: median([r["cpu_seconds"] for r in v]) for k, v in runs.items()}
    wall = {k: median([r["wall"] for r in v]) for k, v in runs.items()}
    least = {k: min(r["cpu_seconds"] for r in v) for k, v in runs.items()}
    print("%-16s %9s %9s %9s %9s %9s" % ("command", "CPU s", "wall s", "x train", "min CPU", "x train"))
    for name in ("train", "train --trace", "certify"):
        print(
            "%-16s %9.2f %9.2f %9.3f %9.2f %9.3f"
            % (
                name,
                cpu[name],
                wall[name],
                cpu[name] / cpu["train"],
                least[name],
                least[name] / least["train"],
            )
        )
    parts = {
        k: {
            p: median([r["result"][p] for r in runs["phase " + k]])
            for p in ("imports", "read", "model", "phase")
        }
        for k in ("train", "trace", "certify")
    }
    print("%-16s %9s %9s %9s %9s" % ("phase (CPU s)", "imports", "read", "model", "phase"))
    for k, v in parts.items():
        print("%-16s %9.2f %9.2f %9.3f %9.2f" % (k, v["imports"], v["read"], v["model"], v["phase"]))
    print(
        "certify / train: whole command %.3f (CPU), %.3f (wall); phase %.3f (certify's check against "
        "train_from_counts; their model's reading apart, column model)"
        % (
            cpu["certify"] / cpu["train"],
            wall["certify"] / wall["train"],
            parts["certify"]["phase"] / parts["train"]["phase"],
        )
    )
    print(
        "train --trace / train: %.3f (CPU), %.3f (wall), %.3f (least CPU); phase %.3f (train_from_counts "
        "with a trace against without)"
        % (
            cpu["train --trace"] / cpu["train"],
            wall["train --trace"] / wall["train"],
            least["train --trace"] / least["train"],
            parts["trace"]["phase"] / parts["train"]["phase"],
        )
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
