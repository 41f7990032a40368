"""The first ``encode`` call under PyPy against a warm one: what the difference is made of.

    .venv/bin/python perf/encode_first.py                          # cl100k_base, english_medium + russian
    .venv/bin/python perf/encode_first.py --encodings gpt2,o200k_base --texts chinese --repeats 5
    .venv/bin/python perf/encode_first.py --variants default,nursery=4MB,jit=disable_unrolling=100
    .venv/bin/python perf/encode_first.py --trees ../main,.    # two source trees, alternating

Each run is one PyPy process (``--worker``) that loads the encoding (``gpt2``: the CS336 GPT-2
files; else ``Tokenizer.from_tiktoken``) and makes three calls of ``encode_ordinary``, each
measured by ``getrusage`` (user and system CPU seconds, minor page faults) and ``gc.hooks``
(minor collections):

    first   the first ``--mb`` MB of the text: JIT warm-up, empty piece caches, the nursery's
            first touch (PyPy sizes it from the reported cache: 240 MB on some VMs)
    fresh   the same text again with a new Tokenizer of the same encoding: the JIT warm, the
            nursery touched, the caches empty
    warm    the next ``--mb`` MB with the first Tokenizer: everything warm (as
            ``perf/encode_patterns.py``'s warm call)

so ``first - fresh`` is the JIT warm-up and first touch, ``fresh - warm`` the cost of filling
the caches (more misses) plus the text's own difference.  A variant runs every process with
``nursery=SIZE`` (``PYPY_GC_NURSERY``) or ``jit=PARAMS`` (``pypyjit.set_param(PARAMS)`` before
refbpe is imported); ``--trees A,B`` runs each variant on refbpe from each source tree.
Variants and trees alternate (run 1 of each, then run 2, ...), medians of CPU
seconds (user + system) are printed with the load average; the ids of every run must agree.
Every run's figures are saved in ``perf/results/encode-first-*.json``.
"""

import argparse
import os
import statistics
import sys

from harness import (
    INTERPRETERS,
    PEERS,
    ROOT,
    corpus,
    load_tokenizer,
    run_result,
    rusage,
    save_results,
    tree_env,
)

PHASES = ["first", "fresh", "warm"]


# -- the worker (run as its own process, under PyPy) -------------------------------------


def worker(name, path, max_bytes, jit_params):
    import gc

    sys.path.insert(0, PEERS)
    from _common import emit, ids_digest, read_text

    if jit_params:
        import pypyjit

        pypyjit.set_param(jit_params)

    minors = [0]

    def on_minor(stats):
        minors[0] += stats.count

    if hasattr(gc, "hooks"):
        gc.hooks.on_gc_minor = on_minor
    both, _ = read_text(path, 2 * max_bytes)
    raw = both.encode("utf-8")
    cut = len(read_text(path, max_bytes)[0].encode("utf-8"))
    first, second = raw[:cut].decode("utf-8"), raw[cut:].decode("utf-8")
    tok = load_tokenizer(name)
    fields = {}
    for phase in PHASES:
        encoder = load_tokenizer(name) if phase == "fresh" else tok
        text = second if phase == "warm" else first
        m0, r0 = minors[0], rusage()
        ids = encoder.encode_ordinary(text)
        r1 = rusage()
        fields[phase] = {
            "user": r1.ru_utime - r0.ru_utime,
            "sys": r1.ru_stime - r0.ru_stime,
            "faults": r1.ru_minflt - r0.ru_minflt,
            "minors": minors[0] - m0,
            "digest": ids_digest(ids),
        }
    emit(**fields)


# -- the driver ---------------------------------------------------------------------------


def variant_job(tree, variant, name, text, max_bytes):
    """(command, env) of one run of ``variant`` (``default``, ``nursery=SIZE`` or ``jit=PARAMS``)
    on the source tree ``tree``."""
    env = tree_env(tree)
    jit = ""
    if variant.startswith("nursery="):
        env["PYPY_GC_NURSERY"] = variant.split("=", 1)[1]
    elif variant.startswith("jit="):
        jit = variant.split("=", 1)[1]
    elif variant != "default":
        raise SystemExit("unknown variant %r (default, nursery=SIZE, jit=PARAMS)" % variant)
    cmd = [INTERPRETERS["pypy"], __file__, "--worker", name, corpus(text), str(max_bytes), jit]
    return cmd, env


def cpu(run, phase):
    return run[phase]["user"] + run[phase]["sys"]


def median_of(runs, f):
    return statistics.median(f(r) for r in runs)


def print_row(name, text, variant, runs):
    first, fresh, warm = (median_of(runs, lambda r, p=p: cpu(r, p)) for p in PHASES)
    cells = []
    for phase in PHASES:
        cells.append(
            "%6.3f %5.3f %6d %3d"
            % (
                median_of(runs, lambda r, p=phase: cpu(r, p)),
                median_of(runs, lambda r, p=phase: r[p]["sys"]),
                median_of(runs, lambda r, p=phase: r[p]["faults"]),
                median_of(runs, lambda r, p=phase: r[p]["minors"]),
            )
        )
    same = len({r[p]["digest"] for r in runs for p in ("first", "fresh")}) == 1
    print(
        "%-11s %-15s %-28s %s  %6.3f %6.3f  %s"
        % (name, text, variant, "  ".join(cells), first - fresh, fresh - warm, "same" if same else "DIFFER")
    )
    sys.stdout.flush()


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--encodings", default="cl100k_base", help="gpt2, cl100k_base, o200k_base (comma list)")
    p.add_argument("--texts", default="english_medium,russian")
    p.add_argument("--variants", default="default,nursery=4MB", help="default, nursery=SIZE, jit=PARAMS")
    p.add_argument("--mb", type=float, default=8, help="MB per call (default 8)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--trees", default=ROOT, help="source trees (comma list; default this one)")
    args = p.parse_args(argv)
    args.trees = [os.path.abspath(t) for t in args.trees.split(",") if t]
    args.variants = [v for v in args.variants.split(",") if v]
    return args


def main(argv):
    if argv[:1] == ["--worker"]:
        return worker(argv[1], argv[2], int(argv[3]), argv[4])
    args = parse(argv)
    max_bytes = int(args.mb * 1e6)
    print("load average %.2f %.2f %.2f" % os.getloadavg())
    print("each phase: CPU seconds (user + system), system seconds, minor page faults, minor collections")
    print(
        "%-11s %-15s %-28s %-27s%-27s%-27s %6s %6s"
        % ("encoding", "text", "variant", "first", "fresh", "warm", "1st-fr", "fr-warm")
    )
    saved = {"args": vars(args), "load": [os.getloadavg()], "rows": []}
    for name in args.encodings.split(","):
        for text in args.texts.split(","):
            jobs = [(tree, variant) for variant in args.variants for tree in args.trees]
            runs = {job: [] for job in jobs}
            for _ in range(args.repeats):
                for tree, variant in jobs:
                    cmd, env = variant_job(tree, variant, name, text, max_bytes)
                    runs[tree, variant].append(run_result(cmd, env, timeout=600)["result"])
            for tree, variant in jobs:
                label = variant if len(args.trees) == 1 else "%s %s" % (os.path.basename(tree), variant)
                print_row(name, text, label, runs[tree, variant])
                row = {"encoding": name, "text": text, "tree": tree, "variant": variant}
                saved["rows"].append(dict(row, runs=runs[tree, variant]))
    print("load average %.2f %.2f %.2f" % os.getloadavg())
    saved["load"].append(os.getloadavg())
    print("results: %s" % save_results("encode-first", saved))


if __name__ == "__main__":
    main(sys.argv[1:])
