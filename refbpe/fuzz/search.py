"""The search: cases generated class by class, the first failure shrunk: ``search_for_failure``.

Phases:

1. Rounds over the classes: each round runs a batch of examples of every
   class in turn (``@given`` with the class's strategy, ``@seed(seed, round,
   class)``): 2, 4, 8, 16, then 20 examples, so every class is tried within
   the first seconds even when their program is slow to start, and the same
   seed gives the same examples.  The time budget stops new examples (a
   batch's remaining examples return at once); ``max_examples`` bounds each
   class.
2. At the first failing case, Hypothesis shrinks it (fewer atoms, earlier
   choices, smaller vocab sizes) to a minimal failing case.  A shrink never
   changes the kind of finding: each kind raises its own exception type, which
   Hypothesis keeps apart.
3. The result is the case Hypothesis ends with.  When their output changes
   between runs of the same case (Hypothesis reports it as flaky: ties broken
   by hash order do this), or shrinking outlives ``shrink_budget``, the
   smallest failing case seen is taken instead, and ``flaky`` says so.

Failing cases are saved in Hypothesis's example database (``database``: a
directory) and replayed first on the next run, one database per mode and class.

Cost: per example, one run of theirs and one reference training of a small
case (``trial``); shrinking, typically 50-300 more runs.
"""

import os
import tempfile
import time

from ..testing.strategies import CLASSES, COUNT_CLASSES, ENCODE_CLASSES, corpora, texts, word_counts
from .trial import case_bytes

__all__ = ["search_for_failure"]

BATCH = 20
_KINDS = ("difference", "crash", "exit-status", "timeout", "unreadable-output")


class _Found(Exception):
    def __init__(self, verdict, case):
        Exception.__init__(self, verdict.kind)
        self.verdict, self.case = verdict, case


# One exception type per kind, so Hypothesis's shrinker keeps each kind apart.
_FOUND = {k: type("Found_" + k.replace("-", "_"), (_Found,), {}) for k in _KINDS}


class Finding(object):
    """The minimal failing ``case``, its ``verdict``, the ``bug_class`` that found it,
    ``examples`` run until then, ``find_seconds``, ``shrink_seconds``, ``flaky``."""

    def __init__(self, case, verdict, bug_class, examples, find_seconds, shrink_seconds, flaky):
        self.case, self.verdict, self.bug_class = case, verdict, bug_class
        self.examples, self.find_seconds, self.shrink_seconds = examples, find_seconds, shrink_seconds
        self.flaky = flaky


def model_tokens(model, limit=5000):
    """The model's longest tokens of two bytes or more that decode as UTF-8 (strs), for the
    ``model-tokens`` class."""
    words = set()
    for b in sorted((b for b in model.vocab.values() if len(b) > 1), key=lambda b: (-len(b), b)):
        try:
            words.add(b.decode("utf-8"))
        except UnicodeDecodeError:
            continue
        if len(words) >= limit:
            break
    return sorted(words) or ["a"]


def case_strategy(mode, bug_class, pattern=None, special_tokens=None, tokens=None):
    """The Hypothesis strategy of case dicts of ``bug_class`` for ``mode``."""
    if bug_class in COUNT_CLASSES:
        return word_counts().map(lambda t: {"counts": t[0], "vocab_size": t[1], "special_tokens": []})
    if mode == "train":
        return corpora(bug_class, pattern).map(
            lambda c: {"text": c.text, "vocab_size": c.vocab_size, "special_tokens": c.special_tokens}
        )
    specials = list(special_tokens or [])
    return texts(bug_class, pattern, tokens).map(lambda t: {"text": t, "special_tokens": specials})


class _State(object):
    def __init__(self, deadline, shrink_budget):
        self.deadline, self.shrink_budget = deadline, shrink_budget
        self.first_at = None
        self.smallest = None
        self.examples = 0
        self.examples_at_find = 0

    def idle(self):
        """True when no more examples should run: out of budget, or shrinking for too long."""
        now = time.time()
        if self.first_at is None:
            return now > self.deadline
        return now > self.first_at + self.shrink_budget

    def record(self, case, verdict):
        if self.first_at is None:
            self.first_at = time.time()
            self.examples_at_find = self.examples
        key = (case_bytes(case), case.get("vocab_size", 0), len(case.get("special_tokens", ())))
        if self.smallest is None or key < self.smallest[0]:
            self.smallest = (key, case, verdict)


def _batch(trial, strategy, n, seed, database, state, workdir):
    """Run up to ``n`` examples; (case, verdict, flaky) of a failure, or None."""
    # Imported here, not with the module: ``refbpe train`` starts without loading Hypothesis
    # (an optional extra; ``strategies.require_hypothesis`` has said whether it is installed).
    import hypothesis
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis.database import DirectoryBasedExampleDatabase
    from hypothesis.errors import Flaky

    @settings(
        max_examples=n,
        database=DirectoryBasedExampleDatabase(database) if database else None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        print_blob=False,
    )
    @hypothesis.seed(seed)
    @given(strategy)
    def probe(case):
        if state.idle():
            return
        state.examples += 1
        with tempfile.TemporaryDirectory(dir=workdir) as d:
            verdict = trial.run(case, d)
        if verdict is not None:
            state.record(case, verdict)
            raise _FOUND[verdict.kind](verdict, case)

    try:
        probe()
    except _Found as found:
        return found.case, found.verdict, False
    except Flaky:
        if state.smallest is None:
            raise
        return state.smallest[1], state.smallest[2], True
    if state.smallest is not None:  # shrinking outlived its budget
        return state.smallest[1], state.smallest[2], True
    return None


def search_for_failure(
    trial,
    classes,
    budget=60.0,
    max_examples=None,
    seed=0,
    database=None,
    workdir=None,
    pattern=None,
    shrink_budget=120.0,
    special_tokens=None,
):
    """The first ``Finding`` (minimal), or None; and {class: examples run}."""
    start = time.time()
    deadline = start + budget
    runs = dict.fromkeys(classes, 0)
    tokens = model_tokens(trial.model) if trial.model is not None else None
    strategies = {c: case_strategy(trial.mode, c, pattern, special_tokens, tokens) for c in classes}
    order = {c: i for i, c in enumerate(CLASSES + COUNT_CLASSES + ENCODE_CLASSES)}
    limit = max_examples if max_examples is not None else float("inf")
    rnd = 0
    while time.time() < deadline and any(runs[c] < limit for c in classes):
        for c in classes:
            n = int(min(BATCH, 2 ** (rnd + 1), limit - runs[c]))
            if n <= 0 or time.time() >= deadline:
                continue
            state = _State(deadline, shrink_budget)
            db = os.path.join(database, trial.mode, c) if database else None
            class_seed = (seed * 1000 + rnd) * 100 + order.get(c, 99)
            found = _batch(trial, strategies[c], n, class_seed, db, state, workdir)
            runs[c] += state.examples
            if found is not None:
                case, verdict, flaky = found
                find = state.first_at - start
                shrink = time.time() - state.first_at
                examples = sum(runs.values()) - state.examples + state.examples_at_find
                return Finding(case, verdict, c, examples, find, shrink, flaky), runs
        rnd += 1
    return None, runs
