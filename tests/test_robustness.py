"""Bad input gets one line on stderr and exit status 2, with nothing written;
faults (a killed worker, Ctrl-C, SIGTERM, a full disk) end the run promptly,
leave no process behind and no partial output.

The catalogue below is the contract: each case names the exact first words of
the message a user sees.
"""

import builtins
import gzip
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

import pytest
from support import (
    IS_PYPY,
    REPO_ROOT,
    assert_one_line_error,
    processes,
    read_outputs,
    run_cli,
    run_main,
    session_processes,
    start_train,
    write_file,
)

from refbpe.cli import train as train_cli

EOT = "<|endoftext|>"


# -- training inputs ---------------------------------------------------------------


def _gz(data):
    return gzip.compress(data, mtime=0)


TRAIN_CASES = [
    # (id, files to make {name: bytes}, arguments after 'train', expected message)
    ("missing file", {}, ["nope.txt", "--vocab-size", "300"], r"refbpe: error: nope\.txt: no such file$"),
    ("directory", {}, ["adir", "--vocab-size", "300"], r"refbpe: error: adir: is a directory, not a file$"),
    (
        "invalid UTF-8",
        {"bad.txt": b"hello\nwor\xffld\n"},
        ["bad.txt", "--vocab-size", "300"],
        r"refbpe: error: bad\.txt: invalid UTF-8 at byte offset 9$",
    ),
    (
        "truncated UTF-8 at the end",
        {"cut.txt": "caf\u00e9 \u20ac".encode()[:-1]},
        ["cut.txt", "--vocab-size", "300"],
        r"refbpe: error: cut\.txt: invalid UTF-8 at byte offset 6$",
    ),
    (
        "corrupt gzip",
        {"bad.gz": b"this is not gzip data"},
        ["bad.gz", "--vocab-size", "300"],
        r"refbpe: error: bad\.gz: corrupt or truncated gzip data \(Not a gzipped file",
    ),
    (
        "truncated gzip",
        {"cut.gz": _gz(b"hello world\n" * 1000)[:40]},
        ["cut.gz", "--vocab-size", "300"],
        r"refbpe: error: cut\.gz: corrupt or truncated gzip data \(Compressed file ended",
    ),
    (
        "vocab size below 256 + specials",
        {"ok.txt": b"hi"},
        ["ok.txt", "--vocab-size", "256", "--special-token", EOT],
        r"refbpe: error: vocab_size 256 is below the minimum 257 \(256 bytes \+ 1 special tokens\)$",
    ),
    (
        "vocab size negative",
        {"ok.txt": b"hi"},
        ["ok.txt", "--vocab-size", "-5"],
        r"refbpe train: error: argument --vocab-size: must be positive, got -5 "
        r"\(see 'refbpe train --help'\)$",
    ),
    (
        "vocab size not a number",
        {"ok.txt": b"hi"},
        ["ok.txt", "--vocab-size", "lots"],
        r"refbpe train: error: argument --vocab-size: expected an integer, got 'lots'",
    ),
    (
        "vocab size missing",
        {"ok.txt": b"hi"},
        ["ok.txt"],
        r"refbpe train: error: the following arguments are required: --vocab-size",
    ),
    (
        "empty special token",
        {"ok.txt": b"hi"},
        ["ok.txt", "--vocab-size", "300", "--special-token", ""],
        r"refbpe: error: special tokens must be non-empty strings, got ''$",
    ),
    (
        "duplicate special token",
        {"ok.txt": b"hi"},
        ["ok.txt", "--vocab-size", "300", "--special-token", EOT, "--special-token", EOT],
        r"refbpe: error: special token '<\|endoftext\|>' is given twice$",
    ),
    (
        "workers 0",
        {"ok.txt": b"hi"},
        ["ok.txt", "--vocab-size", "300", "--workers", "0"],
        r"refbpe train: error: argument --workers: must be positive, got 0",
    ),
    (
        "workers not a number",
        {"ok.txt": b"hi"},
        ["ok.txt", "--vocab-size", "300", "--workers", "two"],
        r"refbpe train: error: argument --workers: expected an integer, got 'two'",
    ),
    (
        "chunk size nonsense",
        {"ok.txt": b"hi"},
        ["ok.txt", "--vocab-size", "300", "--chunk-size", "4Q"],
        r"refbpe train: error: argument --chunk-size: invalid size '4Q' "
        r"\(expected e\.g\. 4194304, 512K, 4M, 1G\)",
    ),
    (
        "chunk size zero",
        {"ok.txt": b"hi"},
        ["ok.txt", "--vocab-size", "300", "--chunk-size", "0"],
        r"refbpe train: error: argument --chunk-size: size must be positive, got '0'",
    ),
    (
        "a pattern re may backtrack on exponentially, too large to run linearly",
        {"ok.txt": b"hi"},
        ["ok.txt", "--vocab-size", "300", "--pattern-regex", r"(?:a|aa){3000}|\s+|\S"],
        r"refbpe train: error: argument --pattern-regex: the split pattern repeats a group that can match "
        r"in more than one way, .* is too large for the matcher that runs such repeats in linear time: re "
        r"could take time exponential in the text on it; make the group atomic, \(\?>a\|aa\)\+",
    ),
    (
        "no input",
        {},
        ["--vocab-size", "300"],
        r"refbpe: error: no input: give CORPUS files, --counts FILE\.\.\. or --stdlib$",
    ),
    (
        "unknown option",
        {"ok.txt": b"hi"},
        ["ok.txt", "--vocab-size", "300", "--vocab", "3"],
        r"refbpe train: error: unknown option --vocab \(did you mean --vocab-size\?\) "
        r"\(see 'refbpe train --help'\)$",
    ),
]


@pytest.mark.parametrize("case", TRAIN_CASES, ids=[c[0] for c in TRAIN_CASES])
def test_bad_training_input(tmp_path, capsys, monkeypatch, case):
    _, files, args, expected = case
    monkeypatch.chdir(tmp_path)
    os.mkdir("adir")
    for name, data in files.items():
        write_file(name, data)
    status, _, err = run_main(capsys, *["train"] + args + ["--out", "model"])
    assert_one_line_error(status, err, expected)
    assert not os.path.exists("model")


def test_unreadable_input(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_file("secret.txt", b"hello")
    os.chmod(path, 0)
    if os.geteuid() == 0:  # root reads any file: make the open fail as it would for a user
        real_open = builtins.open

        def denying_open(file, *args, **kwargs):
            if os.path.abspath(str(file)) == os.path.abspath(path):
                raise PermissionError(13, "Permission denied", file)
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", denying_open)
    status, _, err = run_main(capsys, *["train", path, "--vocab-size", "300", "--out", "model"])
    assert_one_line_error(status, err, r"refbpe: error: secret\.txt: cannot read \(Permission denied\)$")
    assert not os.path.exists("model")


OUT_CASES = [
    (
        "an existing file",
        lambda: write_file("taken", b"x"),
        "taken",
        r"refbpe: error: --out taken: exists and is not a directory$",
    ),
    (
        "under a file",
        lambda: write_file("taken", b"x"),
        "taken/model",
        r"refbpe: error: --out taken/model: cannot create a directory under the file .*taken$",
    ),
    (
        "unwritable",
        lambda: None,
        "/proc/refbpe-out",
        r"refbpe: error: --out /proc/refbpe-out: cannot write there \(",
    ),
]


@pytest.mark.parametrize("case", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_bad_output_directory_is_refused_before_any_work(tmp_path, capsys, monkeypatch, case):
    _, make, out, expected = case
    monkeypatch.chdir(tmp_path)
    make()
    corpus = write_file("ok.txt", b"hello hello world\n")
    status, _, err = run_main(capsys, *["train", corpus, "--vocab-size", "300", "--out", out])
    assert_one_line_error(status, err, expected)


def test_read_only_output_directory(tmp_path, capsys, monkeypatch):
    if os.geteuid() == 0:
        pytest.skip("root can write into a read-only directory; the /proc case covers an unwritable --out")
    monkeypatch.chdir(tmp_path)
    os.mkdir("ro")
    os.chmod("ro", 0o555)
    corpus = write_file("ok.txt", b"hello hello world\n")
    status, _, err = run_main(capsys, *["train", corpus, "--vocab-size", "300", "--out", "ro/model"])
    assert_one_line_error(
        status, err, r"refbpe: error: --out ro/model: cannot write there \(Permission denied\)$"
    )


def test_valid_but_degenerate_inputs(tmp_path, capsys, monkeypatch):
    """An empty file, a file of only special tokens and a vocab size beyond every
    possible merge are valid: the run stops early, quickly, and says so."""
    monkeypatch.chdir(tmp_path)
    write_file("empty.txt", b"")
    write_file("specials.txt", EOT * 100)
    write_file("small.txt", "hello world, hello again\n" * 50)
    from refbpe import train_bpe

    possible = len(train_bpe("small.txt", 100000, [EOT], workers=1)[1])
    assert 0 < possible < 100
    for corpus, merges in (("empty.txt", 0), ("specials.txt", 0), ("small.txt", possible)):
        start = time.time()
        status, _, err = run_main(
            capsys,
            "train",
            corpus,
            "--vocab-size",
            "1000000",
            "--special-token",
            EOT,
            "--out",
            corpus + ".model",
            "--workers",
            "1",
        )
        assert status == 0, err
        assert time.time() - start < 10
        assert "note: stopped early after %d of 999743 merges: no pair left to merge" % merges in err
        manifest = json.load(open(os.path.join(corpus + ".model", "refbpe.json")))
        assert manifest["num_merges"] == merges and manifest["vocab_size"] == 257 + merges


# -- model files -------------------------------------------------------------------------


@pytest.fixture()
def model_dir(tmp_path):
    from refbpe import train_bpe
    from refbpe.formats import write_model_dir

    corpus = write_file(tmp_path / "c.txt", "low lower lowest newer wider<|endoftext|>low low\n")
    vocab, merges = train_bpe(corpus, 270, [EOT], workers=1)
    directory = str(tmp_path / "model")
    write_model_dir(directory, vocab, merges, [EOT])
    return directory


def _edit(directory, name, change):
    path = os.path.join(directory, name)
    text = open(path, encoding="utf-8").read()
    write_file(path, change(text))


def _merges_line(directory, k):
    return open(os.path.join(directory, "merges.txt"), encoding="utf-8").read().split("\n")[k]


MODEL_CASES = [
    (
        "vocab not JSON",
        "vocab.json",
        lambda t: t[:-1] + ",\n",
        r"refbpe: error: .*vocab\.json:2: not valid JSON \(",
    ),
    (
        "vocab not an object",
        "vocab.json",
        lambda t: "[1, 2]",
        r"refbpe: error: .*vocab\.json:1: expected a JSON object of token -> id$",
    ),
    (
        "vocab id not an integer",
        "vocab.json",
        lambda t: t.replace('"l": 108', '"l": "108"'),
        r"refbpe: error: .*vocab\.json:1: the id of token 'l' is not a non-negative integer: '108'$",
    ),
    (
        "vocab duplicate id",
        "vocab.json",
        lambda t: t.replace('"l": 108', '"l": 111'),
        r"refbpe: error: .*vocab\.json:1: id 111 is given to two tokens, 'l' and 'o'$",
    ),
    (
        "vocab duplicate token",
        "vocab.json",
        lambda t: t[:-1] + ',\n"l": 9999}',
        r"refbpe: error: .*vocab\.json:2: token 'l' appears twice$",
    ),
    (
        "vocab not UTF-8",
        "vocab.json",
        lambda t: t.encode("utf-8").replace(b'"l"', b'"\xff"'),
        r"refbpe: error: .*vocab\.json:1: not UTF-8 \(byte offset \d+\)$",
    ),
    (
        "merges line with three fields",
        "merges.txt",
        lambda t: t.replace("\n", "\nl o w\n", 1),
        r"refbpe: error: .*merges\.txt:2: expected two tokens separated by one space, got 'l o w'$",
    ),
    (
        "merges line with one field",
        "merges.txt",
        lambda t: t + "low\n",
        r"refbpe: error: .*merges\.txt:\d+: expected two tokens separated by one space, got 'low'$",
    ),
    (
        "merge of an unknown token",
        "merges.txt",
        lambda t: t.replace("\n", "\nzq x\n", 1),
        r"refbpe: error: .*merges\.txt:2: merge zq x uses zq, which is not in .*vocab\.json$",
    ),
    (
        "merge whose result is not a token",
        "merges.txt",
        lambda t: t.replace("\n", "\nq z\n", 1),
        r"refbpe: error: .*merges\.txt:2: merge q z uses qz, which is not in .*vocab\.json$",
    ),
    (
        "manifest not JSON",
        "refbpe.json",
        lambda t: "{'special_tokens': []}",
        r"refbpe: error: .*refbpe\.json:1: not valid JSON \(",
    ),
    (
        "manifest special token on a taken id",
        "refbpe.json",
        lambda t: t.replace('"id": 269', '"id": 5'),
        r"refbpe: error: .*refbpe\.json:\d+: special token '<\|endoftext\|>' has id 5, "
        r"which vocab\.json gives to b'\\x05'$",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("command", ["encode", "decode"])
@pytest.mark.parametrize("case", MODEL_CASES, ids=[c[0] for c in MODEL_CASES])
def test_invalid_model_files_name_file_and_line(tmp_path, capsys, model_dir, case, command):
    _, name, change, expected = case
    _edit(model_dir, name, change)
    arg = write_file(tmp_path / "input", "low" if command == "encode" else "1 2 3")
    status, out, err = run_main(capsys, *[command, model_dir, arg])
    assert_one_line_error(status, err, expected)
    assert out == ""


def test_model_directory_missing_files(tmp_path, capsys):
    text = write_file(tmp_path / "t.txt", "hi")
    status, _, err = run_main(capsys, *["encode", str(tmp_path), text])
    assert_one_line_error(
        status,
        err,
        r"refbpe: error: .*: missing vocab\.json \(expected a directory written by 'refbpe train'\)$",
    )


DECODE_CASES = [
    (
        "unknown id",
        "5 99999 6",
        r"refbpe: error: .*ids: unknown token id 99999 \(at position 1; the vocab has 270 ids, 0\.\.269\)$",
    ),
    ("negative id", "[5, -1]", r"refbpe: error: .*ids: unknown token id -1 \(at position 1;"),
    (
        "not integers",
        "5 six",
        r"refbpe: error: .*ids: expected whitespace-separated integers or a JSON list of integers$",
    ),
    (
        "JSON of strings",
        '["5"]',
        r"refbpe: error: .*ids: expected whitespace-separated integers or a JSON list of integers$",
    ),
]


@pytest.mark.parametrize("case", DECODE_CASES, ids=[c[0] for c in DECODE_CASES])
def test_decode_bad_ids(tmp_path, capsys, model_dir, case):
    _, ids, expected = case
    status, out, err = run_main(capsys, *["decode", model_dir, write_file(tmp_path / "ids", ids)])
    assert_one_line_error(status, err, expected)
    assert out == ""


def test_encode_missing_or_invalid_text(tmp_path, capsys, model_dir):
    status, _, err = run_main(capsys, *["encode", model_dir, str(tmp_path / "nope.txt")])
    assert_one_line_error(status, err, r"refbpe: error: .*nope\.txt: no such file$")
    status, _, err = run_main(capsys, *["encode", model_dir, write_file(tmp_path / "bad.txt", b"ok \xc3(")])
    assert_one_line_error(status, err, r"refbpe: error: .*bad\.txt: invalid UTF-8 at byte offset 3$")


def test_model_files_are_data_never_code(tmp_path, capsys, model_dir):
    """Tokens that look like Python are tokens; no reader uses pickle, marshal, eval or exec."""
    marker = tmp_path / "pwned"
    payload = "__import__('os').system('touch %s')" % marker
    for name in ("vocab.json", "refbpe.json"):
        _edit(model_dir, name, lambda t: t.replace(EOT, payload.replace("'", "\\u0027")))
    status, out, err = run_main(capsys, *["encode", model_dir, write_file(tmp_path / "t.txt", payload)])
    assert status == 0, err
    assert not marker.exists()
    forbidden = re.compile(
        r"\b(pickle\.loads?|marshal\.loads?|(?<!literal_)eval|exec)\s*\(|\bimport (pickle|marshal)\b"
    )
    package = os.path.join(REPO_ROOT, "refbpe")
    for name in os.listdir(package):
        if name.endswith(".py"):
            source = open(os.path.join(package, name), encoding="utf-8").read()
            assert not forbidden.search(source), name


# -- faults: killed workers, signals, full disks ---------------------------------------------

# Input big enough that counting with two workers takes a few seconds on either interpreter.
_BIG_MB = 96 if IS_PYPY else 32


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory):
    import random

    rng = random.Random(7)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 9)))
        for _ in range(5000)
    ]
    block = "".join(
        " ".join(rng.choice(words) for _ in range(rng.randint(3, 15))) + (".\n" if k % 7 else ".\n" + EOT)
        for k in range(20000)
    ).encode("utf-8")
    path = str(tmp_path_factory.mktemp("big") / "big.txt")
    with open(path, "wb") as f:
        written = 0
        while written < _BIG_MB << 20:
            f.write(block)
            written += len(block)
    return path


_TRAIN_2000 = ("--vocab-size", "2000", "--special-token", EOT)


def _wait_for_workers(proc, count, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        workers = [pid for pid, _ in processes(lambda f: int(f[1]) == proc.pid)]
        if len(workers) >= count:
            return workers
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the workers did not start")


def _finish(proc, timeout=20):
    """(exit status, stderr, seconds taken), and no process of the run left."""
    start = time.time()
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError("the run did not end within %d s of the fault" % timeout)
    took = time.time() - start
    deadline = time.time() + 5
    while session_processes(proc.pid) and time.time() < deadline:
        time.sleep(0.05)
    assert session_processes(proc.pid) == [], "orphan processes left"
    return proc.returncode, err.decode("utf-8", "replace"), took


def _ends_cleanly(err, message):
    """The message stands on a line of its own: any status line was erased first."""
    return err.endswith("\r\x1b[K" + message + "\n") or err == message + "\n"


@pytest.mark.slow
def test_killed_worker_fails_fast_with_a_clear_message(tmp_path, big_corpus):
    out = str(tmp_path / "model")
    proc = start_train(big_corpus, out, *_TRAIN_2000, "--workers", "3", "--chunk-size", "1M")
    workers = _wait_for_workers(proc, 2)  # the pool's two (the main process counts too)
    time.sleep(0.3)
    os.kill(workers[-1], signal.SIGKILL)
    status, err, took = _finish(proc)
    assert status == 1, err
    assert _ends_cleanly(
        err,
        "refbpe: error: a counting worker process died (killed by a signal, or out of memory); "
        "nothing was written",
    ), err
    assert "Traceback" not in err
    assert took < 10
    assert not os.path.exists(out)


def test_spool_directory_is_removed_however_counting_ends(tmp_path, monkeypatch):
    """Worker results travel through files (refbpe/spool.py); none outlives the run."""
    from refbpe.corpus import spool
    from refbpe.corpus.count import InputError, count_words

    spool_root = str(tmp_path / "spool")
    os.mkdir(spool_root)
    monkeypatch.setattr(spool, "PARENT", spool_root)
    good = write_file(tmp_path / "good.txt", ("some text here\n" * 5000) + EOT + "more\n")
    bad = write_file(tmp_path / "bad.txt", ("some text here\n" * 5000).encode() + b"\xff\n")
    with gzip.open(str(tmp_path / "good.gz"), "wb") as f:
        f.write(open(good, "rb").read())
    expected = count_words(good, [EOT], workers=1)
    os.utime(spool_root, ns=(0, 0))
    assert count_words([good], [EOT], workers=2, chunk_size=4096) == expected
    assert os.stat(spool_root).st_mtime_ns != 0  # a spool directory was made (and removed) there
    assert count_words([str(tmp_path / "good.gz")], [EOT], workers=2, chunk_size=4096) == expected
    with pytest.raises(InputError):
        count_words([bad], [EOT], workers=2, chunk_size=4096)
    assert os.listdir(spool_root) == []


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_signal_during_counting(tmp_path, big_corpus, sig):
    out = str(tmp_path / "model")
    proc = start_train(big_corpus, out, *_TRAIN_2000, "--workers", "3", "--chunk-size", "1M")
    _wait_for_workers(proc, 2)  # the pool's two (the main process counts too)
    time.sleep(0.3)
    if sig == "SIGINT":
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole group
    else:
        os.kill(proc.pid, signal.SIGTERM)
    status, err, took = _finish(proc)
    assert status == 128 + getattr(signal, sig)
    assert _ends_cleanly(err, "refbpe: interrupted" if sig == "SIGINT" else "refbpe: terminated"), err
    assert "Traceback" not in err
    assert took < 10
    assert not os.path.exists(out)


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_signal_during_merging(tmp_path, sig):
    import random

    rng = random.Random(3)
    corpus = write_file(
        tmp_path / "words.txt",
        " ".join(
            "".join(rng.choice("abcdefghijklmnopqrstuvwxyz\u00e9\u00fc") for _ in range(rng.randint(2, 12)))
            for _ in range(150000)
        ),
    )
    out = str(tmp_path / "model")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "refbpe",
            "train",
            corpus,
            "--vocab-size",
            "60000",
            "--out",
            out,
            "--workers",
            "1",
            "--progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    seen = b""
    deadline = time.time() + 120
    while b"merges" not in seen and time.time() < deadline:  # the merge phase's progress line
        chunk = os.read(proc.stderr.fileno(), 4096)
        assert chunk, "the run ended before merging: %r" % seen
        seen += chunk
    os.killpg(proc.pid, getattr(signal, sig))
    status, err, took = _finish(proc)
    assert status == 128 + getattr(signal, sig), seen + err.encode()
    assert "Traceback" not in err
    assert took < 10
    assert not os.path.exists(out)


def _limit_file_size(limit):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.slow
def test_full_disk_keeps_previous_outputs(tmp_path):
    """A write that fails part-way (the file-size limit stands in for a full disk)
    leaves the previous outputs byte for byte, and no temporary file."""
    text = "".join("word%d another%d and more text %d\n" % (k % 97, k % 89, k) for k in range(3000))
    corpus = write_file(tmp_path / "c.txt", text)
    out = str(tmp_path / "model")
    first = run_cli(["train", corpus, "--vocab-size", "300", "--special-token", EOT, "--out", out, "--quiet"])
    assert first.returncode == 0, first.stderr
    before = read_outputs(out)
    from refbpe import train_bpe
    from refbpe.formats.gpt2_files import gpt2_vocab_json

    limit = 8 << 10
    new_vocab = train_bpe(corpus, 1200, [EOT], workers=1)[0]
    assert len(gpt2_vocab_json(new_vocab).encode("utf-8")) > limit  # so the new vocab.json fails part-way
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    second = subprocess.run(
        [
            sys.executable,
            "-m",
            "refbpe",
            "train",
            corpus,
            "--vocab-size",
            "1200",
            "--special-token",
            EOT,
            "--out",
            out,
            "--quiet",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=_limit_file_size(limit),
        timeout=300,
    )
    err = second.stderr.decode()
    assert_one_line_error(
        second.returncode,
        err,
        r"refbpe: error: cannot write .*vocab\.json \(File too large\); the previous files are unchanged$",
    )
    assert read_outputs(out) == before
    assert sorted(os.listdir(out)) == ["merges.txt", "refbpe.json", "vocab.json"]


@pytest.fixture()
def small_filesystem(tmp_path):
    """A 128 KiB tmpfs mounted for the test (needs root; skipped elsewhere)."""
    mount_point = str(tmp_path / "fs")
    os.mkdir(mount_point)
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", mount_point],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    if r.returncode != 0:
        pytest.skip(
            "cannot mount a small tmpfs here (%s); the file-size-limit test covers a failed write"
            % (r.stderr.decode().strip() or "mount failed")
        )
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", mount_point])


@pytest.mark.slow
def test_full_filesystem_keeps_previous_outputs(tmp_path, small_filesystem):
    """A real full disk (ENOSPC) while writing: previous outputs intact, no temporary file."""
    text = "".join("word%d another%d and more text %d\n" % (k % 97, k % 89, k) for k in range(3000))
    corpus = write_file(tmp_path / "c.txt", text)
    out = os.path.join(small_filesystem, "model")
    first = run_cli(["train", corpus, "--vocab-size", "300", "--special-token", EOT, "--out", out, "--quiet"])
    assert first.returncode == 0, first.stderr
    before = read_outputs(out)
    stat = os.statvfs(small_filesystem)
    free = stat.f_bavail * stat.f_frsize
    write_file(os.path.join(small_filesystem, "filler"), b"\0" * max(0, free - (12 << 10)))  # leave 12 KiB
    second = run_cli(
        ["train", corpus, "--vocab-size", "1200", "--special-token", EOT, "--out", out, "--quiet"]
    )
    assert_one_line_error(
        second.returncode,
        second.stderr.decode(),
        r"refbpe: error: cannot write .*vocab\.json \(No space left on device\); "
        r"the previous files are unchanged$",
    )
    assert read_outputs(out) == before
    assert sorted(os.listdir(out)) == ["merges.txt", "refbpe.json", "vocab.json"]


def test_failed_write_leaves_no_new_directory_and_old_files_intact(tmp_path, monkeypatch):
    from refbpe import formats
    from refbpe._util import atomic

    def no_space(fd):
        raise OSError(28, "No space left on device")

    byte_vocab = {i: bytes([i]) for i in range(256)}
    old = str(tmp_path / "old")
    formats.write_model_dir(old, byte_vocab, [], [])
    before = read_outputs(old)
    monkeypatch.setattr(atomic.os, "fsync", no_space)
    new = str(tmp_path / "new")
    with pytest.raises(OSError):
        formats.write_model_dir(new, byte_vocab, [], [])
    assert not os.path.exists(new)
    with pytest.raises(OSError):
        formats.write_model_dir(old, dict(list(byte_vocab.items()) + [(256, b"ab")]), [(b"a", b"b")], [])
    assert read_outputs(old) == before
    assert sorted(os.listdir(old)) == ["merges.txt", "refbpe.json", "vocab.json"]


def test_large_pieces_are_written_in_order_and_in_full_after_short_writes(tmp_path, monkeypatch):
    from refbpe._util import atomic

    big = atomic._RAW_PIECE
    pieces = [b"a", b"b" * big, b"c" * 10, b"d" * (3 * big + 1), b"e"]
    path = str(tmp_path / "f")
    atomic.atomic_write(path, iter(pieces))
    with open(path, "rb") as f:
        assert f.read() == b"".join(pieces)

    class ShortWrites(object):  # the file, its raw part taking at most 1000 bytes per call
        def __init__(self, f):
            self.f, self.raw = f, self
            self.write, self.flush, self.fileno = f.write, f.flush, f.fileno

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write_raw(self, data):
            return self.f.raw.write(bytes(data[:1000]))

    opened = os.fdopen

    def fdopen(fd, mode):
        short = ShortWrites(opened(fd, mode))
        short.raw = type("Raw", (), {"write": staticmethod(short.write_raw)})()
        return short

    monkeypatch.setattr(atomic.os, "fdopen", fdopen)
    atomic.atomic_write(path, pieces)
    with open(path, "rb") as f:
        assert f.read() == b"".join(pieces)


def test_other_outputs_are_checked_before_work(tmp_path, capsys, monkeypatch, model_dir):
    monkeypatch.chdir(tmp_path)
    os.mkdir("adir")
    corpus = write_file("ok.txt", b"hello hello world\n")
    status, _, err = run_main(
        capsys, *["train", corpus, "--vocab-size", "300", "--out", "m", "--report", "adir"]
    )
    assert_one_line_error(status, err, r"refbpe: error: --report adir: is a directory$")
    status, _, err = run_main(
        capsys, "train", corpus, "--vocab-size", "300", "--out", "m", "--report", "/proc/r.json"
    )
    assert_one_line_error(status, err, r"refbpe: error: --report /proc/r\.json: /proc: cannot write there \(")
    assert not os.path.exists("m")
    status, _, err = run_main(capsys, *["convert", model_dir, "--to", "hf", "-o", "/proc/t.json"])
    assert_one_line_error(status, err, r"refbpe: error: -o /proc/t\.json: /proc: cannot write there \(")
    _edit(model_dir, "merges.txt", lambda t: t + "zq x\n")
    status, _, err = run_main(capsys, *["convert", model_dir, "--to", "hf", "-o", "t.json"])
    assert_one_line_error(
        status, err, r"refbpe: error: .*merges\.txt:\d+: merge zq x uses zq, which is not in .*vocab\.json$"
    )
    assert not os.path.exists("t.json")


@pytest.mark.slow
@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_reader_going_away_ends_encode_quietly(tmp_path, model_dir, unbuffered):
    """``refbpe encode ... | head``: exit 141 (SIGPIPE's status) and no message."""
    text = write_file(tmp_path / "t.txt", "low lower lowest newer wider " * 400000)
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, PYTHONUNBUFFERED=unbuffered)
    proc = subprocess.Popen(
        [sys.executable, "-m", "refbpe", "encode", model_dir, text],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout.read(4) != b""
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err
    assert err == b""


def test_out_of_memory_is_one_line(tmp_path, capsys, monkeypatch):
    import refbpe.cli.train

    def exhausted(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(refbpe.cli.train, "train_corpus", exhausted)
    corpus = write_file(tmp_path / "ok.txt", b"hello")
    status, _, err = run_main(capsys, *["train", corpus, "--vocab-size", "300", "--out", str(tmp_path / "m")])
    assert status == 1
    assert err == "refbpe: error: out of memory; nothing was written\n"
    assert not os.path.exists(str(tmp_path / "m"))


def test_stdlib_sources_leave_out_modules_that_are_not_utf8(tmp_path, monkeypatch):
    (tmp_path / "plain.py").write_bytes("x = 'é'\n".encode("utf-8"))
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n")  # as PyPy's _md5.py
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_bytes(b"y = 1\n")
    monkeypatch.setattr(train_cli.sysconfig, "get_paths", lambda: {"stdlib": str(tmp_path)})
    assert train_cli.stdlib_sources() == [str(tmp_path / "pkg" / "mod.py"), str(tmp_path / "plain.py")]
