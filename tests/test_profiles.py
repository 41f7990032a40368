"""Trainer profiles: each profile's engine == the naive oracle with that profile, and
``rustbpe``/``hf`` == the installed peers byte for byte (CPython; skipped without them).

Corpora are built to force ties: a handful of words over a few bytes whose GPT-2
mapped characters sort in another order than the bytes themselves (space is
U+0120, newline U+010A, 0xFF stays U+00FF), with small counts.
"""

import collections
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import HEAVY, IS_PYPY, corpus_path, examples, mixed_text, run_main

from refbpe.corpus import pool, sequences
from refbpe.corpus.sequences import (
    count_texts,
    count_texts_parallel,
    count_texts_per_pattern,
    cut_sequences,
    pieces_at_sequence_boundaries,
)
from refbpe.formats.bytemap import encode_token
from refbpe.learn.profiles import ProfileLimit, get_profile, profile_names
from refbpe.learn.train import train_bpe, train_from_counts, train_from_texts
from refbpe.naive import naive_train_bpe_from_counts, naive_train_from_texts
from refbpe.pretokenize.gpt2 import GPT2_PATTERN
from refbpe.pretokenize.patterns import get_pattern

PROFILES = ("cs336", "rustbpe", "hf")
TIE_BYTES = [0x61, 0x62, 0x20, 0x0A, 0xFF, 0x80, 0x41]  # a b space newline 0xff 0x80 A

words = st.lists(st.sampled_from(TIE_BYTES), min_size=1, max_size=7).map(bytes)
word_tables = st.dictionaries(words, st.integers(1, 3), min_size=1, max_size=12)
# Texts for the peers: few characters, so pairs tie; "'s" and digits exercise the patterns.
tie_text = st.text(alphabet="ab \n'sA1\u00e9\u0100", min_size=0, max_size=40)
texts = st.lists(tie_text, min_size=1, max_size=8)


def _both(engine, naive):
    """(engine result, naive result), or both ProfileLimit (the one HF rule not modelled)."""
    try:
        mine = engine()
    except ProfileLimit:
        with pytest.raises(ProfileLimit):
            naive()
        return None, None
    return mine, naive()


# -- engine == naive oracle, per profile ---------------------------------------------------


@settings(max_examples=examples(150))
@given(
    table=word_tables,
    profile=st.sampled_from(PROFILES),
    extra=st.integers(0, 30),
    specials=st.sampled_from([(), ("<s>",), ("<s>", "a")]),
    min_frequency=st.sampled_from([0, 0, 2, 3]),
)
def test_engine_equals_naive_per_profile(table, profile, extra, specials, min_frequency):
    vocab_size = (len(specials) + 8 if profile == "hf" else 256 + len(specials)) + extra
    options = {"profile": profile, "min_frequency": min_frequency}
    mine, naive = _both(
        lambda: train_from_counts(table, vocab_size, specials, **options),
        lambda: naive_train_bpe_from_counts(table, vocab_size, specials, **options),
    )
    assert mine == naive


@settings(max_examples=examples(60))
@given(table=word_tables, extra=st.integers(0, 20), full=st.booleans())
def test_hf_engine_equals_naive_with_initial_alphabet(table, extra, full):
    alphabet = "bytelevel" if full else [encode_token(b"\x0a"), encode_token(b"z")]
    size_alphabet = 256 if full else 2
    vocab_size = size_alphabet + extra
    mine, naive = _both(
        lambda: train_from_counts(table, vocab_size, profile="hf", initial_alphabet=alphabet),
        lambda: naive_train_bpe_from_counts(
            table, vocab_size, profile="hf", initial_alphabet=list(range(256)) if full else [0x0A, 0x7A]
        ),
    )
    assert mine == naive


@settings(max_examples=examples(80))
@given(
    docs=texts,
    profile=st.sampled_from(PROFILES),
    cut=st.sampled_from([None, "documents", "lines", "items"]),
    prefix=st.booleans(),
    pattern=st.sampled_from([None, "gpt2", "llama3", "cl100k_base"]),
)
def test_texts_engine_equals_naive(docs, profile, cut, prefix, pattern):
    if profile != "hf":
        cut, prefix = (None if cut != "documents" else cut), False
    else:
        pattern = None
    options = dict(profile=profile, cut=cut, add_prefix_space=prefix, pattern=pattern)
    mine, naive = _both(
        lambda: train_from_texts(docs, 300, ["<s>"], **options),
        lambda: naive_train_from_texts(docs, 300, ["<s>"], **options),
    )
    assert mine == naive


def test_cs336_profile_is_the_default():
    table = {b"ab": 2, b"ba": 2, b" a": 1, b"\nb": 1}
    assert train_from_counts(table, 270, ["<s>"], profile="cs336") == train_from_counts(table, 270, ["<s>"])
    assert profile_names()[0] == "cs336"


def test_the_three_tie_rules_differ_where_they_should():
    # Three pairs, one each: cs336 takes the greatest bytes, (b, ' '); rustbpe the smallest ids,
    # (' ', a) (32 < 97); HF maps ' ' to U+0120, after every letter, so its smallest ids are (a, b).
    table = {b"ab": 1, b"b ": 1, b" a": 1}
    first = {p: train_from_counts(table, 300, profile=p)[1][0] for p in PROFILES}
    assert first == {"cs336": (b"b", b" "), "rustbpe": (b" ", b"a"), "hf": (b"a", b"b")}


def test_hf_reused_id_is_refused_by_engine_and_oracle():
    # The special token "ab" is in HF's vocab before the merge (a, b) makes "ab".
    table = {b"ab": 5}
    with pytest.raises(ProfileLimit, match="merge 0"):
        train_from_counts(table, 10, ["ab"], profile="hf")
    with pytest.raises(ProfileLimit):
        naive_train_bpe_from_counts(table, 10, ["ab"], profile="hf")


def test_profile_options_are_checked():
    with pytest.raises(ValueError, match="unknown profile"):
        get_profile("sentencepiece")
    with pytest.raises(ValueError, match="HF option"):
        train_from_counts({b"ab": 1}, 300, profile="rustbpe", initial_alphabet="bytelevel")
    with pytest.raises(ValueError, match="reads its input"):
        train_from_texts(["ab"], 300, profile="cs336", cut="lines")
    with pytest.raises(ValueError, match="unknown pattern"):
        train_from_texts(["ab"], 300, profile="rustbpe", pattern="gpt3")
    with pytest.raises(ValueError, match="ByteLevel's regex"):
        train_from_texts(["ab"], 300, profile="hf", pattern="llama3")


def test_train_bpe_with_a_profile_reads_files_as_the_texts(tmp_path):
    text = "ab ab\n  \nb a<s>ab\n\na b"
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8")
    for profile, cut, prefix in (("rustbpe", None, False), ("hf", "lines", True), ("hf", "documents", True)):
        got = train_bpe(str(path), 300, ["<s>"], profile=profile, cut=cut, add_prefix_space=prefix, workers=1)
        cut_texts = cut or "documents"
        want = train_from_texts([text], 300, ["<s>"], profile=profile, cut=cut_texts, add_prefix_space=prefix)
        assert got == want


@settings(max_examples=examples(200))
@given(
    text=st.text(alphabet="ab \n<s>", max_size=60),
    cut=st.sampled_from(["documents", "lines", "items"]),
    parts=st.integers(1, 7),
    specials=st.sampled_from([("<s>",), ("<s>", "ss"), ("s",), ()]),
)
def test_pieces_at_sequence_boundaries_keep_the_sequences(text, cut, parts, specials):
    for t in (text, text.encode("utf-8")):
        pieces = pieces_at_sequence_boundaries(t, cut, specials, parts)
        assert len(pieces) <= max(1, parts)
        if cut == "items":
            assert pieces == [t]
        else:
            assert [q for p in pieces for q in cut_sequences(p, cut, specials)] == cut_sequences(
                t, cut, specials
            )
    as_bytes = [q.encode("utf-8") for q in cut_sequences(text, cut, specials)]
    assert cut_sequences(text.encode("utf-8"), cut, specials) == as_bytes


@settings(max_examples=examples(60), deadline=None)
@given(
    text=mixed_text(extra=("\n", "\r\n", " \n", "\n\n ", "  ", "\n1", "!!\n")),
    pattern=st.sampled_from(["gpt2", "o200k_base", "superbpe-stage1", "superbpe-stage2"]),
)
def test_lines_are_counted_each_on_its_own(text, pattern):
    data = text.encode("utf-8", "surrogatepass")
    expected = collections.Counter()
    for line in cut_sequences(data, "lines"):
        expected.update(get_pattern(pattern).pretokenize(line))
    assert count_texts([text], "lines", (), pattern) == dict(expected)
    assert count_texts([data], "lines", (), pattern) == dict(expected)


def test_parallel_sequence_counting_equals_in_process(monkeypatch):
    monkeypatch.setattr(sequences, "POOL_FROM", 0)  # the pool even for these few bytes
    docs = ["a%d b\n\n  c %s\n" % (i, "x" * (i % 7)) for i in range(3000)]
    text = EOT.join(docs)
    for cut in ("documents", "lines"):
        for prefix in (False, True):
            one = count_texts([text], cut, [EOT], "llama3", prefix)
            assert count_texts_parallel([text, "z"], cut, [EOT], "llama3", prefix, workers=2) == count_texts(
                [text, "z"], cut, [EOT], "llama3", prefix
            )
            assert one


def test_texts_too_small_for_a_pool_are_counted_in_process(monkeypatch):
    def no_pool(*args, **kwargs):
        raise AssertionError("a pool was started")

    monkeypatch.setattr(pool, "make_executor", no_pool)
    text = "a b\n\n  c\n" * 100
    expected = count_texts([text], "lines", [], "llama3")
    assert count_texts_parallel([text], "lines", [], "llama3", workers=2) == expected
    assert count_texts_per_pattern([text], "lines", [], ["llama3"], workers=2) == [expected]
    monkeypatch.setattr(sequences, "POOL_FROM", 0)
    with pytest.raises(AssertionError, match="a pool"):
        count_texts_parallel([text], "lines", [], "llama3", workers=2)


# -- the peers ---------------------------------------------------------------------------


def _rustbpe():
    if IS_PYPY:
        pytest.skip("rustbpe is a CPython extension (not importable on PyPy)")
    return pytest.importorskip("rustbpe", reason="rustbpe is not installed")


def _tokenizers():
    if IS_PYPY:
        pytest.skip("tokenizers is a CPython extension (not importable on PyPy)")
    return pytest.importorskip("tokenizers", reason="tokenizers is not installed")


def rustbpe_ranks(docs, vocab_size, pattern=None):
    rustbpe = _rustbpe()
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(docs, vocab_size, pattern=pattern)
    return [(bytes(b), r) for b, r in tok.get_mergeable_ranks()]


def refbpe_ranks(vocab):
    return [(vocab[i], i) for i in sorted(vocab)]


def hf_model(docs, vocab_size, specials=(), prefix=True, alphabet=(), files=None, min_frequency=0):
    tokenizers = _tokenizers()
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=prefix)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        show_progress=False,
        special_tokens=list(specials),
        initial_alphabet=list(alphabet),
        min_frequency=min_frequency,
    )
    if files:
        tok.train(files, trainer)
    else:
        tok.train_from_iterator(docs, trainer)
    assert tokenizers.__version__ == get_profile("hf").peer[1]
    model = json.loads(tok.to_str())["model"]
    return model["vocab"], [list(m) for m in model["merges"]]


def refbpe_hf_model(vocab, merges, specials):
    n = len(set(specials))
    names = {(b.decode("utf-8") if i < n else encode_token(b)): i for i, b in vocab.items()}
    return names, [[encode_token(a), encode_token(b)] for a, b in merges]


def test_rustbpe_version_is_the_one_proven():
    rustbpe = _rustbpe()
    from importlib.metadata import version

    assert version("rustbpe") == get_profile("rustbpe").peer[1], rustbpe


@settings(max_examples=examples(60))
@given(docs=texts, extra=st.integers(0, 40), gpt2=st.booleans())
def test_rustbpe_equals_peer_on_tie_corpora(docs, extra, gpt2):
    vocab, _ = train_from_texts(docs, 256 + extra, profile="rustbpe", pattern="gpt2" if gpt2 else None)
    assert refbpe_ranks(vocab) == rustbpe_ranks(docs, 256 + extra, GPT2_PATTERN if gpt2 else None)


@settings(max_examples=examples(60))
@given(
    docs=texts,
    extra=st.integers(0, 40),
    specials=st.sampled_from([(), ("<|endoftext|>",), ("<s>", "</s>")]),
    prefix=st.booleans(),
    alphabet=st.booleans(),
    min_frequency=st.sampled_from([0, 0, 2]),
)
def test_hf_iterator_equals_peer_on_tie_corpora(docs, extra, specials, prefix, alphabet, min_frequency):
    base = len(specials) + (256 if alphabet else 6)
    options = dict(add_prefix_space=prefix, min_frequency=min_frequency)
    if alphabet:
        options["initial_alphabet"] = "bytelevel"
    try:
        vocab, merges = train_from_texts(docs, base + extra, specials, profile="hf", **options)
    except ProfileLimit:
        return  # HF reuses an id here (the one rule not modelled); the oracle test covers the refusal
    theirs = hf_model(docs, base + extra, specials, prefix, _alphabet(alphabet), min_frequency=min_frequency)
    assert refbpe_hf_model(vocab, merges, specials) == theirs


@settings(max_examples=examples(40))
@given(docs=texts, extra=st.integers(0, 40), specials=st.sampled_from([(), ("<s>",)]), prefix=st.booleans())
def test_hf_files_equal_peer_on_tie_corpora(tmp_path_factory, docs, extra, specials, prefix):
    path = str(tmp_path_factory.mktemp("hf") / "corpus.txt")
    text = "<s>".join(docs)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    try:
        got = train_bpe(
            path, 6 + extra, specials, profile="hf", cut="lines", add_prefix_space=prefix, workers=1
        )
    except ProfileLimit:
        return
    theirs = hf_model(None, 6 + extra, specials, prefix, files=[path])
    assert refbpe_hf_model(got[0], got[1], specials) == theirs


def _alphabet(full):
    if not full:
        return ()
    from tokenizers import pre_tokenizers

    return pre_tokenizers.ByteLevel.alphabet()


# -- the peers on shared corpora (prefixes; the full files under the heavy profile) -------

CORPORA = ["english_small", "chinese", "russian", "mixed_multilingual", "python_code", "tinystories_ru"]
PREFIX = None if HEAVY else 1 << 18
VOCABS = [1000, 5000, 10000] if HEAVY else [1000, 2000]


def _corpus_docs(name):
    with open(corpus_path(name + ".txt"), "rb") as f:
        data = f.read(PREFIX) if PREFIX else f.read()
    return data.decode("utf-8", "ignore").split("<|endoftext|>")


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPORA)
@pytest.mark.parametrize("pattern", ["gpt2", None])
def test_rustbpe_equals_peer_on_shared_corpora(name, pattern):
    _rustbpe()
    docs = _corpus_docs(name)
    for vocab_size in VOCABS:
        vocab, _ = train_from_texts(docs, vocab_size, profile="rustbpe", pattern=pattern)
        theirs = rustbpe_ranks(docs, vocab_size, GPT2_PATTERN if pattern else None)
        assert refbpe_ranks(vocab) == theirs, (name, vocab_size)


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPORA)
def test_hf_equals_peer_on_shared_corpora(name):
    _tokenizers()
    docs = _corpus_docs(name)
    specials = ["<|endoftext|>"]
    for vocab_size in VOCABS:
        vocab, merges = train_from_texts(docs, vocab_size, specials, profile="hf")
        assert refbpe_hf_model(vocab, merges, specials) == hf_model(docs, vocab_size, specials), (
            name,
            vocab_size,
        )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["english_small", "mixed_multilingual"])
def test_hf_lines_equal_peer_on_shared_corpora(tmp_path, name):
    _tokenizers()
    path = str(tmp_path / "prefix.txt")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("<|endoftext|>".join(_corpus_docs(name)))
    for vocab_size in VOCABS:
        got = train_bpe(path, vocab_size, ["<|endoftext|>"], profile="hf", cut="lines", workers=1)
        theirs = hf_model(None, vocab_size, ["<|endoftext|>"], files=[path])
        assert refbpe_hf_model(got[0], got[1], ["<|endoftext|>"]) == theirs, (name, vocab_size)


# -- the command line: outputs in the peers' own shape -------------------------------------

EOT = "<|endoftext|>"


def _cli_corpus(tmp_path, size=300000):
    with open(corpus_path("english_small.txt"), "rb") as f:
        data = f.read(size)
    text = data.decode("utf-8", "ignore")
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    return str(path), text


def test_cli_hf_profile_writes_the_tokenizer_json_hf_trains(tmp_path, capsys):
    _tokenizers()
    from tokenizers import Tokenizer

    path, text = _cli_corpus(tmp_path)
    out = tmp_path / "hf"
    status, _, err = run_main(
        capsys, "train", path, "--vocab-size", 1200, "--special-token", EOT, "--profile", "hf", "--out", out
    )
    assert status == 0, err
    mine = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    vocab, merges = hf_model(text.split(EOT), 1200, [EOT])
    assert mine["model"]["vocab"] == vocab and mine["model"]["merges"] == merges
    loaded = Tokenizer.from_file(str(out / "tokenizer.json"))
    sample = text[:5000] + EOT + "caf\u00e9 \U0001f600 x"
    theirs = _hf_trained_tokenizer(text.split(EOT), 1200, [EOT])
    assert loaded.encode(sample).ids == theirs.encode(sample).ids
    assert loaded.decode(loaded.encode("hello world").ids) == " hello world"
    manifest = json.loads((out / "refbpe.json").read_text(encoding="utf-8"))
    assert manifest["profile"]["profile"] == "hf"
    assert manifest["profile"]["peer"] == "tokenizers " + get_profile("hf").peer[1]
    assert manifest["special_tokens"] == [{"content": EOT, "id": 0}]


@pytest.mark.slow
def test_cli_hf_profile_lines_without_prefix_space(tmp_path, capsys):
    _tokenizers()
    path, _ = _cli_corpus(tmp_path)
    out = tmp_path / "hf"
    argv = ["train", path, "--vocab-size", 900, "--profile", "hf", "--out", out]
    status, _, err = run_main(
        capsys, *argv, "--sequences", "lines", "--no-add-prefix-space", "--min-frequency", 3
    )
    assert status == 0, err
    mine = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    tok = _hf_trained_tokenizer(None, 900, (), prefix=False, files=[path], min_frequency=3)
    theirs = json.loads(tok.to_str())
    assert mine["model"] == theirs["model"]
    assert mine["pre_tokenizer"] == theirs["pre_tokenizer"]


@pytest.mark.slow
def test_cli_rustbpe_profile_writes_the_ranks_rustbpe_returns(tmp_path, capsys):
    _rustbpe()
    import base64

    path, text = _cli_corpus(tmp_path)
    for pattern in ("gpt2", None):
        out = tmp_path / ("rustbpe-%s" % pattern)
        argv = [
            "train",
            path,
            "--vocab-size",
            1000,
            "--special-token",
            EOT,
            "--profile",
            "rustbpe",
            "--out",
            out,
        ]
        status, _, err = run_main(capsys, *(argv + (["--pattern", pattern] if pattern else [])))
        assert status == 0, err
        # nanochat: rustbpe trains vocab_size - len(specials) over the documents, specials added after
        theirs = rustbpe_ranks(text.split(EOT), 999, GPT2_PATTERN if pattern else None)
        lines = (out / "tokenizer.tiktoken").read_text(encoding="ascii").splitlines()
        assert lines == ["%s %d" % (base64.b64encode(b).decode("ascii"), r) for b, r in theirs]
        manifest = json.loads((out / "refbpe.json").read_text(encoding="utf-8"))
        assert manifest["special_tokens"] == [{"content": EOT, "id": 999}]
        assert manifest["profile"]["peer"] == "rustbpe " + get_profile("rustbpe").peer[1]
        assert manifest["profile"]["pattern"] == (pattern or "llama3")


def test_cli_profile_errors_are_one_line(tmp_path, capsys):
    path, _ = _cli_corpus(tmp_path)
    for extra, message in (
        (["--profile", "rustbpe", "--sequences", "lines"], "reads its input"),
        (["--profile", "cs336", "--add-prefix-space"], "HF option"),
        (["--profile", "hf", "--initial-alphabet", "\u4e2d"], "byte-level character"),
        (["--profile", "hf", "--min-frequency", "-1"], "min_frequency"),
    ):
        status, _, err = run_main(capsys, "train", path, "--vocab-size", 300, "--out", tmp_path / "x", *extra)
        assert status == 2 and message in err and len(err.strip().splitlines()) == 1, err


def _hf_trained_tokenizer(docs, vocab_size, specials, prefix=True, files=None, min_frequency=0):
    _tokenizers()
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=prefix)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, show_progress=False, special_tokens=list(specials), min_frequency=min_frequency
    )
    if files:
        tok.train(files, trainer)
    else:
        tok.train_from_iterator(docs, trainer)
    return tok


# -- verify --profile, and verify naming the profile that reproduces a peer's model -----------


def _peer_models(tmp_path, text):
    """A tokenizer.json HF trains over the documents, and the ranks rustbpe returns."""
    import base64

    docs = text.split(EOT)
    hf = tmp_path / "hf.json"
    _hf_trained_tokenizer(docs, 800, [EOT]).save(str(hf))
    ranks = tmp_path / "rust.tiktoken"
    lines = ["%s %d\n" % (base64.b64encode(b).decode("ascii"), r) for b, r in rustbpe_ranks(docs, 799)]
    ranks.write_text("".join(lines), encoding="ascii")
    return {"hf": hf, "rustbpe": ranks}


@pytest.mark.slow
def test_verify_names_the_profile_that_reproduces_a_peer_model(tmp_path, capsys):
    _tokenizers(), _rustbpe()
    path, text = _cli_corpus(tmp_path, 120000)
    for name, model in _peer_models(tmp_path, text).items():
        argv = [
            "verify",
            path,
            "--vocab-size",
            800,
            "--special-token",
            EOT,
            "--against",
            model,
            "--no-hypotheses",
        ]
        status, out, err = run_main(capsys, *argv, "--json")
        report = json.loads(out)
        assert status == 1 and report["reproduced_by_profile"] == name, err
        status, out, _ = run_main(capsys, *argv, "--profile", name)
        assert status == 0 and out.startswith("identical to profile %s" % name), out
        other = "hf" if name == "rustbpe" else "rustbpe"
        status, out, _ = run_main(capsys, *argv, "--profile", other)
        assert (
            status == 1 and "different from profile %s" % other in out and "first divergence at merge" in out
        )


@pytest.mark.slow
def test_verify_profile_against_refbpe_profile_outputs(tmp_path, capsys):
    path, _ = _cli_corpus(tmp_path, 120000)
    for name, extra in (
        ("hf", ["--sequences", "lines", "--no-add-prefix-space"]),
        ("rustbpe", ["--pattern", "gpt2"]),
    ):
        out_dir = tmp_path / name
        common = [path, "--vocab-size", 700, "--special-token", EOT]
        status, _, err = run_main(capsys, "train", *common, "--profile", name, "--out", out_dir, *extra)
        assert status == 0, err
        verify = ["verify", "--no-hypotheses"] + common + ["--against", out_dir]
        status, out, _ = run_main(capsys, *verify, "--profile", name)
        assert status == 0 and "identical to profile %s" % name in out, out
        status, out, _ = run_main(capsys, *verify, "--json")
        assert status == 1 and json.loads(out)["reproduced_by_profile"] == name


# -- the same bytes on every interpreter, and from word-count files ---------------------------


def _profile_outputs(tmp_path, python=None):
    """sha256 of every file ``train`` writes under each profile, on ``python`` (None: this one)."""
    import hashlib

    from support import run_cli

    path = tmp_path / "tie.txt"
    if not path.exists():
        words = ["ab", "ba", " a", "\n", "\u00e9t\u00e9", "ab's", "x1", "  ", "\U0001f600"]
        text = EOT.join(
            " ".join(words[(i * 7 + j) % len(words)] for j in range(i % 13 + 3)) for i in range(300)
        )
        path.write_text(text + "\n", encoding="utf-8")
    digests = {}
    for name, extra in (("cs336", []), ("rustbpe", []), ("hf", []), ("hf", ["--sequences", "lines"])):
        out = tmp_path / ("%s-%s-%s" % (name, len(extra), "other" if python else "this"))
        argv = ["train", str(path), "--vocab-size", 400, "--special-token", EOT, "--profile", name]
        r = run_cli([str(a) for a in argv + ["--out", out, "--workers", 1, "--quiet"] + extra], python=python)
        assert r.returncode == 0, r.stderr
        for f in sorted(os.listdir(out)):
            digests[(name, len(extra), f)] = hashlib.sha256((out / f).read_bytes()).hexdigest()
    return digests


@pytest.mark.slow
def test_profile_outputs_are_byte_identical_on_cpython_and_pypy(tmp_path):
    from support import other_interpreter

    other = other_interpreter()
    if other is None:
        pytest.skip("no second interpreter (PyPy from CPython, or CPython from PyPy) can import this refbpe")
    assert _profile_outputs(tmp_path) == _profile_outputs(tmp_path, other)


@pytest.mark.slow
def test_profiles_from_word_count_files_equal_profiles_from_the_corpus(tmp_path, capsys):
    path, _ = _cli_corpus(tmp_path)
    counts = tmp_path / "words.counts.tsv"
    assert run_main(capsys, "count", path, "--special-token", EOT, "-o", counts)[0] == 0
    for name, extra in (("rustbpe", ["--pattern", "gpt2"]), ("hf", ["--no-add-prefix-space"])):
        outs = []
        for source in (["--counts", counts], [path]):
            out = tmp_path / ("%s-%d" % (name, len(outs)))
            argv = ["train"] + source + ["--vocab-size", 600, "--special-token", EOT, "--profile", name]
            status, _, err = run_main(capsys, *(argv + extra + ["--out", out]))
            assert status == 0, err
            outs.append({f: (out / f).read_bytes() for f in os.listdir(out) if f != "refbpe.json"})
        assert outs[0] == outs[1] and outs[0]
