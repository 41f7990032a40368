"""Pre-tokenize and count, in parallel: chunks in, one word table out.

Work units are byte ranges of the input, about three per worker
(``auto_chunk_size``).  For a regular file the main process finds the safe
cuts (``io.find_cut_in_file``: a small read near each offset) and a worker
gets only ``(path, start, end)`` and reads its own bytes; stdin and gzip
streams are read and cut by the main process (``io.iter_chunks``) and shipped
as bytes.  With ``executor_data="chunk"`` file units are shipped as bytes too
(for workers that cannot open the files: a cluster without a shared
filesystem).  With ``shard=(I, N)`` only shard I's spans of the inputs are
cut into units (``refbpe.shard``).  Workers decode, split on special tokens,
pre-tokenize with the split pattern named by ``pattern`` (``refbpe.patterns``;
GPT-2's by default, and the cuts follow its rule, ``io.cut_points``) and
count; their tables are added up as they complete, in whatever order (the
sum does not depend on it).

At most ``2 * workers`` units are in flight, so memory is bounded by the
chunk size and the word table, not by the corpus.  ``count_words`` takes any
``concurrent.futures.Executor``; by default it makes a ``ProcessPoolExecutor``
with an explicit start method, or runs in-process for one worker.

Worker results travel as flat arrays and one joined ``bytes`` instead of a
pickled dict (``pack_counts`` gives the reason, measured by perf/bench_pickle.py); in refbpe's own pool
they, and stream chunks, go through files so that a killed worker cannot
leave a torn message in the pool's pipes (``spool`` says why).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import multiprocessing
import os
import platform
import signal
import threading
from array import array
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Dict, Iterable, Optional, Sequence, Tuple, Union

from ..pretokenize.gpt2 import add_small_counts, count_pretokens
from ..pretokenize.patterns import get_pattern
from ..specials import special_pattern
from .io import InputError, cut_points, find_cut_in_file, input_size, stream_chunks
from .shard import shard_spans
from .spool import SpoolDirectory, run_spooled, take, take_chunk

__all__ = [
    "count_words",
    "count_chunk",
    "pack_counts",
    "unpack_counts",
    "InputError",
    "WorkerError",
    "DEFAULT_CHUNK_SIZE",
    "default_workers",
    "make_executor",
    "pool_session",
]

DEFAULT_CHUNK_SIZE = None  # chosen per input by auto_chunk_size


def auto_chunk_size(total, workers):
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
    if total is None:
        return 8 << 20
    return max(8 << 20, min(16 << 20, total // (3 * max(workers, 1)) + 1))


class WorkerError(RuntimeError):
    """A counting worker process died (killed, or out of memory)."""


def pack_counts(small, counts):
    """The two tables of a chunk -> flat objects that are cheap to pickle.

    ``small`` has packed-int keys (``pretokenize.count_pretokens``), ``counts``
    bytes keys, joined into one bytes object with an array of lengths.
    Measured (perf/bench_pickle.py, a 4 MB English chunk, 45,865 words,
    pickle + unpickle + adding up): PyPy 37 ms for the dict, 14 ms packed
    (its pickle is pure Python); CPython 7 ms against 17 ms.  PyPy is the
    interpreter to count with, so the packed form it is.
    """
    keys = list(counts)
    small_keys = list(small)
    return (
        array("q", small_keys),
        _int_array([small[k] for k in small_keys]),
        b"".join(keys),
        array("l", [len(k) for k in keys]),
        _int_array([counts[k] for k in keys]),
    )


def _int_array(values):
    try:
        return array("q", values)
    except OverflowError:  # a count above 2**63 - 1: keep the list
        return values


def unpack_counts(packed, small, counts):
    """Add a ``pack_counts`` result to the tables ``small`` and ``counts``.

    Int keys are added as ints (cheap); they become bytes once, at the end.
    """
    small_keys, small_values, blob, lengths, values = packed
    get = small.get
    for k, c in zip(small_keys, small_values):
        small[k] = get(k, 0) + c
    pos = 0
    get = counts.get
    for n, c in zip(lengths, values):
        key = blob[pos : pos + n]
        pos += n
        counts[key] = get(key, 0) + c


def count_chunk(chunk, offset, source, special_tokens, errors, pattern=None):
    """Word counts of one chunk, packed (``pack_counts``).  Runs in a worker.

    ``pattern`` names the split pattern (``refbpe.patterns``; None is GPT-2's)."""
    if errors == "strict":
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError("%s: invalid UTF-8 at byte offset %d" % (source, offset + e.start))
    else:
        chunk = chunk.decode("utf-8", errors).encode("utf-8", "surrogatepass")
    specials = _special_pattern_cached(tuple(special_tokens))
    count = _pretoken_counter(pattern)
    small, counts = {}, {}
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
    return pack_counts(small, counts)


def _pretoken_counter(pattern):
    """``count_pretokens`` of the named split pattern (GPT-2's module function by default)."""
    if pattern is None or pattern == "gpt2":
        return count_pretokens
    return get_pattern(pattern).count_pretokens


def count_spooled_chunk(chunk_path, offset, source, special_tokens, errors, pattern=None):
    """In a worker: ``count_chunk`` of a chunk that was spooled to ``chunk_path``."""
    return count_chunk(take_chunk(chunk_path), offset, source, special_tokens, errors, pattern)


_PATTERNS = {}


def _special_pattern_cached(special_tokens):
    if special_tokens not in _PATTERNS:
        _PATTERNS[special_tokens] = special_pattern(special_tokens, as_bytes=True)
    return _PATTERNS[special_tokens]


def default_workers():
    return os.cpu_count() or 1


def _warm_up(pattern=None):
    """Run the scanner a little so that forked workers inherit compiled code.

    Under PyPy each worker would otherwise spend its first chunk in the
    interpreter before the JIT kicks in; machine code made before ``fork`` is
    shared by the children.
    """
    sample = (
        b"The quick brown fox's 12 jumps, over\n\n  the lazy dog? " * 400
        + "Съешь же ещё этих мягких булок 中文字符 1234 \u3000 ok\n".encode("utf-8") * 100
    )
    count = _pretoken_counter(pattern)
    for _ in range(30):
        count(sample)


def default_start_method():
    """``fork`` when this process has one thread, else ``forkserver`` (or ``spawn``).

    ``fork`` is fastest (no re-import, and under PyPy the children inherit
    compiled code), but forking a process in which other threads run can
    copy a lock that one of them holds into the child (Python 3.12+ warns
    about it).  Debian's PyPy 3.9 patches the pool so that only ``fork``
    works (it lacks ``_adjust_process_count``); there ``fork`` is kept.
    """
    methods = multiprocessing.get_all_start_methods()
    other_methods_work = hasattr(concurrent.futures.ProcessPoolExecutor, "_adjust_process_count")
    if "fork" in methods and (_thread_count() == 1 or not other_methods_work):
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _thread_count():
    """Threads of this process, native ones included where the OS tells."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def make_executor(workers, start_method=None, pattern=None, initializer=None, initargs=()):
    """A ProcessPoolExecutor with an explicit start method (``default_start_method``);
    under PyPy with ``fork`` the scanner of ``pattern`` is warmed up first.

    ``initializer(*initargs)`` runs in each worker after its signals are set
    (``encode_corpus`` hands each worker its tokenizer this way: under
    ``fork`` nothing is pickled)."""
    start_method = start_method or default_start_method()
    context = multiprocessing.get_context(start_method)
    if start_method == "fork" and platform.python_implementation() == "PyPy":
        _warm_up(pattern)
    elif start_method == "forkserver":
        context.set_forkserver_preload(["refbpe.count"])
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_init_worker,
        initargs=(initializer, tuple(initargs)),
    )


def _init_worker(initializer, initargs):
    _worker_signals()
    if initializer is not None:
        initializer(*initargs)


def _worker_signals():
    """Workers leave Ctrl-C to the main process and die at once on SIGTERM.

    A terminal sends SIGINT to the whole process group; the main process
    stops the pool itself (``stop_pool``), and workers that raised
    KeyboardInterrupt too would only print tracebacks.  SIGTERM must kill:
    the pool terminates its workers when one dies, and a worker that turned
    the signal into an exception (as the CLI's handler, inherited through
    ``fork``, does) would try to report it and block forever on the result
    queue's lock, left held by the dead worker.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def stop_pool(executor):
    """Cancel what is queued and end the worker processes now (on an interrupt).

    The processes are taken before ``shutdown``, which forgets them (CPython
    3.9+ sets ``_processes`` to None): terminated after it, the pool kept its
    workers counting the units they held, and the interpreter's exit hook for
    ``concurrent.futures`` waited for them (measured by perf/interrupts.py on
    CPython: 4.8-8 s from Ctrl-C to exit during counting, PyPy 0.6-1.5 s).
    """
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.terminate()
        except Exception:  # already gone
            pass
    for process in processes:
        process.join(5)


@contextlib.contextmanager
def pool_session(executor, own, spool, what, in_flight):
    """How a run over a pool ends, however it ends (counting and encoding alike).

    ``own``: the pool is refbpe's, to be shut down here; ``spool``: its
    ``SpoolDirectory`` or None; ``what``: the work, for the message when a
    worker dies; ``in_flight()``: the futures still running.  A dead worker is
    a ``WorkerError``.  On an error of the run, the units in flight (at most 2
    per worker) are let finish rather than cancelled: cancelling queued
    futures and then shutting down can leave the pool's manager thread
    waiting forever on CPython 3.9 (seen here as an occasional hang after a
    bad-input error).  On an interrupt (Ctrl-C, SIGTERM, a consumer closing a
    generator) the workers are stopped at once (``stop_pool``).
    """
    try:
        yield
    except BrokenProcessPool:
        raise WorkerError("%s worker process died (killed by a signal, or out of memory)" % what)
    except Exception:
        concurrent.futures.wait(list(in_flight()))
        raise
    except BaseException:
        if own:
            stop_pool(executor)
            own = False
        raise
    finally:
        if own:
            executor.shutdown(wait=True)
        if spool is not None:
            spool.close()


def count_file_range(path, start, end, special_tokens, errors, name=None, pattern=None):
    """Counts of bytes ``[start, end)`` of file ``path`` (both safe cuts).

    Runs in a worker, which reads the bytes itself: the main process moves
    no text, only offsets.  ``name`` is the path as the user gave it, for
    messages (``path`` is absolute, for workers with another directory)."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    return count_chunk(data, start, name or path, special_tokens, errors, pattern)


def input_spans(sources, special_tokens=(), shard=None, pattern=None):
    """``(source, start, end)`` for each input, ``end`` None for a stream;
    with ``shard=(I, N)``, the spans of that shard (``shard.shard_spans``)."""
    if shard is not None:
        return shard_spans(sources, shard[0], shard[1], special_tokens, pattern)
    return [(s, 0, input_size(s)) for s in sources]


def _tasks(spans, chunk_size, special_tokens, errors, read_size, executor_data, pattern=None):
    """(function, args, bytes covered) for every unit of work, in input order.

    A span of a regular file is cut by offsets: the main process finds each
    cut by reading a little around ``previous cut + chunk_size`` (the file is
    looked at at most once, even with no cut point in it).  Workers read
    their own ranges, or with ``executor_data="chunk"`` get the bytes.
    """
    specials = [t.encode("utf-8") for t in special_tokens]
    cuts = cut_points(pattern)
    for source, first, last in spans:
        if last is not None:
            path = os.path.abspath(source)
            with open(source, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                start = first
                while start < last:
                    end = last
                    if start + chunk_size < last:
                        end = min(
                            last,
                            find_cut_in_file(
                                f, start + chunk_size, size, specials, read_size or (1 << 16), cuts
                            ),
                        )
                    if executor_data == "chunk":
                        f.seek(start)
                        yield (
                            count_chunk,
                            (f.read(end - start), start, source, special_tokens, errors, pattern),
                            end - start,
                        )
                    else:
                        yield (
                            count_file_range,
                            (path, start, end, special_tokens, errors, source, pattern),
                            end - start,
                        )
                    start = end
            continue
        for offset, chunk in stream_chunks(source, chunk_size, specials, read_size, cuts):
            yield count_chunk, (chunk, offset, source, special_tokens, errors, pattern), len(chunk)


def count_words(
    sources: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
    special_tokens: Iterable[str] = (),
    *,
    workers: Optional[int] = None,
    chunk_size: Optional[int] = DEFAULT_CHUNK_SIZE,
    errors: str = "strict",
    progress: Optional[Callable[[int, Optional[int]], None]] = None,
    executor: Optional[concurrent.futures.Executor] = None,
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
        pattern = get_pattern(pattern).name  # an unknown name fails here, not in a worker
        if pattern == "gpt2":
            pattern = None
    spans = input_spans(sources, special_tokens, shard, pattern)
    sizes = [end - start if end is not None else None for _, start, end in spans]
    total = None if None in sizes else sum(sizes)
    workers = workers or default_workers()
    chunk_size = chunk_size or auto_chunk_size(total, workers)
    small, counts = {}, {}
    done = 0
    tasks = _tasks(spans, chunk_size, special_tokens, errors, read_size, executor_data, pattern)
    single = total is not None and total <= chunk_size
    if executor is None and workers > 1 and not single:
        # An input with no safe cut (one long pre-token) is one unit however
        # large: a pool would only add its start-up and a copy of the unit
        # (perf/long_piece_memory.py, PyPy, 80 MB: 1.3 s in-process, 3.0 s with 2 workers).
        head = list(itertools.islice(tasks, 2))
        single = len(head) < 2
        tasks = itertools.chain(head, tasks)
    if executor is None and (workers == 1 or single):
        # One worker, or a single unit of work: no pool to start.
        for func, args, covered in tasks:
            unpack_counts(func(*args), small, counts)
            done += covered
            if progress:
                progress(done, total)
        return add_small_counts(small, counts)
    own = executor is None
    spool = None
    if own:
        executor = make_executor(workers, pattern=pattern)
        spool = SpoolDirectory()
    in_flight = {}
    with pool_session(executor, own, spool, "a counting", lambda: in_flight):
        limit = 2 * workers
        for func, args, covered in tasks:
            if len(in_flight) >= limit:
                done += _collect(in_flight, small, counts, spool)
                if progress:
                    progress(done, total)
            in_flight[_submit(executor, spool, func, args)] = covered
            del args
        while in_flight:
            done += _collect(in_flight, small, counts, spool)
            if progress:
                progress(done, total)
    return add_small_counts(small, counts)


def _submit(executor, spool, func, args):
    """Submit one unit; through files (``spool``) when the pool is refbpe's own."""
    if spool is None:
        return executor.submit(func, *args)
    if func is count_chunk:  # a chunk of a stream: hand the bytes over in a file too
        func, args = count_spooled_chunk, (spool.put(args[0]),) + tuple(args[1:])
    return executor.submit(run_spooled, spool.path, func, args)


def _collect(in_flight, small, counts, spool=None):
    """Wait for some futures, add their counts, return the bytes they covered."""
    finished, _ = concurrent.futures.wait(list(in_flight), return_when=concurrent.futures.FIRST_COMPLETED)
    covered = 0
    for f in finished:
        covered += in_flight.pop(f)
        result = f.result()
        unpack_counts(take(result) if spool is not None else result, small, counts)
    return covered
