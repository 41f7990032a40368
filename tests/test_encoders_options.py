"""Encoders with other special-token rules, ``{encoding}``, and the conformance pack's two trainer inputs.

The planted encoders (``ENCODERS``, written as a small module for ``--encode-py
planted_encoders:NAME``): one without special tokens (tiktoken's
``encode_ordinary``), one that allows only ``<|endoftext|>``.  Under the
matching ``--special-tokens`` the fuzzer finds nothing; under the default
(``all``) the finding names the special-token handling.  The search runs in
this process (no process starts: fast); the command line once per setting
(marked slow: each run of theirs starts an interpreter).
"""

import json
import os
import subprocess
import time

import pytest
from support import cli_env, run_main, target_python

from refbpe.formats import read_model, write_model
from refbpe.fuzz import Target, TargetError, Trial, search_for_failure
from refbpe.fuzz.target import Run, check_placeholders
from refbpe.specials import allowed_specials

TESTS = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(TESTS, "peer_targets.py")
SPECIALS = ["<|endoftext|>", "<|pad|>"]  # both among the fuzzer's special-token atoms
CLASSES = ["special-tokens", "multi-document"]
ENCODERS = """
from refbpe import Tokenizer, read_model


def _tokenizer(model_path, special_tokens):
    model = read_model(model_path)
    return Tokenizer(model.vocab, model.merges, special_tokens)


def encode_without_specials(model_path, text):
    # knows no special tokens: their text is ordinary text
    return _tokenizer(model_path, []).encode(text)


def encode_endoftext_only(model_path, text):
    # matches <|endoftext|> only
    return _tokenizer(model_path, ["<|endoftext|>"]).encode(text)
"""
PLANTED = {}
exec(ENCODERS, PLANTED)
# (encoder, the --special-tokens setting it matches)
SETTINGS = [("encode_without_specials", ["none"]), ("encode_endoftext_only", ["<|endoftext|>"])]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from refbpe import train_from_texts

    path = tmp_path_factory.mktemp("model") / "model.hex.json"
    vocab, merges = train_from_texts(["low lower <|pad|> lowest newer wider news " * 4], 300, SPECIALS)
    write_model(str(path), "json", vocab, merges, SPECIALS)
    return path


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """The directory holding ``planted_encoders.py``, made current (``--encode-py`` imports from it)."""
    directory = tmp_path / "planted"
    directory.mkdir()
    (directory / "planted_encoders.py").write_text(ENCODERS, encoding="utf-8")
    monkeypatch.chdir(directory)
    return directory


class InProcess(Target):
    """A planted encoder called in this process."""

    def __init__(self, name):
        Target.__init__(self, "encode", function="in:process")
        self.func = PLANTED[name]

    def run(self, values, timeout):
        t0 = time.time()
        with open(values["input"], encoding="utf-8", newline="") as f:
            ids = self.func(values["model"], f.read())
        with open(values["out"], "w", encoding="ascii") as f:
            json.dump(ids, f)
        return Run(0, "", time.time() - t0, False)


def _search(model_path, encoder, setting, tmp_path, max_examples):
    from refbpe import Tokenizer

    model = read_model(str(model_path))
    tok = Tokenizer(model.vocab, model.merges, model.special_tokens)
    allowed = allowed_specials(setting, tok.special_tokens)
    trial = Trial(InProcess(encoder), model=model, model_path=str(model_path), tokenizer=tok)
    trial.allowed_special = allowed
    specials = tok.special_tokens if allowed is None else allowed
    finding, runs = search_for_failure(
        trial, CLASSES, 30, max_examples, 0, None, str(tmp_path), special_tokens=specials, shrink_budget=10
    )
    return finding, runs


def _fuzz(capsys, tmp_path, *args):
    out_dir = tmp_path / "f"
    status, out, err = run_main(
        capsys, "fuzz", "--out", out_dir, "--db", "none", "--classes", ",".join(CLASSES), *args
    )
    return status, out, err, out_dir


def _report(directory):
    with open(os.path.join(str(directory), "report.txt"), encoding="utf-8") as f:
        return f.read()


# -- --special-tokens --------------------------------------------------------------------------


@pytest.mark.parametrize("encoder, setting", SETTINGS)
def test_the_matching_setting_finds_nothing_the_default_names_the_special_tokens(
    encoder, setting, model, tmp_path
):
    finding, runs = _search(model, encoder, setting, tmp_path, 12)
    assert finding is None and runs == {c: 12 for c in CLASSES}
    finding, _ = _search(model, encoder, None, tmp_path, 40)
    assert finding is not None and finding.bug_class in CLASSES
    assert "special-token handling: ours matches" in finding.verdict.text
    assert "as a special token (--special-tokens all)" in finding.verdict.text


def test_an_encoder_matching_more_than_allowed_is_named(model, tmp_path):
    finding, _ = _search(model, "encode_endoftext_only", ["none"], tmp_path, 40)
    assert finding is not None
    assert "theirs emits the special token '<|endoftext|>'" in finding.verdict.text


@pytest.mark.slow
@pytest.mark.parametrize("encoder, setting", SETTINGS)
def test_fuzz_command_line_with_the_matching_setting_finds_nothing(
    encoder, setting, model, planted, capsys, tmp_path
):
    target = ["--encode-py", "planted_encoders:" + encoder, "--encoding", model, "--budget", 60]
    status, out, err, _ = _fuzz(capsys, tmp_path, *target, "--max-examples", 3, "--special-tokens", *setting)
    assert status == 0 and out.count("3 examples, no difference") == 2, out + err


@pytest.mark.slow
def test_fuzz_command_line_finding_names_the_setting_and_repro_keeps_it(model, planted, capsys, tmp_path):
    target = ["--encode-py", "planted_encoders:encode_endoftext_only", "--encoding", model, "--budget", 60]
    target += ["--max-examples", 10, "--special-tokens", "none"]
    status, out, err, directory = _fuzz(capsys, tmp_path, *target)
    assert status == 1, out + err
    assert "theirs emits the special token '<|endoftext|>'" in _report(directory)
    with open(str(directory / "repro.sh"), encoding="utf-8") as f:
        assert "--special-tokens none" in f.read()
    repro = subprocess.run(
        ["sh", str(directory / "repro.sh")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env()
    )
    assert repro.returncode == 1 and b"theirs emits the special token" in repro.stdout, repro.stderr


def test_allowed_specials_reads_all_none_and_a_list():
    assert allowed_specials(None, SPECIALS) is None and allowed_specials(["all"], SPECIALS) is None
    assert allowed_specials(["none"], SPECIALS) == []
    assert allowed_specials(["<|pad|>", "<|endoftext|>"], SPECIALS) == SPECIALS
    for bad in (["<|nope|>"], ["none", "<|pad|>"]):
        with pytest.raises(ValueError):
            allowed_specials(bad, SPECIALS)


def test_verify_encode_follows_special_tokens(model, capsys, tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("low<|endoftext|>lower <|pad|> news", encoding="utf-8")
    ids = tmp_path / "ids.json"
    their_ids = PLANTED["encode_without_specials"](str(model), text.read_text("utf-8"))
    ids.write_text(json.dumps(their_ids), encoding="utf-8")
    args = ["verify", "--encode", text, "--ids", ids, "--against", model]
    assert run_main(capsys, *args, "--special-tokens", "none")[0] == 0
    status, out, _ = run_main(capsys, *args)
    assert status == 1 and "special-token handling: ours matches '<|endoftext|>'" in out
    status, out, _ = run_main(capsys, *args, "--special-tokens", "<|pad|>")
    assert status == 1 and "special-token handling: ours matches '<|pad|>'" in out


def test_bad_special_tokens_exit_2_in_one_line(model, planted, capsys, tmp_path):
    encoder = ["--encode-py", "planted_encoders:encode_without_specials", "--encoding", model]
    trainer = ["--train", "true {input} {out}"]
    for args, message in (
        (encoder + ["--special-tokens", "<|nope|>"], "not a special token of the model"),
        (encoder + ["--special-tokens", "all", "<|pad|>"], "stand alone"),
        (trainer + ["--special-tokens", "none"], "--special-tokens is for --encode"),
    ):
        status, _, err, _ = _fuzz(capsys, tmp_path, *args)
        assert status == 2 and message in err and len(err.strip().splitlines()) == 1, (args, err)
    status, _, err = run_main(capsys, "verify", "x.txt", "--special-tokens", "none")
    assert status == 2 and "--special-tokens is for --encode" in err


# -- {encoding} --------------------------------------------------------------------------------


def test_encoding_is_the_name_of_a_named_encoding_else_the_model_path(tmp_path):
    command = "enc --encoding {encoding} --model {model} {input} {out}"
    check_placeholders("encode", Target("encode", command=command).template)
    with pytest.raises(TargetError):
        check_placeholders("encode", Target("encode", command="enc {encodings} {out}").template)
    case = {"text": "low", "special_tokens": []}
    for encoding, path, expected in (
        ("cl100k_base", "/cache/9b5ad71b2ce5302211f9c61530b329a4922fc6a4", "cl100k_base"),
        (None, "/models/m.hex.json", "/models/m.hex.json"),
    ):
        trial = Trial(Target("encode", command=command), model_path=path, encoding=encoding)
        values = trial.values(case, str(tmp_path))
        argv = trial.target.argv(values)
        assert argv[2] == expected and argv[4] == path


@pytest.mark.slow
def test_fuzz_passes_encoding_to_their_command(model, planted, capsys, tmp_path):
    script = planted / "enc.py"
    script.write_text(
        "import json, sys\n"
        "from planted_encoders import encode_without_specials\n"
        "encoding, path, out = sys.argv[1:]\n"
        "assert encoding == %r, encoding\n"
        "text = open(path, encoding='utf-8', newline='').read()\n"
        "json.dump(encode_without_specials(encoding, text), open(out, 'w'))\n" % str(model),
        encoding="utf-8",
    )
    command = "%s %s {encoding} {input} {out}" % (target_python(), script)
    status, out, err, _ = _fuzz(
        capsys, tmp_path, "--encode", command, "--encoding", model, "--budget", 60,
        "--special-tokens", "none", "--max-examples", 2,
    )  # fmt: skip
    assert status == 0 and out.count("2 examples, no difference") == 2, out + err


# -- conformance: text and word-count trainers --------------------------------------------------


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    from refbpe.cli import main

    path = tmp_path_factory.mktemp("pack") / "pack"
    assert main(["conformance", "write", str(path)]) == 0
    return path


CASES = "train-ties-00[01],train-count-overflow-00[012]"


def _trainer(placeholder="{input}"):
    return "%s %s train refbpe %s {vocab_size} {out} {special_token}" % (target_python(), PEERS, placeholder)


def test_a_text_trainer_skips_the_word_count_cases_saying_why(pack, capsys):
    status, out, err = run_main(capsys, "conformance", "check", pack, "--train", _trainer(), "--cases", CASES)
    assert status == 0, out + err
    assert "FAIL" not in out and "PASS train-ties-000" in out and "train-count-overflow" not in out
    summary = out.splitlines()[-1]
    assert summary.startswith("2 passed, 0 failed of 2 train cases")
    assert "3 word-count cases skipped: the trainer reads text; give --counts (or {counts}" in summary
    status, _, err = run_main(
        capsys, "conformance", "check", pack, "--train", _trainer(), "--cases", "train-count-overflow-*"
    )
    assert status == 2 and "16 word-count cases skipped" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("how", ["--counts", "{counts}"])
def test_a_counts_trainer_runs_the_word_count_cases(how, pack, capsys):
    command = _trainer("{counts}" if how == "{counts}" else "{input}")
    extra = ["--counts"] if how == "--counts" else []
    args = ["conformance", "check", pack, "--train", command, "--cases", CASES]
    status, out, err = run_main(capsys, *args, *extra)
    assert status == 0, out + err
    assert "PASS train-count-overflow-002" in out and "train-ties" not in out.replace("text cases", "")
    assert out.splitlines()[-1].startswith("3 passed, 0 failed of 3 train cases; 2 text cases skipped")


@pytest.mark.slow
def test_conformance_encode_follows_special_tokens(pack, planted, capsys):
    encoder = ["--encode-py", "planted_encoders:encode_without_specials"]
    encoder += ["--cases", "encode-multi-document-*"]
    status, out, err = run_main(capsys, "conformance", "check", pack, *encoder, "--special-tokens", "none")
    assert status == 0 and "2 passed, 0 failed" in out, out + err
    status, out, err = run_main(capsys, "conformance", "check", pack, *encoder)
    assert status == 1 and "special-token handling" in out, out + err
    status, _, err = run_main(capsys, "conformance", "check", pack, *encoder, "--counts")
    assert status == 2 and "--counts is for --train" in err
