"""Where the shared read-only data is, for the test suite and the benchmarks alike.

The corpora, the CS336 fixtures and the tiktoken rank files are never copied into the
repository; ``tests/support.py`` and ``perf/harness.py`` both take their locations from here,
so the tests and the benchmarks look in the same places:

- ``SHARED``: ``REFBPE_SHARED``, else ``shared/`` beside the repository (``shared_root()``);
- ``DATA``: ``REFBPE_DATA``, else ``SHARED/data``;
- ``CORPORA`` (the shared corpora), ``CS336`` (the assignment's fixtures and ``corpus.en``),
  ``GPT2_FILES`` (GPT-2's vocab and merges there) and ``TIKTOKEN_CACHE`` (a tiktoken cache
  holding gpt2, cl100k_base and o200k_base, for offline runs).

It lives beside the tests, not in the package: the product holds no path to the shared data
(``tests/test_registry.py``).  The tests import it as ``shared_data`` (pytest puts this
directory on ``sys.path``, as it does for ``support``); the benchmarks as
``tests.shared_data`` (the harness puts the repository on ``sys.path`` for refbpe, and
``tests/`` has no ``__init__.py``, so it is a namespace package there: a tree that
``PYTHONPATH`` names first and that has no such module does not hide this one).  The
environment is read once, at import; nothing on disk is touched, so a missing data directory
costs nothing until a caller opens a file.  Standard library only, Python 3.9 syntax (PyPy
runs the benchmarks).
"""

import os

__all__ = ["CORPORA", "CS336", "DATA", "GPT2_FILES", "SHARED", "TIKTOKEN_CACHE", "shared_root"]

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shared_root():
    """The shared directory: ``REFBPE_SHARED``, else ``shared/`` beside the repository."""
    return os.environ.get("REFBPE_SHARED") or os.path.join(REPO_ROOT, "..", "shared")


SHARED = os.path.abspath(shared_root())
DATA = os.path.abspath(os.environ.get("REFBPE_DATA") or os.path.join(SHARED, "data"))
CORPORA = os.path.join(DATA, "corpora")
CS336 = os.path.join(DATA, "cs336")
GPT2_FILES = [os.path.join(CS336, "gpt2_vocab.json"), os.path.join(CS336, "gpt2_merges.txt")]
TIKTOKEN_CACHE = os.path.join(DATA, "tiktoken", "cache")
