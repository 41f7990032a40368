"""One-line errors and reports that agree with their JSON, for the cases where they did not:
verify's --ids without --encode, --trace with --extend, an extension of another parent, and
output directories that cannot be made for fuzz and conformance."""

import json
import subprocess
import sys

import pytest

from refbpe import read_model, train_from_texts, write_model


def _refbpe(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "refbpe", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def _one_line_error(r, *fragments):
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("refbpe: error: ") and r.stderr.count("\n") == 1, r.stderr
    for f in fragments:
        assert f in r.stderr
    assert "Errno" not in r.stderr


def test_verify_ids_without_encode_says_what_is_missing(tmp_path):
    r = _refbpe("verify", "--ids", str(tmp_path / "x.npy"), "--against", "cl100k_base")
    _one_line_error(r, "--encode FILE")


def test_verify_trace_with_extend_is_refused_as_train_refuses_it(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower lowest newer wider\n" * 20)
    r = _refbpe("verify", str(corpus), "--vocab-size", "270", "--extend", "missing", "--trace", "t.jsonl")
    _one_line_error(r, "--trace", "--extend")


def test_an_extension_of_another_parent_is_reported_alike_in_text_and_json(tmp_path):
    text = ["low lower lowest newer wider " * 30, "the cat sat on the mat " * 30]
    ours_parent = write_model(str(tmp_path / "pa"), "gpt2", *train_from_texts(text[:1], 262), [])
    their_parent = write_model(str(tmp_path / "pb"), "gpt2", *train_from_texts(text[1:], 262), [])
    vocab, merges = train_from_texts(text, 280, extend=read_model(their_parent))
    theirs = write_model(str(tmp_path / "m"), "gpt2", vocab, merges, [])
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(text))
    args = ("verify", str(corpus), "--vocab-size", "280", "--extend", ours_parent, "--against", theirs)
    as_text, as_json = _refbpe(*args), _refbpe(*args, "--json")
    assert as_text.returncode == as_json.returncode == 1
    report = json.loads(as_json.stdout)
    fd = report["first_divergence"]
    assert fd["inherited"] is True
    assert "their merge %d is %s" % (fd["index"], fd["theirs"]["text"]) in as_text.stdout
    assert "inherited" in as_text.stdout and "differ in number only" not in as_text.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("conformance", "write", "afile/pack"),
        ("fuzz", "--train", "true {input} {out}", "--out", "afile/findings", "--budget", "1"),
    ],
)
def test_an_output_directory_under_a_file_is_a_one_line_error(tmp_path, args):
    pytest.importorskip("hypothesis")
    (tmp_path / "afile").write_text("")
    r = _refbpe(*args, cwd=tmp_path)
    _one_line_error(r, "afile")


def test_verify_split_of_an_endless_line_stops_at_the_longest_a_piece_can_be(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 100)
    r = _refbpe("verify", "--split", "/dev/zero", str(corpus))
    _one_line_error(r, "/dev/zero:1", "not a piece")


def test_a_ranks_file_with_one_huge_rank_costs_memory_by_its_size(tmp_path):
    """Tables are sized by the ids a file holds, not by its largest number: a 3 KB ranks file
    with a rank of 2,000,000,000 is read in a process limited to 1.5 GB of address space."""
    import base64

    path = tmp_path / "sparse.tiktoken"
    lines = ["%s %d" % (base64.b64encode(bytes([i])).decode(), i) for i in range(255)]
    lines.append("%s %d" % (base64.b64encode(b"\xff").decode(), 2_000_000_000))
    path.write_text("\n".join(lines) + "\n")
    text = tmp_path / "t.txt"
    text.write_bytes(b"hello\n")
    limit = "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (1500 << 20, 1500 << 20)); "
    for args, expected in (
        (["show", str(path), "hh", "--ids"], "104 104"),
        (["stats", str(path), str(text)], "6"),
    ):
        code = limit + "sys.argv = ['refbpe'] + %r; runpy.run_module('refbpe', run_name='__main__')" % args
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert expected in r.stdout


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("decode", "{model}", "/dev/zero"), "/dev/zero: expected .npy"),
        (("verify", "--encode", "{text}", "--ids", "/dev/zero", "--against", "{model}"), "expected .npy"),
        (
            ("train", "--counts", "/dev/zero", "--vocab-size", "300", "-o", "{out}"),
            "/dev/zero:1: expected count",
        ),
        (
            ("verify", "{text}", "--vocab-size", "300", "--trace", "/dev/zero"),
            "/dev/zero:1: not a trace record",
        ),
    ],
)
def test_an_endless_input_stops_at_its_first_bad_bytes(tmp_path, args, fragment):
    """Each reader checks the first bytes before reading on: /dev/zero is refused at once, in a
    process limited to 1 GB of address space (reading it whole would exceed that)."""
    text = tmp_path / "c.txt"
    text.write_text("low lower lowest newer wider\n" * 20)
    model = write_model(str(tmp_path / "m"), "gpt2", *train_from_texts([text.read_text()], 270), [])
    filled = [a.format(model=model, text=str(text), out=str(tmp_path / "out")) for a in args]
    code = (
        "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
        "sys.argv = ['refbpe'] + %r; runpy.run_module('refbpe', run_name='__main__')" % filled
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    _one_line_error(r, fragment)
    assert not (tmp_path / "out").exists()


def test_a_stream_read_whole_is_bounded():
    import io

    from refbpe._util.reading import bounded_lines, read_whole

    with pytest.raises(ValueError, match="more than 1 MiB from a stream"):
        read_whole(io.BytesIO(b"x" * (3 << 20)), "s", limit=1 << 20)
    assert read_whole(io.BytesIO(b"abc"), "s", limit=1 << 20) == b"abc"
    lines = list(bounded_lines(io.BytesIO(b"1\tab\n" + b"2\t" + b"c" * 200000 + b"\n"), "f", lambda s: True))
    assert lines == [b"1\tab\n", b"2\t" + b"c" * 200000 + b"\n"]
    with pytest.raises(ValueError, match="f:1: a line of over 1000 bytes"):
        list(bounded_lines(io.BytesIO(b"1" * 100000), "f", lambda s: True, longest=1000))
    assert list(bounded_lines(io.BytesIO(b"\0" * 100000), "f", lambda s: False))[0] == b"\0" * 65536


def test_dash_is_stdin_for_counts_traces_and_pieces(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower lowest newer wider\n" * 20)
    counts, trace, pieces = tmp_path / "c.counts.tsv", tmp_path / "t.jsonl", tmp_path / "p.jsonl"
    assert _refbpe("count", str(corpus), "-o", str(counts)).returncode == 0
    assert (
        _refbpe(
            "train", str(corpus), "--vocab-size", "270", "--trace", str(trace), "-o", str(tmp_path / "a")
        ).returncode
        == 0
    )
    assert _refbpe("split", str(corpus), "-o", str(pieces)).returncode == 0

    def piped(path, *args):
        with open(path, "rb") as f:
            return subprocess.run(
                [sys.executable, "-m", "refbpe", *args], stdin=f, capture_output=True, text=True, timeout=300
            )

    r = piped(counts, "train", "--counts", "-", "--vocab-size", "270", "-o", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "a" / "merges.txt").read_bytes() == (tmp_path / "b" / "merges.txt").read_bytes()
    r = piped(trace, "verify", str(corpus), "--vocab-size", "270", "--trace", "-")
    assert r.returncode == 0 and r.stdout.startswith("identical"), r.stdout + r.stderr
    r = piped(pieces, "verify", "--split", "-", str(corpus))
    assert r.returncode == 0 and r.stdout.startswith("identical"), r.stdout + r.stderr


def test_verify_split_stops_at_a_line_longer_than_any_piece(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 100)
    pieces = tmp_path / "p.jsonl"
    pieces.write_bytes(b'"' + b"a" * 200000)  # starts as a piece, never ends
    r = _refbpe("verify", "--split", str(pieces), str(corpus))
    _one_line_error(r, "p.jsonl:1: a line of over")
