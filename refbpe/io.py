"""Bytes in: open inputs and cut them into chunks that count independently.

A cut is only made where it cannot change the result, so counting chunks
separately and adding the counts equals counting the whole input:

* at the start of a special-token occurrence: the text before it ends a
  segment, and nothing merges across a special token anyway;
* inside a stretch without one, right after a whitespace byte other than
  U+0020 (``\\t \\n \\v \\f \\r``) that is followed by a non-whitespace ASCII byte.
  The GPT-2 pattern always starts a new piece there: a whitespace run leaves
  its last character, which is not a space and so does not glue onto the next
  word, as a piece of its own, and matches never look behind.

Both kinds of cut are at ASCII bytes or at the first byte of a special token,
never inside a UTF-8 sequence, so decoding a chunk (strictly, or with
``replace``/``ignore``) gives the same characters as decoding the whole input.
Candidates are only taken at least one special-token length before the end of
what has been read, so a special token or a UTF-8 sequence straddling a read
boundary is seen whole.  A stretch with no cut point at all (no newline and no
special token) simply makes a larger chunk.
"""

import gzip
import os
import sys

from .pretokenize import CLASS_OF, SPACE

__all__ = ["open_input", "input_size", "iter_chunks", "parse_size"]

_SAFE_WHITESPACE_BYTES = (b"\n", b"\r", b"\t", b"\x0b", b"\x0c")


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
    """Bytes to read from ``path``, or None when unknown (stdin, gzip)."""
    if path == "-" or path.endswith(".gz"):
        return None
    return os.path.getsize(path)


def _find_cut(buf, limit, special_re):
    """The last safe cut position in ``buf[1:limit]``, or 0 when there is none.

    Every special-token match that starts before ``limit`` must lie wholly in
    ``buf`` (the caller keeps ``limit`` a special-token length from the end),
    so the matches found here are the ones the whole input has.
    """
    last_start = last_end = 0
    if special_re is not None:
        for m in special_re.finditer(buf):
            if m.start() >= limit:
                break
            last_start, last_end = m.start(), m.end()
        if last_start > 0:
            return last_start
    # No special token starts in buf[1:limit]; one may span buf[0:last_end].
    hi = limit - 1
    lo = max(last_end, 1) - 1
    while hi > lo:
        pos = max([buf.rfind(c, lo, hi) for c in _SAFE_WHITESPACE_BYTES])
        if pos < 0:
            return 0
        nxt = buf[pos + 1]
        if nxt < 0x80 and CLASS_OF[nxt] != SPACE:
            return pos + 1
        hi = pos
    return 0


def iter_chunks(stream, chunk_size, special_re=None, max_special_len=0, read_size=None):
    """Yield ``(offset, chunk)`` pairs covering the stream, cut where safe.

    ``special_re`` is the bytes pattern of the special tokens (or None);
    chunks are about ``chunk_size`` bytes; reads are ``read_size`` bytes.
    """
    read_size = read_size or chunk_size
    buf = b""
    offset = 0
    eof = False
    while not eof:
        block = stream.read(read_size)
        if not block:
            eof = True
        else:
            buf += block
        while len(buf) >= chunk_size or (eof and buf):
            if eof:
                cut = len(buf)
            else:
                # Cuts must leave a whole special token (and a whole UTF-8
                # sequence, at most 4 bytes) visible after them.
                limit = len(buf) - max(max_special_len, 4)
                cut = _find_cut(buf, min(limit, chunk_size), special_re)
                if cut == 0:
                    cut = _find_cut(buf, limit, special_re) if limit > chunk_size else 0
                if cut == 0:
                    break  # no safe cut yet: read more
            yield offset, buf[:cut]
            offset += cut
            buf = buf[cut:]
