"""``refbpe COMMAND``: the parser of every subcommand, and ``main``, which runs one.

Exit status: 0 success; 1 a run that failed for another reason than its
input (a counting worker died, out of memory; for ``verify``: different);
2 bad input or an unreadable or unwritable file; 130 on Ctrl-C (SIGINT); 143
on SIGTERM; 141, silently, when the reader of stdout goes away
(``refbpe encode ... | head``), as other Unix tools do.  Errors are one line
on stderr (``refbpe: error: ...``), never a traceback.  Inputs and outputs are
checked before any work starts, and outputs are written to temporary files
and renamed into place only when all of them are complete, so a failed or
interrupted run leaves no file behind and the previous outputs intact.
A command-line run ends at the latest ``INTERRUPT_GRACE`` seconds after Ctrl-C or
SIGTERM, whatever its cleaning up waits for (``_end_after_grace``).
"""

import os
import signal
import sys
import threading
import time

from .. import __version__
from ..corpus.pool import WorkerError
from . import certify, conformance, convert, count, decode, encode, fuzz, show, split, stats, train, verify
from .common import EXIT_BAD_INPUT, EXIT_FAILED, CliError, Parser, Terminated, fail, silence_stdout

__all__ = ["build_parser", "main"]

# In the order ``refbpe --help`` lists them.  Each is named after its module and holds
# ``HELP`` (the line in that list), ``DESCRIPTION`` (its own --help's), ``add_arguments(parser)``
# and ``run(args)``.
SUBCOMMANDS = (train, count, encode, decode, stats, show, split, convert, verify, certify, fuzz, conformance)


def build_parser():
    parser = Parser(
        prog="refbpe",
        description="Reference byte-level BPE (CS336 semantics). Run 'refbpe COMMAND --help' for a command's "
        "options.",
    )
    parser.add_argument("--version", action="version", version="refbpe " + __version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for module in SUBCOMMANDS:
        name = module.__name__.rsplit(".", 1)[1]
        command = sub.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
        module.add_arguments(command)
        command.set_defaults(func=module.run)
    return parser


# A command-line run stops as the interrupt's exception unwinds (the pool's processes
# stopped, temporary files removed); should that hang, the process ends this many seconds
# after the signal anyway, with the signal's exit status.
INTERRUPT_GRACE = 10.0


def _interrupt_handler(exception, status, command_line):
    """A handler of SIGINT or SIGTERM that raises ``exception``; on the command line it first
    starts the grace (``_end_after_grace``): a library caller's process is left alone."""

    def handler(signum, frame):
        if command_line:
            _end_after_grace(status)
        raise exception()

    return handler


def _end_after_grace(status):
    """End the process with ``status`` ``INTERRUPT_GRACE`` seconds from now, from a daemon
    thread, in case the unwinding never ends: once in the suite's CPython run,
    ``train --workers 3`` outlived a Ctrl-C by 30 s while counting on a loaded machine
    (tests/test_interrupts.py), which 700 interrupts of
    perf/experiments/interrupt_hang.py --signal INT did not reproduce."""

    def end():
        time.sleep(INTERRUPT_GRACE)
        os.write(2, b"refbpe: still stopping %g s after the signal; ended\n" % INTERRUPT_GRACE)
        os._exit(status)

    threading.Thread(target=end, name="refbpe-interrupt-grace", daemon=True).start()


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    args.command_line = sys.argv if argv is None else None  # a command may re-execute itself (``pypy_gc``)
    on_line = args.command_line is not None
    terminated = _interrupt_handler(Terminated, 128 + signal.SIGTERM, on_line)
    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, terminated)}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not ignored, not the caller's own
        interrupted = _interrupt_handler(KeyboardInterrupt, 128 + signal.SIGINT, on_line)
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, interrupted)
    try:
        return args.func(args)
    except CliError as e:
        return fail("refbpe: error: %s" % e, EXIT_BAD_INPUT)
    except BrokenPipeError:  # the reader went away (``refbpe encode ... | head``): stop quietly
        silence_stdout()
        return 128 + signal.SIGPIPE
    except MemoryError:
        return fail("refbpe: error: out of memory; nothing was written", EXIT_FAILED)
    except (OSError, ValueError) as e:  # InputError, ModelFileError, a failed read or write
        return fail("refbpe: error: %s" % e, EXIT_BAD_INPUT)
    except WorkerError as e:
        return fail("refbpe: error: %s; nothing was written" % e, EXIT_FAILED)
    except KeyboardInterrupt:
        return fail("refbpe: interrupted", 128 + signal.SIGINT)
    except Terminated:
        return fail("refbpe: terminated", 128 + signal.SIGTERM)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
