"""The same input gives byte-identical output files (compared by sha256) under
every hash seed, worker count, chunk size and interpreter, and whether the
corpus is one file, several files split at document boundaries, or gzip.

The default profile runs a spread of combinations; ``REFBPE_HYPOTHESIS_PROFILE=heavy``
runs the full product of the settings below.
"""

import gzip
import hashlib
import itertools
import os
import random

import pytest
from support import HEAVY, other_interpreter, run_cli

EOT = "<|endoftext|>"
OUTPUTS = ("vocab.json", "merges.txt", "refbpe.json")

SEEDS = ["0", "1", "4242"]
WORKERS = ["1", "2", "3"]
CHUNKS = ["512", "4K", "auto"]
LAYOUTS = ["one file", "three files", "gzip"]


def _documents(n=240):
    """Documents in several scripts, with many equal pair counts (ties)."""
    rng = random.Random(11)
    words = [
        "ab",
        "ba",
        "abab",
        "the",
        "cat's",
        "don't",
        "caf\u00e9",
        "\u00e9t\u00e9",
        "\u4e2d\u6587",
        "\u043c\u0438\u0440",
        "\U0001f600",
        "x1",
        "42",
        "  ",
        "\t",
        "\n",
        "!!",
        "...",
        "h\u00e9llo",
        "\u0928\u092e",
    ]
    docs = []
    for _ in range(n):
        docs.append(" ".join(rng.choice(words) for _ in range(rng.randint(5, 120))) + "\n")
    return docs


def _write_layout(directory, layout):
    docs = _documents()
    text = EOT.join(docs)
    os.makedirs(directory, exist_ok=True)
    if layout == "one file":
        paths = [os.path.join(directory, "all.txt")]
        blobs = [text]
    elif layout == "three files":  # split at document boundaries: after a separator
        third = len(docs) // 3
        parts = [docs[:third], docs[third : 2 * third], docs[2 * third :]]
        blobs = [EOT.join(parts[0]) + EOT, EOT.join(parts[1]) + EOT, EOT.join(parts[2])]
        assert "".join(blobs) == text
        paths = [os.path.join(directory, "part%d.txt" % k) for k in range(3)]
    else:
        paths = [os.path.join(directory, "all.txt.gz")]
        blobs = [text]
    for path, blob in zip(paths, blobs):
        data = blob.encode("utf-8")
        with open(path, "wb") as f:
            f.write(gzip.compress(data, mtime=0) if path.endswith(".gz") else data)
    return paths


def _train_digest(tmp_path, name, layout, seed, workers, chunk, python=None):
    paths = _write_layout(str(tmp_path / ("in-" + layout.replace(" ", "-"))), layout)
    out = str(tmp_path / name)
    args = (
        ["train"]
        + paths
        + [
            "--vocab-size",
            "700",
            "--special-token",
            EOT,
            "--special-token",
            "<|pad|>",
            "--out",
            out,
            "--workers",
            workers,
            "--quiet",
        ]
    )
    if chunk != "auto":
        args += ["--chunk-size", chunk]
    r = run_cli(args, python=python, env={"PYTHONHASHSEED": seed})
    assert r.returncode == 0, r.stderr
    return {f: hashlib.sha256(open(os.path.join(out, f), "rb").read()).hexdigest() for f in OUTPUTS}


def _combinations():
    if HEAVY:
        return list(itertools.product(LAYOUTS, SEEDS, WORKERS, CHUNKS))
    # Every value of every setting at least twice, in varied company.
    return [
        ("one file", "1", "2", "512"),
        ("one file", "4242", "3", "4K"),
        ("one file", "0", "1", "512"),
        ("three files", "0", "2", "4K"),
        ("three files", "4242", "1", "auto"),
        ("three files", "1", "3", "512"),
        ("gzip", "1", "3", "4K"),
        ("gzip", "4242", "2", "512"),
    ]


@pytest.mark.slow
def test_outputs_identical_across_seeds_workers_chunks_and_layouts(tmp_path):
    reference = _train_digest(tmp_path, "reference", "one file", "0", "1", "auto")
    for k, (layout, seed, workers, chunk) in enumerate(_combinations()):
        got = _train_digest(tmp_path, "run%d" % k, layout, seed, workers, chunk)
        assert got == reference, (layout, seed, workers, chunk)


@pytest.mark.slow
def test_outputs_identical_across_interpreters(tmp_path):
    other = other_interpreter()
    if other is None:
        pytest.skip(
            "no second interpreter (.venv-pypy/bin/python or pypy3 from CPython, "
            ".venv/bin/python from PyPy) can import this refbpe"
        )
    here = _train_digest(tmp_path, "here", "three files", "0", "2", "4K")
    there = _train_digest(tmp_path, "there", "three files", "12345", "2", "4K", python=other)
    assert here == there
