"""refbpe pre-tokenize + count throughput: ``refbpe.corpus.count.count_words``.

usage: count_refbpe.py CORPUS WORKERS [--chunk-size BYTES]
Times ``count_words`` in-process (reading, process pool start-up and merging of
the worker tables included); MB/s = input bytes / that time.
"""

import os
import sys

from _common import SPECIAL, arg, emit, now

from refbpe.corpus.count import DEFAULT_CHUNK_SIZE, count_words


def main(argv):
    corpus, workers = argv[0], int(argv[1])
    chunk = arg(argv, "--chunk-size", None)
    chunk = int(chunk) if chunk else DEFAULT_CHUNK_SIZE  # None: sized to the input
    size = os.path.getsize(corpus)
    t0 = now()
    counts = count_words([corpus], [SPECIAL], workers=workers, chunk_size=chunk)
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
