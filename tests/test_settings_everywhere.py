"""Every tool that trains, checks or replays honours ``train``'s settings: verify, certify, fuzz, conformance.

A model ``train`` writes with an option passes each tool given the same option,
and fails (naming the setting that reproduces it) when given the other value;
no tool refuses an option it can honour, and one that cannot apply says why in
one line.
"""

import json

import pytest
from support import run_main

EOT = "<|endoftext|>"
# Each document starts with a word seen nowhere else after a space, so the prefix space changes counts;
# vocab size 270 leaves 13 merges after the whole byte-level alphabet, fewer than the corpus allows.
DOCS = EOT.join("hello %s\nhello there\n" % w for w in ("you", "world", "all", "again", "friend"))

# (profile, the option train is given, the other value of the same option, the setting named)
OPPOSITES = [
    ("hf", ["--no-add-prefix-space"], ["--add-prefix-space"], "add_prefix_space=False"),
    ("hf", ["--sequences", "lines"], ["--sequences", "documents"], "sequences=lines"),
    ("hf", ["--initial-alphabet", "bytelevel"], ["--initial-alphabet", ""], "initial_alphabet=bytelevel"),
    ("hf", ["--min-frequency", "4"], ["--min-frequency", "0"], "min_frequency="),
    ("cs336", ["--min-frequency", "4"], ["--min-frequency", "0"], "min_frequency="),
    ("cs336", ["--min-frequency", "0"], ["--min-frequency", "2"], "min_frequency=0"),
]


def _corpus(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(DOCS, encoding="utf-8")
    return str(corpus)


def _train(capsys, tmp_path, name, *options, fmt="gpt2"):
    corpus = _corpus(tmp_path)
    out = str(tmp_path / name)
    argv = ["train", corpus, "--vocab-size", "270", "--special-token", EOT, "-o", out, "--format", fmt]
    status, _, err = run_main(capsys, *argv, "--quiet", "--workers", "1", *options)
    assert status == 0, err
    return corpus, out


def _verify(capsys, corpus, model, *options):
    argv = ["verify", corpus, "--vocab-size", "270", "--special-token", EOT, "--against", model, "--json"]
    status, out, err = run_main(capsys, *argv, *options)
    assert status in (0, 1), err
    return status, json.loads(out)


# -- verify's main mode ----------------------------------------------------------------------


def _ids(x):
    return " ".join(x) if isinstance(x, list) else x


@pytest.mark.parametrize("profile, option, other, setting", OPPOSITES, ids=_ids)
def test_verify_trains_the_reference_with_the_options(profile, option, other, setting, tmp_path, capsys):
    corpus, model = _train(capsys, tmp_path, "m", "--profile", profile, *option)
    status, report = _verify(capsys, corpus, model, "--profile", profile, *option)
    assert status == 0 and report["identical"], report["explanation"]
    status, report = _verify(capsys, corpus, model, "--profile", profile, *other)
    assert status == 1 and not report["identical"], report["explanation"]
    expected = "min-count" if setting.startswith("min_frequency") else "setting"
    assert report["cause"] == expected and report["setting"].startswith(setting), report["explanation"]
    assert report["explanation"].startswith(expected + ": DIFFERENT")
    named = report["convention"]["option"].replace("''", "").split(" ", 1)  # the option the report names
    status, again = _verify(capsys, corpus, model, "--profile", profile, *named)
    assert status == 0, again["explanation"]


def test_an_option_given_wins_over_the_setting_their_files_name(tmp_path, capsys):
    """Their manifest names the whole alphabet; ``--initial-alphabet ''`` holds them to none."""
    corpus, model = _train(capsys, tmp_path, "m", "--profile", "hf", "--initial-alphabet", "bytelevel")
    status, report = _verify(capsys, corpus, model, "--profile", "hf")
    assert status == 0, report["explanation"]  # not given: the setting their files name
    status, report = _verify(capsys, corpus, model, "--profile", "hf", "--initial-alphabet", "")
    assert status == 1 and report["setting"] == "initial_alphabet=bytelevel", report["explanation"]


@pytest.mark.parametrize("mode", [["--encode", "corpus.txt", "--ids", "ids.json"], ["--split", "p.jsonl"]])
def test_verify_modes_without_training_say_why_they_take_no_setting(mode, tmp_path, capsys):
    corpus = _corpus(tmp_path)
    argv = ["verify", corpus, "--against", corpus] + [str(tmp_path / a) if "." in a else a for a in mode]
    status, _, err = run_main(capsys, *argv, "--min-frequency", "2")
    assert status == 2 and err.count("\n") == 1 and "no training is compared" in err, err
