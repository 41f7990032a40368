"""refbpe encode under faults: Ctrl-C, SIGTERM, a killed worker -- clean exit, nothing written, no orphans."""

import os
import signal
import subprocess
import sys
import time

import pytest
from support import REPO_ROOT
from test_robustness import EOT, _ends_cleanly, _finish, _wait_for_workers, big_corpus  # noqa: F401

from refbpe import train_bpe
from refbpe.formats import write_model_dir


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("encmodel")
    corpus = d / "c.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog\n" * 200 + EOT, encoding="utf-8")
    vocab, merges = train_bpe(str(corpus), 300, [EOT], workers=1)
    write_model_dir(str(d / "m"), vocab, merges, [EOT])
    return str(d / "m")


def _start_encode(model, corpus, out):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    args = [
        sys.executable,
        "-m",
        "refbpe",
        "encode",
        model,
        corpus,
        "-o",
        out,
        "--workers",
        "2",
        "--progress",
    ]
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True
    )


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_signal_during_encoding_leaves_nothing(tmp_path, big_corpus, model_dir, sig):  # noqa: F811
    out = str(tmp_path / "ids.npy")
    proc = _start_encode(model_dir, big_corpus, out)
    _wait_for_workers(proc, 1)  # --workers 2: this process and one pool worker
    time.sleep(0.3)  # as test_robustness does: let the worker set its signals (its initializer)
    if sig == "SIGINT":
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole group
    else:
        os.kill(proc.pid, signal.SIGTERM)
    status, err, took = _finish(proc)
    assert status == 128 + getattr(signal, sig), err
    assert _ends_cleanly(err, "refbpe: interrupted" if sig == "SIGINT" else "refbpe: terminated"), err
    assert took < 10
    assert os.listdir(str(tmp_path)) == []  # neither the output nor its temporary file


def test_killed_worker_fails_with_one_line(tmp_path, big_corpus, model_dir):  # noqa: F811
    out = str(tmp_path / "ids.npy")
    proc = _start_encode(model_dir, big_corpus, out)
    workers = _wait_for_workers(proc, 1)
    time.sleep(0.3)
    os.kill(workers[-1], signal.SIGKILL)
    status, err, took = _finish(proc)
    assert status == 1, err
    assert _ends_cleanly(
        err,
        "refbpe: error: an encoding worker process died (killed by a signal, or out of memory); "
        "nothing was written",
    ), err
    assert took < 10
    assert os.listdir(str(tmp_path)) == []
