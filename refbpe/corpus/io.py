"""Bytes in: open inputs and cut them where cutting cannot change the result.

Counting chunks separately and adding the counts equals counting the whole
input when every cut ``c`` satisfies both:

1. The pieces on both sides of ``c`` are the same whether or not the text
   is cut there: the split pattern's rule (``Pattern.cut_points``, each
   pattern's argued in ``pretokenize.cuts``) puts a candidate at ``c``, or a
   special token's bytes start at ``c``.
2. No occurrence of any special token straddles ``c``.  Then every
   special-token match before ``c`` ends by ``c``, leftmost-first matching of
   the text before ``c`` is unchanged, and the text after ``c`` is matched as if
   it were a new input.

Both are decided from at most one special-token length of bytes on either
side of ``c``, so the cuts of a file are found by small reads near chosen
offsets (``find_cut_in_file``) and workers then read their own ranges; streams
are cut as they are read (``iter_chunks``), in this process, one chunk in
memory at a time, and the chunks travel to the workers.  A stream is any input
that is not a regular file: ``-`` (stdin), ``*.gz``, and a path to a pipe, a
FIFO, a process substitution (``<(cmd)``, ``/dev/fd/N``), ``/dev/stdin``, a
character device or a ``/proc`` file, whose ``stat`` size (0, or a guess) says
nothing about its length (``input_size`` is None for all of them).  Such a
path is opened once and read sequentially to its end, never sized, sought or
reopened, so it gives the result the same bytes in a file give.  Cuts are
at ASCII bytes or at a special token's first byte, never inside a UTF-8
sequence, so decoding a chunk (strictly, or with ``replace``/``ignore``) gives
the characters that decoding the whole input gives there.  A stretch with no
cut point (no newline or tab and no special token) just makes a larger chunk.

A pattern given as a regex (``Pattern.from_regex``) has the rule-1 candidates
derived from it (``pretokenize.regex_cuts``), or none: then its texts are cut
at special tokens and between inputs only.
"""

import gzip
import os
import stat
import sys
import zlib

from ..pretokenize.cuts import WHITESPACE_CUT
from ..pretokenize.patterns import get_pattern

__all__ = [
    "open_input",
    "input_size",
    "is_stream",
    "can_reread",
    "iter_chunks",
    "stream_chunks",
    "InputError",
    "parse_size",
    "next_cut",
    "find_cut_in_file",
    "cut_points",
]


def cut_points(pattern=None):
    """The compiled search for rule-1 cut candidates under split pattern ``pattern``
    (a name or key; its ``Pattern.cut_points``).  The rules read only ASCII
    whitespace and digits, which every Unicode version agrees on."""
    return get_pattern(pattern).cut_points


def parse_size(text):
    """'64M' -> 67108864; accepts a plain integer and the suffixes K, M, G."""
    s = str(text).strip().upper()
    if s.endswith("B"):
        s = s[:-1]
    scale = 1
    if s and s[-1] in "KMG":
        scale = 1024 ** ("KMG".index(s[-1]) + 1)
        s = s[:-1]
    try:
        value = int(s) * scale
    except ValueError:
        raise ValueError("invalid size %r (expected e.g. 4194304, 512K, 4M, 1G)" % (text,))
    if value <= 0:
        raise ValueError("size must be positive, got %r" % (text,))
    return value


def open_input(path):
    """A binary stream for ``path``: ``-`` is stdin, ``*.gz`` is decompressed."""
    if path == "-":
        return sys.stdin.buffer
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def input_size(path):
    """Bytes to read from ``path``, or None when it is a stream (``is_stream``)."""
    if is_stream(path):
        return None
    return os.path.getsize(path)


def can_reread(path):
    """True when ``path`` can be opened and read again with the same result (not a pipe or stdin)."""
    return path != "-" and (path.endswith(".gz") or not is_stream(path))


def is_stream(path):
    """True for an input read only sequentially: ``-``, ``*.gz``, and anything but a
    regular file (a pipe, FIFO, ``/dev/stdin``, a device, a ``/proc`` file)."""
    if path == "-" or path.endswith(".gz"):
        return True
    try:
        st = os.stat(path)
    except OSError:
        return False  # opening it names the error
    return not stat.S_ISREG(st.st_mode) or _is_per_process(path)


def _is_per_process(path):
    """A ``/proc`` file (regular, but its ``stat`` size is 0 whatever it holds) or a
    ``/dev`` name such as ``/dev/stdin`` that means another file in a worker process."""
    names = (os.path.abspath(path), os.path.realpath(path))
    return names[0].startswith(("/proc/", "/dev/")) or names[1].startswith("/proc/")


def is_safe_cut(buf, c, specials):
    """True when no special token occurrence in ``buf`` straddles ``c``."""
    for t in specials:
        if len(t) > 1:
            s = buf.find(t, max(0, c - len(t) + 1), c + len(t) - 1)
            if 0 <= s < c:
                return False
    return True


def next_cut(buf, pos, specials, at_end=False, cuts=WHITESPACE_CUT):
    """The first safe cut ``c >= max(pos, 1)`` in ``buf``, or -1.

    A cut needs one special-token length of context after it; unless
    ``at_end`` (``buf`` ends where the input ends), candidates too close to the
    end of ``buf`` are not decided and -1 is returned.  ``buf`` must begin at
    the start of the input or at least that much context before ``pos``.
    """
    longest = max([len(t) for t in specials] or [1])
    limit = len(buf) if at_end else len(buf) - longest + 1
    pos = max(pos, 1)
    while pos < limit:
        m = cuts.search(buf, pos - 1, limit)
        c = m.end() if m else len(buf)
        for t in specials:
            s = buf.find(t, pos, min(c, limit) - 1 + len(t))
            if s != -1 and s < c:
                c = s
        if c >= limit:
            return -1
        if is_safe_cut(buf, c, specials):
            return c
        pos = c + 1
    return -1


def find_cut_in_file(f, offset, size, specials, block=1 << 16, cuts=WHITESPACE_CUT):
    """The first safe cut at or after ``offset`` in the open file ``f`` (or ``size``)."""
    if offset <= 0:
        return 0
    if offset >= size:
        return size
    longest = max([len(t) for t in specials] or [1])
    start = max(0, offset - longest - 2)
    f.seek(start)
    buf = b""
    while True:
        more = f.read(block)
        buf += more
        at_end = start + len(buf) >= size or not more
        c = next_cut(buf, offset - start, specials, at_end, cuts)
        if c != -1:
            return start + c
        if at_end:
            return size
        block *= 2


class InputError(ValueError):
    """Bad input (for example invalid UTF-8 under ``errors="strict"``)."""


def stream_chunks(source, chunk_size, specials=(), read_size=None, cuts=WHITESPACE_CUT):
    """``iter_chunks`` of the stream ``source`` (``-`` or ``*.gz``), which is closed at the end;
    corrupt gzip data is an ``InputError`` naming the source."""
    stream = open_input(source)
    try:
        chunks = iter_chunks(stream, chunk_size, specials, read_size, cuts)
        while True:
            try:
                offset, chunk = next(chunks)
            except StopIteration:
                return
            except (EOFError, zlib.error, gzip.BadGzipFile) as e:
                raise InputError("%s: corrupt or truncated gzip data (%s)" % (source, e))
            yield offset, chunk
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def iter_chunks(stream, chunk_size, specials=(), read_size=None, cuts=WHITESPACE_CUT):
    """Yield ``(offset, chunk)`` pairs covering ``stream``, each cut safely.

    A chunk ends at the first safe cut at or after ``chunk_size`` bytes
    (``specials`` are the special tokens as bytes).  Reads are ``read_size``
    bytes; a special token or UTF-8 sequence that straddles a read is seen
    whole because cuts are only decided with context after them.
    """
    read_size = read_size or chunk_size
    buf = b""
    offset = 0
    searched = 0  # no cut lies in buf[chunk_size:searched]
    eof = False
    while not eof:
        block = stream.read(read_size)
        if block:
            buf += block
        else:
            eof = True
        while len(buf) > chunk_size:
            c = next_cut(buf, max(chunk_size, searched), specials, at_end=eof, cuts=cuts)
            if c == -1:
                searched = max(chunk_size, len(buf) - max([len(t) for t in specials] or [1]))
                break
            yield offset, buf[:c]
            offset += c
            buf = buf[c:]
            searched = 0
    if buf:
        yield offset, buf
