"""Certify's check against the merge engine, in-process: what the check's loop costs.

    .venv-pypy/bin/python perf/experiments/certify_loop.py [--repeats 8] [--vocab 10000]

english_medium is counted once (``refbpe count``) and a model trained once from the counts
(``refbpe train``); then, in rounds, a fresh process each (PyPy's JIT cold, as a command
pays it) times in CPU seconds (``harness.stopwatch``), after reading the counts and the model:

- ``engine``: ``merge.learn_merges`` of the counts (what ``train`` runs);
- ``check``: ``MergeCheck(counts, merges).check_all`` (what ``certify`` runs: one loop
  over local names, as the engine's);
- ``steps``: the same state driven a step at a time from a loop outside it, as ``certify``
  drove it before: the rule's choice popped and pushed back (``MergeCheck.choice``), then
  their merge applied by a method call (``_apply_one`` below).

``--warm`` times instead, in one process, five rounds of ``engine`` and ``check``
alternating (the JIT warm after the first).  Medians and ranges of the rounds are printed.
What it measured is in the CHANGELOG ("Certify, traces and split").  Python 3.9 syntax.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from harness import INTERPRETERS, ROOT, SPECIAL, corpus, run_result, stopwatch, tree_env  # noqa: E402


def _apply_one(st, k):
    """Their k-th merge applied to ``MergeCheck`` ``st``: ``check_all``'s step as a method would do it."""
    from refbpe.learn.step import apply_merge

    a, b = st.merges[k]
    p = st.packed[k]
    z = len(st.token_bytes)
    st.token_bytes.append(a + b)
    slots = st.where.pop(p, None)
    if slots is None or st.counts.get(p, 0) <= 0:
        return
    x, y = p >> st.shift, p & st.mask
    apply_merge(st.sym, st.nxt, st.prv, st.freq, slots, x, y, z, st.step)
    st.step.collect_pushing(st.counts, st.where, x, y, z, st.shift, st.heap, st.floor, st.make_entry)
    del st.counts[p]


def run_one(what, counts, merges, vocab):
    from refbpe.learn.merge import learn_merges
    from refbpe.learn.merge_check import MergeCheck

    if what == "engine":
        learn_merges(counts, vocab - 257)
        return
    st = MergeCheck(counts, merges, "bytes")
    if what == "check":
        st.check_all(1, _refuse)
        return
    for k in range(len(merges)):
        if st.choice() != st.packed[k]:
            _refuse(k)
        _apply_one(st, k)


def _refuse(*failure):
    raise SystemExit("the model was not certified: %r" % (failure,))


def child(what, counts_path, model, vocab, warm):
    from refbpe.corpus.countfile import sum_counts
    from refbpe.formats import read_model

    counts = sum_counts([counts_path])
    merges = [(bytes(a), bytes(b)) for a, b in read_model(model, "auto", [SPECIAL], strict=False).merges]
    times = {}
    for name in ["engine", "check"] * 5 if warm else [what]:
        with stopwatch() as sw:
            run_one(name, counts, merges, vocab)
        times.setdefault(name, []).append(sw.cpu)
    print("RESULT " + json.dumps(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--warm", action="store_true")
    ap.add_argument("--python", default=INTERPRETERS["pypy"])
    ap.add_argument("--child", nargs=3, metavar=("WHAT", "COUNTS", "MODEL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.child[2], args.vocab, args.warm)
        return
    env = tree_env(ROOT)
    refbpe = [args.python, "-m", "refbpe"]
    with tempfile.TemporaryDirectory() as tmp:
        counts, model = os.path.join(tmp, "c.counts.tsv"), os.path.join(tmp, "model")
        count = ["count", corpus("english_medium"), "--special-token", SPECIAL, "-o", counts, "--quiet"]
        run_result(refbpe + count, env, cwd=ROOT)
        train = ["train", "--counts", counts, "--vocab-size", str(args.vocab), "--special-token", SPECIAL]
        run_result(refbpe + train + ["-o", model, "--quiet"], env, cwd=ROOT)
        me = [args.python, os.path.abspath(__file__), "--vocab", str(args.vocab)]
        times = {}
        for _ in range(1 if args.warm else args.repeats):
            for what in ["engine"] if args.warm else ["engine", "check", "steps"]:
                cmd = me + (["--warm"] if args.warm else []) + ["--child", what, counts, model]
                out = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, check=True).stdout
                line = [x for x in out.decode().splitlines() if x.startswith("RESULT ")][-1]
                for name, xs in json.loads(line[len("RESULT ") :]).items():
                    times.setdefault(name, []).extend(xs)
    print(
        "%s, english_medium, vocab %d, CPU seconds%s"
        % (os.path.basename(args.python), args.vocab, " in one process" if args.warm else ", a process each")
    )
    base = statistics.median(times["engine"])
    for name, xs in times.items():
        print(
            "  %-7s median %.3f  range %.3f-%.3f  x engine %.3f  (%s)"
            % (
                name,
                statistics.median(xs),
                min(xs),
                max(xs),
                statistics.median(xs) / base,
                " ".join("%.3f" % x for x in xs),
            )
        )


if __name__ == "__main__":
    main()
