"""Counting on a Dask cluster: ``--executor dask://HOST:PORT``.

``count.count_words`` takes any ``concurrent.futures.Executor``; a Dask
``distributed.Client`` gives one (``client.get_executor()``) whose futures
are plain ``concurrent.futures.Future`` objects, completed from the client's
event loop, so ``concurrent.futures.wait`` sees them finish in any order.
Counting is the same function on the same units of work, and the tables are
added up by the same code, so the result is the local run's.

Data reaches the workers by path (``executor_data="path"``: each worker
opens the file at the same absolute path, so they need a shared filesystem)
or by chunk (``"chunk"``: this process reads every unit and ships its
bytes through the scheduler).  Workers need refbpe installed (the same
version), and should run one thread each (``dask worker --nthreads 1``,
several workers per machine): counting is pure Python and holds the GIL.

``distributed`` is an optional dependency (``pip install 'refbpe[dask]'``),
imported only here and only when asked for.
"""

import concurrent.futures
import contextlib
import warnings

__all__ = ["ExecutorError", "scheduler_address", "dask_executor"]

# Seconds to reach the scheduler and to wait for a first worker: an
# unreachable scheduler is an error well before Dask's own 30 s default.
CONNECT_TIMEOUT = 10


class ExecutorError(ValueError):
    """A bad ``--executor`` URL, a missing ``distributed``, an unreachable cluster."""


def scheduler_address(url):
    """``dask://HOST:PORT`` -> ``tcp://HOST:PORT`` (ExecutorError otherwise)."""
    prefix = "dask://"
    rest = url[len(prefix) :] if url.startswith(prefix) else None
    host, _, port = (rest or "").rpartition(":")
    if not host or not port.isdigit() or "/" in rest:
        raise ExecutorError("--executor expects dask://HOST:PORT (a Dask scheduler), got %r" % (url,))
    return "tcp://" + rest


class _QuietExecutor(concurrent.futures.Executor):
    """The client's executor, without Dask's warning about large task data.

    Shipping chunks through the scheduler is what ``executor_data="chunk"``
    asks for; Dask warns on every such task ("Sending large graph").
    """

    def __init__(self, executor):
        self._executor = executor

    def submit(self, fn, *args, **kwargs):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            return self._executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait=True, cancel_futures=False):
        self._executor.shutdown(wait=wait)


@contextlib.contextmanager
def dask_executor(url, timeout=CONNECT_TIMEOUT):
    """``(executor, threads)`` for the Dask scheduler at ``url``; the client is
    closed on exit.  ``threads`` is the cluster's total worker threads."""
    address = scheduler_address(url)
    try:
        import distributed
    except ImportError:
        raise ExecutorError("--executor %s needs the distributed package: pip install 'refbpe[dask]'" % url)
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, distributed.TimeoutError) as e:
        raise ExecutorError("cannot reach the Dask scheduler at %s: %s" % (url, _one_line(e)))
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (OSError, distributed.TimeoutError):
            raise ExecutorError("the Dask scheduler at %s has no workers (waited %ds)" % (url, timeout))
        threads = sum(client.nthreads().values())
        # pure=False: every unit is a task of its own, without hashing its arguments.
        yield _QuietExecutor(client.get_executor(pure=False)), threads
    finally:
        client.close()


def _one_line(error):
    return " ".join(str(error).split()) or type(error).__name__
