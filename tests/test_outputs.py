"""Outputs respect what is at the path, and a command's outputs are committed together.

``-o`` onto a symlink replaces the link's target and keeps the link; onto a
FIFO or a character device it writes into it, leaving it what it was; onto a
0600 file keeps the mode.  A failure in any output of a command leaves every
old output unchanged, no temporary file and no new empty directory; every
failure is one line naming the file.  The ``.bin``/``.npy`` dtype is the
model's, and ``decode`` refuses a dtype too narrow for the model; a ranks file
with a negative rank or a gap is one line, never a traceback (``refbpe._util.atomic``,
``refbpe.corpus.idfile``, ``refbpe.formats.tiktoken``, ``refbpe.encodings.api``).
"""

import base64
import errno
import json
import os
import resource
import stat
import subprocess
import sys
import threading

import pytest
from support import REPO_ROOT, assert_one_line_error, read_outputs, run_cli, run_main, write_file

import refbpe
from refbpe import train_bpe
from refbpe._util import atomic
from refbpe.corpus.idfile import read_bin, read_npy
from refbpe.formats import encode_token, write_model_dir

EOT = "<|endoftext|>"
TEXT = ("The cat sat on the mat.\nDon't stop: 12 cats, 3 mats!\n" * 30 + EOT + "Привет, мир\n") * 3


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("model")
    corpus = write_file(d / "corpus.txt", TEXT)
    vocab, merges = train_bpe(corpus, 300, [EOT], workers=1)
    write_model_dir(str(d / "m"), vocab, merges, [EOT])
    return str(d / "m")


@pytest.fixture
def corpus(tmp_path):
    return write_file(tmp_path / "corpus.txt", TEXT)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _leftovers(directory):
    return [n for n in os.listdir(str(directory)) if n.endswith(".tmp")]


# -- what is at the path ---------------------------------------------------------


def _commands(model, corpus, out):
    """Each command that writes one file with -o / --report / --trace / --out, writing ``out``."""
    return {
        "encode": ["encode", model, corpus, "-o", out],
        "count": ["count", corpus, "-o", out],
        "split": ["split", corpus, "--out", out],
        "convert": ["convert", model, "--to", "json", "-o", out],
        "report": ["count", corpus, "-o", out + ".counts.tsv", "--report", out],
        "trace": ["train", corpus, "--vocab-size", "270", "-o", out + ".model", "--trace", out, "--quiet"],
    }


@pytest.mark.parametrize("command", ["encode", "count", "split", "convert", "report", "trace"])
def test_a_symlink_stays_a_link_and_its_target_is_replaced(tmp_path, model, corpus, capsys, command):
    expected = str(tmp_path / "plain.out")
    status, _, err = run_main(capsys, *_commands(model, corpus, expected)[command])
    assert status == 0, err
    target = write_file(tmp_path / "target.out", b"old")
    os.chmod(target, 0o600)
    link = str(tmp_path / "link.out")
    os.symlink("target.out", link)
    status, _, err = run_main(capsys, *_commands(model, corpus, link)[command])
    assert status == 0, err
    assert os.path.islink(link) and os.readlink(link) == "target.out"
    if command not in ("report", "trace"):  # their figures include seconds
        assert _read(target) == _read(expected)
    else:
        assert _read(target) != b"old" and _read(target).strip()
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert not _leftovers(tmp_path)


def test_a_0600_file_keeps_its_mode_and_a_new_file_is_0644(tmp_path, model, corpus, capsys):
    for name, kind in (("ids.npy", "npy"), ("ids.bin", "bin"), ("c.counts.tsv", "counts")):
        old = write_file(tmp_path / name, b"old")
        os.chmod(old, 0o600)
        argv = ["count", corpus, "-o", old] if kind == "counts" else ["encode", model, corpus, "-o", old]
        status, _, err = run_main(capsys, *argv)
        assert status == 0, err
        assert stat.S_IMODE(os.stat(old).st_mode) == 0o600 and _read(old) != b"old"
    new = str(tmp_path / "new.npy")
    assert run_main(capsys, "encode", model, corpus, "-o", new)[0] == 0
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o644


def _drain(path, into):
    with open(path, "rb") as f:
        into.append(f.read())


@pytest.mark.parametrize("name", ["ids.npy", "ids.bin", "ids.txt"])
def test_a_fifo_is_written_into_and_stays_a_fifo(tmp_path, model, corpus, capsys, name):
    expected = str(tmp_path / ("plain." + name))
    assert run_main(capsys, "encode", model, corpus, "-o", expected)[0] == 0
    fifo = str(tmp_path / name)
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=_drain, args=(fifo, got))
    reader.start()
    status, _, err = run_main(capsys, "encode", model, corpus, "-o", fifo)
    reader.join(60)
    assert status == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert got == [_read(expected)]
    assert not _leftovers(tmp_path)


def _null_device(tmp_path):
    """A character device like /dev/null made in ``tmp_path`` (needs root)."""
    path = str(tmp_path / "null")
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (OSError, AttributeError) as e:
        pytest.skip("cannot make a device node here (%s); needs root" % e)
    return path


@pytest.mark.parametrize("command", ["encode", "count", "split", "convert", "report", "trace"])
def test_a_character_device_is_written_into_and_stays_a_device(tmp_path, model, corpus, capsys, command):
    device = _null_device(tmp_path)
    status, _, err = run_main(capsys, *_commands(model, corpus, device)[command])
    assert status == 0, err
    assert stat.S_ISCHR(os.lstat(device).st_mode) and os.stat(device).st_rdev == os.makedev(1, 3)
    assert not _leftovers(tmp_path)


def test_dev_stdout_gets_the_ids(tmp_path, model, corpus):
    expected = str(tmp_path / "ids.txt")
    assert run_cli(["encode", model, corpus, "-o", expected, "--quiet"]).returncode == 0
    r = run_cli(["encode", model, corpus, "-o", "/dev/stdout", "--quiet"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == _read(expected)


# -- several outputs, one failure --------------------------------------------------


def _no_space_for(monkeypatch, suffix):
    """Writing any file whose name ends with ``suffix`` fails as a full disk does."""
    real = atomic._write_temporary

    def write_temporary(path, data):
        if str(path).endswith(suffix):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data)

    monkeypatch.setattr(atomic, "_write_temporary", write_temporary)


def test_train_with_a_trace_that_cannot_be_written_changes_no_output(tmp_path, corpus, capsys, monkeypatch):
    old = str(tmp_path / "m_old")
    trace = str(tmp_path / "t.jsonl")
    argv = ["train", corpus, "--special-token", EOT, "-o", old, "--trace", trace, "--quiet"]
    assert run_main(capsys, *(argv + ["--vocab-size", "270"]))[0] == 0
    before, trace_before = read_outputs(old), _read(trace)
    _no_space_for(monkeypatch, "t.jsonl")
    status, _, err = run_main(capsys, *(argv + ["--vocab-size", "290"]))
    assert_one_line_error(
        status,
        err,
        r"refbpe: error: cannot write .*t\.jsonl \(No space left on device\); "
        r"the previous files are unchanged$",
    )
    assert read_outputs(old) == before and _read(trace) == trace_before
    assert not _leftovers(old) and not _leftovers(tmp_path)


def test_encode_with_a_failing_report_leaves_the_ids(tmp_path, model, corpus, capsys, monkeypatch):
    ids = write_file(tmp_path / "ids.npy", b"old ids")
    _no_space_for(monkeypatch, "r.json")
    report = str(tmp_path / "r.json")
    status, _, err = run_main(capsys, "encode", model, corpus, "-o", ids, "--report", report)
    no_space = r"refbpe: error: cannot write .*r\.json \(No space left on device\); "
    assert_one_line_error(status, err, no_space)
    assert _read(ids) == b"old ids" and not _leftovers(tmp_path)


def test_a_failed_model_write_leaves_no_new_directory(tmp_path, corpus, capsys, monkeypatch):
    out = tmp_path / "new" / "deeper" / "model"
    _no_space_for(monkeypatch, "vocab.json")
    status, _, err = run_main(capsys, "train", corpus, "--vocab-size", "270", "-o", str(out), "--quiet")
    no_space = r"refbpe: error: cannot write .*vocab\.json \(No space left on device\)"
    assert_one_line_error(status, err, no_space)
    assert os.listdir(str(tmp_path)) == ["corpus.txt"]


def test_ctrl_c_while_writing_leaves_no_new_directory(tmp_path, corpus, capsys, monkeypatch):
    real = atomic._write_temporary

    def interrupted(path, data):
        if str(path).endswith("merges.txt"):
            raise KeyboardInterrupt
        return real(path, data)

    monkeypatch.setattr(atomic, "_write_temporary", interrupted)
    out = tmp_path / "new" / "model"
    status, _, _ = run_main(capsys, "train", corpus, "--vocab-size", "270", "-o", str(out), "--quiet")
    assert status == 130
    assert os.listdir(str(tmp_path)) == ["corpus.txt"]


def _limited(limit):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.parametrize("command", ["encode", "split"])
def test_a_full_disk_names_the_output(tmp_path, model, command):
    corpus = write_file(tmp_path / "big.txt", TEXT * 20)
    out = write_file(tmp_path / ("out.npy" if command == "encode" else "out.txt"), b"old")
    argv = ["encode", model, corpus, "-o", out] if command == "encode" else ["split", corpus, "--out", out]
    r = subprocess.run(
        [sys.executable, "-m", "refbpe"] + argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=REPO_ROOT),
        preexec_fn=_limited(4096),
        timeout=300,
    )
    too_large = r"refbpe: error: cannot write .*out\.\w+ \(File too large\); it is unchanged$"
    assert_one_line_error(r.returncode, r.stderr.decode(), too_large)
    assert _read(out) == b"old" and not _leftovers(tmp_path)


@pytest.mark.parametrize("command", ["train", "encode", "count"])
def test_a_special_token_that_is_not_utf8_names_the_option(tmp_path, model, command):
    corpus = write_file(tmp_path / "c.txt", TEXT)
    argv = {
        "train": ["train", corpus, "--vocab-size", "300", "-o", str(tmp_path / "m")],
        "encode": ["encode", model, corpus, "-o", str(tmp_path / "ids.npy")],
        "count": ["count", corpus, "-o", str(tmp_path / "c.tsv")],
    }[command]
    r = subprocess.run(
        [sys.executable.encode(), b"-m", b"refbpe"]
        + [a.encode() for a in argv]
        + [b"--special-token", b"a\xff"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=REPO_ROOT),
        timeout=120,
    )
    assert_one_line_error(
        r.returncode,
        r.stderr.decode(),
        r"refbpe %s: error: argument --special-token: not valid UTF-8 \(byte 0xff at offset 1\)" % command,
    )
    assert sorted(os.listdir(str(tmp_path))) == ["c.txt"]


# -- the dtype is the model's --------------------------------------------------------


def _big_id_model(tmp_path):
    """A tokenizer.json whose merge of 'a' and 'b' has id 70000."""
    vocab = {encode_token(bytes([b])): b for b in range(256)}
    vocab[encode_token(b"ab")] = 70000
    data = {"model": {"type": "BPE", "vocab": vocab, "merges": ["a b"]}, "added_tokens": []}
    return write_file(tmp_path / "tokenizer.json", json.dumps(data))


def test_the_dtype_follows_the_vocab_not_the_content(tmp_path, model, capsys):
    big = _big_id_model(tmp_path)
    small_ids = write_file(tmp_path / "small.txt", "xx yy")  # no id above 255
    with_ab = write_file(tmp_path / "ab.txt", "xx ab")
    for text in (small_ids, with_ab):
        for name in ("s.npy", "s.bin"):
            out = str(tmp_path / (os.path.basename(text) + name))
            status, _, err = run_main(capsys, "encode", big, text, "-o", out)
            assert status == 0 and "(uint32)" in err, err
            ids = read_npy(out) if name.endswith(".npy") else read_bin(out, "uint32")
            assert ids.itemsize == 4
    status, _, err = run_main(capsys, "encode", model, small_ids, "-o", str(tmp_path / "m.npy"))
    assert status == 0 and "(uint16)" in err


def test_decode_refuses_a_dtype_too_narrow_for_the_model(tmp_path, capsys):
    big = _big_id_model(tmp_path)
    out = str(tmp_path / "ids.bin")
    assert run_main(capsys, "encode", big, write_file(tmp_path / "t.txt", "xx ab"), "-o", out)[0] == 0
    status, _, err = run_main(capsys, "decode", big, out, "--dtype", "uint16")
    assert_one_line_error(
        status,
        err,
        r"refbpe: error: .*ids\.bin: --dtype uint16 cannot hold the model's ids "
        r"\(up to 70000\); its \.bin files are uint32$",
    )
    status, out_text, err = run_main(capsys, "decode", big, out, "--dtype", "uint32")
    assert status == 0 and out_text == "xx ab", err


# -- ranks files -----------------------------------------------------------------------


def _ranks_file(path, last_token, last_rank):
    lines = ["%s %d" % (base64.b64encode(bytes([i])).decode(), i) for i in range(256)]
    lines.append("%s %d" % (base64.b64encode(last_token).decode(), last_rank))
    return write_file(path, "\n".join(lines) + "\n")


@pytest.mark.parametrize(
    "argv", [["show", "{f}", "ab", "--ids"], ["encode", "{f}", "{t}", "-o", "{tmp}/i.npy"]]
)
def test_a_negative_rank_is_one_line(tmp_path, capsys, argv):
    ranks = _ranks_file(tmp_path / "neg.tiktoken", b"ab", -1)
    text = write_file(tmp_path / "t.txt", "ab ab")
    argv = [a.format(f=ranks, t=text, tmp=tmp_path) for a in argv]
    status, _, err = run_main(capsys, *argv)
    negative = r"refbpe: error: .*neg\.tiktoken: token b'ab' has the negative rank -1"
    assert_one_line_error(status, err, negative)


def test_a_gap_in_ranks_is_one_line_for_gpt2_and_kept_elsewhere(tmp_path, capsys):
    ranks = _ranks_file(tmp_path / "gap.tiktoken", b"ab", 257)
    out = str(tmp_path / "out")
    status, _, err = run_main(capsys, "convert", ranks, "--to", "gpt2", "-o", out)
    assert_one_line_error(
        status,
        err,
        r"refbpe: error: the gpt2 format numbers its tokens 0\.\.256, and this vocab has no id 256",
    )
    assert not os.path.exists(out)
    status, shown, err = run_main(capsys, "show", ranks, "ab", "--ids")
    assert status == 0 and shown.split()[-1] == "257", err


def test_encoding_refuses_a_negative_rank():
    ranks = {bytes([i]): i for i in range(256)}
    ranks[b"ab"] = -1
    with pytest.raises(ValueError, match=r"mergeable_ranks: b'ab' has id -1"):
        refbpe.Encoding("x", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    ranks[b"ab"] = 256
    with pytest.raises(ValueError, match=r"special_tokens: '<s>' has id -1"):
        refbpe.Encoding("x", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={"<s>": -1})
    enc = refbpe.Encoding("x", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    assert enc.encode("ab") == [256]
