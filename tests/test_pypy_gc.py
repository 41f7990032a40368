"""encode's and train's restart under PyPy with a small nursery (refbpe/cli/pypy_gc.py): when, how."""

import doctest
import os
import sys

import pytest
from support import IS_PYPY, cs336_path, other_interpreter, run_cli

from refbpe.cli import main as cli_main
from refbpe.cli import pypy_gc
from refbpe.cli import train as train_cli
from refbpe.corpus.idfile import read_npy
from refbpe.tokenizer import Tokenizer

MAIN = os.path.join(os.path.dirname(pypy_gc.__file__), os.pardir, "__main__.py")


def test_the_docstring_examples_run():
    assert doctest.testmod(pypy_gc).failed == 0


def test_size_texts_as_pypy_prints_them():
    assert pypy_gc.parse_size_text("4.0MB") == 4 << 20
    assert pypy_gc.parse_size_text("512.0kB") == 512 << 10
    assert pypy_gc.parse_size_text("1.5GB") == int(1.5 * (1 << 30))
    assert pypy_gc.parse_size_text("") is None and pypy_gc.parse_size_text("12 apples") is None


def test_the_command_is_rebuilt_for_each_entry_point(tmp_path):
    script = tmp_path / "refbpe"
    script.write_text("")
    assert pypy_gc.restart_command([MAIN, "encode", "m", "x"], "/py", ["-B"], MAIN) == [
        "/py", "-B", "-m", "refbpe", "encode", "m", "x",
    ]  # fmt: skip
    assert pypy_gc.restart_command([str(script), "encode"], "/py", [], MAIN) == ["/py", str(script), "encode"]
    assert pypy_gc.restart_command(["-c", "encode"], "/py", [], MAIN) is None
    assert pypy_gc.restart_command([], "/py", [], MAIN) is None
    assert pypy_gc.restart_command([MAIN], "", [], MAIN) is None


@pytest.fixture
def execs(monkeypatch):
    """The ``os.execve`` calls the restart makes, with PyPy's nursery said to be 240 MB."""
    calls = []
    monkeypatch.setattr(pypy_gc.os, "execve", lambda exe, argv, env: calls.append((exe, argv, env)))
    monkeypatch.setattr(pypy_gc, "_nursery_bytes", lambda: 240 << 20)
    for name in pypy_gc.GC_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    return calls


def test_a_long_run_restarts_with_the_settings(execs):
    pypy_gc.restart_with_small_nursery([MAIN, "encode", "m", "big.txt"], pypy_gc.RESTART_FROM)
    pypy_gc.restart_with_small_nursery([MAIN, "encode", "m", "-"], None)  # a stream: size unknown
    assert len(execs) == 2
    exe, argv, env = execs[0]
    assert exe == sys.executable and argv[0] == exe and argv[-4:] == ["refbpe", "encode", "m", "big.txt"]
    assert all(env[name] == value for name, value in pypy_gc.GC_SETTINGS.items())


def test_no_restart_unless_every_condition_holds(execs, monkeypatch):
    pypy_gc.restart_with_small_nursery(None, None)  # main([...]) called from Python
    pypy_gc.restart_with_small_nursery([MAIN, "encode"], pypy_gc.RESTART_FROM - 1)  # a short run
    pypy_gc.restart_with_small_nursery(["-c", "encode"], None)  # no way back to the entry point
    monkeypatch.setattr(pypy_gc, "_nursery_bytes", lambda: 4 << 20)  # the nursery is small already
    pypy_gc.restart_with_small_nursery([MAIN, "encode"], None)
    monkeypatch.setattr(pypy_gc, "_nursery_bytes", lambda: None)  # CPython
    pypy_gc.restart_with_small_nursery([MAIN, "encode"], None)
    monkeypatch.setattr(pypy_gc, "_nursery_bytes", lambda: 240 << 20)
    for name in pypy_gc.GC_SETTINGS:  # the user's setting wins, and the restarted process stops here
        monkeypatch.setenv(name, "8MB")
        pypy_gc.restart_with_small_nursery([MAIN, "encode"], None)
        monkeypatch.delenv(name)
    assert execs == []


def test_train_restarts_with_its_own_settings_unless_the_nursery_is_that_small(execs, monkeypatch):
    train = pypy_gc.TRAIN_GC_SETTINGS
    pypy_gc.restart_with_small_nursery([MAIN, "train", "big.txt"], pypy_gc.RESTART_FROM, train)
    assert len(execs) == 1 and all(execs[0][2][name] == value for name, value in train.items())
    monkeypatch.setattr(pypy_gc, "_nursery_bytes", lambda: pypy_gc.parse_size_text(train["PYPY_GC_NURSERY"]))
    pypy_gc.restart_with_small_nursery([MAIN, "train", "big.txt"], pypy_gc.RESTART_FROM, train)
    assert len(execs) == 1


def test_the_train_command_asks_for_a_restart_with_its_inputs_size(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(train_cli, "restart_with_small_nursery", lambda *a: asked.append(a))
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"low lower lowest " * 100)
    assert cli_main(["train", str(corpus), "--vocab-size", "260", "-o", str(tmp_path / "m")]) == 0
    assert asked == [(None, corpus.stat().st_size, pypy_gc.TRAIN_GC_SETTINGS, pypy_gc.TRAIN_RESTART_FROM)]


def _pypy():
    exe = sys.executable if IS_PYPY else other_interpreter()
    if exe is None:
        pytest.skip("no PyPy that imports this tree")
    return exe


def test_a_restarted_encoding_reads_stdin_and_writes_the_same_ids(tmp_path):
    """Under PyPy a stream restarts the command (where PyPy's nursery is above 4 MB): stdin,
    untouched until then, is read by the restarted process and the ids are the same."""
    text = ("The cat sat on the mat. Привет, мир! 中文 12345\n" * 300).encode("utf-8")
    model = cs336_path("gpt2_vocab.json")
    out = tmp_path / "ids.npy"
    r = run_cli(["encode", model, "-", "-o", out, "--quiet"], python=_pypy(), input=text)
    assert r.returncode == 0, r.stderr.decode()
    tok = Tokenizer.from_files(model, cs336_path("gpt2_merges.txt"))
    assert list(read_npy(str(out))) == tok.encode(text.decode("utf-8"))
