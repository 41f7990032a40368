"""Pre-tokenize and count, in parallel: chunks in, one word table out.

Work units are byte ranges of the inputs (``units.work_units``), about three
per worker (``_unit_size``), a file's last ones smaller with more than one
worker so that the processes end together (``taper``).  For a regular file the main process finds the
safe cuts (``io.find_cut_in_file``: a small read near each offset) and a
worker gets only ``(path, start, end)`` and reads its own bytes; stdin and
gzip streams are read and cut by the main process (``io.iter_chunks``) and
shipped as bytes.  With ``executor_data="chunk"`` file units are shipped as
bytes too (for workers that cannot open the files: a cluster without a
shared filesystem).  With ``shard=(I, N)`` only shard I's spans of the
inputs are cut into units (``refbpe.shard``).  Workers decode, split on
special tokens, pre-tokenize with the split pattern named by ``pattern``
(``refbpe.patterns``; GPT-2's by default, and the cuts follow its rule,
``io.cut_points``) and count (``count_chunk``); their tables are added up as
they complete, in whatever order (the sum does not depend on it).

At most ``2 * workers`` units are in flight, so memory is bounded by the
chunk size and the word table, not by the corpus.  ``count_words`` takes any
``concurrent.futures.Executor``; by default it runs on refbpe's own process
pool (``pool``) of ``workers - 1`` processes, the main process counting its
share of the units too (a unit it counts is added to its tables as it is,
never packed: ``_Tables``), or in-process for one worker or one unit.  The
units of regular files (up to ``CLAIMED_UNITS`` of them) are claimed by the
processes themselves from a shared counter (``claims``); stream chunks, read
here, are handed out from here (``pool.run_units`` with ``here``).

Worker results travel as flat arrays and one joined ``bytes`` instead of a
pickled dict (``pack_counts`` gives the reason, measured by perf/bench_pickle.py); in refbpe's own pool
they, and stream chunks, go through files so that a killed worker cannot
leave a torn message in the pool's pipes (``spool`` says why).
"""

from __future__ import annotations

import itertools
import os
from array import array
from concurrent.futures import Executor
from typing import Callable, Dict, Iterable, Optional, Sequence, Tuple, Union

from ..pretokenize.gpt2 import add_small_counts, add_small_pairs
from ..pretokenize.patterns import get_pattern
from ..specials import special_pattern
from .claims import run_claimed
from .io import InputError
from .pool import default_workers, run_on_sample, run_units
from .units import auto_chunk_size, checked_utf8, input_spans, total_bytes, work_units

__all__ = [
    "count_words",
    "count_chunk",
    "pack_counts",
    "unpack_counts",
    "InputError",
    "DEFAULT_CHUNK_SIZE",
    "warm_up_scanner",
]

DEFAULT_CHUNK_SIZE = None  # chosen per input by _unit_size

# Regular files of at most this many units are claimed (``claims``): the list is made before
# any counting starts, a few small reads per unit (a file each for many small files); more
# units are handed out as they are cut (``pool.run_units``), so that work starts at once.
CLAIMED_UNITS = 1 << 14


def _unit_size(total, workers):
    """About three units per worker, within 8-16 MiB (8 MiB for streams).

    Fewer, larger units mean fewer tables for the main process to add up
    (measured under PyPy on a quiet machine, english_medium with 2 workers:
    4 MiB units 2.1 s, 12 MiB 1.7 s, 16 MiB 1.9 s, the last from uneven
    shares; reproduced by perf/micro.py count-chunk-size), and the cap
    keeps a worker's memory small on huge inputs.  Below 8 MiB an input is
    one unit, counted in-process: a pool's start-up and its workers' JIT
    warm-up cost more than they save (4 MB under PyPy: 0.24 s in-process,
    0.36 s with 2 workers).
    """
    return auto_chunk_size(total, workers, least=8 << 20, most=16 << 20, stream=8 << 20)


def pack_counts(small, counts):
    """The two tables of a chunk -> flat objects that are cheap to pickle.

    ``small`` has packed-int keys (``Pattern.count_pretokens``), ``counts``
    bytes keys, joined into one bytes object with an array of lengths.
    Measured (perf/bench_pickle.py, a 4 MB English chunk, 45,865 words,
    pickle + unpickle + adding up): PyPy 37 ms for the dict, 14 ms packed
    (its pickle is pure Python); CPython 7 ms against 17 ms.  PyPy is the
    interpreter to count with, so the packed form it is.
    """
    # A dict's values come in its keys' order, so the counts are read, not looked up by key: a
    # 12 MiB unit's tables packed in 4.4 ms against 6.6 ms under PyPy (perf/micro.py count-pack).
    keys = list(counts)
    return (
        array("q", list(small)),
        _int_array(list(small.values())),
        b"".join(keys),
        array("l", [len(k) for k in keys]),
        _int_array(list(counts.values())),
    )


def _int_array(values):
    try:
        return array("q", values)
    except OverflowError:  # a count above 2**63 - 1: keep the list
        return values


def unpack_counts(packed, small, counts):
    """Add a ``pack_counts`` result to the tables ``small`` and ``counts``.

    Int keys are added as ints (cheap); they become bytes once, at the end.
    ``small`` None: they become bytes now, added to ``counts``.
    """
    small_keys, small_values, blob, lengths, values = packed
    if small is None:
        add_small_pairs(zip(small_keys, small_values), counts)
    else:
        get = small.get
        for k, c in zip(small_keys, small_values):
            small[k] = get(k, 0) + c
    pos = 0
    get = counts.get
    for n, c in zip(lengths, values):
        key = blob[pos : pos + n]
        pos += n
        counts[key] = get(key, 0) + c


def add_tables(unit_small, unit_counts, small, counts):
    """Add the tables of one unit (``add_chunk_counts``) to ``small`` and ``counts``."""
    get = small.get
    for k, c in unit_small.items():
        small[k] = get(k, 0) + c
    get = counts.get
    for k, c in unit_counts.items():
        counts[k] = get(k, 0) + c


def count_chunk(chunk, offset, source, special_tokens, errors, pattern=None):
    """Word counts of one chunk, packed (``pack_counts``): the work of a unit.  Runs in a worker.

    ``offset``: the chunk's in ``source``, for messages (``units.checked_utf8``);
    ``pattern`` names the split pattern (``refbpe.patterns``; None is GPT-2's)."""
    small, counts = {}, {}
    add_chunk_counts(chunk, offset, source, special_tokens, errors, pattern, small, counts)
    return pack_counts(small, counts)


def add_chunk_counts(chunk, offset, source, special_tokens, errors, pattern, small, counts):
    """``count_chunk`` added to the tables ``small`` (packed-int keys) and ``counts``
    (``Pattern.count_pretokens``) instead of packed: a unit counted in the main process."""
    chunk = checked_utf8(chunk, offset, source, errors)
    specials = _special_pattern_cached(tuple(special_tokens))
    count = get_pattern(pattern).count_pretokens
    if specials is None:
        count(chunk, counts, small)
    else:
        pos = 0
        for m in specials.finditer(chunk):
            if m.start() > pos:
                count(chunk[pos : m.start()], counts, small)
            pos = m.end()
        if pos < len(chunk):
            count(chunk[pos:], counts, small)


class _Tables(object):
    """One process's word tables, its units counted into them (``count_unit``) and the
    pool's packed tables added (``add_packed``); ``result()`` is the word counts."""

    def __init__(self):
        self.small, self.counts = {}, {}

    def count_unit(self, chunk, offset, source, *params):
        """``add_chunk_counts`` of one unit, into fresh tables, then added: counting into
        the large tables directly was 7% slower.  The first tables are kept as they are:
        adding them to empty ones made six units counted here 3-6% slower (both
        perf/micro.py count-here)."""
        unit_small, unit_counts = {}, {}
        add_chunk_counts(chunk, offset, source, *params, unit_small, unit_counts)
        if self.small or self.counts:
            add_tables(unit_small, unit_counts, self.small, self.counts)
        else:
            self.small, self.counts = unit_small, unit_counts

    def add_packed(self, packed):
        """A pool process's tables (``pack_counts``) added."""
        unpack_counts(packed, self.small, self.counts)

    def settle(self):
        """The small table's keys turned to bytes (``add_small_counts``), and those of tables
        added later as they come.  Called once this process has counted its last unit,
        while the pool counts its own last ones (``claims.run_claimed``'s ``here_done``):
        the turning was the main process's last 0.07-0.13 s, after the pool had ended
        (english_medium, 2 workers under PyPy; perf/count_workers.py)."""
        if self.small is not None:
            add_small_counts(self.small, self.counts)
            self.small = None

    def result(self):
        """The word counts: {pre-token bytes: count}."""
        self.settle()
        return self.counts


def warm_up_scanner(pattern=None):
    """What a pool for counting runs before ``fork`` under PyPy (``pool.run_on_sample``):
    the counting of ``pattern``'s scanner."""
    run_on_sample(get_pattern(pattern).count_pretokens, 400, 30)


_PATTERNS = {}


def _special_pattern_cached(special_tokens):
    if special_tokens not in _PATTERNS:
        _PATTERNS[special_tokens] = special_pattern(special_tokens, as_bytes=True)
    return _PATTERNS[special_tokens]


def count_words(
    sources: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
    special_tokens: Iterable[str] = (),
    *,
    workers: Optional[int] = None,
    chunk_size: Optional[int] = DEFAULT_CHUNK_SIZE,
    errors: str = "strict",
    progress: Optional[Callable[[int, Optional[int]], None]] = None,
    executor: Optional[Executor] = None,
    read_size: Optional[int] = None,
    shard: Optional[Tuple[int, int]] = None,
    executor_data: str = "path",
    pattern: Optional[str] = None,
) -> Dict[bytes, int]:
    """{pre-token bytes: count} over all ``sources`` (paths, ``-`` or ``*.gz``).

    Files are read one after another, and each file starts a new text: no
    pre-token spans two files.  ``progress(bytes_done, bytes_total_or_None)``
    is called as chunks finish.  ``shard=(I, N)`` counts only shard I of N
    (0-based; ``refbpe.shard``): the N shards' counts add up to the whole.
    ``executor_data`` says how a regular file's bytes reach the workers:
    ``"path"`` (they read the file themselves: a shared filesystem) or
    ``"chunk"`` (this process reads them and ships the bytes).  ``pattern``
    names the split pattern (``refbpe.patterns``; None or ``"gpt2"``: GPT-2's).
    Cost: O(input bytes) split over ``workers`` processes; memory O(chunk size
    * workers + unique words).

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "corpus.txt")
    ...     with open(path, "w") as f:
    ...         _ = f.write("low low lower<|endoftext|>lowest")
    ...     counts = count_words(path, ["<|endoftext|>"], workers=1)
    >>> sorted(counts.items())
    [(b' low', 1), (b' lower', 1), (b'low', 1), (b'lowest', 1)]
    """
    if isinstance(sources, (str, bytes, os.PathLike)):
        sources = [sources]
    sources = [os.fspath(s) for s in sources]
    special_tokens = tuple(special_tokens or ())
    if errors not in ("strict", "replace", "ignore"):
        raise ValueError("errors must be strict, replace or ignore, not %r" % (errors,))
    if executor_data not in ("path", "chunk"):
        raise ValueError("executor_data must be path or chunk, not %r" % (executor_data,))
    if pattern is not None:
        pattern = get_pattern(pattern).key  # an unknown name or refused regex fails here, not in a worker
        if pattern == "gpt2":
            pattern = None
    spans = input_spans(sources, special_tokens, shard, pattern)
    total = total_bytes(spans)
    workers = workers or default_workers()
    chunk_size = chunk_size or _unit_size(total, workers)
    specials = [t.encode("utf-8") for t in special_tokens]
    params = (special_tokens, errors, pattern)
    units = work_units(
        spans,
        chunk_size,
        specials,
        count_chunk,
        params,
        read_size,
        pattern,
        ship_bytes=executor_data == "chunk",
        taper=workers if workers > 1 else 0,
    )
    single = total is not None and total <= chunk_size
    if executor is None and workers > 1 and not single:
        # An input with no safe cut (one long pre-token) is one unit however
        # large: a pool would only add its start-up and a copy of the unit
        # (perf/long_piece_memory.py, PyPy, 80 MB: 1.3 s in-process, 3.0 s with 2 workers).
        head = list(itertools.islice(units, 2))
        single = len(head) < 2
        units = itertools.chain(head, units)
    tables = _Tables()
    done = [0]

    def add(packed, covered):
        if packed is not None:  # None: counted here, into the tables (``_Tables.count_unit``)
            tables.add_packed(packed)
        done[0] += covered
        if progress:
            progress(done[0], total)

    claimed = None
    if executor is None and workers > 1 and not single and total is not None and executor_data == "path":
        claimed = list(itertools.islice(units, CLAIMED_UNITS + 1))
        if len(claimed) > CLAIMED_UNITS:
            units, claimed = itertools.chain(claimed, units), None
    if claimed is not None:
        run_claimed(
            claimed,
            workers,
            tables.count_unit,
            tables.add_packed,
            (lambda covered: progress(covered, total)) if progress else (lambda covered: None),
            "a counting",
            warm_up=lambda: warm_up_scanner(pattern),
            preload=(__name__,),
            here_done=tables.settle,
        )
    else:
        run_units(
            units,
            1 if executor is None and single else workers,
            add,
            executor,
            "a counting",
            warm_up=lambda: warm_up_scanner(pattern),
            preload=(__name__,),
            here=tables.count_unit,
        )
    return tables.result()
