"""The conformance pack: deterministic on every interpreter, checked against refbpe (passes) and the
planted bugs (fails, naming the case)."""

import hashlib
import json
import os
import subprocess
import sys

import pytest
from planted_trainers import FUZZ_BUGS
from support import HEAVY, IS_PYPY, REPO_ROOT, cs336_path, other_interpreter, run_main, target_python

from refbpe.testing import CLASSES

TESTS = os.path.dirname(os.path.abspath(__file__))
PLANTED = os.path.join(TESTS, "planted_trainers.py")
# bug -> the cases that expose it (every training case under the heavy profile)
CHECKED = {
    "int32-counts": "train-count-overflow-*",
    "smallest-bytes": "train-ties-*",
    "specials-as-text": "train-special-tokens-*",
}
if HEAVY:
    CHECKED = {bug: "train-*" for bug in FUZZ_BUGS if bug not in ("none", "hash-order")}


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    path = tmp_path_factory.mktemp("pack") / "pack"
    assert run_main_plain("conformance", "write", path) == 0
    return path


def run_main_plain(*argv):
    from refbpe.cli import main

    return main([str(a) for a in argv])


def _tree(path):
    out = {}
    for d, _, files in os.walk(str(path)):
        for f in files:
            full = os.path.join(d, f)
            with open(full, "rb") as fh:
                out[os.path.relpath(full, str(path))] = fh.read()
    return out


def test_the_pack_holds_200_cases_with_their_sha256s(pack):
    with open(str(pack / "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    assert manifest["format"] == "refbpe-conformance" and manifest["version"] == 1
    assert len(manifest["cases"]) >= 200
    kinds = {c["kind"] for c in manifest["cases"]}
    classes = {c["class"] for c in manifest["cases"]}
    assert kinds == {"train", "encode", "split"} and "count-overflow" in classes and "ties" in classes
    for case in manifest["cases"]:
        for name, digest in case["files"].items():
            with open(str(pack / case["name"] / name), "rb") as f:
                assert hashlib.sha256(f.read()).hexdigest() == digest
        assert "params.json" in case["files"]
        assert {"train": "expected.hex.json", "encode": "ids.json", "split": "pieces.json"}[
            case["kind"]
        ] in case["files"]


def test_writing_is_deterministic_on_every_interpreter(pack, tmp_path):
    again = tmp_path / "again"
    assert run_main_plain("conformance", "write", again) == 0
    assert _tree(again) == _tree(pack)
    exe = other_interpreter()
    if exe is None:
        pytest.skip("no second interpreter (PyPy from CPython, or CPython from PyPy) can import this refbpe")
    other = tmp_path / "other"
    r = subprocess.run(
        [exe, "-m", "refbpe", "conformance", "write", str(other)],
        env=dict(os.environ, PYTHONPATH=REPO_ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert r.returncode == 0, r.stderr
    assert _tree(other) == _tree(pack)


def test_cs336_fixtures_become_cases_refbpe_passes(tmp_path, capsys, monkeypatch):
    fixtures = cs336_path()
    path = tmp_path / "pack"
    assert run_main_plain("conformance", "write", path, "--cs336", fixtures) == 0
    names = os.listdir(str(path))
    assert "train-cs336-corpus" in names and "encode-cs336-address" in names
    monkeypatch.chdir(TESTS)
    for option, function in (
        ("--train-py", "peer_targets:refbpe_train"),
        ("--encode-py", "peer_targets:refbpe_encode"),
    ):
        status, out, err = run_main(
            capsys, "conformance", "check", path, option, function, "--cases", "*-cs336-*"
        )
        assert status == 0 and "PASS" in out, out + err


@pytest.mark.parametrize(
    "peer, profile, fmt", [("rustbpe", "rustbpe", "tiktoken"), ("tokenizers", "hf", "auto")]
)
def test_the_peers_pass_under_their_profiles(peer, profile, fmt, tmp_path, capsys):
    if IS_PYPY:
        pytest.skip("the peers are CPython extensions")
    pytest.importorskip(peer, reason="%s is not installed" % peer)
    path = tmp_path / "pack"
    assert run_main_plain("conformance", "write", path, "--profile", profile) == 0
    command = "%s %s train %s {input} {vocab_size} {out} {special_token}" % (
        sys.executable,
        os.path.join(TESTS, "peer_targets.py"),
        "rustbpe" if peer == "rustbpe" else "hf",
    )
    text_cases = "train-ties-00[01],train-special-tokens-00[01],train-random-00[01]"
    if HEAVY:
        text_cases = ",".join("train-%s-*" % c for c in CLASSES)
    status, out, err = run_main(
        capsys,
        "conformance",
        "check",
        path,
        "--train",
        command,
        "--format",
        fmt,
        "--cases",
        text_cases,
        "--quiet",
    )
    assert status == 0, out + err


def test_refbpe_passes_every_kind(pack, capsys, monkeypatch):
    """Train cases one process each, encode and split cases served by one process (``--persistent``;
    tests/test_persistent.py holds the two ways to the same verdicts).  Under PyPy a process per
    case took 5.8 CPU s for the 20 encode cases and as much for split, one served process 1.2 s
    and 1.0 s (``/usr/bin/time refbpe conformance check PACK --split-py peer_targets:refbpe_split
    --cases '*-00[01]'``, with and without ``--persistent``, from tests/)."""
    monkeypatch.chdir(TESTS)
    glob = "*" if HEAVY else "*-00[01]"
    for option, function, how in (
        ("--train-py", "peer_targets:refbpe_train", []),
        ("--encode-py", "peer_targets:refbpe_encode", ["--persistent"]),
        ("--split-py", "peer_targets:refbpe_split", ["--persistent"]),
    ):
        status, out, err = run_main(
            capsys, "conformance", "check", pack, option, function, "--cases", glob, *how
        )
        assert status == 0, out + err
        assert " 0 failed" in out and "FAIL" not in out


@pytest.mark.parametrize("bug", sorted(CHECKED))
def test_each_planted_bug_fails_naming_the_case(bug, pack, capsys):
    command = "%s %s train %s {input} {vocab_size} {out} {special_token}" % (target_python(), PLANTED, bug)
    counts = ["--counts"] if bug == "int32-counts" else []  # a bug of counts: the word-count cases
    status, out, err = run_main(
        capsys, "conformance", "check", pack, "--train", command, "--cases", CHECKED[bug], "--quiet", *counts
    )
    assert status == 1, out + err
    failed = [line.split()[1] for line in out.splitlines() if line.startswith("FAIL ")]
    assert failed and all(os.path.isdir(str(pack / name)) for name in failed)


def test_the_planted_pre_tokenizer_fails_naming_the_case(pack, capsys):
    command = "%s %s split {input} {out}" % (target_python(), PLANTED)
    status, out, _ = run_main(capsys, "conformance", "check", pack, "--split", command, "--quiet")
    assert status == 1 and "FAIL split-" in out and "number (\\p{N})" in out


def test_an_altered_pack_or_a_used_directory_is_exit_2(pack, tmp_path, capsys):
    copy = tmp_path / "copy"
    for name, data in _tree(pack).items():
        os.makedirs(os.path.dirname(str(copy / name)), exist_ok=True)
        with open(str(copy / name), "wb") as f:
            f.write(data)
    with open(str(copy / "train-ties-000" / "input.txt"), "ab") as f:
        f.write(b"x")
    status, _, err = run_main(capsys, "conformance", "check", copy, "--split", "true")
    assert status == 2 and "train-ties-000" in err and "sha256" in err
    status, _, err = run_main(capsys, "conformance", "write", copy)
    assert status == 2 and "not empty" in err
    status, _, err = run_main(capsys, "conformance", "check", pack)
    assert status == 2 and "needs one of" in err
