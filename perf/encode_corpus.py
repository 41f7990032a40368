"""Encoding at corpus scale, against tiktoken in the same run (GPT-2 vocab).

    .venv/bin/python perf/encode_corpus.py single [--corpora english_medium,russian] [--repeat 3]
    .venv/bin/python perf/encode_corpus.py whole [--corpora english_medium] [--workers 1,2] [--times10]
        [--chunk-size 512K]

``single``: one thread, warm.  refbpe under PyPy (``Tokenizer.encode`` with no
special tokens, i.e. ``encode_ordinary``) and tiktoken's ``encode_ordinary``
under CPython, each in its own process: 100 KB to warm up, then the next
8 MB timed; the ratio is tiktoken seconds / refbpe seconds (above 1: refbpe
is faster).  Runs alternate, medians of ``--repeat``; the id digests must
agree.

``whole``: whole-process wall time and peak memory of the process tree (the
sum of RSS and the sum of PSS, which counts a page that forked workers share
with their parent once, both sampled from /proc by perf/harness.py's
``measure``) of ``refbpe encode CORPUS -o ids.npy --workers K --special-token
'<|endoftext|>'`` under PyPy, against tiktoken ``encode_ordinary_batch(docs,
num_threads=K)`` plus ``numpy.save`` of the ids joined by ``<|endoftext|>``
(the same array); the two ``.npy`` files must be byte-identical.  ``--times10``
adds english_medium repeated 10 times (built in a temporary directory, removed
afterwards; refbpe only).

The memory figure to quote is the summed RSS: each process's resident pages,
a page that a forked worker still shares with its parent counted in both (so
it never understates); PSS beside it splits such a page between them.  The
refbpe tree's bytecode is compiled first (``compileall``), as an installed
package's is: where ``PYTHONDONTWRITEBYTECODE`` is set, as on the machine
behind docs/performance.md, a tree without ``__pycache__`` is otherwise
compiled from source by every run: importing ``refbpe.cli.encode`` under PyPy
then peaked at 338 MB instead of 183 MB.  ``--pypy-gc-env NAME=VALUE,...`` runs refbpe with
those PyPy GC variables set (``PYPY_GC_NURSERY=240MB``: the nursery PyPy
picked here by itself, so ``refbpe encode`` does not restart with a small one,
``refbpe/cli/pypy_gc.py``): the before and after of that change in one run.
"""

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from harness import GPT2_FILES, INTERPRETERS, ROOT, corpus, read_text, run_result, stopwatch, tree_env
from harness import SPECIAL as EOT

PYPY, CPYTHON = INTERPRETERS["pypy"], INTERPRETERS["cpython"]
WARM, TIMED = 100_000, 8_000_000
SINGLE_CORPORA = ["english_medium", "russian", "chinese", "mixed_multilingual", "python_code"]


def _digest(ids):
    from array import array

    return hashlib.sha256(array("I", ids).tobytes()).hexdigest()[:16]


# -- children ----------------------------------------------------------------------


def child_single(system, path):
    warm, timed = read_text(path, 0, WARM), read_text(path, WARM, TIMED)
    if system == "refbpe":
        from refbpe import Tokenizer

        tok = Tokenizer.from_files(*GPT2_FILES)
        encode = tok.encode
    else:
        import tiktoken

        encode = tiktoken.get_encoding("gpt2").encode_ordinary
    encode(warm)
    with stopwatch() as first:
        ids = encode(timed)
    with stopwatch() as again:
        encode(timed)  # again: the caches hold the text's pieces, as in the middle of a long corpus
    fields = {"seconds": first.wall, "cpu": first.cpu, "again_cpu": again.cpu}
    fields["bytes"] = len(timed.encode("utf-8"))
    fields["digest"] = _digest(ids)
    print("RESULT " + json.dumps(fields))


def child_tiktoken_whole(path, out, workers):
    import numpy
    import tiktoken

    enc = tiktoken.get_encoding("gpt2")
    with open(path, "rb") as f:
        docs = f.read().decode("utf-8").split(EOT)
    eot = enc.eot_token
    ids = []
    for k, doc_ids in enumerate(enc.encode_ordinary_batch(docs, num_threads=workers)):
        if k:
            ids.append(eot)
        ids.extend(doc_ids)
    numpy.save(out, numpy.array(ids, dtype=numpy.uint16 if max(ids) < 65536 else numpy.uint32))


# -- driver --------------------------------------------------------------------------


def _measure(cmd, **env):
    """``harness.measure`` of a command that must succeed: wall time, peak tree RSS and PSS."""
    return run_result(cmd, tree_env(**env), pss=True)


def compile_tree():
    """Write the refbpe tree's PyPy bytecode, as installing the package does (module docstring)."""
    subprocess.run([PYPY, "-m", "compileall", "-q", os.path.join(ROOT, "refbpe")], check=True)


def run_single(corpora, repeat):
    print(
        "| corpus | refbpe PyPy MB/s | tiktoken MB/s | ratio (tiktoken s / refbpe s) | CPU-s ratio "
        "| second pass CPU s, refbpe / tiktoken | runs |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in corpora:
        times = {"refbpe": [], "tiktoken": []}
        cpu = {"refbpe": [], "tiktoken": []}
        again = {"refbpe": [], "tiktoken": []}
        digests = set()
        size = 0
        for _ in range(repeat):
            for system, python in (("refbpe", PYPY), ("tiktoken", CPYTHON)):
                r = _measure([python, __file__, "child-single", system, corpus(name)])["result"]
                times[system].append(r["seconds"])
                cpu[system].append(r["cpu"])
                again[system].append(r["again_cpu"])
                digests.add(r["digest"])
                size = r["bytes"]
        if len(digests) != 1:
            raise SystemExit("%s: the ids differ between refbpe and tiktoken" % name)
        ours, theirs = statistics.median(times["refbpe"]), statistics.median(times["tiktoken"])
        cpu_ratio = statistics.median(cpu["tiktoken"]) / statistics.median(cpu["refbpe"])
        print(
            "| %s | %.2f | %.2f | %.2f | %.2f | %.2f / %.2f | %d |"
            % (
                name,
                size / 1e6 / ours,
                size / 1e6 / theirs,
                theirs / ours,
                cpu_ratio,
                statistics.median(again["refbpe"]),
                statistics.median(again["tiktoken"]),
                repeat,
            )
        )
        sys.stdout.flush()


def refbpe_encode_cmd(path, out, workers, chunk_size=None):
    return [
        PYPY, "-m", "refbpe", "encode", GPT2_FILES[0], path,
        "-o", out, "--workers", str(workers), "--special-token", EOT, "--quiet",
    ] + (["--chunk-size", chunk_size] if chunk_size else [])  # fmt: skip


def run_whole(corpora, workers_list, times10, repeat, chunk_size=None, gc_env=None):
    compile_tree()
    work = tempfile.mkdtemp(prefix="refbpe-perf-encode-")
    try:
        inputs = [(name, corpus(name)) for name in corpora]
        if times10:
            big = os.path.join(work, "english_medium_x10.txt")
            with open(big, "wb") as out, open(corpus("english_medium"), "rb") as f:
                data = f.read()
                for k in range(10):
                    out.write(data if not k else EOT.encode() + data)
            del data
            inputs.append(("english_medium x10", big))
        print(
            "| corpus | MB | workers | refbpe s (CPU s) | refbpe peak RSS / PSS MB "
            "| tiktoken+numpy s (CPU s) "
            "| tiktoken peak RSS / PSS MB | ratio (tiktoken s / refbpe s) | identical |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for name, path in inputs:
            for workers in workers_list:
                ours, theirs = [], []
                peer = not name.endswith("x10")  # tiktoken's Python list of 200M ids would take ~8 GB
                same = None
                for _ in range(repeat):
                    a, b = os.path.join(work, "refbpe.npy"), os.path.join(work, "tiktoken.npy")
                    ours.append(_measure(refbpe_encode_cmd(path, a, workers, chunk_size), **(gc_env or {})))
                    if peer:
                        cmd = [CPYTHON, __file__, "child-tiktoken-whole", path, b, str(workers)]
                        theirs.append(_measure(cmd))
                        same = _file_digest(a) == _file_digest(b)
                        os.unlink(b)
                    os.unlink(a)
                    if same is False:
                        break
                nan = float("nan")
                theirs = theirs or [
                    {"wall": nan, "cpu_seconds": nan, "peak_tree_mb": nan, "peak_tree_pss_mb": nan}
                ]
                w_ours = statistics.median(r["wall"] for r in ours)
                w_theirs = statistics.median(r["wall"] for r in theirs)
                print(
                    "| %s | %.0f | %d | %.2f (%.1f) | %.0f / %.0f | %.2f (%.1f) | %.0f / %.0f | %.2f | %s |"
                    % (
                        name,
                        os.path.getsize(path) / 1e6,
                        workers,
                        w_ours,
                        statistics.median(r["cpu_seconds"] for r in ours),
                        max(r["peak_tree_mb"] for r in ours),
                        max(r["peak_tree_pss_mb"] for r in ours),
                        w_theirs,
                        statistics.median(r["cpu_seconds"] for r in theirs),
                        max(r["peak_tree_mb"] for r in theirs),
                        max(r["peak_tree_pss_mb"] for r in theirs),
                        w_theirs / w_ours,
                        {True: "yes", False: "NO", None: "not compared"}[same],
                    )
                )
                sys.stdout.flush()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main(argv):
    if argv and argv[0] == "child-single":
        return child_single(argv[1], argv[2])
    if argv and argv[0] == "child-tiktoken-whole":
        return child_tiktoken_whole(argv[1], argv[2], int(argv[3]))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("section", choices=["single", "whole"])
    p.add_argument("--corpora", default=None)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--times10", action="store_true")
    p.add_argument("--chunk-size", default=None, help="refbpe encode's --chunk-size (default: its own)")
    p.add_argument("--pypy-gc-env", default=None, help="NAME=VALUE,... PyPy GC variables for refbpe's runs")
    args = p.parse_args(argv)
    if args.section == "single":
        run_single((args.corpora or ",".join(SINGLE_CORPORA)).split(","), args.repeat)
    else:
        run_whole(
            (args.corpora or "english_medium").split(","),
            [int(w) for w in args.workers.split(",")],
            args.times10,
            args.repeat,
            args.chunk_size,
            dict(kv.split("=", 1) for kv in args.pypy_gc_env.split(",")) if args.pypy_gc_env else None,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
