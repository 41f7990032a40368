"""tiktoken ``gpt2`` encoding, one thread (``encode``, all special tokens allowed).

usage: encode_tiktoken.py TEXT [--max-bytes N]   (needs TIKTOKEN_CACHE_DIR offline)
"""

import sys

import tiktoken
from _common import arg, emit, encode_twice, now


def main(argv):
    t0 = now()
    enc = tiktoken.get_encoding("gpt2")
    load = round(now() - t0, 3)
    emit(
        load_seconds=load,
        **encode_twice(
            argv[0], int(arg(argv, "--max-bytes", 0)), lambda t: enc.encode(t, allowed_special="all")
        ),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
