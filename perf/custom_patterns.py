"""Counting speed of custom split patterns (``Pattern.from_regex``) against the ``llama3`` scanner.

    pypy3 perf/custom_patterns.py [--mb 20] [--corpus english_medium]

Counts the pre-tokens of the first MB megabytes of the corpus (cut at a line
end) once per pattern, in one process, after a 1 MB warm-up, and prints the
CPU seconds (not wall: the machine may be shared) and the ratio to the
``llama3`` scanner.  The patterns are the ones
``tests/test_custom_patterns.py`` holds to the ``regex`` module, compiled from
their text (so the known ones run compiled, not on their scanners).
"""

import argparse
import os
import sys

from harness import corpus, stopwatch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from test_custom_patterns import TEST_PATTERNS, custom  # noqa: E402

from refbpe.pretokenize.patterns import get_pattern  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=20)
    ap.add_argument("--corpus", default="english_medium")
    args = ap.parse_args()
    with open(corpus(args.corpus), "rb") as f:
        data = f.read(args.mb << 20)
    data = data[: data.rfind(b"\n") + 1]
    rows = [("llama3 (scanner)", get_pattern("llama3"))]
    rows += [(name + " (compiled)", custom(regex)) for name, regex in sorted(TEST_PATTERNS.items())]
    base = None
    for label, pattern in rows:
        pattern.count_pretokens(data[: 1 << 20])
        with stopwatch() as sw:
            counts = pattern.count_pretokens(data)
        seconds = sw.cpu
        base = base or seconds
        ratio = seconds / base
        print("%-26s %6.2f s  %5.2fx  %d distinct" % (label, seconds, ratio, len(counts)), flush=True)


if __name__ == "__main__":
    main()
