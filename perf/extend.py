"""Extending against training from scratch, merge phase only, in one process.

    .venv-pypy/bin/python perf/extend.py [--corpus english_small] [--from 10000] [--to 20000]

The corpus is counted once (``count_words``, 2 workers); then, on those counts:
training to ``--from`` (the parent), training to ``--to``, and extending the parent
to ``--to`` (``train_from_counts(extend=)``: one replay of the parent's merges plus
the new ones).  Printed: seconds of each, and a check that the extension's merges
equal the direct run's (the prefix property).
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from refbpe.corpus.count import count_words  # noqa: E402
from refbpe.formats import Model  # noqa: E402
from refbpe.train import train_from_counts  # noqa: E402

CORPORA = os.path.join(HERE, "..", "..", "shared", "data", "corpora")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="english_small")
    ap.add_argument("--from", dest="start", type=int, default=10000)
    ap.add_argument("--to", type=int, default=20000)
    args = ap.parse_args()
    path = os.path.join(CORPORA, args.corpus + ".txt")
    t0 = time.perf_counter()
    counts = count_words([path], ["<|endoftext|>"], workers=2)
    print("count %s: %.2fs, %d unique words" % (args.corpus, time.perf_counter() - t0, len(counts)))
    t0 = time.perf_counter()
    vocab, merges = train_from_counts(counts, args.start)
    parent_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    _, direct = train_from_counts(counts, args.to)
    direct_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    _, extended = train_from_counts(counts, args.to, extend=Model(vocab, merges, [], "json"))
    extend_s = time.perf_counter() - t0
    print("train to %d: %.2fs" % (args.start, parent_s))
    print("train to %d: %.2fs" % (args.to, direct_s))
    print(
        "extend %d -> %d: %.2fs (%.2f of training to %d)"
        % (args.start, args.to, extend_s, extend_s / direct_s, args.to)
    )
    print("extension's merges == direct merges:", extended == direct)


if __name__ == "__main__":
    main()
