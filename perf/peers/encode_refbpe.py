"""refbpe encoding with the GPT-2 vocab (runs under PyPy or CPython).

usage: encode_refbpe.py TEXT GPT2_VOCAB GPT2_MERGES [--max-bytes N]
Reports load seconds and encode seconds (one thread, one ``encode`` call on the
first part of the text, then a second, warm call on the next part; see
``_common.encode_twice``), ``<|endoftext|>`` as special token, and a digest of the ids.
"""

import sys

from _common import SPECIAL, arg, emit, encode_twice, now

from refbpe import Tokenizer


def main(argv):
    t0 = now()
    tok = Tokenizer.from_files(argv[1], argv[2], [SPECIAL])
    load = round(now() - t0, 3)
    emit(load_seconds=load, **encode_twice(argv[0], int(arg(argv, "--max-bytes", 0)), tok.encode))


if __name__ == "__main__":
    main(sys.argv[1:])
