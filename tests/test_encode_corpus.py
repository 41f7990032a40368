"""Corpus encoding: the ids equal Tokenizer.encode of each whole text, for every cut, chunk size
and worker count; in input order; documents; files written atomically."""

import gzip
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples, executor_for, mixed_text

from refbpe import train_bpe
from refbpe.corpus.count import InputError
from refbpe.corpus.encode import DocumentTally, encode_to_file, iter_encoded
from refbpe.corpus.idfile import read_ids
from refbpe.encode.tokenizer import Tokenizer
from refbpe.pretokenize.patterns import pattern_names

EOT = "<|endoftext|>"
SPECIALS = [EOT, "<|x|>", "<|x|><|x|>"]

SAMPLE = (
    "The cat's hat\nsat on 12 mats.\tDon't\r\nstop!  Привет, мир\n中文字符 éé\n"
    "<|x|><|x|> emoji \U0001f643\n" + EOT + "  x\n\n\ny\n"
) * 6


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    path = tmp_path_factory.mktemp("train") / "corpus.txt"
    path.write_text(SAMPLE, encoding="utf-8")
    return train_bpe(str(path), 400, SPECIALS, workers=1)


@pytest.fixture(scope="module")
def tokenizer(trained):
    return Tokenizer(trained[0], trained[1], SPECIALS)


@pytest.fixture(scope="module")
def tokenizers(trained):
    """The same vocab under every split pattern: the cut rules are per pattern."""
    return {name: Tokenizer(trained[0], trained[1], SPECIALS, pattern=name) for name in pattern_names()}


def ids_of(units):
    out = []
    for unit in units:
        out.extend(unit.ids)
    return out


def expected(tokenizer, texts, separator=None):
    out = []
    for k, text in enumerate(texts):
        if k and separator is not None:
            out.extend(tokenizer.encode(separator))
        out.extend(tokenizer.encode(text))
    return out


cut_friendly_text = mixed_text(
    max_atoms=30, extra=["a\nb", "x\ty", "\n", EOT, "<|x|>", "<|x|><|x|>", "<|x", "|>", "q\rz"]
)


@pytest.mark.slow
@settings(max_examples=examples(100))
@given(
    texts=st.lists(cut_friendly_text, min_size=1, max_size=3),
    chunk_size=st.integers(1, 40),
    read_size=st.sampled_from([None, 1, 3, 17]),
    workers=st.sampled_from([1, 2, 3]),
    gz=st.booleans(),
    separator=st.sampled_from([None, EOT]),
    pattern=st.sampled_from(pattern_names()),
)
def test_ids_equal_encoding_each_whole_text(
    tmp_path_factory, tokenizers, texts, chunk_size, read_size, workers, gz, separator, pattern
):
    tokenizer = tokenizers[pattern]
    d = tmp_path_factory.mktemp("enc")
    paths = []
    for k, text in enumerate(texts):
        data = text.encode("utf-8")
        path = d / ("in%d.txt%s" % (k, ".gz" if gz and k == 0 else ""))
        path.write_bytes(gzip.compress(data) if gz and k == 0 else data)
        paths.append(str(path))
    executor = executor_for(workers) if workers > 1 else None
    units = iter_encoded(
        tokenizer,
        paths,
        workers=workers,
        chunk_size=chunk_size,
        read_size=read_size,
        separator=separator,
        executor=executor,
    )
    assert ids_of(units) == expected(tokenizer, texts, separator)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("chunk_size", [50, 1000])
def test_own_pool_npy_is_identical_to_one_worker(tmp_path, tokenizer, workers, chunk_size):
    text = SAMPLE * 20
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    with gzip.open(str(tmp_path / "b.txt.gz"), "wt", encoding="utf-8") as f:
        f.write(text[::-1])
    sources = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt.gz")]
    one = encode_to_file(tokenizer, sources, str(tmp_path / "one.npy"), workers=1, separator=EOT)
    many = encode_to_file(
        tokenizer, sources, str(tmp_path / "many.npy"), workers=workers, chunk_size=chunk_size, separator=EOT
    )
    assert (tmp_path / "one.npy").read_bytes() == (tmp_path / "many.npy").read_bytes()
    assert list(read_ids(str(tmp_path / "many.npy"))) == expected(tokenizer, [text, text[::-1]], EOT)
    assert one["documents"] == many["documents"] == 2 * (text.count(EOT) + 1)
    assert one["dtype"] == "uint16" and many["bytes"] == len(text.encode("utf-8")) * 2


def test_documents_are_the_stretches_between_special_tokens(tmp_path, tokenizer):
    texts = [EOT + "ab" + EOT + EOT + "cd\nef" + "<|x|>", "gh", "", "ij" + EOT]
    paths = []
    for k, text in enumerate(texts):
        (tmp_path / str(k)).write_text(text, encoding="utf-8")
        paths.append(str(tmp_path / str(k)))
    for chunk_size in (1, 2, 3, 100):
        docs = []
        tally = DocumentTally(lambda b, t, docs=docs: docs.append((b, t)))
        for unit in iter_encoded(tokenizer, paths, workers=1, chunk_size=chunk_size, separator=EOT):
            tally.add(unit)
        want = [(2, len(tokenizer.encode("ab"))), (5, len(tokenizer.encode("cd\nef")))]
        want += [(2, len(tokenizer.encode("gh"))), (2, len(tokenizer.encode("ij")))]
        assert docs == want


def test_invalid_utf8_names_the_offset_and_writes_nothing(tmp_path, tokenizer):
    (tmp_path / "bad.txt").write_bytes(b"hello\nworld\n" * 50 + b"\xff\n" + b"more\n" * 50)
    for workers in (1, 2):
        with pytest.raises(InputError, match="bad.txt: invalid UTF-8 at byte offset 600"):
            encode_to_file(
                tokenizer,
                [str(tmp_path / "bad.txt")],
                str(tmp_path / "out.npy"),
                workers=workers,
                chunk_size=64,
            )
        assert sorted(os.listdir(str(tmp_path))) == ["bad.txt"]


def test_separator_must_be_a_special_token(tmp_path, tokenizer):
    (tmp_path / "a").write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match="not a special token"):
        list(iter_encoded(tokenizer, [str(tmp_path / "a")], separator="<|nope|>"))


def test_encode_utf8_equals_encode(tokenizer):
    segments = []
    assert tokenizer.encode_utf8(SAMPLE.encode("utf-8"), segments) == tokenizer.encode(SAMPLE)
    assert len(segments) == SAMPLE.count(EOT) + SAMPLE.count("<|x|><|x|>") + 1
    assert sum(b for b, _ in segments) == len(SAMPLE.encode("utf-8")) - 13 * SAMPLE.count(EOT) - 10 * 6


@pytest.mark.slow
@settings(max_examples=examples(20))
@given(
    texts=st.lists(cut_friendly_text, min_size=1, max_size=3),
    chunk_size=st.integers(1, 40),
    workers=st.sampled_from([2, 3]),
)
def test_own_pool_with_this_process_as_a_worker_keeps_input_order(
    tmp_path_factory, tokenizer, texts, chunk_size, workers
):
    d = tmp_path_factory.mktemp("own")
    paths = []
    for k, text in enumerate(texts):
        (d / str(k)).write_bytes((text * 8).encode("utf-8"))
        paths.append(str(d / str(k)))
    units = iter_encoded(tokenizer, paths, workers=workers, chunk_size=chunk_size, separator=EOT)
    assert ids_of(units) == expected(tokenizer, [t * 8 for t in texts], EOT)
