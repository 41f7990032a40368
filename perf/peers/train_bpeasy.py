"""bpeasy: ``bpeasy.train_bpe(iterator, regex, max_token_length, vocab_size)``.

usage: train_bpeasy.py CORPUS VOCAB_SIZE
Documents split on ``<|endoftext|>`` in Python, GPT-2 pattern, max token length
128 (bpeasy's documented default; refbpe has no limit).  VOCAB_SIZE - 1 (bytes +
merges, bpeasy has no special tokens), as for rustbpe.
"""

import sys

import bpeasy
from _common import GPT2_PATTERN, emit, now, read_docs


def main(argv):
    corpus, vocab_size = argv[0], int(argv[1])
    t0 = now()
    docs = read_docs(corpus)
    t1 = now()
    vocab = bpeasy.train_bpe(iter(docs), GPT2_PATTERN, 128, vocab_size - 1)
    t2 = now()
    emit(read_seconds=round(t1 - t0, 3), train_seconds=round(t2 - t1, 3), vocab_size=len(vocab) + 1)


if __name__ == "__main__":
    main(sys.argv[1:])
