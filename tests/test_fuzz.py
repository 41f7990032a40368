"""``refbpe fuzz``: every planted bug is found, named and shrunk; no false finding; faults are findings.

The planted trainers (``planted_trainers.FUZZ_BUGS``) are found in process
(``search_for_failure`` with an in-process target: fast, every bug) and through the
command line, as a command and as ``--train-py`` (a few bugs by default, every
bug under ``REFBPE_HYPOTHESIS_PROFILE=heavy``).  Peers (rustbpe, HF, tiktoken)
run on CPython only, when installed.
"""

import json
import os
import subprocess
import sys
import time

import pytest
from peer_targets import refbpe_split
from planted_trainers import FUZZ_BUGS, planted_split
from support import HEAVY, IS_PYPY, REPO_ROOT, run_main, target_python

from refbpe.formats import write_model
from refbpe.fuzz import Target, TargetError, Trial, search_for_failure
from refbpe.fuzz.target import Run, expand
from refbpe.fuzz.trial import case_bytes
from refbpe.testing.strategies import CLASSES, COUNT_CLASSES

TESTS = os.path.dirname(os.path.abspath(__file__))
PLANTED = os.path.join(TESTS, "planted_trainers.py")
PEERS = os.path.join(TESTS, "peer_targets.py")
BUGS = [b for b in FUZZ_BUGS if b != "none"]
# verify's cause for the bugs whose cause is one of its named hypotheses
CAUSES = {
    "smallest-bytes": "tie-rule",
    "first-counted": "tie-rule",
    "specials-as-text": "pre-tokenization",
    "lines": "pre-tokenization",
    "chunk-boundaries": "pre-tokenization",
    "once-per-pretoken": "counts",
    "overlapping-merges": "merge-application",
}
CLI_BUGS = BUGS if HEAVY else ["int32-counts", "special-chunks"]
PY_BUGS = BUGS if HEAVY else ["stale-heap"]


def train_function(bug):
    import planted_trainers

    return getattr(planted_trainers, "train_" + bug.replace("-", "_"))


class InProcess(Target):
    """A trainer called in this process (the search without process starts)."""

    def __init__(self, func):
        Target.__init__(self, "train", function="in:process")
        self.func = func

    def run(self, values, timeout):
        t0 = time.time()
        vocab, merges = self.func(values["input"], values["vocab_size"], values["special_tokens"])
        write_model(values["out"], "json", vocab, merges, values["special_tokens"])
        return Run(0, "", time.time() - t0, False)


def _command(bug):
    return "%s %s train %s {input} {vocab_size} {out} {special_token}" % (target_python(), PLANTED, bug)


def _fuzz(capsys, tmp_path, *args):
    status, out, err = run_main(capsys, "fuzz", "--out", tmp_path / "f", "--db", "none", *args)
    return status, out, err, tmp_path / "f"


def _finding(directory):
    with open(os.path.join(str(directory), "finding.json"), encoding="utf-8") as f:
        return json.load(f)["finding"]


def _assert_repro_fails(directory, finding):
    """repro.sh exits 1 while the bug is there (a tie broken by hash order may pass a run)."""
    r = subprocess.run(["sh", str(directory / "repro.sh")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode in ((0, 1) if finding["flaky"] else (1,)), r.stderr


# -- placeholders -------------------------------------------------------------------------


def test_placeholders_expand_to_one_argument_per_special_token():
    values = {"input": "in.txt", "vocab_size": 300, "out": "o", "special_tokens": ["<a>", "<b>"]}
    assert expand(["t", "{input}", "{vocab_size}", "--s", "{special_token}", "{out}"], values) == [
        "t", "in.txt", "300", "--s", "<a>", "--s", "<b>", "o",
    ]  # fmt: skip
    assert expand(["--special-token={special_token}", "{special_tokens}"], values) == [
        "--special-token=<a>",
        "--special-token=<b>",
        '["<a>", "<b>"]',
    ]
    assert expand(["t", "--s", "{special_token}", "x"], dict(values, special_tokens=[])) == ["t", "x"]


# -- every planted bug, in process ----------------------------------------------------------


@pytest.mark.parametrize("bug", BUGS)
def test_search_finds_each_planted_bug_and_shrinks_it(bug, tmp_path):
    counts = bug == "int32-counts"
    trial = Trial(InProcess(train_function(bug)))
    finding, runs = search_for_failure(
        trial, list(COUNT_CLASSES if counts else CLASSES), 60, seed=0, workdir=str(tmp_path)
    )
    assert finding is not None, runs
    assert finding.verdict.kind == "difference"
    expected = FUZZ_BUGS[bug][1]
    if expected:
        assert finding.bug_class in expected
    if bug in CAUSES:
        assert finding.verdict.report["cause"] == CAUSES[bug], finding.verdict.text
    if counts:
        assert max(finding.case["counts"].values()) >= 2**31
        assert "Step by step over the word counts" in finding.verdict.text
    else:
        assert case_bytes(finding.case) <= 64, finding.case


def test_no_false_finding_for_the_naive_oracle(tmp_path):
    trial = Trial(InProcess(train_function("none")))
    finding, runs = search_for_failure(
        trial, list(CLASSES), 60, max_examples=30 * (10 if HEAVY else 1), workdir=str(tmp_path)
    )
    assert finding is None and set(runs.values()) == {30 * (10 if HEAVY else 1)}


# -- the command line -----------------------------------------------------------------------


@pytest.mark.parametrize("bug", CLI_BUGS)
def test_fuzz_finds_a_planted_bug_as_a_command_and_repro_replays_it(bug, capsys, tmp_path):
    extra = ["--counts"] if bug == "int32-counts" else []
    if FUZZ_BUGS[bug][1] and not HEAVY:  # by default, only the classes expected to find it (faster)
        extra += ["--classes", ",".join(FUZZ_BUGS[bug][1])]
    status, out, err, directory = _fuzz(capsys, tmp_path, "--train", _command(bug), "--budget", 60, *extra)
    assert status == 1, err
    finding = _finding(directory)
    expected = FUZZ_BUGS[bug][1]
    assert finding["kind"] == "difference" and (not expected or finding["class"] in expected)
    assert "with class %s" % finding["class"] in out
    if bug != "int32-counts":
        assert finding["input_bytes"] <= 64
    names = set(os.listdir(str(directory)))
    assert {"report.txt", "repro.sh", "expected", "theirs", "finding.json"} <= names
    assert ("input.counts.tsv" if bug == "int32-counts" else "input.txt") in names
    _assert_repro_fails(directory, finding)


@pytest.mark.parametrize("bug", PY_BUGS)
def test_fuzz_finds_a_planted_bug_as_a_python_function(bug, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(TESTS)
    function = "planted_trainers:train_" + bug.replace("-", "_")
    extra = ["--counts"] if bug == "int32-counts" else []
    status, out, err, directory = _fuzz(capsys, tmp_path, "--train-py", function, "--budget", 60, *extra)
    assert status == 1, err
    finding = _finding(directory)
    assert finding["kind"] == "difference" and (extra or finding["input_bytes"] <= 64)
    expected = FUZZ_BUGS[bug][1]
    assert not expected or finding["class"] in expected
    _assert_repro_fails(directory, finding)


def _without_timings(result):
    finding = {k: v for k, v in result["finding"].items() if k not in ("find_seconds", "shrink_seconds")}
    return dict(result, finding=finding, workers=None)


def test_the_same_seed_gives_the_same_report(capsys, tmp_path, monkeypatch):
    """Twice with 2 workers and once with one: the same report (JSON, timings aside).  The planted
    trainer is served (``--persistent``): what is held here is the search and the shrinking, and a
    process per case, hundreds in all, cost most of this test's time (tests/test_persistent.py holds
    served and one-shot targets to the same results)."""
    monkeypatch.chdir(TESTS)
    reports = []
    for k, workers in enumerate((2, 1, 2)):
        status, out, _, directory = _fuzz(
            capsys,
            tmp_path / str(k),
            "--train-py",
            "planted_trainers:train_once_per_pretoken",
            "--persistent",
            "--seed",
            7,
            "--classes",
            "ties,random",
            "--workers",
            workers,
        )
        assert status == 1
        with open(str(directory / "finding.json"), encoding="utf-8") as f:
            result = json.load(f)
        assert result["workers"] == workers and result["finding"]["cause"] == "counts"
        assert "with class %s" % result["finding"]["class"] in out
        result["finding"]["directory"] = None
        with open(str(directory / "report.txt"), encoding="utf-8") as f:
            reports.append((_without_timings(result), f.read().split("\n", 1)[1]))
    assert reports[0] == reports[1] == reports[2]


def test_a_finding_is_replayed_first_from_the_database(capsys, tmp_path):
    args = [
        "fuzz",
        "--train",
        _command("overlapping-merges"),
        "--out",
        tmp_path / "f",
        "--classes",
        "overlapping-runs",
    ]
    assert run_main(capsys, *args)[0] == 1
    assert os.path.isdir(str(tmp_path / "f" / ".hypothesis"))
    status, out, _ = run_main(capsys, *args)
    assert status == 1 and "after 1 examples" in out


@pytest.mark.parametrize(
    "command, kind",
    [
        ("sh -c 'kill -SEGV $$' {input}", "crash"),
        ("sh -c 'echo broken >&2; exit 3' {input}", "exit-status"),
        ("sh -c 'sleep 20' {input}", "timeout"),
        ("sh -c 'echo garbage > \"$1\"' sh {out}", "unreadable-output"),
    ],
)
def test_a_crash_a_hang_or_garbage_is_a_finding_with_its_input(command, kind, capsys, tmp_path):
    status, out, err, directory = _fuzz(
        capsys, tmp_path, "--train", command, "--timeout", "1", "--classes", "ties"
    )
    assert status == 1, err
    finding = _finding(directory)
    assert finding["kind"] == kind and finding["input_bytes"] <= 64
    assert os.path.isfile(str(directory / "input.txt"))
    if kind == "exit-status":
        assert "broken" in finding["report"]
    r = subprocess.run(["sh", str(directory / "repro.sh")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode != 0


def test_fuzz_split_finds_the_planted_pre_tokenizer(capsys, tmp_path):
    command = "%s %s split {input} {out}" % (target_python(), PLANTED)
    status, out, err, directory = _fuzz(
        capsys, tmp_path, "--split", command, "--classes", "digits", "--budget", 60
    )
    assert status == 1, err
    finding = _finding(directory)
    assert finding["input_bytes"] <= 64 and "number (\\p{N})" in finding["report"]
    assert [p.decode() for p in planted_split(finding["input"])] != refbpe_split(finding["input"])


def test_fuzz_encode_finds_the_planted_encoder(capsys, tmp_path, monkeypatch):
    model = tmp_path / "model.hex.json"
    from refbpe import train_from_texts

    vocab, merges = train_from_texts(["low lower lowest newer wider news " * 4], 300, ["<|endoftext|>"])
    write_model(str(model), "json", vocab, merges, ["<|endoftext|>"])
    monkeypatch.chdir(TESTS)
    status, out, err, directory = _fuzz(
        capsys,
        tmp_path,
        "--encode-py",
        "planted_trainers:encode_leftmost_merge",
        "--encoding",
        model,
        "--budget",
        60,
    )
    assert status == 1, err
    finding = _finding(directory)
    assert finding["class"] == "model-tokens" and finding["input_bytes"] <= 64
    assert "merges are applied differently" in finding["report"]
    assert os.path.isfile(str(directory / "expected" / "ids.json"))


# -- no false finding --------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["cs336", "rustbpe", "hf"])
def test_no_false_finding_for_refbpe_under_every_profile(profile, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(TESTS)
    monkeypatch.setenv("PEER_PROFILE", profile)
    n = 20 if HEAVY else 2
    status, out, err, _ = _fuzz(
        capsys,
        tmp_path,
        "--train-py",
        "peer_targets:refbpe_train",
        "--profile",
        profile,
        "--max-examples",
        n,
        "--budget",
        120,
    )
    assert status == 0, out + err
    assert len(out.splitlines()) == len(CLASSES) and "%d examples, no difference" % n in out


def test_no_false_finding_for_refbpe_word_counts(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(TESTS)
    status, out, err, _ = _fuzz(
        capsys,
        tmp_path,
        "--train-py",
        "peer_targets:refbpe_train",
        "--counts",
        "--max-examples",
        5,
        "--budget",
        120,
    )
    assert status == 0, out + err


def _peer(name):
    if IS_PYPY:
        pytest.skip("the peers are CPython extensions")
    pytest.importorskip(name, reason="%s is not installed" % name)


@pytest.mark.parametrize(
    "peer, profile, fmt", [("rustbpe", "rustbpe", "tiktoken"), ("tokenizers", "hf", "auto")]
)
def test_no_false_finding_for_the_peer_trainers(peer, profile, fmt, capsys, tmp_path):
    _peer(peer)
    command = "%s %s train %s {input} {vocab_size} {out} {special_token}" % (
        sys.executable,
        PEERS,
        "rustbpe" if peer == "rustbpe" else "hf",
    )
    n = 20 if HEAVY else 2
    status, out, err, _ = _fuzz(
        capsys,
        tmp_path,
        "--train",
        command,
        "--profile",
        profile,
        "--format",
        fmt,
        "--max-examples",
        n,
        "--budget",
        120,
    )
    assert status == 0, out + err


def test_no_false_finding_for_tiktoken_under_encode(capsys, tmp_path, monkeypatch):
    _peer("tiktoken")
    shared = os.path.join(REPO_ROOT, "..", "shared", "data", "tiktoken")
    if not os.path.isdir(shared):
        pytest.skip("shared tiktoken data not found")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", os.path.join(shared, "cache"))
    monkeypatch.chdir(TESTS)
    n = 10 if HEAVY else 1
    for encoding in ("cl100k_base", "o200k_base") if HEAVY else ("cl100k_base",):
        status, out, err, _ = _fuzz(
            capsys, tmp_path / encoding, "--encode-py", "peer_targets:tiktoken_encode",
            "--encoding", encoding, "--max-examples", n, "--budget", 120,
        )  # fmt: skip
        assert status == 0, out + err


# -- bad options -------------------------------------------------------------------------------


def test_bad_options_and_a_command_that_cannot_start_exit_2(capsys, tmp_path):
    for args, message in (
        (["--train", "no-such-program-here {input}"], "not found on PATH"),
        (["--train", "/nonexistent/trainer {input}"], "not an executable file"),
        (["--train-py", "no_such_module_x:f"], "cannot import"),
        (["--train-py", "nocolon"], "MODULE:FUNC"),
        (["--split", "true", "--counts"], "--counts is for"),
        (["--train", "true", "--classes", "nonsense"], "unknown class"),
        (["--train", "true", "--budget", "-1"], "positive number"),
        (["--encode", "true"], "--encoding"),
    ):
        status, _, err = run_main(capsys, "fuzz", "--out", tmp_path / "f", *args)
        assert status == 2 and message in err and len(err.strip().splitlines()) == 1, (args, err)


def test_fuzz_says_in_one_line_when_hypothesis_is_missing(capsys, tmp_path, monkeypatch):
    import refbpe.cli.fuzz as cli_fuzz

    monkeypatch.setattr(cli_fuzz, "available", lambda: False)
    status, _, err = run_main(capsys, "fuzz", "--train", "true", "--out", tmp_path / "f")
    assert status == 2 and "pip install 'refbpe[fuzz]'" in err and len(err.strip().splitlines()) == 1


def test_the_core_library_imports_without_hypothesis(tmp_path):
    blocker = tmp_path / "hypothesis.py"
    blocker.write_text("raise ImportError('blocked')\n")
    code = "import refbpe, refbpe.cli, refbpe.testing.strategies as s; assert not s.available(); print('ok')"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), REPO_ROOT]))
    r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert r.stdout.strip() == b"ok", r.stderr


def test_the_cli_starts_without_importing_hypothesis():
    """Hypothesis is imported on a strategy's first use: ``refbpe train`` does not pay for it
    (0.3 s of CPU per run under PyPy)."""
    code = "import sys, refbpe.cli; print('hypothesis' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert r.stdout.strip() == b"False", r.stderr


def test_an_unimportable_target_is_a_target_error():
    with pytest.raises(TargetError):
        Target("train", function="no_such_module_y:f").check_starts()


def test_a_trainer_whose_output_changes_between_runs_is_reported_as_not_deterministic(capsys, tmp_path):
    flag = tmp_path / "flag"
    good, bad = _command("none"), _command("smallest-bytes")
    command = (
        "sh -c 'if [ -e %s ]; then rm %s; exec %s; else touch %s; exec %s; fi' sh {input} {vocab_size} {out}"
        % (
            flag,
            flag,
            bad.replace(" {input} {vocab_size} {out} {special_token}", ' "$1" "$2" "$3"'),
            flag,
            good.replace(" {input} {vocab_size} {out} {special_token}", ' "$1" "$2" "$3"'),
        )
    )
    status, out, err, directory = _fuzz(
        capsys, tmp_path, "--train", command, "--classes", "ties", "--budget", 60
    )
    assert status == 1, err
    assert "NOT DETERMINISTIC" in out and _finding(directory)["flaky"] is True


# -- --workers ------------------------------------------------------------------------------

WORKER_BUGS = (
    [b for b in BUGS if b != "hash-order"] if HEAVY else ["once-per-pretoken", "special-chunks", "lines"]
)


def _same_search(finding, runs):
    if finding is None:
        return None, runs
    return (finding.bug_class, finding.verdict.kind, finding.case, finding.examples, finding.flaky), runs


@pytest.mark.parametrize("bug", WORKER_BUGS)
def test_workers_find_what_one_process_finds(bug, tmp_path):
    """With 2 workers the finding, its example count and the counts per class are one process's."""
    trial = Trial(InProcess(train_function(bug)))
    found = []
    for workers in (1, 2):
        finding, runs = search_for_failure(
            trial, list(CLASSES), 60, max_examples=40, seed=5, workdir=str(tmp_path), workers=workers
        )
        assert finding is not None, runs
        expected = FUZZ_BUGS[bug][1]
        assert not expected or finding.bug_class in expected
        found.append(_same_search(finding, runs))
    assert found[0] == found[1]


def test_workers_no_false_finding_for_the_naive_oracle(tmp_path):
    trial = Trial(InProcess(train_function("none")))
    n = 10 * (10 if HEAVY else 1)
    finding, runs = search_for_failure(
        trial, list(CLASSES), 60, max_examples=n, workdir=str(tmp_path), workers=2
    )
    assert finding is None and runs == dict.fromkeys(CLASSES, n)


def test_fuzz_workers_no_false_finding_for_refbpe_with_a_line_per_class(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(TESTS)
    classes = ["ties", "unicode", "digits"]
    status, out, err, _ = _fuzz(
        capsys, tmp_path, "--train-py", "peer_targets:refbpe_train", "--workers", 2, "--max-examples", 2,
        "--budget", 120, "--classes", ",".join(classes),
    )  # fmt: skip
    assert status == 0, out + err
    assert [line.split()[:4] for line in out.splitlines()] == [[c, "2", "examples,", "no"] for c in classes]


@pytest.mark.skipif(sys.platform == "win32", reason="process groups")
def test_ctrl_c_stops_every_worker_and_their_runs(tmp_path):
    """SIGINT to the command's group during their (hanging) runs: exit 130 at once, no process left."""
    import signal

    from support import cli_env

    marker = "sleep 3%d" % os.getpid()  # a command line no other process has
    p = subprocess.Popen(
        [sys.executable, "-m", "refbpe", "fuzz", "--train", "sh -c '%s' {input}" % marker, "--timeout", "60",
         "--workers", "2", "--out", str(tmp_path / "f"), "--db", "none", "--classes", "ties,random"],
        start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(),
    )  # fmt: skip
    deadline = time.time() + 60
    while _processes(marker) < 2 and time.time() < deadline:  # both workers are running theirs
        time.sleep(0.2)
    assert _processes(marker) >= 2
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130 and err.decode().strip() == "refbpe: interrupted"
    deadline = time.time() + 10  # killed processes leave the table within moments, even under load
    while _processes(marker) and time.time() < deadline:
        time.sleep(0.2)
    assert _processes(marker) == 0  # an orphan would sleep on for days


def _processes(marker):
    """How many processes run ``marker`` (a ``sleep`` of theirs, or the shell running it)."""
    out = subprocess.run(["ps", "-eo", "args"], stdout=subprocess.PIPE).stdout.decode()
    return sum(1 for line in out.splitlines() if marker in line)
