"""refbpe encode / decode / stats / show at the command line: outputs, any model format, bad input."""

import gzip
import json
import os
import re

import pytest
from support import assert_one_line_error, cs336_path, run_main, write_file

from refbpe import train_bpe
from refbpe.corpus.idfile import npy_header, read_bin, read_npy
from refbpe.encode.tokenizer import Tokenizer
from refbpe.formats import encode_token, write_model_dir

EOT = "<|endoftext|>"
TEXT = (
    "The cat sat on the mat.\nDon't stop: 12 cats, 3 mats!\n" * 40 + EOT + "Привет, мир\n中文 🙃\n" * 20
) * 3

try:
    import numpy
except ImportError:
    numpy = None


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """(model directory, Tokenizer): refbpe-trained, vocab 400, with <|endoftext|>."""
    d = tmp_path_factory.mktemp("model")
    corpus = write_file(d / "corpus.txt", TEXT)
    vocab, merges = train_bpe(corpus, 400, [EOT], workers=1)
    write_model_dir(str(d / "m"), vocab, merges, [EOT])
    return str(d / "m"), Tokenizer(vocab, merges, [EOT])


@pytest.fixture
def corpus(tmp_path):
    return write_file(tmp_path / "corpus.txt", TEXT)


def test_npy_bin_text_json_outputs(tmp_path, capsys, model, corpus):
    path, tok = model
    want = tok.encode(TEXT)
    status, out, err = run_main(capsys, "encode", path, corpus, "-o", tmp_path / "ids.npy")
    assert status == 0 and out == ""
    assert re.match(
        r"encode: 0\.0 MB, 4 documents, %d tokens .* wrote .*ids\.npy \(uint16\)" % len(want), err
    )
    assert list(read_npy(str(tmp_path / "ids.npy"))) == want
    status, _, err = run_main(capsys, "encode", path, corpus, "-o", tmp_path / "ids.bin", "--dtype", "int32")
    assert status == 0 and "(int32)" in err
    assert list(read_bin(str(tmp_path / "ids.bin"), "int32")) == want
    status, out, _ = run_main(capsys, "encode", path, corpus, "--quiet")
    assert status == 0 and out == "".join("%d\n" % i for i in want)
    status, out, err = run_main(capsys, "encode", path, corpus, "-o", "-", "--json", "--quiet")
    assert status == 0 and json.loads(out) == want and err == ""
    status, _, _ = run_main(capsys, "encode", path, corpus, "-o", tmp_path / "ids.txt", "--quiet")
    assert (tmp_path / "ids.txt").read_text() == "".join("%d\n" % i for i in want)


@pytest.mark.skipif(numpy is None, reason="numpy is not importable on this interpreter")
def test_npy_loads_in_numpy(tmp_path, capsys, model, corpus):
    path, tok = model
    run_main(capsys, "encode", path, corpus, "-o", tmp_path / "ids.npy")
    arr = numpy.load(str(tmp_path / "ids.npy"))
    assert arr.dtype == numpy.uint16 and arr.tolist() == tok.encode(TEXT)


@pytest.mark.parametrize("workers,chunk_size", [(1, "1K"), (2, "1K"), (2, "7K"), (3, "100")])
def test_output_identical_for_every_worker_count_and_chunk_size(
    tmp_path, capsys, model, corpus, workers, chunk_size
):
    path, _ = model
    run_main(capsys, "encode", path, corpus, "-o", tmp_path / "one.npy", "--workers", "1")
    gz = str(tmp_path / "corpus2.txt.gz")
    with gzip.open(gz, "wb") as f:
        f.write(TEXT.encode("utf-8"))
    args = ["--workers", workers, "--chunk-size", chunk_size, "--quiet"]
    status, _, err = run_main(capsys, "encode", path, corpus, "-o", tmp_path / "many.npy", *args)
    assert status == 0, err
    assert (tmp_path / "one.npy").read_bytes() == (tmp_path / "many.npy").read_bytes()
    run_main(
        capsys,
        "encode",
        path,
        corpus,
        corpus,
        "-o",
        tmp_path / "two1.bin",
        "--separator",
        EOT,
        "--workers",
        "1",
    )
    run_main(capsys, "encode", path, corpus, gz, "-o", tmp_path / "two.bin", "--separator", EOT, *args)
    assert (tmp_path / "two1.bin").read_bytes() == (tmp_path / "two.bin").read_bytes()
    one = (tmp_path / "one.npy").read_bytes()[128:]
    eot = model[1].encode(EOT)[0]
    assert (tmp_path / "two.bin").read_bytes() == one + eot.to_bytes(2, "little") + one


def test_stdin_and_report(tmp_path, capsys, model, monkeypatch):
    import io
    import sys

    path, tok = model
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TEXT.encode("utf-8"))))
    status, _, err = run_main(
        capsys, "encode", path, "-", "-o", tmp_path / "ids.npy", "--report", tmp_path / "r.json"
    )
    assert status == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["tokens"] == len(tok.encode(TEXT)) and report["bytes"] == len(TEXT.encode("utf-8"))
    assert report["documents"] == 4 and report["dtype"] == "uint16" and "peak_memory_mb" in report


def test_every_model_format_gives_the_same_ids(tmp_path, capsys, model, corpus):
    path, tok = model
    want = tok.encode(TEXT)
    for fmt in ("hf", "tiktoken", "json"):
        out = tmp_path / fmt
        out.mkdir()
        status, _, err = run_main(capsys, "convert", path, "--to", fmt, "-o", out / ("model." + fmt))
        assert status == 0, err
        for f in sorted(os.listdir(str(out))):
            model_path = out / f
            if f == "refbpe.json":
                continue
            # a bare ranks file names no special tokens: declare it
            declare = ["--special-token", EOT] if fmt == "tiktoken" else []
            status, ids, err = run_main(capsys, "encode", model_path, corpus, "--json", "--quiet", *declare)
            assert status == 0, (fmt, err)
            assert json.loads(ids) == want, fmt


def test_gpt2_files_with_a_declared_special_token(tmp_path, capsys):
    vocab = cs336_path("gpt2_vocab.json")
    text = write_file(tmp_path / "t.txt", "Hello world" + EOT + " again\n")
    status, out, _ = run_main(capsys, "encode", vocab, text, "--special-token", EOT, "--json", "--quiet")
    assert status == 0 and json.loads(out) == [15496, 995, 50256, 757, 198]
    status, out, _ = run_main(capsys, "encode", vocab, text, "--json", "--quiet")
    assert status == 0 and 50256 not in json.loads(out)  # without it, the text <|endoftext|> is text


def test_decode_npy_bin_and_text(tmp_path, capsys, model, corpus):
    path, _ = model
    run_main(capsys, "encode", path, corpus, "-o", tmp_path / "ids.npy")
    run_main(capsys, "encode", path, corpus, "-o", tmp_path / "ids.bin", "--dtype", "uint32")
    run_main(capsys, "encode", path, corpus, "-o", tmp_path / "ids.txt")
    for args in (["ids.npy"], ["ids.bin", "--dtype", "uint32"], ["ids.txt"]):
        status, out, err = run_main(capsys, "decode", path, tmp_path / args[0], *args[1:])
        assert status == 0, err
        assert out == TEXT


def _big_id_model(tmp_path):
    """A tokenizer.json whose merge of 'a' and 'b' has id 70000."""
    vocab = {encode_token(bytes([b])): b for b in range(256)}
    vocab[encode_token(b"ab")] = 70000
    data = {"model": {"type": "BPE", "vocab": vocab, "merges": ["a b"]}, "added_tokens": []}
    return write_file(tmp_path / "tokenizer.json", json.dumps(data))


def test_ids_that_do_not_fit(tmp_path, capsys):
    model_path = _big_id_model(tmp_path)
    text = write_file(tmp_path / "t.txt", "xx ab")
    status, _, err = run_main(capsys, "encode", model_path, text, "-o", tmp_path / "ids.npy")
    assert status == 0 and "(uint32)" in err
    assert list(read_npy(str(tmp_path / "ids.npy"))) == [120, 120, 32, 70000]
    status, _, err = run_main(
        capsys, "encode", model_path, text, "-o", tmp_path / "ids16.npy", "--dtype", "uint16"
    )
    assert_one_line_error(
        status, err, r"refbpe: error: id 70000 \(token 3 of the output\) does not fit uint16$"
    )
    assert not os.path.exists(str(tmp_path / "ids16.npy"))


ENC = ["encode", "{model}", "{corpus}"]
BAD_INPUT = [
    (
        "unknown dtype",
        ENC + ["-o", "{tmp}/x.npy", "--dtype", "uint8"],
        r"refbpe encode: error: argument --dtype",
    ),
    ("output is a directory", ENC + ["-o", "{tmp}"], r"refbpe: error: -o .*: is a directory$"),
    ("invalid model", ["encode", "{corpus}", "{corpus}"], r"refbpe: error: .*corpus\.txt: unknown format"),
    (
        "missing model",
        ["encode", "{tmp}/nope", "{corpus}"],
        r"refbpe: error: .*nope: no such file or directory$",
    ),
    ("json with npy", ENC + ["-o", "{tmp}/x.npy", "--json"], r"refbpe: error: --json is for text output"),
    (
        "special token twice",
        ENC + ["--special-token", "X"] * 2,
        r"refbpe: error: special token 'X' is given twice$",
    ),
    (
        "bin without dtype",
        ["decode", "{model}", "{tmp}/odd.bin"],
        r"refbpe: error: .*odd\.bin: a \.bin file does not say",
    ),
    (
        "bin with a dtype that does not divide",
        ["decode", "{model}", "{tmp}/odd.bin", "--dtype", "uint16"],
        r"refbpe: error: .*odd\.bin: 3 bytes is not a multiple of 2, the size of uint16; wrong dtype\?$",
    ),
    ("truncated npy", ["decode", "{model}", "{tmp}/cut.npy"], r"refbpe: error: .*cut\.npy: truncated"),
    (
        "control characters in a path",
        ["encode", "{tmp}/no\npe\x1b[2J", "{corpus}"],
        r"refbpe: error: .*no\\npe\\x1b\[2J: no such file or directory$",
    ),
    (
        "separator not in the model",
        ENC + ["{corpus}", "-o", "{tmp}/x.npy", "--separator", "<|sep|>"],
        r"refbpe: error: --separator '<\|sep\|>' is neither a token of .* nor a declared special token",
    ),
    (
        "binary count file",
        ["train", "--counts", "{tmp}/odd.bin", "--vocab-size", "300", "-o", "{tmp}/m"],
        r"refbpe: error: .*odd\.bin:1: expected count<TAB>escaped bytes$",
    ),
    (
        "binary count field",
        ["train", "--counts", "{tmp}/binary.counts", "--vocab-size", "300", "-o", "{tmp}/m"],
        r"refbpe: error: .*binary\.counts:1: bad count b[ -~]{2,62}\.\.\. \(600 bytes\) \(expected",
    ),
]


@pytest.mark.parametrize("case", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, model, corpus, case):
    _, argv, pattern = case
    write_file(tmp_path / "odd.bin", b"\x01\x02\x03")
    write_file(tmp_path / "cut.npy", npy_header("uint16", 10) + b"\x00\x00")
    write_file(tmp_path / "binary.counts", (bytes(range(14, 250)) * 3)[:504] + b"\x1b[2J" * 24 + b"\tx\n")
    before = sorted(os.listdir(str(tmp_path)))
    argv = [a.format(model=model[0], corpus=corpus, tmp=tmp_path) for a in argv]
    status, out, err = run_main(capsys, *argv)
    assert_one_line_error(status, err, pattern)
    assert out == ""
    assert sorted(os.listdir(str(tmp_path))) == before


def test_a_declared_separator_the_model_lacks_is_named_with_its_id(tmp_path, capsys, model, corpus):
    report = tmp_path / "r.json"
    out = tmp_path / "ids.npy"
    argv = ["encode", model[0], corpus, corpus, "-o", out, "--report", report]
    status, _, err = run_main(capsys, *argv, "--separator", "<|sep|>", "--special-token", "<|sep|>")
    assert status == 0, err
    n = max(model[1].vocab) + 1
    assert (
        "new special token ids (not in the model): '<|sep|>' %d, so the ids need vocab size %d" % (n, n + 1)
        in err
    )
    r = json.loads(report.read_text())
    assert r["new_special_tokens"] == {"<|sep|>": n} and r["vocab_size_needed"] == n + 1
    ids = read_npy(str(out))
    assert list(ids).count(n) == 1 and max(ids) == n
    # the model's own special token: no new id, no note
    status, _, err = run_main(capsys, *argv, "--separator", EOT)
    assert status == 0 and "new special token" not in err
    assert "new_special_tokens" not in json.loads(report.read_text())


def test_stats_two_models_side_by_side(tmp_path, capsys, model, corpus):
    path, tok = model
    status, out, err = run_main(capsys, "stats", "--model", path, "--model", path, corpus, "--workers", "1")
    assert status == 0, err
    lines = out.splitlines()
    assert (
        lines[0].startswith("| model")
        and lines[2].startswith("| " + path)
        and lines[3].startswith("| " + path)
    )
    status, out, _ = run_main(capsys, "stats", path, corpus, "--json", "--top", "3")
    figures = json.loads(out)["models"][0]
    ids = tok.encode(TEXT)
    assert figures["tokens"] == len(ids) and figures["documents"] == 4
    assert figures["bytes_per_token"] == pytest.approx(len(TEXT.encode("utf-8")) / len(ids))
    assert len(figures["top_tokens"]) == 3


def test_show_plain_with_ids(capsys, model):
    path, tok = model
    status, out, _ = run_main(capsys, "show", path, "The cat sat.", "--ids")
    assert status == 0
    text_line, ids_line = out.splitlines()
    assert text_line.startswith("[The]") and " ".join(str(i) for i in tok.encode("The cat sat.")) == ids_line
    status, out, _ = run_main(capsys, "show", path, "The cat", "--colour")
    assert "\x1b[" in out
    status, _, err = run_main(capsys, "show", path)
    assert_one_line_error(status, err, r"refbpe: error: give TEXT or -f FILE")


@pytest.mark.parametrize("fmt", ["gpt2", "hf", "tiktoken", "json"])
def test_directories_written_by_train_format(tmp_path, capsys, model, corpus, fmt):
    _, tok = model
    out = tmp_path / "trained"
    status, _, err = run_main(
        capsys,
        "train",
        corpus,
        "--vocab-size",
        400,
        "--special-token",
        EOT,
        "--format",
        fmt,
        "--out",
        out,
        "--quiet",
    )
    assert status == 0, err
    status, ids, err = run_main(capsys, "encode", out, corpus, "--json", "--quiet")
    assert status == 0, err
    assert json.loads(ids) == tok.encode(TEXT)
