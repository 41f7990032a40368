"""Model writing and reading speed, per format, on models of long tokens and on a normal model.

    .venv-pypy/bin/python perf/writers.py                 # every input, every format (~1.5 min)
    .venv-pypy/bin/python perf/writers.py --only ws,run1 --formats gpt2
    PYTHONPATH=../other-tree .venv-pypy/bin/python perf/writers.py   # another tree's refbpe

Run it under the interpreter to measure (the issue's target, >= 150 MB/s of output
written and read, is PyPy's).  Inputs: ``ws`` (a 3 MB run of spaces, the heaviest model
per byte of input: every byte is remapped in the GPT-2 formats), perf/adversarial.py's
one-piece families ``run1`` (4 MB of one letter) and ``rand2`` (5 MB over two letters),
generated from ``--seed``, each trained here at vocab 1,000 with <|endoftext|> (as
perf/adversarial.py); and ``english`` (english_medium.txt at vocab 32,000, a normal
model: ~1 MB of files, where fixed costs rule and the figure to read is milliseconds).
Each model is written in every format, in-process (``formats.write_model_file_in_dir``:
gpt2 is refbpe's own model directory, vocab.json + merges.txt + refbpe.json; tiktoken
also writes its manifest) and read back (``formats.read_model``), ``--repeats`` times.

Columns: output MB; write and read as the median of the repeats in CPU seconds
(``harness.stopwatch``: this process's user + system time, so that other processes on a
loaded machine do not count) with MB/s of output on it, and wall seconds (which add the
fsync of each file and any wait for the CPU); ``ok`` when both CPU rates reach the target
(or, for a model of under 10 MB of files, ``small``: the milliseconds are the figure);
the CPU milliseconds of the first read (``rd 1st``: what a command that reads a model
once pays, its code not yet compiled by PyPy's JIT; cold only for the first input that
reads the format, so run one input, ``--only english --formats gpt2``);
and a sha256 digest of the files (byte-identity across versions: the digests of one seed
do not change unless a writer does).  The load average is printed with the table.
"""

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import adversarial  # noqa: E402  (the one-piece input generators; imports the harness)
from harness import corpus, implementation, stopwatch  # noqa: E402

from refbpe import train_bpe  # noqa: E402
from refbpe.formats import FORMATS, read_model, write_model_file_in_dir  # noqa: E402

MB = 1000 * 1000
INPUTS = [("ws", 3 * MB, 1000), ("run1", 4 * MB, 1000), ("rand2", 5 * MB, 1000), ("english", None, 32000)]
SPECIAL = "<|endoftext|>"
TARGET = 150  # MB/s of output, written and read (PyPy)
SMALL = 10 * MB  # below this, fixed costs rule: the milliseconds are the figure


def generate(name, size, seed, path):
    if name == "ws":
        with open(path, "wb") as f:
            f.write(b" " * size)
        return path
    if name == "english":
        return corpus("english_medium")
    adversarial.generate(name, size, seed, path)
    return path


def files_of(out):
    if os.path.isdir(out):
        return sorted(os.path.join(out, n) for n in os.listdir(out))
    return [out]


def digest(paths):
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            h.update(os.path.basename(p).encode() + b"\0" + f.read())
    return h.hexdigest()[:16]


def clocked(fn):
    """(CPU seconds, wall seconds, result) of one call."""
    with stopwatch() as sw:
        out = fn()
    return sw.cpu, sw.wall, out


def measure(vocab, merges, fmt, work, repeats, read_limit):
    """{"bytes", "write": (cpu, wall), "read": (cpu, wall) or None, "first": the first read's
    cpu or None, "digest"} (medians)."""
    out_dir = os.path.join(work, fmt)
    writes, reads = [], []
    for _ in range(repeats):
        cpu, wall, written = clocked(lambda: write_model_file_in_dir(out_dir, fmt, vocab, merges, [SPECIAL]))
        writes.append((cpu, wall))
        if fmt == "tiktoken" and read_limit and max(len(t) for t in vocab.values()) > read_limit:
            continue
        cpu, wall, model = clocked(lambda path=written: read_model(path, fmt, [SPECIAL]))
        assert model.merges == merges, fmt
        reads.append((cpu, wall))
    paths = files_of(out_dir)
    return {
        "bytes": sum(os.path.getsize(p) for p in paths),
        "write": _medians(writes),
        "read": _medians(reads) if reads else None,
        "first": reads[0][0] if reads else None,
        "digest": digest(paths),
    }


def _medians(runs):
    return statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs)


def row(name, fmt, m):
    mb = m["bytes"] / MB

    def cells(t):
        if t is None:
            return "%7s %6s %7s" % ("-", "-", "-")
        return "%7.0f %6.0f %7.0f" % (1000 * t[0], mb / t[0] if t[0] else float("inf"), 1000 * t[1])

    rates = [mb / t[0] for t in (m["write"], m["read"]) if t is not None and t[0]]
    verdict = "small" if m["bytes"] < SMALL else ("ok" if min(rates) >= TARGET else "BELOW")
    first = "%7s" % "-" if m["first"] is None else "%7.0f" % (1000 * m["first"])
    return "%-8s %-9s %7.1f  %s  %s  %s  %-6s %s" % (
        name,
        fmt,
        mb,
        cells(m["write"]),
        cells(m["read"]),
        first,
        verdict,
        m["digest"],
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--only", default=",".join(n for n, _, _ in INPUTS))
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--tiktoken-read-limit",
        type=int,
        default=0,
        help="skip reading a ranks file whose longest token is longer (for an older tree)",
    )
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="refbpe-writers-")
    try:
        print(
            "%s; load average %s; target >= %d MB/s of output (CPU time), written and read"
            % (implementation(), " ".join("%.2f" % x for x in os.getloadavg()), TARGET)
        )
        print(
            "%-8s %-9s %7s  %7s %6s %7s  %7s %6s %7s  %7s  %-6s %s"
            % (
                "input",
                "format",
                "MB",
                "wr cpu",
                "MB/s",
                "wr wall",
                "rd cpu",
                "MB/s",
                "rd wall",
                "rd 1st",
                "",
                "sha256",
            )
        )
        print("%-8s %-9s %7s  %22s  %22s  %7s" % ("", "", "", "ms        ms", "ms        ms", "ms"))
        for name, size, vocab_size in INPUTS:
            if name not in args.only.split(","):
                continue
            path = generate(name, size, args.seed, os.path.join(work, name + ".txt"))
            vocab, merges = train_bpe(path, vocab_size, [SPECIAL], workers=1)
            for fmt in args.formats.split(","):
                m = measure(
                    vocab, merges, fmt, os.path.join(work, name), args.repeats, args.tiktoken_read_limit
                )
                print(row(name, fmt, m))
                sys.stdout.flush()
            shutil.rmtree(os.path.join(work, name))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
