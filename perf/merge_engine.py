"""The merge phase alone, in-process: seconds and peak memory, optionally against another tree.

    .venv-pypy/bin/python perf/merge_engine.py                        # this tree
    .venv-pypy/bin/python perf/merge_engine.py --against /tmp/before  # and another tree's merge.py

Inputs: the word tables of shared corpora (``--corpora``, counted once with
``count_words``, 2 workers) at ``--vocab`` (10,000), and generated long words
(``--long``: one word of 20 million ``a``, one of 5 million random letters over 4
symbols) at vocab 1,000.  Every (input, engine) pair runs in a fresh process
(``ru_maxrss`` is a per-process peak), round-robin over the engines, ``--repeats``
times; printed: the fastest time, the peak RSS, and other / this.  The merges of the
engines are compared (they must be identical).
"""

import argparse
import os
import pickle
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPORA = os.path.join(ROOT, "..", "shared", "data", "corpora")

CHILD = r"""
import hashlib, importlib.util, pickle, random, resource, sys, time
spec = importlib.util.spec_from_file_location("engine", sys.argv[1])
engine = importlib.util.module_from_spec(spec)
spec.loader.exec_module(engine)
source, vocab = sys.argv[2], int(sys.argv[3])
if source == "long-a":
    counts = {b"a" * 20000000: 1}
elif source == "long-rand4":
    rng = random.Random(12)
    counts = {rng.randbytes(5000000).translate(bytes(b"abcd"[i % 4] for i in range(256))): 1}
else:
    with open(source, "rb") as f:
        counts = pickle.load(f)
t0 = time.perf_counter()
merges = engine.learn_merges(counts, vocab - 257)
seconds = time.perf_counter() - t0
digest = hashlib.sha256(repr(merges).encode()).hexdigest()[:12]
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, digest)
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", help="another source tree: its refbpe/merge.py is timed too")
    ap.add_argument("--corpora", default="english_small,english_medium")
    ap.add_argument("--vocab", type=int, default=10000)
    ap.add_argument("--long", action="store_true", help="also the generated long words")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run (the old engine on long words)")
    args = ap.parse_args(argv)
    sys.path.insert(0, ROOT)
    from refbpe.corpus.count import count_words

    engines = [("this", os.path.join(ROOT, "refbpe", "merge.py"))]
    if args.against:
        engines.append(("other", os.path.join(os.path.abspath(args.against), "refbpe", "merge.py")))
    work = tempfile.mkdtemp(prefix="refbpe-merge-")
    inputs = []
    for name in filter(None, args.corpora.split(",")):
        path = os.path.join(work, name + ".pkl")
        with open(path, "wb") as f:
            pickle.dump(count_words([os.path.join(CORPORA, name + ".txt")], ["<|endoftext|>"], workers=2), f)
        inputs.append((name, path, args.vocab))
    if args.long:
        inputs += [("20M x a", "long-a", 1000), ("5M rand4", "long-rand4", 1000)]
    print("MERGE PHASE (%s; fastest of %d, peak RSS of the process)" % (sys.executable, args.repeats))
    print("  %-16s %6s %-7s %9s %9s %s" % ("input", "vocab", "engine", "seconds", "peak MB", "merges"))
    for name, source, vocab in inputs:
        best = {}
        for _ in range(args.repeats):
            for label, engine in engines:
                if best.get(label, (0,))[0] is None:
                    continue  # timed out before
                try:
                    out = subprocess.check_output(
                        [sys.executable, "-c", CHILD, engine, source, str(vocab)], timeout=args.timeout
                    )
                except subprocess.TimeoutExpired:
                    best[label] = (None, None, "timeout > %d s" % args.timeout)
                    continue
                seconds, peak, digest = out.decode().split()
                old = best.get(label)
                best[label] = (min(float(seconds), old[0]) if old else float(seconds), float(peak), digest)
        digests = {v[2] for v in best.values() if v[0] is not None}
        for label, _ in engines:
            s, peak, digest = best[label]
            if s is None:
                print("  %-16s %6d %-7s %9s %9s %s" % (name, vocab, label, "-", "-", digest))
            else:
                print("  %-16s %6d %-7s %9.2f %9.0f %s" % (name, vocab, label, s, peak, digest))
        if len(engines) == 2 and best["other"][0] is not None:
            a, b = best["this"], best["other"]
            same = "identical" if len(digests) == 1 else "DIFFER"
            print(
                "  %-16s %6s %-7s %8.2fx %8.2fx %s" % (name, "", "other/this", b[0] / a[0], b[1] / a[1], same)
            )
    for _, path, _ in inputs:
        if os.path.exists(path):
            os.unlink(path)
    os.rmdir(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
