"""``refbpe split`` against ``refbpe count --workers 1``: whole-process wall and CPU seconds.

    .venv-pypy/bin/python perf/split_speed.py [--corpus english_medium] [--repeats 3]
    .venv-pypy/bin/python perf/split_speed.py --trees OTHER_TREE,.   # before/after, alternated

Runs, each a process of this interpreter importing refbpe from its tree
(``harness.tree_env``), alternating: ``split CORPUS`` with ``--workers 1`` and
``2`` for each ``--modes`` (``plain``, ``hex``, ``offsets``; output to a
temporary file), and ``count CORPUS --workers 1``.  Prints medians of wall and
of CPU seconds (the whole process tree, ``wait4``), the load the rest of the
machine put on it, and checks that every run of a mode wrote the same bytes,
in every tree and for both worker counts.  Python 3.9 syntax (PyPy runs it).
"""

import argparse
import hashlib
import os
import statistics
import sys
import tempfile

from harness import ROOT, SPECIAL, corpus, run_result, save_results, tree_env

MODES = {"plain": [], "hex": ["--hex"], "offsets": ["--offsets"]}


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def jobs(path, out, modes):
    """(label, refbpe arguments) of every run of one round."""
    found = []
    for mode in modes:
        for workers in (1, 2):
            args = ["split", path, "--special-token", SPECIAL, "--workers", str(workers), "-o", out]
            found.append(("split %s w%d" % (mode, workers), args + MODES[mode]))
    found.append(("count w1", ["count", path, "--special-token", SPECIAL, "--workers", "1", "-o", out]))
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="english_medium")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", default="plain", help="comma list of plain, hex, offsets")
    parser.add_argument(
        "--trees", default=".", help="source trees to compare, comma list (default: this one)"
    )
    args = parser.parse_args(argv)
    path = corpus(args.corpus)
    trees = [ROOT if t == "." else os.path.abspath(t) for t in args.trees.split(",")]
    modes = args.modes.split(",")
    tmp = tempfile.mkdtemp(prefix="refbpe-split-speed-")
    out = os.path.join(tmp, "out")
    runs, digests = {}, {}
    try:
        for i in range(args.repeats):
            for tree in trees:
                for label, command in jobs(path, out, modes):
                    r = run_result([sys.executable, "-m", "refbpe"] + command, tree_env(tree), cwd=tmp)
                    runs.setdefault((tree, label), []).append(r)
                    if label.startswith("split"):
                        digests.setdefault(label.split()[1], set()).add(digest(out))
                    print(
                        "  run %d %s %s: wall %.2f s, CPU %.2f s, other load %.0f%%"
                        % (i + 1, tree, label, r["wall"], r["cpu_seconds"], 100 * r["foreign_cpu"]),
                        flush=True,
                    )
    finally:
        if os.path.exists(out):
            os.remove(out)
        os.rmdir(tmp)
    result = {"corpus": args.corpus, "repeats": args.repeats, "rows": []}
    print("\n%s, medians of %d" % (args.corpus, args.repeats))
    print("  %-40s %-16s %8s %8s %8s %12s" % ("tree", "run", "wall s", "CPU s", "peak MB", "other load"))
    for (tree, label), rs in runs.items():
        row = {
            "tree": tree,
            "run": label,
            "wall": statistics.median(r["wall"] for r in rs),
            "cpu": statistics.median(r["cpu_seconds"] for r in rs),
            "peak_mb": statistics.median(r["peak_tree_mb"] for r in rs),
            "foreign_cpu": statistics.median(r["foreign_cpu"] for r in rs),
        }
        result["rows"].append(row)
        print(
            "  %-40s %-16s %8.2f %8.2f %8.0f %11.0f%%"
            % (tree[-40:], label, row["wall"], row["cpu"], row["peak_mb"], 100 * row["foreign_cpu"])
        )
    same = {mode: len(d) == 1 for mode, d in digests.items()}
    result["identical_output"] = same
    print("  output identical across trees and worker counts: %s" % same)
    print("\nresults: %s" % save_results("split-speed", result))
    if not all(same.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
