"""Token-id files: read a list of ids from ``.npy``, JSON or plain text.

``.npy``: a 1-D integer array, format versions 1-3, read without numpy (the
header is a Python literal; the body is the raw array).  JSON: a flat list of
integers.  Text: whitespace-separated integers.
"""

import ast
import json
import struct

__all__ = ["read_ids"]


def read_ids(path):
    """A list of ints from a ``.npy`` file (1-D integer array), a JSON list or whitespace-separated ints."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] == b"\x93NUMPY":
        return _read_npy(path, data)
    text = data.decode("utf-8").strip()
    try:
        ids = json.loads(text) if text.startswith("[") else [int(x) for x in text.split()]
    except ValueError:
        raise ValueError("%s: expected a .npy array, a JSON list or whitespace-separated integers" % path)
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise ValueError("%s: expected a flat list of integers" % path)
    return ids


_NPY_TYPES = {"i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "i8": "q", "u8": "Q"}


def _read_npy(path, data):
    """A 1-D integer ``.npy`` without numpy (format versions 1-3)."""
    major = data[6]
    if major == 1:
        hlen = struct.unpack("<H", data[8:10])[0]
        start = 10
    elif major in (2, 3):
        hlen = struct.unpack("<I", data[8:12])[0]
        start = 12
    else:
        raise ValueError("%s: unsupported .npy version %d" % (path, major))
    try:
        header = ast.literal_eval(data[start : start + hlen].decode("latin-1"))
        descr, shape = header["descr"], tuple(header["shape"])  # 1-D: fortran_order is moot
    except (ValueError, SyntaxError, KeyError, TypeError):
        raise ValueError("%s: malformed .npy header" % path)
    if len(shape) > 1 and sum(1 for s in shape if s != 1) > 1:
        raise ValueError("%s: expected a 1-D array, shape %r" % (path, shape))
    order, kind = descr[0], descr[1:]
    if kind not in _NPY_TYPES or order not in "<>|=":
        raise ValueError("%s: expected an integer array, dtype %r" % (path, descr))
    n = 1
    for s in shape:
        n *= s
    fmt = (">" if order == ">" else "<") + _NPY_TYPES[kind] * n
    body = data[start + hlen :]
    try:
        return list(struct.unpack(fmt, body[: struct.calcsize(fmt)]))
    except struct.error:
        raise ValueError("%s: truncated .npy data" % path)
