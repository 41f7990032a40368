"""Training: CS336 conformance, engine == naive oracle, chunking/worker/input invariance, CLI."""

import gzip
import hashlib
import json
import os
import sys
import tempfile

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import (
    EMOJI,
    WORDS,
    cs336_path,
    examples,
    executor_for,
    mixed_text,
    other_interpreter,
    read_outputs,
    repeated_text,
    run_cli,
    shared_root,
    whole_count,
    write_file,
    ws_run,
)

from refbpe import train_bpe
from refbpe.corpus.count import InputError, count_words
from refbpe.corpus.countfile import read_counts, write_counts
from refbpe.corpus.io import iter_chunks
from refbpe.encode.tokenizer import Tokenizer
from refbpe.formats import decode_token
from refbpe.learn.train import build_vocab, train_from_count_files, train_from_counts
from refbpe.naive import naive_train_bpe, naive_train_bpe_from_counts
from refbpe.pretokenize.gpt2 import CLASS_OF, SPACE
from refbpe.pretokenize.patterns import get_pattern
from refbpe.specials import special_pattern, split_specials

count_pretokens = get_pattern("gpt2").count_pretokens

EOT = "<|endoftext|>"
SPECIAL_SETS = [[], [EOT], ["<|eot|>", "<|eot|><|eot|>"], [EOT, "<|eot|>", "<|eot|><|eot|>", "\u00e9\u00e9"]]


# -- CS336 conformance -------------------------------------------------------------


def reference_merges():
    with open(cs336_path("train-bpe-reference-merges.txt"), encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.rstrip("\n")]
    return [tuple(decode_token(part) for part in line.split(" ")) for line in lines]


def reference_vocab_values():
    with open(cs336_path("train-bpe-reference-vocab.json"), encoding="utf-8") as f:
        raw = json.load(f)
    out = set()
    for token in raw:
        try:
            out.add(decode_token(token))
        except ValueError:
            out.add(token.encode("utf-8"))  # <|endoftext|> is written plainly
    return out


@pytest.mark.slow
@pytest.mark.parametrize(
    "options",
    [
        {"workers": 1},
        {"workers": 2},
        {"workers": 2, "chunk_size": 4096},
        {"workers": 3, "chunk_size": 1000, "read_size": 777},
        {"workers": 1, "chunk_size": 64, "read_size": 13},
    ],
    ids=lambda o: ",".join("%s=%s" % kv for kv in sorted(o.items())),
)
def test_cs336_reference_training(options):
    merges_expected = reference_merges()
    assert len(merges_expected) == 243
    vocab, merges = train_bpe(cs336_path("corpus.en"), 500, [EOT], **options)
    assert merges == merges_expected
    assert set(vocab.values()) == reference_vocab_values()
    assert len(vocab) == 500
    assert vocab[499] == EOT.encode()


def _tinystories_5m():
    env = os.environ.get("REFBPE_TINYSTORIES_5M")
    path = env or os.path.join(shared_root(), "data", "cs336", "tinystories_sample_5M.txt")
    return path


def test_cs336_special_tokens_snapshot():
    with open(cs336_path("train-bpe-special-tokens-snapshot.json"), encoding="utf-8") as f:
        snap = json.load(f)
    path = _tinystories_5m()
    if not os.path.isfile(path):
        pytest.skip(
            "tinystories_sample_5M.txt (sha256 %s) not available: set REFBPE_TINYSTORIES_5M or place it at %s"
            % (snap["input_sha256"], path)
        )
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    assert h.hexdigest() == snap["input_sha256"], "%s is not the snapshot's input" % path
    vocab, merges = train_bpe(path, snap["vocab_size"], snap["special_tokens"], workers=2)
    assert [(a.hex(), b.hex()) for a, b in merges] == [tuple(m) for m in snap["merges"]]
    assert sorted(v.hex() for v in vocab.values()) == sorted(snap["vocab_values"])


# -- engine == naive oracle -------------------------------------------------------------


def _specials_and_text():
    return st.sampled_from(SPECIAL_SETS).flatmap(
        lambda specials: st.tuples(
            st.just(specials),
            st.one_of(
                mixed_text(max_atoms=20, extra=specials + ["<|eot", "|>", "<|endof"]),
                repeated_text(extra=specials),
            ),
        )
    )


def _engine_train(text, vocab_size, specials, report=None):
    with tempfile.TemporaryDirectory() as d:
        path = write_file(os.path.join(d, "c.txt"), text)
        counts = count_words(path, specials, workers=1)
    return train_from_counts(counts, vocab_size, specials, report=report)


@pytest.mark.slow
@settings(max_examples=examples(50))
@given(_specials_and_text(), st.integers(0, 120))
@example(
    ([EOT], "low low low low low lower lower newest newest newest newest newest newest widest widest widest"),
    13,
)
@example((["<|eot|>", "<|eot|><|eot|>"], "ab<|eot|><|eot|>ab<|eot|>ab<|eot|><|eot|><|eot|>ab ab ab"), 40)
@example(([], "aaaa aaaa bbbb bbbb abab abab"), 200)
def test_engine_equals_naive(specials_text, extra):
    specials, text = specials_text
    specials = list(dict.fromkeys(specials))
    vocab_size = 256 + len(specials) + extra
    report = {}
    vocab, merges = _engine_train(text, vocab_size, specials, report)
    n_vocab, n_merges = naive_train_bpe(text, vocab_size, specials)
    assert merges == n_merges
    assert vocab == n_vocab
    assert report["stopped_early"] == (len(merges) < extra)
    assert report["merge"]["merges"] == len(merges)


@settings(max_examples=examples(25))
@given(
    st.lists(st.sampled_from(["ab", "ba", "aab", "abab", "ba ab", "b", "a a"]), min_size=1, max_size=30).map(
        " ".join
    )
)
def test_engine_equals_naive_with_heavy_ties(text):
    """Equal pair counts everywhere: the lexicographic tie-break decides every step."""
    vocab, merges = _engine_train(text, 256 + 1000, [])
    n_vocab, n_merges = naive_train_bpe(text, 256 + 1000, [])
    assert merges == n_merges and vocab == n_vocab


_abc_words = st.binary(min_size=2, max_size=6).map(lambda b: bytes(97 + x % 3 for x in b))
_spread_counts = st.one_of(st.integers(1, 10**6), st.sampled_from([1, 2, 3, 64, 1000]))


@settings(max_examples=examples(25))
@given(
    st.dictionaries(_abc_words, _spread_counts, min_size=1, max_size=12),
    st.sampled_from(["cs336", "rustbpe"]),
)
def test_engine_equals_naive_across_floors(word_counts, profile):
    """Counts over six orders of magnitude, many equal: the heap's floor halves again and again
    (``heap.refill``) with ties on both sides of it.  The merges equal the oracle's, and a traced
    run's, whose refills come one step early (``traced.TracedTables.observe``)."""
    vocab, merges = train_from_counts(word_counts, 256 + 40, profile=profile)
    n_vocab, n_merges = naive_train_bpe_from_counts(word_counts, 256 + 40, profile=profile)
    assert merges == n_merges and vocab == n_vocab
    assert train_from_counts(word_counts, 256 + 40, profile=profile, trace=[])[1] == merges


# -- counting / chunking invariance -------------------------------------------------------

count_texts = st.lists(
    st.one_of(
        st.sampled_from(
            WORDS
            + EMOJI
            + [
                EOT,
                "<|eot|>",
                "<|eot|><|eot|>",
                "\n",
                "\n\n",
                "\r\n",
                "\t",
                " ",
                "  ",
                "\u4e2d\u6587",
                "\u3000",
                "x\n",
                "\u00e9",
            ]
        ),
        ws_run,
        mixed_text(max_atoms=4),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=examples(60))
@given(
    count_texts,
    st.sampled_from(SPECIAL_SETS),
    st.sampled_from([1, 2, 3]),
    st.integers(1, 64),
    st.integers(1, 64),
)
def test_count_words_equals_single_chunk_count(text, specials, workers, chunk_size, read_size):
    data = text.encode("utf-8")
    with tempfile.TemporaryDirectory() as d:
        path = write_file(os.path.join(d, "c.txt"), data)
        counts = count_words(
            path,
            specials,
            workers=workers,
            chunk_size=chunk_size,
            read_size=read_size,
            executor=None if workers == 1 else executor_for(workers),
        )
    assert counts == whole_count([data], specials)


@pytest.mark.slow
@settings(max_examples=examples(40))
@given(
    count_texts, st.sampled_from(SPECIAL_SETS[:3]), st.integers(1, 64), st.integers(1, 64), st.integers(0, 40)
)
def test_merges_invariant_under_chunking(text, specials, chunk_size, read_size, extra):
    with tempfile.TemporaryDirectory() as d:
        path = write_file(os.path.join(d, "c.txt"), text)
        base = train_bpe(path, 256 + len(specials) + extra, specials, workers=1)
        chunked = train_bpe(
            path,
            256 + len(specials) + extra,
            specials,
            workers=2,
            chunk_size=chunk_size,
            read_size=read_size,
            executor=executor_for(2),
        )
    assert chunked == base


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_own_process_pool_and_straddling_blocks(tmp_path, workers):
    # Multi-byte characters and specials at every offset relative to 7/13-byte blocks.
    unit = "\u00e9\u4e2d\U0001f600 ab\n<|endoftext|>x\ny\r\n\u3000z" + "<|eot|><|eot|><|eot|>\t\u0661\n"
    text = "".join(unit[k:] + unit[:k] for k in range(len(unit)))
    path = write_file(tmp_path / "c.txt", text)
    specials = [EOT, "<|eot|>", "<|eot|><|eot|>"]
    expected = whole_count([text.encode()], specials)
    for chunk_size, read_size in [(7, 13), (13, 7), (1, 1), (64, 3), (1 << 20, None)]:
        assert (
            count_words(path, specials, workers=workers, chunk_size=chunk_size, read_size=read_size)
            == expected
        )
    assert train_bpe(path, 400, specials, workers=workers, chunk_size=11) == train_bpe(
        path, 400, specials, workers=1
    )


def test_long_document_without_cut_points(tmp_path):
    # No special token and no newline: nothing to cut at, so one big chunk.
    text = " ".join(["word", "w\u00f6rd", "\u4e2d\u6587", "123", "!!"] * 1000)
    path = write_file(tmp_path / "c.txt", text)
    expected = whole_count([text.encode()], [EOT])
    assert count_words(path, [EOT], workers=2, chunk_size=512, read_size=5) == expected
    assert count_words(path, [EOT], workers=1, chunk_size=4096) == expected
    with open(path, "rb") as f:
        chunks = chunk_stream(f, 16, [EOT], 5)
    assert len(chunks) == 1


def test_gzip_and_multiple_sources(tmp_path):
    text = open(cs336_path("tinystories_sample.txt"), encoding="utf-8").read()
    plain = write_file(tmp_path / "c.txt", text)
    gz = str(tmp_path / "c.txt.gz")
    with gzip.open(gz, "wb") as f:
        f.write(text.encode())
    expected = train_bpe(plain, 400, [EOT], workers=1)
    assert train_bpe(gz, 400, [EOT], workers=1) == expected
    assert train_bpe(gz, 400, [EOT], workers=2, chunk_size=100) == expected
    # Two files: counts add up, and no pre-token spans the two files.
    a = write_file(tmp_path / "a.txt", "hello wor")
    b = write_file(tmp_path / "b.txt", "ld again")
    assert count_words([a, b], [], workers=1) == {b"hello": 1, b" wor": 1, b"ld": 1, b" again": 1}


# -- CLI ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    text = open(cs336_path("tinystories_sample.txt"), encoding="utf-8").read()
    text += "\n\u4e2d\u6587 \U0001f600\U0001f600 caf\u00e9 caf\u00e9<|endoftext|>ab ba ab ba\n"
    return write_file(tmp_path_factory.mktemp("corpus") / "corpus.txt", text)


@pytest.mark.slow
def test_cli_train_writes_loadable_model(tmp_path, small_corpus):
    out = str(tmp_path / "model")
    report = str(tmp_path / "report.json")
    r = run_cli(
        [
            "train",
            small_corpus,
            "--vocab-size",
            "420",
            "--special-token",
            EOT,
            "--out",
            out,
            "--workers",
            "2",
            "--chunk-size",
            "1K",
            "--report",
            report,
        ]
    )
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(out)) == ["merges.txt", "refbpe.json", "vocab.json"]
    rep = json.load(open(report))
    for phase in ("count", "merge", "write"):
        assert phase in rep and "seconds" in rep[phase]
    assert rep["merge"]["merges"] == 420 - 257
    vocab, merges = train_bpe(small_corpus, 420, [EOT], workers=1)
    sample = "Once upon a time<|endoftext|> \u4e2d\u6587 caf\u00e9\n\n  x <|endoftext|>"
    for tok in (
        Tokenizer.from_files(os.path.join(out, "vocab.json"), os.path.join(out, "merges.txt"), [EOT]),
        Tokenizer.from_dir(out),
    ):
        assert tok.vocab == vocab
        assert tok.merges == merges
        ids = tok.encode(sample)
        assert tok.decode(ids) == sample
        assert ids == Tokenizer(vocab, merges, [EOT]).encode(sample)
        assert ids.count(419) == 2
    # encode / decode subcommands round-trip too.
    txt = write_file(tmp_path / "sample.txt", sample)
    enc = run_cli(["encode", out, txt, "--json"])
    assert enc.returncode == 0, enc.stderr
    assert json.loads(enc.stdout) == Tokenizer.from_dir(out).encode(sample)
    ids_file = write_file(tmp_path / "ids.json", enc.stdout)
    dec = run_cli(["decode", out, ids_file])
    assert dec.returncode == 0 and dec.stdout.decode("utf-8") == sample


def test_cli_help_for_every_subcommand():
    from refbpe.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    names = sorted(sub.choices)
    assert {"train", "encode", "decode"} <= set(names)
    r = run_cli(["--help"])
    assert r.returncode == 0 and b"train" in r.stdout
    r = run_cli(["train", "--help"])
    assert r.returncode == 0 and r.stdout.startswith(b"usage: refbpe train")
    import contextlib
    import io

    from refbpe.cli import main

    for name in names:  # in-process: one interpreter start per subcommand is slow on PyPy
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as info:
            main([name, "--help"])
        assert info.value.code == 0, name
        assert out.getvalue().startswith("usage: refbpe " + name), name


@pytest.mark.slow
def test_cli_stdin_and_gzip_equal_plain_file(tmp_path, small_corpus):
    data = open(small_corpus, "rb").read()
    gz = str(tmp_path / "c.txt.gz")
    with gzip.open(gz, "wb") as f:
        f.write(data)
    outs = {}
    for name, src, inp in [("plain", small_corpus, None), ("stdin", "-", data), ("gz", gz, None)]:
        out = str(tmp_path / name)
        r = run_cli(
            [
                "train",
                src,
                "--vocab-size",
                "380",
                "--special-token",
                EOT,
                "--out",
                out,
                "--workers",
                "2",
                "--chunk-size",
                "512",
                "--quiet",
            ],
            input=inp,
        )
        assert r.returncode == 0, r.stderr
        outs[name] = read_outputs(out)
    assert outs["stdin"] == outs["plain"]
    assert outs["gz"] == outs["plain"]


@pytest.mark.slow
def test_cli_hash_seed_invariance(tmp_path, small_corpus):
    # Many ties (equal counts) so any dependence on set/dict iteration order would show.
    ties = " ".join(
        w + str(k % 3) for k in range(300) for w in ("ab", "ba", "cd", "dc", "\u00e9a", "a\u00e9")
    )
    corpus = write_file(tmp_path / "ties.txt", open(small_corpus, encoding="utf-8").read() + ties)
    outs = []
    for seed in ("0", "12345"):
        out = str(tmp_path / ("seed" + seed))
        r = run_cli(
            [
                "train",
                corpus,
                "--vocab-size",
                "450",
                "--special-token",
                EOT,
                "--special-token",
                "<|eot|>",
                "--out",
                out,
                "--workers",
                "2",
                "--chunk-size",
                "256",
                "--quiet",
            ],
            env={"PYTHONHASHSEED": seed},
        )
        assert r.returncode == 0, r.stderr
        outs.append(read_outputs(out))
    assert outs[0] == outs[1]


@pytest.mark.slow
def test_interpreter_invariance(tmp_path, small_corpus):
    other = other_interpreter()
    if other is None:
        pytest.skip(
            "no second interpreter (.venv-pypy/bin/python or pypy3 from CPython, "
            ".venv/bin/python from PyPy) can import this refbpe"
        )
    outs = []
    for k, exe in enumerate([sys.executable, other]):
        out = str(tmp_path / ("interp%d" % k))
        r = run_cli(
            [
                "train",
                small_corpus,
                "--vocab-size",
                "450",
                "--special-token",
                EOT,
                "--out",
                out,
                "--workers",
                "2",
                "--chunk-size",
                "2K",
                "--quiet",
            ],
            python=exe,
        )
        assert r.returncode == 0, r.stderr
        outs.append(read_outputs(out))
    assert outs[0] == outs[1]


# -- --errors ------------------------------------------------------------------------------------

BAD_SEQUENCES = [
    b"\xff",
    b"\x80",
    b"\xc3",
    b"\xe4\xb8",
    b"\xed\xa0\x80",
    b"\xc0\xaf",
    b"\xf4\x90\x80\x80",
    b"\xf0\x9f\x98",
]


@pytest.mark.slow
@pytest.mark.parametrize("bad", BAD_SEQUENCES, ids=lambda b: b.hex())
def test_cli_strict_invalid_utf8(tmp_path, bad):
    prefix = ("line %d caf\u00e9\n" % 0).encode() + b"".join(
        ("line %d caf\u00e9\n" % k).encode() for k in range(1, 30)
    )
    data = prefix + b"abc" + bad + b"def\nmore <|endoftext|> text\n" * 3
    offset = len(prefix) + 3
    with pytest.raises(UnicodeDecodeError) as info:
        data.decode("utf-8")
    assert info.value.start == offset
    path = write_file(tmp_path / "bad.txt", data)
    out = str(tmp_path / "out")
    r = run_cli(
        [
            "train",
            path,
            "--vocab-size",
            "300",
            "--special-token",
            EOT,
            "--out",
            out,
            "--workers",
            "2",
            "--chunk-size",
            "64",
        ]
    )
    assert r.returncode == 2
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert path in err and ("byte offset %d" % offset) in err, err
    assert not os.path.exists(out) or os.listdir(out) == []


@settings(max_examples=examples(40))
@given(count_texts, st.sampled_from(BAD_SEQUENCES), count_texts, st.sampled_from([1, 2]), st.integers(1, 64))
def test_strict_error_offset_is_exact(before, bad, after, workers, chunk_size):
    data = before.encode() + bad + after.encode()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        offset = e.start
    with tempfile.TemporaryDirectory() as d:
        path = write_file(os.path.join(d, "bad.txt"), data)
        with pytest.raises(InputError) as info:
            count_words(
                path,
                [EOT],
                workers=workers,
                chunk_size=chunk_size,
                executor=None if workers == 1 else executor_for(workers),
            )
    assert str(info.value) == "%s: invalid UTF-8 at byte offset %d" % (path, offset)


garbage_bytes = st.lists(
    st.one_of(count_texts.map(lambda t: t.encode()), st.sampled_from(BAD_SEQUENCES), st.binary(max_size=6)),
    max_size=12,
).map(b"".join)


@pytest.mark.slow
@settings(max_examples=examples(80))
@given(
    garbage_bytes,
    st.sampled_from(["replace", "ignore"]),
    st.sampled_from(SPECIAL_SETS),
    st.sampled_from([1, 2]),
    st.integers(1, 64),
    st.integers(1, 64),
)
def test_replace_and_ignore_equal_whole_file_decoding(data, errors, specials, workers, chunk_size, read_size):
    expected = {}
    text = data.decode("utf-8", errors)
    for seg, is_special in split_specials(text, special_pattern(specials)):
        if not is_special:
            count_pretokens(seg.encode("utf-8", "surrogatepass"), expected)
    with tempfile.TemporaryDirectory() as d:
        path = write_file(os.path.join(d, "g.txt"), data)
        counts = count_words(
            path,
            specials,
            workers=workers,
            chunk_size=chunk_size,
            read_size=read_size,
            errors=errors,
            executor=None if workers == 1 else executor_for(workers),
        )
    assert counts == expected


# -- edge cases ------------------------------------------------------------------------------------


def test_vocab_size_below_minimum(tmp_path):
    path = write_file(tmp_path / "c.txt", "hello hello")
    for size, specials in [(255, []), (256, [EOT]), (0, []), (257, ["a", "b"])]:
        with pytest.raises(ValueError):
            train_bpe(path, size, specials, workers=1)
        with pytest.raises(ValueError):
            train_from_counts({b"hello": 2}, size, specials)
    assert train_bpe(path, 256, [], workers=1) == ({i: bytes([i]) for i in range(256)}, [])
    out = str(tmp_path / "out")
    r = run_cli(["train", path, "--vocab-size", "256", "--special-token", EOT, "--out", out])
    assert r.returncode == 2
    assert r.stderr.decode().startswith("refbpe: error:") and r.stderr.count(b"\n") == 1
    assert not os.path.exists(out)


def test_empty_corpus(tmp_path):
    path = write_file(tmp_path / "empty.txt", b"")
    report = {}
    vocab, merges = train_bpe(path, 300, [EOT], workers=2, report=report)
    assert merges == [] and report["stopped_early"] is True
    assert vocab == build_vocab([], [EOT]) and len(vocab) == 257
    only_specials = write_file(tmp_path / "specials.txt", EOT * 5)
    report = {}
    assert train_bpe(only_specials, 300, [EOT], workers=1, report=report)[1] == []
    assert report["stopped_early"] is True


def test_count_report_is_the_same_however_the_corpus_was_counted(tmp_path):
    """``report["count"]`` of the streaming reader, of a profile that cuts the input into
    lines and of word-count files: the same figures in the same order (``train._count_report``)."""
    path = write_file(tmp_path / "c.txt", "hello world\nhello there<|endoftext|>world\n" * 50)
    counts = str(tmp_path / "c.counts.tsv")
    write_counts(counts, count_words([path], [EOT], workers=1))
    reports = [{}, {}, {}]
    train_bpe(path, 300, [EOT], report=reports[0], workers=1)
    train_bpe(path, 300, [EOT], report=reports[1], workers=1, profile="hf", cut="lines")
    train_from_count_files([counts], 300, [EOT], report=reports[2])
    reports = [r["count"] for r in reports]
    keys = ["seconds", "bytes", "mb_per_s", "unique_words", "peak_memory_mb", "peak_worker_memory_mb"]
    streamed, lines, from_files = reports
    assert list(streamed) == list(lines) == keys
    assert list(from_files) == keys[:3] + ["count_files"] + keys[3:]
    assert streamed["bytes"] == lines["bytes"] == os.path.getsize(path)
    assert streamed["unique_words"] == from_files["unique_words"] == len(read_counts(counts))
    assert lines["unique_words"] != streamed["unique_words"]  # the special token is text in lines
    assert from_files["bytes"] is None and from_files["mb_per_s"] is None and from_files["count_files"] == 1
    assert from_files["peak_worker_memory_mb"] == 0.0
    assert all(r["peak_memory_mb"] > 0 for r in reports)


def test_duplicate_special_tokens_are_deduped_by_the_api(tmp_path):
    path = write_file(tmp_path / "c.txt", "a<|x|>b<|y|>ab ab ab")
    vocab, merges = train_bpe(path, 262, ["<|x|>", "<|y|>", "<|x|>", "<|y|>"], workers=1)
    assert merges == [(b"a", b"b"), (b" ", b"ab")]  # 4 merges wanted (2 specials after dedup); 2 exist
    assert len(vocab) == 260
    assert [vocab[258], vocab[259]] == [b"<|x|>", b"<|y|>"]
    assert list(vocab.values()).count(b"<|x|>") == 1
    # On the command line a repeated special token is taken for a mistake.
    out = str(tmp_path / "m")
    r = run_cli(
        [
            "train",
            path,
            "--vocab-size",
            "262",
            "--special-token",
            "<|x|>",
            "--special-token",
            "<|x|>",
            "--special-token",
            "<|y|>",
            "--out",
            out,
            "--quiet",
        ]
    )
    assert r.returncode == 2
    assert r.stderr == b"refbpe: error: special token '<|x|>' is given twice\n"
    assert not os.path.exists(out)


def test_special_token_equal_to_learned_token(tmp_path):
    """What happens when a special token's bytes equal an ordinary token's.

    * Training with special "the" can never learn b"the": every occurrence of the
      special's bytes is cut out of the text before counting.
    * When the vocab does hold both (learned b"the" from counts made without the
      special, plus the special appended), both ids are kept; an ordinary pre-token
      uses the smallest id, a special-token match the largest; files written with
      ``write_model_dir`` keep both (the manifest carries the special's id).
    """
    text = "the the the then there other the"
    path = write_file(tmp_path / "c.txt", text)
    vocab, merges = train_bpe(path, 300, ["the"], workers=1)
    assert list(vocab.values()).count(b"the") == 1 and vocab[len(vocab) - 1] == b"the"

    counts = count_words(path, [], workers=1)  # counted without the special
    vocab, merges = train_from_counts(counts, 270, ["the"])
    ids = [i for i, v in vocab.items() if v == b"the"]
    assert len(ids) == 2
    learned, special = min(ids), max(ids)
    assert special == len(vocab) - 1 and 256 <= learned < special
    plain = Tokenizer(vocab, merges)
    assert plain.encode("the") == [learned]
    assert plain.encode(" the")[-1] != special
    with_special = Tokenizer(vocab, merges, ["the"])
    assert with_special.encode("the") == [special]
    assert with_special.encode("xthe")[-1] == special  # literal match inside a word
    assert with_special.decode([learned, special]) == "thethe"

    from refbpe.formats import write_model_dir

    out = str(tmp_path / "m")
    write_model_dir(out, vocab, merges, ["the"])
    loaded = Tokenizer.from_dir(out)
    assert loaded.vocab == vocab
    assert loaded.encode("the") == [special]
    assert Tokenizer.from_files(os.path.join(out, "vocab.json"), os.path.join(out, "merges.txt")).encode(
        "the"
    ) == [learned]


def test_single_byte_special_token_via_cli(tmp_path):
    path = write_file(tmp_path / "c.txt", "a!b a!b ab ab!!")
    out = str(tmp_path / "m")
    r = run_cli(["train", path, "--vocab-size", "270", "--special-token", "!", "--out", out, "--quiet"])
    assert r.returncode == 0, r.stderr
    tok = Tokenizer.from_dir(out)
    special = max(tok.vocab)
    assert tok.vocab[ord("!")] == b"!" and tok.vocab[special] == b"!" and special > 256
    assert tok.encode("x!y") == [ord("x"), special, ord("y")]
    assert Tokenizer(tok.vocab, tok.merges).encode("!") == [ord("!")]
    assert tok.decode(tok.encode("a!b ab")) == "a!b ab"


# -- io.iter_chunks ------------------------------------------------------------------------------------


def chunk_stream(stream, chunk_size, specials, read_size):
    """``list(io.iter_chunks(...))`` for either signature of iter_chunks:
    ``(stream, chunk_size, specials_as_bytes, read_size)`` or the older
    ``(stream, chunk_size, special_re, max_special_len, read_size)``."""
    import inspect

    params = inspect.signature(iter_chunks).parameters
    if "specials" in params:
        return list(
            iter_chunks(stream, chunk_size, [t.encode("utf-8") for t in specials], read_size=read_size)
        )
    pattern = special_pattern(specials, as_bytes=True)
    longest = max([len(t.encode("utf-8")) for t in specials] or [0])
    return list(iter_chunks(stream, chunk_size, pattern, longest, read_size))


class _Trickle(object):
    """A stream returning at most ``k`` bytes per read (like a pipe)."""

    def __init__(self, data, k):
        self.data, self.pos, self.k = data, 0, k

    def read(self, n):
        n = min(n, self.k)
        out = self.data[self.pos : self.pos + n]
        self.pos += len(out)
        return out


@settings(max_examples=examples(200))
@given(
    count_texts,
    st.sampled_from(SPECIAL_SETS + [["\n<a>\n"], ["x\ny"]]),
    st.integers(1, 64),
    st.integers(1, 64),
    st.integers(1, 64),
)
def test_iter_chunks_cuts_only_at_safe_points(text, specials, chunk_size, read_size, trickle):
    data = text.encode("utf-8")
    pattern = special_pattern(specials, as_bytes=True)
    chunks = chunk_stream(_Trickle(data, trickle), chunk_size, specials, read_size)
    assert b"".join(c for _, c in chunks) == data
    offsets = [o for o, _ in chunks]
    assert offsets == [sum(len(c) for _, c in chunks[:k]) for k in range(len(chunks))]
    assert all(c for _, c in chunks)
    starts = {m.start() for m in pattern.finditer(data)} if pattern is not None else set()
    spans = [m.span() for m in pattern.finditer(data)] if pattern is not None else []
    for cut in offsets[1:]:
        at_special = cut in starts
        after_ws = (
            data[cut - 1 : cut] in (b"\t", b"\n", b"\x0b", b"\x0c", b"\r")
            and data[cut] < 0x80
            and CLASS_OF[data[cut]] != SPACE
        )
        assert at_special or after_ws, (cut, data)
        assert not any(s < cut < e for s, e in spans), (cut, data)
    # What the cuts are for: counting the chunks separately equals counting the whole.
    chunked = {}
    for _, chunk in chunks:
        for seg, is_special in split_specials(chunk, pattern):
            if not is_special:
                count_pretokens(seg, chunked)
    assert chunked == whole_count([data], specials), [c for _, c in chunks]


@pytest.mark.parametrize("out", ["tok", "tok/"])
def test_the_write_line_names_the_files_with_one_separator(out, tmp_path):
    write_file(str(tmp_path / "c.txt"), "low lower lowest " * 20)
    r = run_cli(["train", "c.txt", "--vocab-size", "260", "-o", out], cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    write = [line for line in r.stderr.decode().splitlines() if line.startswith("write: ")]
    assert len(write) == 1 and " tok%svocab.json, merges.txt" % os.sep in write[0], write
