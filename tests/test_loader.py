"""``refbpe.read_model`` and ``Tokenizer.load``: one example of each kind of source (an
encoding name, a ranks file, a GPT-2 directory, a tokenizer.json, hex JSON), the special
tokens keeping their ids, and ``refbpe convert`` of an encoding name.

Named encodings come from the shared data (``support`` points ``REFBPE_TIKTOKEN_DIR`` and
``TIKTOKEN_CACHE_DIR`` there); the tests that need them skip when it is absent.
"""

import json
import os

import pytest
from support import assert_one_line_error, run_main, shared_data_path

import refbpe
from refbpe import Tokenizer, read_model, train_from_texts, write_model

CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
TEXT = "Hello world, it's 2024!\n  lower 世界<|endoftext|>tail"


def _cl100k_ranks():
    return shared_data_path("tiktoken", "cl100k_base.tiktoken")


@pytest.fixture(scope="module")
def cl100k():
    _cl100k_ranks()
    return Tokenizer.load("cl100k_base")


@pytest.fixture(scope="module")
def trained():
    vocab, merges = train_from_texts(["low low lower lowest newer newest " * 5], 290, ["<|endoftext|>"])
    return vocab, merges


def test_an_encoding_name_keeps_its_special_ids():
    _cl100k_ranks()
    m = read_model("cl100k_base", merges=False)
    assert (m.format, m.encoding, m.by_rank) == ("tiktoken", "cl100k_base", True)
    assert m.special_ids == CL100K_SPECIALS
    assert {i: t for i, t in m.vocab.items() if i >= 100256} == {
        i: t.encode("utf-8") for t, i in CL100K_SPECIALS.items()
    }
    assert m.special_tokens == sorted(CL100K_SPECIALS, key=CL100K_SPECIALS.get)
    assert m.pattern.startswith("cl100k_base@") and m.merges is None


def test_tokenizer_load_of_a_name_gives_tiktokens_ids(cl100k):
    tiktoken = pytest.importorskip("tiktoken")
    tok = cl100k
    expected = tiktoken.get_encoding("cl100k_base").encode(TEXT, allowed_special="all")
    assert tok.encode(TEXT) == expected and expected[-2] == 100257
    assert tok.decode(expected) == TEXT


def test_a_ranks_file_named_like_an_encoding_is_that_encoding(cl100k):
    path = _cl100k_ranks()
    by_file, by_name = Tokenizer.load(path), cl100k
    assert by_file.encode(TEXT) == by_name.encode(TEXT)
    assert by_file.pattern == by_name.pattern == "cl100k_base"
    assert read_model(path, merges=False).special_ids == CL100K_SPECIALS


def test_gpt2_by_name_and_its_files():
    vocab_path = shared_data_path("cs336", "gpt2_vocab.json")
    merges_path = shared_data_path("cs336", "gpt2_merges.txt")
    named = Tokenizer.load("gpt2")
    files = Tokenizer.from_files(vocab_path, merges_path, ["<|endoftext|>"])
    assert named.encode(TEXT) == files.encode(TEXT)
    assert named.encode("<|endoftext|>") == [50256]


@pytest.mark.parametrize("fmt", ["gpt2", "hf", "json"])
def test_a_directory_or_model_file_of_each_format(tmp_path, trained, fmt):
    vocab, merges = trained
    dest = tmp_path / ("m" if fmt == "gpt2" else "m.%s" % fmt)
    write_model(str(dest), fmt, vocab, merges, ["<|endoftext|>"], pattern="cl100k_base")
    m = read_model(str(dest))
    assert (m.format, m.by_rank, m.encoding) == (fmt, False, None)
    assert m.merges == merges and m.vocab == vocab and m.special_tokens == ["<|endoftext|>"]
    tok = Tokenizer.load(str(dest))
    recorded = "gpt2" if fmt == "json" else "cl100k_base"  # the manifest (gpt2), the pre-tokenizer (hf)
    assert tok.pattern == recorded
    reference = Tokenizer(vocab, merges, ["<|endoftext|>"], pattern=recorded)
    assert tok.encode("lowest newer<|endoftext|>low") == reference.encode("lowest newer<|endoftext|>low")


def test_a_directory_records_its_pattern_and_load_overrides_it(tmp_path, trained):
    vocab, merges = trained
    write_model(str(tmp_path / "m"), "gpt2", vocab, merges, ["<|endoftext|>"], pattern="o200k_base")
    assert Tokenizer.load(str(tmp_path / "m")).pattern == "o200k_base"
    assert Tokenizer.from_dir(str(tmp_path / "m")).pattern == "o200k_base"
    assert Tokenizer.load(str(tmp_path / "m"), pattern="gpt2").pattern == "gpt2"


def test_special_tokens_are_added_at_the_next_free_id(tmp_path, trained):
    vocab, merges = trained
    write_model(str(tmp_path / "m"), "gpt2", vocab, merges, ["<|endoftext|>"])
    tok = Tokenizer.load(str(tmp_path / "m"), special_tokens=["<|pad|>"])
    assert tok.encode("<|pad|><|endoftext|>") == [len(vocab), len(vocab) - 1]


def test_special_ids_given_replace_an_encodings():
    path = _cl100k_ranks()
    tok = Tokenizer.load(path, special_tokens={"<|x|>": 100300})
    assert tok.special_tokens == ["<|x|>"] and tok.encode("a<|x|>") == [64, 100300]
    assert Tokenizer.from_tiktoken(path, {"<|x|>": 100300}).encode("a<|x|>") == [64, 100300]


def test_an_unknown_source_is_a_format_error_naming_it(tmp_path):
    with pytest.raises(refbpe.formats.FormatError, match="cl101k_base: no such file or directory"):
        read_model("cl101k_base")
    with pytest.raises(ValueError, match="special tokens with ids"):
        read_model(str(tmp_path), special_tokens={"<|x|>": 5})


def test_convert_an_encoding_name_keeps_its_special_ids(tmp_path, capsys, cl100k):
    status, _, err = run_main(capsys, "convert", "cl100k_base", "--to", "gpt2", "-o", tmp_path / "out")
    assert status == 0, err
    manifest = json.loads((tmp_path / "out" / "refbpe.json").read_text(encoding="utf-8"))
    assert {s["content"]: s["id"] for s in manifest["special_tokens"]} == CL100K_SPECIALS
    assert manifest["pattern"] == "cl100k_base"
    tok = Tokenizer.load(str(tmp_path / "out"))
    assert tok.encode("hi there<|endoftext|>") == cl100k.encode("hi there<|endoftext|>")
    assert tok.encode("<|endoftext|>") == [100257]


def test_convert_a_ranks_file_keeps_its_special_ids(tmp_path, capsys):
    path = _cl100k_ranks()
    status, _, err = run_main(capsys, "convert", path, "--to", "json", "-o", tmp_path / "cl.json")
    assert status == 0, err
    m = read_model(str(tmp_path / "cl.json"))
    assert {
        t: m.vocab and max(i for i, b in m.vocab.items() if b == t.encode()) for t in m.special_tokens
    } == (CL100K_SPECIALS)


def test_every_model_command_takes_an_encoding_name(tmp_path, capsys):
    _cl100k_ranks()
    status, out, err = run_main(capsys, "show", "cl100k_base", "hello<|endoftext|>", "--ids")
    assert status == 0, err
    assert "100257" in out
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world<|endoftext|>again\n", encoding="utf-8")
    status, out, err = run_main(capsys, "encode", "cl100k_base", corpus, "-o", "-")
    assert status == 0, err
    assert "100257" in out.split()


def test_an_encoding_name_with_special_tokens_is_one_line_error(capsys):
    _cl100k_ranks()
    status, _, err = run_main(capsys, "show", "cl100k_base", "hi", "--special-token", "<|x|>")
    assert_one_line_error(status, err, "refbpe: error: cl100k_base: .*special tokens are its own")


def test_tokenizer_modules_stay_small():
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "refbpe", "encode")
    for name in ("tokenizer.py", "ranks.py", "piece_ids.py", "streaming.py"):
        with open(os.path.join(here, name), encoding="utf-8") as f:
            assert len(f.read().splitlines()) <= 700, name
