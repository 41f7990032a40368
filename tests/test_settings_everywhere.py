"""Every tool that trains, checks or replays honours ``train``'s settings: verify, certify, fuzz, conformance.

A model ``train`` writes with an option passes each tool given the same option,
and fails (naming the setting that reproduces it) when given the other value;
no tool refuses an option it can honour, and one that cannot apply says why in
one line.
"""

import json
import os
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from planted_trainers import layout_vocab, planted_train
from support import examples, run_main

from refbpe.corpus.sequences import count_texts
from refbpe.formats import read_model, write_model
from refbpe.learn.profiles import get_profile
from refbpe.learn.tie_rules import TEXT_ORDER, TIE_RULE_NAMES
from refbpe.learn.train import train_from_counts
from refbpe.verify.certify import certify, render_certificate
from refbpe.verify.judge import judge_training
from refbpe.verify.setting_search import OPTIONS, as_options, option_argv
from refbpe.verify.ties import TIE_RULES, train_first_counted

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
    for alphabet in ([], ["--initial-alphabet", "bytelevel"]):
        status, out, _ = run_main(capsys, "verify", "--against", model, *common, *alphabet)
        assert status == 0 and out.startswith("identical to profile hf"), out
        status, out, _ = run_main(capsys, "certify", model, *common, *alphabet)
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


# -- fuzz: the judge trains the reference with the settings; finding.json and repro.sh carry them --

TESTS = os.path.dirname(os.path.abspath(__file__))


def _fuzz(capsys, tmp_path, monkeypatch, function, *options):
    """``refbpe fuzz --train-py planted_trainers:FUNCTION`` on a small budget: (status, findings dir)."""
    monkeypatch.chdir(TESTS)
    out = tmp_path / "f"
    argv = [
        "fuzz",
        "--train-py",
        "planted_trainers:" + function,
        "--out",
        out,
        "--db",
        "none",
        "--persistent",
    ]
    argv += ["--classes", "ties", "--max-examples", "3", "--budget", "30"]
    status, text, err = run_main(capsys, *argv, *options)
    assert status in (0, 1), err
    return status, out, text


def _finding(directory):
    with open(str(directory / "finding.json"), encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.slow
def test_fuzz_holds_their_trainer_to_the_settings_and_repro_replays_them(tmp_path, capsys, monkeypatch):
    """The planted HF trainer (prefix space, whole alphabet) against --no-add-prefix-space: the
    finding names the prefix space, and finding.json, expected/ and repro.sh carry the settings."""
    options = ["--profile", "hf", "--initial-alphabet", "bytelevel", "--no-add-prefix-space"]
    status, directory, _ = _fuzz(capsys, tmp_path, monkeypatch, "train_hf_whole_alphabet", *options)
    assert status == 1
    result = _finding(directory)
    assert (result["finding"]["cause"], result["finding"]["setting"]) == ("setting", "add_prefix_space=True")
    held = result["settings"]
    assert (held["profile"], held["add_prefix_space"], len(held["initial_alphabet"])) == ("hf", False, 256)
    repro = (directory / "repro.sh").read_text()
    for option in (
        "--profile hf",
        "--no-add-prefix-space",
        "--initial-alphabet bytelevel",
        "--sequences documents",
    ):
        assert option in repro, repro
    r = subprocess.run(["sh", str(directory / "repro.sh")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode == 1 and r.stdout.startswith(b"setting: DIFFERENT"), r.stdout + r.stderr
    # expected/ is the reference under the same settings: verify with them finds it identical
    case = result["finding"]
    expected = [str(directory / "expected" / name) for name in os.listdir(str(directory / "expected"))][0]
    argv = ["verify", directory / "input.txt", "--vocab-size", case["vocab_size"], "--against", expected]
    status, out, _ = run_main(capsys, *argv, *options)
    assert status == 0 and out.startswith("identical to profile hf"), out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fuzz", "--split", "true", "--sequences", "lines"], "fuzz --split does not take --sequences"),
        (["fuzz", "--encode", "true", "--min-frequency", "2"], "fuzz --encode does not take --min-frequency"),
        (["fuzz", "--train", "true", "--profile", "superbpe", "--transition", "2"], "single-stage"),
    ],
)
def test_fuzz_says_in_one_line_why_a_setting_cannot_apply(argv, message, capsys):
    status, _, err = run_main(capsys, *argv)
    assert status == 2 and err.count("\n") == 1 and message in err, err


# -- conformance: the pack records the settings it was written with; check holds them to it -----


@pytest.mark.slow
def test_conformance_records_the_settings_and_checks_against_them(tmp_path, capsys, monkeypatch):
    pack = tmp_path / "pack"
    status, _, err = run_main(
        capsys, "conformance", "write", pack, "--profile", "hf", "--initial-alphabet", "bytelevel"
    )
    assert status == 0, err
    with open(str(pack / "manifest.json"), encoding="utf-8") as f:
        settings = json.load(f)["settings"]
    assert settings["profile"] == "hf" and len(settings["initial_alphabet"]) == 256
    monkeypatch.chdir(TESTS)
    check = ["conformance", "check", pack, "--cases", "train-ties-00*", "--persistent", "--train-py"]
    status, out, err = run_main(capsys, *check, "planted_trainers:train_hf_whole_alphabet")
    assert status == 0 and " 0 failed" in out, out + err
    status, out, err = run_main(capsys, *check, "planted_trainers:train_hf")  # the bytes that occur only
    assert status == 1 and "FAIL train-ties-00" in out and "initial_alphabet=none" in out, out + err
    status, _, err = run_main(capsys, *check, "planted_trainers:train_hf", "--initial-alphabet", "ab")
    assert status == 2 and err.count("\n") == 1 and "initial_alphabet" in err, err


# -- tie rules: every rule verify names is selectable by --tie-rule ----------------------------

TIE_TEXT = EOT.join(["ab ba cd dc", "xy yx ab", "ba dc yx xy cd", "abab baba"]) * 2


def test_every_rule_verify_names_is_selectable_in_each_command(tmp_path, capsys):
    from refbpe.cli import build_parser

    named = [r for r, _ in TIE_RULES]
    assert sorted(named) == sorted(TIE_RULE_NAMES)
    parser = build_parser()
    for command in ("train", "verify", "certify", "fuzz", "conformance"):
        sub = parser._subparsers._group_actions[0].choices[command]
        action = [a for a in sub._actions if "--tie-rule" in a.option_strings]
        assert action and sorted(action[0].choices) == sorted(named), command
    argv = ["train", _corpus(tmp_path), "--vocab-size", "300", "-o", tmp_path / "m", "--tie-rule", TEXT_ORDER]
    status, _, err = run_main(capsys, *argv)
    assert status == 2 and err.count("\n") == 1 and "train does not take --tie-rule first-counted" in err


@pytest.mark.parametrize("rule", [r for r in TIE_RULE_NAMES if r != TEXT_ORDER])
@pytest.mark.parametrize("profile", ["cs336", "hf"])
def test_train_verify_and_certify_agree_on_each_rule(rule, profile, tmp_path, capsys):
    corpus = tmp_path / "ties.txt"
    corpus.write_text(TIE_TEXT, encoding="utf-8")
    common = [corpus, "--vocab-size", "300", "--special-token", EOT, "--profile", profile]
    status, _, err = run_main(capsys, "train", *common, "-o", tmp_path / "m", "--tie-rule", rule, "--quiet")
    assert status == 0, err
    model = tmp_path / "m"
    status, out, _ = run_main(capsys, "verify", *common, "--against", model, "--tie-rule", rule)
    assert status == 0 and out.startswith("identical"), out
    status, out, _ = run_main(capsys, "certify", model, *common, "--tie-rule", rule)
    assert status == 0 and out.startswith("certified") and rule in out, out


word_counts = st.dictionaries(
    st.binary(min_size=1, max_size=8).map(lambda b: bytes(97 + x % 4 for x in b)),
    st.integers(1, 6),
    min_size=1,
    max_size=12,
)


@settings(max_examples=examples(40), deadline=None)
@given(word_counts, st.integers(0, 20), st.sampled_from(["cs336", "rustbpe", "hf"]), st.data())
def test_the_engine_takes_each_rules_choice(counts, extra, profile, data):
    """Under every rule the engine trains by, certify finds each step the rule's choice, and
    under cs336's layout the naive trainer with the rule's chooser makes the same merges."""
    rule = data.draw(st.sampled_from([r for r in TIE_RULE_NAMES if r != TEXT_ORDER]))
    vocab, merges = train_from_counts(counts, 270 + extra, profile=profile, tie_rule=rule)
    report = certify(counts, merges, rule, {b: i for i, b in vocab.items()})
    assert report["certified"], render_certificate(report)
    if profile == "cs336":
        chooser = rule.replace("-refbpe-layout", "")
        assert planted_train("", 270 + extra, [], rule=chooser, counts=counts) == merges


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.sampled_from(["ab", "ba", " ab", "cd", "dc", "a", "\n", EOT, "abab"]), max_size=20))
def test_first_counted_is_trained_by_replay_over_the_text(atoms):
    text = "".join(atoms)
    counts = count_texts([text], "documents", [EOT])
    merges = train_first_counted(counts, [text], [EOT], 20)
    assert merges == planted_train(text, 256 + 1 + 20, [EOT], rule=TEXT_ORDER)
    report = certify(counts, merges, TEXT_ORDER, merges_wanted=20, texts=[text], special_tokens=[EOT])
    assert report["certified"], render_certificate(report)


def test_first_counted_through_verify_and_certify(tmp_path, capsys):
    corpus = tmp_path / "ties.txt"
    corpus.write_text(TIE_TEXT, encoding="utf-8")
    merges = planted_train(TIE_TEXT, 300, [EOT], rule=TEXT_ORDER)
    model = tmp_path / "theirs.hex.json"
    write_model(str(model), "json", layout_vocab("refbpe", merges, [EOT]), merges, [EOT])
    common = [corpus, "--vocab-size", "300", "--special-token", EOT]
    status, out, _ = run_main(capsys, "verify", *common, "--against", model, "--tie-rule", TEXT_ORDER)
    assert status == 0 and out.startswith("identical"), out
    status, out, _ = run_main(capsys, "certify", model, *common, "--tie-rule", TEXT_ORDER)
    assert status == 0 and out.startswith("certified"), out
    status, out, _ = run_main(capsys, "verify", *common, "--against", model)
    assert status == 1 and out.startswith("tie-rule: DIFFERENT") and TEXT_ORDER in out.splitlines()[0], out
    status, _, err = run_main(
        capsys, "verify", *common, "--against", model, "--tie-rule", TEXT_ORDER, "--profile", "hf"
    )
    assert status == 2 and err.count("\n") == 1 and "--profile cs336" in err, err


# -- one property: verify, certify and the fuzz judge agree under every setting ------------------

ATOMS = ["hello", " hello", " there", "ab", "ba", " ab", "\n", "\n\n", " ", "aa", "x", EOT, "é"]
# The options of each profile a property example varies (Profile.settings' keywords).
VARIED = {
    "cs336": {"min_frequency": [0, 2], "tie_rule": [None, "smallest-bytes"]},
    "rustbpe": {"min_frequency": [0, 2], "tie_rule": [None, "greatest-ids"]},
    "hf": {
        "min_frequency": [0, 2],
        "tie_rule": [None, "greatest-ids"],
        "initial_alphabet": [[], "bytelevel"],
        "add_prefix_space": [True, False],
        "cut": ["documents", "lines"],
    },
}


@st.composite
def setting_cases(draw):
    """(profile, options, one option changed, text, vocab size)."""
    profile = draw(st.sampled_from(sorted(VARIED)))
    options = {k: draw(st.sampled_from(v)) for k, v in VARIED[profile].items()}
    option = draw(st.sampled_from(sorted(options)))
    other = dict(options, **{option: [v for v in VARIED[profile][option] if v != options[option]][0]})
    text = "".join(draw(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=30)))
    return profile, options, other, text, draw(st.integers(258, 300))


def _argv(profile, options):
    """(recorded settings, the options that give every one of them: none left to their files)."""
    recorded = get_profile(profile).settings(**options)
    argv = ["--profile", profile, "--tie-rule", options.get("tie_rule") or get_profile(profile).tie_rule]
    for option, value in sorted(as_options(recorded).items()):
        if option in dict(OPTIONS) and option != "tie_rule":
            argv += option_argv(option, value)
    return recorded, argv


def _verdicts(capsys, directory, profile, options, model, corpus, text, vocab_size):
    """(verify, certify, the fuzz judge) on ``model``, each holding it to ``options``: True accepts."""
    recorded, argv = _argv(profile, options)
    common = [corpus, "--vocab-size", vocab_size, "--special-token", EOT] + argv
    status, out, err = run_main(capsys, "verify", *common, "--against", model)
    assert status in (0, 1), err
    verified = status == 0
    status, out, err = run_main(capsys, "certify", model, *common)
    assert status in (0, 1), err
    certified = status == 0
    theirs = read_model(model)
    counts = count_texts([text], "documents", [EOT])  # as fuzz's trial counts: the judge counts the rest
    report = judge_training(counts, vocab_size, [EOT], theirs, [text], [corpus], profile, None, recorded)
    return verified, certified, report["identical"]


def _trained(capsys, directory, name, profile, options, corpus, vocab_size):
    """The model ``train`` writes under ``options``, or None when the profile cannot (``ProfileLimit``)."""
    _, argv = _argv(profile, options)
    out = os.path.join(directory, name)
    status, _, err = run_main(capsys, "train", corpus, "--vocab-size", vocab_size, "--special-token", EOT,
                              "-o", out, "--quiet", "--workers", "1", *argv)  # fmt: skip
    if status == 2 and "HF reuses that id" in err:
        return None
    assert status == 0, err
    return out


def _output(model, profile):
    m = read_model(model)
    vocab = dict(m.vocab) if profile != "cs336" else sorted(m.vocab.values())
    return [tuple(x) for x in m.merges], vocab


@pytest.mark.slow
@settings(
    max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(setting_cases())
def test_verify_certify_and_the_judge_agree_under_every_setting(capsys, case):
    profile, options, other, text, vocab_size = case
    with tempfile.TemporaryDirectory() as d:
        corpus = os.path.join(d, "corpus.txt")
        with open(corpus, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        ours = _trained(capsys, d, "ours", profile, options, corpus, vocab_size)
        theirs = _trained(capsys, d, "theirs", profile, other, corpus, vocab_size)
        assume(ours is not None and theirs is not None)
        assert _verdicts(capsys, d, profile, options, ours, corpus, text, vocab_size) == (True, True, True)
        changed = _output(ours, profile) != _output(theirs, profile)
        event("the other setting changes the output: %s" % changed)
        if changed:
            verdicts = _verdicts(capsys, d, profile, options, theirs, corpus, text, vocab_size)
            assert verdicts == (False, False, False), (options, other)


# -- fuzz --extend: their trainer continues a base model; the reference is train --extend ----------


@pytest.mark.slow
def test_fuzz_extend_holds_their_trainer_to_train_extend(tmp_path, capsys, monkeypatch):
    base_text = tmp_path / "base.txt"
    base_text.write_text("the cat sat on the mat" + EOT + "low lower lowest newest", encoding="utf-8")
    base = str(tmp_path / "base")
    argv = ["train", base_text, "--vocab-size", "275", "--special-token", EOT, "-o", base, "--quiet"]
    assert run_main(capsys, *argv)[0] == 0
    status, _, out = _fuzz(capsys, tmp_path, monkeypatch, "train_extending", "--extend", base)
    assert status == 0 and "no difference" in out, out
    status, directory, out = _fuzz(capsys, tmp_path, monkeypatch, "train_ignoring_base", "--extend", base)
    assert status == 1, out
    result = _finding(directory)["finding"]
    assert result["base"] == base and result["vocab_size"] > 275  # the parent's tokens and the case's
    repro = (directory / "repro.sh").read_text()
    assert "--extend " + base in repro, repro
    r = subprocess.run(["sh", str(directory / "repro.sh")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode == 1, r.stdout + r.stderr
    # expected/ is train --extend's answer: verify --extend finds it identical
    expected = [str(directory / "expected" / name) for name in os.listdir(str(directory / "expected"))][0]
    argv = ["verify", directory / "input.txt", "--vocab-size", result["vocab_size"], "--against", expected]
    status, out, _ = run_main(capsys, *argv, "--extend", base)
    assert status == 0 and "identical: " in out, out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--train", "true {input} {vocab_size} {out}"], "put {base} in the command"),
        (["--train", "true {input} {vocab_size} {base} {out}", "--profile", "hf"], "cs336"),
        (["--split", "true {input} {out}"], "--extend is for --train and --train-py"),
    ],
)
def test_fuzz_extend_says_in_one_line_what_it_cannot_take(argv, message, tmp_path, capsys):
    status, _, err = run_main(capsys, "fuzz", *argv, "--extend", tmp_path / "base", "--out", tmp_path / "f")
    assert status == 2 and err.count("\n") == 1 and message in err, err


def test_the_profile_search_holds_the_other_profiles_to_the_tie_rule_given(tmp_path, capsys):
    """Without --profile, a profile reproduces their model only under the rule given: verify's
    replay proves an HF model HF's own (smallest-ids) without training it, but not under another."""
    corpus = tmp_path / "ties.txt"
    corpus.write_text(TIE_TEXT, encoding="utf-8")
    common = [corpus, "--vocab-size", "300", "--special-token", EOT]
    hf = ["--profile", "hf", "--no-add-prefix-space"]  # its merges all at the maximum reference count
    assert run_main(capsys, "train", *common, *hf, "-o", tmp_path / "m", "--quiet")[0] == 0
    model = tmp_path / "m"
    status, out, _ = run_main(capsys, "verify", *common, "--against", model, "--json")
    assert status == 1 and json.loads(out)["reproduced_by_profile"] == "hf"
    status, out, _ = run_main(
        capsys, "verify", *common, "--against", model, "--json", "--tie-rule", "greatest-ids"
    )
    assert status == 1 and json.loads(out)["reproduced_by_profile"] is None
