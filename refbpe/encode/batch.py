"""A function over a list of texts in worker processes: ``Encoding.encode_batch`` and friends.

tiktoken's batch methods run threads, which its Rust core lets run at once.
refbpe's encoder is Python: threads take turns on the interpreter lock
(CPython) or its equivalent (PyPy), so the work goes to forked processes.

1. The texts are cut into contiguous runs of about equal size (some eight
   per process, so that a long document does not leave the others idle at
   the end).
2. The caller encodes the first run, so that the encoder's caches and,
   under PyPy, its compiled code are made once, not once per process.
3. The function, the texts, the runs and a shared run counter are left in a
   module global, then K - 1 workers fork: each inherits them (with the
   encoder's tables, caches and compiled code) without pickling anything.
   The caller is the K-th and works too.
4. Every process claims the next run from the counter until none is left.
   A worker returns its results as ``array("I")`` (pickled as raw bytes, far
   cheaper than a list of ints); they are put back in input order, and the
   first exception in input order is raised, as ``ThreadPoolExecutor.map``
   raises it.

Small batches (under ``_PROCESSES_FROM`` characters, 16 M), one worker, and
platforms without ``fork`` run in this process; the results are the same.
Calls are serialised by a lock (the global holds one batch at a time).
Cost: the input's encoding spread over the workers, plus O(total ids) to
copy the results back.
"""

import gc
import multiprocessing
import os
import threading
from array import array
from concurrent.futures import ProcessPoolExecutor

__all__ = ["map_texts", "check_num_threads"]

# Below this many characters a batch runs in this process: forking and collecting cost more
# than they save.  Measured by perf/encode_batch.py --small --mb 4 under PyPy (cl100k_base, on 2
# cores shared with other jobs): 4 MB took 0.47 CPU s in this process, 0.97 on 2 processes;
# the same 16 MB as ``corpus.encode``'s in-process limit.
_PROCESSES_FROM = 16 << 20
_RUNS_PER_WORKER = 8

_BATCH = []  # [function, texts, runs, next run counter] of the batch being run; the workers inherit it
_LOCK = threading.Lock()


def check_num_threads(num_threads):
    """``ThreadPoolExecutor(num_threads)``'s check, so that a bad count fails as it does in tiktoken."""
    if num_threads is not None and num_threads <= 0:
        raise ValueError("max_workers must be greater than 0")


def map_texts(function, texts, num_threads):
    """``[function(t) for t in texts]`` (lists of ints < 2**32) on up to ``num_threads`` processes."""
    check_num_threads(num_threads)
    texts = list(texts)
    workers = min(num_threads or os.cpu_count() or 1, os.cpu_count() or 1, len(texts))
    if workers <= 1 or sum(len(t) for t in texts) < _PROCESSES_FROM or not _can_fork():
        return [function(t) for t in texts]
    context = multiprocessing.get_context("fork")
    runs = _runs(texts, workers)
    with _LOCK:
        first = _run(function, texts, runs[0], False)  # compiled and cached here once, before the fork
        _BATCH[:] = [function, texts, runs, context.Value("l", 1)]
        try:
            with ProcessPoolExecutor(workers - 1, mp_context=context) as pool:
                futures = [pool.submit(_work, True) for _ in range(workers - 1)]
                done = _work(False)
                done[0] = first
                for future in futures:
                    done.update(future.result())
        finally:
            del _BATCH[:]
    results = []
    for k in range(len(runs)):
        if isinstance(done[k], BaseException):
            raise done[k]
        results.extend(ids if type(ids) is list else ids.tolist() for ids in done[k])
    return results


def _can_fork():
    return "fork" in multiprocessing.get_all_start_methods()


def _runs(texts, workers):
    """Contiguous ``(start, stop)`` runs of ``texts`` of about equal total length."""
    total = sum(len(t) for t in texts)
    target = max(1, total // (workers * _RUNS_PER_WORKER))
    runs, start, size = [], 0, 0
    for k, text in enumerate(texts):
        size += len(text)
        if size >= target:
            runs.append((start, k + 1))
            start, size = k + 1, 0
    if start < len(texts):
        runs.append((start, len(texts)))
    return runs


def _work(in_worker):
    """{run index: its results, or the exception that stopped it} of the runs this process claims.

    Every process (the caller too) claims the next run until none is left; a worker packs
    each result as ``array("I")``."""
    function, texts, runs, counter = _BATCH
    enabled = gc.isenabled()
    gc.disable()  # a collection would write to (and so copy) every page shared with the other processes
    try:
        return _claim_runs(function, texts, runs, counter, in_worker)
    finally:
        if enabled:
            gc.enable()


def _claim_runs(function, texts, runs, counter, in_worker):
    done = {}
    while True:
        with counter.get_lock():
            k = counter.value
            counter.value = k + 1
        if k >= len(runs):
            return done
        done[k] = _run(function, texts, runs[k], in_worker)


def _run(function, texts, run, in_worker):
    """The results of the texts of ``run``, or the exception that stopped it."""
    try:
        results = [function(texts[i]) for i in range(*run)]
    except Exception as e:
        return e
    return [array("I", ids) for ids in results] if in_worker else results
