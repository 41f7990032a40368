"""The merge phase alone, in-process: seconds and peak memory of ``refbpe.learn.merge.learn_merges``.

    .venv-pypy/bin/python perf/merge_engine.py                     # this tree
    .venv-pypy/bin/python perf/merge_engine.py --long --repeats 1  # and the generated long words
    .venv/bin/python perf/compare.py --before main merge --long    # another tree against this one

Inputs: the word tables of shared corpora (``--corpora``, counted once with
``count_words``, 2 workers) at ``--vocab`` (10,000), and generated long words
(``--long``: one word of 20 million ``a``, one of 5 million random letters over 4
symbols) at vocab 1,000.  Every (input, tree) pair runs in a fresh process (``ru_maxrss``
is a per-process peak) importing refbpe from its tree, round-robin over the trees,
``--repeats`` times; printed: the fastest wall and CPU times (CPU: steadier on a busy
machine), the peak RSS and, for two trees (``race``, as ``perf/compare.py merge`` calls it),
after / before.  The merges of the trees are compared (they must be identical).
"""

import argparse
import os
import pickle
import shutil
import subprocess
import sys
import tempfile

from harness import ROOT, SPECIAL, corpus, tree_env

from refbpe.corpus.count import count_words

CHILD = r"""
import hashlib, pickle, random, resource, sys, time
from refbpe.learn.merge import learn_merges
source, vocab = sys.argv[1], int(sys.argv[2])
if source == "long-a":
    counts = {b"a" * 20000000: 1}
elif source == "long-rand4":
    rng = random.Random(12)
    counts = {rng.randbytes(5000000).translate(bytes(b"abcd"[i % 4] for i in range(256))): 1}
else:
    with open(source, "rb") as f:
        counts = pickle.load(f)
t0, c0 = time.perf_counter(), time.process_time()
merges = learn_merges(counts, vocab - 257)
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
digest = hashlib.sha256(repr(merges).encode()).hexdigest()[:12]
print(seconds, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, digest)
"""


def inputs(corpora, vocab, long_words, work):
    """[(name, source, vocab)]: the corpora's word tables pickled into ``work``, the long words."""
    found = []
    for name in filter(None, corpora.split(",")):
        path = os.path.join(work, name + ".pkl")
        with open(path, "wb") as f:
            pickle.dump(count_words([corpus(name)], [SPECIAL], workers=2), f)
        found.append((name, path, vocab))
    if long_words:
        found += [("20M x a", "long-a", 1000), ("5M rand4", "long-rand4", 1000)]
    return found


def race(engines, inputs, repeats, timeout, python, cwd=None):
    """Lines of the table: every input on every engine ``(label, tree)``, round-robin, the children
    started in ``cwd`` (not in another tree: ``-c`` puts the working directory first on ``sys.path``)."""
    lines = [
        "MERGE PHASE (%s; fastest of %d, CPU seconds: fastest, peak RSS of the process)" % (python, repeats),
        "  %-16s %6s %-7s %9s %9s %9s %s"
        % ("input", "vocab", "engine", "seconds", "cpu s", "peak MB", "merges"),
    ]
    for name, source, vocab in inputs:
        best = {}
        for _ in range(repeats):
            for label, tree in engines:
                if best.get(label, (0,))[0] is None:
                    continue  # timed out before
                try:
                    out = subprocess.check_output(
                        [python, "-c", CHILD, source, str(vocab)],
                        timeout=timeout,
                        env=tree_env(tree),
                        cwd=cwd,
                    )
                except subprocess.TimeoutExpired:
                    best[label] = (None, None, None, "timeout > %d s" % timeout)
                    continue
                seconds, cpu, peak, digest = out.decode().split()
                old = best.get(label)
                fastest = (
                    (min(float(seconds), old[0]), min(float(cpu), old[1]))
                    if old
                    else (float(seconds), float(cpu))
                )
                best[label] = fastest + (float(peak), digest)
        for label, _ in engines:
            s, cpu, peak, digest = best[label]
            if s is None:
                lines.append("  %-16s %6d %-7s %9s %9s %9s %s" % (name, vocab, label, "-", "-", "-", digest))
            else:
                lines.append(
                    "  %-16s %6d %-7s %9.2f %9.2f %9.0f %s" % (name, vocab, label, s, cpu, peak, digest)
                )
        timings = [best[label] for label, _ in engines]
        if len(engines) == 2 and all(t[0] is not None for t in timings):
            (b, a), same = timings, "identical" if timings[0][3] == timings[1][3] else "DIFFER"
            lines.append(
                "  %-16s %6s %-7s %8.2fx %8.2fx %8.2fx %s"
                % (name, "", "after/before", a[0] / b[0], a[1] / b[1], a[2] / b[2], same)
            )
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="english_small,english_medium")
    ap.add_argument("--vocab", type=int, default=10000)
    ap.add_argument("--long", action="store_true", help="also the generated long words")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run")
    args = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="refbpe-merge-")
    try:
        found = inputs(args.corpora, args.vocab, args.long, work)
        lines = race([("this", ROOT)], found, args.repeats, args.timeout, sys.executable)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
