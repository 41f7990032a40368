"""The backtracking search (``encode/backtrack.py``) for every piece, against the merging loop,
on the shared corpora, with tiktoken in the same run.

    .venv/bin/python perf/experiments/backtrack_everywhere.py              # 8 MB per call, 3 repeats
    .venv/bin/python perf/experiments/backtrack_everywhere.py --quick      # 2 MB, 1 repeat
    .venv/bin/python perf/experiments/backtrack_everywhere.py --encodings cl100k_base --texts chinese

``perf/encode_patterns.py``'s measurement (``Tokenizer.from_tiktoken(NAME).encode_ordinary``
under PyPy, one thread, a first call on the first ``--mb`` MB and a warm call on the next,
each system its own process, round-robin repeats, medians of MB/s of the call alone) for
these refbpe variants and tiktoken (CPython):

    merge         the merging loop for every piece (the search never built): refbpe before it
    default       the tokenizer as it is: the search for pieces of ``_LONG_PIECE`` bytes or more
    search        the search for every piece the piece caches miss (``_LONG_PIECE = 1``);
                  long CJK pieces still cut where no token spans them (``piece_cuts``), the
                  parts searched
    search-whole  the same, CJK pieces not cut (``_CUT_FROM`` out of reach): searched whole

Ids are compared by digest across all five.  An experiment: the tokenizer searches long pieces
only, because of what this measured (CHANGELOG, perf/experiments/README.md).
"""

import argparse
import os
import statistics
import sys

# Run as a script from perf/experiments/: the harness is one level up.
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import INTERPRETERS, PEERS, corpus, run_result, tree_env  # noqa: E402

ENCODINGS = ["cl100k_base", "o200k_base"]
TEXTS = ["english_medium", "python_code", "russian", "chinese", "mixed_multilingual"]
VARIANTS = ["merge", "default", "search", "search-whole"]
SYSTEMS = VARIANTS + ["tiktoken"]


def worker(system, name, path, max_bytes):
    sys.path.insert(0, PEERS)
    from _common import emit, encode_twice, now

    t0 = now()
    if system == "tiktoken":
        import tiktoken

        encode = tiktoken.get_encoding(name).encode_ordinary
    else:
        from refbpe import Tokenizer
        from refbpe.encode import piece_ids

        if system == "merge":
            Tokenizer._make_backtracker = lambda self: False
        if system in ("search", "search-whole"):
            piece_ids._LONG_PIECE = 1
        if system == "search-whole":
            piece_ids._CUT_FROM = 1 << 62
        encode = Tokenizer.from_tiktoken(name).encode_ordinary
    load = round(now() - t0, 3)
    emit(load_seconds=load, **encode_twice(path, max_bytes, encode))


def measure(args):
    max_bytes = int(args.mb * 1e6)
    rows = []
    for name in args.encodings:
        for text in args.texts:
            runs = {s: [] for s in SYSTEMS}
            for _ in range(args.repeats):
                for system in SYSTEMS:
                    python = INTERPRETERS["cpython" if system == "tiktoken" else "pypy"]
                    cmd = [python, __file__, "--worker", system, name, corpus(text), str(max_bytes)]
                    runs[system].append(run_result(cmd, tree_env(), timeout=3600)["result"])
            row = {"encoding": name, "text": text}
            for system, results in runs.items():
                row[system] = {
                    "first": statistics.median(r["bytes"] / r["encode_seconds"] / 1e6 for r in results),
                    "warm": statistics.median(r["warm_bytes"] / r["warm_seconds"] / 1e6 for r in results),
                    "digest": {r["ids_digest"] for r in results},
                }
            row["same"] = len(set.union(*(row[s]["digest"] for s in SYSTEMS))) == 1
            rows.append(row)
            print_row(row)
            sys.stdout.flush()
    return rows


def print_header(args):
    print(
        "refbpe variants under PyPy vs tiktoken (CPython), encode_ordinary, %.0f MB first call, "
        "%.0f MB warm, median of %d; MB/s (ratio to tiktoken)" % (args.mb, args.mb, args.repeats)
    )
    variants = "".join("%17s" % v for v in VARIANTS)
    print("%-12s %-19s %-6s %s %10s  %s" % ("encoding", "text", "call", variants, "tiktoken", "ids"))


def print_row(row):
    for call in ("first", "warm"):
        tik = row["tiktoken"][call]
        cells = "".join("%9.2f (%4.2fx)" % (row[v][call], row[v][call] / tik) for v in VARIANTS)
        print(
            "%-12s %-19s %-6s %s %10.2f  %s"
            % (row["encoding"], row["text"], call, cells, tik, "same" if row["same"] else "DIFFER")
        )


def main(argv):
    if argv[:1] == ["--worker"]:
        return worker(argv[1], argv[2], argv[3], int(argv[4]))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="2 MB per call, 1 repeat")
    p.add_argument("--mb", type=float, default=None, help="MB per encode call (default 8; quick 2)")
    p.add_argument("--repeats", type=int, default=None, help="default 3; quick 1")
    p.add_argument("--encodings", default=",".join(ENCODINGS))
    p.add_argument("--texts", default=",".join(TEXTS))
    args = p.parse_args(argv)
    args.mb = args.mb or (2 if args.quick else 8)
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.encodings = args.encodings.split(",")
    args.texts = args.texts.split(",")
    print_header(args)
    measure(args)


if __name__ == "__main__":
    main(sys.argv[1:])
