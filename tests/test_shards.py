"""Counting beyond one machine: word-count files, shards, ``train --counts``.

The N shards' counts add up to the whole input's, for any texts, files and
chunk sizes; training from count files (of the whole or of shards) writes
byte-identical output to training on the corpus.
"""

import gzip
import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import (
    EMOJI,
    WORDS,
    corpus_path,
    cs336_path,
    digests,
    examples,
    mixed_text,
    run_main,
    whole_count,
    ws_run,
)

from refbpe.corpus.count import count_words
from refbpe.corpus.countfile import counts_tsv, gzip_bytes, read_counts, sum_counts, write_counts
from refbpe.corpus.shard import ShardError, parse_shard, shard_spans
from refbpe.learn.train import train_from_counts
from refbpe.pretokenize.patterns import get_pattern

count_pretokens = get_pattern("gpt2").count_pretokens

EOT = "<|endoftext|>"
SPECIAL_SETS = [[], [EOT], ["<|eot|>", "<|eot|><|eot|>"], [EOT, "<|eot|>", "\u00e9\u00e9"]]
OUTPUTS = ("vocab.json", "merges.txt", "refbpe.json")


def add(tables):
    total = {}
    for t in tables:
        for w, c in t.items():
            total[w] = total.get(w, 0) + c
    return total


def write_files(directory, texts):
    paths = []
    for i, data in enumerate(texts):
        p = os.path.join(str(directory), "t%d.txt" % i)
        with open(p, "wb") as f:
            f.write(data)
        paths.append(p)
    return paths


# -- shards: property ----------------------------------------------------------------

shard_texts = st.lists(
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
                "x\n",
                "\u00e9\u00e9",
                "a\tb",
            ]
        ),
        ws_run,
        mixed_text(max_atoms=4),
    ),
    max_size=30,
).map(lambda parts: "".join(parts).encode("utf-8"))


@settings(max_examples=examples(80))
@given(
    st.lists(shard_texts, min_size=1, max_size=3),
    st.sampled_from(SPECIAL_SETS),
    st.integers(1, 4),
    st.integers(1, 40),
    st.sampled_from(["path", "chunk"]),
)
def test_shard_counts_add_up_to_the_whole(tmp_path_factory, texts, specials, n, chunk_size, executor_data):
    paths = write_files(tmp_path_factory.mktemp("s"), texts)
    tables = [
        count_words(
            paths, specials, workers=1, chunk_size=chunk_size, shard=(i, n), executor_data=executor_data
        )
        for i in range(n)
    ]
    assert add(tables) == whole_count(texts, specials)
    # The shards' spans partition every file, in order.
    covered = {p: [] for p in paths}
    for i in range(n):
        for path, start, end in shard_spans(paths, i, n, specials):
            assert start < end
            covered[path].append((start, end))
    for path, data in zip(paths, texts):
        bounds = [0] + [end for _, end in covered[path]]
        assert [start for start, _ in covered[path]] == bounds[:-1] and bounds[-1] == len(data)


def test_shard_boundaries_fall_on_safe_cuts(tmp_path):
    data = (("word7 <|endoftext|>" + "x" * 50 + "\n") * 40).encode()
    path = write_files(tmp_path, [data])[0]
    for n in (1, 2, 3, 4, 7):
        pieces = [data[a:b] for i in range(n) for _, a, b in shard_spans([path], i, n, [EOT])]
        assert b"".join(pieces) == data and len(pieces) == n
        for piece in pieces[:-1]:
            # Cut after a lone newline, or just before a special token (after the space).
            assert piece.endswith(b"x\n") or piece.endswith(b"word7 ")


def test_more_shards_than_bytes(tmp_path):
    paths = write_files(tmp_path, [b"ab\ncd", b"", b"e"])
    tables = [count_words(paths, [], workers=1, shard=(i, 20)) for i in range(20)]
    assert add(tables) == whole_count([b"ab\ncd", b"", b"e"], [])
    assert sum(1 for t in tables if t) <= 3


@pytest.fixture(scope="module")
def english_small():
    path = corpus_path("english_small.txt")
    return path, count_words(path, [EOT], workers=1)


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_shards_of_a_real_corpus(english_small, n):
    path, whole = english_small
    shards = [count_words(path, [EOT], workers=1, shard=(i, n), chunk_size=256 << 10) for i in range(n)]
    assert all(shards) and add(shards) == whole


def test_parse_shard():
    assert parse_shard("0/1") == (0, 1)
    assert parse_shard("3/4") == (3, 4)
    for bad in ("4/4", "-1/4", "1/0", "0/-2", "1", "a/b", "1/2/3", "", "1.0/2"):
        with pytest.raises(ShardError):
            parse_shard(bad)


def test_shard_needs_regular_files(tmp_path):
    gz = str(tmp_path / "c.txt.gz")
    with gzip.open(gz, "wb") as f:
        f.write(b"hello")
    with pytest.raises(ShardError, match="c.txt.gz"):
        count_words([gz], [], workers=1, shard=(0, 2))


# -- word-count files ------------------------------------------------------------------


@settings(max_examples=examples(40))
@given(
    st.dictionaries(st.binary(min_size=1, max_size=8), st.integers(1, 1 << 80), max_size=30),
    st.sampled_from([".counts.tsv", ".counts.tsv.gz"]),
)
def test_count_file_round_trip_and_determinism(tmp_path_factory, counts, suffix):
    d = tmp_path_factory.mktemp("c")
    a, b = str(d / ("a" + suffix)), str(d / ("b" + suffix))
    write_counts(a, counts)
    write_counts(b, dict(reversed(list(counts.items()))))
    assert read_counts(a) == counts
    assert open(a, "rb").read() == open(b, "rb").read()  # bytes depend only on the table


def test_gzip_output_is_reproducible(tmp_path):
    counts = {b"hello": 3, b" world": 1 << 70, b"\xff\n": 2}
    p = str(tmp_path / "w.counts.tsv.gz")
    write_counts(p, counts)
    data = open(p, "rb").read()
    assert data == gzip_bytes(counts_tsv(counts).encode("ascii"))
    assert data[4:8] == b"\0\0\0\0" and data[3] & 0x08 == 0  # mtime 0, no file name
    assert gzip.decompress(data).decode("ascii") == counts_tsv(counts)


def test_sum_and_reader_details(tmp_path):
    a = tmp_path / "a.counts.tsv"
    a.write_bytes(b"# a comment\n3\tab\n\n0\tzero\r\n2\tab\n1\t\\xFF\\x00 \\\\\n")
    b = str(tmp_path / "b.counts.tsv.gz")
    write_counts(b, {b"ab": 1 << 64, b"c": 1})
    assert read_counts(str(a)) == {b"ab": 5, b"\xff\x00 \\": 1}
    assert sum_counts([str(a), b]) == {b"ab": 5 + (1 << 64), b"\xff\x00 \\": 1, b"c": 1}


@pytest.mark.parametrize(
    "content, where",
    [
        (b"1\tok\nx\tnot a count\n", ":2:"),
        (b"1\tok\n-1\tneg\n", ":2:"),
        (b"1\tok\n2\tbad \\q escape\n", ":2:"),
        (b"1\tok\n2\t\n", ":2:"),
        (b"1\tok\n2\t\xc3\xa9\n", ":2:"),
        (b"1\tok\nno tab here\n", ":2:"),
    ],
)
def test_malformed_count_files_name_file_and_line(tmp_path, content, where):
    for name, data in (("bad.counts.tsv", content), ("bad.counts.tsv.gz", gzip.compress(content))):
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(ValueError) as info:
            read_counts(str(p))
        assert str(info.value).startswith(str(p) + where)


def test_corrupt_gzip_is_a_value_error(tmp_path):
    p = tmp_path / "w.counts.tsv.gz"
    p.write_bytes(gzip.compress(b"1\tab\n" * 1000)[:-30])
    with pytest.raises(ValueError, match="w.counts.tsv.gz"):
        read_counts(str(p))
    p.write_bytes(b"not gzip at all\n")
    with pytest.raises(ValueError, match="w.counts.tsv.gz"):
        read_counts(str(p))


def test_counts_beyond_64_bits_train_like_small_ones(tmp_path):
    text = open(corpus_path("english_small.txt"), "rb").read(200000).decode("utf-8", "ignore")
    small = whole_count([text.encode("utf-8")], [EOT])
    big = {w: c << 70 for w, c in small.items()}
    p = str(tmp_path / "big.counts.tsv")
    write_counts(p, big)
    assert read_counts(p) == big
    assert train_from_counts(read_counts(p), 400, [EOT]) == train_from_counts(small, 400, [EOT])


# -- CLI: refbpe count --shard, refbpe train --counts --------------------------------------


@pytest.fixture(scope="module")
def two_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    en = open(cs336_path("corpus.en"), "rb").read()
    other = ("caf\u00e9 \u4e2d\u6587<|endoftext|>ab ba\n" * 200).encode("utf-8")
    return write_files(d, [en, other])


@pytest.mark.slow
def test_cli_train_from_shard_counts_is_byte_identical(tmp_path, capsys, two_files):
    direct = tmp_path / "direct"
    assert (
        run_main(
            capsys,
            "train",
            *two_files,
            "--vocab-size",
            600,
            "--special-token",
            EOT,
            "--out",
            direct,
            "--quiet",
            "--workers",
            1,
        )[0]
        == 0
    )
    whole = str(tmp_path / "whole.counts.tsv")
    assert run_main(capsys, "count", *two_files, "--special-token", EOT, "-o", whole, "--workers", 1)[0] == 0
    for n in (1, 2, 3, 4):
        shards = [str(tmp_path / ("s%d-%d.counts.tsv%s" % (i, n, ".gz" if i % 2 else ""))) for i in range(n)]
        for i, out in enumerate(shards):
            rc, _, err = run_main(
                capsys,
                "count",
                *two_files,
                "--special-token",
                EOT,
                "-o",
                out,
                "--shard",
                "%d/%d" % (i, n),
                "--chunk-size",
                "8K",
                "--workers",
                1,
            )
            assert rc == 0, err
        assert sum_counts(shards) == read_counts(whole)
        model = tmp_path / ("from-shards-%d" % n)
        rc, _, err = run_main(
            capsys, "train", "--counts", *shards, "--vocab-size", 600, "--special-token", EOT, "--out", model
        )
        assert rc == 0, err
        assert "read %d count files" % n in err
        assert digests(model, OUTPUTS) == digests(direct, OUTPUTS)


def test_cli_count_defaults_to_cpu_count_workers(tmp_path, capsys, two_files, monkeypatch):
    import refbpe.learn.train as train_module  # refbpe count counts through train.count_corpus

    seen = {}
    real = train_module.count_words

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(train_module, "count_words", spy)
    assert run_main(capsys, "count", two_files[0], "-o", tmp_path / "w.counts.tsv")[0] == 0
    assert seen["workers"] is None  # count_words then uses the CPU count, as train does


@pytest.mark.parametrize(
    "argv, message",
    [
        (["count", "{f}", "-o", "{o}", "--shard", "4/4"], "--shard 4/4: I must be 0 to 3"),
        (["count", "{f}", "-o", "{o}", "--shard", "1/0"], "at least 1"),
        (["count", "{f}", "-o", "{o}", "--shard", "x"], "--shard expects I/N"),
        (["count", "-", "-o", "{o}", "--shard", "0/2"], "--shard needs regular files"),
        (["count", "{gz}", "-o", "{o}", "--shard", "0/2"], "--shard needs regular files"),
        (["train", "{f}", "--counts", "{c}", "--vocab-size", "300", "--out", "{m}"], "not both"),
        (["train", "--vocab-size", "300", "--out", "{m}"], "no input"),
        (["train", "--counts", "{bad}", "--vocab-size", "300", "--out", "{m}"], "bad.counts.tsv:2:"),
        (["train", "--counts", "{missing}", "--vocab-size", "300", "--out", "{m}"], "no such file"),
        (
            ["train", "{f}", "--vocab-size", "300", "--out", "{m}", "--executor", "tcp://127.0.0.1:1"],
            "dask://HOST:PORT",
        ),
        (
            [
                "train",
                "--counts",
                "{c}",
                "--vocab-size",
                "300",
                "--out",
                "{m}",
                "--executor",
                "dask://127.0.0.1:1",
            ],
            "nothing to count",
        ),
    ],
)
def test_cli_errors_are_one_line(tmp_path, capsys, argv, message):
    f = tmp_path / "c.txt"
    f.write_text("hello world\n")
    gz = tmp_path / "c.txt.gz"
    gz.write_bytes(gzip.compress(b"hello"))
    c = tmp_path / "w.counts.tsv"
    c.write_text("1\thello\n")
    bad = tmp_path / "bad.counts.tsv"
    bad.write_text("1\tok\nzz\tno\n")
    names = dict(
        f=f,
        o=tmp_path / "o.counts.tsv",
        gz=gz,
        c=c,
        bad=bad,
        m=tmp_path / "m",
        missing=tmp_path / "nope.counts.tsv",
    )
    rc, out, err = run_main(capsys, *[a.format(**names) for a in argv])
    assert rc == 2 and err.startswith("refbpe: error: ") and err.count("\n") == 1, err
    assert message in err
    assert not os.path.exists(names["o"]) and not os.path.exists(names["m"])


def test_cli_executor_without_distributed_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    f = tmp_path / "c.txt"
    f.write_text("hello world\n")
    rc, _, err = run_main(capsys, "count", f, "-o", tmp_path / "o.tsv", "--executor", "dask://127.0.0.1:8786")
    assert rc == 2 and err.count("\n") == 1 and "pip install 'refbpe[dask]'" in err


def test_help_documents_shards_and_counts():
    from refbpe.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    count_help = sub.choices["count"].format_help()
    train_help = sub.choices["train"].format_help()
    assert "--shard I/N" in count_help and "numbered from 0" in count_help and "--workers" in count_help
    for text in (count_help, train_help):
        assert "--executor dask://HOST:PORT" in text and "--executor-data {path,chunk}" in text
    assert "--counts FILE [FILE ...]" in train_help


def test_verify_reads_gzipped_count_files(tmp_path, capsys, two_files):
    model = tmp_path / "m"
    assert (
        run_main(
            capsys,
            "train",
            *two_files,
            "--vocab-size",
            300,
            "--special-token",
            EOT,
            "--out",
            model,
            "--quiet",
            "--workers",
            1,
        )[0]
        == 0
    )
    counts = tmp_path / "w.counts.tsv.gz"
    assert run_main(capsys, "count", *two_files, "--special-token", EOT, "-o", counts)[0] == 0
    rc, out, _ = run_main(
        capsys, "verify", counts, "--vocab-size", 300, "--special-token", EOT, "--against", model
    )
    assert rc == 0 and out.startswith("identical")


def test_executor_url():
    from refbpe.corpus.cluster import ExecutorError, scheduler_address

    assert scheduler_address("dask://10.0.0.5:8786") == "tcp://10.0.0.5:8786"
    assert scheduler_address("dask://[::1]:8786") == "tcp://[::1]:8786"
    for bad in ("tcp://h:1", "dask://h", "dask://:8786", "dask://h:port", "dask://h:1/x", "h:1"):
        with pytest.raises(ExecutorError):
            scheduler_address(bad)
