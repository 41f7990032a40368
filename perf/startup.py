"""Start-up: what a ``refbpe`` process costs before it does any work, with and without bytecode.

    .venv/bin/python perf/startup.py                 # 5 repeats, both interpreters
    .venv/bin/python perf/startup.py --repeats 9 --interpreters pypy

Each command runs as its own process (``harness.measure``), round-robin, medians of CPU seconds
(user + system), wall seconds and peak MB:

    bare        the interpreter doing nothing (``-c pass``)
    import      ``import refbpe`` (the package alone: its names are imported on first use)
    api         ``refbpe.train_bpe`` and ``refbpe.Tokenizer`` looked up (what a library user pays)
    cli         ``import refbpe.cli.commands`` (every subcommand's modules; ``refbpe.cli`` alone
                is as light as the package, so that ``train`` can restart before paying this)
    train-tiny  ``refbpe train`` on a 3-byte file, vocab 300: start-up, a model written

each with the tree's bytecode (``harness.compile_tree``: the ``.pyc`` files an install has) and
without (a copy of the package without ``__pycache__``, ``PYTHONDONTWRITEBYTECODE`` set: its
modules compiled on every start, what a source tree costs where that variable is set; the
standard library keeps its bytecode).
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile

from harness import INTERPRETERS, ROOT, measure, tree_env

CASES = [
    ("bare", ["-c", "pass"]),
    ("import", ["-c", "import refbpe"]),
    ("api", ["-c", "import refbpe; refbpe.train_bpe, refbpe.Tokenizer"]),
    ("cli", ["-c", "import refbpe.cli.commands"]),
    ("train-tiny", None),
]


def case_cmd(exe, args, work):
    if args is not None:
        return [exe] + args
    corpus = os.path.join(work, "tiny.txt")
    with open(corpus, "w") as f:
        f.write("hi\n")
    model = os.path.join(work, "model")
    return [exe, "-m", "refbpe", "train", corpus, "--vocab-size", "300", "--out", model, "--quiet"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--interpreters", default="pypy,cpython")
    args = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="refbpe-startup-")
    bare_tree = os.path.join(work, "no-bytecode")
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(os.path.join(ROOT, "refbpe"), os.path.join(bare_tree, "refbpe"), ignore=ignore)
    jobs = []
    for interp in args.interpreters.split(","):
        for name, case in CASES:
            for bytecode in (True, False):
                env = tree_env() if bytecode else dict(tree_env(), PYTHONPATH=bare_tree)
                env["PYTHONDONTWRITEBYTECODE"] = "1"
                jobs.append(((interp, name, bytecode), case_cmd(INTERPRETERS[interp], case, work), env))
    runs = {key: [] for key, _, _ in jobs}
    for _ in range(args.repeats):
        for key, cmd, env in jobs:
            r = measure(cmd, env, cwd=work)  # not ROOT: "-c" and "-m" put the cwd on sys.path first
            if r["rc"]:
                sys.exit("%s failed: %s" % (" ".join(cmd), r["stderr"]))
            runs[key].append(r)
    print("%-8s %-11s %-9s %8s %8s %8s" % ("interp", "case", "bytecode", "cpu s", "wall s", "peak MB"))
    for key, rs in runs.items():
        interp, name, bytecode = key
        print(
            "%-8s %-11s %-9s %8.3f %8.3f %8.0f"
            % (
                interp,
                name,
                "yes" if bytecode else "no",
                statistics.median(r["cpu_seconds"] for r in rs),
                statistics.median(r["wall"] for r in rs),
                statistics.median(r["max_process_mb"] for r in rs),
            )
        )
    print("load average %.2f" % os.getloadavg()[0])
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
