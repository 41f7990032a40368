"""A corpus cut into its pieces, in order: what ``refbpe split`` prints.

The inputs are read in chunks cut where cutting cannot change a piece
(``io.stream_chunks`` with the pattern's cut rule), each chunk is split at the
special tokens (which are not pieces: they split the text first) and the rest
is cut by the pattern's scanner.  Pieces come out in input order with their
byte offsets in their source, so the output is the same for every chunk size.
Memory: one chunk at a time.  Cost: the scanner's, O(bytes).

    >>> specials = special_pattern(["<|e|>"], as_bytes=True)
    >>> [p for _, p in split_chunk(b"Hi there<|e|>ok", 0, "-", "strict", None, specials)]
    [b'Hi', b' there', b'ok']
"""

import json.encoder
import re
from binascii import hexlify

from ..pretokenize.patterns import get_pattern
from ..specials import special_pattern, split_specials
from .io import cut_points, stream_chunks
from .pool import run_on_sample
from .units import checked_utf8

_json_string = json.encoder.encode_basestring  # json.dumps(str, ensure_ascii=False), one string
_ESCAPED_BYTE = re.compile(b'[\\x00-\\x1f"\\\\]')  # what it escapes; every other byte of UTF-8 it keeps
_ESCAPED_CACHE = 4096
_ESCAPED_VALUES = {}  # piece -> its escaped value, for at most _ESCAPED_CACHE pieces

__all__ = [
    "split_chunk_lines",
    "split_unit",
    "warm_up_splitter",
    "iter_segments",
    "iter_pieces",
    "CHUNK_SIZE",
]

CHUNK_SIZE = 1 << 20  # bytes per chunk: the output does not depend on it


def _segments(chunk, offset, specials):
    """``(offset, text)`` of the parts of ``chunk`` between special tokens."""
    pos = 0
    for segment, is_special in split_specials(chunk, specials):
        if not is_special:
            yield offset + pos, segment
        pos += len(segment)


def split_chunk(chunk, offset, source, errors, pattern, specials):
    """``[(offset, piece bytes)]`` of one chunk that starts at byte ``offset`` of ``source``;
    ``specials`` is ``special_pattern(tokens, as_bytes=True)`` or None."""
    piece_ends = get_pattern(pattern).piece_ends
    out = []
    for at, segment in _segments(checked_utf8(chunk, offset, source, errors), offset, specials):
        start = 0
        for end in piece_ends(segment):
            out.append((at + start, segment[start:end]))
            start = end
    return out


def split_chunk_lines(chunk, offset, source, errors, pattern, specials, as_hex=False, with_offsets=False):
    """``split_chunk`` as ``refbpe split`` prints it: UTF-8 bytes, one JSON string per
    piece and line (its bytes in hex with ``as_hex``; ``[offset, piece]`` with
    ``with_offsets``), exactly ``json.dumps(item, ensure_ascii=False)``.

    Made in the worker, so one bytes object per chunk crosses to the writer:
    with lists of pieces, 2 workers took 28.7 s on english_medium under PyPy,
    with lines 7.8 s (``/usr/bin/time refbpe split FILE --workers 2 > /dev/null``).
    Made from bytes, never decoded: a piece is its own JSON string between
    quotes unless it holds a byte that JSON escapes (``_escaped``).
    """
    piece_ends = get_pattern(pattern).piece_ends
    values, starts = [], []
    for at, segment in _segments(checked_utf8(chunk, offset, source, errors), offset, specials):
        ends = piece_ends(segment)
        if with_offsets:
            _piece_starts(at, ends, starts)
        if as_hex:
            _hex_values(segment, ends, values)
        else:
            _json_values(segment, ends, values)
    if not values:
        return b""
    if with_offsets:
        return b"".join([b'[%d, "%s"]\n' % line for line in zip(starts, values)])
    return b'"' + b'"\n"'.join(values) + b'"\n'


def split_unit(chunk, offset, source, *options):
    """``(split_chunk_lines(chunk, offset, source, *options),)``: the work of a ``refbpe split``
    unit (``units.work_units``), its lines the one part of its spool file (``spool.run_spooled``)."""
    return (split_chunk_lines(chunk, offset, source, *options),)


def warm_up_splitter(pattern, as_hex, with_offsets):
    """What a pool for ``refbpe split`` runs before ``fork`` under PyPy (``pool.run_on_sample``):
    ``split_chunk_lines`` as the workers will run it."""
    run_on_sample(
        lambda sample: split_chunk_lines(sample, 0, "-", "strict", pattern, None, as_hex, with_offsets),
        400,
        30,
    )


def _piece_starts(at, ends, starts):
    """Append the offsets of the pieces of a segment at ``at`` ending at ``ends``."""
    start = at
    for end in ends:
        starts.append(start)
        start = at + end


def _hex_values(segment, ends, values):
    """Append each piece's bytes in hex (what goes between the quotes)."""
    start = 0
    for end in ends:
        values.append(hexlify(segment[start:end]))
        start = end


def _json_values(segment, ends, values):
    """Append each piece as a JSON string without its quotes, UTF-8 encoded.

    The segment is searched once for bytes JSON escapes; a piece before the
    next of them is its own JSON string, any other is escaped (``_escaped``).
    """
    escapes = [m.start() for m in _ESCAPED_BYTE.finditer(segment)]
    escapes.append(len(segment))
    k = 0
    start = 0
    for end in ends:
        if end <= escapes[k]:
            values.append(segment[start:end])
        else:
            values.append(_escaped(segment[start:end]))
            while escapes[k] < end:
                k += 1
        start = end


def _escaped(piece):
    """``piece`` (bytes holding a byte JSON escapes) as ``json.dumps`` writes it, without
    the quotes; remembered (they are mostly line breaks, and repeat), up to
    ``_ESCAPED_CACHE`` pieces at a time."""
    value = _ESCAPED_VALUES.get(piece)
    if value is None:
        value = _json_string(piece.decode("utf-8", "surrogatepass"))[1:-1].encode("utf-8", "surrogatepass")
        if len(_ESCAPED_VALUES) >= _ESCAPED_CACHE:
            _ESCAPED_VALUES.clear()
        _ESCAPED_VALUES[piece] = value
    return value


def iter_segments(sources, special_tokens=(), pattern=None, chunk_size=CHUNK_SIZE, errors="strict"):
    """Yield ``(source, offset, text bytes)`` for the parts of ``sources`` between
    special tokens, in order, each whole pieces only (cut where the pattern allows)."""
    specials = special_pattern(special_tokens, as_bytes=True)
    tokens = [t.encode("utf-8") for t in special_tokens]
    cuts = cut_points(get_pattern(pattern).name)
    for source in sources:
        for offset, chunk in stream_chunks(source, chunk_size, tokens, cuts=cuts):
            for at, segment in _segments(checked_utf8(chunk, offset, source, errors), offset, specials):
                yield source, at, segment


def iter_pieces(sources, special_tokens=(), pattern=None, chunk_size=CHUNK_SIZE, errors="strict"):
    """Yield ``(source, offset, piece)`` for every piece of ``sources``, in order."""
    piece_ends = get_pattern(pattern).piece_ends
    for source, at, segment in iter_segments(sources, special_tokens, pattern, chunk_size, errors):
        start = 0
        for end in piece_ends(segment):
            yield source, at + start, segment[start:end]
            start = end
