"""``refbpe verify`` sets PyPy's JIT thresholds (``cli/pypy_jit.py``); other subcommands do not."""

import sys

import pytest

import refbpe.cli as refbpe_cli
from refbpe.cli import pypy_jit


class _RecordingJit(object):
    def __init__(self):
        self.params = []

    def set_param(self, params):
        self.params.append(params)


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["refbpe", "verify", "c.txt", "--against", "m.json"], [pypy_jit.VERIFY_JIT_PARAMS]),
        (["refbpe", "train", "c.txt", "-o", "m"], []),
        (["refbpe", "encode", "verify", "c.txt"], []),
        (["refbpe"], []),
    ],
)
def test_only_verify_sets_the_thresholds(monkeypatch, argv, expected):
    jit = _RecordingJit()
    monkeypatch.setattr(pypy_jit, "pypyjit", jit)
    pypy_jit.tune_jit_early(argv)
    assert jit.params == expected


def test_the_thresholds_are_valid_jit_parameters():
    """PyPy refuses an unknown parameter; under CPython there is nothing to set."""
    if pypy_jit.pypyjit is None:
        assert "PyPy" not in sys.version
        pypy_jit.tune_verify_jit()  # a no-op
        return
    pypy_jit.tune_verify_jit()
    pypy_jit.tune_verify_jit("threshold=1039,function_threshold=1619")  # PyPy's defaults back


def test_the_entry_tunes_the_process_it_runs_in(monkeypatch):
    asked = []
    monkeypatch.setattr(refbpe_cli, "restart_early", lambda argv: None)
    monkeypatch.setattr(refbpe_cli, "tune_jit_early", asked.append)
    monkeypatch.setattr(sys, "argv", ["refbpe", "verify", "--help"])
    with pytest.raises(SystemExit):
        refbpe_cli.main()
    assert asked == [["refbpe", "verify", "--help"]]
