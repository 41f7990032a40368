"""refbpe's process pool: how it starts, how work units go in, how a run over it ends.

Counting (``count``), corpus encoding (``encode``) and counting a trainer's
sequences (``sequences``) run their work units (``units``) on this pool:

* ``make_executor``: a ``ProcessPoolExecutor`` with an explicit start method
  (``default_start_method``); under PyPy with ``fork`` the caller's scanner
  or encoder is run first (``run_on_sample``) so that the workers inherit
  its compiled code.  Workers leave Ctrl-C to the main process and die on
  SIGTERM (``_worker_signals``).
* ``submit``: with refbpe's own pool a unit's bytes and its result travel
  through spool files (``spool`` says why); any other executor gets the unit
  as it is.
* ``run_units``: units in, at most ``2 * workers`` in flight, each result
  handed over as it completes, in whatever order (for sums: counting); one
  worker runs them in this process, no pool to start.  Given ``here`` (how
  this process runs a unit itself), the pool has ``workers - 1`` processes
  and each process, this one too, takes the next unit when it is free
  (``_run_with_here``: counting a stream; a regular file's units are
  claimed by the processes themselves, ``claims``).  Encoding, which
  needs input order, keeps its own queue (``encode``) on ``submit`` and
  ``pool_session``.
* ``pool_passes``: one pool for passes of units queued one after another
  (``Passes``): the caller takes one pass's results and works on them
  while the pool goes on with the next (SuperBPE's second stage is counted
  while its first trains).
* ``pool_session``: how a run ends, however it ends: a dead worker is a
  ``WorkerError``, an error lets the units in flight finish, an interrupt
  stops the workers at once (``stop_pool``).

Memory is bounded by the units in flight and the caller's results, not by
the input.
"""

import collections
import concurrent.futures
import contextlib
import multiprocessing
import os
import platform
import queue
import signal
import threading
from concurrent.futures.process import BrokenProcessPool

from .spool import SpoolDirectory, run_spooled, take
from .units import run_chunk, run_spooled_chunk

__all__ = [
    "WorkerError",
    "default_workers",
    "default_start_method",
    "make_executor",
    "run_on_sample",
    "pool_session",
    "pool_passes",
    "submit",
    "result_of",
    "run_units",
]


class WorkerError(RuntimeError):
    """A worker process died (killed, or out of memory)."""


def default_workers():
    return os.cpu_count() or 1


def run_on_sample(func, copies, rounds):
    """Run ``func`` ``rounds`` times over a sample of English and mixed-script text
    (``copies`` English lines, a quarter as many mixed ones).

    Under PyPy, run before ``fork``: each worker would otherwise spend its
    first unit in the interpreter before the JIT kicks in; machine code made
    before ``fork`` is shared by the children.
    """
    sample = (
        b"The quick brown fox's 12 jumps, over\n\n  the lazy dog? " * copies
        + "Съешь же ещё этих мягких булок 中文字符 1234 \u3000 ok\n".encode("utf-8") * (copies // 4)
    )
    for _ in range(rounds):
        func(sample)


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


def make_executor(workers, start_method=None, warm_up=None, preload=(), initializer=None, initargs=()):
    """A ProcessPoolExecutor with an explicit start method (``default_start_method``).

    ``warm_up()`` runs first under PyPy with ``fork`` (``run_on_sample``);
    ``preload`` names the modules a ``forkserver`` imports once for all
    workers (those of the work functions).  ``initializer(*initargs)`` runs
    in each worker after its signals are set (``encode`` hands each worker
    its tokenizer this way: under ``fork`` nothing is pickled)."""
    start_method = start_method or default_start_method()
    context = multiprocessing.get_context(start_method)
    if start_method == "fork" and warm_up is not None and platform.python_implementation() == "PyPy":
        warm_up()
    elif start_method == "forkserver" and preload:
        context.set_forkserver_preload(list(preload))
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
    processes = _pool_processes(executor)
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.terminate()
        except Exception:  # already gone
            pass
    for process in processes:
        process.join(5)


def _pool_processes(executor):
    """The worker processes of a ``ProcessPoolExecutor`` (none once it forgot them)."""
    return list((getattr(executor, "_processes", None) or {}).values())


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


def submit(executor, spool, func, args):
    """Submit the unit ``func(*args)``; through files (``spool``) when the pool is refbpe's own."""
    if spool is None:
        return executor.submit(func, *args)
    if func is run_chunk:  # bytes in memory: hand them over in a file too
        func, args = run_spooled_chunk, (args[0], spool.put(args[1])) + tuple(args[2:])
    return executor.submit(run_spooled, spool.path, func, args)


def result_of(future, spool):
    """The result of a ``submit``-ted unit (read back from its spool file)."""
    result = future.result()
    return take(result) if spool is not None else result


def run_units(units, workers, on_result, executor=None, what="a", warm_up=None, preload=(), here=None):
    """Run ``units`` (``(function, args, bytes covered)``); ``on_result(result, covered)``
    for each, as it completes.

    ``executor``: any ``concurrent.futures.Executor``; by default refbpe's own
    pool of ``workers`` processes (``make_executor`` with ``warm_up`` and
    ``preload``), or this process for one worker.  ``what`` names the work
    for ``WorkerError``.  ``here``: a work function that runs a unit in this
    process instead of the unit's own (``units``: a unit's first argument is
    its work); given it, this process is one of refbpe's ``workers``
    (``_run_with_here``), and runs every unit when it is the only one.
    """
    if executor is None and workers <= 1:
        for func, args, covered in units:
            on_result(func(*args) if here is None else func(here, *args[1:]), covered)
        return
    own = executor is None
    if own and here is not None:
        _run_with_here(units, workers, on_result, what, warm_up, preload, here)
        return
    spool = None
    if own:
        executor = make_executor(workers, warm_up=warm_up, preload=preload)
        spool = SpoolDirectory()
    in_flight = {}
    with pool_session(executor, own, spool, what, lambda: in_flight):
        for func, args, covered in units:
            if len(in_flight) >= 2 * workers:
                _finish_some(in_flight, spool, on_result)
            in_flight[submit(executor, spool, func, args)] = covered
            del args
        while in_flight:
            _finish_some(in_flight, spool, on_result)


def _run_with_here(units, workers, on_result, what, warm_up, preload, here):
    """``run_units`` on a pool of ``workers - 1`` processes and this one, each
    taking the next unit when it is free (``_SharedUnits``).

    A pool process gets its next unit the moment its last one completes: the
    pool's manager thread, which learns of it first, submits it (``feed``).
    This process runs the next unit itself with ``here`` (no packing, no
    spool file, no table to add up) and, between its units, hands over the
    pool's results.  So no process idles while units remain, and at the end
    the processes differ by less than one unit (the last ones are small:
    ``units._unit_step``).  Shares decided in advance from the rates seen so
    far went wrong when the load changed under them: counting english_medium
    beside another job, 1.39x the one-worker speed against 1.68x so; on a
    quiet machine both give 1.6-1.7x (perf/count_workers.py).  One unit per
    pool process and none queued behind it: a second one hides the 50 ms or
    so a pool process spends between units (packing its tables, the
    hand-over), but leaves it more to finish at the end, and was no faster.
    """
    executor = make_executor(workers - 1, warm_up=warm_up, preload=preload)
    spool = SpoolDirectory()
    shared = _SharedUnits(units, lambda func, args: submit(executor, spool, func, args))

    def feed(done=None):
        if done is not None:
            shared.finished.put(done)
        future = shared.take_for_pool()
        if future is not None:
            future.add_done_callback(feed)

    with pool_session(executor, True, spool, what, shared.in_flight):
        try:
            for _ in range(workers - 1):
                feed()
            while True:
                _hand_over(shared, spool, on_result, block=False)
                unit = shared.take()
                if unit is None:
                    break
                func, args, covered = unit
                on_result(func(here, *args[1:]), covered)
                del unit, args
            while shared.pending():
                _hand_over(shared, spool, on_result, block=True)
        finally:
            shared.close()


def _hand_over(shared, spool, on_result, block):
    """Hand the pool's finished units' results to ``on_result`` (``block``: wait for one)."""
    while True:
        try:
            # a timeout, not a bare wait: a blocked get would hold off Ctrl-C on some interpreters
            future = shared.finished.get(timeout=0.5) if block else shared.finished.get_nowait()
        except queue.Empty:
            if block and shared.pending():  # ``pending`` raises the pool side's error, if any
                continue
            return
        if future is not None:  # None: the pool side failed (raised by ``pending``)
            on_result(result_of(future, spool), shared.done(future))
        shared.pending()
        block = False


class _SharedUnits(object):
    """Units taken by this process and the pool's manager thread alike, in order.

    A generator cannot be advanced from two threads at once, hence the lock;
    a unit the pool takes is submitted under it too, so that once ``take``
    finds none left, every unit taken is in ``futures``.  An error raised
    on the pool's side (a bad stream while taking a unit, a dead pool while
    submitting one) is raised again in this process.  After ``close`` (the
    run ended, well or not) nothing more is handed out.
    """

    def __init__(self, units, submit_unit):
        self.units, self.submit_unit, self.lock = iter(units), submit_unit, threading.Lock()
        self.futures = {}  # future -> bytes covered, until handed over
        self.finished = queue.Queue()  # the pool's completed futures, for this process
        self.error, self.closed = None, False

    def take(self):
        with self.lock:
            self._raise_error()
            return None if self.closed else next(self.units, None)

    def take_for_pool(self):
        """Submit the next unit to the pool and return its future (None: none left)."""
        with self.lock:
            if self.closed or self.error is not None:
                return None
            try:
                unit = next(self.units, None)
                if unit is None:
                    return None
                func, args, covered = unit
                future = self.submit_unit(func, args)
            except BaseException as e:  # raised in this process instead (``_raise_error``)
                self.error = e
                self.finished.put(None)
                return None
            self.futures[future] = covered
            return future

    def done(self, future):
        with self.lock:
            return self.futures.pop(future)

    def pending(self):
        with self.lock:
            self._raise_error()
            return bool(self.futures)

    def in_flight(self):
        with self.lock:
            return list(self.futures)

    def close(self):
        with self.lock:
            self.closed = True

    def _raise_error(self):
        if self.error is not None:
            error, self.error = self.error, None
            self.closed = True
            raise error


@contextlib.contextmanager
def pool_passes(workers, what="a", warm_up=None, preload=()):
    """Yield ``Passes`` on refbpe's own pool of ``workers`` processes (``make_executor``),
    ended as ``pool_session`` ends a run (a unit still running when the caller
    leaves on an error is let finish; an interrupt stops the workers)."""
    executor = make_executor(workers, warm_up=warm_up, preload=preload)
    spool = SpoolDirectory()
    passes = Passes(executor, spool, workers)
    with pool_session(executor, True, spool, what, passes.in_flight):
        yield passes


class Passes(object):
    """Passes of units (``(function, args, bytes covered)``) on one pool, in the order queued.

    ``queue(units, on_result)`` adds a pass (``units`` is read as the pool
    takes them) and returns its number; ``finish(k)`` hands every result of
    passes up to ``k`` to its pass's ``on_result(result, covered)``, as they
    complete, then submits all that is left (``hand_over``, which the caller
    may also call at once), so that the workers go on with later passes while
    the caller works.  Until then at most ``2 * workers`` units are in
    flight, as in ``run_units``; after it the spool holds the later passes'
    units (at most their input's bytes, on disk), and the workers run at a
    lower priority than the caller (``_lower_priority``).
    """

    def __init__(self, executor, spool, workers):
        self.executor, self.spool, self.limit = executor, spool, 2 * workers
        self.waiting = collections.deque()  # (pass, units not yet submitted, on_result)
        self.futures = {}  # future -> (pass, covered, on_result)
        self.running = []  # per pass: units submitted and not handed over yet
        self.lowered = False  # the workers' priority, lowered once

    def in_flight(self):
        return list(self.futures)

    def queue(self, units, on_result):
        k = len(self.running)
        self.running.append(0)
        self.waiting.append((k, iter(units), on_result))
        self._submit(self.limit)
        return k

    def finish(self, k):
        while self._busy(k):
            self._submit(self.limit)
            finished, _ = concurrent.futures.wait(
                list(self.futures), return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in finished:
                j, covered, on_result = self.futures.pop(future)
                self.running[j] -= 1
                on_result(result_of(future, self.spool), covered)
        self.hand_over()

    def hand_over(self):
        """Submit every unit queued, the workers at a lower priority from then on."""
        self._submit(None)
        if self.futures and not self.lowered:
            _lower_priority(self.executor)
            self.lowered = True

    def last(self):
        """The number of the last pass queued (-1: none)."""
        return len(self.running) - 1

    def _busy(self, k):
        """True while a pass up to ``k`` has units running or still to submit."""
        return any(self.running[: k + 1]) or any(j <= k for j, _, _ in self.waiting)

    def _submit(self, limit):
        """Submit waiting units, in order, until ``limit`` are in flight (None: all)."""
        while self.waiting and (limit is None or len(self.futures) < limit):
            k, units, on_result = self.waiting[0]
            unit = next(units, None)
            if unit is None:
                self.waiting.popleft()
                continue
            func, args, covered = unit
            self.futures[submit(self.executor, self.spool, func, args)] = (k, covered, on_result)
            self.running[k] += 1


BACKGROUND_NICENESS = 10


def _lower_priority(executor):
    """Lower the pool's processes' priority (``nice`` + ``BACKGROUND_NICENESS``) for good.

    Work left to a pool while this process works is off the path it waits
    on, but on 2 cores its 2 workers and this process share them evenly
    unless the workers yield.  SuperBPE at vocab 10,000 on english_small,
    stage 2 counted while stage 1 trains, whole ``train`` processes: 3.16 s
    -> 2.82 s wall (medians of 7 alternating runs against the tree that
    counted both stages first; perf/superbpe.py's SuperBPE command).  Where
    priorities cannot be changed, nothing is.
    """
    for process in _pool_processes(executor):
        try:
            niceness = os.getpriority(os.PRIO_PROCESS, process.pid) + BACKGROUND_NICENESS
            os.setpriority(os.PRIO_PROCESS, process.pid, min(19, niceness))
        except (AttributeError, OSError):  # no priorities here, or the process is gone
            pass


def _finish_some(in_flight, spool, on_result, block=True):
    """Hand over the result of every finished unit in flight; ``block``: wait for one first."""
    if not in_flight:
        return
    finished, _ = concurrent.futures.wait(
        list(in_flight), timeout=None if block else 0, return_when=concurrent.futures.FIRST_COMPLETED
    )
    for future in finished:
        on_result(result_of(future, spool), in_flight.pop(future))
