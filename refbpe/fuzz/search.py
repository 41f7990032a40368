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

With ``workers`` > 1 the classes are shared among processes
(``fuzz.parallel``), each running the rounds over its own classes; the
finding taken is the first in (round, class) order, and the example counts
are those of the rounds one process would have run until it: the same
``seed`` gives the same report for every number of workers, as long as the
time budget does not cut the search short (``max_examples`` bounds it).

Cost: per example, one run of theirs and one reference training of a small
case (``trial``); shrinking, typically 50-300 more runs.
"""

import os
import tempfile
import time

from ..testing.strategies import CLASSES, COUNT_CLASSES, ENCODE_CLASSES, corpora, texts, word_counts
from .parallel import search_in_workers
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
    def __init__(self, deadline, shrink_budget, on_first=None):
        self.deadline, self.shrink_budget = deadline, shrink_budget
        self.on_first = on_first  # called at the first failure, before shrinking
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
            if self.on_first is not None:
                self.on_first()
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
    workers=1,
):
    """The first ``Finding`` (minimal), or None; and {class: examples run}.

    ``workers`` > 1 shares the classes among that many processes
    (``fuzz.parallel``); the finding and the counts are those this process
    alone would give for the same examples."""
    start = time.time()
    search = Search(trial, classes, start + budget, max_examples, seed, database, workdir, shrink_budget)
    search.strategies_for(pattern, special_tokens)
    if workers > 1 and len(classes) > 1:
        return first_finding(classes, search_in_workers(search, workers, start))
    return first_finding(classes, [search.run(classes, start)])


class Search(object):
    """The settings of one search, shared by every worker: ``run(classes)`` searches some classes."""

    def __init__(self, trial, classes, deadline, max_examples, seed, database, workdir, shrink_budget):
        self.trial, self.classes, self.deadline = trial, list(classes), deadline
        self.limit = max_examples if max_examples is not None else float("inf")
        self.seed, self.database, self.workdir = seed, database, workdir
        self.shrink_budget = shrink_budget
        self.strategies, self.pattern, self.special_tokens = {}, None, None

    def __getstate__(self):  # a worker started without fork rebuilds the strategies (lambdas)
        return dict(self.__dict__, strategies={})

    def strategies_for(self, pattern, special_tokens):
        self.pattern, self.special_tokens = pattern, special_tokens
        tokens = model_tokens(self.trial.model) if self.trial.model is not None else None
        self.strategies = {
            c: case_strategy(self.trial.mode, c, pattern, special_tokens, tokens) for c in self.classes
        }

    def run(self, classes, start, cap=None, on_find=None):
        """(found, counts): ``found`` is (``Finding``, its round) or None, ``counts``
        {class: [examples run in each round]}.  Rounds over ``classes`` (see the module
        docstring) until the first failure; ``cap()`` (when given) is the last round to
        start, ``on_find(round)`` is told of a failure before it is shrunk."""
        if not self.strategies:
            self.strategies_for(self.pattern, self.special_tokens)
        counts = {c: [] for c in classes}
        order = {c: i for i, c in enumerate(CLASSES + COUNT_CLASSES + ENCODE_CLASSES)}
        rnd = 0
        while time.time() < self.deadline and any(sum(counts[c]) < self.limit for c in classes):
            if cap is not None and rnd > cap():
                break
            for c in classes:
                n = int(min(BATCH, 2 ** (rnd + 1), self.limit - sum(counts[c])))
                if n <= 0 or time.time() >= self.deadline:
                    counts[c].append(0)
                    continue
                told = (lambda r=rnd: on_find(r)) if on_find is not None else None
                state = _State(self.deadline, self.shrink_budget, told)
                db = os.path.join(self.database, self.trial.mode, c) if self.database else None
                class_seed = (self.seed * 1000 + rnd) * 100 + order.get(c, 99)
                found = _batch(self.trial, self.strategies[c], n, class_seed, db, state, self.workdir)
                counts[c].append(state.examples)
                if found is not None:
                    case, verdict, flaky = found
                    shrink = time.time() - state.first_at
                    finding = Finding(case, verdict, c, None, state.first_at - start, shrink, flaky)
                    finding.batch = (state.examples, state.examples_at_find)
                    return (finding, rnd), counts
            rnd += 1
        return None, counts


def first_finding(classes, results):
    """(``Finding`` or None, {class: examples run}) from the ``Search.run`` results of some
    classes each: the failure found first in the order of one process running the rounds
    over ``classes`` (round, then class), with the examples that process would have run
    until the failure (so ``Finding.examples`` is their sum)."""
    counts, found = {}, []
    for f, c in results:
        counts.update(c)
        if f is not None:
            found.append(f)
    if not found:
        return None, {c: sum(counts[c]) for c in classes}
    index = {c: i for i, c in enumerate(classes)}
    finding, rnd = min(found, key=lambda f: (f[1], index[f[0].bug_class]))
    at = index[finding.bug_class]
    runs = {c: sum(counts[c][: rnd + 1 if index[c] <= at else rnd]) for c in classes}
    batch, at_find = finding.batch
    runs[finding.bug_class] -= batch - at_find  # the examples until the find; shrinking's are not counted
    finding.examples = sum(runs.values())
    return finding, runs
