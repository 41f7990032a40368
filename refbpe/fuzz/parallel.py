"""The search in worker processes: ``search_in_workers``.

The classes are dealt round-robin to ``workers`` processes (class k to
worker k mod N), each running ``search.Search.run`` over its own classes
with the same seeds, batches and deadline as one process would, and the
same example database (one directory per mode and class, so no two
processes write the same one).  Their results come back on a queue; the
caller takes the first finding in (round, class) order (``first_finding``),
so the report does not depend on which process finished first.

A failure found in round r lowers a shared cap to r: the others then start
no round after r (rounds up to r can still hold a finding that comes first
in that order) and the search ends as soon as every worker has reported.
Their command's faults (timeouts, crashes) are verdicts inside a worker,
findings like any other.  Ctrl-C (or SIGTERM) in the main process stops
every worker with SIGTERM, on which a worker kills the process group of the
run of theirs it waits for, or is starting, (``target.stop_and_exit``) and exits; then the main
process joins them: no process is left behind.  A worker that dies without reporting is an error.

Cost: one process start per worker.  ``fork`` wherever the platform has it,
even with other threads running (under a test runner): the trial may hold
what does not pickle (an in-process target, a tokenizer), and the search
takes no lock another thread could hold; elsewhere ``corpus.pool``'s method,
the trial pickled and the strategies rebuilt in the worker.
"""

import multiprocessing
import queue
import signal
import traceback

from ..corpus.pool import default_start_method
from .target import TargetError, stop_and_exit

__all__ = ["search_in_workers"]

_NO_CAP = 1 << 30
_POLL = 0.2  # seconds between checks that every worker is still alive
_EXIT_WAIT = 10.0  # seconds a worker that has reported gets to exit


class WorkerFailed(RuntimeError):
    """A worker process died without reporting, or raised an unexpected error."""


def _stop(signum, frame):
    """SIGTERM in a worker: end the run of theirs in progress, then exit at once (no unwinding
    through Hypothesis, which could swallow an exception raised in one of its callbacks)."""
    stop_and_exit(128 + signum)


def _work(index, search, classes, start, cap, results):
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process stops the workers itself
    signal.signal(signal.SIGTERM, _stop)
    try:

        def lower(rnd):
            with cap.get_lock():
                cap.value = min(cap.value, rnd)

        report = (index, "ok", search.run(classes, start, cap=lambda: cap.value, on_find=lower))
    except TargetError as e:
        report = (index, "target", str(e))
    except BaseException:
        report = (index, "error", traceback.format_exc())
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # nothing of theirs runs now: stopping is exiting
    results.put(report)


def search_in_workers(search, workers, start):
    """The ``Search.run`` result of each worker's classes, in worker order."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else default_start_method())
    shares = [search.classes[k::workers] for k in range(workers)]
    shares = [s for s in shares if s]
    cap = ctx.Value("i", _NO_CAP)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_work, args=(k, search, share, start, cap, results), daemon=True)
        for k, share in enumerate(shares)
    ]
    got = {}
    try:
        for p in procs:
            p.start()
        while len(got) < len(procs):
            try:
                index, status, value = results.get(timeout=_POLL)
            except queue.Empty:
                _check_alive(procs, got, results)
                continue
            if status == "target":
                raise TargetError(value)
            if status == "error":
                raise WorkerFailed("a fuzz worker failed:\n%s" % value)
            got[index] = value
    except BaseException:
        _end(procs)
        raise
    for p in procs:  # each has reported: it is flushing the queue and exiting
        p.join(_EXIT_WAIT)
    _end(procs)
    return [got[k] for k in range(len(procs))]


def _check_alive(procs, got, results):
    for k, p in enumerate(procs):
        if k not in got and p.exitcode is not None:
            try:  # its report may still be on its way
                index, status, value = results.get(timeout=1.0)
            except queue.Empty:
                raise WorkerFailed("fuzz worker %d died (exit status %s)" % (k, p.exitcode))
            results.put((index, status, value))
            return


def _end(procs):
    """Stop the workers still running (SIGTERM, then SIGKILL after 5 s) and join them all."""
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(5)
        if p.is_alive():
            p.kill()
            p.join()
