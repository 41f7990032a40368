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


def encode_twice(path, max_bytes, encode):
    """Time ``encode`` on the first ``max_bytes`` of ``path`` (a cold first call:
    JIT warm-up and empty caches included), then on the next ``max_bytes`` (a
    warm call, as in the middle of a long corpus).  Returns the fields to emit."""
    both, _ = read_text(path, 2 * max_bytes if max_bytes else 0)
    first_bytes = (
        len(read_text(path, max_bytes)[0].encode("utf-8")) if max_bytes else len(both.encode("utf-8"))
    )
    raw = both.encode("utf-8")
    first, second = raw[:first_bytes].decode("utf-8"), raw[first_bytes:].decode("utf-8")
    t0 = now()
    ids = encode(first)
    t1 = now()
    fields = dict(
        bytes=first_bytes, encode_seconds=round(t1 - t0, 4), ids=len(ids), ids_digest=ids_digest(ids)
    )
    if second:
        t2 = now()
        encode(second)
        fields.update(warm_bytes=len(raw) - first_bytes, warm_seconds=round(now() - t2, 4))
    return fields


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
