"""``Encoding.encode_batch(docs, num_threads=K)`` against tiktoken's, in the same run.

    .venv/bin/python perf/encode_batch.py [--encoding cl100k_base] [--corpus english_medium]
        [--threads 2] [--repeat 3] [--mb 0] [--small]

The documents are the corpus split at ``<|endoftext|>`` (english_medium: 600
documents, 75 MB), the first ``--mb`` MB of them when given.  refbpe runs
under PyPy (``refbpe.get_encoding(NAME).encode_batch``, forked worker
processes) and tiktoken under CPython (its threads), each in its own child
process: the encoding is loaded, the first document encoded once to warm
up, then the whole batch timed (wall clock; CPU seconds of the child and its
workers beside it).  Runs alternate; medians of ``--repeat``; the ids'
digests must agree.  The ratio is tiktoken seconds / refbpe seconds (above
1: refbpe is faster).

``--small``: refbpe only, on 1 MB of documents: ``num_threads=1`` (in this
process) against ``num_threads=K`` with the process threshold lowered to 0,
the figure behind ``batch._PROCESSES_FROM``.
"""

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys

from harness import INTERPRETERS, SPECIAL, TIKTOKEN_CACHE, stopwatch
from harness import corpus as corpus_path

PYPY, CPYTHON = INTERPRETERS["pypy"], INTERPRETERS["cpython"]


def documents(corpus, mb):
    with open(corpus_path(corpus), encoding="utf-8") as f:
        docs = f.read().split(SPECIAL)
    if mb:
        kept, size = [], 0
        for d in docs:
            if size >= mb * 1e6:
                break
            kept.append(d)
            size += len(d)
        docs = kept
    return docs


def child(system, name, corpus, threads, mb, small_threshold):
    """One timed batch; prints JSON."""
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", TIKTOKEN_CACHE)
    docs = documents(corpus, mb)
    if system == "tiktoken":
        import tiktoken

        enc = tiktoken.get_encoding(name)
    else:
        import refbpe
        from refbpe.encode import batch

        enc = refbpe.get_encoding(name)
        if small_threshold:
            batch._PROCESSES_FROM = 0
    enc.encode_ordinary(docs[0])
    with stopwatch(children=True) as sw:
        ids = enc.encode_batch(docs, num_threads=threads, disallowed_special=())
    seconds, cpu = sw.wall, sw.cpu
    digest = hashlib.sha256(json.dumps(ids).encode()).hexdigest()[:16]
    print(json.dumps({"seconds": seconds, "cpu": cpu, "tokens": sum(map(len, ids)), "digest": digest}))


def _run(python, *args):
    out = subprocess.run([python, __file__, "child"] + [str(a) for a in args], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--encoding", default="cl100k_base")
    p.add_argument("--corpus", default="english_medium")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--mb", type=float, default=0)
    p.add_argument("--small", action="store_true")
    a = p.parse_args(argv)
    if a.small:
        runs = {
            "refbpe num_threads=1": (PYPY, 1, 0),
            "refbpe num_threads=%d" % a.threads: (PYPY, a.threads, 1),
        }
        mb = a.mb or 1
    else:
        runs = {"refbpe (PyPy)": (PYPY, a.threads, 0), "tiktoken (CPython)": (CPYTHON, a.threads, 0)}
        mb = a.mb
    results = {k: [] for k in runs}
    for _ in range(a.repeat):
        for label, (python, threads, low) in runs.items():
            system = "tiktoken" if "tiktoken" in label else "refbpe"
            results[label].append(_run(python, system, a.encoding, a.corpus, threads, mb, low))
    digests = {r["digest"] for rs in results.values() for r in rs}
    print(
        "%s, %s%s, num_threads=%d, %d runs each"
        % (a.encoding, a.corpus, " (%g MB)" % mb if mb else "", a.threads, a.repeat)
    )
    medians = {}
    for label, rs in results.items():
        medians[label] = statistics.median(r["seconds"] for r in rs)
        cpu = statistics.median(r["cpu"] for r in rs)
        print("  %-24s %7.2f s wall (%.2f CPU s), %d tokens" % (label, medians[label], cpu, rs[0]["tokens"]))
    first, second = list(medians)
    print(
        "  ratio %s / %s: %.2f; ids %s"
        % (second, first, medians[second] / medians[first], "identical" if len(digests) == 1 else "DIFFER")
    )
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        s, n, c, t, mb, low = sys.argv[2:8]
        child(s, n, c, int(t), float(mb), int(low))
    else:
        sys.exit(main(sys.argv[1:]))
