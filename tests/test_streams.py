"""Inputs that are not regular files are read as streams: the same bytes give the same result.

A pipe, a FIFO, a process substitution (``/dev/fd/N``), ``/dev/stdin`` and
``-`` have no useful ``stat`` size; ``refbpe.corpus.io.is_stream`` sends them
down the sequential path, so train, count, encode and split give byte for byte
what they give on a regular file holding the same bytes.
"""

import json
import os
import subprocess
import sys
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import REPO_ROOT, assert_one_line_error, mixed_text, read_outputs, run_main, write_file

from refbpe import train_bpe
from refbpe.corpus.io import can_reread, input_size, is_stream

EOT = "<|endoftext|>"
SAMPLE = ("The cat sat on the mat.\nDon't stop: 12 cats, 3 mats!\n" * 40 + EOT + "Привет, мир\n中文 🙃\n") * 4
MODES = ["file", "fifo", "pipe", "stdin"]
OUTPUT_NAMES = {"train": "m", "count": "c.counts.tsv", "encode": "ids.npy", "split": "s.txt"}


def _feed(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _run(argv, data, mode, tmp):
    """``refbpe ARGV`` with ``{in}`` the input given as ``mode``: (status, stderr)."""
    pass_fds, stdin, feeder = (), subprocess.DEVNULL, None
    if mode == "file":
        source = write_file(os.path.join(tmp, "in.txt"), data)
    elif mode == "fifo":
        source = os.path.join(tmp, "in.fifo")
        os.mkfifo(source)
        feeder = threading.Thread(target=_feed, args=(source, data), daemon=True)
    elif mode == "pipe":  # what a shell's <(cmd) passes
        r, w = os.pipe()
        source, pass_fds = "/dev/fd/%d" % r, (r,)
        feeder = threading.Thread(target=_feed, args=(w, data), daemon=True)
    else:
        source, stdin = "-", subprocess.PIPE
    if feeder is not None:
        feeder.start()
    proc = subprocess.Popen(
        [sys.executable, "-m", "refbpe"] + [a.replace("{in}", source) for a in argv],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=pass_fds,
        env=dict(os.environ, PYTHONPATH=REPO_ROOT),
    )
    if mode == "pipe":
        os.close(r)
    _, err = proc.communicate(data if mode == "stdin" else None, timeout=300)
    if feeder is not None:
        feeder.join(10)
    return proc.returncode, err.decode()


def _outputs(out):
    if os.path.isdir(out):
        return read_outputs(out)
    with open(out, "rb") as f:
        return f.read()


def _argv(command, model, out, workers):
    return {
        "train": ["train", "{in}", "--vocab-size", "300", "--special-token", EOT, "-o", out, "--quiet"],
        "count": ["count", "{in}", "--special-token", EOT, "-o", out],
        "encode": ["encode", model, "{in}", "-o", out, "--quiet"],
        "split": ["split", "{in}", "--special-token", EOT, "--out", out],
    }[command] + ["--workers", str(workers)]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("model"))
    status, err = _run(_argv("train", None, os.path.join(d, "m"), 1), SAMPLE.encode(), "file", d)
    assert status == 0, err
    return os.path.join(d, "m")


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=mixed_text(extra=[EOT]), command=st.sampled_from(["train", "count", "encode", "split"]))
def test_every_reader_gives_the_same_result_on_a_file_a_pipe_a_fifo_and_stdin(
    tmp_path_factory, model, text, command
):
    data = (text + SAMPLE).encode("utf-8", "surrogatepass")
    results = {}
    for mode in MODES:
        tmp = str(tmp_path_factory.mktemp(mode))
        out = os.path.join(tmp, OUTPUT_NAMES[command])
        status, err = _run(_argv(command, model, out, 2), data, mode, tmp)
        assert status == 0, (mode, err)
        results[mode] = _outputs(out)
    assert results["fifo"] == results["file"]
    assert results["pipe"] == results["file"]
    assert results["stdin"] == results["file"]


@pytest.mark.parametrize("mode", ["pipe", "fifo"])
def test_train_on_a_process_substitution_is_not_an_empty_model(tmp_path, mode):
    """The issue's `refbpe train <(cat small.txt) ...`: 300 tokens, as from the file."""
    data = SAMPLE.encode()
    outs = {}
    for m in ("file", mode):
        d = str(tmp_path / m)
        os.mkdir(d)
        status, err = _run(_argv("train", None, os.path.join(d, "m"), 1), data, m, d)
        assert status == 0, err
        outs[m] = read_outputs(os.path.join(d, "m"))
    assert outs[mode] == outs["file"]
    with open(os.path.join(str(tmp_path / mode), "m", "vocab.json"), encoding="utf-8") as f:
        assert sorted(json.load(f).values()) == list(range(300))  # not 256 bytes and the special token


def test_encode_of_dev_stdin_from_a_pipe_writes_every_token(tmp_path, model):
    """The issue's `cat small.txt | refbpe encode M /dev/stdin -o ids.npy`."""
    data = SAMPLE.encode()
    outs = {}
    for source, mode in (("{in}", "file"), ("/dev/stdin", "stdin")):
        out = str(tmp_path / ("%s.npy" % mode))
        argv = ["encode", model, source, "-o", out, "--quiet"]
        status, err = _run(argv, data, mode, str(tmp_path))
        assert status == 0, err
        outs[mode] = _outputs(out)
    assert outs["stdin"] == outs["file"] and len(outs["file"]) > 1000


def test_train_bpe_on_a_dev_fd_path(tmp_path):
    data = SAMPLE.encode()
    path = write_file(tmp_path / "in.txt", data)
    r, w = os.pipe()
    feeder = threading.Thread(target=_feed, args=(w, data), daemon=True)
    feeder.start()
    try:
        from_pipe = train_bpe("/dev/fd/%d" % r, 300, [EOT], workers=1)
    finally:
        os.close(r)
    feeder.join(10)
    assert from_pipe == train_bpe(path, 300, [EOT], workers=1)
    assert len(from_pipe[0]) == 300


def test_what_counts_as_a_stream(tmp_path):
    regular = write_file(tmp_path / "a.txt", "x")
    fifo = str(tmp_path / "f")
    os.mkfifo(fifo)
    assert not is_stream(regular) and input_size(regular) == 1 and can_reread(regular)
    for path in ("-", "x.gz", fifo, "/dev/stdin", "/proc/self/status"):
        assert is_stream(path) and input_size(path) is None, path
    assert not can_reread("-") and not can_reread(fifo) and can_reread("x.gz")


def test_a_shard_of_a_pipe_is_one_line(tmp_path, capsys):
    fifo = str(tmp_path / "in.fifo")
    os.mkfifo(fifo)  # never opened: the check comes first
    status, _, err = run_main(capsys, "count", fifo, "-o", str(tmp_path / "c.tsv"), "--shard", "0/2")
    refused = r"refbpe: error: .*in\.fifo: --shard needs regular files \(stdin, a pipe"
    assert_one_line_error(status, err, refused)
