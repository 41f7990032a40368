"""Where the encoder's heap path starts to pay: the quadratic loop vs the heap, per piece length.

    .venv-pypy/bin/python perf/piece_lengths.py                  # synthetic pieces (CPython works too)
    .venv-pypy/bin/python perf/piece_lengths.py --corpus chinese # real pieces of a shared corpus
    .venv-pypy/bin/python perf/piece_lengths.py --long           # the two long-piece paths

Times ``Tokenizer._encode_piece`` with the threshold ``_LONG_PIECE`` set above and
below each length (so each path runs on the same pieces), GPT-2 vocab, on three
kinds of pieces: English words glued together, random lowercase letters, Han
characters.  Each path is warmed up first (JIT), then timed over many distinct
pieces of that length; prints microseconds per piece and the ratio heap / loop.
With ``--corpus``, the pieces are the real ones of the corpus's first 8 MB, grouped
by length (real Chinese pieces have fewer GPT-2 merges than random Han characters,
so the loop stays cheaper longer: it decides the threshold).  With ``--long``, the
two O(n log n) paths on one piece of 100K and 1M random letters: rank by rank
(``_encode_long_piece``, used for merge lists) against one heap entry per slot
(``_encode_long_piece_by_slot``, used for tiktoken tables).
"""

import random
import sys

from harness import GPT2_FILES, corpus, stopwatch

from refbpe.encode import piece_ids as tokenizer_module
from refbpe.encode.tokenizer import Tokenizer
from refbpe.pretokenize.gpt2 import piece_ends

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
    with stopwatch() as sw:
        for d in data:
            tok._encode_piece(d)
    return sw.wall / len(data) * 1e6


def corpus_pieces(tok, name):
    with open(corpus(name), "rb") as f:
        data = f.read(8 << 20).decode("utf-8", "ignore").encode("utf-8")
    groups, start = {}, 0
    bounds = [32, 64, 96, 128, 192, 256, 512, 1 << 30]
    for end in piece_ends(data):
        n = end - start
        for lo, hi in zip(bounds, bounds[1:]):
            if lo <= n < hi:
                groups.setdefault(lo, []).append(data[start:end])
        start = end
    print("%-8s %6s %7s %10s %10s %8s" % ("pieces", "bytes>=", "count", "loop us", "heap us", "heap/loop"))
    for lo in sorted(groups):
        data = groups[lo]
        loop = min(time_path(tok, data, 1 << 30) for _ in range(5))
        heap = min(time_path(tok, data, 0) for _ in range(5))
        print("%-8s %6d %7d %10.2f %10.2f %8.2f" % (name, lo, len(data), loop, heap, heap / loop))


def long_paths(tok):
    rng = random.Random(12)
    print("%-10s %12s %12s %8s" % ("letters", "by rank s", "by slot s", "slot/rank"))
    for n in (100000, 1000000):
        ids = [tok._byte_id[b] for b in pieces("letters", n, 1, rng)[0]]
        best = {}
        for _ in range(3):
            for name, path in (("rank", tok._encode_long_piece), ("slot", tok._encode_long_piece_by_slot)):
                with stopwatch() as sw:
                    out = path(list(ids))
                best[name] = min(best.get(name, 1e9), sw.wall)
                best[name + " ids"] = out
        assert best["rank ids"] == best["slot ids"]
        print("%-10d %12.3f %12.3f %8.2f" % (n, best["rank"], best["slot"], best["slot"] / best["rank"]))


def main():
    tok = Tokenizer.from_files(*GPT2_FILES)
    saved = tokenizer_module._LONG_PIECE
    if "--long" in sys.argv:
        long_paths(tok)
        return
    if "--corpus" in sys.argv:
        corpus_pieces(tok, sys.argv[sys.argv.index("--corpus") + 1])
        tokenizer_module._LONG_PIECE = saved
        print("threshold in refbpe/encode/piece_ids.py: _LONG_PIECE = %d" % saved)
        return
    rng = random.Random(12)
    print("%-8s %6s %10s %10s %8s" % ("pieces", "bytes", "loop us", "heap us", "heap/loop"))
    for kind in ("english", "letters", "han"):
        for n in LENGTHS:
            data = pieces(kind, n, max(1000, 80000 // n), rng)
            loop = min(time_path(tok, data, 1 << 30) for _ in range(5))
            heap = min(time_path(tok, data, 0) for _ in range(5))
            print("%-8s %6d %10.2f %10.2f %8.2f" % (kind, n, loop, heap, heap / loop))
    tokenizer_module._LONG_PIECE = saved
    print("threshold in refbpe/encode/piece_ids.py: _LONG_PIECE = %d" % saved)


if __name__ == "__main__":
    main()
