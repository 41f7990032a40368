"""Atomic file writes: readers see all of a file or none of it.

Each file is written in full to a temporary name beside its target (same
directory, so the rename cannot cross a filesystem), flushed and fsynced, then
renamed over the target with ``os.replace``.  Several files written together
are renamed only once all of them are on disk, so a failure part-way (a full
disk, an interrupt) leaves every previous output as it was and no temporary
file behind.  A piece of 64 KB or more goes straight to the raw file, uncopied
(``_write_piece``): a model of megabyte-long tokens is written at the speed of the
page cache.

What is at the path decides what is replaced (``output_target``):

- a regular file, or nothing: replaced by the rename; an existing file keeps
  its permission bits (a new one is 0644);
- a symlink: followed, so its target is replaced and the link stays a link;
- a device, FIFO or socket: never replaced.  The bytes are staged in the
  system's temporary directory and copied into it, opened for writing, when
  the files are committed (``-o /dev/null``, ``-o /dev/stdout`` and a FIFO
  work; a stream cannot be taken back, so streams are written first and a
  failure there leaves every regular target unchanged).

``outputs_together`` makes one commit of every file a command writes: inside
it, each writer stages its files and nothing is replaced until the block ends
normally; when any write fails (or the block raises), every staged file is
removed, none of the old files change, and directories that the block's
caller named and that did not exist before are removed again when empty.
"""

import contextlib
import errno
import os
import shutil
import stat
import tempfile

__all__ = [
    "WriteError",
    "atomic_write",
    "atomic_write_many",
    "atomic_stream",
    "chunked",
    "commit_temporary",
    "discard_temporary",
    "missing_directories",
    "open_temporary",
    "outputs_together",
    "remove_empty_directories",
]


class WriteError(OSError):
    """An output that could not be written; nothing was replaced."""

    def __str__(self):
        return self.strerror


_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS, errno.EPIPE)
_BATCHES = []  # the staged files of each open ``outputs_together`` block, innermost last


def output_target(path):
    """``(target, stream)``: the path a write to ``path`` goes to (symlinks followed)
    and whether it is a device, FIFO or socket, written in place rather than replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return os.path.realpath(path), False
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return os.path.realpath(path), False
    return path, True  # opened by its own name: /dev/stdout's link names no file


def _unchanged():
    return "the previous files are unchanged" if _BATCHES else "it is unchanged"


def _failed(path, e, unchanged):
    return WriteError(e.errno, "cannot write %s (%s); %s" % (path, e.strerror or e, unchanged))


def open_temporary(path):
    """``(file, temporary name)``: a new binary file to stage ``path`` in (beside its
    target, or in the temporary directory when the target is a stream); a failure
    is a ``WriteError`` naming ``path``."""
    target, stream = output_target(path)
    directory = tempfile.gettempdir() if stream else os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=directory)
    except OSError as e:
        raise _failed(path, e, _unchanged())
    return os.fdopen(fd, "wb"), tmp


def discard_temporary(tmp):
    try:
        os.unlink(tmp)
    except OSError:
        pass


def commit_temporary(tmp, path):
    """Put the finished, closed temporary file ``tmp`` in place of ``path`` now, or when
    the enclosing ``outputs_together`` block ends."""
    if _BATCHES:
        _BATCHES[-1].append((tmp, path))
    else:
        _commit_all([(tmp, path)], "it is unchanged")


def _commit_all(staged, unchanged):
    """Streams first (they cannot be taken back), then the renames; on a failure the
    temporary files not yet committed are removed."""
    order = sorted(staged, key=lambda item: not output_target(item[1])[1])
    done = 0
    try:
        for tmp, path in order:
            try:
                _commit_one(tmp, path)
            except OSError as e:
                raise _failed(path, e, unchanged if done == 0 else "the outputs before it were written")
            done += 1
    finally:
        for tmp, _ in order[done:]:
            discard_temporary(tmp)


def _commit_one(tmp, path):
    target, stream = output_target(path)
    if stream:
        with open(tmp, "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        os.unlink(tmp)
        return
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mode = 0o644
    os.chmod(tmp, mode)
    os.replace(tmp, target)


@contextlib.contextmanager
def outputs_together(directories=()):
    """Every file written inside the block is committed when it ends, all together;
    on any failure none is and ``directories`` made since it began are removed when empty."""
    missing = missing_directories(directories)
    staged = []
    _BATCHES.append(staged)
    try:
        yield
    except BaseException:
        _BATCHES.pop()
        for tmp, _ in staged:
            discard_temporary(tmp)
        remove_empty_directories(missing)
        raise
    _BATCHES.pop()
    if _BATCHES:  # nested: the outer block commits
        _BATCHES[-1].extend(staged)
        return
    try:
        _commit_all(staged, "the previous files are unchanged")
    except BaseException:
        remove_empty_directories(missing)
        raise


def missing_directories(directories):
    """The directories among ``directories`` and their ancestors that do not exist, deepest first."""
    missing = []
    for d in directories:
        d = os.path.abspath(d)
        while d and not os.path.exists(d) and d not in missing:
            missing.append(d)
            d = os.path.dirname(d)
    return sorted(missing, key=len, reverse=True)


def remove_empty_directories(directories):
    """Remove each of ``directories`` (deepest first, as ``missing_directories`` gives them)
    that is empty; one that is not, or cannot be removed, stays."""
    for d in directories:
        try:
            os.rmdir(d)
        except OSError:
            pass


def atomic_write(path, data):
    """Write ``data`` (bytes, or an iterable of bytes: written as they come, never
    joined in memory) to ``path`` so readers see all of it or none."""
    atomic_write_many({path: data})


def atomic_write_many(files):
    """Write several files ``{path: bytes or iterable of bytes}`` so that each is all old or all new."""
    unchanged = "the previous files are unchanged" if len(files) > 1 else _unchanged()
    staged = []
    try:
        for path, data in files.items():
            try:
                staged.append((_write_temporary(path, data), path))
            except WriteError:
                raise
            except OSError as e:
                raise _failed(path, e, unchanged)
    except BaseException:
        for tmp, _ in staged:
            discard_temporary(tmp)
        raise
    if _BATCHES:
        _BATCHES[-1].extend(staged)
    else:
        _commit_all(staged, unchanged)


def _write_temporary(path, data):
    """Write ``data`` to a new temporary file for ``path`` (``open_temporary``), fsynced;
    its name (the file is removed again when that fails part-way)."""
    f, tmp = open_temporary(path)
    try:
        with f:
            if isinstance(data, (bytes, bytearray, memoryview)):
                _write_piece(f, data)
            else:
                for chunk in data:
                    _write_piece(f, chunk)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        discard_temporary(tmp)
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
    """A binary file to write ``path`` in pieces: put in place (``commit_temporary``)
    when the block ends normally, removed (the target untouched) when it raises or is
    interrupted; a failed write is a ``WriteError`` naming ``path``."""
    f, tmp = open_temporary(path)
    try:
        with f:
            try:
                yield f
                f.flush()
                os.fsync(f.fileno())
            except OSError as e:
                if isinstance(e, WriteError) or e.errno not in _WRITE_ERRNOS:
                    raise  # not the output's (an input that cannot be read, say)
                raise _failed(path, e, _unchanged())
    except BaseException:
        discard_temporary(tmp)
        raise
    commit_temporary(tmp, path)


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
