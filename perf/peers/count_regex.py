"""Baseline: plain ``regex.finditer`` (GPT-2 pattern) + dict count, one process.

usage: count_regex.py CORPUS
Reads and decodes the file, splits on ``<|endoftext|>``, counts pre-tokens as
str keys: the textbook CS336 loop, timed in-process.
"""

import os
import sys

import regex
from _common import GPT2_PATTERN, SPECIAL, emit, now


def main(argv):
    corpus = argv[0]
    size = os.path.getsize(corpus)
    pat = regex.compile(GPT2_PATTERN)
    t0 = now()
    with open(corpus, "rb") as f:
        text = f.read().decode("utf-8")
    counts = {}
    get = counts.get
    for doc in text.split(SPECIAL):
        for m in pat.finditer(doc):
            w = m.group()
            counts[w] = get(w, 0) + 1
    dt = now() - t0
    emit(
        bytes=size,
        count_seconds=round(dt, 3),
        mb_per_s=round(size / dt / 1e6, 2),
        unique_words=len(counts),
        total_words=sum(counts.values()),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
