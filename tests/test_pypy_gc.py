"""encode's and train's restart under PyPy with a small nursery (refbpe/cli/pypy_gc.py): when, how."""

import doctest
import os
import subprocess
import sys

import pytest
from support import IS_PYPY, cli_env, cs336_path, other_interpreter, run_cli

import refbpe.cli as refbpe_cli
from refbpe.cli import build_parser, pypy_gc
from refbpe.cli import main as cli_main
from refbpe.cli import train as train_cli
from refbpe.corpus.idfile import read_npy
from refbpe.corpus.units import input_spans, total_bytes
from refbpe.encode.tokenizer import Tokenizer

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


def test_a_nursery_smaller_than_asked_for_restarts_too(execs, monkeypatch):
    """Where PyPy sized its nursery from a small reported cache (512 KB from 1 MiB), the
    settings are applied all the same: the same on every machine."""
    monkeypatch.setattr(pypy_gc, "_nursery_bytes", lambda: 512 << 10)
    pypy_gc.restart_with_small_nursery([MAIN, "encode", "m", "big.txt"], pypy_gc.RESTART_FROM)
    train = pypy_gc.TRAIN_GC_SETTINGS
    pypy_gc.restart_with_small_nursery([MAIN, "train", "big.txt"], pypy_gc.TRAIN_RESTART_FROM, train)
    assert [env["PYPY_GC_NURSERY"] for _, _, env in execs] == ["4MB", "16MB"]
    assert execs[0][2]["PYPY_GC_MAJOR_COLLECT"] == pypy_gc.GC_SETTINGS["PYPY_GC_MAJOR_COLLECT"]


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
    """Under PyPy a stream restarts the command (where PyPy's nursery is not 4 MB): stdin,
    untouched until then, is read by the restarted process and the ids are the same."""
    text = ("The cat sat on the mat. Привет, мир! 中文 12345\n" * 300).encode("utf-8")
    model = cs336_path("gpt2_vocab.json")
    out = tmp_path / "ids.npy"
    r = run_cli(["encode", model, "-", "-o", out, "--quiet"], python=_pypy(), input=text)
    assert r.returncode == 0, r.stderr.decode()
    tok = Tokenizer.from_files(model, cs336_path("gpt2_merges.txt"))
    assert list(read_npy(str(out))) == tok.encode(text.decode("utf-8"))


def _parser_options(command="train"):
    """{option string: nargs} of ``refbpe COMMAND``'s parser."""
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    return {s: a.nargs for a in sub._actions for s in a.option_strings}


def test_the_early_restarts_option_table_is_the_train_parsers():
    """Each option of ``refbpe train`` is in ``TRAIN_VALUE_OPTIONS`` (one value), in
    ``TRAIN_FLAGS`` (none), or one of those ``train_corpus`` gives up on."""
    options = _parser_options("train")
    assert pypy_gc.TRAIN_VALUE_OPTIONS == {s for s, nargs in options.items() if nargs is None}
    assert pypy_gc.TRAIN_FLAGS == {s for s, nargs in options.items() if nargs == 0} - {
        "-h",
        "--help",
        "--stdlib",
    }
    left_out = set(options) - pypy_gc.TRAIN_VALUE_OPTIONS - pypy_gc.TRAIN_FLAGS
    assert left_out == {"-h", "--help", "--stdlib", "--counts"}
    assert all(pypy_gc.train_corpus(["a.txt", s, "x"]) is None for s in left_out)


def test_train_corpus_reads_the_corpus_arguments_as_the_parser_does(tmp_path):
    args = ["a.txt", "b.txt", "--vocab-size", "500", "-o", "m", "--pattern=gpt2", "--progress"]
    dashes = ["--vocab-size", "500", "--out", "m", "--", "-n.txt", "--quiet"]
    assert pypy_gc.train_corpus(args) == ["a.txt", "b.txt"]
    assert pypy_gc.train_corpus(dashes) == ["-n.txt", "--quiet"]
    assert pypy_gc.train_corpus(["a.txt", "--vocab-size"]) is None  # the parser's error, after parsing
    assert pypy_gc.train_corpus(["a.txt", "-om"]) is None  # a joined short option: left to the parser
    assert pypy_gc.train_corpus(["a.txt", "--quiet=1"]) is None
    assert pypy_gc.train_corpus(["a.txt", "--vocab-sise", "500"]) is None  # a typo: the parser says so
    parser = build_parser()
    for argv in (["train"] + args, ["train"] + dashes):
        assert parser.parse_args(argv).corpus == pypy_gc.train_corpus(argv[1:])


def test_the_early_restart_sizes_the_inputs_as_train_does(tmp_path):
    small, gz = tmp_path / "s.txt", tmp_path / "t.txt.gz"
    small.write_bytes(b"x" * 1000)
    gz.write_bytes(b"")
    for paths in ([str(small)], [str(small), str(small)], [str(small), "-"], [str(gz)]):
        assert pypy_gc._input_bytes(paths) == total_bytes(input_spans(paths))


def _big_and_small(tmp_path, size):
    """Two inputs: ``size`` bytes (sparse) and a few."""
    big, small = tmp_path / "big.txt", tmp_path / "small.txt"
    with open(big, "wb") as f:
        f.truncate(size)
    small.write_bytes(b"low lower")
    return big, small


def test_train_restarts_from_its_command_line_alone(execs, tmp_path):
    big, small = _big_and_small(tmp_path, pypy_gc.TRAIN_RESTART_FROM)
    train = [MAIN, "train", "--vocab-size", "1000", "-o", str(tmp_path / "m")]
    pypy_gc.restart_train_early(train + [str(small)])  # a short run
    pypy_gc.restart_train_early(train + [str(small), str(tmp_path / "missing.txt")])  # train's error
    pypy_gc.restart_train_early(train + ["--stdlib"])  # decided by ``run``, after parsing
    pypy_gc.restart_train_early(train + ["--counts", str(big)])  # counts: restart_counts_early decides
    pypy_gc.restart_train_early([MAIN, "encode", "m", str(big)])  # encode decides in ``run``
    pypy_gc.restart_train_early([MAIN])
    assert execs == []
    pypy_gc.restart_train_early(train + [str(big)])
    pypy_gc.restart_train_early(train + ["-"])  # a stream: size unknown
    expected = [["refbpe"] + train[1:] + [str(big)], ["refbpe"] + train[1:] + ["-"]]
    assert [argv[-len(train) - 1 :] for _, argv, _ in execs] == expected
    assert all(env[name] == value for _, _, env in execs for name, value in pypy_gc.TRAIN_GC_SETTINGS.items())


@pytest.mark.parametrize("command", ["train", "encode"])
def test_the_command_line_entry_decides_before_importing_the_rest(tmp_path, command):
    """``refbpe.cli.main`` restarts ``train`` and ``encode`` with only ``refbpe``, ``refbpe.cli``,
    ``pypy_gc`` and ``pypy_jit`` imported: the restarted process is the first to pay for the rest."""
    args = ["-", "--vocab-size", "300", "-o", str(tmp_path / "m")]
    if command == "encode":
        args = ["cl100k_base", "-", "-o", str(tmp_path / "ids.npy")]
    code = (
        "import sys\n"
        "import refbpe.cli\n"
        "from refbpe.cli import pypy_gc\n"
        "pypy_gc._nursery_bytes = lambda: 240 << 20\n"
        "def execve(exe, argv, env):\n"
        "    print(' '.join(sorted(m for m in sys.modules if m.startswith('refbpe'))))\n"
        "    sys.exit(0)\n"
        "pypy_gc.os.execve = execve\n"
        "sys.argv = %r\n"
        "refbpe.cli.main()\n"
        "print('no restart')\n" % ([MAIN, command] + args)
    )
    env = {k: v for k, v in cli_env().items() if k not in pypy_gc.TRAIN_GC_SETTINGS}
    r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().split() == ["refbpe", "refbpe.cli", "refbpe.cli.pypy_gc", "refbpe.cli.pypy_jit"]


def test_the_entry_passes_its_own_command_line_to_the_early_restart(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(refbpe_cli, "restart_early", asked.append)
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"low lower lowest " * 100)
    argv = [MAIN, "train", str(corpus), "--vocab-size", "260", "-o", str(tmp_path / "m"), "--quiet"]
    monkeypatch.setattr(sys, "argv", argv)
    assert cli_main() == 0 and asked == [argv]
    assert cli_main(argv[1:]) == 0 and asked == [argv]  # ``main([...])`` from Python: never


def test_a_restarted_training_reads_stdin_and_writes_the_same_model(tmp_path):
    """Under PyPy, ``train -`` restarts before reading (where PyPy's nursery is not 16 MB); the
    model equals the one trained on the same text from a file in this process."""
    text = ("The cat sat on the mat. Привет, мир! 中文 12345\n" * 300).encode("utf-8")
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(text)
    args = ["--vocab-size", "300", "--special-token", "<|endoftext|>", "--quiet"]
    r = run_cli(["train", "-", "-o", tmp_path / "piped"] + args, python=_pypy(), input=text)
    assert r.returncode == 0, r.stderr.decode()
    assert cli_main(["train", str(corpus), "-o", str(tmp_path / "here")] + args) == 0
    for name in ("vocab.json", "merges.txt", "refbpe.json"):
        assert (tmp_path / "piped" / name).read_bytes() == (tmp_path / "here" / name).read_bytes()


def test_the_encode_option_table_is_the_encode_parsers():
    options = _parser_options("encode")
    assert pypy_gc.ENCODE_VALUE_OPTIONS == {s for s, nargs in options.items() if nargs is None}
    assert pypy_gc.ENCODE_FLAGS == {s for s, nargs in options.items() if nargs == 0} - {"-h", "--help"}
    assert all(pypy_gc.encode_inputs(["m", "a.txt", s]) is None for s in ("-h", "--help"))


def test_encode_inputs_reads_the_input_arguments_as_the_parser_does():
    args = ["cl100k_base", "a.txt", "b.txt", "-o", "ids.npy", "--workers", "2", "--separator=<|e|>", "--json"]
    dashes = ["m", "--quiet", "--", "-n.txt", "--quiet"]
    assert pypy_gc.encode_inputs(args) == ["a.txt", "b.txt"]
    assert pypy_gc.encode_inputs(dashes) == ["-n.txt", "--quiet"]
    assert pypy_gc.encode_inputs(["m", "a.txt", "--out"]) is None  # the parser's error, after parsing
    assert pypy_gc.encode_inputs(["m", "a.txt", "--wokers", "2"]) is None  # a typo: the parser says so
    assert pypy_gc.encode_inputs([]) is None
    parser = build_parser()
    for argv in (["encode"] + args, ["encode"] + dashes):
        assert parser.parse_args(argv).inputs == pypy_gc.encode_inputs(argv[1:])


def test_encode_restarts_from_its_command_line_alone(execs, tmp_path):
    big, small = _big_and_small(tmp_path, pypy_gc.RESTART_FROM)
    encode = [MAIN, "encode", "--quiet", "m", "-o", str(tmp_path / "ids.npy")]
    pypy_gc.restart_encode_early(encode + [str(small)])  # a short run
    pypy_gc.restart_encode_early(encode + [str(big), str(tmp_path / "missing.txt")])  # encode's error
    pypy_gc.restart_encode_early(encode + [str(big), "-om"])  # decided by ``run``, after parsing
    pypy_gc.restart_encode_early([MAIN, "train", str(big), "--vocab-size", "300", "-o", "m"])
    pypy_gc.restart_encode_early([MAIN, "encode", str(big)])  # MODEL alone: the parser's error
    assert execs == []
    pypy_gc.restart_early(encode + [str(small), str(big)])
    pypy_gc.restart_early(encode + ["-"])  # a stream: size unknown
    expected = [["refbpe"] + encode[1:] + [str(small), str(big)], ["refbpe"] + encode[1:] + ["-"]]
    assert [argv[argv.index("refbpe") :] for _, argv, _ in execs] == expected
    assert all(env[name] == value for _, _, env in execs for name, value in pypy_gc.GC_SETTINGS.items())


def test_the_verify_option_table_is_the_verify_parsers():
    options = _parser_options("verify")
    assert pypy_gc.VERIFY_VALUE_OPTIONS == {s for s, nargs in options.items() if nargs is None}
    assert pypy_gc.VERIFY_FLAGS == {s for s, nargs in options.items() if nargs == 0} - {"-h", "--help"}
    left_out = set(options) - pypy_gc.VERIFY_VALUE_OPTIONS - pypy_gc.VERIFY_FLAGS
    assert left_out == {"-h", "--help", "--counts", "--special-tokens"}  # several values: it gives up
    assert all(pypy_gc.verify_corpus(["a.txt", s, "x"]) is None for s in left_out)


def test_verify_corpus_reads_the_corpus_arguments_as_the_parser_does():
    args = [
        "a.txt",
        "b.txt",
        "--against",
        "t.json",
        "--vocab-size=2000",
        "--json",
        "--special-token",
        "<|e|>",
    ]
    parser = build_parser()
    assert pypy_gc.verify_corpus(args) == ["a.txt", "b.txt"]
    assert parser.parse_args(["verify"] + args).corpus == pypy_gc.verify_corpus(args)
    assert pypy_gc.verify_corpus(["a.txt", "--against"]) is None  # the parser's error, after parsing


def test_verify_restarts_from_its_command_line_alone(execs, tmp_path):
    big, small = _big_and_small(tmp_path, pypy_gc.VERIFY_RESTART_FROM)
    verify = [MAIN, "verify", "--against", str(tmp_path / "t.json"), "--vocab-size", "1000"]
    pypy_gc.restart_verify_early(verify + [str(small)])  # a short run
    pypy_gc.restart_verify_early(verify + [str(big), str(tmp_path / "missing.txt")])  # verify's error
    pypy_gc.restart_verify_early(verify + ["--counts", str(big)])  # word counts: the parser decides
    pypy_gc.restart_verify_early([MAIN, "train", str(big), "--vocab-size", "300", "-o", "m"])
    assert execs == []
    pypy_gc.restart_early(verify + [str(small), str(big)])
    expected = [["refbpe"] + verify[1:] + [str(small), str(big)]]
    assert [argv[argv.index("refbpe") :] for _, argv, _ in execs] == expected
    settings = pypy_gc.VERIFY_GC_SETTINGS.items()
    assert all(env[name] == value for _, _, env in execs for name, value in settings)


def test_the_certify_option_table_is_the_certify_parsers():
    options = _parser_options("certify")
    assert pypy_gc.CERTIFY_VALUE_OPTIONS == {s for s, nargs in options.items() if nargs is None}
    assert pypy_gc.CERTIFY_FLAGS == {s for s, nargs in options.items() if nargs == 0} - {"-h", "--help"}
    assert set(options) - pypy_gc.CERTIFY_VALUE_OPTIONS - pypy_gc.CERTIFY_FLAGS == {
        "-h",
        "--help",
        "--counts",
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "--counts", "a.tsv", "b.tsv", "--vocab-size", "500", "-o", "m", "--quiet"],
        ["train", "--vocab-size=500", "--out", "m", "--counts", "a.tsv"],
        ["certify", "m", "--counts", "a.tsv", "-", "--vocab-size", "500", "--json"],
        ["certify", "--vocab-size", "500", "m", "--counts", "a.tsv", "b.tsv"],
    ],
)
def test_counts_files_reads_the_counts_as_the_parser_does(argv):
    assert pypy_gc.counts_files(["refbpe"] + argv) == build_parser().parse_args(argv).counts


def test_counts_files_gives_up_where_the_parser_is_needed():
    assert pypy_gc.counts_files(["refbpe", "train", "--counts", "a.tsv", "-om"]) is None
    assert pypy_gc.counts_files(["refbpe", "certify", "m", "--counts=a.tsv"]) is None
    assert pypy_gc.counts_files(["refbpe", "train", "a.txt", "--vocab-size", "500", "-o", "m"]) is None
    assert pypy_gc.counts_files(["refbpe", "verify", "--counts", "a.tsv", "--against", "m"]) is None
    assert pypy_gc.counts_files(["refbpe", "train", "--vocab-size", "500", "--counts"]) is None


def test_train_and_certify_of_word_counts_restart_from_their_command_line_alone(execs, tmp_path):
    big, small = _big_and_small(tmp_path, pypy_gc.COUNTS_RESTART_FROM)
    train = [MAIN, "train", "--vocab-size", "1000", "-o", str(tmp_path / "m"), "--counts"]
    certify = [MAIN, "certify", str(tmp_path / "m"), "--vocab-size", "1000", "--counts"]
    pypy_gc.restart_early(train + [str(small)])  # a few words
    pypy_gc.restart_early(certify + [str(small)])
    pypy_gc.restart_early(certify + [str(big), str(tmp_path / "missing.tsv")])  # certify's error
    pypy_gc.restart_early([MAIN, "verify", "--against", "m", "--counts", str(big)])  # the parser decides
    assert execs == []
    pypy_gc.restart_early(train + [str(big)])
    pypy_gc.restart_early(certify + [str(small), str(big)])
    expected = [["refbpe"] + train[1:] + [str(big)], ["refbpe"] + certify[1:] + [str(small), str(big)]]
    assert [argv[argv.index("refbpe") :] for _, argv, _ in execs] == expected
    settings = pypy_gc.TRAIN_GC_SETTINGS.items()
    assert all(env[name] == value for _, _, env in execs for name, value in settings)
