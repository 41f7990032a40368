"""Examples per minute of ``refbpe fuzz`` against a tiktoken encoder, one-shot and ``--persistent``.

The encoder is an ``--encode-py`` adapter around tiktoken's cl100k_base (written
to a temporary directory; it caches the loaded encoding, which only a
persistent process can reuse).  For each mode, runs ``refbpe fuzz --encode-py
adapter:encode --encoding cl100k_base --budget B --json`` (every encode class,
no example database), sums the examples of the classes, and prints examples
per minute of budget and the ratio::

    .venv/bin/python perf/fuzz_persistent.py                 # budget 60 s per mode
    .venv/bin/python perf/fuzz_persistent.py --budget 30 --workers 2

Both the fuzzer and the adapter run under ``--python`` (default this
interpreter, which must have tiktoken).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import harness

ADAPTER = """import functools

import tiktoken


@functools.lru_cache(maxsize=None)
def _encoding(model_path):
    return tiktoken.get_encoding("cl100k_base")


def encode(model_path, text):
    return _encoding(model_path).encode(text, allowed_special="all")
"""


def examples(python, budget, workers, persistent):
    """Examples run in ``budget`` seconds, summed over the classes."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "adapter.py"), "w", encoding="utf-8") as f:
            f.write(ADAPTER)
        argv = [python, "-m", "refbpe", "fuzz", "--encode-py", "adapter:encode", "--encoding", "cl100k_base"]
        argv += ["--budget", str(budget), "--workers", str(workers), "--json", "--out", os.path.join(d, "f")]
        argv += ["--db", "none"] + (["--persistent"] if persistent else [])
        r = subprocess.run(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=harness.tree_env(), cwd=d
        )
    if r.returncode != 0:
        raise SystemExit("fuzz exited %d: %s%s" % (r.returncode, r.stdout.decode(), r.stderr.decode()))
    return sum(json.loads(r.stdout)["classes"].values())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--budget", type=float, default=60)
    p.add_argument("--workers", type=int, default=1)
    args = p.parse_args()
    print("fuzzer and adapter %s, budget %g s, workers %d" % (args.python, args.budget, args.workers))
    rates = {}
    for persistent in (False, True):
        n = examples(args.python, args.budget, args.workers, persistent)
        rates[persistent] = n * 60.0 / args.budget
        print(
            "%-11s %6d examples, %8.0f per minute"
            % ("persistent" if persistent else "one-shot", n, rates[persistent])
        )
    print("ratio %.1fx" % (rates[True] / max(rates[False], 1e-9)))


if __name__ == "__main__":
    main()
