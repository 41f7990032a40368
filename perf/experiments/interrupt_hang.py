"""Many SIGTERMs (or SIGINTs) while counting: does every run end?  Stacks of the runs that do not.

    .venv/bin/python perf/experiments/interrupt_hang.py [--runs 700] [--max-delay 0.45]
        [--python .venv-pypy/bin/python] [--signal INT]

Each run is ``python -m refbpe train`` on about 16 MB of random words (the corpus of
tests/test_interrupts.py) with 3 workers and 1 MiB units, in a new session.  Once its
three processes exist, SIGTERM goes to the main process after a random delay up to
``--max-delay`` seconds (``--signal INT``: SIGINT to the whole session, as a terminal's
Ctrl-C sends it).  A run that has not ended 10 s later is a hang: every process
of its session gets SIGUSR1, on which ``faulthandler`` (registered by a
``sitecustomize`` on the children's path) prints every thread's stack to stderr, and
those stacks are printed here.  Found this way under PyPy: 2 hangs in about 1,200 runs
(a second process of ``yes`` loading the machine), all three processes waiting on the
claims' shared lock (``refbpe/corpus/claims.py``, ``_close``).  Python 3.9 syntax.
"""

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from processes import session_processes  # noqa: E402

EOT = "<|endoftext|>"
SITE = (
    "import faulthandler, signal, sys\n"
    "faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)\n"
)


def word_corpus(path):
    rng = random.Random(5)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    block = " ".join(rng.choice(words) for _ in range(200000)).encode() + b"\n" + EOT.encode() + b"\n"
    with open(path, "wb") as f:
        for _ in range(12):
            f.write(block)


def one_run(python, corpus, out, env, delay, sig="TERM"):
    """True if the run ended within 10 s of the signal; else its processes' stacks are printed."""
    args = [python, "-m", "refbpe", "train", corpus, "--out", out, "--progress", "--vocab-size", "1000"]
    args += ["--special-token", EOT, "--workers", "3", "--chunk-size", "1M"]
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True
    )
    for _ in range(3000):  # a minute at most
        if len(session_processes(proc.pid)) >= 3:
            break
        time.sleep(0.02)
    time.sleep(delay)
    if sig == "INT":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.communicate(timeout=10)
        return True
    except subprocess.TimeoutExpired:
        pass
    for pid, _ in session_processes(proc.pid):
        try:
            os.kill(pid, signal.SIGUSR1)
        except OSError:
            pass
        time.sleep(0.5)
    try:
        err = proc.communicate(timeout=3)[1]
    except subprocess.TimeoutExpired as e:
        err = e.stderr or b""
    print(err.decode("utf-8", "replace"), flush=True)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=700)
    ap.add_argument("--max-delay", type=float, default=0.45)
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv-pypy", "bin", "python"))
    ap.add_argument("--signal", choices=["TERM", "INT"], default="TERM")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "sitecustomize.py"), "w") as f:
            f.write(SITE)
        corpus = os.path.join(tmp, "words.txt")
        word_corpus(corpus)
        env = dict(os.environ, PYTHONPATH=tmp + os.pathsep + ROOT)
        hung = 0
        for k in range(args.runs):
            delay = random.uniform(0, args.max_delay)
            if not one_run(args.python, corpus, os.path.join(tmp, "model%d" % k), env, delay, args.signal):
                hung += 1
                print("run %d of %d did not end" % (k + 1, args.runs), flush=True)
        print("%d of %d runs did not end within 10 s of SIG%s" % (hung, args.runs, args.signal))


if __name__ == "__main__":
    main()
