"""``refbpe fuzz``: generate inputs that break BPE implementations, judge theirs against the
reference, and shrink a failure to a minimal input.

Modules: ``target`` (their command or Python function, run in a child process
with a timeout; their output read back), ``child`` (the child that calls a
Python function), ``persistent`` (``--persistent``: one process of theirs
answers many cases over a line protocol), ``trial`` (one case: inputs written, theirs run, judged by
``verify.judge``), ``search`` (Hypothesis: batches of each class in rounds,
the first failure shrunk), ``parallel`` (``--workers``: the classes shared
among processes), ``findings`` (the findings directory: the minimal
input, theirs, the expected answer, the report, ``repro.sh``) and ``pack``
(the conformance pack: fixed cases written and checked without Hypothesis).
The strategies are ``refbpe.testing.strategies``.  Hypothesis is optional
(``pip install 'refbpe[fuzz]'``); only ``search`` needs it.  The command line
is ``refbpe.cli.fuzz`` and ``refbpe.cli.conformance``.
"""

from .findings import write_findings
from .search import search_for_failure
from .target import Target, TargetError
from .trial import Trial

__all__ = ["Target", "TargetError", "Trial", "search_for_failure", "write_findings"]
