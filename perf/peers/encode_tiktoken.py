"""tiktoken ``gpt2`` encoding, one thread (``encode``, all special tokens allowed).

usage: encode_tiktoken.py TEXT [--max-bytes N]   (needs TIKTOKEN_CACHE_DIR offline)
"""

import sys

from _common import arg, emit, ids_digest, now, read_text

import tiktoken


def main(argv):
    text, nbytes = read_text(argv[0], int(arg(argv, "--max-bytes", 0)))
    t0 = now()
    enc = tiktoken.get_encoding("gpt2")
    t1 = now()
    ids = enc.encode(text, allowed_special="all")
    t2 = now()
    emit(bytes=nbytes, load_seconds=round(t1 - t0, 3), encode_seconds=round(t2 - t1, 4),
         ids=len(ids), ids_digest=ids_digest(ids))


if __name__ == "__main__":
    main(sys.argv[1:])
