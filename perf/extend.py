"""Extending against training from scratch, merge phase only, in one process.

    .venv-pypy/bin/python perf/extend.py [--corpus english_medium] [--from 10000] [--to 20000]

The corpus is counted once (``count_words``, 2 workers); then, on those counts:
training to ``--from`` (the parent), training to ``--to``, and extending the parent
to ``--to`` (``train_from_counts(extend=)``: one replay of the parent's merges plus
the new ones), each the best of ``--repeats`` (``harness.timed``).  Printed: seconds
of each, whether the extension's merges equal the direct run's (the prefix
property), and the goal: extending costs at most the merges after ``--from`` (the direct run's
time after its merge ``--from``, read off its progress calls) plus one replay of the
parent's merges (the parent extended to its own size: the replay alone).
"""

import argparse

from harness import SPECIAL, corpus, stopwatch, timed

from refbpe.corpus.count import count_words
from refbpe.formats import Model
from refbpe.learn.train import train_from_counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="english_medium")
    ap.add_argument("--from", dest="start", type=int, default=10000)
    ap.add_argument("--to", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    seconds, counts = timed(lambda: count_words([corpus(args.corpus)], [SPECIAL], workers=2), 1)
    print("count %s: %.2fs, %d unique words" % (args.corpus, seconds, len(counts)))
    parent_s, (vocab, merges) = timed(lambda: train_from_counts(counts, args.start), args.repeats)
    direct_s, (_, direct) = timed(lambda: train_from_counts(counts, args.to), args.repeats)
    parent = Model(vocab, merges, [], "json")
    extend_s, (_, extended) = timed(lambda: train_from_counts(counts, args.to, extend=parent), args.repeats)
    print("train to %d: %.2fs" % (args.start, parent_s))
    print("train to %d: %.2fs" % (args.to, direct_s))
    print(
        "extend %d -> %d: %.2fs (%.2f of training to %d)"
        % (args.start, args.to, extend_s, extend_s / direct_s, args.to)
    )
    print("extension's merges == direct merges:", extended == direct)
    replay_s, _ = timed(lambda: train_from_counts(counts, args.start, extend=parent), args.repeats)
    later_s = min(_merges_after(counts, args.to, len(merges)) for _ in range(args.repeats))
    budget = later_s + replay_s
    print(
        "goal: extend <= the merges after %d in the direct run (%.2fs) + one replay of the parent's "
        "(%.2fs) = %.2fs: %s"
        % (args.start, later_s, replay_s, budget, "met" if extend_s <= budget else "missed")
    )


class _Clock(object):
    """A ``Progress`` for ``train_from_counts``: notes when the merges pass ``after``."""

    def __init__(self, after):
        self.after, self.passed = after, None
        self.watch = stopwatch()

    def start(self):
        pass

    def finish(self):
        pass

    def merges(self, done, total):
        if self.passed is None and done >= self.after:
            self.passed = self.watch.elapsed()


def _merges_after(counts, vocab_size, after):
    """Seconds the direct run to ``vocab_size`` spends after its merge ``after`` (to the
    hundred: the engine reports progress every 100 merges)."""
    clock = _Clock(after)
    train_from_counts(counts, vocab_size, progress=clock)
    return clock.watch.elapsed() - clock.passed


if __name__ == "__main__":
    main()
