"""Which format a model path is in: ``detect_format``.

A directory holds GPT-2 files (``vocab.json`` + ``merges.txt``) or one of the
files ``refbpe train --format`` writes (``tokenizer.json``,
``tokenizer.tiktoken``, ``tokenizer.hex.json``); a file is told apart by its
name (``*vocab.json``/``*merges.txt`` pairs) or its first bytes (JSON with a
``model`` object: hf; JSON with ``merges``: hex JSON; ``base64 rank`` lines:
tiktoken).
"""

import base64
import binascii
import json
import os

from .model import FormatError

__all__ = ["FILE_OF", "detect_format", "gpt2_paths"]


def gpt2_paths(path):
    """(vocab.json, merges.txt) for a directory, or for either file of a pair
    named PREFIXvocab.json / PREFIXmerges.txt (as the CS336 reference files)."""
    if os.path.isdir(path):
        return os.path.join(path, "vocab.json"), os.path.join(path, "merges.txt")
    d, name = os.path.split(path)
    for mine, other in (("merges.txt", "vocab.json"), ("vocab.json", "merges.txt")):
        if name.endswith(mine):
            sibling = os.path.join(d, name[: -len(mine)] + other)
            return (sibling, path) if mine == "merges.txt" else (path, sibling)
    return os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt")


# The file each format is written to inside a directory (``train --format``).
DIR_FILES = {"tokenizer.json": "hf", "tokenizer.tiktoken": "tiktoken", "tokenizer.hex.json": "json"}
FILE_OF = {fmt: name for name, fmt in DIR_FILES.items()}


def detect_format(path):
    """'gpt2', 'hf', 'tiktoken' or 'json' for ``path``; FormatError if none fits."""
    if not os.path.exists(path):
        raise FormatError("%s: no such file or directory" % path)
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, "vocab.json")) and os.path.isfile(
            os.path.join(path, "merges.txt")
        ):
            return "gpt2"
        for name, fmt in DIR_FILES.items():
            if os.path.isfile(os.path.join(path, name)):
                return fmt
        raise FormatError(
            "%s: a directory without vocab.json + merges.txt, tokenizer.json, tokenizer.tiktoken "
            "or tokenizer.hex.json" % path
        )
    name = os.path.basename(path)
    if name.endswith("merges.txt") or name.endswith("vocab.json"):
        v, m = gpt2_paths(path)
        if os.path.isfile(v) and os.path.isfile(m):
            return "gpt2"
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        try:
            # bytes, then one decode: a text-mode read translates newlines, slowly under PyPy
            # (0.65 s of 0.9 s reading a 122 MB tokenizer.json: perf/writers.py ws)
            with open(path, "rb") as f:
                data = json.loads(f.read().decode("utf-8"))
        except ValueError as e:
            raise FormatError("%s: looks like JSON but is not valid (%s)" % (path, e))
        if isinstance(data, dict) and isinstance(data.get("model"), dict):
            return "hf"
        if isinstance(data, list) or (isinstance(data, dict) and "merges" in data):
            return "json"
        raise FormatError("%s: a JSON file that is neither a tokenizer.json nor hex merges" % path)
    first = stripped.split(b"\n", 1)[0].split()
    if len(first) == 2 and first[1].isdigit():
        try:
            base64.b64decode(first[0], validate=True)
            return "tiktoken"
        except (ValueError, binascii.Error):
            pass
    raise FormatError(
        "%s: unknown format (expected a GPT-2 directory, tokenizer.json, tiktoken ranks or hex JSON)" % path
    )
