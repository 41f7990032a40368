"""Encode a corpus to token ids: in parallel, in input order, in bounded memory.

The work units are those of counting (``units.work_units``): byte ranges of
the inputs ending at safe cuts (``io.py``).  A safe cut lies between two
pre-tokens that the whole text has there too, or at the start of a special
token that no other occurrence straddles, and a pre-token's ids depend only
on its bytes; so the ids of the units, concatenated, are the ids of the
whole text, for every chunk size and worker count (tests/test_encode_corpus.py
checks this with Hypothesis over cut points, chunk sizes and worker counts).

Pipeline, per run:

1. Cut: regular files by offsets (the main process reads a little around
   each cut; workers read their own ranges), stdin and gzip as they are read.
2. Encode: with K workers, this process encodes every K-th unit itself
   and a pool of K - 1 processes (``pool.make_executor``, each given the
   ``Tokenizer`` once by the pool's initializer) the others; one worker or
   one unit runs in-process.  Results (the ids as a ``uint16`` array when
   they fit, else ``uint32``; bytes and tokens per stretch between special
   tokens) come back through ``spool`` files, as counting's do.
3. Order: at most 2 units per pool process are in flight, kept in
   submission order; the oldest is taken first, so units reach the
   consumer in input order while the others run.  Memory: O(workers * unit
   size) plus each process's tokenizer and its bounded caches, not the
   corpus.

Several inputs are separate texts (no pre-token spans two), concatenated in
order, optionally with a ``separator`` special token between them.
Documents, for the statistics, are the non-empty stretches between special
tokens and input boundaries.

Cost: O(input) work spread over the workers; the main process does
O(tokens) copying (no per-id Python work when the output dtype matches).
"""

import collections
import os
import time
from array import array

from .idfile import IdWriter, array_typecode, dtype_for_ids, file_kind
from .pool import default_workers, make_executor, pool_session, result_of, run_on_sample, submit
from .spool import SpoolDirectory
from .units import END, auto_chunk_size, checked_utf8, input_spans, total_bytes, work_units

__all__ = ["iter_encoded", "encode_to_file", "write_ids", "EncodeRun", "DocumentTally"]

_UINT16, _UINT32 = array_typecode("uint16"), array_typecode("uint32")
# Inputs below this are encoded in-process: a pool's start-up, the tokenizer
# sent to each worker and their JIT warm-up cost more than they save (measured
# with ``refbpe encode MODEL FILE --workers 1|2 -o x.npy`` under PyPy, GPT-2-sized
# model from english_small: english_small 4 MB 0.51 s vs 0.86 s, 8 MB of
# english_medium 0.80 s vs 1.08 s, 16 MB 1.19 s vs 1.72 s, one core busy elsewhere).
_POOL_FROM = 16 << 20
_UNIT = 256 << 10


def _unit_size(total, workers):
    """256 KiB, or less to give each worker about three units.

    Smaller than counting's 8-16 MiB: a unit's text, its ids (a list of
    ints, then an array) and their garbage live in a worker at once.
    Measured by ``perf/encode_corpus.py whole --workers 2`` (add
    ``--chunk-size 512K`` for the other figure) under PyPy on english_medium:
    peak tree RSS about 290 MB with 256 KiB units, 315 MB with 512 KiB, CPU
    time the same within noise;
    the main process does little per unit.  Below ``_POOL_FROM`` the input
    is one unit, encoded in-process: starting workers would cost more than
    it saves.
    """
    return auto_chunk_size(total, workers, least=64 << 10, most=_UNIT, stream=_UNIT, whole_below=_POOL_FROM)


class Unit(object):
    """One unit's result, in input order.

    ``ids``: an ``array`` (``uint16`` or ``uint32`` typecode);
    ``segments``: ``(bytes, tokens)`` of each stretch between special tokens;
    ``covered``: input bytes; ``ends_source``: the last unit of an input.
    """

    __slots__ = ("ids", "segments", "covered", "ends_source")

    def __init__(self, ids, segments, covered, ends_source=False):
        self.ids = ids
        self.segments = segments
        self.covered = covered
        self.ends_source = ends_source


# -- in a worker --------------------------------------------------------------

_WORKER_TOKENIZER = [None]


def _set_worker_tokenizer(tokenizer):
    _WORKER_TOKENIZER[0] = tokenizer


def encode_chunk(chunk, offset, source, errors, tokenizer=None):
    """(ids array, segment bytes, segment tokens) of one chunk: the work of a unit.  Runs in a worker.

    ``offset``: the chunk's in ``source``, for messages (``units.checked_utf8``);
    ``tokenizer`` None: the one the pool's initializer gave this process.
    """
    tokenizer = tokenizer or _WORKER_TOKENIZER[0]
    chunk = checked_utf8(chunk, offset, source, errors)
    segments = []
    ids = tokenizer.encode_utf8(chunk, segments)
    try:
        packed = array(_UINT16, ids)
    except OverflowError:
        packed = array(_UINT32, ids)
    return packed, array("q", [b for b, _ in segments]), array("q", [t for _, t in segments])


# -- in the main process ---------------------------------------------------------


def _unit_of(result, covered):
    ids, seg_bytes, seg_tokens = result
    return Unit(ids, list(zip(seg_bytes, seg_tokens)), covered)


def _separator_id(tokenizer, separator):
    if separator not in tokenizer.special_tokens:
        raise ValueError("separator %r is not a special token of the model" % (separator,))
    return tokenizer.encode(separator)[0]


def work_plan(sources, workers=None, chunk_size=None, executor=None):
    """``(workers, chunk size, total bytes or None, in-process?)`` for encoding ``sources``.

    In-process for one worker, or when the input is one unit: a pool's
    start-up would cost more than it saves.
    """
    total = total_bytes(input_spans(sources))
    workers = workers or default_workers()
    chunk_size = chunk_size or _unit_size(total, workers)
    in_process = executor is None and (workers == 1 or (total is not None and total <= chunk_size))
    return workers, chunk_size, total, in_process


def iter_encoded(tokenizer, sources, **options):
    """Yield a ``Unit`` per work unit of ``sources`` (paths, ``-``, ``*.gz``), in input order.

    ``options``: ``EncodeRun``'s (keyword-only: workers, chunk_size, errors,
    separator, progress, executor, read_size).
    """
    return EncodeRun(tokenizer, sources, **options).units()


class EncodeRun(object):
    """One encoding of a corpus: the tokenizer, the inputs and their options, and its tally.

    ``refbpe encode`` (``write_ids``) and ``refbpe stats``
    (``analysis.stats.stats_of``) each build one and ``feed`` its units to
    their consumer; the run adds up input bytes, tokens and documents.

    ``separator``: a special token of ``tokenizer`` whose id is put between
    inputs (as a unit of its own).  ``progress(bytes_done, bytes_total_or_None)``
    is called as units are yielded.  ``executor``: any
    ``concurrent.futures.Executor`` (the tokenizer then travels with each
    unit); by default refbpe's own process pool.  ``errors``: ``strict``,
    ``replace`` or ``ignore`` (invalid UTF-8).
    """

    def __init__(
        self,
        tokenizer,
        sources,
        *,
        workers=None,
        chunk_size=None,
        errors="strict",
        separator=None,
        progress=None,
        executor=None,
        read_size=None,
    ):
        if isinstance(sources, (str, bytes, os.PathLike)):
            sources = [sources]
        self.tokenizer, self.sources = tokenizer, [os.fspath(s) for s in sources]
        self.workers, self.chunk_size, self.errors = workers, chunk_size, errors
        self.separator, self.progress = separator, progress
        self.executor, self.read_size = executor, read_size
        self.bytes = self.tokens = self.documents = 0

    def plan(self):
        """``work_plan`` of this run: (workers, chunk size, total bytes or None, in-process?)."""
        return work_plan(self.sources, self.workers, self.chunk_size, self.executor)

    def feed(self, consume, on_document=None):
        """Encode, giving each ``Unit`` to ``consume`` in input order, and add up the input
        bytes, tokens and documents (``on_document(bytes, tokens)`` per document:
        ``DocumentTally``)."""
        tally = DocumentTally(on_document or _ignore)
        units = self.units()
        try:
            for unit in units:
                consume(unit)
                tally.add(unit)
                self.bytes += unit.covered
                self.tokens += len(unit.ids)
        finally:
            units.close()
        self.documents += tally.documents

    def units(self):
        """The ``Unit`` of each work unit, in input order (``iter_encoded``)."""
        tokenizer, sources = self.tokenizer, self.sources
        if self.errors not in ("strict", "replace", "ignore"):
            raise ValueError("errors must be strict, replace or ignore, not %r" % (self.errors,))
        sep = None if self.separator is None else array(_UINT32, [_separator_id(tokenizer, self.separator)])
        workers, chunk_size, total, in_process = self.plan()
        specials = [t.encode("utf-8") for t in tokenizer.special_tokens]
        units = work_units(
            input_spans(sources),
            chunk_size,
            specials,
            encode_chunk,
            (self.errors,),
            self.read_size,
            tokenizer.pattern,
            ends=True,
        )
        state = {"done": 0, "left": len(sources)}
        progress = self.progress

        def finished(unit):
            state["done"] += unit.covered
            if progress:
                progress(state["done"], total)
            return unit

        def end_of_source():
            state["left"] -= 1
            out = [Unit(array(_UINT16), [], 0, True)]
            if sep is not None and state["left"]:
                out.append(Unit(sep, [(0, 0), (0, 0)], 0))
            return out

        if in_process:
            for item in units:
                if item is END:
                    for u in end_of_source():
                        yield u
                    continue
                func, args, covered = item
                yield finished(_unit_of(func(*(args + (tokenizer,))), covered))
            return
        for u in _pooled(tokenizer, units, workers, self.executor, finished, end_of_source):
            yield u


def _ignore(*args):
    pass


class _Done(object):
    """A unit this process encoded itself, queued beside the pool's futures."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


def _ready(queue):
    """True when the oldest queued unit can be taken without waiting."""
    if not queue:
        return False
    head = queue[0]
    return head is END or type(head[0]) is _Done or head[0].done()


def _pooled(tokenizer, units, workers, executor, finished, end_of_source):
    """``iter_encoded`` through a pool: oldest unit first, at most 2 per pool worker in flight.

    With refbpe's own pool, this process is one of the ``workers``: the pool
    has ``workers - 1`` processes, and whenever each of them has 2 units in
    flight this process encodes the next unit itself instead of waiting, so
    the pool never runs dry.  The queue (units in flight plus finished ones
    behind the oldest) holds at most ``2 * workers`` units.  (Measured by
    perf/encode_corpus.py under PyPy: a process holding the GPT-2 tokenizer
    is about 105 MB before any work, so one process fewer is a third less
    memory for 2 workers, and the main process no longer idles.)
    """
    own = executor is None
    spool = None
    pool_workers = workers - 1 if own else workers
    if own:
        executor = make_executor(
            pool_workers,
            warm_up=lambda: run_on_sample(tokenizer.encode_utf8, 200, 20),
            preload=(__name__,),
            initializer=_set_worker_tokenizer,
            initargs=(tokenizer,),
        )
        spool = SpoolDirectory()
    queue = collections.deque()  # (future or _Done, covered), or END, in input order
    in_flight = [0]

    def oldest():
        item = queue.popleft()
        if item is END:
            return end_of_source()
        future, covered = item
        if type(future) is _Done:
            return [finished(_unit_of(future.value, covered))]
        in_flight[0] -= 1
        return [finished(_unit_of(result_of(future, spool), covered))]

    pool_full = 2 * pool_workers

    def running():
        return [item[0] for item in queue if item is not END and type(item[0]) is not _Done]

    with pool_session(executor, own, spool, "an encoding", running):
        for item in units:
            while _ready(queue) or len(queue) >= 2 * workers or (not own and in_flight[0] >= pool_full):
                for u in oldest():
                    yield u
            if item is END:
                queue.append(END)
                continue
            func, args, covered = item
            if own and in_flight[0] >= pool_full:
                queue.append((_Done(func(*(args + (tokenizer,)))), covered))
            else:  # another executor gets the tokenizer with each unit
                queue.append((submit(executor, spool, func, args if own else args + (tokenizer,)), covered))
                in_flight[0] += 1
            del args, item
        while queue:
            for u in oldest():
                yield u


class DocumentTally(object):
    """Adds ``Unit`` segments up into documents: ``on_document(bytes, tokens)`` per document.

    A document is a non-empty stretch of text between special tokens or
    input boundaries; a unit's first segment continues the previous unit's
    last one.
    """

    def __init__(self, on_document):
        self.on_document = on_document
        self.documents = 0
        self._bytes = self._tokens = 0

    def add(self, unit):
        for k, (b, t) in enumerate(unit.segments):
            if k:
                self._close()
            self._bytes += b
            self._tokens += t
        if unit.ends_source:
            self._close()

    def _close(self):
        if self._bytes:
            self.documents += 1
            self.on_document(self._bytes, self._tokens)
        self._bytes = self._tokens = 0


def encode_to_file(tokenizer, sources, output, *, kind=None, dtype=None, stream=None, report=None, **options):
    """Encode ``sources`` into the id file ``output``: ``write_ids`` of an ``EncodeRun``
    (``options``: its keyword-only options, workers to read_size)."""
    run = EncodeRun(tokenizer, sources, **options)
    return write_ids(run, output, kind=kind, dtype=dtype, stream=stream, report=report)


def write_ids(run, output, *, kind=None, dtype=None, stream=None, report=None):
    """Encode ``run`` (an ``EncodeRun``) into the id file ``output`` (``idfile.IdWriter``); a summary dict.

    Nothing is left at ``output`` unless every unit was encoded and written.
    The summary: input bytes, documents, tokens, the dtype, seconds and MB/s;
    ``report`` (a dict) gets the same.
    """
    t0 = time.time()
    workers, chunk_size, _, in_process = run.plan()
    if dtype is None and (kind or file_kind(output)) in ("npy", "bin") and run.tokenizer.vocab:
        dtype = dtype_for_ids(max(run.tokenizer.vocab))  # the model's, not the content's: shards agree
    writer = IdWriter(output, kind=kind, dtype=dtype, stream=stream)
    try:
        run.feed(lambda unit: writer.write(unit.ids))
        count, used = writer.close()
    except BaseException:
        writer.abort()
        raise
    seconds = time.time() - t0
    covered = run.bytes
    summary = {
        "bytes": covered,
        "documents": run.documents,
        "tokens": count,
        "dtype": used,
        "seconds": round(seconds, 3),
        "mb_per_second": round(covered / 1e6 / max(seconds, 1e-9), 2),
        "bytes_per_token": round(covered / count, 4) if count else None,
        "output": "-" if stream is not None else output,
        "workers": 1 if in_process else workers,
        "chunk_size": chunk_size,
    }
    if report is not None:
        report.update(summary)
    return summary
