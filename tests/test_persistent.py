"""``fuzz --persistent``: one process answers many cases over the line protocol.

A served function and a command speaking the protocol agree with one-shot runs on clean
targets; a planted bug shrinks to the same input either way; a crash, a hang, an error
answer or a broken protocol is a finding naming the case, and the process is restarted
for the next one.  Targets: ``persistent_targets.py`` and ``planted_trainers.py``.
"""

import json
import os
import sys
import time

import pytest
from support import run_main

from refbpe.fuzz import Target, TargetError, Trial, search_for_failure
from refbpe.fuzz.child import answer, load_function
from refbpe.fuzz.persistent import PersistentTarget
from refbpe.fuzz.target import Run

TESTS = os.path.dirname(os.path.abspath(__file__))
SERVE = "%s %s serve" % (sys.executable, os.path.join(TESTS, "persistent_targets.py"))
CLASSES = ["digits", "whitespace", "unicode"]


@pytest.fixture(autouse=True)
def _in_tests(monkeypatch):
    monkeypatch.chdir(TESTS)  # MODULE:FUNC is found from the current directory


def _search(target, tmp_path, classes=CLASSES, max_examples=6, timeout=10.0, **options):
    trial = Trial(target, timeout=timeout)
    tmp_path.mkdir(parents=True, exist_ok=True)
    try:
        return search_for_failure(
            trial, classes, 120, max_examples, 0, None, str(tmp_path), shrink_budget=60, **options
        )
    finally:
        target.close()


def _case_run(target, tmp_path, texts, timeout=10.0):
    """The verdict of each text in turn (None: no finding), and the pid that answered each
    (None: killed).  The process is started by a case of its own, first and after each kill:
    a request's timeout includes the start, which takes seconds on a busy machine."""
    verdicts, pids = [], []
    for k, text in enumerate(texts):
        if target._proc is None:
            warm = tmp_path / ("warm%d" % k)
            warm.mkdir()
            warm_up = {"text": "warm up", "special_tokens": []}
            assert Trial(target, timeout=60.0).run(warm_up, str(warm)) is None
        d = tmp_path / str(k)
        d.mkdir()
        verdicts.append(Trial(target, timeout=timeout).run({"text": text, "special_tokens": []}, str(d)))
        pids.append(target._proc.pid if target._proc is not None else None)
    return verdicts, pids


class InProcess(Target):
    """Their function called in this process as the one-shot child calls it: the same verdicts
    as one-shot runs, without a process start per run (so a shrink finishes within its budget)."""

    def run(self, values, timeout):
        t0 = time.time()
        answer(self.mode, load_function(self.function), values)
        return Run(0, "", time.time() - t0, False)


# -- clean runs agree with one-shot ---------------------------------------------------------


def test_a_served_function_and_a_protocol_command_agree_with_one_shot(tmp_path):
    one_shot = _search(Target("split", function="persistent_targets:split_good"), tmp_path / "a")
    served = _search(PersistentTarget("split", function="persistent_targets:split_good"), tmp_path / "b")
    command = _search(PersistentTarget("split", command=SERVE + " good"), tmp_path / "c")
    assert one_shot == served == command == (None, {c: 6 for c in CLASSES})


def test_one_process_answers_every_case(tmp_path):
    target = PersistentTarget("split", function="persistent_targets:split_good")
    try:
        verdicts, pids = _case_run(target, tmp_path, ["a b", "1 2 3", "héllo  wörld"])
    finally:
        target.close()
    assert verdicts == [None, None, None] and len(set(pids)) == 1


def test_their_prints_on_stdout_do_not_break_the_protocol(tmp_path):
    target = PersistentTarget("split", function="persistent_targets:split_noisy")
    assert _search(target, tmp_path, classes=["digits"])[0] is None


def test_workers_each_start_their_own_process(tmp_path):
    target = PersistentTarget("split", function="persistent_targets:split_good")
    assert _search(target, tmp_path, workers=2) == (None, {c: 6 for c in CLASSES})


# -- a planted bug -------------------------------------------------------------------------


def test_a_planted_bug_shrinks_to_the_same_input_as_one_shot(tmp_path):
    function = "planted_trainers:split_digits_as_letters"
    found = []
    targets = (InProcess("split", function=function), PersistentTarget("split", function=function))
    for k, target in enumerate(targets):
        finding, _ = _search(target, tmp_path / str(k), classes=["digits"], max_examples=40)
        assert finding is not None and finding.verdict.kind == "difference" and not finding.flaky
        found.append((finding.case, finding.examples))
    assert found[0] == found[1]


# -- faults: findings naming the case, and the next case still runs -------------------------


@pytest.mark.parametrize(
    "function, kind, says",
    [
        ("split_crash_on_x", "crash", "SIGSEGV"),
        ("split_hang_on_x", "timeout", "no answer within 2 s"),
        ("split_raise_on_x", "exit-status", "RuntimeError: no x here"),
    ],
)
def test_a_fault_on_one_case_is_its_finding_and_the_next_case_runs(function, kind, says, tmp_path):
    target = PersistentTarget("split", function="persistent_targets:" + function)
    try:
        verdicts, pids = _case_run(target, tmp_path, ["a b", "a x b", "c d"], timeout=2.0)
    finally:
        target.close()
    assert verdicts[0] is None and verdicts[2] is None
    assert verdicts[1].kind == kind and says in verdicts[1].text
    if kind == "exit-status":  # an error answer: the process carries on
        assert "Traceback" in verdicts[1].text and pids[0] == pids[1] == pids[2]
    else:  # killed, and a fresh one answers the next case
        assert pids[1] is None and pids[2] not in (None, pids[0])


def test_fuzz_persistent_reports_a_crash_with_its_minimal_input(capsys, tmp_path):
    status, out, err = run_main(
        capsys,
        "fuzz",
        "--split-py",
        "persistent_targets:split_crash_on_x",
        "--persistent",
        "--classes",
        "random",
        "--out",
        tmp_path / "f",
        "--db",
        "none",
        "--json",
    )
    assert status == 1, err
    finding = json.loads(out)["finding"]
    assert finding["kind"] == "crash" and finding["input"] == "x"
    assert json.loads(out)["target"].endswith("[persistent]")


@pytest.mark.parametrize(
    "behaviour, kind, says",
    [
        ("garbage", "unreadable-output", "broke the protocol: answered b'hello'"),
        ("quits", "exit-status", "exited with status 0 before answering"),
        ("chatty", "unreadable-output", "on stdout between requests"),
    ],
)
def test_a_command_that_breaks_the_protocol_is_a_finding(behaviour, kind, says, tmp_path):
    target = PersistentTarget("split", command=SERVE + " " + behaviour)
    try:
        verdicts, pids = _case_run(target, tmp_path, ["a b"]) if behaviour == "chatty" else ([], [])
        if behaviour != "chatty":  # broken from the first answer: no warm-up
            d = tmp_path / "first"
            d.mkdir()
            verdicts = [Trial(target, timeout=60.0).run({"text": "a b", "special_tokens": []}, str(d))]
            pids = [target._proc.pid if target._proc is not None else None]
    finally:
        target.close()
    assert verdicts[0].kind == kind and says in verdicts[0].text and pids[0] is None


def test_fuzz_persistent_finds_a_protocol_breaker(capsys, tmp_path):
    status, out, err = run_main(
        capsys,
        "fuzz",
        "--split",
        SERVE + " garbage",
        "--persistent",
        "--out",
        tmp_path / "f",
        "--db",
        "none",
        "--classes",
        "digits",
        "--json",
    )
    assert status == 1, err
    finding = json.loads(out)["finding"]
    assert finding["kind"] == "unreadable-output" and "broke the protocol" in finding["report"]


def test_a_persistent_command_with_placeholders_exits_2(capsys, tmp_path):
    status, out, err = run_main(
        capsys, "fuzz", "--split", SERVE + " good {input}", "--persistent", "--out", tmp_path / "f"
    )
    assert status == 2 and "takes no placeholders ({input})" in err
    with pytest.raises(TargetError):
        PersistentTarget("split", command="x {out}").check_placeholders()


def test_conformance_check_persistent_fails_the_cases_one_shot_fails(capsys, tmp_path):
    pack = tmp_path / "pack"
    assert run_main(capsys, "conformance", "write", pack)[0] == 0
    planted = "planted_trainers:split_digits_as_letters"
    outs = []
    for extra in ([], ["--persistent"]):
        status, out, err = run_main(
            capsys, "conformance", "check", pack, "--split-py", planted, "--cases", "split-digits-*", *extra
        )
        assert status == 1, out + err
        outs.append(out)
    assert outs[0] == outs[1] and "FAIL split-digits-" in outs[0]
    status, out, err = run_main(
        capsys, "conformance", "check", pack, "--split", SERVE + " good", "--persistent"
    )
    assert status == 0 and " 0 failed" in out, out + err
