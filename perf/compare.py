"""Before/after: the same measurement on two source trees, in the same run, round-robin.

    .venv/bin/python perf/compare.py --before main train --corpora english_small,english_medium
    .venv/bin/python perf/compare.py --before /tmp/before --after . encode --corpora chinese
    .venv/bin/python perf/compare.py --before HEAD~3 encode-inline --corpora chinese,english_medium
    .venv/bin/python perf/compare.py --before main merge --long
    .venv/bin/python perf/compare.py --before main run -- python -m refbpe count CORPUS -o /dev/null

``--before`` is a directory holding a source tree, or a git revision of this repository
(``git archive REV``, unpacked into a temporary directory, removed afterwards); ``--after``
defaults to this tree.  Every child imports refbpe from its tree: ``PYTHONPATH`` names it, and
the child runs in a scratch directory (``python -m`` and ``-c`` put the working directory
first on ``sys.path``, so a child started in this tree would import this tree's refbpe
whatever ``PYTHONPATH`` says); ``run`` runs its command in each tree's directory.  Runs go
round-robin over the trees (before, after, before, ...) so that load from elsewhere hits both
alike; ``--interpreter`` (default pypy) runs the children.  Each mode prints both trees' medians
(fastest, for ``encode-inline`` and ``merge``) and the ratio after / before, and checks that
both trees give the same output:

- ``train``: ``python -m refbpe train`` per corpus (``--vocab``, ``--workers``): wall and CPU
  seconds (the process tree's), the count and merge phases of its ``--report``, peak MB of the
  process tree; merges compared.
- ``encode``: ``perf/peers/encode_refbpe.py`` per tree, one process per run: a cold call on the
  first 8 MB of each corpus and a warm one on the next 8 MB (GPT-2 vocab); ids compared.
- ``encode-inline``: both trees' ``refbpe.encode.tokenizer`` in one process (each imported afresh);
  each round a new ``Tokenizer`` (GPT-2 vocab, empty caches) of each tree encodes the first
  8 MB, alternating: less noisy than separate processes on a busy machine.
- ``merge``: the merge phase alone (``perf/merge_engine.py``'s inputs and child: word tables of
  shared corpora, ``--long`` generated long words), a fresh process per (input, tree) for its
  own ``ru_maxrss``.
- ``run -- CMD...``: any command, run in each tree's directory (give data paths absolute):
  wall seconds, peak MB of the process tree; stdout compared.
"""

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile

import merge_engine
from harness import (
    CORPUS_FILES,
    GPT2_FILES,
    INTERPRETERS,
    PEERS,
    ROOT,
    SPECIAL,
    read_text,
    run_result,
    stopwatch,
    tree_env,
)

TREES = ("before", "after")


def source_tree(spec, work):
    """A directory holding the tree ``spec``: the directory itself, or ``git archive`` of a revision."""
    if os.path.isdir(spec):
        return os.path.abspath(spec)
    dest = tempfile.mkdtemp(prefix="tree-", dir=work)
    archive = subprocess.run(["git", "-C", ROOT, "archive", "--format=tar", spec], stdout=subprocess.PIPE)
    if archive.returncode:
        raise SystemExit("perf/compare.py: %s is neither a directory nor a git revision" % spec)
    with tempfile.TemporaryFile() as f:
        f.write(archive.stdout)
        f.seek(0)
        with tarfile.open(fileobj=f) as tar:
            tar.extractall(dest)
    return dest


def round_robin(args, trees, run_one):
    """``{tree: [run_one(name, tree) per repeat]}``, the trees alternating within each repeat."""
    runs = {name: [] for name in trees}
    for _ in range(args.repeats):
        for name, tree in trees.items():
            runs[name].append(run_one(name, tree))
    return runs


def medians(runs, width):
    return {k: [statistics.median(v[i] for v in rs) for i in range(width)] for k, rs in runs.items()}


def ratios(before, after):
    return tuple(a / b if b else float("nan") for a, b in zip(after, before))


# -- train ---------------------------------------------------------------------------------


def mode_train(args, trees, work):
    python = INTERPRETERS[args.interpreter]
    lines = [
        "TRAIN %s, vocab %d, %d workers, %d repeats (medians; after/before)"
        % (args.interpreter, args.vocab, args.workers, args.repeats),
        "  %-16s %-7s %8s %8s %8s %8s %8s %s"
        % ("corpus", "tree", "wall s", "cpu s", "count s", "merge s", "peak MB", "merges"),
    ]
    for corpus in filter(None, args.corpora.split(",")):
        merges = {}

        def one(name, tree, corpus=corpus, merges=merges):
            out, report = os.path.join(work, name), os.path.join(work, name + ".json")
            shutil.rmtree(out, ignore_errors=True)
            cmd = [python, "-m", "refbpe", "train", CORPUS_FILES[corpus], "--vocab-size", str(args.vocab)]
            cmd += ["--special-token", SPECIAL, "--out", out, "--workers", str(args.workers)]
            r = run_result(cmd + ["--report", report, "--quiet"], tree_env(tree), cwd=work)
            rep = _json(report)
            with open(os.path.join(out, "merges.txt"), "rb") as f:
                merges[name] = f.read()
            sys.stderr.write("  %s %s %.2fs\n" % (corpus, name, r["wall"]))
            phases = rep["count"]["seconds"], rep["merge"]["seconds"]
            return (r["wall"], r["cpu_seconds"]) + phases + (r["peak_tree_mb"],)

        med = medians(round_robin(args, trees, one), 5)
        same = "identical" if merges["before"] == merges["after"] else "DIFFER"
        for name in TREES:
            lines.append(
                "  %-16s %-7s %8.2f %8.2f %8.2f %8.2f %8.0f %s"
                % ((corpus, name) + tuple(med[name]) + (same,))
            )
        lines.append(
            "  %-16s %-7s %7.2fx %7.2fx %7.2fx %7.2fx %7.2fx"
            % ((corpus, "ratio") + ratios(med["before"], med["after"]))
        )
    return lines


def _json(path):
    with open(path) as f:
        return json.load(f)


# -- encode (a process per run) ------------------------------------------------------------


def mode_encode(args, trees, work):
    python = INTERPRETERS[args.interpreter]
    lines = [
        "ENCODE %s, GPT-2 vocab, %d MB (medians of %d; after/before)"
        % (args.interpreter, args.mb, args.repeats),
        "  %-16s %-7s %9s %9s %s" % ("corpus", "tree", "cold s", "warm s", "ids"),
    ]
    for corpus in filter(None, args.corpora.split(",")):
        digests = {}

        def one(name, tree, corpus=corpus, digests=digests):
            cmd = [python, os.path.join(PEERS, "encode_refbpe.py"), CORPUS_FILES[corpus]] + GPT2_FILES
            cmd += ["--max-bytes", str(args.mb << 20)]
            result = run_result(cmd, tree_env(tree), cwd=work)["result"]
            digests[name] = result["ids_digest"]
            return result["encode_seconds"], result.get("warm_seconds", float("nan"))

        med = medians(round_robin(args, trees, one), 2)
        same = "identical" if digests["before"] == digests["after"] else "DIFFER"
        for name in TREES:
            lines.append("  %-16s %-7s %9.2f %9.2f %s" % (corpus, name, med[name][0], med[name][1], same))
        lines.append("  %-16s %-7s %8.2fx %8.2fx" % ((corpus, "ratio") + ratios(med["before"], med["after"])))
    return lines


# -- encode-inline (both trees in one process) ---------------------------------------------


def load_tokenizer_module(tree):
    """``refbpe.encode.tokenizer`` of ``tree``, imported afresh (every refbpe module forgotten first)."""
    for name in [m for m in sys.modules if m == "refbpe" or m.startswith("refbpe.")]:
        del sys.modules[name]
    sys.path.insert(0, tree)
    try:
        return importlib.import_module("refbpe.encode.tokenizer")
    finally:
        sys.path.pop(0)


def encode_inline_child(before, after, corpora, rounds, mb):
    modules = {"before": load_tokenizer_module(before), "after": load_tokenizer_module(after)}
    print("ENCODE in one process (%s), %d MB, GPT-2 vocab, fresh tokenizer per round" % (sys.executable, mb))
    for corpus in corpora.split(","):
        text = read_text(CORPUS_FILES[corpus], 0, mb << 20)
        times, ids = {k: [] for k in modules}, {}
        for _ in range(rounds):
            for name, module in modules.items():
                tok = module.Tokenizer.from_files(GPT2_FILES[0], GPT2_FILES[1], [SPECIAL])
                with stopwatch() as sw:
                    ids[name] = tok.encode(text)
                times[name].append(sw.wall)
        same = "identical" if ids["before"] == ids["after"] else "DIFFER"
        for name in modules:
            print("  %-16s %-7s %s" % (corpus, name, " ".join("%.2f" % t for t in times[name])))
        print(
            "  %-16s after/before (fastest) %.3f, ids %s"
            % (corpus, min(times["after"]) / min(times["before"]), same)
        )
    sys.stdout.flush()


def mode_encode_inline(args, trees, work):
    cmd = [INTERPRETERS[args.interpreter], os.path.abspath(__file__), "--encode-inline-child"]
    cmd += [trees["before"], trees["after"], args.corpora, str(args.repeats), str(args.mb)]
    subprocess.run(cmd, check=True, env=tree_env(), cwd=work)
    return []


# -- merge ---------------------------------------------------------------------------------


def mode_merge(args, trees, work):
    inputs = merge_engine.inputs(args.corpora, args.vocab, args.long, work)
    engines = [(name, trees[name]) for name in TREES]
    python = INTERPRETERS[args.interpreter]
    return merge_engine.race(engines, inputs, args.repeats, args.timeout, python, cwd=work)


# -- run: any command ----------------------------------------------------------------------


def mode_run(args, trees, work):
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if cmd and cmd[0] == "python":
        cmd = [INTERPRETERS[args.interpreter]] + cmd[1:]
    outputs = {}

    def one(name, tree):
        r = run_result(cmd, tree_env(tree), cwd=tree)
        outputs[name] = r["stdout"]
        return r["wall"], r["peak_tree_mb"]

    med = medians(round_robin(args, trees, one), 2)
    same = "identical" if outputs["before"] == outputs["after"] else "DIFFER"
    lines = [
        "RUN %s (medians of %d; after/before)" % (" ".join(cmd), args.repeats),
        "  %-7s %8s %8s %s" % ("tree", "wall s", "peak MB", "stdout"),
    ]
    for name in TREES:
        lines.append("  %-7s %8.2f %8.0f %s" % (name, med[name][0], med[name][1], same))
    return lines + ["  %-7s %7.2fx %7.2fx" % (("ratio",) + ratios(med["before"], med["after"]))]


MODES = {
    "train": mode_train,
    "encode": mode_encode,
    "encode-inline": mode_encode_inline,
    "merge": mode_merge,
    "run": mode_run,
}


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="a source tree (directory) or a git revision")
    ap.add_argument("--after", default=ROOT, help="a source tree or a git revision (default: this tree)")
    ap.add_argument("--interpreter", choices=sorted(INTERPRETERS), default="pypy")
    ap.add_argument("--repeats", type=int, help="runs per tree (default 3; encode-inline: rounds, default 5)")
    modes = ap.add_subparsers(dest="mode", required=True)
    train = modes.add_parser("train", help="refbpe train on shared corpora")
    train.add_argument("--corpora", default="english_small")
    train.add_argument("--vocab", type=int, default=10000)
    train.add_argument("--workers", type=int, default=2)
    for name in ("encode", "encode-inline"):
        encode = modes.add_parser(
            name, help="GPT-2 encoding, %s" % ("a process per run", "in one process")[name == "encode-inline"]
        )
        encode.add_argument("--corpora", default="chinese,english_medium")
        encode.add_argument("--mb", type=int, default=8, help="MiB per call (default 8)")
    merge = modes.add_parser("merge", help="the merge phase alone")
    merge.add_argument("--corpora", default="english_small,english_medium")
    merge.add_argument("--vocab", type=int, default=10000)
    merge.add_argument("--long", action="store_true", help="also the generated long words")
    merge.add_argument("--timeout", type=int, default=120, help="seconds per run")
    run = modes.add_parser("run", help="any command: run -- CMD... ('python' is --interpreter)")
    run.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    args.repeats = args.repeats or (5 if args.mode == "encode-inline" else 3)
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--encode-inline-child"]:
        return encode_inline_child(argv[1], argv[2], argv[3], int(argv[4]), int(argv[5]))
    args = parse(argv)
    work = tempfile.mkdtemp(prefix="refbpe-compare-")
    try:
        trees = {"before": source_tree(args.before, work), "after": source_tree(args.after, work)}
        lines = MODES[args.mode](args, trees, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
