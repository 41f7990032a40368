"""The oracle, ``refbpe.naive.naive_train_bpe`` (full pair recount per merge).

usage: train_naive.py CORPUS VOCAB_SIZE      (smallest input only: it is quadratic)
"""

import sys

from _common import SPECIAL, emit, merges_digest, now

from refbpe.naive import naive_train_bpe


def main(argv):
    corpus, vocab_size = argv[0], int(argv[1])
    t0 = now()
    with open(corpus, "rb") as f:
        text = f.read().decode("utf-8")
    vocab, merges = naive_train_bpe(text, vocab_size, [SPECIAL])
    emit(
        train_seconds=round(now() - t0, 3),
        vocab_size=len(vocab),
        merges=len(merges),
        merges_digest=merges_digest(merges),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
