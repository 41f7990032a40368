"""Before/after: ``refbpe train`` from two source trees on the same corpora, same run.

    git archive main | tar -x -C /tmp/before      # the tree to compare against
    .venv/bin/python perf/compare_trees.py /tmp/before . --corpora english_small,english_medium \\
        --vocab 10000 --repeats 3

Each tree runs as ``python -m refbpe train`` with ``PYTHONPATH`` set to it (PyPy by
default, ``--interpreter cpython`` for the other), round-robin over the trees so that
load from elsewhere hits both alike.  Printed per corpus: median wall seconds, the
count and merge phases from ``--report``, peak MB (process tree), and after / before;
the merges of both trees are compared (they must be identical).  With ``--encode``,
also ``perf/peers/encode_refbpe.py`` per tree (cold and warm 8 MB calls, ids compared).
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import systems  # noqa: E402  (interpreters, peers, data paths)
from measure import measure  # noqa: E402


def encode_lines(args, trees):
    """``perf/peers/encode_refbpe.py`` from each tree: a cold call on 8 MB, a warm one on the next 8 MB."""
    gpt2 = [os.path.join(systems.CS336, "gpt2_vocab.json"), os.path.join(systems.CS336, "gpt2_merges.txt")]
    lines = [
        "ENCODE %s, GPT-2 vocab, 8 MB (medians of %d; after/before)" % (args.interpreter, args.repeats),
        "  %-16s %-7s %9s %9s %s" % ("corpus", "tree", "cold s", "warm s", "ids"),
    ]
    for corpus in args.encode.split(","):
        runs = {k: [] for k in trees}
        for _ in range(args.repeats):
            for name, tree in trees.items():
                cmd = [
                    systems.INTERPRETERS[args.interpreter],
                    systems.peer("encode_refbpe.py"),
                    systems.CORPUS_FILES[corpus],
                ]
                r = measure(cmd + gpt2 + ["--max-bytes", str(8 << 20)], {"PYTHONPATH": tree})
                if r["rc"]:
                    raise SystemExit("%s failed: %s" % (name, r["stderr"]))
                runs[name].append(r["result"])
        med = {
            k: [statistics.median(x[f] for x in rs) for f in ("encode_seconds", "warm_seconds")]
            for k, rs in runs.items()
        }
        same = "identical" if runs["before"][0]["ids_digest"] == runs["after"][0]["ids_digest"] else "DIFFER"
        for name in trees:
            lines.append("  %-16s %-7s %9.2f %9.2f %s" % (corpus, name, med[name][0], med[name][1], same))
        b, a = med["before"], med["after"]
        lines.append("  %-16s %-7s %8.2fx %8.2fx" % (corpus, "ratio", a[0] / b[0], a[1] / b[1]))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--corpora", default="english_small")
    ap.add_argument("--vocab", type=int, default=10000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--interpreter", default="pypy")
    ap.add_argument("--encode", default="", help="also encode these corpora (GPT-2 vocab, first 8 MB)")
    args = ap.parse_args(argv)
    trees = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    work = tempfile.mkdtemp(prefix="refbpe-compare-")
    lines = [
        "TRAIN %s, vocab %d, %d workers, %d repeats (medians; after/before)"
        % (args.interpreter, args.vocab, args.workers, args.repeats),
        "  %-16s %-7s %8s %8s %8s %8s %s"
        % ("corpus", "tree", "wall s", "count s", "merge s", "peak MB", "merges"),
    ]
    try:
        for corpus in filter(None, args.corpora.split(",")):
            runs = {k: [] for k in trees}
            digests = {}
            for _ in range(args.repeats):
                for name, tree in trees.items():
                    out, report = os.path.join(work, name), os.path.join(work, name + ".json")
                    shutil.rmtree(out, ignore_errors=True)
                    cmd = [
                        systems.INTERPRETERS[args.interpreter],
                        "-m",
                        "refbpe",
                        "train",
                        systems.CORPUS_FILES[corpus],
                        "--vocab-size",
                        str(args.vocab),
                        "--special-token",
                        systems.SPECIAL,
                        "--out",
                        out,
                        "--workers",
                        str(args.workers),
                        "--report",
                        report,
                        "--quiet",
                    ]
                    r = measure(cmd, {"PYTHONPATH": tree})
                    if r["rc"]:
                        raise SystemExit("%s failed: %s" % (name, r["stderr"]))
                    with open(report) as f:
                        rep = json.load(f)
                    runs[name].append(
                        (r["wall"], rep["count"]["seconds"], rep["merge"]["seconds"], r["peak_tree_mb"])
                    )
                    with open(os.path.join(out, "merges.txt"), "rb") as f:
                        digests[name] = f.read()
                    sys.stderr.write("  %s %s %.2fs\n" % (corpus, name, r["wall"]))
            med = {k: [statistics.median(v[i] for v in rs) for i in range(4)] for k, rs in runs.items()}
            same = "identical" if digests["before"] == digests["after"] else "DIFFER"
            for name in trees:
                lines.append(
                    "  %-16s %-7s %8.2f %8.2f %8.2f %8.0f %s" % ((corpus, name) + tuple(med[name]) + (same,))
                )
            b, a = med["before"], med["after"]
            lines.append(
                "  %-16s %-7s %7.2fx %7.2fx %7.2fx %7.2fx"
                % (corpus, "ratio", a[0] / b[0], a[1] / b[1], a[2] / b[2], a[3] / b[3])
            )
        if args.encode:
            lines += encode_lines(args, trees)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
