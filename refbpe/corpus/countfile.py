"""Word-count files: the pre-token counts of a corpus, as text.

Format (``NAME.counts.tsv``, or ``NAME.counts.tsv.gz`` compressed):

* one line per word (pre-token): ``count<TAB>escaped bytes<LF>``;
* ``count`` is a decimal integer of any size (Python ints: no overflow);
* the word's bytes are escaped so that the file is pure ASCII and any byte
  survives: ``\\\\`` for a backslash, ``\\t``, ``\\n``, ``\\r``, ``\\xNN`` (two
  lower-case hex digits) for every other byte outside 0x20-0x7E; a space is
  written as itself (a line is split at its first tab, so leading and
  trailing spaces are kept);
* lines are sorted by the raw bytes of the word, each word once, no zero
  counts; so equal tables give byte-identical files;
* readers skip empty lines and lines starting with ``#``, add up a word seen
  twice, skip zero counts, and accept upper-case hex digits and a CRLF end;
* a split pattern other than GPT-2's is recorded in a first line
  ``# pattern: NAME`` (``NAME`` escaped as a word), which ``train --counts``
  reads back when not given ``--pattern``.

A file counted with another split pattern than GPT-2's on the latest Unicode
table starts with a comment naming it, ``# pattern: KEY`` (a pattern key,
``patterns.pattern_key``: ``llama3@16.0.0``); ``read_counts_pattern`` reads it.

A ``.gz`` file is written with a fixed header (no name, mtime 0), so its bytes
depend only on the table (and the zlib build).  Errors name the file and line.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import zlib
from typing import Dict, Optional, Union

from .._util.atomic import atomic_write
from .._util.quoting import quote
from .._util.reading import bounded_lines

__all__ = [
    "escape_word",
    "unescape_word",
    "counts_tsv",
    "write_counts",
    "read_counts",
    "read_counts_pattern",
    "sum_counts",
    "is_counts_path",
]

PATTERN_LINE = "# pattern: "

_ESCAPES = {0x5C: "\\\\", 0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
# For str.translate over the word decoded as Latin-1: one code point per byte.
_ESCAPE_TABLE = {}
for _b in range(256):
    if _b in _ESCAPES:
        _ESCAPE_TABLE[_b] = _ESCAPES[_b]
    elif not 0x20 <= _b <= 0x7E:
        _ESCAPE_TABLE[_b] = "\\x%02x" % _b
del _b

_SIMPLE = {"\\": 0x5C, "t": 0x09, "n": 0x0A, "r": 0x0D}
_HEX = frozenset("0123456789abcdefABCDEF")


def escape_word(word):
    """bytes -> the ASCII escaped form used in word-count files."""
    return word.decode("latin-1").translate(_ESCAPE_TABLE)


def unescape_word(text):
    """The escaped form -> bytes (ValueError when malformed)."""
    if "\\" not in text and text.isascii() and text.isprintable():
        return text.encode("ascii")  # the common case: nothing escaped
    out = bytearray()
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "\\":
            o = ord(c)
            if o < 0x20 or o > 0x7E:
                raise ValueError("unescaped character %s" % quote(c))
            out.append(o)
            i += 1
            continue
        if i + 1 >= n:
            raise ValueError("a lone backslash at the end")
        e = text[i + 1]
        if e in _SIMPLE:
            out.append(_SIMPLE[e])
            i += 2
        elif e == "x":
            h = text[i + 2 : i + 4]
            if len(h) != 2 or not _HEX.issuperset(h):
                raise ValueError("bad \\x escape %s" % quote(text[i : i + 4]))
            out.append(int(h, 16))
            i += 4
        else:
            raise ValueError("unknown escape \\%s" % e)
    return bytes(out)


def counts_tsv(word_counts):
    """The word-count file text for {bytes: count}: sorted by bytes, deterministic."""
    return "".join(
        ["%d\t%s\n" % (word_counts[w], escape_word(w)) for w in sorted(word_counts) if word_counts[w] > 0]
    )


def is_gzip_path(path):
    return str(path).endswith(".gz")


def is_counts_path(path):
    """True for the conventional names ``*.counts.tsv`` and ``*.counts.tsv.gz``."""
    return str(path).endswith((".counts.tsv", ".counts.tsv.gz"))


def gzip_bytes(data):
    """``data`` gzip-compressed with a fixed header: the same bytes every time."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="", compresslevel=6) as f:
        f.write(data)
    return buf.getvalue()


def write_counts(
    path: Union[str, os.PathLike], word_counts: Dict[bytes, int], pattern: Optional[str] = None
) -> None:
    r"""Write ``{bytes: count}`` to ``path`` atomically (gzip-compressed for ``*.gz``).

    ``pattern``, the split pattern's key (a name, ``name@version``, or a custom
    ``regex:...``), is recorded in a first comment line ``# pattern: KEY``
    (escaped as a word), unless it is GPT-2's (the default).
    Cost: O(W log W) for W words (the sort), plus their total length.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "c.counts.tsv")
    ...     write_counts(path, {b"low": 5, b" new\n": 2, b"\xe2\x82\xac": 1})
    ...     open(path).read().splitlines()
    ['2\t new\\n', '5\tlow', '1\t\\xe2\\x82\\xac']
    """
    head = ""
    if pattern not in (None, "gpt2"):
        head = "%s%s\n" % (PATTERN_LINE, escape_word(pattern.encode("utf-8")))
    data = (head + counts_tsv(word_counts)).encode("ascii")
    atomic_write(str(path), gzip_bytes(data) if is_gzip_path(path) else data)


def read_counts_pattern(path):
    """The split pattern's key a word-count file records (``# pattern: KEY``), or None (also for
    ``-``, stdin, which is read once, by ``read_counts``)."""
    if path == "-":
        return None
    f = gzip.open(path, "rb") if is_gzip_path(path) else open(path, "rb")
    try:
        for raw in bounded_lines(f, path, lambda start: start.startswith(b"#")):
            line = raw.decode("ascii", "replace").rstrip("\r\n")
            if not line.startswith("#"):
                return None
            if line.startswith(PATTERN_LINE):
                return unescape_word(line[len(PATTERN_LINE) :]).decode("utf-8")
    except (OSError, EOFError, zlib.error, ValueError, UnicodeDecodeError):
        return None  # reading the counts reports a damaged file, with its line
    finally:
        f.close()
    return None


def read_counts(
    path: Union[str, os.PathLike], *, into: Optional[Dict[bytes, int]] = None
) -> Dict[bytes, int]:
    r"""{bytes: count} from a word-count file, added to ``into`` when given.

    ValueError naming the file and line when malformed (or not gzip data
    under a ``.gz`` name).  Cost: O(file size).

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "c.counts.tsv.gz")
    ...     write_counts(path, {b"low": 5, b" new\n": 2})
    ...     read_counts(path)
    {b' new\n': 2, b'low': 5}
    """
    counts = {} if into is None else into
    get = counts.get
    lineno = 0
    if path == "-":
        f = gzip.GzipFile(fileobj=sys.stdin.buffer) if _gzip_magic_on_stdin() else _Unclosed(sys.stdin.buffer)
    else:
        f = gzip.open(path, "rb") if is_gzip_path(path) else open(path, "rb")
    try:
        for lineno, raw in enumerate(bounded_lines(f, path, _looks_like_counts), 1):
            count, sep, word = raw.partition(b"\t")
            if not sep:
                if raw.strip() and not raw.startswith(b"#"):
                    raise ValueError("%s:%d: expected count<TAB>escaped bytes" % (path, lineno))
                continue
            if count.startswith(b"#"):
                continue
            try:
                if not count.isdigit():
                    raise ValueError("bad count %s (expected a non-negative decimal integer)" % quote(count))
                c = int(count)
                w = _parse_word(word)
            except ValueError as e:
                raise ValueError("%s:%d: %s" % (path, lineno, e))
            if c:
                counts[w] = get(w, 0) + c
    except (OSError, EOFError, zlib.error) as e:
        # Corrupt or truncated gzip data: say where reading stopped.
        raise ValueError("%s: unreadable after line %d: %s" % (path, lineno, str(e) or type(e).__name__))
    finally:
        f.close()
    return counts


def _gzip_magic_on_stdin():
    return sys.stdin.buffer.peek(2)[:2] == b"\x1f\x8b"


class _Unclosed(object):
    """stdin for the readers, left open when they close it."""

    def __init__(self, f):
        self.readline = f.readline

    def close(self):
        pass


def _looks_like_counts(start):
    """A counts line starts with a count, a comment or blank space."""
    return start[:1].isdigit() or start.startswith(b"#") or not start.strip()


def _parse_word(raw):
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise ValueError("not ASCII (bytes outside 0x20-0x7E must be escaped)")
    word = unescape_word(text)
    if not word:
        raise ValueError("empty word")
    return word


def sum_counts(paths):
    """The sum of the word-count files ``paths``: one {bytes: count}."""
    counts = {}
    for p in paths:
        read_counts(p, into=counts)
    return counts
