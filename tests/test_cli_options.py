"""One meaning per option across subcommands, and mistakes named the same way in each.

Each case runs the same mistake through every subcommand that has the option
and expects the same message, apart from the subcommand's name.
"""

import re

import pytest
from support import run_main

from refbpe.cli import build_parser

COUNTING = ["train", "count", "verify"]


def _argv(command, tmp_path, extra):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world, hello\n")
    base = {
        "train": ["train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "m")],
        "count": ["count", str(corpus), "-o", str(tmp_path / "c.counts.tsv")],
        "verify": ["verify", str(corpus), "--vocab-size", "300", "--against", str(tmp_path / "m")],
    }[command]
    return base + extra


def _one_line(status, err):
    assert status == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.rstrip("\n")


@pytest.mark.parametrize("command", COUNTING)
def test_a_misspelt_option_is_named_with_the_closest_spelling(command, tmp_path, capsys):
    status, _, err = run_main(capsys, *_argv(command, tmp_path, ["--wokers", "2"]))
    assert _one_line(status, err) == (
        "refbpe %s: error: unknown option --wokers (did you mean --workers?) (see 'refbpe %s --help')"
        % (command, command)
    )


@pytest.mark.parametrize("command", ["train", "verify"])
def test_a_misspelt_required_option_is_named_before_it_is_missed(command, tmp_path, capsys):
    argv = [a if a != "--vocab-size" else "--vocab-szie" for a in _argv(command, tmp_path, [])]
    status, _, err = run_main(capsys, *argv)
    assert re.match(
        r"refbpe %s: error: unknown option --vocab-szie \(did you mean --vocab-size\?\)" % command, err
    )


def test_an_unknown_option_with_a_value_and_an_unrelated_one(tmp_path, capsys):
    status, _, err = run_main(capsys, *_argv("count", tmp_path, ["--bogus=1"]))
    assert _one_line(status, err) == "refbpe count: error: unknown option --bogus (see 'refbpe count --help')"
    status, _, err = run_main(capsys, "--bogus")
    assert _one_line(status, err) == "refbpe: error: unknown option --bogus (see 'refbpe --help')"


@pytest.mark.parametrize("command", ["train", "verify"])
def test_vocab_size_is_checked_alike(command, tmp_path, capsys):
    argv = _argv(command, tmp_path, [])
    argv[argv.index("--vocab-size") + 1] = "lots"
    status, _, err = run_main(capsys, *argv)
    assert _one_line(status, err) == (
        "refbpe %s: error: argument --vocab-size: expected an integer, got 'lots' (see 'refbpe %s --help')"
        % (command, command)
    )


@pytest.mark.parametrize("command", COUNTING)
@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--workers", "-3", "argument --workers: must be positive, got -3"),
        ("--chunk-size", "4Q", "argument --chunk-size: invalid size '4Q'"),
        ("--errors", "loose", "argument --errors: invalid choice: 'loose'"),
    ],
)
def test_counting_options_are_checked_alike(command, option, value, message, tmp_path, capsys):
    status, _, err = run_main(capsys, *_argv(command, tmp_path, [option, value]))
    assert _one_line(status, err).startswith("refbpe %s: error: %s" % (command, message))


@pytest.mark.parametrize("command", COUNTING)
def test_a_directory_as_corpus_is_named_alike(command, tmp_path, capsys):
    if command == "verify":
        assert run_main(capsys, *_argv("train", tmp_path, ["--quiet"]))[0] == 0
    argv = _argv(command, tmp_path, [])
    argv[1] = str(tmp_path)
    status, _, err = run_main(capsys, *argv)
    assert _one_line(status, err) == "refbpe: error: %s: is a directory, not a file" % tmp_path


def test_out_has_its_short_spelling_everywhere():
    sub = build_parser()._subparsers._group_actions[0].choices
    for name in ("train", "count", "convert"):
        strings = {s for a in sub[name]._actions for s in a.option_strings}
        assert {"-o", "--out"} <= strings, name


def test_the_counting_options_are_on_every_command_that_counts():
    sub = build_parser()._subparsers._group_actions[0].choices
    wanted = {
        "--workers",
        "--chunk-size",
        "--errors",
        "--executor",
        "--executor-data",
        "--progress",
        "--quiet",
        "--report",
        "--special-token",
    }
    for name in COUNTING:
        strings = {s for a in sub[name]._actions for s in a.option_strings}
        assert wanted <= strings, (name, wanted - strings)


def test_top_level_help_lists_every_subcommand_with_a_description(capsys):
    status, out, _ = run_main(capsys, "--help")
    sub = build_parser()._subparsers._group_actions[0]
    assert status == 0
    for choice in sub._choices_actions:
        assert choice.help, choice.dest
        assert re.search(r"^\s+%s\s+\S" % choice.dest, out, re.M), choice.dest
    assert set(sub.choices) >= {"train", "count", "encode", "decode", "convert", "verify"}


def test_verify_counts_takes_files_as_train_does_and_the_bare_flag_still_works(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower lowest newer wider\n" * 20)
    counts = str(tmp_path / "w.counts.tsv")
    model = str(tmp_path / "m")
    assert run_main(capsys, "count", str(corpus), "-o", counts)[0] == 0
    assert (
        run_main(capsys, "train", "--counts", counts, "--vocab-size", "270", "-o", model, "--quiet")[0] == 0
    )
    assert run_main(capsys, "verify", "--counts", counts, "--vocab-size", "270", "--against", model)[0] == 0
    plain = str(tmp_path / "w.txt")  # not named *.counts.tsv: only --counts says what it is
    with open(counts) as src, open(plain, "w") as dst:
        dst.write(src.read())
    assert run_main(capsys, "verify", plain, "--counts", "--vocab-size", "270", "--against", model)[0] == 0
