"""Where the encoder's heap path starts to pay: the quadratic loop vs the heap, per piece length.

    .venv-pypy/bin/python perf/piece_lengths.py                  # synthetic pieces (CPython works too)
    .venv-pypy/bin/python perf/piece_lengths.py --corpus chinese # real pieces of a shared corpus
    .venv-pypy/bin/python perf/piece_lengths.py --long           # the two long-piece paths
    .venv-pypy/bin/python perf/piece_lengths.py --backtrack      # the backtracking encoder against them
    .venv-pypy/bin/python perf/piece_lengths.py --backtrack --families spaces,dna --size 1000000

Times ``Tokenizer._merge_piece`` (the merging paths) with the threshold ``_LONG_PIECE`` set above and
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

With ``--backtrack`` (``--encodings``, default gpt2's merge list, cl100k_base and
o200k_base), the backtracking encoder (``encode/backtrack.py``) against the merging
paths (``_merge_piece``: the loop below ``_LONG_PIECE`` bytes, the heap from there):
first per length as above (its tables warm), then on one piece of ``--size`` bytes
(default 100,000) of each family in ``BACKTRACK_FAMILIES`` (runs of spaces, 'a', 'ab',
'=', '-' and a box-drawing character; random strings over 2, 4, 16 and 26 letters; words;
digits; random ASCII and bytes; Cyrillic, Greek, emoji): the heap, the backtracking search's first
piece of the family on a fresh tokenizer (its tables built as it goes) and its best of
three more (with the heap after it when it gives up, as the tokenizer does), the search's
steps per byte with its allowance lifted, whether it gave up (``_STEPS_PER_BYTE``), and
whether the tokenizer searches such a piece (``piece_ids._SEARCH_FROM``,
``_SEARCH_ALPHABET``).  CPU seconds, best of three.  ``--families`` picks some of the
families (and skips the per-length table).
"""

import random
import sys

from harness import GPT2_FILES, corpus, load_tokenizer, read_corpus, stopwatch

from refbpe.encode import backtrack
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
        tok._merge_piece(d)  # warm-up
    with stopwatch() as sw:
        for d in data:
            tok._merge_piece(d)
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


BACKTRACK_LENGTHS = [16, 32, 64, 128, 192, 256, 384]
BACKTRACK_FAMILIES = [
    "spaces",
    "a-run",
    "ab-run",
    "eq-run",
    "dash-run",
    "box-run",
    "rand2",
    "dna",
    "hex",
    "letters",
    "words",
    "digits",
    "ascii",
    "bytes",
    "cyrillic",
    "greek",
    "emoji",
]


def family_piece(family, n, rng):
    """One piece of about ``n`` bytes of ``family`` (``BACKTRACK_FAMILIES``)."""
    runs = {"spaces": b" ", "a-run": b"a", "ab-run": b"ab", "eq-run": b"=", "dash-run": b"-"}
    runs["box-run"] = "\u2500".encode("utf-8")
    if family in runs:
        return runs[family] * (n // len(runs[family]))
    alphabets = {"rand2": b"ab", "dna": b"ACGT", "hex": b"0123456789abcdef"}
    alphabets["letters"] = b"abcdefghijklmnopqrstuvwxyz"
    if family in alphabets:
        return bytes(rng.choice(alphabets[family]) for _ in range(n))
    if family == "words":
        words = read_corpus("english_small", 1 << 18).split()
        return b"".join(rng.choice(words) for _ in range(n // 4))[:n]
    if family == "digits":
        return bytes(rng.choice(b"0123456789") for _ in range(n))
    if family == "ascii":
        return bytes(rng.randrange(128) for _ in range(n))
    if family == "bytes":
        return bytes(rng.randrange(256) for _ in range(n))
    scripts = {"cyrillic": (0x430, 0x44F, 2), "greek": (0x3B1, 0x3C9, 2), "emoji": (0x1F600, 0x1F64F, 4)}
    first, last, width = scripts[family]
    return "".join(chr(rng.randint(first, last)) for _ in range(n // width)).encode()


def cpu_best(fn, pieces):
    """Best CPU seconds of ``fn`` over ``pieces`` (one call each), and the last result."""
    best, out = 1e9, None
    for piece in pieces:
        with stopwatch() as sw:
            out = fn(piece)
        best = min(best, sw.cpu)
    return best, out


def backtrack_lengths(tok, name, rng):
    print("%-12s %-8s %6s %10s %10s %8s" % ("encoding", "pieces", "bytes", "merge us", "bt us", "bt/merge"))
    for kind in ("english", "letters", "han"):
        for n in BACKTRACK_LENGTHS:
            data = pieces(kind, n, max(500, 40000 // n), rng)
            for d in data[:300] * 2:  # warm-up: JIT and the search's tables
                assert tok._backtracker.encode(d) == tok._merge_piece(d)
            merge, bt = [], []
            for _ in range(3):
                with stopwatch() as sw:
                    for d in data:
                        tok._merge_piece(d)
                merge.append(sw.cpu)
                with stopwatch() as sw:
                    for d in data:
                        tok._backtracker.encode(d)
                bt.append(sw.cpu)
            k = 1e6 / len(data)
            print(
                "%-12s %-8s %6d %10.2f %10.2f %8.2f"
                % (name, kind, n, min(merge) * k, min(bt) * k, min(bt) / min(merge))
            )


def searched_or_merged(tok):
    """The search, and the heap when it gives up (what ``_encode_piece`` does for a piece it searches)."""
    return lambda piece: tok._backtracker.encode(piece) or tok._merge_piece(piece)


def steps_unlimited(tok, piece):
    """The search's steps per byte on ``piece`` with its allowance lifted."""
    saved = backtrack._STEPS_PER_BYTE, backtrack._STEPS_FLOOR
    backtrack._STEPS_PER_BYTE, backtrack._STEPS_FLOOR = 1 << 40, 1 << 40
    try:
        tok._backtracker.encode(piece)
    finally:
        backtrack._STEPS_PER_BYTE, backtrack._STEPS_FLOOR = saved
    return tok._backtracker.steps / len(piece)


def backtrack_families(name, size, rng, families):
    print(
        "%-12s %-9s %8s %8s %8s %8s %8s %8s %s"
        % ("encoding", "family", "heap s", "bt 1st", "bt best", "bt/heap", "steps/B", "gave up", "searched")
    )
    for family in families:
        data = [family_piece(family, size, rng) for _ in range(4)]
        tok = load_tokenizer(name)
        tok._backtracker = tok._make_backtracker()
        search = searched_or_merged(tok)
        with stopwatch() as sw:
            first = search(data[0])
        gave_up = tok._backtracker.encode(data[0]) is None
        heap, want = cpu_best(tok._merge_piece, data[1:])
        best, got = cpu_best(search, data[1:])
        assert got == want and first == tok._merge_piece(data[0])
        rule = (
            len(data[0]) >= tokenizer_module._SEARCH_FROM
            and not tok._ranks_grow
            and len(set(data[0][:256])) <= tokenizer_module._SEARCH_ALPHABET
        )
        print(
            "%-12s %-9s %8.3f %8.3f %8.3f %8.2f %8.1f %8s %s"
            % (
                name,
                family,
                heap,
                sw.cpu,
                best,
                best / heap,
                steps_unlimited(tok, data[-1]),
                "yes" if gave_up else "no",
                "yes" if rule else "no",
            )
        )


def backtrack_main(argv):
    names = ["gpt2", "cl100k_base", "o200k_base"]
    if "--encodings" in argv:
        names = argv[argv.index("--encodings") + 1].split(",")
    size = int(argv[argv.index("--size") + 1]) if "--size" in argv else 100000
    families = BACKTRACK_FAMILIES
    if "--families" in argv:
        families = argv[argv.index("--families") + 1].split(",")
    limit = backtrack._STEPS_PER_BYTE, backtrack._STEPS_FLOOR
    print("backtracking search limit: %d steps per byte + %d" % limit)
    for name in names:
        rng = random.Random(12)
        if "--families" not in argv:
            tok = load_tokenizer(name)
            tok._backtracker = tok._make_backtracker()
            backtrack_lengths(tok, name, rng)
        backtrack_families(name, size, rng, families)


def main():
    if "--backtrack" in sys.argv:
        backtrack_main(sys.argv)
        return
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
