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

from ..pretokenize.patterns import get_pattern
from ..specials import special_pattern, split_specials
from .io import cut_points, stream_chunks
from .units import checked_utf8

__all__ = ["split_chunk", "iter_segments", "iter_pieces", "CHUNK_SIZE"]

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
