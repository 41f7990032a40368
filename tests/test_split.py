"""``refbpe split`` (the pattern's pieces, streaming) and ``verify --split`` (another
pre-tokenizer's pieces against them): chunk and worker invariance, the regex module,
and planted splitter bugs named at the right piece."""

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import (
    examples,
    import_regex_or_skip,
    mixed_text,
    regex_version_mismatch,
    run_main,
    soup_text,
    write_file,
)

from refbpe.corpus.pretokens import iter_pieces
from refbpe.pretokenize.patterns import get_pattern, pattern_names
from refbpe.specials import special_pattern, split_specials
from refbpe.verify.pieces import compare_split

EOT = "<|endoftext|>"
texts = st.lists(st.one_of(mixed_text(12), soup_text, st.just(EOT)), max_size=6).map("".join)


def whole_scan(text, pattern, specials=(EOT,)):
    """The pieces of one whole-text scan, special tokens removed."""
    out = []
    for segment, is_special in split_specials(text.encode("utf-8"), special_pattern(specials, as_bytes=True)):
        if not is_special:
            out += get_pattern(pattern).pretokenize(segment)
    return out


@settings(max_examples=examples(60), deadline=None)
@given(texts, st.sampled_from(pattern_names()), st.integers(1, 64))
def test_split_pieces_equal_one_whole_scan_for_every_chunk_size(tmp_path_factory, text, pattern, chunk):
    path = write_file(tmp_path_factory.mktemp("s") / "t.txt", text)
    pieces = list(iter_pieces([path], [EOT], pattern, chunk_size=chunk))
    assert [p for _, _, p in pieces] == whole_scan(text, pattern)
    data = text.encode("utf-8")
    assert all(data[o : o + len(p)] == p for _, o, p in pieces)


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(st.one_of(mixed_text(12), soup_text), max_size=4).map("".join), st.sampled_from(pattern_names())
)
def test_split_equals_the_regex_module(text, pattern):
    regex = import_regex_or_skip()
    reason = regex_version_mismatch()
    if reason:
        pytest.skip(reason)
    p = get_pattern(pattern)
    expected = [m.encode("utf-8") for m in regex.findall(p.regex, text)]
    assert whole_scan(text, pattern, ()) == expected


def test_split_command_line_is_the_same_for_every_worker_count_and_chunk_size(tmp_path, capsys):
    text = ("Hello world, it's 12 apples " * 50 + EOT + "  next\n\n  Привет мир 中文 ") * 40
    path = write_file(tmp_path / "c.txt", text)
    outputs = []
    for workers, chunk in ((1, "1M"), (2, "1K"), (2, "300"), (1, "77")):
        out = str(tmp_path / ("o%d%s.jsonl" % (workers, chunk)))
        code, _, err = run_main(
            capsys,
            "split",
            path,
            "--special-token",
            EOT,
            "--workers",
            workers,
            "--chunk-size",
            chunk,
            "-o",
            out,
        )
        assert code == 0, err
        outputs.append(open(out, "rb").read())
    assert len(set(outputs)) == 1
    lines = outputs[0].decode("utf-8").splitlines()
    assert [json.loads(x).encode("utf-8") for x in lines] == whole_scan(text, "gpt2")


def test_split_hex_and_offsets(tmp_path, capsys):
    path = write_file(tmp_path / "c.txt", "Hi\u00e9 there" + EOT + "ok")
    code, out, _ = run_main(capsys, "split", path, "--special-token", EOT, "--hex", "--offsets")
    assert code == 0
    rows = [json.loads(x) for x in out.splitlines()]
    assert rows == [[0, "4869c3a9"], [4, "207468657265"], [23, "6f6b"]]


def test_split_out_dash_is_stdout(tmp_path, capsys, monkeypatch):
    path = write_file(tmp_path / "c.txt", "a b" + EOT + "c")
    monkeypatch.chdir(tmp_path)
    whole = run_main(capsys, "split", path, "--special-token", EOT)
    assert run_main(capsys, "split", path, "--special-token", EOT, "-o", "-") == whole and whole[0] == 0
    assert not os.path.exists(str(tmp_path / "-"))


def test_split_bad_input_is_one_line_and_exit_2_and_writes_nothing(tmp_path, capsys):
    bad = str(tmp_path / "bad.txt")
    with open(bad, "wb") as f:
        f.write(b"ok \xff\xfe")
    out = str(tmp_path / "o.jsonl")
    code, _, err = run_main(capsys, "split", bad, "-o", out)
    assert code == 2 and err.count("\n") == 1 and "invalid UTF-8 at byte offset 3" in err
    assert not os.path.exists(out) and os.listdir(str(tmp_path)) == ["bad.txt"]


# -- verify --split: planted splitter bugs ------------------------------------------------

GPT2_ANY_CASE = r"""'(?i:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_NO_LOOKAHEAD = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+"""
GPT2_ASCII_DIGITS = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?[0-9]+| ?[^\s\p{L}0-9]+|\s+(?!\S)|\s+"""

PLANTED = [
    # (their pattern, text, first differing piece, the reference alternative's index, code point)
    (GPT2_ANY_CASE, "IT'S fine", 1, 3, "U+0053"),
    (GPT2_NO_LOOKAHEAD, "a  b", 1, 4, "U+0020"),
    (GPT2_ASCII_DIGITS, "x 12\u00b2 y", 1, 2, "U+00B2"),
]


@pytest.mark.parametrize("theirs, text, piece, alternative, code_point", PLANTED)
def test_verify_split_names_the_piece_the_alternative_and_the_code_point(
    tmp_path, capsys, theirs, text, piece, alternative, code_point
):
    regex = import_regex_or_skip()
    their_pieces = regex.findall(theirs, text)
    report = compare_split([(0, text.encode("utf-8"))], [p.encode("utf-8") for p in their_pieces])
    d = report["difference"]
    assert not report["identical"] and d["piece"] == piece
    assert d["alternative"]["index"] == alternative
    assert d["code_point"]["code_point"] == code_point
    corpus = write_file(tmp_path / "c.txt", text)
    path = str(tmp_path / "theirs.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(json.dumps(p) + "\n" for p in their_pieces))
    code, out, _ = run_main(capsys, "verify", corpus, "--split", path)
    assert code == 1 and ("DIFFERENT at piece %d" % piece) in out and code_point in out


@settings(max_examples=examples(40), deadline=None)
@given(texts)
def test_verify_split_finds_nothing_in_the_patterns_own_pieces(tmp_path_factory, text):
    pieces = whole_scan(text, "gpt2")
    segments = [
        (0, s) for s, sp in split_specials(text.encode("utf-8"), special_pattern([EOT], True)) if not sp
    ]
    assert compare_split(segments, pieces)["identical"]
    if pieces:
        report = compare_split(segments, pieces[:-1])
        assert report["difference"]["piece"] == len(pieces) - 1 and report["difference"]["theirs"] is None


@settings(max_examples=examples(60), deadline=None)
@given(texts, st.booleans(), st.booleans())
def test_split_lines_are_json_dumps_of_each_piece(text, as_hex, with_offsets):
    from refbpe.corpus.pretokens import split_chunk_lines

    data = text.encode("utf-8")
    lines = split_chunk_lines(
        data, 5, "t", "strict", None, special_pattern([EOT], True), as_hex, with_offsets
    )
    expected = []
    at = 5
    for segment, is_special in split_specials(data, special_pattern([EOT], True)):
        if not is_special:
            start = 0
            for end in get_pattern("gpt2").piece_ends(segment):
                piece = segment[start:end]
                value = piece.hex() if as_hex else piece.decode("utf-8")
                item = [at + start, value] if with_offsets else value
                expected.append(json.dumps(item, ensure_ascii=False) + "\n")
                start = end
        at += len(segment)
    assert lines.decode("utf-8") == "".join(expected)


@pytest.mark.parametrize("as_hex, with_offsets", [(False, False), (True, False), (False, True)])
def test_split_lines_escape_exactly_what_json_dumps_escapes(as_hex, with_offsets):
    from refbpe.corpus.pretokens import split_chunk_lines

    # every ASCII character, alone and in runs of its class, and the characters JSON might be
    # thought to escape without ensure_ascii (DEL, U+2028, U+2029, U+FEFF, a non-BMP letter)
    chars = [chr(c) for c in range(128)] + ["\u2028", "\u2029", "\ufeff", "\U0001d400", "\u00e9"]
    text = "".join(c + " x" + c * 3 + "'s" for c in chars)
    data = text.encode("utf-8")
    lines = split_chunk_lines(data, 0, "t", "strict", None, None, as_hex, with_offsets)
    expected, start = [], 0
    for end in get_pattern("gpt2").piece_ends(data):
        piece = data[start:end]
        value = piece.hex() if as_hex else piece.decode("utf-8")
        item = [start, value] if with_offsets else value
        expected.append(json.dumps(item, ensure_ascii=False) + "\n")
        start = end
    assert lines == "".join(expected).encode("utf-8")
