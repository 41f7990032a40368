"""Where the encoder's heap path starts to pay: the quadratic loop vs the heap, per piece length.

    .venv-pypy/bin/python perf/piece_lengths.py      # (CPython works too)

Times ``Tokenizer._encode_piece`` with the threshold ``_LONG_PIECE`` set above and
below each length (so each path runs on the same pieces), GPT-2 vocab, on three
kinds of pieces: English words glued together, random lowercase letters, Han
characters.  Each path is warmed up first (JIT), then timed over many distinct
pieces of that length; prints microseconds per piece and the ratio heap / loop.
"""

import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
CS336 = os.path.join(ROOT, "..", "shared", "data", "cs336")

from refbpe import tokenizer as tokenizer_module  # noqa: E402
from refbpe.tokenizer import Tokenizer  # noqa: E402

LENGTHS = [16, 32, 48, 64, 80, 96, 128, 192, 256]


def pieces(kind, length, count, rng):
    words = "the of and to in is was for that with as on by he it at from his an were are which".split()
    out = []
    for _ in range(count):
        if kind == "english":
            s = ""
            while len(s) < length:
                s += rng.choice(words)
            data = s[:length].encode()
        elif kind == "letters":
            data = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(length))
        else:
            s = "".join(chr(rng.randint(0x4E00, 0x4FFF)) for _ in range((length + 2) // 3))
            data = s.encode()[:length]
            data = data[: len(data) - len(data) % 3] or s[0].encode()
        out.append(data)
    return out


def time_path(tok, data, threshold):
    tokenizer_module._LONG_PIECE = threshold
    for d in data[:1000] * 3:
        tok._encode_piece(d)  # warm-up
    t0 = time.perf_counter()
    for d in data:
        tok._encode_piece(d)
    return (time.perf_counter() - t0) / len(data) * 1e6


def main():
    tok = Tokenizer.from_files(os.path.join(CS336, "gpt2_vocab.json"), os.path.join(CS336, "gpt2_merges.txt"))
    rng = random.Random(12)
    saved = tokenizer_module._LONG_PIECE
    print("%-8s %6s %10s %10s %8s" % ("pieces", "bytes", "loop us", "heap us", "heap/loop"))
    for kind in ("english", "letters", "han"):
        for n in LENGTHS:
            data = pieces(kind, n, max(1000, 80000 // n), rng)
            loop = min(time_path(tok, data, 1 << 30) for _ in range(5))
            heap = min(time_path(tok, data, 0) for _ in range(5))
            print("%-8s %6d %10.2f %10.2f %8.2f" % (kind, n, loop, heap, heap / loop))
    tokenizer_module._LONG_PIECE = saved
    print("threshold in refbpe/tokenizer.py: _LONG_PIECE = %d" % saved)


if __name__ == "__main__":
    main()
