"""Model writing and reading speed, per format, on models of long tokens.

    .venv-pypy/bin/python perf/writers.py            # every input, every format
    .venv-pypy/bin/python perf/writers.py --only ws,run1 --formats gpt2

Run it under the interpreter to measure (the figures in the README and the
issue's target, >= 150 MB/s of output, are PyPy's).  Each input is one of
perf/adversarial.py's one-piece families, generated from ``--seed`` into a
temporary directory, plus ``ws`` (a run of spaces, the heaviest model per byte
of input); it is trained in this process (vocab 1,000 with <|endoftext|>, as
perf/adversarial.py) and the model is written in every format, in-process
(``formats.write_model_file_in_dir``) and read back (``formats.read_model``).
Columns: output MB, write seconds and MB/s of output, read seconds and MB/s,
and a sha256 digest of the output files (byte-identity across versions: the
digests of one seed do not change unless the writer does).
"""

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import adversarial  # noqa: E402  (the one-piece input generators)

from refbpe import train_bpe  # noqa: E402
from refbpe.formats import FORMATS, read_model, write_model_file_in_dir  # noqa: E402

MB = 1000 * 1000
INPUTS = [("ws", 3 * MB), ("run1", 4 * MB), ("rand2", 5 * MB), ("rand26", 5 * MB), ("han", 2 * MB)]
SPECIAL = "<|endoftext|>"
# Reading a ranks file rebuilds each token's merge by tiktoken's own merging, O(L^2) in
# the token's length (formats/tiktoken.py): not timed beyond this length.
LONGEST_TIKTOKEN_READ = 1 << 16


def generate(name, size, seed, path):
    if name == "ws":
        with open(path, "wb") as f:
            f.write(b" " * size)
        return
    adversarial.generate(name, size, seed, path)


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


def measure(vocab, merges, fmt, work):
    out_dir = os.path.join(work, fmt)
    t0 = time.perf_counter()
    written = write_model_file_in_dir(out_dir, fmt, vocab, merges, [SPECIAL])
    t_write = time.perf_counter() - t0
    paths = files_of(out_dir)
    size = sum(os.path.getsize(p) for p in paths)
    if fmt == "tiktoken" and max(len(t) for t in vocab.values()) > LONGEST_TIKTOKEN_READ:
        return size, t_write, None, digest(paths)
    t0 = time.perf_counter()
    model = read_model(written, fmt, [SPECIAL])
    t_read = time.perf_counter() - t0
    assert model.merges == merges, fmt
    return size, t_write, t_read, digest(paths)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--only", default=",".join(n for n, _ in INPUTS))
    ap.add_argument("--formats", default=",".join(FORMATS))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="refbpe-writers-")
    try:
        print(
            "%-7s %-9s %8s %8s %9s %8s %9s  %s"
            % ("input", "format", "MB", "write s", "MB/s", "read s", "MB/s", "sha256")
        )
        for name, size in INPUTS:
            if name not in args.only.split(","):
                continue
            path = os.path.join(work, name + ".txt")
            generate(name, size, args.seed, path)
            vocab, merges = train_bpe(path, 1000, [SPECIAL], workers=1)
            for fmt in args.formats.split(","):
                mb, t_write, t_read, dig = measure(vocab, merges, fmt, os.path.join(work, name))
                read = ("%8.2f %9.0f" % (t_read, mb / MB / t_read)) if t_read else "%8s %9s" % ("-", "-")
                print(
                    "%-7s %-9s %8.1f %8.2f %9.0f %s  %s"
                    % (name, fmt, mb / MB, t_write, mb / MB / t_write, read, dig)
                )
                sys.stdout.flush()
            shutil.rmtree(os.path.join(work, name))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
