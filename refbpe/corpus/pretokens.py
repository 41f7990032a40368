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

from ..pretokenize.patterns import get_pattern
from ..specials import special_pattern, split_specials
from .io import cut_points, stream_chunks
from .units import checked_utf8

_json_string = json.encoder.encode_basestring  # json.dumps(str, ensure_ascii=False), one string

__all__ = ["split_chunk_lines", "iter_segments", "iter_pieces", "CHUNK_SIZE"]

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
    ``with_offsets``), exactly ``json.dumps(item, ensure_ascii=False)``.  Made in the
    worker, so one bytes object per chunk crosses to the writer: with lists of
    pieces, 2 workers took 28.7 s on english_medium under PyPy, with lines 7.8 s
    (``/usr/bin/time refbpe split FILE --workers 2 > /dev/null``)."""
    pieces = split_chunk(chunk, offset, source, errors, pattern, specials)
    if as_hex:
        values = ['"%s"' % p.hex() for _, p in pieces]
    else:
        values = [_json_string(p.decode("utf-8", "surrogatepass")) for _, p in pieces]
    if with_offsets:
        values = ["[%d, %s]" % (at, v) for (at, _), v in zip(pieces, values)]
    values.append("")
    return "\n".join(values).encode("utf-8", "surrogatepass") if pieces else b""


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
