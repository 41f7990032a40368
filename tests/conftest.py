"""pytest fixtures and markers for the refbpe suite (shared helpers live in ``support``).

Markers (registered in pyproject.toml, ``--strict-markers``):

- ``slow``: a test that takes more than about 0.7 s on CPython on 2 cores (the shared corpora,
  the command line on megabytes, signals and timings, both interpreters); set by hand with
  ``@pytest.mark.slow``.
- ``peers``: the test needs a peer library (tiktoken, tokenizers, rustbpe or numpy);
- ``cli``: the test runs the command line (``run_main``, ``run_cli``, ``start_train``, or
  ``python -m refbpe``).

``peers`` and ``cli`` are set here at collection, from what the test's code reaches: its own
names and string constants, those of the functions of its module that it calls, and those of
its fixtures, so that a new test is marked without anyone remembering to.

The quick unit run skips the slow tests: 577 of the 762 tests, about 38 CPU-seconds, so about
20 s on 2 idle cores with ``-n 2``, against about 130 CPU-seconds (over a minute) for the
whole suite (user + sys of ``time`` around the first and last commands below, CPython 3.11)::

    .venv/bin/python -m pytest -n 2 -q -m "not slow" tests
    .venv/bin/python -m pytest -q -m "not peers" tests          # without the peer libraries
    .venv/bin/python -m pytest -n 2 -q tests                    # everything
"""

import inspect
import signal

import pytest
from support import cs336_path, shutdown_executors

# The signal tests send SIGINT to the commands they start.  A suite started in the background
# by a non-interactive shell inherits SIGINT ignored, and an ignored signal stays ignored across
# exec: the commands would never see it.  Handled here, it is the default again in every child.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

PEER_MODULES = {"tiktoken", "tokenizers", "rustbpe", "numpy"}
CLI_RUNNERS = {"run_main", "run_cli", "start_train", "refbpe.cli"}
IMPORTERS = {"importorskip", "import_module", "find_spec"}


def _unwrap(fn):
    """The test function itself under Hypothesis's and functools' wrappers."""
    inner = getattr(getattr(fn, "hypothesis", None), "inner_test", None)
    return inspect.unwrap(inner or fn)


def reached(fn):
    """(names, strings) that ``fn`` uses, itself, in its nested functions and in the functions of
    its own module that it calls: the global, attribute and imported names, and the string
    constants (a module name is counted as a string only where it is imported by name, e.g.
    ``pytest.importorskip("tiktoken")``: elsewhere "tiktoken" may name a model format)."""
    names, strings, seen = set(), set(), set()
    fn = _unwrap(fn)
    stack = [fn.__code__]
    while stack:
        code = stack.pop()
        if code in seen:
            continue
        seen.add(code)
        names.update(name.split(".")[0] for name in code.co_names)
        names.update(code.co_names)
        imports_by_name = bool(IMPORTERS & set(code.co_names))
        for const in code.co_consts:
            if isinstance(const, str):
                strings.add(const)
                if imports_by_name:
                    names.add(const.split(".")[0])
            elif inspect.iscode(const):
                stack.append(const)
        for name in code.co_names:
            target = fn.__globals__.get(name)
            if inspect.isfunction(target) and target.__module__ == fn.__module__:
                stack.append(target.__code__)
    return names, strings


def _fixture_functions(item):
    for name in item.fixturenames:
        for fixturedef in item._fixtureinfo.name2fixturedefs.get(name, ()):
            if inspect.isfunction(getattr(fixturedef, "func", None)):
                yield fixturedef.func


# The modules holding the longest tests (``pytest --durations=0``: the per-code-point Unicode
# probes, then fuzz runs), started first, so that under ``-n 2`` the workers take the short
# tests last and end together instead of one worker running a probe while the other waits.
START_FIRST = (
    "test_unicode_versions.py",
    "test_fuzz.py",
    "test_persistent.py",
    "test_limits.py",
    "test_custom_patterns.py",
    "test_tiktoken_api.py",
    "test_profiles.py",
    "test_tiktoken_ids.py",
)


def _start_rank(item):
    name = item.nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return START_FIRST.index(name) if name in START_FIRST else len(START_FIRST)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_start_rank)  # stable: each module keeps its own order
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        names, strings = reached(item.function)
        for fixture in _fixture_functions(item):
            more_names, more_strings = reached(fixture)
            names |= more_names
            strings |= more_strings
        if names & PEER_MODULES:
            item.add_marker(pytest.mark.peers)
        if names & CLI_RUNNERS or {"-m", "refbpe"} <= strings:
            item.add_marker(pytest.mark.cli)


@pytest.fixture(scope="module", autouse=True)
def _shutdown_shared_executors():
    """The process pools of ``support.executor_for`` end with the module that used them."""
    yield
    shutdown_executors()


@pytest.fixture(scope="session")
def gpt2_files():
    return cs336_path("gpt2_vocab.json"), cs336_path("gpt2_merges.txt")
