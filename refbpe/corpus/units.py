"""Work units: inputs cut at safe cuts into byte ranges, and how a unit reaches its work.

Counting (``count``) and corpus encoding (``encode``) cut their inputs the
same way and differ only in the work done on each unit's bytes, a function
``work(chunk, offset, source, *params)`` of the caller's.  A unit is a triple
``(function, args, bytes covered)``, run as ``function(*args)`` in this
process or in a worker; each function here ends in ``work``:

    ``run_range``          a byte range of a regular file, read by the worker
                           itself: the main process moves offsets, not text
    ``run_chunk``          bytes this process holds: a chunk of a stream (stdin,
                           gzip, a pipe or FIFO: ``io.is_stream``), a range when the worker cannot open the
                           file (``ship_bytes``: a cluster without a shared
                           filesystem), or a piece of text cut between a
                           trainer's sequences (``sequences``)
    ``run_spooled_chunk``  the same bytes handed to refbpe's own pool in a
                           spool file (``pool.submit``; ``spool`` says why)

``work_units`` makes them, in input order.  A span of a regular file is cut
by offsets: the main process finds each cut by reading a little around
``previous cut + chunk size`` (``io.find_cut_in_file``; the file is looked at
at most once, even with no cut point in it).  A stream is cut as it is read
(``io.stream_chunks``).  The cuts follow the split pattern's rule
(``io.cut_points``), so the units' results add up (counts) or concatenate
(ids) to those of the whole input.  Cost in this process: a few small
reads per unit of a file (its bytes stay on disk unless shipped); a stream is
read once, one chunk in memory at a time.

``checked_utf8`` is the check each work function starts with: invalid UTF-8
is an ``InputError`` naming the source and the byte offset, or is replaced or
dropped (``errors``).  ``auto_chunk_size`` sizes the units from the input
size and the worker count; counting and encoding pass their own bounds.
"""

import os

from .io import InputError, cut_points, find_cut_in_file, input_size, stream_chunks
from .shard import shard_spans
from .spool import take_chunk

__all__ = [
    "END",
    "work_units",
    "input_spans",
    "total_bytes",
    "auto_chunk_size",
    "checked_utf8",
    "run_range",
    "run_chunk",
    "run_spooled_chunk",
]

END = "end of input"  # after each input's units, when ``work_units`` is asked for it


def auto_chunk_size(total, workers, least, most, stream, whole_below=0):
    """About three units per worker, within ``least``..``most`` bytes.

    ``stream``: the size for an input of unknown size (``total`` None);
    an input below ``whole_below`` bytes is one unit (``max(total, 1)``).
    """
    if total is None:
        return stream
    if total < whole_below:
        return max(total, 1)
    return max(least, min(most, total // (3 * max(workers, 1)) + 1))


def input_spans(sources, special_tokens=(), shard=None, pattern=None):
    """``(source, start, end)`` for each input, ``end`` None for a stream;
    with ``shard=(I, N)``, the spans of that shard (``shard.shard_spans``)."""
    if shard is not None:
        return shard_spans(sources, shard[0], shard[1], special_tokens, pattern)
    return [(s, 0, input_size(s)) for s in sources]


def total_bytes(spans):
    """The bytes the spans cover, or None when one is a stream."""
    sizes = [end - start if end is not None else None for _, start, end in spans]
    return None if None in sizes else sum(sizes)


def work_units(
    spans,
    chunk_size,
    specials,
    work,
    params=(),
    read_size=None,
    pattern=None,
    ship_bytes=False,
    ends=False,
    taper=0,
):
    """``(function, args, bytes covered)`` for every unit of ``spans``, in input order.

    Each runs ``work(chunk, offset, source, *params)``.  ``specials``: the
    special tokens as bytes (no cut splits one); ``pattern``: the split
    pattern's name (its cut rule); ``ship_bytes``: file ranges are read here
    and shipped as bytes; ``ends``: ``END`` follows each span's units;
    ``taper``: the number of processes sharing the units, whose last units of
    each file range then shrink (``_unit_end``).
    """
    cuts = cut_points(pattern)
    for source, first, last in spans:
        if last is None:
            for offset, chunk in stream_chunks(source, chunk_size, specials, read_size, cuts):
                yield run_chunk, (work, chunk, offset, source) + params, len(chunk)
        else:
            block = read_size or (1 << 16)
            for unit in _range_units(
                source, first, last, chunk_size, specials, block, cuts, work, params, ship_bytes, taper
            ):
                yield unit
        if ends:
            yield END


def _range_units(source, first, last, chunk_size, specials, block, cuts, work, params, ship_bytes, taper=0):
    """The units of bytes ``[first, last)`` of the regular file ``source``."""
    path = os.path.abspath(source)  # for workers with another directory
    with open(source, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        start = first
        while start < last:
            end = last
            step = _unit_step(chunk_size, last - start, taper)
            if start + step < last:
                end = min(last, find_cut_in_file(f, start + step, size, specials, block, cuts))
            if ship_bytes:
                yield (
                    run_chunk,
                    (work, pread_range(f.fileno(), start, end), start, source) + params,
                    end - start,
                )
            else:
                yield run_range, (work, path, start, end, source) + params, end - start
            start = end


def _unit_step(chunk_size, remaining, taper):
    """The size of the next unit: ``chunk_size``, or with ``taper`` processes, once
    fewer than ``taper`` full units remain, a ``taper``-th of what remains, down to
    a third of ``chunk_size``.  Small last units let the processes end together:
    counting english_medium with 2 workers (six 12 MiB units, or eight tapered) took
    the main process, which also adds up the tables, 1.92 CPU seconds against the
    worker's 1.68, and tapered 1.83 against 1.81; the 1 -> 2 worker speed-up a quiet
    machine allows went from 1.55x to 1.70x (perf/count_workers.py, medians of 3).
    """
    if not taper:
        return chunk_size
    return max(1, chunk_size // 3, min(chunk_size, remaining // taper))  # 0 would cut nothing, forever


def checked_utf8(chunk, offset, source, errors):
    """``chunk`` as the work sees it: under ``errors="strict"`` unchanged if it is valid
    UTF-8, else an ``InputError`` naming ``source`` and the byte offset (``offset``: the
    chunk's in ``source``); under ``replace`` or ``ignore``, decoded so and re-encoded."""
    if errors == "strict":
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError("%s: invalid UTF-8 at byte offset %d" % (source, offset + e.start))
        return chunk
    return chunk.decode("utf-8", errors).encode("utf-8", "surrogatepass")


def run_range(work, path, start, end, source, *params):
    """In a worker: ``work`` on bytes ``[start, end)`` of the file at ``path`` (both safe cuts).

    ``source`` is the path as the user gave it, for messages (``path`` is absolute)."""
    return work(read_range(path, start, end), start, source, *params)


def read_range(path, start, end):
    """Bytes ``[start, end)`` of the file at ``path`` (fewer if it is shorter), read with
    ``os.pread``: under PyPy the ranges of english_medium took 1.28x as long with the
    buffered file's ``read`` (13 ms against 10 ms a range; CPython level at 1.5 ms),
    and every unit of a file is read so, here or in a worker (perf/micro.py read-range)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return pread_range(fd, start, end)
    finally:
        os.close(fd)


def pread_range(fd, start, end):
    """``read_range`` of a file already open as ``fd``."""
    parts = []
    while start < end:
        part = os.pread(fd, end - start, start)
        if not part:
            break
        parts.append(part)
        start += len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def run_chunk(work, chunk, *args):
    """``work(chunk, *args)``: a unit whose bytes travel with it."""
    return work(chunk, *args)


def run_spooled_chunk(work, chunk_path, *args):
    """In a worker: ``work`` on the chunk spooled to ``chunk_path`` (``SpoolDirectory.put``)."""
    return work(take_chunk(chunk_path), *args)
