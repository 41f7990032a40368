"""Karpathy's rustbpe: ``Tokenizer.train_from_iterator`` (rayon, all cores).

usage: train_rustbpe.py CORPUS VOCAB_SIZE
The corpus is read and split into documents on ``<|endoftext|>`` in Python
(rustbpe has no special tokens and no file reader); GPT-2 pattern.  rustbpe's
vocab_size counts bytes + merges, so it gets VOCAB_SIZE - 1 (the special token
is the missing one), which learns the same number of merges as refbpe.
"""

import sys

import rustbpe
from _common import GPT2_PATTERN, emit, now, read_docs


def main(argv):
    corpus, vocab_size = argv[0], int(argv[1])
    t0 = now()
    docs = read_docs(corpus)
    t1 = now()
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(docs), vocab_size - 1, pattern=GPT2_PATTERN)
    t2 = now()
    emit(read_seconds=round(t1 - t0, 3), train_seconds=round(t2 - t1, 3), vocab_size=tok.vocab_size + 1)


if __name__ == "__main__":
    main(sys.argv[1:])
