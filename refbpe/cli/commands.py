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
"""

import signal
import sys

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


def _raise_terminated(signum, frame):
    raise Terminated()


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    args.command_line = sys.argv if argv is None else None  # a command may re-execute itself (``pypy_gc``)
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
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
        signal.signal(signal.SIGTERM, previous)
