"""Formats out and in: each export is loaded by the library that reads it
(``tokenizers``, ``tiktoken``; skipped where not installed, e.g. on PyPy) and
must encode generated text to refbpe's ids; every format round-trips."""

import base64
import json
import os
import random
import subprocess
import sys
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import REPO_ROOT, examples, shared_root

from refbpe import Tokenizer
from refbpe.cli import main
from refbpe.formats import (
    FORMATS,
    FormatError,
    detect_format,
    merges_from_ranks,
    read_gpt2,
    read_model,
    tiktoken_special_tokens,
    write_model,
)
from refbpe.learn.train import build_vocab, train_from_counts
from refbpe.pretokenize.gpt2 import GPT2_PATTERN
from refbpe.verify.readings import count_variant

REPO = REPO_ROOT
CS336 = os.path.join(shared_root(), "data", "cs336")
EXAMPLES = examples(50)
SPECIALS = ["<|endoftext|>", "<|fim|>"]


def need_cs336(name):
    path = os.path.join(CS336, name)
    if not os.path.exists(path):
        pytest.skip("shared test data not found: %s (set REFBPE_SHARED to the shared/ directory)" % path)
    return path


# Characters for cross-library comparisons.  tokenizers (Oniguruma) and
# tiktoken (fancy-regex) carry Unicode tables older than the Unicode 17 table
# refbpe pins, so generated text keeps to characters assigned long ago: BMP
# blocks that were complete by Unicode 6, minus anything the running
# interpreter calls unassigned (Cn) or a surrogate (Cs), plus a few old emoji
# (Unicode 6-9).  Newer characters may classify differently (letter / number /
# space / other) in the libraries: that is a table difference, not a bug.
_RANGES = [
    (0x20, 0x7E),
    (0xA0, 0x17F),
    (0x370, 0x3FF),
    (0x400, 0x45F),
    (0x5D0, 0x5EA),
    (0x620, 0x64A),
    (0x660, 0x669),
    (0x905, 0x939),
    (0x966, 0x96F),
    (0xE01, 0xE30),
    (0x3041, 0x3096),
    (0x30A1, 0x30FA),
    (0x4E00, 0x4E80),
    (0xAC00, 0xAC40),
    (0x2010, 0x2027),
    (0xFF10, 0xFF19),
]
_SPACES = "\t\n\r\x0b\x0c \u00a0\u1680\u2000\u2003\u200a\u2028\u2029\u202f\u205f\u3000"
_EMOJI = "\U0001f600\U0001f389\U0001f44d\U0001f680\u2764\U0001f914"


def _alphabet():
    chars = set(_SPACES + _EMOJI)
    for lo, hi in _RANGES:
        chars.update(chr(c) for c in range(lo, hi + 1))
    return sorted(c for c in chars if unicodedata.category(c) not in ("Cn", "Cs"))


ALPHABET = _alphabet()


def _training_text(seed=1234, n_words=4000):
    """A deterministic multi-script text with repeated words (so merges form)."""
    rng = random.Random(seed)
    letters = [c for c in ALPHABET if c not in _SPACES]
    vocab = [
        "".join(rng.choice(letters[: rng.choice([60, 200, len(letters)])]) for _ in range(rng.randint(1, 7)))
        for _ in range(300)
    ]
    vocab += [
        "the",
        "of",
        "and",
        "Привет",
        "мир",
        "中文",
        "日本語",
        "ελληνικά",
        "don't",
        "we'll",
        "2024",
        "   ",
        "\n\n",
    ]
    parts = []
    for _ in range(n_words):
        parts.append(rng.choice(vocab[: rng.choice([20, 100, len(vocab)])]))
        parts.append(rng.choice([" ", " ", " ", "  ", "\n", ", ", ". ", "\t", "\u3000"]))
        if rng.random() < 0.01:
            parts.append(rng.choice(SPECIALS))
    return "".join(parts), vocab


TRAIN_TEXT, TRAIN_WORDS = _training_text()


@pytest.fixture(scope="module")
def model():
    counts = count_variant([TRAIN_TEXT], SPECIALS, False, None, False)
    vocab, merges = train_from_counts(counts, 900, SPECIALS)
    return vocab, merges, SPECIALS


def texts(specials=SPECIALS):
    piece = st.one_of(
        st.text(alphabet=ALPHABET, max_size=12),
        st.sampled_from(TRAIN_WORDS),
        st.sampled_from(list(_SPACES) + [" ", "  ", "\n\n", " \n"]),
        st.sampled_from(specials),
    )
    return st.lists(piece, max_size=25).map("".join)


def _tiktoken_encoding(path, vocab, specials):
    tiktoken = pytest.importorskip("tiktoken")
    tiktoken_load = pytest.importorskip("tiktoken.load")

    ranks = tiktoken_load.load_tiktoken_bpe(path)
    return tiktoken.Encoding(
        name="refbpe-test",
        pat_str=GPT2_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=tiktoken_special_tokens(vocab, specials),
    )


@pytest.fixture(autouse=True)
def _no_tiktoken_cache(monkeypatch):
    # tiktoken caches files by path hash; an empty cache dir disables it.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")


# -- the real libraries ---------------------------------------------------------


@pytest.fixture(scope="module")
def hf_tokenizer(model, tmp_path_factory):
    tokenizers = pytest.importorskip("tokenizers")
    path = str(tmp_path_factory.mktemp("hf") / "tokenizer.json")
    write_model(path, "hf", *model)
    return tokenizers.Tokenizer.from_file(path)


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts())
def test_hf_export_encodes_like_refbpe(model, hf_tokenizer, text):
    tok = Tokenizer(*model)
    ours = tok.encode(text)
    assert hf_tokenizer.encode(text, add_special_tokens=False).ids == ours
    assert hf_tokenizer.decode(ours, skip_special_tokens=False) == text


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts())
def test_tiktoken_export_encodes_like_refbpe(model, tmp_path_factory, text):
    path = str(tmp_path_factory.getbasetemp() / "ranks.tiktoken")
    if not os.path.exists(path):
        write_model(path, "tiktoken", *model)
    enc = _tiktoken_encoding(path, model[0], model[2])
    tok = Tokenizer(*model)
    ours = tok.encode(text)
    assert enc.encode(text, allowed_special="all") == ours
    assert enc.decode_bytes(ours) == text.encode("utf-8")


def test_hf_overlapping_special_tokens_longest_first(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    specials = ["<|a|>", "<|a|><|a|>", "<s>"]
    counts = count_variant([TRAIN_TEXT[:20000]], specials, False, None, False)
    vocab, merges = train_from_counts(counts, 400, specials)
    write_model(str(tmp_path / "tokenizer.json"), "hf", vocab, merges, specials)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    tok = Tokenizer(vocab, merges, specials)
    for text in ["x<|a|><|a|><|a|>y", "<s><|a|>  <|a|><|a|>\n", "the <|a|>of"]:
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text)


def test_exports_on_cs336_fixtures(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from refbpe import train_bpe

    corpus = need_cs336("corpus.en")
    specials = ["<|endoftext|>"]
    vocab, merges = train_bpe(corpus, 500, specials, workers=1)
    tok = Tokenizer(vocab, merges, specials)
    write_model(str(tmp_path / "tokenizer.json"), "hf", vocab, merges, specials)
    write_model(str(tmp_path / "r.tiktoken"), "tiktoken", vocab, merges, specials)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    enc = _tiktoken_encoding(str(tmp_path / "r.tiktoken"), vocab, specials)
    names = [
        "corpus.en",
        "address.txt",
        "german.txt",
        "tinystories_sample.txt",
        "special_token_double_newlines_non_whitespace.txt",
        "special_token_trailing_newlines.txt",
    ]
    for name in names:
        with open(need_cs336(name), encoding="utf-8") as f:
            text = f.read()
        ours = tok.encode(text)
        assert hf.encode(text, add_special_tokens=False).ids == ours, name
        assert enc.encode(text, allowed_special="all") == ours, name


@pytest.mark.slow
def test_gpt2_files_to_tiktoken_and_hf_keep_gpt2_ids(tmp_path):
    """GPT-2 itself: ranks rebuilt from the tiktoken export give back its merges,
    and the HF export encodes the CS336 inputs to the expected GPT-2 ids."""
    vocab_path, merges_path = need_cs336("gpt2_vocab.json"), need_cs336("gpt2_merges.txt")
    vocab, merges = read_gpt2(vocab_path, merges_path)
    specials = ["<|endoftext|>"]
    write_model(str(tmp_path / "gpt2.tiktoken"), "tiktoken", vocab, merges, specials)
    m = read_model(str(tmp_path / "gpt2.tiktoken"), special_tokens=specials)
    assert m.merges == merges
    assert m.vocab == vocab
    tokenizers = pytest.importorskip("tokenizers")
    write_model(str(tmp_path / "tokenizer.json"), "hf", vocab, merges, specials)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    tok = Tokenizer(vocab, merges, specials)
    for name in ["address.txt", "german.txt", "tinystories_sample.txt"]:
        with open(need_cs336(name), encoding="utf-8") as f:
            text = f.read()
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text), name


# -- round trips --------------------------------------------------------------------


def _write(tmp_path, fmt, vocab, merges, specials, name):
    dest = str(tmp_path / (name if fmt != "gpt2" else name + "_dir"))
    return write_model(dest, fmt, vocab, merges, specials)


@pytest.mark.parametrize("src", FORMATS)
@pytest.mark.parametrize("dst", FORMATS)
def test_round_trip_between_formats(model, tmp_path, src, dst):
    vocab, merges, specials = model
    p1 = _write(tmp_path, src, vocab, merges, specials, "a." + src)
    m1 = read_model(p1, "auto", specials if src == "tiktoken" else ())
    assert m1.format == src
    p2 = _write(tmp_path, dst, m1.vocab, m1.merges, m1.special_tokens, "b." + dst)
    m2 = read_model(p2, "auto", specials if dst == "tiktoken" else ())
    assert m2.format == dst
    assert m2.merges == merges
    assert m2.vocab == vocab
    assert m2.special_tokens == specials


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(
    data=st.lists(st.binary(min_size=1, max_size=6), min_size=1, max_size=30),
    extra=st.integers(0, 40),
    fmt=st.sampled_from(FORMATS),
)
def test_round_trip_arbitrary_bytes(tmp_path_factory, data, extra, fmt):
    """Tokens of any bytes (invalid UTF-8, controls, spaces) survive every format."""
    counts = {}
    for w in data:
        counts[w] = counts.get(w, 0) + 1
    specials = ["<|endoftext|>"]
    vocab, merges = train_from_counts(counts, 257 + extra, specials)
    d = tmp_path_factory.mktemp("rt")
    p = write_model(str(d / ("m." + fmt)), fmt, vocab, merges, specials)
    m = read_model(p, fmt, specials if fmt == "tiktoken" else ())
    assert (m.vocab, m.merges, m.special_tokens) == (vocab, merges, specials)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
def test_train_format_writes_a_readable_model(tmp_path, fmt):
    corpus = tmp_path / "c.txt"
    corpus.write_text(TRAIN_TEXT[:30000], encoding="utf-8")
    out = tmp_path / ("out_" + fmt)
    rc = main(
        [
            "train",
            str(corpus),
            "--vocab-size",
            "400",
            "--special-token",
            "<|endoftext|>",
            "--out",
            str(out),
            "--format",
            fmt,
            "--quiet",
            "--workers",
            "1",
        ]
    )
    assert rc == 0
    m = read_model(str(out))  # the directory: format detected, special tokens from the manifest
    assert m.format == fmt
    counts = count_variant([TRAIN_TEXT[:30000]], ["<|endoftext|>"], False, None, False)
    vocab, merges = train_from_counts(counts, 400, ["<|endoftext|>"])
    assert (m.vocab, m.merges, m.special_tokens) == (vocab, merges, ["<|endoftext|>"])


def test_gpt2_merges_with_version_header_and_reference_pair(tmp_path):
    vocab = build_vocab([(b"a", b"b")], [])
    d = tmp_path / "m"
    write_model(str(d), "gpt2", vocab, [(b"a", b"b")], [])
    (d / "merges.txt").write_text(
        "#version: 0.2\n" + (d / "merges.txt").read_text(encoding="utf-8"), encoding="utf-8"
    )
    assert read_model(str(d)).merges == [(b"a", b"b")]
    # PREFIXmerges.txt + PREFIXvocab.json, as the CS336 reference files.
    merges_path = need_cs336("train-bpe-reference-merges.txt")
    assert detect_format(merges_path) == "gpt2"
    m = read_model(merges_path)
    assert len(m.merges) == 243 and len(m.vocab) == 500


def test_hex_json_reads_the_cs336_snapshot():
    m = read_model(need_cs336("train-bpe-special-tokens-snapshot.json"))
    assert m.format == "json" and len(m.merges) == 743 and m.special_tokens == ["<|endoftext|>"]
    assert len(set(m.vocab.values())) == 1000


def test_tiktoken_file_is_base64_rank_lines(model, tmp_path):
    vocab, merges, specials = model
    p = write_model(str(tmp_path / "x.tiktoken"), "tiktoken", vocab, merges, specials)
    lines = open(p, "rb").read().splitlines()
    ranks = {base64.b64decode(t): int(r) for t, r in (line.split() for line in lines)}
    assert len(ranks) == len(vocab) - len(specials)
    assert merges_from_ranks(ranks) == merges


# -- detection and the CLI ---------------------------------------------------------------


def test_detect_format_and_errors(model, tmp_path):
    vocab, merges, specials = model
    for fmt in FORMATS:
        p = _write(tmp_path, fmt, vocab, merges, specials, "d." + fmt)
        assert detect_format(p) == fmt
    (tmp_path / "junk.txt").write_text("hello world\n")
    with pytest.raises(FormatError):
        detect_format(str(tmp_path / "junk.txt"))
    with pytest.raises(FormatError):
        read_model(str(tmp_path / "missing"))
    (tmp_path / "bad.json").write_text('{"merges": [["zz", "61"]]}')
    with pytest.raises(FormatError):
        read_model(str(tmp_path / "bad.json"))
    (tmp_path / "bad.tiktoken").write_text("YWI= 0\n")  # "ab" at rank 0: not a merge of lower ranks
    with pytest.raises(FormatError):
        read_model(str(tmp_path / "bad.tiktoken"), "tiktoken")


def test_convert_cli(model, tmp_path, capsys):
    vocab, merges, specials = model
    src = write_model(str(tmp_path / "src"), "gpt2", vocab, merges, specials)
    for fmt in FORMATS:
        dest = str(tmp_path / ("conv." + fmt))
        assert main(["convert", src, "--to", fmt, "-o", dest, "--quiet"]) == 0
        m = read_model(dest, "auto", specials if fmt == "tiktoken" else ())
        assert (m.vocab, m.merges) == (vocab, merges)
    assert main(["convert", str(tmp_path / "nope"), "--to", "hf", "-o", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("refbpe: error: ") and "Traceback" not in err
    assert not (tmp_path / "x.json").exists()


def test_cli_runs_as_a_module(model, tmp_path):
    vocab, merges, specials = model
    src = write_model(str(tmp_path / "src"), "gpt2", vocab, merges, specials)
    r = subprocess.run(
        [sys.executable, "-m", "refbpe", "convert", src, "--to", "json", "-o", str(tmp_path / "m.json")],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    data = json.load(open(str(tmp_path / "m.json")))
    assert data["format"] == "refbpe-hex-v1"
    assert data["merges"][0] == [merges[0][0].hex(), merges[0][1].hex()]


def test_tiktoken_refuses_ids_out_of_merge_order(tmp_path):
    merges = [(b"a", b"b"), (b"ab", b"c")]
    vocab = build_vocab(merges, [])
    vocab[256], vocab[257] = vocab[257], vocab[256]  # "abc" before "ab"
    with pytest.raises(FormatError):
        write_model(str(tmp_path / "x.tiktoken"), "tiktoken", vocab, merges, [])
    assert not (tmp_path / "x.tiktoken").exists()
