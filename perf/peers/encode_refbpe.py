"""refbpe encoding with the GPT-2 vocab (runs under PyPy or CPython).

usage: encode_refbpe.py TEXT GPT2_VOCAB GPT2_MERGES [--max-bytes N]
Reports load seconds and encode seconds (one thread, one ``encode`` call on the
whole text, ``<|endoftext|>`` as special token) and a digest of the ids.
"""

import sys

from _common import SPECIAL, arg, emit, ids_digest, now, read_text

from refbpe import Tokenizer


def main(argv):
    text, nbytes = read_text(argv[0], int(arg(argv, "--max-bytes", 0)))
    t0 = now()
    tok = Tokenizer.from_files(argv[1], argv[2], [SPECIAL])
    t1 = now()
    ids = tok.encode(text)
    t2 = now()
    emit(bytes=nbytes, load_seconds=round(t1 - t0, 3), encode_seconds=round(t2 - t1, 4),
         ids=len(ids), ids_digest=ids_digest(ids))


if __name__ == "__main__":
    main(sys.argv[1:])
