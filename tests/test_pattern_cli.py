"""``--pattern`` on train, count, encode and verify; the pattern in refbpe.json and in exports;
tiktoken encodings wherever a model is read."""

import json
import os

import pytest
from support import IS_PYPY, run_main, shared_root

from refbpe.corpus.count import count_words
from refbpe.corpus.countfile import read_counts
from refbpe.encode.tokenizer import Tokenizer
from refbpe.learn.train import train_bpe
from refbpe.pretokenize.alternatives import alternatives
from refbpe.pretokenize.patterns import get_pattern

TEXT = (
    "Hello world! don't we'LL HELLO\tworld\n\n  12345 x\n   \u4e2d\u6587 e\u0301t\u00e9 /x/\n"
    "<|endoftext|>DON'T HelloWorld's \u00e9t\u00e9 1234567 !\n/ path/to\n\n"
) * 40
SAMPLE = "Hello  world\n\n DON'T we'll 123456 \u4e2d\u6587\n/x <|endoftext|> tail\n   "
SPECIAL = "<|endoftext|>"


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def _train(capsys, corpus, out, *extra):
    status, _, err = run_main(
        capsys, "train", corpus, "--vocab-size", 320, "--special-token", SPECIAL, "-o", out, "--quiet", *extra
    )
    assert status == 0, err


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "llama3"])
def test_train_records_the_pattern_and_encode_uses_it(capsys, tmp_path, corpus, name):
    out = tmp_path / "m"
    _train(capsys, corpus, out, "--pattern", name, "--workers", 1)
    manifest = json.loads((out / "refbpe.json").read_text())
    assert manifest["pattern"] == name
    vocab, merges = train_bpe(str(corpus), 320, [SPECIAL], workers=1, pattern=name)
    tok = Tokenizer.from_dir(str(out))
    assert tok.pattern == name and tok.merges == merges and tok.vocab == vocab
    (tmp_path / "s.txt").write_text(SAMPLE, encoding="utf-8")
    status, out_ids, err = run_main(capsys, "encode", out, tmp_path / "s.txt", "--json")
    assert status == 0, err
    assert json.loads(out_ids) == Tokenizer(vocab, merges, [SPECIAL], pattern=name).encode(SAMPLE)
    # --pattern on encode replaces the model's own.
    status, gpt2_ids, _ = run_main(capsys, "encode", out, tmp_path / "s.txt", "--json", "--pattern", "gpt2")
    assert json.loads(gpt2_ids) == Tokenizer(vocab, merges, [SPECIAL]).encode(SAMPLE)


def test_default_manifest_has_no_pattern_key(capsys, tmp_path, corpus):
    _train(capsys, corpus, tmp_path / "a")
    _train(capsys, corpus, tmp_path / "b", "--pattern", "gpt2")
    for d in ("a", "b"):
        assert "pattern" not in json.loads((tmp_path / d / "refbpe.json").read_text())
    assert (tmp_path / "a" / "refbpe.json").read_bytes() == (tmp_path / "b" / "refbpe.json").read_bytes()
    assert (tmp_path / "a" / "merges.txt").read_bytes() == (tmp_path / "b" / "merges.txt").read_bytes()


def test_count_with_a_pattern(capsys, tmp_path, corpus):
    out = tmp_path / "c.counts.tsv"
    status, _, err = run_main(
        capsys, "count", corpus, "-o", out, "--special-token", SPECIAL, "--pattern", "o200k_base", "--quiet"
    )
    assert status == 0, err
    assert read_counts(str(out)) == count_words(str(corpus), [SPECIAL], workers=1, pattern="o200k_base")


def test_an_unknown_pattern_is_one_line(capsys, tmp_path, corpus):
    status, _, err = run_main(
        capsys, "train", corpus, "--vocab-size", 300, "-o", tmp_path / "m", "--pattern", "gpt5"
    )
    assert status == 2 and err.count("\n") == 1 and "gpt5" in err and "cl100k_base" in err


def test_hf_export_splits_with_the_pattern(capsys, tmp_path, corpus):
    out = tmp_path / "hf"
    _train(capsys, corpus, out, "--pattern", "cl100k_base", "--format", "hf")
    data = json.loads((out / "tokenizer.json").read_text())
    split, byte_level = data["pre_tokenizer"]["pretokenizers"]
    assert split["pattern"]["Regex"] == get_pattern("cl100k_base").regex and split["behavior"] == "Isolated"
    assert byte_level["type"] == "ByteLevel" and byte_level["use_regex"] is False
    if IS_PYPY:
        return
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
    vocab, merges = train_bpe(str(corpus), 320, [SPECIAL], workers=1, pattern="cl100k_base")
    tok = Tokenizer(vocab, merges, [SPECIAL], pattern="cl100k_base")
    for text in (SAMPLE, TEXT[:2000], "x\n  ", "a\tb  c\r\n\r\nd !!\n\n"):
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text), repr(text)


def test_tiktoken_export_manifest_builds_a_tiktoken_encoding(capsys, tmp_path, corpus):
    out = tmp_path / "tk"
    _train(capsys, corpus, out, "--pattern", "o200k_base", "--format", "tiktoken")
    manifest = json.loads((out / "refbpe.json").read_text())
    assert manifest["pattern"] == "o200k_base" and manifest["pat_str"] == get_pattern("o200k_base").regex
    tok = Tokenizer.from_tiktoken(str(out / "tokenizer.tiktoken"))  # the manifest beside it is read
    assert tok.pattern == "o200k_base" and tok.special_tokens == [SPECIAL]
    (tmp_path / "s.txt").write_text(SAMPLE, encoding="utf-8")
    status, ids, err = run_main(capsys, "encode", out / "tokenizer.tiktoken", tmp_path / "s.txt", "--json")
    assert status == 0, err
    assert json.loads(ids) == tok.encode(SAMPLE)
    if IS_PYPY:
        return
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    # The snippet of docs/patterns.md.
    enc = tiktoken.Encoding(
        "mine",
        pat_str=manifest["pat_str"],
        mergeable_ranks=load_tiktoken_bpe(str(out / "tokenizer.tiktoken")),
        special_tokens={t["content"]: t["id"] for t in manifest["special_tokens"]},
    )
    assert enc.encode(SAMPLE, allowed_special="all") == tok.encode(SAMPLE)


def _ranks_or_skip(name):
    path = os.path.join(shared_root(), "data", "tiktoken", name + ".tiktoken")
    if not os.path.isfile(path):
        pytest.skip("shared data not found: %s" % path)


@pytest.mark.slow
def test_encode_and_verify_accept_a_tiktoken_name(capsys, tmp_path):
    _ranks_or_skip("cl100k_base")
    text = tmp_path / "s.txt"
    text.write_text(SAMPLE, encoding="utf-8")
    status, ids, err = run_main(capsys, "encode", "cl100k_base", text, "--json")
    assert status == 0, err
    ids = json.loads(ids)
    assert ids == Tokenizer.from_tiktoken("cl100k_base").encode(SAMPLE)
    (tmp_path / "ids.json").write_text(json.dumps(ids))
    status, out, err = run_main(
        capsys, "verify", "--encode", text, "--ids", tmp_path / "ids.json", "--against", "cl100k_base"
    )
    assert status == 0 and out.startswith("identical"), out + err
    bad = list(ids)
    bad[3] = bad[3] + 1
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    status, out, err = run_main(
        capsys,
        "verify",
        "--encode",
        text,
        "--ids",
        tmp_path / "bad.json",
        "--against",
        "cl100k_base",
        "--json",
    )
    report = json.loads(out)
    assert status == 1 and report["first_divergence"] == 3 and report["pattern"] == "cl100k_base"
    alt = report["divergence"]["pretoken"]["alternative"]
    assert alt["regex"] == alternatives("cl100k_base")[alt["index"]]
    status, out, _ = run_main(
        capsys, "verify", "--encode", text, "--ids", tmp_path / "bad.json", "--against", "cl100k_base"
    )
    assert "cl100k_base alternative %d, %s" % (alt["index"] + 1, alt["regex"]) in out


def test_convert_carries_the_pattern(capsys, tmp_path, corpus):
    src = tmp_path / "m"
    _train(capsys, corpus, src, "--pattern", "o200k_base")
    status, _, err = run_main(capsys, "convert", src, "--to", "hf", "-o", tmp_path / "t.json", "--quiet")
    assert status == 0, err
    pre = json.loads((tmp_path / "t.json").read_text())["pre_tokenizer"]
    assert pre["pretokenizers"][0]["pattern"]["Regex"] == get_pattern("o200k_base").regex
    status, _, err = run_main(capsys, "convert", src, "--to", "gpt2", "-o", tmp_path / "g", "--quiet")
    assert status == 0, err
    assert Tokenizer.from_dir(str(tmp_path / "g")).pattern == "o200k_base"
    status, _, err = run_main(
        capsys, "convert", src, "--to", "hf", "-o", tmp_path / "p.json", "--pattern", "gpt2", "--quiet"
    )
    assert status == 0, err
    assert json.loads((tmp_path / "p.json").read_text())["pre_tokenizer"]["type"] == "ByteLevel"
