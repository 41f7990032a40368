"""Helpers shared by the peer runners (Python 3.9 syntax: PyPy runs some of them).

Every runner is a standalone script run as its own process by ``perf/run.py``.
It prints one line ``RESULT {json}`` on stdout with its in-process figures;
the driver measures whole-process wall time and peak memory from outside.
"""

import hashlib
import json
import sys
import time
from array import array

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
SPECIAL = "<|endoftext|>"

now = time.perf_counter


def emit(**fields):
    sys.stdout.write("RESULT " + json.dumps(fields) + "\n")
    sys.stdout.flush()


def read_text(path, max_bytes=0):
    """The file as str; with ``max_bytes``, cut at the last UTF-8 boundary before it."""
    with open(path, "rb") as f:
        data = f.read(max_bytes) if max_bytes else f.read()
    if max_bytes and len(data) == max_bytes:
        cut = len(data)
        while cut > 0 and (data[cut - 1] & 0xC0) == 0x80:
            cut -= 1
        if cut > 0 and data[cut - 1] >= 0xC0:
            cut -= 1  # drop an incomplete lead byte
        data = data[:cut]
    return data.decode("utf-8"), len(data)


def read_docs(path):
    """Documents of a corpus (split on the special token, which is dropped)."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    return text.split(SPECIAL)


def ids_digest(ids):
    return hashlib.sha256(array("I", ids).tobytes()).hexdigest()[:16]


def merges_digest(merges):
    h = hashlib.sha256()
    for a, b in merges:
        h.update(a.hex().encode() + b" " + b.hex().encode() + b"\n")
    return h.hexdigest()[:16]


def arg(argv, name, default=None):
    """``--name VALUE`` from argv (tiny parser, no argparse start-up cost)."""
    if name in argv:
        return argv[argv.index(name) + 1]
    return default
