"""The GPT-4 / GPT-4o patterns: encoding against tiktoken, and training time by pattern.

    .venv/bin/python perf/encode_patterns.py                  # 8 MB per call, 3 repeats
    .venv/bin/python perf/encode_patterns.py --quick          # 2 MB, 1 repeat
    .venv/bin/python perf/encode_patterns.py --only train --train-corpus english_medium

Encoding: ``Tokenizer.from_tiktoken(NAME).encode_ordinary`` under PyPy, one
thread, against ``tiktoken.get_encoding(NAME).encode_ordinary`` on CPython
(offline, from the shared ``TIKTOKEN_CACHE_DIR``), for ``cl100k_base`` and
``o200k_base``.  Each runs as its own process: a first call on the first
``--mb`` MB of the text (JIT warm-up and empty caches included), then a warm
call on the next ``--mb`` MB (``peers/_common.encode_twice``).  MB/s is of the
encode call alone; load time is shown apart.  Ids are compared by digest.

Training: ``train_bpe(corpus, vocab, ["<|endoftext|>"], pattern=P)`` under
PyPy (``--train-workers``, default 2), timed in-process, for P = gpt2,
cl100k_base and o200k_base; the ratio is against gpt2 measured in the same run.

Repeats go round-robin over the systems (run 1 of each, then run 2, ...) and
medians are reported; the machine is shared, so only ratios mean much.
"""

import argparse
import statistics
import sys

from harness import INTERPRETERS, PEERS, corpus, run_result, tree_env

PYPY, CPYTHON = INTERPRETERS["pypy"], INTERPRETERS["cpython"]

ENCODINGS = ["cl100k_base", "o200k_base"]
TEXTS = ["english_medium", "python_code", "russian", "chinese", "mixed_multilingual"]
TRAIN_PATTERNS = ["gpt2", "cl100k_base", "o200k_base"]
ENGLISH_BOUND = 1.2  # the speed issue's goal: >= 1.2x tiktoken on English, >= 1.0x on every language


# -- workers (run as their own processes) --------------------------------------------


def worker_encode(system, name, path, max_bytes):
    sys.path.insert(0, PEERS)
    from _common import emit, encode_twice, now

    t0 = now()
    if system == "refbpe":
        from refbpe import Tokenizer

        encode = Tokenizer.from_tiktoken(name).encode_ordinary
    else:
        import tiktoken

        encode = tiktoken.get_encoding(name).encode_ordinary
    load = round(now() - t0, 3)
    emit(load_seconds=load, **encode_twice(path, max_bytes, encode))


def worker_train(pattern, path, vocab, workers):
    sys.path.insert(0, PEERS)
    from _common import emit, merges_digest, now

    from refbpe.learn.train import train_bpe

    report = {}
    t0 = now()
    _, merges = train_bpe(path, vocab, ["<|endoftext|>"], workers=workers, pattern=pattern, report=report)
    emit(
        seconds=round(now() - t0, 3),
        count_seconds=report.get("count", {}).get("seconds"),
        merge_seconds=report.get("merge", {}).get("seconds"),
        unique_words=report.get("count", {}).get("unique_words"),
        merges_digest=merges_digest(merges),
    )


# -- the driver ---------------------------------------------------------------------------


def run(cmd):
    """The RESULT of a worker process (this tree's refbpe, the offline tiktoken cache)."""
    return run_result(cmd, tree_env(), timeout=3600)["result"]


def encode_job(system, name, text, max_bytes):
    python = PYPY if system == "refbpe" else CPYTHON
    return run([python, __file__, "--worker-encode", system, name, corpus(text), str(max_bytes)])


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def section_encode(args):
    max_bytes = int(args.mb * 1e6)
    rows = []
    for name in ENCODINGS:
        for text in args.texts:
            runs = {"refbpe": [], "tiktoken": []}
            for _ in range(args.repeats):
                for system in runs:
                    runs[system].append(encode_job(system, name, text, max_bytes))
            row = {"encoding": name, "text": text}
            for system, results in runs.items():
                row[system] = {
                    "first": median([r["bytes"] / r["encode_seconds"] / 1e6 for r in results]),
                    "warm": median(
                        [r["warm_bytes"] / r["warm_seconds"] / 1e6 for r in results if r.get("warm_seconds")]
                    ),
                    "load": median([r["load_seconds"] for r in results]),
                    "digest": {r["ids_digest"] for r in results},
                }
            row["same_ids"] = row["refbpe"]["digest"] == row["tiktoken"]["digest"]
            rows.append(row)
            print_encode_row(row)
            sys.stdout.flush()
    return rows


def ratio(a, b):
    return "%.2fx" % (a / b) if a and b else "-"


def print_encode_header(args):
    print(
        "ENCODING under PyPy vs tiktoken (CPython), one thread, encode_ordinary; %.0f MB first call, "
        "%.0f MB warm; median of %d" % (args.mb, args.mb, args.repeats)
    )
    print(
        "%-12s %-19s %8s %8s %7s  %8s %8s %7s  %-8s %s"
        % ("encoding", "text", "refbpe", "tiktoken", "ratio", "refbpe", "tiktoken", "ratio", "ids", "load s")
    )
    print("%-32s %s   %s" % ("", "---- first call MB/s ----", "------ warm MB/s -------"))


def print_encode_row(row):
    r, t = row["refbpe"], row["tiktoken"]
    print(
        "%-12s %-19s %8.2f %8.2f %7s  %8s %8s %7s  %-8s %.1f / %.1f"
        % (
            row["encoding"],
            row["text"],
            r["first"],
            t["first"],
            ratio(r["first"], t["first"]),
            "%.2f" % r["warm"] if r["warm"] else "-",
            "%.2f" % t["warm"] if t["warm"] else "-",
            ratio(r["warm"], t["warm"]),
            "same" if row["same_ids"] else "DIFFER",
            r["load"],
            t["load"],
        )
    )


def section_train(args):
    path = corpus(args.train_corpus)
    runs = {p: [] for p in TRAIN_PATTERNS}
    for _ in range(args.repeats):
        for pattern in TRAIN_PATTERNS:
            cmd = [
                PYPY,
                __file__,
                "--worker-train",
                pattern,
                path,
                str(args.train_vocab),
                str(args.train_workers),
            ]
            runs[pattern].append(run(cmd))
    print(
        "\nTRAINING under PyPy, %s, vocab %d, %d workers: in-process seconds (median of %d)"
        % (args.train_corpus, args.train_vocab, args.train_workers, args.repeats)
    )
    print("%-12s %8s %8s %8s %12s %9s" % ("pattern", "total", "count", "merge", "unique words", "vs gpt2"))
    base = median([r["seconds"] for r in runs["gpt2"]])
    out = {}
    for pattern, results in runs.items():
        total = median([r["seconds"] for r in results])
        out[pattern] = total
        print(
            "%-12s %8.2f %8.2f %8.2f %12d %9s"
            % (
                pattern,
                total,
                median([r["count_seconds"] for r in results]),
                median([r["merge_seconds"] for r in results]),
                results[0]["unique_words"],
                ratio(total, base),
            )
        )
    return out


def targets(encode_rows, train):
    print("\nTARGETS")
    for row in encode_rows:
        bound = ENGLISH_BOUND if row["text"] == "english_medium" else 1.0
        for call in ("first", "warm"):
            r, t = row["refbpe"][call], row["tiktoken"][call]
            met = r and t and r >= bound * t and row["same_ids"]
            print(
                "  [%s] encode %s %s (%s call) >= %.1fx tiktoken, same ids: %s"
                % ("met " if met else "MISS", row["encoding"], row["text"], call, bound, ratio(r, t))
            )
    if train:
        q = train["cl100k_base"] / train["gpt2"]
        print("  [%s] train cl100k_base within 10%% of gpt2: %.2fx" % ("met " if q <= 1.1 else "MISS", q))


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="2 MB per call, 1 repeat, english_small training")
    p.add_argument("--mb", type=float, default=None, help="MB per encode call (default 8; quick 2)")
    p.add_argument("--repeats", type=int, default=None, help="default 3; quick 1")
    p.add_argument("--texts", default=",".join(TEXTS))
    p.add_argument("--only", default="encode,train", help="sections: encode, train")
    p.add_argument("--train-corpus", default=None, help="default english_medium; quick english_small")
    p.add_argument("--train-vocab", type=int, default=10000)
    p.add_argument("--train-workers", type=int, default=2)
    args = p.parse_args(argv)
    args.mb = args.mb or (2 if args.quick else 8)
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.train_corpus = args.train_corpus or ("english_small" if args.quick else "english_medium")
    args.texts = [t for t in args.texts.split(",") if t]
    return args


def main(argv):
    if argv[:1] == ["--worker-encode"]:
        return worker_encode(argv[1], argv[2], argv[3], int(argv[4]))
    if argv[:1] == ["--worker-train"]:
        return worker_train(argv[1], argv[2], int(argv[3]), int(argv[4]))
    args = parse(argv)
    sections = set(args.only.split(","))
    rows, train = [], None
    if "encode" in sections:
        print_encode_header(args)
        rows = section_encode(args)
    if "train" in sections:
        train = section_train(args)
    targets(rows, train)


if __name__ == "__main__":
    main(sys.argv[1:])
