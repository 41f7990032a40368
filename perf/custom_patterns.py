"""Counting speed of custom split patterns (``Pattern.from_regex``) against the ``llama3`` scanner.

    pypy3 perf/custom_patterns.py [--mb 20] [--corpus english_medium] [--only NAME,...]

Counts the pre-tokens of the first MB megabytes of the corpus (cut at a line
end) once per pattern, in one process, after a 1 MB warm-up, and prints the
CPU seconds (not wall: the machine may be shared), MB/s and the ratio to the
``llama3`` scanner.  The patterns are the ones
``tests/test_custom_patterns.py`` holds to the ``regex`` module, compiled from
their text (so the known ones run compiled, not on their scanners), and two
*exponential-shaped* ones: Llama 3's with its words and punctuation runs as
repeats of ambiguous groups (``(?:\\p{L}|\\p{L}\\p{M})+``), which ends its
alternative (so ``re`` keeps its first iterations, and ``regex_engine`` runs a
plain loop), and the same with ``(?!\\p{M})`` after the words, which ``re``
could backtrack on exponentially and ``regex_engine`` runs as loops
remembered per position (on CPython too).  The last row is a pattern of that
shape on its worst text, ``a`` x 200,000 then ``!`` under
``(?:a|aa)+$|\\s+|\\S``, where every position is a failed attempt.
"""

import argparse
import os
import sys

from harness import corpus, stopwatch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from test_custom_patterns import TEST_PATTERNS, custom  # noqa: E402

from refbpe.pretokenize.patterns import get_pattern  # noqa: E402

EXPONENTIAL = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?(?:\p{L}|\p{L}\p{M})+|\p{N}{1,3}"""
    r"""| ?(?:[^\s\p{L}\p{N}]|[^\s\p{L}\p{N}]{2})+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
FOLLOWED = EXPONENTIAL.replace(r"\p{M})+|", r"\p{M})+(?!\p{M})|", 1)
WORST = (r"""(?:a|aa)+$|\s+|\S""", b"a" * 200000 + b"!")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=20)
    ap.add_argument("--corpus", default="english_medium")
    ap.add_argument("--only", default="", help="comma-separated pattern names (llama3 scanner always runs)")
    args = ap.parse_args()
    with open(corpus(args.corpus), "rb") as f:
        data = f.read(args.mb << 20)
    data = data[: data.rfind(b"\n") + 1]
    patterns = dict(TEST_PATTERNS, exponential_shaped=EXPONENTIAL, exponential_followed=FOLLOWED)
    only = set(filter(None, args.only.split(",")))
    rows = [("llama3 (scanner)", get_pattern("llama3"), data)]
    rows += [(name + " (compiled)", custom(regex), data) for name, regex in sorted(patterns.items())]
    rows += [("exponential, worst text", custom(WORST[0]), WORST[1])]
    base = None
    for label, pattern, text in rows:
        if only and base and label.split(" ")[0].rstrip(",") not in only:
            continue
        pattern.count_pretokens(text[: 1 << 20])
        with stopwatch() as sw:
            counts = pattern.count_pretokens(text)
        seconds = sw.cpu
        base = base or seconds
        mbs = len(text) / 1e6 / seconds
        ratio = "%5.2fx" % (seconds / base) if text is data else "     -"  # another text
        row = (label, seconds, mbs, ratio, len(counts))
        print("%-32s %6.2f s  %7.2f MB/s  %s  %d distinct" % row, flush=True)


if __name__ == "__main__":
    main()
