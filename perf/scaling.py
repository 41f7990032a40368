"""How refbpe's cost grows: pre-tokenize+count time vs bytes, merge time vs
unique words and vs vocab size.  Runs in-process on the interpreter it is
started with (PyPy is the one that matters):

    .venv-pypy/bin/python perf/scaling.py [--corpus english_medium] [--repeats 3]

Inputs are prefixes of the corpus (cut after a newline) written to a temporary
directory and deleted afterwards.  Counting uses one worker (in-process) so
that the figure is the per-process cost; medians of ``--repeats`` runs.  Prints
tables and writes ``perf/results/scaling-STAMP.json``.
"""

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

from harness import SPECIAL, corpus, save_json, timed

from refbpe.corpus.count import count_words
from refbpe.learn.merge import learn_merges


def median_time(fn, repeats):
    return timed(fn, repeats, statistics.median)


def write_prefix(src, dst, nbytes):
    with open(src, "rb") as f:
        data = f.read(nbytes)
    cut = data.rfind(b"\n") + 1 if len(data) == nbytes else len(data)
    with open(dst, "wb") as f:
        f.write(data[:cut])
    return cut


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="english_medium")
    parser.add_argument("--sizes-mb", default="5,10,20,40,75", help="prefix sizes, MB (comma list)")
    parser.add_argument("--vocab", default="1000,4000,10000,32000", help="vocab sizes for merge-vs-vocab")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    src = corpus(args.corpus)
    if not os.path.exists(src):
        sys.exit("perf/scaling.py: %s not found (set REFBPE_SHARED)" % src)
    interp = "%s %s" % (platform.python_implementation(), platform.python_version())
    out = {
        "interpreter": interp,
        "corpus": args.corpus,
        "repeats": args.repeats,
        "count": [],
        "merge_vs_words": [],
        "merge_vs_vocab": [],
    }
    tmp = tempfile.mkdtemp(prefix="refbpe-scaling-")
    try:
        counts_by_size = {}
        print("%s, %s, medians of %d" % (interp, args.corpus, args.repeats))
        print("\nPRE-TOKENIZE + COUNT vs bytes (1 worker, in-process)")
        print("  %8s %9s %8s %13s %14s" % ("MB", "seconds", "MB/s", "unique words", "s per 10 MB"))
        for mb in [float(x) for x in args.sizes_mb.split(",")]:
            path = os.path.join(tmp, "prefix-%g.txt" % mb)
            nbytes = write_prefix(src, path, int(mb * 1e6))
            t, counts = median_time(lambda path=path: count_words([path], [SPECIAL], workers=1), args.repeats)
            counts_by_size[mb] = counts
            row = {
                "mb": nbytes / 1e6,
                "seconds": t,
                "mb_per_s": nbytes / 1e6 / t,
                "unique_words": len(counts),
            }
            out["count"].append(row)
            print(
                "  %8.1f %9.2f %8.1f %13d %14.2f"
                % (row["mb"], t, row["mb_per_s"], len(counts), t / row["mb"] * 10)
            )

        vocab_main = 10000
        print("\nMERGE vs unique words (vocab %d)" % vocab_main)
        print("  %8s %13s %9s %16s" % ("MB", "unique words", "seconds", "us per word"))
        for mb, counts in sorted(counts_by_size.items()):
            t, merges = median_time(
                lambda counts=counts: learn_merges(counts, vocab_main - 257), args.repeats
            )
            row = {
                "mb": mb,
                "unique_words": len(counts),
                "vocab": vocab_main,
                "seconds": t,
                "merges": len(merges),
            }
            out["merge_vs_words"].append(row)
            print("  %8.1f %13d %9.2f %16.2f" % (mb, len(counts), t, t / len(counts) * 1e6))

        largest = counts_by_size[max(counts_by_size)]
        print("\nMERGE vs vocab size (%d unique words)" % len(largest))
        print("  %8s %9s %9s %15s" % ("vocab", "merges", "seconds", "ms per merge"))
        for vocab in [int(x) for x in args.vocab.split(",")]:
            t, merges = median_time(lambda vocab=vocab: learn_merges(largest, vocab - 257), args.repeats)
            row = {"vocab": vocab, "merges": len(merges), "seconds": t, "unique_words": len(largest)}
            out["merge_vs_vocab"].append(row)
            print("  %8d %9d %9.2f %15.3f" % (vocab, len(merges), t, t / max(len(merges), 1) * 1e3))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("\nresults: %s" % save_json("scaling-%s.json" % time.strftime("%Y%m%d-%H%M%S"), out))


if __name__ == "__main__":
    main()
