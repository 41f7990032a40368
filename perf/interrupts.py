"""How fast ``refbpe train`` ends after Ctrl-C or SIGTERM, in each phase, on both interpreters.

    .venv/bin/python perf/interrupts.py [--repeats 5] [--interpreters cpython,pypy]

Each run starts ``python -m refbpe train`` in a new session (with ``PYTHONPATH`` set
to this tree), waits until it is in the phase wanted, sends the signal (SIGINT to
the whole process group, as a terminal's Ctrl-C does; SIGTERM to the main process,
as ``kill`` does) and measures the seconds until the main process has exited and
until no process of the session is left.  Phases:

    counting   english_medium (../shared/data/corpora), 2 workers, 4 MiB units;
               the signal comes 0.5 s after both workers exist
    merge      one pre-token of 10 MB of random letters over 4 symbols (generated),
               1 worker; the signal comes 0.3 s after the merge phase's progress line

Printed: median and largest latency per (interpreter, phase, signal), the exit
status, and whether the last line of stderr is the one-line message.  The target
(issue 12): every latency under 1 s.
"""

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from harness import CORPUS_FILES, INTERPRETERS, ROOT, session_processes, stopwatch, tree_env

MESSAGES = {"SIGINT": "refbpe: interrupted", "SIGTERM": "refbpe: terminated"}


def _session_pids(session):
    return [pid for pid, _ in session_processes(session)]


def _read_until(proc, marker, clock, limit):
    seen = b""
    while marker not in seen and clock.elapsed() < limit:
        chunk = os.read(proc.stderr.fileno(), 4096)
        if not chunk:
            break
        seen += chunk
    return marker in seen


def one_run(interp, phase, sig, paths, work):
    out = os.path.join(work, "model")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        INTERPRETERS[interp],
        "-m",
        "refbpe",
        "train",
        paths[phase],
        "--vocab-size",
        "2000",
        "--out",
        out,
    ]
    if phase == "counting":
        cmd += ["--workers", "2", "--chunk-size", "4M", "--quiet"]
    else:
        cmd += ["--workers", "1", "--progress"]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=tree_env(),
        cwd=ROOT,
        start_new_session=True,
    )
    started = stopwatch()
    if phase == "counting":
        while len(_session_pids(proc.pid)) < 3 and started.elapsed() < 120 and proc.poll() is None:
            time.sleep(0.02)
        time.sleep(0.5)
    else:
        if not _read_until(proc, b"merges", started, 120):
            proc.kill()
            proc.wait()
            return None
        time.sleep(0.3)
    if proc.poll() is not None:
        return None  # finished before the signal: the input is too small for this machine
    signalled = stopwatch()
    if sig == "SIGINT":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGTERM)
    err = proc.stderr.read()
    proc.wait()
    exited = signalled.elapsed()
    while _session_pids(proc.pid) and signalled.elapsed() < 30:
        time.sleep(0.01)
    all_gone = signalled.elapsed()
    last = err.decode("utf-8", "replace").replace("\r\x1b[K", "\n").strip().split("\n")[-1]
    return {"exit": exited, "all_gone": all_gone, "status": proc.returncode, "message": last == MESSAGES[sig]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--interpreters", default="cpython,pypy")
    ap.add_argument("--phases", default="counting,merge")
    args = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="refbpe-interrupts-")
    try:
        long_word = os.path.join(work, "rand4.txt")
        rng = random.Random(12)
        with open(long_word, "wb") as f:
            f.write(rng.randbytes(10 * 10**6).translate(bytes(b"abcd"[i % 4] for i in range(256))))
        paths = {"counting": CORPUS_FILES["english_medium"], "merge": long_word}
        rows = []
        for interp in args.interpreters.split(","):
            for phase in args.phases.split(","):
                for sig in ("SIGINT", "SIGTERM"):
                    runs = [one_run(interp, phase, sig, paths, work) for _ in range(args.repeats)]
                    runs = [r for r in runs if r]
                    rows.append((interp, phase, sig, runs))
                    sys.stderr.write(
                        "  %s %s %s: %s\n"
                        % (interp, phase, sig, " ".join("%.2f" % r["all_gone"] for r in runs))
                    )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("INTERRUPT LATENCY (s from the signal; exit = main process gone, all = every process of the run)")
    print(
        "  %-8s %-9s %-8s %5s %11s %9s %11s %9s %7s %8s"
        % (
            "interp",
            "phase",
            "signal",
            "runs",
            "exit median",
            "exit max",
            "all median",
            "all max",
            "status",
            "message",
        )
    )
    worst = 0.0
    for interp, phase, sig, runs in rows:
        if not runs:
            print("  %-8s %-9s %-8s    no run reached the phase" % (interp, phase, sig))
            continue
        exits, gone = [r["exit"] for r in runs], [r["all_gone"] for r in runs]
        worst = max(worst, max(gone))
        print(
            "  %-8s %-9s %-8s %5d %11.2f %9.2f %11.2f %9.2f %7s %8s"
            % (
                interp,
                phase,
                sig,
                len(runs),
                statistics.median(exits),
                max(exits),
                statistics.median(gone),
                max(gone),
                ",".join(sorted({str(r["status"]) for r in runs})),
                "ok" if all(r["message"] for r in runs) else "MISSING",
            )
        )
    print("TARGET  %-4s every run ended within 1 s (worst %.2f s)" % ("met" if worst < 1 else "MISS", worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
