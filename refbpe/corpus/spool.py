"""Work and results of refbpe's own process pool travel through files.

``ProcessPoolExecutor`` sends every argument and result through a pipe.  A
message larger than the pipe's atomic size (4 KiB) is written in several
pieces, and a worker killed part-way through one (the OOM killer, a stray
``kill -9``) leaves a torn message: the pool's manager thread then waits for
the rest of it forever, and the run hangs instead of failing.  (Seen under
PyPy 3.9 about one time in six when a worker was killed; CPython 3.11 has the
same code path.  Results of a 1 MiB chunk are about 0.5 MB.)

So the pool's messages are kept small: a worker writes its packed counts
(``count.pack_counts``) to a file in a private spool directory and returns
the file's name (or, claiming its own units, ``claims``, publishes it there
under the unit's number: written under another name, then renamed), and a
chunk read from a stream (stdin, gzip) goes to the worker the same way.  A
dead worker then only ever stops between messages, and the pool notices it
through its process sentinel (measured: 0 hangs in 70 runs with a worker
killed, against 2 in 12 before, by running tests/test_robustness.py's
killed-worker test 70 times).  The files live in the page cache for the
moment between write and read, and the pool's pickling of large results is
gone: english_medium with 2 PyPy workers counts in 1.9-2.2 s against 2.2-2.5
s through the pipe on a quiet machine (perf/micro.py spool-vs-pipe; it also
prints the CPU seconds of all processes, 5% fewer through the spool).  The
directory is removed when the run ends, however it ends
(``pool.pool_session``).

The spool is a pure transport: it knows files and packed parts, not what a
worker computes (``pool.submit`` passes the work units' functions to
``run_spooled``; encoding's results, id arrays, travel the same way).

The file format is private to one run: five fields, each one byte of kind
(an ``array`` typecode, ``B`` for bytes, ``T`` for decimal text, used for
counts beyond 2**63), an 8-byte little-endian length, then the payload.
"""

import os
import shutil
import struct
import tempfile
from array import array

__all__ = ["SpoolDirectory", "run_spooled", "publish", "ready", "take_chunk", "take"]

_LENGTH = struct.Struct("<Q")

PARENT = None  # where spool directories are made; None: the system's temporary directory


class SpoolDirectory(object):
    """A private temporary directory, removed on ``close``."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="refbpe-spool-", dir=PARENT)

    def put(self, data):
        """Write ``data`` (bytes) to a new file here; its path."""
        fd, path = tempfile.mkstemp(dir=self.path, suffix=".chunk")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return path

    def close(self):
        shutil.rmtree(self.path, ignore_errors=True)


def run_spooled(directory, func, args):
    """In a worker: ``func(*args)`` (packed counts), written to a file of ``directory``; its path."""
    return _write(directory, func(*args), ".counts")


READY = ".ready"  # the suffix of a file ``publish`` has finished


def publish(directory, packed, name):
    """In a worker: ``packed`` written to ``directory/name + READY``, whole when it appears
    there (written under another name, then renamed: ``ready`` lists only whole files)."""
    path = os.path.join(directory, name + READY)
    os.rename(_write(directory, packed, ".part"), path)
    return path


def ready(directory):
    """The paths of the files ``publish``-ed to ``directory`` and not yet taken, by name."""
    names = sorted(n for n in os.listdir(directory) if n.endswith(READY))
    return [os.path.join(directory, n) for n in names]


def _write(directory, packed, suffix):
    fd, path = tempfile.mkstemp(dir=directory, suffix=suffix)
    with os.fdopen(fd, "wb") as f:
        for part in packed:
            kind, payload = _encode_part(part)
            f.write(kind + _LENGTH.pack(len(payload)))
            f.write(payload)
    return path


def take_chunk(path):
    """In a worker: the bytes spooled to ``path`` by ``SpoolDirectory.put``, which is then removed."""
    with open(path, "rb") as f:
        chunk = f.read()
    os.unlink(path)
    return chunk


def take(path):
    """The packed counts in the file at ``path``, which is then removed."""
    parts = []
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    pos = 0
    while pos < len(data):
        kind = data[pos : pos + 1]
        (n,) = _LENGTH.unpack_from(data, pos + 1)
        pos += 1 + _LENGTH.size
        parts.append(_decode_part(kind, data[pos : pos + n]))
        pos += n
    return tuple(parts)


def _encode_part(part):
    if isinstance(part, bytes):
        return b"B", part
    if isinstance(part, array):
        return part.typecode.encode("ascii"), part.tobytes()
    return b"T", " ".join(str(v) for v in part).encode("ascii")  # ints beyond 64 bits


def _decode_part(kind, payload):
    if kind == b"B":
        return payload
    if kind == b"T":
        return [int(v) for v in payload.split()]
    values = array(kind.decode("ascii"))
    values.frombytes(payload)
    return values
