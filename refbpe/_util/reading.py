"""Reading an input that may never end (``/dev/zero``, a pipe) in bounded memory.

``bounded_lines`` yields the lines of a line-based file (word counts, traces), reading each in
64 KiB pieces: a line whose first piece does not look like the format's is yielded at once,
for the caller's parser to refuse by its line number, so a binary or endless input stops at
its first bytes; a line that looks right is read on up to ``longest`` bytes, past which it is
an error.  ``read_whole`` reads a file meant to be held whole (ids, a text to show) in 1 MiB
chunks, checks the first chunk before reading on, and refuses a stream past ``STREAM_LIMIT``.
Cost: one pass; memory at most one line (``longest``) or the file (``STREAM_LIMIT`` for a
stream).
"""

import contextlib
import sys

__all__ = ["STREAM_LIMIT", "bounded_lines", "open_binary", "read_whole"]

LONGEST_LINE = 1 << 30  # bytes: a line of a counts or trace file holds one word, escaped
STREAM_LIMIT = 1 << 30  # bytes of a pipe or device read whole into memory at most
_PIECE = 1 << 16
_CHUNK = 1 << 20


@contextlib.contextmanager
def open_binary(path):
    """``path`` opened for reading bytes; ``-`` is stdin (left open at the end)."""
    if path == "-":
        yield sys.stdin.buffer
    else:
        with open(path, "rb") as f:
            yield f


def bounded_lines(f, name, looks_right, longest=LONGEST_LINE):
    """The lines of binary file ``f`` (``name`` in messages), each read on only when
    ``looks_right(its first piece)``; a ValueError for a line over ``longest`` bytes."""
    lineno = 0
    while True:
        first = f.readline(_PIECE)
        if not first:
            return
        lineno += 1
        if first.endswith(b"\n") or not looks_right(first):
            yield first
            continue
        parts, size = [first], len(first)
        while not parts[-1].endswith(b"\n"):
            more = f.readline(_PIECE)
            if not more:
                break
            parts.append(more)
            size += len(more)
            if size > longest:
                raise ValueError("%s:%d: a line of over %d bytes; not read further" % (name, lineno, longest))
        yield b"".join(parts)


def read_whole(f, name, check_first=None, limit=None):
    """All bytes of binary file ``f``: ``check_first(first chunk)`` runs before the rest is read
    (it raises to stop there); past ``limit`` bytes (None: no limit) a ValueError."""
    chunks, size = [], 0
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        if not chunks and check_first is not None:
            check_first(chunk)
        size += len(chunk)
        if limit is not None and size > limit:
            raise ValueError(
                "%s: more than %d MiB from a stream, the most read whole into memory; not read further"
                % (name, limit >> 20)
            )
        chunks.append(chunk)
