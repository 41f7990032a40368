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


# -- certify ---------------------------------------------------------------------------------


@pytest.mark.parametrize("files", ["directory", "tokenizer.json alone"])
def test_certify_raises_no_alarm_that_verify_does_not_for_the_whole_byte_alphabet(files, tmp_path, capsys):
    """An HF model trained with the 256-byte initial alphabet (13 merges where the corpus allows
    more): verify --profile hf says identical, and so certify --profile hf says certified,
    with the alphabet given or not (not given: their manifest names it, or their vocab holds
    every byte); before, certify said "stopped after merge 13 while ... still occurs"."""
    options = ["--profile", "hf", "--initial-alphabet", "bytelevel"]
    corpus, model = _train(capsys, tmp_path, "m", *options, fmt="hf")
    if files != "directory":
        model = str(tmp_path / "m" / "tokenizer.json")
        (tmp_path / "m" / "refbpe.json").unlink()
    common = [corpus, "--vocab-size", "270", "--special-token", EOT, "--profile", "hf"]
    for given in ([], ["--initial-alphabet", "bytelevel"]):
        status, out, _ = run_main(capsys, "verify", "--against", model, *common, *given)
        assert status == 0 and out.startswith("identical to profile hf"), out
        status, out, _ = run_main(capsys, "certify", model, *common, *given)
        assert status == 0 and out.startswith("certified: 13 merges"), out
    status, out, _ = run_main(capsys, "certify", model, *common, "--initial-alphabet", "")
    assert status == 1 and "stopped after merge 13" in out, out


def test_certify_takes_the_minimum_count(tmp_path, capsys):
    corpus, stopped = _train(capsys, tmp_path, "stopped", "--min-frequency", "3")
    _, full = _train(capsys, tmp_path, "full")
    common = [corpus, "--vocab-size", "270", "--special-token", EOT, "--json"]

    def certified(model, *options):
        status, out, err = run_main(capsys, "certify", model, *common, *options)
        report = json.loads(out)
        assert status == (0 if report["certified"] else 1), err
        return report

    assert certified(stopped, "--min-frequency", "3")["certified"]  # the best pair left is below 3
    early = certified(stopped)["early_stop"]
    assert early is not None and early["count"] < 3
    assert certified(full)["certified"]
    report = certified(full, "--min-frequency", "3")  # a merge below 3 is not accepted
    assert report["failures"] and {f["kind"] for f in report["failures"]} == {"below-minimum"}
    assert all(f["count"] < 3 for f in report["failures"])
