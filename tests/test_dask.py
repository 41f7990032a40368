"""Counting on a Dask cluster (``--executor dask://HOST:PORT``).

This module starts a scheduler and two one-thread workers on 127.0.0.1 (as
subprocesses, in their own directory, so inputs sent by path must be absolute)
and stops them at the end.  Training with the counting on the cluster, by
path and by chunk, writes byte-identical files to a local run.  Skipped when
``distributed`` is not installed (CI installs it on CPython).
"""

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from support import cli_env, digests, run_cli

from refbpe.cli.train import stdlib_sources

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None,
    reason="distributed is not installed (pip install 'refbpe[dask]'; CI installs it on CPython)",
)

EOT = "<|endoftext|>"
OUTPUTS = ("vocab.json", "merges.txt", "refbpe.json")
START_TIMEOUT = 90  # seconds: a loaded CI machine starts Python processes slowly

# Runs in a subprocess: this test process never imports distributed (its
# threads would change how other tests' process pools start).
EXECUTED = r"""
import json, sys
from distributed import Client
with Client(sys.argv[1], timeout=%d) as client:
    client.wait_for_workers(2, timeout=%d)
    counts = client.run(lambda dask_worker: getattr(dask_worker, "state", dask_worker).executed_count)
print(json.dumps(sorted(counts.values())))
""" % (START_TIMEOUT, START_TIMEOUT)


def _start(args, directory, log_name):
    log = open(os.path.join(directory, log_name), "wb")
    try:
        return subprocess.Popen(
            [sys.executable, "-m"] + args,
            cwd=directory,
            env=cli_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    finally:
        log.close()


def _stop(procs):
    """SIGTERM, then SIGKILL to the process group after 20 s."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.time() + 20
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


def _scheduler_address(path, procs, directory):
    deadline = time.time() + START_TIMEOUT
    while time.time() < deadline:
        for p in procs:
            if p.poll() is not None:
                pytest.fail("a Dask process exited early:\n" + _logs(directory))
        try:
            with open(path) as f:
                return json.load(f)["address"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.2)
    pytest.fail("the Dask scheduler did not start:\n" + _logs(directory))


def _logs(directory):
    return "\n".join(
        open(os.path.join(directory, n), errors="replace").read()[-2000:]
        for n in sorted(os.listdir(directory))
        if n.endswith(".log")
    )


def executed_counts(address):
    """Tasks each worker has run, once both are connected."""
    r = subprocess.run(
        [sys.executable, "-c", EXECUTED, address],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
        timeout=3 * START_TIMEOUT,
    )
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``dask://127.0.0.1:PORT`` of a scheduler with two one-thread workers."""
    directory = str(tmp_path_factory.mktemp("dask-cluster"))
    scheduler_file = os.path.join(directory, "scheduler.json")
    no_dashboard = ["--no-dashboard", "--dashboard-address", "127.0.0.1:0"]
    # Should this process die without its teardown, the scheduler exits when
    # idle for 5 minutes and the workers a minute after it.
    scheduler, workers = [], []
    try:
        scheduler.append(
            _start(
                [
                    "distributed.cli.dask_scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--scheduler-file",
                    scheduler_file,
                    "--idle-timeout",
                    "300s",
                ]
                + no_dashboard,
                directory,
                "scheduler.log",
            )
        )
        address = _scheduler_address(scheduler_file, scheduler, directory)
        for i in range(2):
            workers.append(
                _start(
                    [
                        "distributed.cli.dask_worker",
                        "--scheduler-file",
                        scheduler_file,
                        "--host",
                        "127.0.0.1",
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--name",
                        "w%d" % i,
                        "--death-timeout",
                        "60",
                    ]
                    + no_dashboard,
                    directory,
                    "worker%d.log" % i,
                )
            )
        yield "dask://" + address[len("tcp://") :], address
    finally:
        # Workers first: a worker whose scheduler has gone may retry instead of exiting.
        _stop(workers)
        _stop(scheduler)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Two corpus files, named relative to their directory (the cwd of the runs).

    The first is this interpreter's standard library (about 130 KB): no
    shared data needed."""
    directory = tmp_path_factory.mktemp("inputs")
    text = b""
    for source in stdlib_sources():
        text += open(source, "rb").read().decode("utf-8", "replace").encode("utf-8") + EOT.encode()
        if len(text) > 130000:
            break
    (directory / "a.txt").write_bytes(text)
    story = "caf\u00e9 \u4e2d\u6587 na\u00efve<|endoftext|>ab ba  x\n\ty's 12\r\n"
    (directory / "b.txt").write_bytes((story * 1500).encode("utf-8"))
    return str(directory), ["a.txt", "b.txt"]


def refbpe(args, cwd):
    r = run_cli(args, cwd=cwd)
    return r.returncode, r.stderr.decode("utf-8", "replace")


def test_dask_counting_is_byte_identical_to_local(cluster, inputs, tmp_path):
    url, address = cluster
    cwd, files = inputs
    train = ["train"] + files + ["--vocab-size", 500, "--special-token", EOT, "--quiet"]
    local = str(tmp_path / "local")
    assert refbpe(train + ["--out", local, "--workers", 1], cwd) == (0, "")
    before = executed_counts(address)
    # 200 KB in 16 KiB units: more than 10 per run, so both workers get several.
    for mode in ("path", "chunk"):
        out, report = str(tmp_path / mode), str(tmp_path / (mode + ".json"))
        rc, err = refbpe(
            train
            + [
                "--out",
                out,
                "--executor",
                url,
                "--executor-data",
                mode,
                "--chunk-size",
                "16K",
                "--report",
                report,
            ],
            cwd,
        )
        assert rc == 0, err
        assert digests(out, OUTPUTS) == digests(local, OUTPUTS), mode
        assert json.load(open(report))["executor"] == url
    after = executed_counts(address)
    ran = [b - a for a, b in zip(before, after)]
    assert sum(ran) >= 2 * 10 and min(ran) > 0, ran


def test_dask_counting_of_a_shard(cluster, inputs, tmp_path):
    url, _ = cluster
    cwd, files = inputs
    local, remote = str(tmp_path / "local.counts.tsv"), str(tmp_path / "remote.counts.tsv")
    count = ["count"] + files + ["--special-token", EOT, "--shard", "1/2", "--chunk-size", "16K"]
    assert refbpe(count + ["-o", local, "--workers", 1], cwd) == (0, "")
    assert refbpe(count + ["-o", remote, "--executor", url, "--executor-data", "chunk"], cwd) == (0, "")
    assert open(remote, "rb").read() == open(local, "rb").read()


def test_a_workers_input_error_is_one_line(cluster, tmp_path):
    url, _ = cluster
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine text\n" * 5000 + b"\xff\xfe\n" + b"more\n" * 100)
    rc, err = refbpe(
        ["count", bad, "-o", tmp_path / "o.tsv", "--executor", url, "--chunk-size", "8K"], str(tmp_path)
    )
    assert rc == 2 and err.count("\n") == 1 and "invalid UTF-8 at byte offset 50000" in err, err
    assert not (tmp_path / "o.tsv").exists()


def test_unreachable_scheduler_fails_quickly(tmp_path):
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = (
        "from refbpe.corpus.cluster import ExecutorError, dask_executor\n"
        "try:\n"
        "    with dask_executor('dask://127.0.0.1:%d', timeout=2): pass\n"
        "except ExecutorError as e:\n"
        "    print(e)\n" % port
    )
    t0 = time.time()
    r = subprocess.run(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().startswith("cannot reach the Dask scheduler at dask://127.0.0.1:%d" % port)
    assert time.time() - t0 < 60
