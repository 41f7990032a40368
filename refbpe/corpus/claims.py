"""Units claimed by the processes themselves: how counting shares a regular file's units.

Counting regular files (``count``) knows every unit before it starts: they
are byte ranges (``units.work_units``, a few small reads per cut), so the
whole list is made first and each process gets it once.  Every process,
this one and the pool's, then claims the next unit in input order by
taking the next index from a shared counter (``multiprocessing.Array``,
under its lock), runs it, and claims again until none is left.  A pool
process runs its unit as it is and publishes the result in the spool
directory (``spool.publish``); this process runs its units with its own
work function (``here``: into its tables, nothing packed) and, between
them, takes the results published so far (``spool.ready``).  A file's last
units are its small ones (``units``' taper), so the processes end within a
small unit of each other.

Why claimed (instead of ``pool.run_units`` handing units out from this
process, which ``count`` still does for streams and very many units): a pool
process waited for this one's manager thread to see its result and submit
the next unit, while this one counted.  Claimed, it goes straight on.
english_medium with 2 workers under PyPy (perf/count_workers.py --repeats 11
--trees BEFORE,AFTER, three runs): the 1 -> 2 worker speed-up (``paired x``)
1.52-1.66x before, 1.74-1.77x after, a gain of a few per cent at most once
the noise is allowed for (docs/performance.md).  Tried and dropped: this
process claiming from the back of the list (the small units) and the pool
from the front; the two met on large units, and one process sat idle for the
length of one at the end.

Every unit is claimed exactly once (the counter only grows, under the
lock); the sums do not depend on which process counted what.  An error in
any process closes the counter (no unit is claimed after it) and is raised
here; a dead pool process is the pool's ``WorkerError``
(``pool.pool_session``).  Progress is the bytes of the units finished,
summed in the second shared value.  Memory: one unit in flight per process,
the list of units (at most ``count.CLAIMED_UNITS``), and the results
published and not yet taken (those the pool finished while this process
counted one unit).
"""

import concurrent.futures
import multiprocessing

from .pool import default_start_method, make_executor, pool_session
from .spool import SpoolDirectory, publish, ready, take

__all__ = ["run_claimed"]

_NEXT, _DONE = 0, 1  # the shared array: the next unit to claim, the bytes of the units done
_SHARED = None  # in a pool process: the shared array, set by ``_share``


def _share(shared):
    global _SHARED
    _SHARED = shared


def run_claimed(units, workers, here, on_result, on_progress, what, warm_up=None, preload=(), here_done=None):
    """Run the list ``units`` (``(function, args, bytes covered)``) on ``workers`` processes,
    this one among them.  A pool process runs a unit as ``function(*args)`` and its
    result goes to ``on_result(result)``; this process runs its units as
    ``function(here, *args[1:])``.  ``on_progress(bytes done)`` between units; ``what``
    names the work for ``WorkerError``; ``warm_up`` and ``preload`` as in
    ``pool.make_executor``.  ``here_done()``, if given, runs once this process finds
    no unit left to claim, while the pool may still run its last ones."""
    start_method = default_start_method()
    context = multiprocessing.get_context(start_method)  # a lock is shared within its context only
    shared = context.Array("q", [0, 0])
    executor = make_executor(
        workers - 1, start_method, warm_up, preload, initializer=_share, initargs=(shared,)
    )
    spool = SpoolDirectory()
    futures = []

    def take_ready():
        for path in ready(spool.path):
            on_result(take(path))

    with pool_session(executor, True, spool, what, lambda: futures):
        try:
            futures = [executor.submit(_claim_in_pool, units, spool.path) for _ in range(workers - 1)]
            while True:
                k = _claim(shared, len(units))
                if k is None:
                    break
                func, args, covered = units[k]
                func(here, *args[1:])
                _add_done(shared, covered)
                _raise_pool_error(futures)
                take_ready()
                on_progress(shared[_DONE])
            if here_done is not None:
                here_done()
            while True:
                finished, running = concurrent.futures.wait(
                    futures, timeout=0.05, return_when=concurrent.futures.FIRST_EXCEPTION
                )
                _raise_pool_error(finished)
                take_ready()  # a pool process has published all it ran before its future completes
                on_progress(shared[_DONE])
                if not running:
                    break
        except BaseException:
            _close(shared, len(units))
            raise


def _claim_in_pool(units, directory):
    """In a pool process: the units it claims, each result published."""
    shared = _SHARED
    while True:
        k = _claim(shared, len(units))
        if k is None:
            return
        func, args, covered = units[k]
        publish(directory, func(*args), "%012d" % k)
        _add_done(shared, covered)


def _claim(shared, count):
    """The index of the next of ``count`` units, or None: none left."""
    with shared.get_lock():
        k = shared[_NEXT]
        if k >= count:
            return None
        shared[_NEXT] = k + 1
        return k


def _add_done(shared, covered):
    with shared.get_lock():
        shared[_DONE] += covered


def _raise_pool_error(futures):
    for future in futures:
        if future.done() and future.exception() is not None:
            future.result()


def _close(shared, count, wait=0.1):
    """No unit is claimed from now on (an error or an interrupt ends the run).

    The lock is waited for ``wait`` seconds at most, then the value is written without it.
    Under PyPy, a signal whose handler raised while this process was taking the lock can
    leave the lock taken with no owner: an interrupted count then never ended, every
    process waiting on it here or in ``_claim`` (``refbpe train --workers 3`` stopped by
    SIGTERM while counting: 2 hangs in about 1,200 runs of
    perf/experiments/interrupt_hang.py, whose stacks showed all three processes in the
    lock's ``__enter__``).  The pool's processes are stopped next on an interrupt, so
    nothing waits on the lock after this.
    """
    lock = shared.get_lock()
    held = lock.acquire(timeout=wait)
    try:
        shared.get_obj()[_NEXT] = count
    finally:
        if held:
            lock.release()
