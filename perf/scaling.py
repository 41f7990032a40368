"""How refbpe's cost grows: with the input, the vocab and the number of workers, and what
a large corpus on many cores would take.  Run it with the interpreter to measure (PyPy is
the one that matters); ``--only`` picks sections:

    .venv-pypy/bin/python perf/scaling.py [--corpus english_medium] [--repeats 3] [--only ...]

``bytes``   pre-tokenize + count time against input size (prefixes of the corpus, cut after
            a newline), one worker in-process: the per-process cost.
``words``   merge time against unique words (the prefixes' tables, vocab 10,000).
``vocab``   merge time against vocab size on the whole corpus's table.
``workers`` whole processes (``python -m refbpe``, this interpreter) at 1, 2, ... up to
            ``os.cpu_count()`` workers (``--workers`` for another list): ``count``,
            ``train`` (vocab ``--train-vocab``, its ``--report`` phases: count, merge,
            write) and ``encode`` (the model trained at one worker, ids to ``.npy``);
            wall and CPU seconds (the process tree's), the least and the median of
            ``--repeats`` rounds (each round runs every job once, in turn), and the
            speed-up over one worker.
``model``   the rates the projection (``docs/scaling.md``) uses, measured here: counting
            MB/s of one worker; the main process's cost of adding one unit's table to
            the running sum (a 16 MiB unit of the corpus, packed as a worker sends it);
            unique words of english_small and english_medium, and their growth exponent
            between the two (an estimate, Heaps' law through two points); merge seconds
            at vocab 32,000 on both tables and their growth exponent.  Then the projected
            time for ``--project-gb`` GB (OpenWebText: 11.9) at ``--cores`` (16, 64, 256)
            Dask workers: counting at N times one worker's rate, bounded below by the
            main process adding up the units; then the merge phase, serial.

Inputs are written to a temporary directory and deleted afterwards.  Prints tables and
writes ``perf/results/scaling-STAMP.json``.
"""

import argparse
import json
import math
import os
import pickle
import platform
import shutil
import statistics
import sys
import tempfile

from harness import SPECIAL, corpus, run_result, save_results, stopwatch, timed, tree_env

from refbpe.corpus.count import count_chunk, count_words, unpack_counts
from refbpe.learn.merge import learn_merges
from refbpe.pretokenize.gpt2 import add_small_counts

SECTIONS = ("bytes", "words", "vocab", "workers", "model")
UNIT = 16 << 20  # the largest unit ``count`` cuts (``count._unit_size``): what a big input is cut into
MB = 1e6


def median_time(fn, repeats):
    return timed(fn, repeats, statistics.median)


def write_prefix(src, dst, nbytes):
    with open(src, "rb") as f:
        data = f.read(nbytes)
    cut = data.rfind(b"\n") + 1 if len(data) == nbytes else len(data)
    with open(dst, "wb") as f:
        f.write(data[:cut])
    return cut


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="english_medium")
    parser.add_argument("--sizes-mb", default="5,10,20,40,75", help="prefix sizes, MB (comma list)")
    parser.add_argument("--vocab", default="1000,4000,10000,32000", help="vocab sizes for merge-vs-vocab")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help="sections (comma list): " + ", ".join(SECTIONS)
    )
    parser.add_argument("--workers", default=None, help="worker counts (default 1 .. os.cpu_count())")
    parser.add_argument("--train-vocab", type=int, default=10000)
    parser.add_argument("--project-gb", type=float, default=11.9, help="the corpus to project, GB")
    parser.add_argument("--cores", default="16,64,256", help="core counts to project")
    args = parser.parse_args(argv)
    only = args.only.split(",")
    src = corpus(args.corpus)
    if not os.path.exists(src):
        sys.exit("perf/scaling.py: %s not found (set REFBPE_SHARED)" % src)
    interp = "%s %s" % (platform.python_implementation(), platform.python_version())
    out = {
        "interpreter": interp,
        "corpus": args.corpus,
        "repeats": args.repeats,
        "load_before": os.getloadavg(),
    }
    print(
        "%s, %s, %d repeats, %d cores, load average %.1f"
        % (interp, args.corpus, args.repeats, os.cpu_count(), os.getloadavg()[0])
    )
    tmp = tempfile.mkdtemp(prefix="refbpe-scaling-")
    try:
        counts_by_size = {}
        if "bytes" in only or "words" in only:
            out["count"] = count_vs_bytes(src, args, tmp, counts_by_size)
        if "words" in only:
            out["merge_vs_words"] = merge_vs_words(counts_by_size, args.repeats)
        if "vocab" in only:
            whole = counts_by_size.get(max(counts_by_size)) if counts_by_size else None
            out["merge_vs_vocab"] = merge_vs_vocab(whole or count_words([src], [SPECIAL], workers=1), args)
        if "workers" in only:
            out["workers"] = by_workers(src, args, tmp)
        if "model" in only:
            out["model"] = projection(src, args, out.get("workers"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out["load_after"] = os.getloadavg()
    print("\nload average after %.1f" % out["load_after"][0])
    print("results: %s" % save_results("scaling", out))


# -- per process: bytes, words, vocab ----------------------------------------------------


def count_vs_bytes(src, args, tmp, counts_by_size):
    rows = []
    print("\nPRE-TOKENIZE + COUNT vs bytes (1 worker, in-process, medians)")
    print("  %8s %9s %8s %13s %14s" % ("MB", "seconds", "MB/s", "unique words", "s per 10 MB"))
    for mb in [float(x) for x in args.sizes_mb.split(",")]:
        path = os.path.join(tmp, "prefix-%g.txt" % mb)
        nbytes = write_prefix(src, path, int(mb * MB))
        t, counts = median_time(lambda path=path: count_words([path], [SPECIAL], workers=1), args.repeats)
        counts_by_size[mb] = counts
        row = {"mb": nbytes / MB, "seconds": t, "mb_per_s": nbytes / MB / t, "unique_words": len(counts)}
        rows.append(row)
        print(
            "  %8.1f %9.2f %8.1f %13d %14.2f"
            % (row["mb"], t, row["mb_per_s"], len(counts), t / row["mb"] * 10)
        )
    return rows


def merge_vs_words(counts_by_size, repeats, vocab=10000):
    rows = []
    print("\nMERGE vs unique words (vocab %d, medians)" % vocab)
    print("  %8s %13s %9s %16s" % ("MB", "unique words", "seconds", "us per word"))
    for mb, counts in sorted(counts_by_size.items()):
        t, merges = median_time(lambda counts=counts: learn_merges(counts, vocab - 257), repeats)
        rows.append(
            {"mb": mb, "unique_words": len(counts), "vocab": vocab, "seconds": t, "merges": len(merges)}
        )
        print("  %8.1f %13d %9.2f %16.2f" % (mb, len(counts), t, t / len(counts) * 1e6))
    return rows


def merge_vs_vocab(counts, args):
    rows = []
    print("\nMERGE vs vocab size (%d unique words, medians)" % len(counts))
    print("  %8s %9s %9s %15s" % ("vocab", "merges", "seconds", "ms per merge"))
    for vocab in [int(x) for x in args.vocab.split(",")]:
        t, merges = median_time(lambda vocab=vocab: learn_merges(counts, vocab - 257), args.repeats)
        rows.append({"vocab": vocab, "merges": len(merges), "seconds": t, "unique_words": len(counts)})
        print("  %8d %9d %9.2f %15.3f" % (vocab, len(merges), t, t / max(len(merges), 1) * 1e3))
    return rows


# -- whole processes by workers ------------------------------------------------------------


def by_workers(src, args, tmp):
    """count, train and encode at each worker count, whole processes, round-robin repeats."""
    workers = (
        [int(w) for w in args.workers.split(",")] if args.workers else range(1, (os.cpu_count() or 1) + 1)
    )
    refbpe, env = [sys.executable, "-m", "refbpe"], tree_env()
    model = os.path.join(tmp, "model")
    run_result(refbpe + _train(src, args, model, 1, None), env)  # the model encode uses, made once
    jobs = []
    for w in workers:
        report = os.path.join(tmp, "report-%d.json" % w)
        counted = ["count", src, "--special-token", SPECIAL, "-o", os.path.join(tmp, "c.tsv"), "--quiet"]
        jobs.append(("count", w, counted + ["--workers", str(w), "--report", report], report))
        jobs.append(("train", w, _train(src, args, os.path.join(tmp, "t"), w, report), report))
        encoded = ["encode", model, src, "-o", os.path.join(tmp, "ids.npy"), "--workers", str(w), "--quiet"]
        jobs.append(("encode", w, encoded, None))
    runs = {}
    for i in range(args.repeats):
        for what, w, cmd, report in jobs:
            r = run_result(refbpe + cmd, env)
            phases = _phases(report) if report else {}
            runs.setdefault((what, w), []).append(dict(phases, wall=r["wall"], cpu=r["cpu_seconds"]))
            print(
                "  %-6s w%-3d round %d/%d  %6.2f s wall  %6.2f s cpu"
                % (what, w, i + 1, args.repeats, r["wall"], r["cpu_seconds"])
            )
    rows = []
    size = os.path.getsize(src) / MB
    print(
        "\nBY WORKERS (whole processes; least wall of %d rounds, then medians; x = speed-up over 1 worker)"
        % args.repeats
    )
    print(
        "  %-6s %3s %8s %8s %8s %6s %8s %8s %8s"
        % ("job", "w", "least s", "median s", "cpu s", "x", "count s", "merge s", "MB/s")
    )
    for what in ("count", "train", "encode"):
        base = None
        for w in workers:
            got = runs[(what, w)]
            least = min(r["wall"] for r in got)
            row = {
                "job": what,
                "workers": w,
                "least": least,
                "median": statistics.median(r["wall"] for r in got),
            }
            row["cpu"] = statistics.median(r["cpu"] for r in got)
            for phase in ("count", "merge", "write"):
                if phase in got[0]:
                    row[phase] = min(r[phase] for r in got)
            base = base or least
            row["speedup"] = base / least
            row["mb_per_s"] = size / row.get("count", least)
            rows.append(row)
            print(
                "  %-6s %3d %8.2f %8.2f %8.2f %5.2fx %8s %8s %8.1f"
                % (
                    what,
                    w,
                    least,
                    row["median"],
                    row["cpu"],
                    row["speedup"],
                    _opt(row, "count"),
                    _opt(row, "merge"),
                    row["mb_per_s"],
                )
            )
    return rows


def _train(src, args, out, workers, report):
    cmd = [
        "train",
        src,
        "--vocab-size",
        str(args.train_vocab),
        "--special-token",
        SPECIAL,
        "-o",
        out,
        "--quiet",
    ]
    cmd += ["--workers", str(workers)]
    return cmd + (["--report", report] if report else [])


def _phases(path):
    with open(path) as f:
        report = json.load(f)
    return {
        k: report[k]["seconds"] for k in ("count", "merge", "write") if k in report and "seconds" in report[k]
    }


def _opt(row, key):
    return "%.2f" % row[key] if key in row else "-"


# -- the model: measured rates, then the projection ---------------------------------------------


def projection(src, args, workers_rows):
    """The rates docs/scaling.md's model uses, and the projected times."""
    rates = _unit_rates(src)
    small = count_words([corpus("english_small")], [SPECIAL], workers=1)
    medium = count_words([corpus("english_medium")], [SPECIAL], workers=1)
    names = ("english_small", "english_medium")
    sizes = {name: os.path.getsize(corpus(name)) for name in names}
    words = {"english_small": len(small), "english_medium": len(medium)}
    beta = math.log(words["english_medium"] / words["english_small"]) / math.log(
        sizes["english_medium"] / sizes["english_small"]
    )
    merge32 = {}
    for name, table in (("english_small", small), ("english_medium", medium)):
        merge32[name], _ = timed(
            lambda table=table: learn_merges(table, 32000 - 257), args.repeats, min, "cpu"
        )
    # merge seconds = a + b * words, through the two tables (the first merges touch most words;
    # a power law through the same points grows slower, so this is the cautious one)
    slope = (merge32["english_medium"] - merge32["english_small"]) / (
        words["english_medium"] - words["english_small"]
    )
    intercept = merge32["english_medium"] - slope * words["english_medium"]
    rates.update(
        words=words, bytes=sizes, words_exponent=beta, merge32_seconds=merge32, merge32_per_word=slope,
        merge32_intercept=intercept,
    )  # fmt: skip
    print(
        "\nMODEL RATES (%s, in-process, CPU seconds; merges: least of %d)"
        % (platform.python_implementation(), args.repeats)
    )
    print(
        "  counting, one worker: %.1f MB/s (%d units of %.1f MB, %d unique words each on average)"
        % (rates["count_mb_per_s"], rates["units"], rates["unit_mb"], rates["unit_words"])
    )
    print(
        "  the main process per unit: unpickling its table %.3f s, adding it to the running sum %.3f s (the"
        " last unit, into %d words); the int keys to bytes at the end: %.3f s"
        % (
            rates["unpickle_seconds"],
            rates["add_unit_seconds"],
            rates["sum_words"],
            rates["to_bytes_seconds"],
        )
    )
    print(
        "  unique words: english_small %d, english_medium %d: V ~ bytes^%.3f (two points: an estimate)"
        % (words["english_small"], words["english_medium"], beta)
    )
    print(
        "  merge phase at 32,000: english_small %.2f s, english_medium %.2f s: %.2f s + %.2f us per word"
        % (merge32["english_small"], merge32["english_medium"], intercept, slope * 1e6)
    )
    total = args.project_gb * 1e9
    words_big = words["english_medium"] * (total / sizes["english_medium"]) ** beta
    merge_big = intercept + slope * words_big
    units = total / UNIT
    adding = units * (rates["add_unit_seconds"] + rates["unpickle_seconds"])
    rows = []
    print(
        "\nPROJECTION: %.1f GB, vocab 32,000, N one-thread Dask workers (%d units of 16 MiB; %.2f M unique"
        " words, estimated)" % (args.project_gb, units, words_big / 1e6)
    )
    print("  %6s %10s %10s %10s %10s %8s" % ("cores", "count s", "add-up s", "merge s", "total s", "merge %"))
    for n in [int(x) for x in args.cores.split(",")]:
        counting = total / MB / (rates["count_mb_per_s"] * n)
        whole_run = max(counting, adding) + merge_big
        rows.append({"cores": n, "count": counting, "add_up": adding, "merge": merge_big, "total": whole_run})
        print(
            "  %6d %10.0f %10.0f %10.0f %10.0f %7.0f%%"
            % (n, counting, adding, merge_big, whole_run, 100 * merge_big / whole_run)
        )
    return {
        "rates": rates,
        "projected_words": words_big,
        "projected": rows,
        "workers_rows": bool(workers_rows),
    }


def _unit_rates(src):
    """The corpus cut into 16 MiB units (after a newline), each counted as a worker counts it
    (``count_chunk``: packed) and added to a running sum as the main process adds it
    (``unpack_counts``), then the sum's int keys turned to bytes (``add_small_counts``):
    counting MB/s of one worker, and the main process's serial costs."""
    with open(src, "rb") as f:
        data = f.read()
    units, start = [], 0
    while start < len(data):
        end = len(data) if len(data) - start <= UNIT else data.rfind(b"\n", start, start + UNIT) + 1
        units.append(data[start:end])
        start = end
    packed, counting = [], 0.0
    for unit in units:
        with stopwatch() as sw:
            packed.append(count_chunk(unit, 0, src, [SPECIAL], "strict"))
        counting += sw.cpu
    small, counts, adds, loads = {}, {}, [], []
    for p in packed:
        blob = pickle.dumps(p)
        with stopwatch() as sw:
            p = pickle.loads(blob)  # how a result reaches the main process (the spool, a Dask future)
        loads.append(sw.cpu)
        with stopwatch() as sw:
            unpack_counts(p, small, counts)
        adds.append(sw.cpu)
    with stopwatch() as sw:
        whole = add_small_counts(small, counts)
    return {
        "count_mb_per_s": len(data) / MB / counting,
        "units": len(units),
        "unit_mb": len(data) / MB / len(units),
        "unit_words": sum(len(p[0]) + len(p[3]) for p in packed) // len(packed),
        "add_unit_seconds": adds[-1],
        "add_seconds": adds,
        "unpickle_seconds": statistics.median(loads),
        "sum_words": len(whole),
        "to_bytes_seconds": sw.cpu,
    }


if __name__ == "__main__":
    main()
