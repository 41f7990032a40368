"""perf/'s layout: every benchmark times through ``perf/harness.py``, the one place that reads a clock.

Each ``perf/*.py`` and ``perf/**/*.py`` is parsed with ``ast``; a call or a reference to a
clock (``time.perf_counter``, ``time.time``, ``time.process_time``, ``time.monotonic``, their
``_ns`` forms, ``resource.getrusage``, ``os.times``, ...), however it was imported, fails the
test unless the file is the harness, or the peer runners' protocol ``perf/peers/_common.py``
(the peers are standalone processes on interpreters without the harness's imports).  Code that
a script passes as a string to a child process is not parsed: that child runs another tree's
refbpe, where the harness is not importable.
"""

import ast
import os

import pytest
from support import REPO_ROOT

PERF = os.path.join(REPO_ROOT, "perf")
ALLOWED = {"perf/harness.py", "perf/peers/_common.py"}
CLOCKS = {
    "time": {
        "time",
        "time_ns",
        "perf_counter",
        "perf_counter_ns",
        "process_time",
        "process_time_ns",
        "monotonic",
        "monotonic_ns",
        "thread_time",
        "thread_time_ns",
        "clock_gettime",
        "clock_gettime_ns",
        "clock",
    },
    "resource": {"getrusage"},
    "os": {"times", "wait3", "wait4"},
}


def perf_scripts():
    found = []
    for folder, dirs, files in os.walk(PERF):
        dirs[:] = sorted(d for d in dirs if d not in ("results", "__pycache__"))
        for name in sorted(files):
            if name.endswith(".py"):
                found.append(os.path.relpath(os.path.join(folder, name), REPO_ROOT))
    return found


def clock_reads(source):
    """``[(line, name)]`` of every clock ``source`` reaches: ``time.perf_counter``, a module
    imported under another name (``import time as t``), or a name imported from it."""
    tree = ast.parse(source)
    modules, names = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in CLOCKS:
                    modules[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module in CLOCKS:
            for alias in node.names:
                if alias.name in CLOCKS[node.module] or alias.name == "*":
                    names[alias.asname or alias.name] = "%s.%s" % (node.module, alias.name)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = modules.get(node.value.id)
            if module and node.attr in CLOCKS[module]:
                found.append((node.lineno, "%s.%s" % (module, node.attr)))
        elif isinstance(node, ast.ImportFrom) and node.module in CLOCKS:
            found += [(node.lineno, names[a.asname or a.name]) for a in node.names]
    return found


def test_the_perf_scripts_are_found():
    scripts = perf_scripts()
    assert "perf/harness.py" in scripts and "perf/run.py" in scripts and "perf/suite/systems.py" in scripts


@pytest.mark.parametrize("path", sorted(set(perf_scripts()) - ALLOWED))
def test_no_perf_script_reads_a_clock_but_the_harness(path):
    with open(os.path.join(REPO_ROOT, path), encoding="utf-8") as f:
        reads = clock_reads(f.read())
    assert not reads, "%s reads clocks itself (time it through perf/harness.py): %s" % (
        path,
        ", ".join("line %d %s" % read for read in reads),
    )


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import time\nt = time.perf_counter()", ["time.perf_counter"]),
        ("import time as clock\nclock.time()", ["time.time"]),
        ("from time import process_time as cpu\ncpu()", ["time.process_time"]),
        ("import resource\nresource.getrusage(resource.RUSAGE_SELF)", ["resource.getrusage"]),
        ("import os\nos.times()", ["os.times"]),
        ("cpu = __import__('x').process_time\nimport time\nf = time.monotonic", ["time.monotonic"]),
        ("import time\ntime.sleep(1)\nimport harness\nharness.stopwatch()", []),
        ("CHILD = 'import time; time.time()'", []),
    ],
)
def test_a_clock_read_is_found_however_imported(source, expected):
    assert [name for _, name in clock_reads(source)] == expected
