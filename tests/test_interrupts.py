"""Ctrl-C and SIGTERM end a training run within 1 s, while counting and during a long merge.

Each run is ``python -m refbpe train`` (this interpreter) in a new session, so that
the whole process tree can be followed; the time is from the signal until no process
of the run is left.  perf/interrupts.py measures the same on both interpreters with
repeats (before the fix in ``pool.stop_pool``, CPython took 4.8-8 s while counting).
"""

import os
import random
import signal
import subprocess
import sys
import time

import pytest
from support import IS_PYPY, REPO_ROOT, session_processes, start_train

EOT = "<|endoftext|>"
LIMIT = 1.0  # seconds


def _start(corpus, out, *extra):
    return start_train(corpus, out, *extra, stdout=subprocess.DEVNULL)


def _signal_and_time(proc, sig):
    """Send ``sig`` as a terminal or ``kill`` would; (exit status, stderr, seconds until all gone)."""
    t0 = time.time()
    if sig == "SIGINT":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGTERM)
    try:
        err = proc.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError("the run did not end within 30 s of %s" % sig)
    while session_processes(proc.pid) and time.time() - t0 < 30:
        time.sleep(0.01)
    return proc.returncode, err.decode("utf-8", "replace"), time.time() - t0


@pytest.fixture(scope="module")
def word_corpus(tmp_path_factory):
    rng = random.Random(5)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    block = " ".join(rng.choice(words) for _ in range(200000)).encode() + b"\n" + EOT.encode() + b"\n"
    path = str(tmp_path_factory.mktemp("words") / "words.txt")
    with open(path, "wb") as f:
        for _ in range(12):  # about 16 MB: counting lasts seconds on either interpreter
            f.write(block)
    return path


@pytest.fixture(scope="module")
def long_word(tmp_path_factory):
    rng = random.Random(6)
    path = str(tmp_path_factory.mktemp("long") / "long.txt")
    with open(path, "wb") as f:
        size = (4 if IS_PYPY else 1) << 20  # merging lasts seconds, counting not much longer
        f.write(rng.randbytes(size).translate(bytes(b"abcd"[i % 4] for i in range(256))))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_signal_while_counting_ends_within_a_second(tmp_path, word_corpus, sig):
    out = str(tmp_path / "model")
    proc = _start(
        word_corpus,
        out,
        "--vocab-size",
        "1000",
        "--special-token",
        EOT,
        "--workers",
        "3",
        "--chunk-size",
        "1M",
    )
    deadline = time.time() + 60
    while (
        len(session_processes(proc.pid)) < 3 and time.time() < deadline
    ):  # main (counting too) + 2 in the pool
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    time.sleep(0.3)
    assert proc.poll() is None, "counting ended before the signal"
    status, err, took = _signal_and_time(proc, sig)
    assert status == 128 + getattr(signal, sig), err
    assert "Traceback" not in err
    assert took < LIMIT, "%.2f s from %s to the end of the run" % (took, sig)
    assert not os.path.exists(out)


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_signal_during_a_merge_on_a_long_word_ends_within_a_second(tmp_path, long_word, sig):
    out = str(tmp_path / "model")
    proc = _start(long_word, out, "--vocab-size", "30000", "--workers", "1")
    seen = b""
    deadline = time.time() + 120
    while b"merges" not in seen and time.time() < deadline:  # the merge phase's progress line
        chunk = os.read(proc.stderr.fileno(), 4096)
        assert chunk, "the run ended before merging: %r" % seen
        seen += chunk
    time.sleep(0.2)
    assert proc.poll() is None, "merging ended before the signal"
    status, err, took = _signal_and_time(proc, sig)
    assert status == 128 + getattr(signal, sig), err
    assert "Traceback" not in err
    assert took < LIMIT, "%.2f s from %s to the end of the run" % (took, sig)
    assert not os.path.exists(out)


_HUNG_CLEANUP = """
import os, signal, sys, threading, time
import refbpe.cli.commands as commands
import refbpe.cli.train as train

SIGNAL, commands.INTERRUPT_GRACE = getattr(signal, sys.argv[1]), float(sys.argv[2])


def run(args):  # a command whose cleaning up never ends
    try:
        os.kill(os.getpid(), SIGNAL)
        time.sleep(30)  # the signal's exception is raised here
    finally:
        threading.Event().wait()


train.run = run
sys.argv = ["refbpe", "train", "corpus.txt", "--out", "model", "--vocab-size", "300"]
sys.exit(commands.main())
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_run_whose_cleaning_up_hangs_still_ends_after_the_grace(sig):
    t0 = time.time()
    r = subprocess.run(
        [sys.executable, "-c", _HUNG_CLEANUP, sig, "0.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=REPO_ROOT),
        timeout=60,
    )
    assert r.returncode == 128 + getattr(signal, sig), r.stderr.decode()
    assert b"still stopping" in r.stderr
    assert time.time() - t0 < 30


def test_a_library_call_is_not_ended_by_the_grace(tmp_path):
    script = _HUNG_CLEANUP.replace("sys.exit(commands.main())", "sys.exit(commands.main(sys.argv[1:]))")
    script = script.replace("threading.Event().wait()", "time.sleep(2)")  # ends by itself after 2 s
    r = subprocess.run(
        [sys.executable, "-c", script, "SIGINT", "0.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=REPO_ROOT),
        timeout=60,
    )
    assert r.returncode == 130, r.stderr.decode()  # main's own exit status, after the 2 s
    assert b"still stopping" not in r.stderr
