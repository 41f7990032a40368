"""Reporting: the tables, the targets block and the plot of one run's results.

Pure functions of the results (the rows of ``perf/suite/sections.py``, as written to the JSON):
each ``table_*`` returns one block of text; ``render`` joins them in the order the driver
prints and saves.  Ratios are always against peers measured in the same run; a system that
is absent or failed gets a line saying so, never a silent gap.  The plot (training wall time
against corpus size, log-log, one panel per vocab) needs matplotlib and is skipped with a
message without it.
"""

from bench_pickle import format_table

from suite import targets
from suite.systems import TRAIN_PEERS, TRAIN_SYSTEMS


def fmt_ratio(a, b):
    if not a or not b:
        return "-"
    return "%.2fx" % (a / b)


def status(s):
    if "absent" in s:
        return "absent (%s)" % s["absent"]
    if "failed" in s:
        return "FAILED (%s)" % s["failed"]
    return None


def table_train(results):
    lines = [
        "TRAINING: whole-process wall time (median), peak memory; "
        "ratio = this system's time / peer's time (<1: faster);",
        "load = worst CPU share used by other processes during a run (noise)",
    ]
    keys = sorted({(r["mb"], r["corpus"], r["vocab"]) for r in results})
    for mb, corpus, vocab in keys:
        group = [r for r in results if r["corpus"] == corpus and r["vocab"] == vocab]
        peers = {r["system"]: r.get("wall") for r in group if r["system"] in TRAIN_PEERS}
        lines.append("")
        lines.append("%s (%.1f MB) @ vocab %d" % (corpus, mb, vocab))
        lines.append(
            "  %-18s %8s %8s %9s %9s  %9s %9s %9s %6s  %s"
            % (
                "system",
                "median s",
                "min s",
                "tree MB",
                "proc MB",
                "vs hf",
                "vs rustbpe",
                "vs bpeasy",
                "load",
                "merges",
            )
        )
        for r in group:
            st = status(r)
            if st:
                lines.append("  %-18s %s" % (r["system"], st))
                continue
            lines.append(
                "  %-18s %8.2f %8.2f %9.0f %9.0f  %9s %9s %9s %5.0f%%  %s"
                % (
                    r["system"],
                    r["wall"],
                    min(r["wall_all"]),
                    r["peak_tree_mb"],
                    r["max_process_mb"],
                    fmt_ratio(r["wall"], peers.get("hf")),
                    fmt_ratio(r["wall"], peers.get("rustbpe")),
                    fmt_ratio(r["wall"], peers.get("bpeasy")),
                    100 * r.get("foreign_cpu_max", 0),
                    r.get("merges_digest", ""),
                )
            )
        digests = {r.get("merges_digest") for r in group if r.get("merges_digest")}
        if len(digests) > 1:
            lines.append("  !! refbpe/naive merges differ between systems: %s" % sorted(digests))
        elif digests:
            lines.append(
                "  refbpe (all interpreters/workers)%s: identical merges"
                % (
                    " and naive"
                    if any(r["system"] == "naive-pypy" and r.get("merges_digest") for r in group)
                    else ""
                )
            )
    return "\n".join(lines)


def table_phases(results):
    lines = [
        "REFBPE PHASES (CLI --report, medians, seconds; read is overlapped with counting, inside 'count';"
        " startup = wall - in-process total)",
        "  %-18s %-26s %8s %8s %8s %8s %8s %9s %9s"
        % ("system", "corpus@vocab", "startup", "count", "merge", "write", "wall", "count MB/s", "words"),
    ]
    for r in results:
        if not r["system"].startswith("refbpe-") or "phases" not in r:
            continue
        ph, rep = r["phases"], r["report"]
        mbs = r["mb"] / ph["count"] if ph.get("count") else 0
        lines.append(
            "  %-18s %-26s %8.2f %8.2f %8.2f %8.2f %8.2f %9.1f %9d"
            % (
                r["system"],
                "%s@%d" % (r["corpus"], r["vocab"]),
                ph["startup"],
                ph.get("count", 0),
                ph.get("merge", 0),
                ph.get("write", 0),
                r["wall"],
                mbs,
                rep.get("count", {}).get("unique_words", 0),
            )
        )
    return "\n".join(lines)


def table_encode(results):
    lines = [
        "ENCODING with the GPT-2 vocab, one thread: MB/s of the encode call (median); "
        "ids compared with tiktoken"
    ]
    for text in sorted({r["text"] for r in results}, key=lambda t: [x["text"] for x in results].index(t)):
        group = [r for r in results if r["text"] == text]
        ref = {r["system"]: r for r in group if "mb_per_s" in r}
        tk = ref.get("tiktoken")
        nbytes = next((r["result"]["bytes"] for r in group if "result" in r), 0)
        lines.append("")
        lines.append("%s (first %.1f MB)" % (text, nbytes / 1e6))
        lines.append(
            "  %-16s %8s %8s %8s %8s %9s %11s %11s %9s %9s  %s"
            % (
                "system",
                "MB/s",
                "warm MB/s",
                "load s",
                "wall s",
                "tree MB",
                "vs tiktoken",
                "warm vs tk",
                "vs hf",
                "ids",
                "ids == tiktoken",
            )
        )
        for r in group:
            st = status(r)
            if st:
                lines.append("  %-16s %s" % (r["system"], st))
                continue
            same = (
                "-"
                if not tk
                else (
                    "yes"
                    if r["result"]["ids_digest"] == tk["result"]["ids_digest"]
                    and r["result"]["ids"] == tk["result"]["ids"]
                    else "NO"
                )
            )
            warm = r.get("warm_mb_per_s")
            lines.append(
                "  %-16s %8.2f %8s %8.2f %8.2f %9.0f %11s %11s %9s %9d  %s"
                % (
                    r["system"],
                    r["mb_per_s"],
                    "%.2f" % warm if warm else "-",
                    r["result"]["load_seconds"],
                    r["wall"],
                    r["peak_tree_mb"],
                    fmt_ratio(r["mb_per_s"], tk and tk["mb_per_s"]),
                    fmt_ratio(warm, tk and tk.get("warm_mb_per_s")),
                    fmt_ratio(r["mb_per_s"], ref.get("hf", {}).get("mb_per_s")),
                    r["result"]["ids"],
                    same,
                )
            )
    lines.append("  (MB/s: the first encode call, JIT warm-up and empty caches included; warm MB/s: a second")
    lines.append("   call on the next part of the text; ratios: this system / the peer, >1: faster)")
    return "\n".join(lines)


def table_count(results):
    lines = ["PRE-TOKENIZE + COUNT throughput (in-process count_words time, median)"]
    base = next((r for r in results if r["system"] == "regex-cpython" and "result" in r), None)
    base_mbs = base["result"]["mb_per_s"] if base else None
    by = {r["system"]: r for r in results}
    if results:
        lines.append("  input: %s" % results[0]["corpus"])
    lines.append(
        "  %-18s %8s %8s %12s %12s %10s %9s %9s"
        % ("system", "workers", "MB/s", "MB/s/worker", "vs regex", "1->2 w", "tree MB", "words")
    )
    for r in results:
        st = status(r)
        if st:
            lines.append("  %-18s %s" % (r["system"], st))
            continue
        mbs = r["result"]["mb_per_s"]
        speedup = "-"
        if r["system"].endswith("-w2"):
            one = by.get(r["system"][:-1] + "1")
            if one and "result" in one:
                speedup = "%.2fx" % (mbs / one["result"]["mb_per_s"])
        lines.append(
            "  %-18s %8d %8.2f %12.2f %12s %10s %9.0f %9d"
            % (
                r["system"],
                r["workers"],
                mbs,
                mbs / r["workers"],
                fmt_ratio(mbs, base_mbs),
                speedup,
                r["peak_tree_mb"],
                r["result"]["unique_words"],
            )
        )
    return "\n".join(lines)


def table_memory(results):
    lines = [
        "MEMORY vs corpus size (counting; peak = sum of RSS over the process tree, sampled every 50 ms)",
        "  %-16s %-26s %9s %8s %8s %10s %10s"
        % ("system", "input", "MB", "wall s", "MB/s", "tree MB", "proc MB"),
    ]
    for r in results:
        st = status(r)
        if st:
            lines.append("  %-16s %-26s %s" % (r["system"], r["input"], st))
            continue
        lines.append(
            "  %-16s %-26s %9.0f %8.2f %8.2f %10.0f %10.0f"
            % (
                r["system"],
                r["input"],
                r["mb"],
                r["wall"],
                r["result"]["mb_per_s"],
                r["peak_tree_mb"],
                r["max_process_mb"],
            )
        )
    ok = [r for r in results if "peak_tree_mb" in r]
    if len(ok) == 2:
        lines.append(
            "  input x%.1f -> peak tree memory x%.2f"
            % (ok[1]["mb"] / ok[0]["mb"], ok[1]["peak_tree_mb"] / ok[0]["peak_tree_mb"])
        )
    return "\n".join(lines)


def table_availability(avail):
    lines = ["AVAILABILITY (peer modules per interpreter; absent = not installed / not installable there)"]
    for interp, found in avail.items():
        exe = found.get("_interpreter")
        parts = [
            "%s=%s" % (k, v if v else "absent") for k, v in sorted(found.items()) if not k.startswith("_")
        ]
        lines.append(
            "  %-8s %s" % (interp, ("(%s) " % exe if exe else "(interpreter absent) ") + ", ".join(parts))
        )
    return "\n".join(lines)


def table_inprocess(results):
    return "IN-PROCESS train_bpe(corpus.en, 500), median s: " + ", ".join(
        "%s %.3f" % (r["system"], r["result"]["train_seconds"])
        if "result" in r
        else "%s %s" % (r["system"], status(r))
        for r in results
    )


def table_pickle(results):
    return format_table(results)


def quick_banner(inputs, vocabs, repeats):
    """The first block of a --quick run: what it is for and what it is not."""
    return (
        "QUICK RUN (--quick): small inputs (%s), vocab %s, %d repeat(s).\n"
        "It checks that every system runs; its figures are NOT the targets, which are set on\n"
        "%s (run without --quick for them)."
        % (
            ", ".join("%s %.1f MB" % (name, mb) for name, mb in inputs),
            "/".join(str(v) for v in vocabs),
            repeats,
            targets.TARGET_INPUTS["train"],
        )
    )


def table_targets(res, quick=False):
    rows = targets.evaluate(res, quick)
    if quick:
        lines = [
            "TARGETS (from the issue): n/a (quick run) -- its inputs are small and its figures are not",
            "  the targets. Each target is set on the input in brackets; only a target whose own input",
            "  this run measured is judged (met/MISS).",
        ]
    else:
        lines = ["TARGETS (from the issue; ratios measured in this run)"]
    width = max([58] + [len(name) for _, name, _ in rows]) if quick else 58
    for verdict, name, measured in rows:
        lines.append("  [%-4s] %-*s %s" % (verdict, width, name, measured))
    return "\n".join(lines)


def noise(res):
    """The NOISE line if some measurement ran with > 10 % of the machine busy elsewhere, else None."""
    noisy = [
        r
        for sec in ("train", "encode", "count", "memory")
        for r in res.get(sec, [])
        if r.get("foreign_cpu_max", 0) > 0.10
    ]
    if not noisy:
        return None
    return (
        "NOISE: %d measurement(s) ran while other processes used > 10%% of the machine's CPU "
        "(worst %.0f%%); see foreign_cpu in the JSON and re-run on a quiet machine."
        % (len(noisy), 100 * max(r["foreign_cpu_max"] for r in noisy))
    )


def render(res, png=None, quick_inputs=None, vocabs=()):
    """The printed report: every block of the sections that ran, the targets, the noise
    warning, the plot (written to PNG) and a footer.  QUICK_INPUTS [(name, MB)]: a --quick run."""
    quick = quick_inputs is not None
    blocks = [quick_banner(quick_inputs, vocabs, res["repeats"])] if quick else []
    blocks.append(table_availability(res["availability"]))
    if res.get("train"):
        blocks += [table_train(res["train"]), table_phases(res["train"])]
    if res.get("train_inprocess"):
        blocks.append(table_inprocess(res["train_inprocess"]))
    if res.get("encode"):
        blocks.append(table_encode(res["encode"]))
    if res.get("count"):
        blocks.append(table_count(res["count"]))
    if res.get("memory"):
        blocks.append(table_memory(res["memory"]))
    if res.get("pickle") and isinstance(res["pickle"], list):
        blocks.append(table_pickle(res["pickle"]))
    blocks.append(table_targets(res, quick))
    warning = noise(res)
    if warning:
        blocks.append(warning)
    if res.get("train") and png:
        blocks.append(plot(res, png))
    blocks.append(
        "repeats per measurement: %d (medians); %d CPUs; %.0f s in all"
        % (res["repeats"], res["cpus"], res["seconds"])
    )
    return "\n\n".join(blocks)


def plot(res, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib absent: no plot (pip install matplotlib)"
    train = [r for r in res.get("train", []) if "wall" in r]
    vocabs = sorted({r["vocab"] for r in train})
    if not train:
        return "no training results: no plot"
    fig, axes = plt.subplots(1, len(vocabs), figsize=(6 * len(vocabs), 4.5), squeeze=False)
    for ax, vocab in zip(axes[0], vocabs):
        for system in TRAIN_SYSTEMS:
            pts = sorted((r["mb"], r["wall"]) for r in train if r["vocab"] == vocab and r["system"] == system)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=system)
        ax.set_xscale("log")
        ax.set_yscale("log")
        from matplotlib.ticker import FormatStrFormatter, NullFormatter

        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(FormatStrFormatter("%g"))
            axis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("corpus size (MB)")
        ax.set_ylabel("wall time (s, median, whole process)")
        ax.set_title("training, vocab %d" % vocab)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return "plot: %s" % path
