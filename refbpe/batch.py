"""A function over a list of texts in worker processes: ``Encoding.encode_batch`` and friends.

tiktoken's batch methods run threads, which its Rust core lets run at once.
refbpe's encoder is Python: threads take turns on the interpreter lock
(CPython) or its equivalent (PyPy), so the work goes to forked processes.

1. The function and the texts are left in a module global, then the pool
   forks: each worker inherits them (and the encoder's tables, caches and,
   under PyPy, its compiled code) without pickling anything.
2. The texts are cut into contiguous runs of about equal size (some four per
   worker, so that a long document does not leave the others idle at the end);
   a worker gets only the run's bounds.
3. A worker returns each result as an ``array("I")`` (pickled as raw bytes,
   far cheaper than a list of ints), and the results are put back in input
   order.  The first exception, in input order, is raised, as
   ``ThreadPoolExecutor.map`` raises it.

Small batches (under ``_PROCESSES_FROM`` characters), one worker, and
platforms without ``fork`` run in this process; the results are the same.
Calls are serialised by a lock (the global holds one batch at a time).
Cost: the input's encoding spread over the workers, plus O(total ids) to
copy the results back.
"""

import multiprocessing
import os
import threading
from array import array
from concurrent.futures import ProcessPoolExecutor

__all__ = ["map_texts", "check_num_threads"]

# Below this many characters a batch runs in this process: forking and collecting cost more
# than they save (measured by perf/encode_batch.py --small under PyPy: 1 MB of english_medium
# documents take about as long either way on 2 workers).
_PROCESSES_FROM = 1 << 20
_RUNS_PER_WORKER = 4

_BATCH = [None, None]  # (function, texts) of the batch being run; read by the forked workers
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
    with _LOCK:
        _BATCH[0], _BATCH[1] = function, texts
        try:
            context = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(workers, mp_context=context) as pool:
                futures = [pool.submit(_run, start, stop) for start, stop in _runs(texts, workers)]
                results = []
                for future in futures:
                    results.extend(ids.tolist() for ids in future.result())
                return results
        finally:
            _BATCH[0] = _BATCH[1] = None


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


def _run(start, stop):
    """In a worker: the results of texts[start:stop] as ``array("I")``."""
    function, texts = _BATCH
    return [array("I", function(texts[k])) for k in range(start, stop)]
