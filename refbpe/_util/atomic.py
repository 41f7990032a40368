"""Atomic file writes: readers see all of a file or none of it.

Each file is written in full to a temporary name beside its target (same
directory, so the rename cannot cross a filesystem), flushed and fsynced, then
renamed over the target with ``os.replace``.  Several files written together
are renamed only once all of them are on disk, so a failure part-way (a full
disk, an interrupt) leaves every previous output as it was and no temporary
file behind.  A piece of 64 KB or more goes straight to the raw file, uncopied
(``_write_piece``): a model of megabyte-long tokens is written at the speed of the
page cache.
"""

import contextlib
import os
import tempfile

__all__ = ["atomic_write", "atomic_write_many", "atomic_stream", "chunked"]


class WriteError(OSError):
    """An output that could not be written; nothing was replaced."""

    def __str__(self):
        return self.strerror


def atomic_write(path, data):
    """Write ``data`` (bytes, or an iterable of bytes: written as they come, never
    joined in memory) to ``path`` so readers see all of it or none."""
    atomic_write_many({path: data})


def atomic_write_many(files):
    """Write several files ``{path: bytes or iterable of bytes}`` so that each is all old or all new."""
    staged = []
    try:
        for path, data in files.items():
            try:
                staged.append((_write_temporary(path, data), path))
            except OSError as e:
                unchanged = "the previous files are unchanged" if len(files) > 1 else "it is unchanged"
                raise WriteError(e.errno, "cannot write %s (%s); %s" % (path, e.strerror or e, unchanged))
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise


def _write_temporary(path, data):
    """Write ``data`` to a new temporary file beside ``path``, fsynced; its name
    (the file is removed again when that fails part-way)."""
    fd, tmp = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=os.path.dirname(os.path.abspath(path))
    )
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, (bytes, bytearray, memoryview)):
                _write_piece(f, data)
            else:
                for chunk in data:
                    _write_piece(f, chunk)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


# Pieces this large go to the raw file: PyPy's buffered ``write`` copies its argument
# into fresh memory first, a page fault every 4 KB (perf/micro.py write-large: 160 MB in
# 20 MB pieces, 0.04 s of CPU written raw against 0.13 s buffered; CPython the same both ways).
_RAW_PIECE = 1 << 16
# ... and in slices of this size: PyPy copies what a system call writes into a buffer of
# its size, and a buffer of many megabytes is fresh memory each time, whose first touch
# costs the kernel dearly on a virtual machine (perf/adversarial.py --families run1
# --scales 1 --only train: the write of 20 MB of one letter's 344 MB model, 1.6-4.6 s in
# one write per piece, 0.9 s in 1 MB slices).
_RAW_SLICE = 1 << 20


def _write_piece(f, data):
    """``f.write(data)``, a large ``data`` written past the buffer, uncopied, a slice at a time."""
    if len(data) < _RAW_PIECE:
        f.write(data)
        return
    f.flush()
    view = memoryview(data)
    done = 0
    while done < len(data):  # a short write (a full disk raises instead) goes on from where it stopped
        done += f.raw.write(view[done : done + _RAW_SLICE])


@contextlib.contextmanager
def atomic_stream(path):
    """A binary file to write ``path`` in pieces: renamed into place when the block
    ends normally, removed (the target untouched) when it raises or is interrupted."""
    fd, tmp = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=os.path.dirname(os.path.abspath(path))
    )
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def chunked(pieces, size=1 << 16):
    """``pieces`` (bytes) gathered into chunks of about ``size`` bytes (few writes);
    a piece that large goes out as it is, never copied."""
    batch, held = [], 0
    for piece in pieces:
        if len(piece) >= size:
            if batch:
                yield b"".join(batch)
                batch, held = [], 0
            yield piece
            continue
        batch.append(piece)
        held += len(piece)
        if held >= size:
            yield b"".join(batch)
            batch, held = [], 0
    if batch:
        yield b"".join(batch)
