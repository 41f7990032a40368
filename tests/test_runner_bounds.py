"""The fuzz and conformance runner stays bounded whatever the target does: a stderr flood keeps
only a tail, a grandchild that holds stderr after the target ends does not hold the run, an
oversized output is not read, and a command with a mistyped or missing placeholder is refused
before anything runs."""

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from refbpe.fuzz.target import (
    MAX_OUTPUT_BYTES,
    STDERR_TAIL,
    Tail,
    Target,
    TargetError,
    read_output,
    run_with_timeout,
)


@given(size=st.integers(1, 40), chunks=st.lists(st.binary(max_size=100), max_size=12))
def test_a_tail_keeps_the_last_bytes_written(size, chunks):
    tail = Tail(size)
    for chunk in chunks:
        tail.add(chunk)
    assert tail.text() == b"".join(chunks)[-size:].decode("utf-8", "replace")
    assert len(tail.ring) == size  # the ring never grows


def test_a_tail_reads_a_pipe_into_its_ring():
    r, w = os.pipe()
    try:
        os.write(w, b"a" * 300 + "\u00e9nd".encode())
        os.close(w)
        tail = Tail(8)
        while tail.read_from(r):
            pass
        assert tail.text() == "aaaa\u00e9nd"
    finally:
        os.close(r)


def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_a_stderr_flood_is_kept_as_a_tail_in_bounded_memory(tmp_path):
    flood = _script(
        tmp_path,
        "flood.py",
        """
        import sys
        chunk = b"x" * 65535 + b"\\n"
        while True:
            sys.stderr.buffer.write(chunk)
        """,
    )
    probe = (
        "import sys, time\n"
        "from refbpe.fuzz.target import run_with_timeout\n"
        "t = time.time()\n"
        "r = run_with_timeout([sys.executable, %r], 2.0)\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
        "print(r.timed_out, len(r.stderr), time.time() - t, hwm)\n" % flood
    )
    # PyPy's nursery is half the cache the CPU reports (240 MB where it reports 480 MiB), and a
    # two-second read loop touches all of it: a fixed one measures what the runner keeps.
    env = dict(os.environ, PYPY_GC_NURSERY="4MB")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    timed_out, kept, seconds, maxrss_kib = out.stdout.split()
    assert timed_out == "True"
    assert 0 < int(kept) <= STDERR_TAIL
    assert float(seconds) < 2.0 + 2.0
    assert int(maxrss_kib) < 200 * 1024  # VmHWM: ru_maxrss would carry the forking worker's peak over exec


@contextlib.contextmanager
def _target_leaving_a_grandchild(tmp_path, then):
    """A script that starts a grandchild in its own session (holding its stderr for 300 s), then
    runs ``then``; the grandchild is killed at the end."""
    pid_file = tmp_path / "grandchild.pid"
    target = _script(
        tmp_path,
        "target.py",
        """
        import subprocess, sys, time
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                             start_new_session=True)
        with open(%r, "w") as f:
            f.write(str(p.pid))
        %s
        """
        % (str(pid_file), then),
    )
    try:
        yield target
    finally:
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except (OSError, ValueError):
                pass


def test_a_grandchild_holding_stderr_does_not_hold_the_run(tmp_path):
    with _target_leaving_a_grandchild(tmp_path, 'sys.stderr.write("left a grandchild\\n")') as target:
        t0 = time.time()
        run = run_with_timeout([sys.executable, target], 5.0)
        assert time.time() - t0 < 5.0 + 2.0
        assert run.status == 0 and not run.timed_out
        assert "left a grandchild" in run.stderr


def test_a_killed_target_whose_grandchild_holds_stderr_ends_at_the_timeout(tmp_path):
    with _target_leaving_a_grandchild(tmp_path, "time.sleep(300)") as target:
        t0 = time.time()
        run = run_with_timeout([sys.executable, target], 1.5)
        assert run.timed_out
        assert time.time() - t0 < 1.5 + 2.0


@pytest.mark.parametrize(
    "command, message",
    [
        ("trainer {input} {vocab_size} {ouput}", "unknown placeholder {ouput}"),
        ("trainer corpus.txt 500 out", "names no placeholder"),
    ],
)
def test_a_command_with_a_wrong_placeholder_is_refused(command, message):
    with pytest.raises(TargetError, match=message):
        Target("train", command=command).check_placeholders()


def test_fuzz_refuses_a_mistyped_placeholder_before_creating_anything(tmp_path):
    pytest.importorskip("hypothesis")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "refbpe",
            "fuzz",
            "--train",
            "true {input} {vocab_size} {ouput}",
            "--budget",
            "5",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "unknown placeholder {ouput}" in r.stderr
    assert os.listdir(tmp_path) == []


def test_an_oversized_output_is_not_read(tmp_path):
    path = tmp_path / "vocab.json"
    with open(path, "wb") as f:
        f.truncate(MAX_OUTPUT_BYTES + 1)  # sparse: no disk used
    with pytest.raises(ValueError, match="over the 64 MiB"):
        read_output("train", str(path))


def test_split_starts_no_more_processes_than_units(tmp_path):
    from refbpe.cli.split import workers_for_the_work

    assert workers_for_the_work(1000, 200_000, 1 << 20, 1) == 1
    assert workers_for_the_work(1000, 5 << 20, 1 << 20, 2) == 7
    assert workers_for_the_work(2, 5 << 20, 1 << 20, 1) == 2
    assert workers_for_the_work(8, None, 1 << 20, 1) == 8  # a stream: size unknown
    text = tmp_path / "t.txt"
    text.write_text("Hello world, it's 2024!\n" * 8000)
    outs = []
    for workers in ("1", "1000"):
        out = tmp_path / ("pieces-%s.jsonl" % workers)
        r = subprocess.run(
            [sys.executable, "-m", "refbpe", "split", str(text), "--workers", workers, "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0]
