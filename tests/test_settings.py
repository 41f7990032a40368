"""``refbpe.learn.settings``: the training conventions resolved once.

The trainers' keyword forms and their settings forms give the same models; ``resolve``
raises the trainers' own errors, in their order; the command line builds the same
value (``cli.train_settings``) as ``resolve`` does from the same options.
"""

import inspect
import os
import pickle

import pytest
from support import run_main

from refbpe.cli.commands import build_parser
from refbpe.cli.common import CliError
from refbpe.cli.train_settings import settings_from_args
from refbpe.corpus.countfile import write_counts
from refbpe.formats.model import Model
from refbpe.learn.profiles import SuperBPEProfile, get_profile
from refbpe.learn.settings import TrainSettings, check_training_args, resolve
from refbpe.learn.train import (
    train_bpe,
    train_corpus,
    train_count_files,
    train_counts,
    train_from_count_files,
    train_from_counts,
    train_from_texts,
    train_texts,
)
from refbpe.verify.certify import PROFILE_TIE_RULES
from refbpe.verify.ties import ORDER_FREE

TEXTS = ["low low lower<|endoftext|>lowest newest widest\n", "the cat sat on the mat\nthe end\n"]
COUNTS = {b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6, b" the": 4, b"\xc3\xa9t\xc3\xa9": 2}
SPECIALS = ["<|endoftext|>"]
OPTIONS = [
    {"profile": "cs336"},
    {"profile": "cs336", "min_frequency": 3},
    {"profile": "cs336", "pattern": "cl100k_base", "unicode": "15.0.0"},
    {"profile": "rustbpe"},
    {"profile": "hf"},
    {"profile": "hf", "add_prefix_space": False, "initial_alphabet": "xyz", "min_frequency": 2},
    {"profile": "hf", "cut": "lines"},
]


def test_resolve_fills_in_each_profiles_defaults():
    s = resolve("rustbpe", vocab_size=300, special_tokens=["<a>", "<b>", "<a>"])
    assert (s.pattern, s.unicode, s.sequences, s.add_prefix_space) == ("llama3", "16.0.0", "documents", False)
    assert s.special_tokens == ("<a>", "<b>") and s.vocab_size == 300 and s.parent is None
    hf = resolve("hf", initial_alphabet="ba")
    assert hf.add_prefix_space is True and hf.initial_alphabet == (97, 98) and hf.vocab_size is None
    assert resolve().profile is get_profile("cs336") and resolve().pattern_key == "gpt2"
    staged = resolve(SuperBPEProfile(7))
    assert staged.stage_pattern_keys == ["superbpe-stage1", "superbpe-stage2"]
    assert staged.recorded()["transition"] == 7 and resolve("hf").stage_pattern_keys is None


@pytest.mark.parametrize(
    "profile,rule",
    [("cs336", "greatest-bytes"), ("rustbpe", "smallest-ids-refbpe-layout"), ("hf", "smallest-ids")],
)
def test_the_tie_rule_is_the_one_certify_holds_the_profile_to(profile, rule):
    assert resolve(profile).tie_rule == rule == PROFILE_TIE_RULES[profile] and rule in ORDER_FREE


def test_settings_do_not_change():
    s = resolve("hf", vocab_size=300, initial_alphabet="ab")
    with pytest.raises(AttributeError):
        s.vocab_size = 400
    record = s.recorded()
    record["initial_alphabet"].append(99)
    record["min_frequency"] = 5
    assert s.recorded()["initial_alphabet"] == [97, 98] and s.min_frequency == 0
    same = resolve("hf", vocab_size=300, initial_alphabet="ba")
    assert s == same and hash(s) == hash(same)
    assert s != resolve("hf", vocab_size=301, initial_alphabet="ab")
    assert pickle.loads(pickle.dumps(s)) == s and pickle.loads(pickle.dumps(s)).recorded() == s.recorded()


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(str(v) for v in o.values()))
def test_each_trainer_and_its_settings_form_give_the_same_model(options, tmp_path):
    settings = resolve(vocab_size=300, special_tokens=SPECIALS, **options)
    report_a, report_b = {}, {}
    assert train_from_counts(COUNTS, 300, SPECIALS, report=report_a, **options) == train_counts(
        settings, COUNTS, report=report_b
    )
    assert report_a.get("profile") == report_b.get("profile") and report_a["merge"]["merges"] > 0
    # train_from_texts' own default cut: under hf each text is one sequence ("items")
    cut = options.get("cut", "items" if options["profile"] == "hf" else "documents")
    as_texts = resolve(vocab_size=300, special_tokens=SPECIALS, **dict(options, cut=cut))
    assert train_from_texts(TEXTS, 300, SPECIALS, **options) == train_texts(as_texts, TEXTS)
    path = tmp_path / "a.counts.tsv"
    write_counts(str(path), COUNTS)
    if options.get("cut") != "lines":  # count files are counted as documents
        assert train_from_count_files([str(path)], 300, SPECIALS, **options) == train_count_files(
            settings, [str(path)]
        )
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(TEXTS), encoding="utf-8")
    assert train_bpe(str(corpus), 300, SPECIALS, workers=1, **options) == train_corpus(
        settings, [str(corpus)], workers=1
    )


@pytest.mark.parametrize("trainer", [train_bpe, train_from_counts, train_from_texts, train_from_count_files])
def test_every_trainer_takes_resolves_options_with_its_defaults(trainer):
    """The trainers hand their options to ``resolve`` by name: each takes every one of them, and
    those a caller may leave out default alike (``vocab_size`` and ``special_tokens`` aside)."""
    ours = inspect.signature(trainer).parameters
    for name, option in inspect.signature(resolve).parameters.items():
        assert name in ours, (trainer.__name__, name)
        if name not in ("vocab_size", "special_tokens"):
            assert ours[name].default == option.default, (trainer.__name__, name)
            assert ours[name].kind == inspect.Parameter.KEYWORD_ONLY, (trainer.__name__, name)


def test_the_settings_forms_need_a_vocab_size():
    with pytest.raises(ValueError, match="needs settings with a vocab_size"):
        train_counts(resolve(), COUNTS)


BAD = [
    ({"profile": "nope"}, "unknown profile 'nope'"),
    ({"cut": "lines"}, "profile cs336 reads its input as documents, not 'lines'"),
    ({"add_prefix_space": True}, "add_prefix_space is an HF option"),
    ({"initial_alphabet": "ab"}, "initial_alphabet is an HF option"),
    ({"profile": "hf", "pattern": "llama3"}, "profile hf splits with ByteLevel's regex"),
    ({"min_frequency": -1}, "min_frequency must be a non-negative integer"),
    ({"vocab_size": 300.0}, "vocab_size must be an integer"),
    ({"special_tokens": [""]}, "special tokens must be non-empty strings"),
    ({"vocab_size": 256}, "vocab_size 256 is below the minimum 257"),
    # The first check wins: the vocab size's type before the special tokens, a profile option before both.
    ({"vocab_size": "big", "special_tokens": [""]}, "vocab_size must be an integer"),
    ({"min_frequency": -1, "vocab_size": "big"}, "min_frequency must be"),
]


@pytest.mark.parametrize("bad,message", BAD)
def test_resolve_raises_the_trainers_errors_in_their_order(bad, message):
    keywords = dict({"vocab_size": 300, "special_tokens": SPECIALS}, **bad)
    with pytest.raises(ValueError) as from_resolve:
        resolve(**keywords)
    vocab_size, specials = keywords.pop("vocab_size"), keywords.pop("special_tokens")
    with pytest.raises(ValueError) as from_trainer:
        train_from_counts(COUNTS, vocab_size, specials, **keywords)
    assert message in str(from_resolve.value) and str(from_resolve.value) == str(from_trainer.value)


def _parent_model():
    vocab, merges = train_from_counts(COUNTS, 262, ["<p>"])
    return Model(vocab, merges, ["<p>"], "gpt2")


def test_a_parents_special_tokens_come_first_and_its_merges_are_kept():
    s = resolve(vocab_size=300, special_tokens=["<c>", "<p>"], extend=_parent_model(), inherit_merges=3)
    assert s.special_tokens == ("<p>", "<c>") and len(s.parent.merges) == 3
    fewer = resolve(vocab_size=300, special_tokens=["<c>"], extend=_parent_model(), inherit_merges=2)
    assert pickle.loads(pickle.dumps(s)) == s != fewer
    with pytest.raises(ValueError, match="inherit_merges must be an integer from 0 to the parent's 5"):
        resolve(vocab_size=300, extend=_parent_model(), inherit_merges=9)
    assert train_counts(s, COUNTS) == train_from_counts(
        COUNTS, 300, ["<c>", "<p>"], extend=_parent_model(), inherit_merges=3
    )


def test_check_training_args_is_the_trainers_check():
    assert check_training_args(260, ["<a>", "<a>", "<b>"]) == (260, ["<a>", "<b>"])
    with pytest.raises(ValueError, match="below the minimum 258"):
        check_training_args(257, ["<a>", "<b>"])


def _args(*argv):
    return build_parser().parse_args(["train", "corpus.txt", "-o", "out"] + list(argv))


@pytest.mark.parametrize(
    "argv,options",
    [
        ([], {}),
        (["--profile", "rustbpe", "--pattern", "gpt2"], {"profile": "rustbpe", "pattern": "gpt2"}),
        (["--pattern", "o200k_base", "--unicode", "15.1"], {"pattern": "o200k_base@15.1.0"}),
        (
            ["--profile", "hf", "--initial-alphabet", "xy", "--no-add-prefix-space", "--min-frequency", "2"],
            {"profile": "hf", "initial_alphabet": "xy", "add_prefix_space": False, "min_frequency": 2},
        ),
        (["--profile", "hf", "--sequences", "lines"], {"profile": "hf", "cut": "lines"}),
        (
            ["--profile", "hf", "--initial-alphabet", "bytelevel"],
            {"profile": "hf", "initial_alphabet": "bytelevel"},
        ),
    ],
)
def test_the_command_line_builds_what_resolve_builds(argv, options):
    args = _args("--vocab-size", "400", "--special-token", "<s>", *argv)
    built = settings_from_args(args)
    assert isinstance(built, TrainSettings)
    assert built == resolve(vocab_size=400, special_tokens=["<s>"], **options)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--transition", "5"], "--transition is an option of --profile superbpe"),
        (["--profile", "superbpe"], "--profile superbpe needs --transition T"),
        (["--sequences", "lines"], "profile cs336 reads its input as documents, not 'lines'"),
        (["--vocab-size", "257", "--special-token", "<s>", "--special-token", "<t>"], "below the minimum"),
    ],
)
def test_the_command_line_names_the_first_bad_setting(argv, message):
    argv = list(argv) if "--vocab-size" in argv else ["--vocab-size", "400"] + list(argv)
    with pytest.raises(CliError, match=message):
        settings_from_args(_args(*argv))


# -- the same options in train, verify --trace and certify -------------------------------

EOT = "<|endoftext|>"
# Each document starts with a word seen nowhere else after a space, so the prefix space changes counts;
# vocab size 270 leaves 13 merges after the whole byte-level alphabet, fewer than the corpus allows.
DOCS = EOT.join("hello %s\nhello there\n" % w for w in ("you", "world", "all", "again", "friend"))


def _train(capsys, tmp_path, name, *options):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(DOCS, encoding="utf-8")
    out, trace = str(tmp_path / name), str(tmp_path / (name + ".jsonl"))
    argv = ["train", str(corpus), "--vocab-size", "270", "--special-token", EOT, "-o", out]
    assert run_main(capsys, *argv, "--trace", trace, "--quiet", "--workers", "1", *options)[0] == 0
    return str(corpus), out, trace


SHARED = [
    ["--no-add-prefix-space"],
    ["--sequences", "lines"],
    ["--initial-alphabet", "bytelevel"],
    ["--min-frequency", "4"],
]


@pytest.mark.parametrize("options", SHARED, ids=lambda o: o[0])
def test_verify_trace_trains_the_reference_with_trains_options(options, tmp_path, capsys):
    corpus, _, trace = _train(capsys, tmp_path, "m", "--profile", "hf", *options)
    verify = ["verify", corpus, "--vocab-size", "270", "--special-token", EOT, "--profile", "hf"]
    code, text, _ = run_main(capsys, *verify, "--trace", trace, *options)
    assert code == 0 and text.startswith("identical")
    code, text, _ = run_main(capsys, *verify, "--trace", trace)  # the option changes the reference
    assert code == 1 and text.startswith("DIFFERENT")


# The same option with its other value (given, it wins over the setting their manifest names).
OTHER = {
    "--no-add-prefix-space": ["--add-prefix-space"],
    "--sequences": ["--sequences", "documents"],
    "--initial-alphabet": ["--initial-alphabet", ""],
    "--min-frequency": ["--min-frequency", "0"],
}


@pytest.mark.parametrize("options", SHARED, ids=lambda o: o[0])
def test_certify_counts_and_sizes_as_train_did(options, tmp_path, capsys):
    corpus, model, _ = _train(capsys, tmp_path, "m", "--profile", "hf", *options)
    certify = ["certify", model, corpus, "--vocab-size", "270", "--special-token", EOT, "--profile", "hf"]
    code, text, _ = run_main(capsys, *certify, *options)
    assert code == 0 and text.startswith("certified"), text
    code, text, _ = run_main(capsys, *certify, *OTHER[options[0]])
    assert code == 1 and text.startswith("NOT certified"), text


@pytest.mark.parametrize(
    "argv,message",
    [
        (["certify", "m", "c.txt", "--profile", "superbpe", "--transition", "5"], "certify replays one"),
        (["verify", "c.txt", "--against", "m", "--vocab-size", "270", "--sequences", "lines"], "not 'lines'"),
        (["verify", "c.txt", "--against", "m", "--vocab-size", "270", "--initial-alphabet", "a"], "HF opt"),
        (["fuzz", "--train", "true", "--initial-alphabet", "ab"], "HF option"),
        (["fuzz", "--split", "true", "--min-frequency", "2"], "fuzz --split does not take --min-frequency"),
        (["fuzz", "--train", "true", "--profile", "superbpe", "--transition", "3"], "single-stage"),
        (
            ["conformance", "write", "d", "--transition", "3"],
            "--transition is an option of --profile superbpe",
        ),
        (["conformance", "write", "d", "--profile", "superbpe", "--transition", "3"], "single-stage"),
    ],
)
def test_a_tool_that_cannot_honour_a_setting_refuses_it_in_one_line(argv, message, tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text(DOCS, encoding="utf-8")
    _, _, trace = _train(capsys, tmp_path, "m")
    argv = [str(tmp_path / a) if a in ("m", "c.txt", "d") else a for a in argv]
    code, _, err = run_main(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not os.path.exists(str(tmp_path / "d"))
