"""verify and fuzz name a trainer's or encoder's convention, with the setting that reproduces it.

Planted implementations (``planted_trainers``), each differing from the
reference by one convention of real trainers: an early stop at a minimum
count (HF's ``min_frequency``), a corpus opened in text mode (newline
translation), special-token text encoded as ordinary text (tiktoken's
``encode_ordinary``), and id layouts (special tokens first or last, the 256
bytes in GPT-2's byte-level order as HF's ``initial_alphabet``).  Each is named
as its cause, with its setting, and reproduced from that setting; a vocab size
fuzz chose itself is never "setup: fix that first".
"""

import json
import os
import subprocess

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from planted_trainers import (
    EOT,
    ZOO,
    encode_specials_as_text,
    planted_train,
    train_min_count_2,
    train_text_mode,
)
from support import examples, mixed_text, repeated_text, run_main

from refbpe.corpus.sequences import count_texts
from refbpe.encode.tokenizer import Tokenizer
from refbpe.formats import Model, write_model
from refbpe.fuzz import Target, Trial, search_for_failure
from refbpe.fuzz.target import Run
from refbpe.fuzz.trial import case_bytes
from refbpe.learn.merge import learn_merges
from refbpe.learn.train import train_from_texts
from refbpe.verify import CAUSES, verify_merges
from refbpe.verify.conventions import LAYOUTS, layout_vocab, min_count_stop, translate_newlines
from refbpe.verify.explain import replay_hypotheses
from refbpe.verify.judge import judge_encoding, judge_training
from refbpe.verify.merges import _min_count
from refbpe.verify.profile_rules import _id_mismatch, profile_verdict

TESTS = os.path.dirname(os.path.abspath(__file__))
TEXT = ("low lower lowest newer wider news " + EOT + " the then there ") * 3


def _run(train, text, vocab_size, specials, tmp_path):
    """Their model (CS336's function ``train`` on ``text`` written as bytes) and the judge's report."""
    path = tmp_path / "input.txt"
    path.write_bytes(text.encode("utf-8"))
    vocab, merges = train(str(path), vocab_size, list(specials))
    theirs = Model(vocab, merges, list(specials), "json", True, "theirs")
    counts = count_texts([text], "documents", list(specials))
    return theirs, judge_training(
        counts, vocab_size, list(specials), theirs, texts=[text], sources=[str(path)]
    )


# -- early stop at a minimum count -----------------------------------------------------------


@pytest.mark.parametrize("text", ["xy", "ab ab cd ef", TEXT + "qz jx"])
def test_min_count_stop_is_named_with_its_threshold(text, tmp_path):
    theirs, r = _run(train_min_count_2, text, 400, [EOT], tmp_path)
    assert r["cause"] == "min-count" and "min-count" in CAUSES, r["explanation"]
    assert r["convention"]["min_count"] == 2 and r["setting"] == "min_frequency=2"
    assert r["explanation"].startswith("min-count: DIFFERENT") and "min_frequency=2" in r["explanation"]
    assert "fix that first" not in r["explanation"]
    assert [w["code"] for w in r["warnings"] if w["code"] == "vocab-size"] == []
    # The setting reproduces them.
    found = planted_train(text, 400, [EOT], min_count=r["convention"]["min_count"])
    assert found == [tuple(m) for m in theirs.merges]


def test_min_count_is_named_by_verify_too(tmp_path):
    """Without fuzz's given size, verify names the convention, not a vocab-size setup."""
    text = "ab ab ab ab cd cd cd ef"
    merges = planted_train(text, 300, [EOT], min_count=3)
    theirs = Model(layout_vocab("refbpe", merges, [EOT]), merges, [EOT], "json", True, "theirs")
    r = verify_merges(count_texts([text], "documents", [EOT]), 300, [EOT], theirs, texts=[text])
    assert (r["cause"], r["setting"]) == ("min-count", "min_frequency=2"), r["explanation"]
    assert (r["convention"]["min_count"], r["convention"]["min_count_up_to"]) == (2, 3)
    assert all(w["code"] != "vocab-size" for w in r["warnings"])
    for threshold in (2, 3):  # every threshold in the range reproduces them
        assert planted_train(text, 300, [EOT], min_count=threshold) == merges


def test_a_short_vocab_fuzz_chose_is_never_setup(tmp_path):
    """A trainer that drops its last merge for no reason: their result, not a setting to fix."""

    def train_drops_last(path, vocab_size, specials):
        with open(path, encoding="utf-8", newline="") as f:
            merges = planted_train(f.read(), vocab_size, specials)[:-1]
        return layout_vocab("refbpe", merges, specials), merges

    _, r = _run(train_drops_last, TEXT, 270, [EOT], tmp_path)
    assert not r["identical"] and r["cause"] != "setup", r["explanation"]
    assert "fix that first" not in r["explanation"]


# -- newline translation (text mode) ---------------------------------------------------------


@pytest.mark.parametrize("text", ["\r\n", "ab\r\ncd\r\nab\r\n", "a\rb\r\n" * 3 + TEXT + "qz\r\n\r\n"])
def test_text_mode_student_is_named(text, tmp_path):
    theirs, r = _run(train_text_mode, text, 300, [EOT], tmp_path)
    assert r["cause"] == "newline-translation", r["explanation"]
    assert "text mode" in r["setting"] and "newline" in r["setting"]
    assert r["explanation"].startswith("newline-translation: DIFFERENT")
    assert "fix that first" not in r["explanation"]
    # The setting reproduces them: the reference on the text as text mode reads it.
    assert planted_train(translate_newlines(text), 300, [EOT]) == [tuple(m) for m in theirs.merges]


class InProcess(Target):
    """CS336's training function called in this process."""

    def __init__(self, func):
        Target.__init__(self, "train", function="in:process")
        self.func = func

    def run(self, values, timeout):
        vocab, merges = self.func(values["input"], values["vocab_size"], values["special_tokens"])
        write_model(values["out"], "json", vocab, merges, values["special_tokens"])
        return Run(0, "", 0.0, False)


def test_fuzz_finds_the_text_mode_student_and_names_newline_translation(tmp_path):
    trial = Trial(InProcess(train_text_mode))
    finding, _ = search_for_failure(
        trial, ["whitespace"], 60, seed=0, workdir=str(tmp_path), shrink_budget=30
    )
    assert finding is not None and finding.verdict.kind == "difference"
    assert finding.verdict.report["cause"] == "newline-translation", finding.verdict.text
    assert case_bytes(finding.case) <= 64, finding.case
    assert "\r" in finding.case["text"]


# -- special-token text encoded as ordinary text ---------------------------------------------


def test_encoder_with_special_tokens_as_text_is_named(tmp_path):
    vocab, merges = train_from_texts([TEXT], 300, [EOT])
    path = str(tmp_path / "model.hex.json")
    write_model(path, "json", vocab, merges, [EOT])
    model = Model(vocab, merges, [EOT], "json")
    r = judge_encoding(model, TEXT, encode_specials_as_text(path, TEXT))
    assert r["cause"] == "special-tokens-as-text" and "encode_ordinary" in r["setting"]
    assert r["divergence"]["kind"] == "special_tokens_as_text"
    assert "merges are applied differently" not in r["explanation"]
    assert "special-tokens-as-text" in r["explanation"]
    # The setting reproduces them; an encoder that is wrong otherwise is not given this cause.
    assert Tokenizer(vocab, merges, [EOT]).encode_ordinary(TEXT) == encode_specials_as_text(path, TEXT)
    ids = Tokenizer(vocab, merges, [EOT]).encode(TEXT)
    other = judge_encoding(model, TEXT, ids[:-1])
    assert other.get("cause") != "special-tokens-as-text"


# -- id layouts ---------------------------------------------------------------------------------


def _layout_model(layout, merges):
    return Model(layout_vocab(layout, merges, [EOT]), merges, [EOT], "json", True, "theirs")


@pytest.mark.parametrize("layout", [name for name in LAYOUTS if name != "refbpe"])
def test_id_layout_is_named_with_its_setting(layout):
    counts = count_texts([TEXT], "documents", [EOT])
    merges = planted_train(TEXT, 300, [EOT])
    theirs = _layout_model(layout, merges)
    r = verify_merges(counts, 300, [EOT], theirs, texts=[TEXT])
    assert r["identical"] and r["convention"]["layout"] == layout
    note = [w["message"] for w in r["warnings"] if w["code"] == "ids-differ"]
    assert note and r["setting"] in note[0]
    strict = verify_merges(counts, 300, [EOT], theirs, texts=[TEXT], exact_ids=True)
    assert strict["cause"] == "setup" and strict["convention"]["layout"] == layout
    assert r["setting"] in strict["explanation"].splitlines()[1]
    if LAYOUTS[layout][1]:
        assert "initial_alphabet=ByteLevel.alphabet()" in r["setting"]
    if LAYOUTS[layout][0]:
        assert "special tokens at ids 0-0" in r["setting"]


def test_one_cause_for_one_id_layout_difference_under_a_profile(tmp_path):
    """The same merges under other ids: "setup" under --exact-ids and under --profile alike."""
    counts = count_texts([TEXT], "documents", [EOT])
    _, merges = train_from_texts([TEXT], 300, [EOT], profile="rustbpe")
    theirs = _layout_model("specials-first", merges)  # rustbpe's special tokens come last
    report = verify_merges(counts, 300, [EOT], theirs, texts=[TEXT])
    path = tmp_path / "input.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    out = profile_verdict(report, theirs, 300, [EOT], counts, [str(path)], "rustbpe", None, [TEXT])
    assert out["cause"] == "setup", out["explanation"]
    assert out["convention"]["layout"] == "specials-first" and out["setting"] in out["explanation"]


def test_an_id_mismatch_shows_our_special_token_not_none():
    """Our id 0 is the special token (HF's layout), theirs a byte: both shown as tokens."""
    merges = [(b"a", b"b")]
    ours = layout_vocab("hf", merges, [EOT])
    theirs = _layout_model("refbpe", merges)
    i, mine, other = _id_mismatch(ours, theirs, [EOT])
    assert (i, mine, other) == (0, repr(EOT), repr("\x00")), (mine, other)


# -- fuzz's findings directory ------------------------------------------------------------------


def test_repro_carries_the_run_profile_and_counts_add_up(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(TESTS)
    status, out, err = run_main(
        capsys, "fuzz", "--out", tmp_path / "f", "--db", "none", "--train-py",
        "planted_trainers:train_smallest_bytes", "--profile", "cs336", "--classes", "ties",
        "--budget", 60,
    )  # fmt: skip
    assert status == 1, err
    with open(str(tmp_path / "f" / "finding.json"), encoding="utf-8") as f:
        result = json.load(f)
    assert sum(result["classes"].values()) == result["finding"]["examples"]
    repro = (tmp_path / "f" / "repro.sh").read_text()
    assert "--profile" not in repro  # cs336 is verify's own default, whose report names the tie rule
    r = subprocess.run(["sh", str(tmp_path / "f" / "repro.sh")], stdout=subprocess.PIPE)
    assert r.returncode == 1 and b"tie-rule: DIFFERENT" in r.stdout and b"smallest-bytes" in r.stdout


@settings(max_examples=examples(40), deadline=None)
@given(
    text=st.one_of(repeated_text(extra=[EOT, "\n"]), mixed_text(extra=[EOT])),
    bug=st.sampled_from(sorted(ZOO)),
    their_min=st.integers(1, 3),
    our_min=st.integers(1, 3),
    merges=st.integers(1, 20),
)
def test_min_count_read_off_the_reference_replay_is_a_replay_of_their_merges(
    text, bug, their_min, our_min, merges
):
    # The convention as verify reads it off its reference hypothesis (fit, least count
    # merged, count left) is the one a replay of their merges over the counts finds.
    wanted = merges
    theirs = planted_train(text, 257 + wanted, [EOT], min_count=their_min, **ZOO[bug][0])
    counts = count_texts([text], "documents", [EOT])
    ours = learn_merges(counts, wanted, min_count=our_min)
    k = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), None)
    if k is None and len(ours) != len(theirs):
        k = min(len(ours), len(theirs))
    assume(k is not None)
    ref_ids = layout_vocab("refbpe", theirs, [])
    ref_ids = {b: i for i, b in ref_ids.items()}
    reference, _, _ = replay_hypotheses(
        counts,
        theirs,
        ref_ids,
        ref_ids,
        [text],
        [EOT],
        probe=(k, ours[k] if k < len(ours) else None),
        wanted=wanted,
        min_count=our_min,
    )
    replayed = min_count_stop(counts, theirs, wanted, our_min)
    assert _min_count(reference, counts, theirs, wanted, our_min) == replayed


def test_a_wrapped_counter_is_not_a_minimum_count():
    """A count past 2^31 that their trainer did not merge: an overflow, not min_frequency."""
    counts = {b"aa": 2**31}
    theirs = Model(layout_vocab("refbpe", [], [EOT]), [], [EOT], "json", True, "theirs")
    r = verify_merges(counts, 300, [EOT], theirs)
    assert r["cause"] != "min-count" and r["convention"] is None


# -- planted conventions through the fuzz command line: found without their setting, not with it --

# (their CS336-signature trainer, the fuzz options, their setting's options, its cause, its setting)
PLANTED_SETTINGS = [
    ("train_min_count_2", [], ["--min-frequency", "2"], "min-count", "min_frequency=2"),
    (
        "train_hf_whole_alphabet",
        ["--profile", "hf"],
        ["--initial-alphabet", "bytelevel"],
        "setting",
        "initial_alphabet=bytelevel",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("function, options, setting, cause, named", PLANTED_SETTINGS, ids=lambda x: str(x))
def test_fuzz_finds_a_planted_convention_only_without_its_setting(
    function, options, setting, cause, named, capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(TESTS)
    argv = ["fuzz", "--train-py", "planted_trainers:" + function, "--db", "none", "--persistent"]
    argv += ["--classes", "ties", "--max-examples", "4", "--budget", "30"] + options
    status, out, err = run_main(capsys, *argv, "--out", tmp_path / "with", *setting)
    assert status == 0 and out.startswith("ties") and "4 examples, no difference" in out, out + err
    status, out, err = run_main(capsys, *argv, "--out", tmp_path / "without")
    assert status == 1, out + err
    with open(str(tmp_path / "without" / "finding.json"), encoding="utf-8") as f:
        finding = json.load(f)["finding"]
    assert (finding["cause"], finding["setting"]) == (cause, named), finding["report"]
    assert setting[0] in finding["report"].splitlines()[0]  # the option that reproduces them
    r = subprocess.run(["sh", str(tmp_path / "without" / "repro.sh")], stdout=subprocess.PIPE)
    assert r.returncode == 1 and r.stdout.startswith(cause.encode() + b": DIFFERENT"), r.stdout
