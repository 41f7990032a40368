"""refbpe benchmark suite: every system in its own process, side by side.

    .venv/bin/python perf/run.py --quick       # english_small (+ corpus.en), vocab 1K/10K, 1 repeat
    .venv/bin/python perf/run.py               # full: all corpora, vocab 1K/10K/32K, 3 repeats (hours)
    .venv/bin/python perf/run.py --only train,encode,count --corpora english_medium --vocab 10000

See perf/README.md.  The driver runs under CPython (the .venv); refbpe runs
under both interpreters, peers where they are installed (probed, and reported
as absent where not).  Wall time is whole-process; peak memory is the sum of
the RSS of the whole process tree, sampled from /proc every 50 ms, plus the
largest single-process peak from ``wait4`` rusage.

The driver only sequences the phases below; the work is in ``perf/harness.py``
(where the data and interpreters are; one process measured from outside; round-robin
repeats, medians) and in ``perf/suite/``: ``systems`` (the systems, one command per
system), ``sections`` (the jobs of each table), ``targets`` (the issue's targets as
data, and their verdict) and ``report`` (tables, targets block, plot).
"""

import argparse
import json
import os
import signal
import sys
import time

from harness import CORPUS_FILES, RESULTS, Runner, stopwatch
from suite import report
from suite.sections import (
    section_count,
    section_encode,
    section_memory,
    section_pickle,
    section_train,
    section_train_inprocess,
)
from suite.systems import (
    COUNT_SYSTEMS,
    ENCODE_SYSTEMS,
    FULL_CORPORA,
    FULL_TEXTS,
    TRAIN_SYSTEMS,
    probe,
)


def parse(argv):
    p = argparse.ArgumentParser(description="refbpe benchmark suite (see perf/README.md)")
    p.add_argument("--quick", action="store_true", help="english_small (+ corpus.en), vocab 1K/10K, 1 repeat")
    p.add_argument(
        "--only",
        default="train,encode,count,memory,pickle",
        help="comma list of sections: train,encode,count,memory,pickle (default all)",
    )
    p.add_argument("--corpora", help="training corpora (comma list of %s)" % ",".join(FULL_CORPORA))
    p.add_argument("--vocab", help="vocab sizes, comma list (default 1000,10000,32000; quick 1000,10000)")
    p.add_argument("--systems", help="training systems (default all: %s)" % ",".join(TRAIN_SYSTEMS))
    p.add_argument(
        "--encode-texts",
        help="texts to encode (default: quick english_small; full %s)" % ",".join(FULL_TEXTS),
    )
    p.add_argument("--encode-systems", help="default %s" % ",".join(ENCODE_SYSTEMS))
    p.add_argument(
        "--encode-max-mb", type=float, default=8.0, help="encode the first N MB of each text (default 8)"
    )
    p.add_argument(
        "--count-corpus",
        help="input of the counting table (default: quick english_small, full english_medium)",
    )
    p.add_argument("--count-systems", help="default %s" % ",".join(COUNT_SYSTEMS))
    p.add_argument(
        "--memory-corpus",
        help="memory table input, repeated --memory-copies times "
        "(default: quick english_small, full english_medium)",
    )
    p.add_argument("--memory-copies", type=int, default=10)
    p.add_argument("--memory-system", default="refbpe-pypy-w2")
    p.add_argument(
        "--repeats", type=int, help="runs per measurement, median reported (default: quick 1, full 3)"
    )
    p.add_argument(
        "--timeout", type=float, default=3600, help="seconds per run before it is killed (default 3600)"
    )
    p.add_argument("--out", default=RESULTS, help="results directory (default perf/results)")
    a = p.parse_args(argv)
    quick = a.quick
    a.sections = [s.strip() for s in a.only.split(",") if s.strip()]
    a.corpora = (
        a.corpora.split(",") if a.corpora else (["corpus.en", "english_small"] if quick else FULL_CORPORA)
    )
    a.vocabs = (
        [int(v) for v in a.vocab.split(",")]
        if a.vocab
        else ([1000, 10000] if quick else [1000, 10000, 32000])
    )
    a.systems = a.systems.split(",") if a.systems else TRAIN_SYSTEMS
    a.texts = a.encode_texts.split(",") if a.encode_texts else (["english_small"] if quick else FULL_TEXTS)
    a.encode_systems = a.encode_systems.split(",") if a.encode_systems else ENCODE_SYSTEMS
    a.count_corpus = a.count_corpus or ("english_small" if quick else "english_medium")
    a.count_systems = a.count_systems.split(",") if a.count_systems else COUNT_SYSTEMS
    a.memory_corpus = a.memory_corpus or ("english_small" if quick else "english_medium")
    a.repeats = a.repeats or (1 if quick else 3)
    for c in a.corpora + a.texts + [a.count_corpus, a.memory_corpus]:
        if c not in CORPUS_FILES:
            p.error("unknown corpus %r (known: %s)" % (c, ", ".join(CORPUS_FILES)))
        if not os.path.exists(CORPUS_FILES[c]):
            p.error("%s: missing (set REFBPE_DATA to the shared data directory)" % CORPUS_FILES[c])
    return a


def quick_inputs(args):
    """[(name, MB)] of every input of the run, in order of first use."""
    names = []
    for c in args.corpora + args.texts + [args.count_corpus, args.memory_corpus]:
        if c not in names:
            names.append(c)
    return [(c, os.path.getsize(CORPUS_FILES[c]) / 1e6) for c in names]


def run_sections(args, runner):
    """The measurements of every section asked for, as the results' rows."""
    res = {}
    if "train" in args.sections:
        res["train"] = section_train(runner, args.corpora, args.vocabs, args.systems)
        res["train_inprocess"] = section_train_inprocess(runner)
    if "encode" in args.sections:
        res["encode"] = section_encode(runner, args.texts, args.encode_systems, int(args.encode_max_mb * 1e6))
    if "count" in args.sections:
        res["count"] = section_count(runner, args.count_corpus, args.count_systems)
    if "memory" in args.sections:
        res["memory"] = section_memory(runner, args.memory_corpus, args.memory_copies, args.memory_system)
    if "pickle" in args.sections:
        res["pickle"] = section_pickle()
    return res


def save(out_dir, stamp, res, text):
    """results-STAMP.{json,txt} and latest.{json,txt} in OUT_DIR."""
    for name in ("results-%s.json" % stamp, "latest.json"):
        with open(os.path.join(out_dir, name), "w") as f:
            json.dump(res, f, indent=1, default=str)
    for name in ("results-%s.txt" % stamp, "latest.txt"):
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(text + "\n")
    return os.path.join(out_dir, "results-%s.{json,txt}" % stamp)


def main(argv=None):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so temp dirs are removed
    # 1. the arguments, and what a --quick run is not
    args = parse(argv if argv is not None else sys.argv[1:])
    os.makedirs(args.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    quick = quick_inputs(args) if args.quick else None
    if quick:
        sys.stderr.write("quick run: small inputs; its figures are not the targets\n")
    # 2. which interpreters and peers are installed
    avail = probe()
    res = {
        "started": stamp,
        "argv": sys.argv[1:],
        "repeats": args.repeats,
        "cpus": os.cpu_count(),
        "availability": avail,
    }
    # 3. the measurements, section by section
    runner = Runner(args.repeats, args.timeout, avail)
    clock = stopwatch()
    try:
        res.update(run_sections(args, runner))
    finally:
        runner.cleanup()
    res["seconds"] = clock.elapsed()
    # 4. the report: tables, targets, noise, plot
    png = os.path.join(args.out, "train-%s.png" % stamp)
    text = report.render(res, png=png, quick_inputs=quick, vocabs=args.vocabs)
    print(text)
    # 5. the results, saved
    print("results: %s" % save(args.out, stamp, res, text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
