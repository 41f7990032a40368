"""Encoding speed of two source trees' ``refbpe.tokenizer``, interleaved in one process.

    .venv-pypy/bin/python perf/encode_trees.py /tmp/before . --corpora chinese,english_medium

Both trees' tokenizers are imported into this process (each under a fresh
``refbpe`` import), and on each round a new ``Tokenizer`` (GPT-2 vocab, empty
caches) of each tree encodes the first 8 MB of each corpus, alternating, so that
load from elsewhere hits both alike (less noisy than separate processes on a busy
machine).  Printed: every round's seconds, and after / before of the fastest; the
ids of both trees are compared.
"""

import argparse
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "..", "shared", "data")


def load(tree):
    for name in [m for m in sys.modules if m == "refbpe" or m.startswith("refbpe.")]:
        del sys.modules[name]
    sys.path.insert(0, os.path.abspath(tree))
    try:
        return importlib.import_module("refbpe.tokenizer")
    finally:
        sys.path.pop(0)


def main(argv=None):
    import time

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--corpora", default="chinese,english_medium")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    modules = {"before": load(args.before), "after": load(args.after)}
    gpt2 = [os.path.join(DATA, "cs336", "gpt2_vocab.json"), os.path.join(DATA, "cs336", "gpt2_merges.txt")]
    print("ENCODE in one process (%s), 8 MB, GPT-2 vocab, fresh tokenizer per round" % sys.executable)
    for corpus in args.corpora.split(","):
        with open(os.path.join(DATA, "corpora", corpus + ".txt"), "rb") as f:
            text = f.read(8 << 20).decode("utf-8", "ignore")
        times, ids = {k: [] for k in modules}, {}
        for _ in range(args.rounds):
            for name, module in modules.items():
                tok = module.Tokenizer.from_files(gpt2[0], gpt2[1], ["<|endoftext|>"])
                t0 = time.perf_counter()
                ids[name] = tok.encode(text)
                times[name].append(time.perf_counter() - t0)
        same = "identical" if ids["before"] == ids["after"] else "DIFFER"
        for name in modules:
            print("  %-16s %-7s %s" % (corpus, name, " ".join("%.2f" % t for t in times[name])))
        print(
            "  %-16s after/before (fastest) %.3f, ids %s"
            % (corpus, min(times["after"]) / min(times["before"]), same)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
