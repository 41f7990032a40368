"""Command line: ``refbpe COMMAND`` (also ``python -m refbpe``).

A layer on top of the library: the library never imports it.  ``commands``
holds the parser and runs a subcommand (and lists the exit statuses);
``common`` holds what every subcommand shares (argument types, option groups,
checks, errors), ``model_argument`` the MODEL argument, ``train_settings`` the
training conventions' options and the one place that builds their ``TrainSettings``,
and ``reference`` what verify and certify read (their model, the reference word counts); each
subcommand is one module with its ``HELP``, ``DESCRIPTION``, ``add_arguments(parser)`` and
``run(args)`` (``commands`` makes its parser):
``train``, ``count``, ``encode``, ``decode``, ``stats``, ``show``, ``split``,
``convert``, ``verify``, ``certify``, ``fuzz``, ``conformance``; ``pypy_gc``
restarts a long ``encode``, ``train`` or ``verify`` under PyPy with the nursery it was tuned for, and
``pypy_jit`` raises PyPy's JIT thresholds for ``verify``.

This file imports only ``pypy_gc`` and ``pypy_jit`` (the standard library's modules): ``main``
lets it restart a long ``train``, ``encode`` or ``verify`` from the command line alone (and
set ``verify``'s JIT thresholds before anything else is imported), and imports
``commands``, every subcommand and the library behind them, only afterwards,
so that only the restarted process pays for them (about 0.2 CPU seconds under
PyPy, ``perf/startup.py``).
"""

import importlib
import sys

from .pypy_gc import restart_early
from .pypy_jit import tune_jit_early

__all__ = ["build_parser", "main"]


def build_parser():
    """The ``refbpe`` parser, every subcommand registered (``commands.build_parser``)."""
    return _commands().build_parser()


def main(argv=None):
    """Run ``refbpe`` on ``argv`` (None: this process's own command line); returns the exit status."""
    if argv is None:
        restart_early(sys.argv)
        tune_jit_early(sys.argv)
    return _commands().main(argv)


def _commands():
    """``refbpe.cli.commands``, imported on first use: after ``restart_early``."""
    return importlib.import_module(".commands", __name__)
