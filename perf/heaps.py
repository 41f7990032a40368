"""How big does the word table get?  Heaps' law for refbpe's pre-tokens.

    .venv-pypy/bin/python perf/heaps.py                 # all corpora, memory on both interpreters
    .venv-pypy/bin/python perf/heaps.py --corpora english_small --no-memory

Method
    Unique words.  One pass per corpus, in-process: the file is cut into small
    units (``--chunk-kb``) at the same safe cuts ``count_words`` uses
    (``io.iter_chunks``), each unit is counted with ``count.count_chunk`` (split
    on ``<|endoftext|>``, ``Pattern.count_pretokens``) and added to running
    tables.  At checkpoints growing geometrically (``--start-mb``, times
    ``--factor``, up to the whole file) the number of distinct pre-tokens V and
    the number of pre-tokens read T are recorded against the bytes read n.  One
    checkpoint per corpus is checked against ``count_words`` run on that prefix
    written to a temporary file (same table, not just the same size).

    Heaps' law V = K * n^beta is fitted by least squares on (log n, log V)
    (and on (log T, log V)), every checkpoint weighted alike; R^2 is that of
    the log-log fit.  ``beta_tail`` is the slope over the last factor 4 of the
    file, a check on whether the curve is still straight where it is
    extrapolated from.

    Memory per unique word.  The word tables of a few inputs (single corpora
    and unions of several, ``--memory-tables``) are written as word-count files
    (``countfile.write_counts``); each is loaded in a fresh process of each
    interpreter, which then runs ``train.train_from_counts`` at ``--vocab``.
    The child records its resident size after imports (baseline), after
    loading the table and a ``gc.collect()`` (the table), and the peak during
    training: the high-water mark is reset after loading (``/proc/self/
    clear_refs``, Linux >= 4.0) so that loading's own transient does not
    count, and read as ``VmHWM`` from ``/proc/self/status``.  Not
    ``ru_maxrss``: after a fork + exec it starts at the RSS of the forked
    copy of the parent (the kernel carries the old image's peak over at
    exec), so every child of a 300 MB driver reported at least 300 MB; it is
    kept in the JSON, and used only where ``/proc`` is missing.  Lines
    RSS = a + b * words are fitted per interpreter for the table and for the
    training peak.

    Predictions.  V at the size of OpenWebText (11.9 GB, English web text) from
    the English fit, and of the Pile (825 GB) from the English fit too (the
    Pile is mostly English prose, papers and code; the fits of the other
    corpora are written to the JSON for comparison), then memory = a + b * V
    from the lines above.

Assumptions and caveats
    - Extrapolation by two to four orders of magnitude from at most ~90 MB:
      the figures are orders of magnitude, not forecasts.
    - Repeated text adds no words, so the fit describes text like the sample.
      English web text has more unique words than books and documentation
      (URLs, numbers, hashes, typos, names), so the English-based prediction
      for OpenWebText and the Pile is likely a lower bound.
    - Bytes per word depend on word length (a Chinese pre-token is a whole
      run of characters) and on the interpreter's object layout; the line is
      fitted over the tables measured.

Prints a table of fits and the predictions, writes ``perf/results/heaps.json``
and, where matplotlib is importable here or in the CPython interpreter
(``REFBPE_CPYTHON``), ``perf/results/heaps.png``.
"""

import argparse
import gc
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile

from harness import (
    CORPORA,
    CORPUS_NAMES,
    INTERPRETERS,
    RESULTS,
    SPECIAL,
    corpus,
    maxrss_kib,
    peak_kib,
    reset_peak,
    status_kib,
    stopwatch,
    tree_env,
)

from refbpe.corpus.count import count_chunk, count_words, unpack_counts
from refbpe.corpus.countfile import read_counts, write_counts
from refbpe.corpus.io import iter_chunks
from refbpe.learn.train import train_from_counts
from refbpe.pretokenize.gpt2 import add_small_counts

MIB = 1 << 20

# Corpora to predict for: (name, bytes, fit used, why that fit).
TARGETS = [
    ("OpenWebText", 11.9e9, "english_medium", "English web text: the English fit"),
    ("the Pile", 825e9, "english_medium", "mostly English prose, papers and code: the English fit"),
]


# -- unique words against bytes read -------------------------------------------


def checkpoints(size, start_mb, factor):
    """Byte offsets start, start*factor, ... below ``size``, then ``size``."""
    points, x = [], start_mb * MIB
    while x < size:
        points.append(int(x))
        x *= factor
    return points + [size]


def heaps_curve(path, start_mb, factor, chunk_size, verify_mb):
    """One pass over ``path``: checkpoints of (bytes, pre-tokens, unique words).

    Returns (points, word table {bytes: count}, verification or None).
    """
    size = os.path.getsize(path)
    targets = checkpoints(size, start_mb, factor)
    specials = [SPECIAL.encode("utf-8")]
    small, counts = {}, {}
    tokens, points, verified = 0, [], None
    verify_at = min(targets, key=lambda t: abs(t - verify_mb * MIB))
    with open(path, "rb") as f:
        for offset, chunk in iter_chunks(f, chunk_size, specials):
            packed = count_chunk(chunk, offset, path, [SPECIAL], "strict")
            tokens += sum(packed[1]) + sum(packed[4])
            unpack_counts(packed, small, counts)
            end = offset + len(chunk)
            if targets and end >= targets[0]:
                # small (int keys, pieces < 8 bytes) and counts (bytes keys,
                # >= 8 bytes) never share a word: the sum is the distinct count.
                points.append({"bytes": end, "tokens": tokens, "words": len(small) + len(counts)})
                if verified is None and end >= verify_at:
                    verified = verify_prefix(path, end, small, counts)
                while targets and targets[0] <= end:
                    targets.pop(0)
    return points, add_small_counts(small, counts), verified


def verify_prefix(path, end, small, counts):
    """Compare the running table with ``count_words`` on bytes [0, end) of ``path``."""
    table = add_small_counts(small, dict(counts))
    tmp = tempfile.mkdtemp(prefix="refbpe-heaps-")
    try:
        prefix = os.path.join(tmp, "prefix.txt")
        with open(path, "rb") as src, open(prefix, "wb") as dst:
            dst.write(src.read(end))
        reference = count_words(prefix, [SPECIAL], workers=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"bytes": end, "words": len(table), "count_words": len(reference), "identical": table == reference}


# -- least squares ---------------------------------------------------------------


def fit_line(xs, ys):
    """(intercept, slope, R^2) of the least-squares line y = a + b * x."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    syy = sum((y - my) ** 2 for y in ys)
    b = sxy / sxx if sxx else 0.0
    a = my - b * mx
    r2 = (sxy * sxy / (sxx * syy)) if sxx and syy else 1.0
    return a, b, r2


def fit_heaps(ns, vs):
    """Heaps' law V = K * n^beta: {"K", "beta", "r2"} from a log-log line."""
    a, b, r2 = fit_line([math.log(n) for n in ns], [math.log(v) for v in vs])
    return {"K": math.exp(a), "beta": b, "r2": r2}


def tail_slope(points, key):
    """log-log slope of words against ``key`` over the last factor 4 of the input."""
    last = points[-1]
    first = min(points, key=lambda p: abs(math.log(p[key] * 4.0 / last[key])))
    if first is last:
        return None
    return math.log(last["words"] / first["words"]) / math.log(last[key] / first[key])


def heaps_fits(points, fit_from_mb):
    used = [p for p in points if p["bytes"] >= fit_from_mb * MIB] or points
    fit = fit_heaps([p["bytes"] for p in used], [p["words"] for p in used])
    by_tokens = fit_heaps([p["tokens"] for p in used], [p["words"] for p in used])
    return {
        "bytes": fit,
        "tokens": by_tokens,
        "points_fitted": len(used),
        "beta_tail": tail_slope(points, "bytes"),
        "bytes_per_token": points[-1]["bytes"] / points[-1]["tokens"],
    }


def predict_words(fit, nbytes):
    return fit["K"] * nbytes ** fit["beta"]


def extrapolate_tail(last, beta_tail, nbytes):
    """V at ``nbytes`` continuing from the last checkpoint with the tail slope."""
    if beta_tail is None:
        return None
    return last["words"] * (nbytes / last["bytes"]) ** beta_tail


# -- memory per unique word (child process) ---------------------------------------


def child_measure(tsv, vocab):
    """Load a word-count file, train, print one JSON line of memory figures (KiB)."""
    gc.collect()
    base = status_kib()
    counts = read_counts(tsv)
    gc.collect()
    loaded, load_peak = status_kib(), peak_kib()
    was_reset = reset_peak()
    with stopwatch() as sw:
        _, merges = train_from_counts(counts, vocab_size=vocab, special_tokens=[SPECIAL])
    seconds = sw.wall
    print(
        json.dumps(
            {
                "interpreter": "%s %s" % (platform.python_implementation(), platform.python_version()),
                "words": len(counts),
                "word_bytes": sum(len(w) for w in counts),
                "merges": len(merges),
                "baseline_kib": base,
                "loaded_kib": loaded,
                "load_peak_kib": load_peak,
                "train_peak_kib": peak_kib(),
                "peak_reset": was_reset,
                "ru_maxrss_kib": maxrss_kib(),
                "train_seconds": round(seconds, 2),
            }
        )
    )


def measure_memory(exe, tsv, vocab):
    """Run ``child_measure`` in a fresh ``exe`` process; its JSON as a dict."""
    out = subprocess.run(
        [exe, os.path.abspath(__file__), "--measure-memory", tsv, "--vocab", str(vocab)],
        stdout=subprocess.PIPE,
        check=True,
        universal_newlines=True,
        env=tree_env(),
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def memory_fits(rows):
    """Per interpreter: lines bytes = a + b * words (a in MiB) for the table and the training peak."""
    out = {}
    for interp in sorted({r["interp"] for r in rows}):
        mine = [r for r in rows if r["interp"] == interp]
        words = [r["words"] for r in mine]
        if len(set(words)) < 2:
            continue  # a line needs two table sizes
        fits = {}
        for name, values in (
            ("table", [(r["loaded_kib"] - r["baseline_kib"]) * 1024.0 for r in mine]),
            ("train_peak", [r["train_peak_kib"] * 1024.0 for r in mine]),
        ):
            a, b, r2 = fit_line(words, values)
            fits[name] = {"a_mib": a / MIB, "bytes_per_word": b, "r2": r2}
        out[interp] = fits
    return out


def table_union(tables, names):
    """{word: summed count} over the named tables."""
    if len(names) == 1:
        return tables[names[0]]
    union = {}
    for name in names:
        for w, n in tables[name].items():
            union[w] = union.get(w, 0) + n
    return union


# -- output ------------------------------------------------------------------------


def print_fits(corpora):
    print("\nHEAPS' LAW  V = K * n^beta  (n = bytes; least squares in log-log space)")
    print(
        "  %-19s %9s %8s %11s %9s %7s %7s %7s %10s %10s"
        % ("corpus", "MB", "points", "unique", "K", "beta", "R^2", "tail", "beta(tok)", "B/token")
    )
    for name, c in corpora.items():
        f, last = c["fit"], c["points"][-1]
        tail = "%7.3f" % f["beta_tail"] if f["beta_tail"] is not None else "%7s" % "-"
        print(
            "  %-19s %9.1f %8d %11d %9.2f %7.3f %7.4f %s %10.3f %10.2f"
            % (
                name,
                last["bytes"] / 1e6,
                len(c["points"]),
                last["words"],
                f["bytes"]["K"],
                f["bytes"]["beta"],
                f["bytes"]["r2"],
                tail,
                f["tokens"]["beta"],
                f["bytes_per_token"],
            )
        )
    for name, c in corpora.items():
        v = c.get("verified")
        if v:
            print(
                "  check %s: %d bytes -> %d words, count_words %d, tables %s"
                % (
                    name,
                    v["bytes"],
                    v["words"],
                    v["count_words"],
                    "identical" if v["identical"] else "DIFFER",
                )
            )


def print_memory(rows, fits):
    print("\nMEMORY PER UNIQUE WORD (train_from_counts, fresh process per row; MiB)")
    print(
        "  %-8s %-34s %10s %7s %9s %9s %10s %9s %8s"
        % ("interp", "table", "words", "B/word", "baseline", "table", "train peak", "B/word*", "train s")
    )
    for r in rows:
        table_mb = (r["loaded_kib"] - r["baseline_kib"]) / 1024.0
        print(
            "  %-8s %-34s %10d %7.1f %9.0f %9.0f %10.0f %9.0f %8.1f"
            % (
                r["interp"],
                r["table"],
                r["words"],
                r["word_bytes"] / r["words"],
                r["baseline_kib"] / 1024.0,
                table_mb,
                r["train_peak_kib"] / 1024.0,
                (r["train_peak_kib"] - r["baseline_kib"]) * 1024.0 / r["words"],
                r["train_seconds"],
            )
        )
    print("  (B/word: mean word length; B/word*: (train peak - baseline) / words)")
    for interp, f in fits.items():
        print(
            "  %-8s table      = %7.1f MiB + %6.1f B x words  (R^2 %.4f)"
            % (interp, f["table"]["a_mib"], f["table"]["bytes_per_word"], f["table"]["r2"])
        )
        print(
            "  %-8s train peak = %7.1f MiB + %6.1f B x words  (R^2 %.4f)"
            % (interp, f["train_peak"]["a_mib"], f["train_peak"]["bytes_per_word"], f["train_peak"]["r2"])
        )


def predictions(corpora, fits):
    out = []
    for target, nbytes, fit_name, why in TARGETS:
        if fit_name not in corpora:
            print("no prediction for %s: %s was not read" % (target, fit_name))
            continue
        c = corpora[fit_name]
        words = predict_words(c["fit"]["bytes"], nbytes)
        row = {
            "target": target,
            "bytes": nbytes,
            "fit": fit_name,
            "why": why,
            "words": words,
            "words_tail": extrapolate_tail(c["points"][-1], c["fit"]["beta_tail"], nbytes),
            "words_by_fit": {n: predict_words(c["fit"]["bytes"], nbytes) for n, c in corpora.items()},
            "memory": {},
        }
        for interp, f in fits.items():
            row["memory"][interp] = {
                "table_gb": (f["table"]["a_mib"] * MIB + f["table"]["bytes_per_word"] * words) / 1e9,
                "train_peak_gb": (f["train_peak"]["a_mib"] * MIB + f["train_peak"]["bytes_per_word"] * words)
                / 1e9,
            }
        out.append(row)
    return out


def print_predictions(preds):
    print("\nPREDICTIONS (extrapolated; likely lower bounds, see the module docstring; GB = 1e9 bytes)")
    for p in preds:
        print(
            "  %s (%.1f GB), %s fit (%s): %.2g unique words"
            % (p["target"], p["bytes"] / 1e9, p["fit"], p["why"], p["words"])
        )
        if p["words_tail"]:
            print("    continuing the last factor 4's slope instead: %.2g" % p["words_tail"])
        others = ", ".join("%s %.2g" % (n, v) for n, v in sorted(p["words_by_fit"].items()))
        print("    every fit: %s" % others)
        for interp, m in sorted(p["memory"].items()):
            print(
                "    %-8s word table %6.1f GB, training peak %6.1f GB"
                % (interp, m["table_gb"], m["train_peak_gb"])
            )


def plot(result, path):
    """Log-log V(n) per corpus with its fit, and memory against words; a message."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib absent: no plot"
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5.5))
    for name, c in result["corpora"].items():
        ns = [p["bytes"] for p in c["points"]]
        (line,) = ax.loglog(
            ns,
            [p["words"] for p in c["points"]],
            "o",
            ms=3,
            label="%s (beta %.2f)" % (name, c["fit"]["bytes"]["beta"]),
        )
        f = c["fit"]["bytes"]
        ax.loglog(ns, [f["K"] * n ** f["beta"] for n in ns], "-", color=line.get_color(), lw=0.8)
    ax.set_xlabel("bytes read")
    ax.set_ylabel("unique pre-tokens")
    ax.set_title("Heaps' law, V = K n^beta")
    ax.grid(True, which="both", lw=0.3)
    ax.legend(fontsize=8)
    for interp, f in sorted(result.get("memory_fits", {}).items()):
        rows = [r for r in result["memory"] if r["interp"] == interp]
        ws = [r["words"] for r in rows]
        (pts,) = bx.plot(
            [w / 1e6 for w in ws],
            [r["train_peak_kib"] / 1024.0 for r in rows],
            "o",
            label="%s training peak" % interp,
        )
        tp = f["train_peak"]
        bx.plot(
            [0, max(ws) / 1e6],
            [tp["a_mib"], tp["a_mib"] + tp["bytes_per_word"] * max(ws) / MIB],
            "-",
            color=pts.get_color(),
            lw=0.8,
        )
        bx.plot(
            [w / 1e6 for w in ws],
            [(r["loaded_kib"] - r["baseline_kib"]) / 1024.0 for r in rows],
            "s",
            mfc="none",
            color=pts.get_color(),
            label="%s table" % interp,
        )
    bx.set_xlabel("unique words (millions)")
    bx.set_ylabel("MiB")
    bx.set_title("refbpe memory, vocab %d" % result["vocab"])
    bx.grid(True, lw=0.3)
    bx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return "plot: %s" % path


def plot_anywhere(result, json_path, png_path):
    """Plot here if matplotlib imports, else with the CPython interpreter."""
    message = plot(result, png_path)
    if not message.startswith("matplotlib absent"):
        return message
    exe = INTERPRETERS["cpython"]
    if os.path.exists(exe) and os.path.realpath(exe) != os.path.realpath(sys.executable):
        done = subprocess.run(
            [exe, os.path.abspath(__file__), "--plot-from", json_path, "--out", png_path],
            stdout=subprocess.PIPE,
            universal_newlines=True,
        )
        return done.stdout.strip() or message
    return message + " (no CPython interpreter with it: set REFBPE_CPYTHON)"


# -- driver ------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpora", default=",".join(CORPUS_NAMES), help="comma list (default: all seven)")
    p.add_argument("--start-mb", type=float, default=1.0, help="first checkpoint, MiB")
    p.add_argument("--factor", type=float, default=math.sqrt(2), help="checkpoint growth factor")
    p.add_argument("--fit-from-mb", type=float, default=1.0, help="fit checkpoints from this size on")
    p.add_argument("--chunk-kb", type=int, default=128, help="counting unit, KiB (checkpoint granularity)")
    p.add_argument("--verify-mb", type=float, default=4.0, help="checkpoint checked against count_words")
    p.add_argument("--vocab", type=int, default=10000)
    p.add_argument(
        "--memory-tables",
        default="english_small,english_medium,python_code,english_medium+python_code,all",
        help="word tables to train on: corpus names, '+' for unions, 'all' for every corpus read",
    )
    p.add_argument("--interpreters", default="pypy,cpython")
    p.add_argument("--no-memory", action="store_true")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--out", default=os.path.join(RESULTS, "heaps.json"))
    p.add_argument("--measure-memory", metavar="TSV", help=argparse.SUPPRESS)
    p.add_argument("--plot-from", metavar="JSON", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def run_counts(args):
    """Heaps curves and fits of every corpus found; the word tables kept for memory runs."""
    corpora, tables = {}, {}
    needed = set()
    for spec in args.memory_tables.split(","):
        needed.update(CORPUS_NAMES if spec == "all" else spec.split("+"))
    for name in args.corpora.split(","):
        path = corpus(name)
        if not os.path.exists(path):
            print("skip %s: %s not found (set REFBPE_DATA)" % (name, path))
            continue
        clock = stopwatch()
        points, table, verified = heaps_curve(
            path, args.start_mb, args.factor, args.chunk_kb * 1024, args.verify_mb
        )
        corpora[name] = {
            "path": path,
            "points": points,
            "verified": verified,
            "fit": heaps_fits(points, args.fit_from_mb),
            "seconds": round(clock.elapsed(), 1),
        }
        if name in needed and not args.no_memory:
            tables[name] = table
        print(
            "%-19s %6.1f MB  %9d unique words  %5.1f s"
            % (name, points[-1]["bytes"] / 1e6, points[-1]["words"], clock.elapsed())
        )
        sys.stdout.flush()
    return corpora, tables


def run_memory(args, tables):
    rows = []
    tmp = tempfile.mkdtemp(prefix="refbpe-heaps-")
    try:
        for spec in args.memory_tables.split(","):
            names = sorted(tables) if spec == "all" else spec.split("+")
            if not names or any(n not in tables for n in names):
                print("skip memory table %s: corpus missing" % spec)
                continue
            label = "all (%s)" % len(names) if spec == "all" else spec
            tsv = os.path.join(tmp, "counts.tsv")
            write_counts(tsv, table_union(tables, names))
            gc.collect()
            for interp in args.interpreters.split(","):
                exe = INTERPRETERS.get(interp)
                if not exe or not os.path.exists(exe):
                    print("skip %s: interpreter %s not found (set REFBPE_%s)" % (interp, exe, interp.upper()))
                    continue
                row = measure_memory(exe, tsv, args.vocab)
                row.update({"interp": interp, "table": label})
                rows.append(row)
                print(
                    "  %-8s %-34s %9d words  train peak %6.0f MiB  %5.1f s"
                    % (interp, label, row["words"], row["train_peak_kib"] / 1024.0, row["train_seconds"])
                )
                sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def main(argv=None):
    args = parse_args(argv)
    if args.measure_memory:
        return child_measure(args.measure_memory, args.vocab)
    if args.plot_from:
        with open(args.plot_from) as f:
            print(plot(json.load(f), args.out))
        return
    interp = "%s %s" % (platform.python_implementation(), platform.python_version())
    print(
        "counting under %s, one process; checkpoints from %g MiB, x%.3f"
        % (interp, args.start_mb, args.factor)
    )
    corpora, tables = run_counts(args)
    if not corpora:
        sys.exit("perf/heaps.py: no corpus found under %s" % CORPORA)
    result = {"interpreter": interp, "vocab": args.vocab, "corpora": corpora, "memory": [], "memory_fits": {}}
    if not args.no_memory:
        print("\nmemory runs (vocab %d):" % args.vocab)
        result["memory"] = run_memory(args, tables)
        result["memory_fits"] = memory_fits(result["memory"])
    tables.clear()
    result["predictions"] = predictions(corpora, result["memory_fits"])
    print_fits(corpora)
    if result["memory"]:
        print_memory(result["memory"], result["memory_fits"])
    print_predictions(result["predictions"])
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print("\nresults: %s" % args.out)
    if not args.no_plot:
        print(plot_anywhere(result, args.out, os.path.splitext(args.out)[0] + ".png"))


if __name__ == "__main__":
    main()
