"""The merge phase under each tie rule ``train --tie-rule`` offers, against the default's.

    .venv-pypy/bin/python perf/tie_rules.py                         # english_small, vocab 10,000, 3 rounds
    .venv-pypy/bin/python perf/tie_rules.py --corpus english_medium --vocab 10000 --repeats 5

The corpus is counted once (``count_corpus``); then ``learn_merges`` runs on the
same word counts under each engine tie (``learn.tie_rules.engine_tie``, refbpe's
layout), rounds going round-robin over the rules after one untimed round (the
JIT's warm-up); the median merge-phase CPU time
is printed with its ratio to greatest-bytes (CS336's rule).
"""

import argparse
import os
import platform
import statistics

from harness import corpus, stopwatch

from refbpe.learn.merge import learn_merges
from refbpe.learn.tie_rules import TEXT_ORDER, TIE_RULE_NAMES, engine_tie
from refbpe.learn.train import count_corpus


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="english_small")
    parser.add_argument("--vocab", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    counts = count_corpus([corpus(args.corpus)], ["<|endoftext|>"], workers=1)
    rules = [r for r in TIE_RULE_NAMES if r != TEXT_ORDER]
    times = {r: [] for r in rules}
    for round_ in range(1 + args.repeats):  # round 0 warms PyPy's JIT up, untimed
        for rule in rules:
            with stopwatch() as sw:
                learn_merges(counts, args.vocab - 257, tie=engine_tie(rule))
            if round_:
                times[rule].append(sw.cpu)
    base = statistics.median(times["greatest-bytes"])
    where = (platform.python_implementation(), os.getloadavg()[0])
    print("%s, vocab %d, %d words, CPU medians of %d" % (args.corpus, args.vocab, len(counts), args.repeats))
    print("%s, load average %.1f" % where)
    for rule in rules:
        t = statistics.median(times[rule])
        print("%-28s %7.3f s  %5.2fx" % (rule, t, t / base))


if __name__ == "__main__":
    main()
