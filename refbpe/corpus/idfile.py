"""Token-id files: ``.npy``, flat ``.bin`` and text, written streaming and atomically.

Formats (no numpy needed to write or read them):

- ``.npy``: NumPy format 1.0, a 1-D little-endian integer array.  The header
  is exactly the one ``numpy.save`` writes (128 bytes: magic, version 1.0,
  header length, the dict padded with spaces to a multiple of 64, ``\\n``),
  so a file from here and ``numpy.save(path, numpy.array(ids, dtype))`` are
  byte-identical.  A 1-D header is 128 bytes for every length up to 10**40,
  which is what lets it be written first with a placeholder length and
  patched in place at the end.
- ``.bin``: the raw little-endian array, nothing else (what nanoGPT-style
  trainers memory-map); the reader must be told the dtype.
- text: one id per line, or a JSON list.

Dtypes: ``uint16``, ``uint32``, ``int32``, ``int64``.  A model's files have
one dtype whatever their content, the smallest unsigned one that holds the
largest id the model can produce (``dtype_for_ids``): corpus encoding passes it,
so every shard of a corpus has the same dtype and a reader can be told it once.
Unforced, a writer
starts with ``uint16`` and widens once to ``uint32`` at the first id above
65535 (the ids written so far are rewritten: at most one extra pass over the
file); so the dtype is ``uint16`` exactly when every id fits.  A forced
dtype that an id does not fit is an error naming that id and its position.

Atomicity: every writer writes to a temporary file (``atomic.open_temporary``),
fsyncs it and puts it in place only on ``close`` (``atomic.commit_temporary``:
renamed over a regular file, keeping its mode; a symlink's target replaced; a
device or FIFO written into; inside ``atomic.outputs_together``, with the
command's other outputs); on an error or an interrupt (``abort``, or leaving
the ``with`` block by an exception) the temporary file is removed and the
target is untouched.  A failed write is a ``WriteError`` naming the output.

Cost: O(n) time, memory O(one batch of ids); widening adds one O(n) pass.
"""

import ast
import json
import os
import struct
import sys
from array import array

from .._util.atomic import WriteError, commit_temporary, discard_temporary, open_temporary
from .._util.reading import STREAM_LIMIT, read_whole

__all__ = [
    "DTYPES",
    "IdFileError",
    "check_ids_head",
    "IdWriter",
    "array_typecode",
    "check_dtype",
    "dtype_for_ids",
    "file_kind",
    "npy_header",
    "read_ids",
    "read_npy",
    "read_bin",
    "read_text_ids",
    "holds",
]


class IdFileError(ValueError):
    """A bad dtype, an id that does not fit, an unreadable or malformed id file."""


def _typecode(signed, size):
    for code in "bhilq" if signed else "BHILQ":
        if array(code).itemsize == size:
            return code
    raise RuntimeError(
        "no array typecode for a %d-byte %s integer" % (size, "signed" if signed else "unsigned")
    )


# name -> (numpy descr, array typecode, lowest, highest)
_DTYPES = {
    "uint16": ("<u2", _typecode(False, 2), 0, (1 << 16) - 1),
    "uint32": ("<u4", _typecode(False, 4), 0, (1 << 32) - 1),
    "int32": ("<i4", _typecode(True, 4), -(1 << 31), (1 << 31) - 1),
    "int64": ("<i8", _typecode(True, 8), -(1 << 63), (1 << 63) - 1),
}
DTYPES = tuple(_DTYPES)
_BIG_ENDIAN = sys.byteorder == "big"
_NPY_HEADER_SIZE = 128
_COPY_BLOCK = 1 << 20  # ids per block when widening or reading


def check_dtype(dtype):
    """``dtype`` if it is one of ``DTYPES`` (or None); IdFileError otherwise."""
    if dtype is not None and dtype not in _DTYPES:
        raise IdFileError("unknown dtype %r (expected one of %s)" % (dtype, ", ".join(DTYPES)))
    return dtype


def dtype_for_ids(largest):
    """The smallest unsigned dtype holding ids ``0..largest`` (``int64`` past ``uint32``).

    >>> dtype_for_ids(50256), dtype_for_ids(100276)
    ('uint16', 'uint32')
    """
    for dtype in ("uint16", "uint32"):
        if largest <= _DTYPES[dtype][3]:
            return dtype
    return "int64"


def holds(dtype, largest):
    """True when ``dtype`` holds every id ``0..largest``."""
    return _DTYPES[dtype][2] <= 0 and largest <= _DTYPES[dtype][3]


def array_typecode(dtype):
    """The ``array`` typecode holding ``dtype`` (native byte order)."""
    return _DTYPES[dtype][1]


def itemsize(dtype):
    return int(_DTYPES[dtype][0][2:])


def file_kind(path):
    """'npy', 'bin' or 'text', from the name's extension."""
    lower = str(path).lower()
    if lower.endswith(".npy"):
        return "npy"
    if lower.endswith(".bin"):
        return "bin"
    return "text"


def npy_header(dtype, count):
    """The 128-byte ``.npy`` 1.0 header ``numpy.save`` writes for a 1-D array.

    >>> npy_header("uint16", 5)[:67]
    b"\\x93NUMPY\\x01\\x00v\\x00{'descr': '<u2', 'fortran_order': False, 'shape': (5,), }"
    """
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (_DTYPES[dtype][0], count)
    body_size = _NPY_HEADER_SIZE - 10
    if len(text) + 1 > body_size:
        raise IdFileError("array too long for a 128-byte .npy header: %d ids" % count)
    text = text + " " * (body_size - len(text) - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", body_size) + text.encode("latin-1")


def _first_misfit(ids, dtype):
    """(position, id) of the first id outside ``dtype``'s range (ids must hold one)."""
    _, _, low, high = _DTYPES[dtype]
    for k, i in enumerate(ids):
        if not low <= i <= high:
            return k, i
    raise AssertionError("no id out of range")


# -- writing ----------------------------------------------------------------


class IdWriter(object):
    """Write ids to ``path`` (``kind`` 'npy', 'bin', 'text' or 'json'; default from the name).

    ``write(ids)`` appends a batch (any iterable of ints); ``close()`` puts the
    file in place and returns ``(count, dtype)`` (dtype None for text);
    ``abort()`` removes the temporary file.  As a context manager it closes
    on success and aborts on any exception, KeyboardInterrupt included.
    ``stream``: write text to this binary stream instead (stdout: not atomic).
    """

    def __init__(self, path, kind=None, dtype=None, stream=None):
        self.path = path
        self.kind = kind or file_kind(path)
        if self.kind not in ("npy", "bin", "text", "json"):
            raise IdFileError("unknown id file kind %r" % (self.kind,))
        self.forced = check_dtype(dtype)
        if self.kind in ("text", "json"):
            self.dtype = None
        else:
            self.dtype = dtype or "uint16"
        self.count = 0
        self._tmp = None
        self._stream = stream
        if stream is not None:
            if self.kind not in ("text", "json"):
                raise IdFileError("%s output cannot go to a stream" % self.kind)
            self._file = stream
        else:
            self._file = self._open_temporary()
        if self.kind == "npy":
            self._file.write(npy_header(self.dtype, 0))
        elif self.kind == "json":
            self._file.write(b"[")

    def _open_temporary(self):
        target = os.fspath(self.path)
        if os.path.isdir(target):
            raise IdFileError("%s: is a directory" % target)
        f, self._tmp = open_temporary(target)
        return f

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            self.close()
        else:
            self.abort()
        return False

    def write(self, ids):
        if self.kind == "text":
            if ids:
                self._write_all(("\n".join(map(str, ids)) + "\n").encode("ascii"))
        elif self.kind == "json":
            if ids:
                self._write_all(((", " if self.count else "") + ", ".join(map(str, ids))).encode("ascii"))
        else:
            self._write_all(self._packed(ids))  # _packed first: widening replaces self._file
        self.count += len(ids)

    def _write_all(self, data):
        """All of ``data``: an unbuffered stream (``PYTHONUNBUFFERED`` stdout) may write part of it,
        and a pipe whose reader went away then fails on the next write (BrokenPipeError)."""
        view = memoryview(data)
        try:
            while view:
                written = self._file.write(view)
                view = view[len(view) if written is None else written :]
        except OSError as e:
            if self._stream is not None:
                raise
            raise WriteError(e.errno, "cannot write %s (%s); it is unchanged" % (self.path, e.strerror or e))

    def _packed(self, ids):
        """``ids`` as little-endian bytes of ``self.dtype`` (widening once if allowed)."""
        if type(ids) is array and ids.typecode == _DTYPES[self.dtype][1] and not _BIG_ENDIAN:
            return ids.tobytes()  # already in this dtype: no per-id work
        try:
            values = array(_DTYPES[self.dtype][1], ids)
        except OverflowError:
            k, bad = _first_misfit(ids, self.dtype)
            if self.forced is not None or self.dtype != "uint16" or bad < 0:
                raise IdFileError(
                    "id %r (token %d of the output) does not fit %s" % (bad, self.count + k, self.dtype)
                )
            self._widen("uint32")
            return self._packed(ids)
        if _BIG_ENDIAN:
            values.byteswap()
        return values.tobytes()

    def _widen(self, dtype):
        """Rewrite the ids written so far as ``dtype`` (the temporary file is replaced)."""
        old_code, old_tmp, old_file = _DTYPES[self.dtype][1], self._tmp, self._file
        old_file.flush()
        self._file = self._open_temporary()
        start = _NPY_HEADER_SIZE if self.kind == "npy" else 0
        if start:
            self._file.write(npy_header(dtype, 0))
        with open(old_tmp, "rb") as f:
            f.seek(start)
            left = self.count
            while left:
                block = array(old_code)
                block.fromfile(f, min(left, _COPY_BLOCK))
                left -= len(block)
                if _BIG_ENDIAN:
                    block.byteswap()
                wide = array(_DTYPES[dtype][1], block)
                if _BIG_ENDIAN:
                    wide.byteswap()
                self._file.write(wide.tobytes())
        old_file.close()
        discard_temporary(old_tmp)
        self.dtype = dtype

    def close(self):
        """Finish the file and rename it into place; ``(count, dtype)``."""
        if self.kind == "json":
            self._write_all(b"]\n")
        if self._stream is not None:
            self._file.flush()
            return self.count, self.dtype
        try:
            if self.kind == "npy":
                self._file.seek(0)
                self._file.write(npy_header(self.dtype, self.count))
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
        except OSError as e:
            self.abort()
            raise WriteError(e.errno, "cannot write %s (%s); it is unchanged" % (self.path, e.strerror or e))
        except BaseException:
            self.abort()
            raise
        tmp, self._tmp = self._tmp, None
        commit_temporary(tmp, self.path)
        return self.count, self.dtype

    def abort(self):
        """Drop everything written; the target is left as it was."""
        if self._stream is not None:
            return
        try:
            self._file.close()
        except OSError:
            pass
        if self._tmp is not None:
            try:
                os.unlink(self._tmp)
            except OSError:
                pass
            self._tmp = None


# -- reading ------------------------------------------------------------------

_NPY_KINDS = {"i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "i8": "q", "u8": "Q"}


def read_ids(path, dtype=None):
    """The ids in ``path`` as a list: ``.npy`` (by its magic bytes, whatever the name),
    ``.bin`` (``dtype`` needed), else text (a JSON list or whitespace-separated ints)."""
    data = _read_bytes(path, file_kind(path) not in ("bin", "npy"))
    if data[:6] == b"\x93NUMPY":
        return read_npy(path, data).tolist()
    if file_kind(path) == "bin":
        return read_bin(path, dtype, data).tolist()
    return read_text_ids(path, data)


def _read_bytes(path, text_or_npy=False):
    """The bytes of ``path``; a stream past ``reading.STREAM_LIMIT`` is refused, and with
    ``text_or_npy`` the first bytes must start a ``.npy`` file or a text of ids."""
    try:
        with open(path, "rb") as f:
            check = (lambda head: check_ids_head(path, head)) if text_or_npy else None
            return read_whole(f, path, check, None if os.path.isfile(path) else STREAM_LIMIT)
    except OSError as e:
        raise IdFileError("%s: %s" % (path, e.strerror or e))


def check_ids_head(path, head):
    """An ``IdFileError`` unless ``head`` starts a ``.npy`` file, or a text of ids (a JSON list
    or whitespace-separated integers): checked before the rest of the file is read."""
    if head.startswith(b"\x93NUMPY"):
        return
    start = head.lstrip()[:1]
    if start and start not in b"0123456789[":
        raise IdFileError(
            "%s: expected .npy, whitespace-separated integers or a JSON list of integers" % path
        )


def _array_from(data, code, swap, path):
    values = array(code)
    if len(data) % values.itemsize:
        raise IdFileError(
            "%s: %d bytes is not a whole number of %d-byte ids" % (path, len(data), values.itemsize)
        )
    values.frombytes(data)
    if swap:
        values.byteswap()
    return values


def read_bin(path, dtype, data=None):
    """A flat little-endian ``.bin`` of ``dtype``, as an ``array``."""
    if dtype is None:
        raise IdFileError(
            "%s: a .bin file does not say its dtype; give one of %s" % (path, ", ".join(DTYPES))
        )
    check_dtype(dtype)
    if data is None:
        data = _read_bytes(path)
    if len(data) % itemsize(dtype):
        raise IdFileError(
            "%s: %d bytes is not a multiple of %d, the size of %s; wrong dtype?"
            % (path, len(data), itemsize(dtype), dtype)
        )
    return _array_from(data, _DTYPES[dtype][1], _BIG_ENDIAN, path)


def read_npy(path, data=None):
    """A 1-D integer ``.npy`` (format versions 1-3, either byte order) as an ``array``."""
    if data is None:
        data = _read_bytes(path)
    if data[:6] != b"\x93NUMPY" or len(data) < 10:
        raise IdFileError("%s: not a .npy file" % path)
    major = data[6]
    if major == 1:
        (hlen,), start = struct.unpack("<H", data[8:10]), 10
    elif major in (2, 3):
        (hlen,), start = struct.unpack("<I", data[8:12]), 12
    else:
        raise IdFileError("%s: unsupported .npy version %d" % (path, major))
    try:
        header = ast.literal_eval(data[start : start + hlen].decode("latin-1"))
        descr, shape = header["descr"], tuple(header["shape"])
    except (ValueError, SyntaxError, KeyError, TypeError, MemoryError):
        raise IdFileError("%s: malformed .npy header" % path)
    if sum(1 for s in shape if s != 1) > 1:
        raise IdFileError("%s: expected a 1-D array, shape %r" % (path, shape))
    if not isinstance(descr, str) or descr[1:] not in _NPY_KINDS or descr[:1] not in "<>|=":
        raise IdFileError("%s: expected an integer array, dtype %r" % (path, descr))
    n = 1
    for s in shape:
        n *= s
    code = _typecode(descr[1] == "i", int(descr[2:]))
    body = data[start + hlen :]
    size = n * array(code).itemsize
    if len(body) < size:
        raise IdFileError(
            "%s: truncated: the header says %d ids, the file holds %d bytes of them" % (path, n, len(body))
        )
    big = descr[0] == ">" or (descr[0] == "=" and _BIG_ENDIAN)
    return _array_from(body[:size], code, big != _BIG_ENDIAN, path)


def read_text_ids(path, data=None):
    """Ids written as text: a JSON list or whitespace-separated integers."""
    if data is None:
        data = _read_bytes(path)
    try:
        text = data.decode("utf-8").strip()
        ids = json.loads(text) if text.startswith("[") else [int(x) for x in text.split()]
    except ValueError:
        raise IdFileError("%s: expected a .npy array, a JSON list or whitespace-separated integers" % path)
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise IdFileError("%s: expected a flat list of integers" % path)
    return ids
