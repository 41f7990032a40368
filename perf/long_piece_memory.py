"""Memory of counting a file that is one long pre-token (no safe cut inside it).

    .venv/bin/python perf/long_piece_memory.py [--mb 20,80] [--systems pypy-w1,pypy-w2,cpython-w1]

Such a file is one unit of work however many workers there are (``io`` finds no
cut), so one process holds the whole piece.  For each size, a file of random
lowercase letters is written to a temporary directory and counted by
``refbpe.corpus.count.count_words`` in a fresh process (``harness.measure``: peak RSS summed
over the process tree, and the largest single process).  Printed: peak MB, the
same above the interpreter's baseline (an empty file counted), and that divided by
the piece's size.  The result is checked: one word, count 1.  The figure for the README is the largest
process above its baseline, as a multiple of the piece.
"""

import argparse
import os
import random
import shutil
import sys
import tempfile

from harness import INTERPRETERS, measure, tree_env

CHILD = (
    "import sys\n"
    "from refbpe.corpus.count import count_words\n"
    "c = count_words([sys.argv[1]], ['<|endoftext|>'], workers=int(sys.argv[2]))\n"
    "assert len(c) == (1 if sys.argv[3] != '0' else 0) and sum(c.values()) == len(c), c.keys()\n"
    "print('RESULT {}')\n"
)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", default="20,80", help="piece sizes in MB (10^6 bytes)")
    ap.add_argument("--systems", default="pypy-w1,pypy-w2,cpython-w1,cpython-w2")
    args = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="refbpe-longpiece-")
    rows = []
    try:
        sizes = [0] + [int(float(x) * 1e6) for x in args.mb.split(",")]
        for size in sizes:
            path = os.path.join(work, "piece-%d.txt" % size)
            rng = random.Random(size)
            table = bytes(b"abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(256))
            with open(path, "wb") as f:
                f.write(rng.randbytes(size).translate(table))
            for system in args.systems.split(","):
                interp, w = system.split("-")
                cmd = [INTERPRETERS[interp], "-c", CHILD, path, w[1:], str(size)]
                r = measure(cmd, tree_env())
                if r["rc"]:
                    sys.stderr.write(r["stderr"])
                rows.append((system, size, r["wall"], r["peak_tree_mb"], r["max_process_mb"], r["rc"]))
                sys.stderr.write(
                    "  %s %d MB: %.2fs %.0f MB\n" % (system, size // 10**6, r["wall"], r["peak_tree_mb"])
                )
            os.unlink(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = {s: (tree, proc) for s, size, _, tree, proc, _ in rows if size == 0}
    print("COUNTING ONE PIECE (random letters, no safe cut); above base = peak - the same for an empty file")
    print(
        "  %-12s %6s %7s %9s %9s %11s %11s %8s"
        % ("system", "MB", "wall s", "tree MB", "proc MB", "tree above", "proc above", "x piece")
    )
    for system, size, wall, tree, proc, rc in rows:
        if size == 0:
            continue
        tree_above, proc_above = tree - base[system][0], proc - base[system][1]
        print(
            "  %-12s %6.0f %7.2f %9.0f %9.0f %11.0f %11.0f %7.1fx%s"
            % (
                system,
                size / 1e6,
                wall,
                tree,
                proc,
                tree_above,
                proc_above,
                proc_above / (size / 1e6),
                "" if rc == 0 else " FAILED",
            )
        )
    print("  tree: RSS summed over the process tree (forked workers' shared pages counted once per process);")
    print("  proc: the largest single process (wait4 ru_maxrss); x piece = proc above / piece size")
    return 0


if __name__ == "__main__":
    sys.exit(main())
