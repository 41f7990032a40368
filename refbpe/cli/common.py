"""What every subcommand shares: argument types, option groups, input and output checks, errors.

This module imports nothing else of the command line, so every subcommand can
use it.  An option spelled the same in two subcommands means the same thing
there (docs/cli.md, "Options"): ``-o/--out`` is what the command writes, ``--format``
the format of the command's model (written by ``train``, read by the others),
``--special-token`` a special token, and the counting options (``--workers``,
``--chunk-size``, ``--errors``, ``--executor``, ``--executor-data``,
``--progress``/``--quiet``, ``--report``, ``--pattern``) are one group, added by
``add_counting_arguments`` to every command that counts a corpus, the encoding
options likewise (``add_encoding_arguments``, run by ``encoding_run``).  What an
option shared by several subcommands takes (its spellings, type, metavar) is
stated once, in ``OPTIONS``; ``add_option`` adds it with the subcommand's own help.
"""

import argparse
import contextlib
import difflib
import json
import os
import sys
import tempfile

from .._util.atomic import atomic_write, missing_directories, remove_empty_directories
from .._util.quoting import one_line
from .._util.reading import STREAM_LIMIT, read_whole
from ..corpus.cluster import dask_executor
from ..corpus.count import DEFAULT_CHUNK_SIZE, InputError
from ..corpus.encode import EncodeRun
from ..corpus.idfile import DTYPES
from ..corpus.io import is_stream, parse_size
from ..corpus.progress import Progress, clear_status_line
from ..learn.profiles import get_profile, profile_names
from ..pretokenize.patterns import Pattern, pattern_key, pattern_names
from ..pretokenize.unicode_tables import UNICODE_VERSIONS, unicode_version

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FAILED",
    "CliError",
    "Parser",
    "positive_float",
    "Terminated",
    "add_allowed_special_argument",
    "add_counting_arguments",
    "add_errors_argument",
    "add_option",
    "add_encoding_arguments",
    "add_pattern_argument",
    "add_profile_argument",
    "add_special_token_argument",
    "check_inputs",
    "check_output_dir",
    "check_output_file",
    "check_report_output",
    "check_special_tokens",
    "counting_error",
    "counting_options",
    "encoding_run",
    "executor_context",
    "fail",
    "make_progress",
    "positive_int",
    "read_input_bytes",
    "read_text_arg",
    "silence_stdout",
    "write_report",
    "write_stdout",
]

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class CliError(Exception):
    """An error reported as one line, exit status 2."""


class Terminated(BaseException):
    """Raised in the main thread by SIGTERM, so that cleanup runs as for Ctrl-C."""


# -- argument types ---------------------------------------------------------------


def _argument(parse, text):
    """``parse(text)``, its ValueError as argparse's one-line usage error."""
    try:
        return parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def size(text):
    """A byte count with an optional K, M or G suffix."""
    return _argument(parse_size, text)


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected an integer, got %r" % (text,))
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive, got %d" % value)
    return value


# -- the parser -------------------------------------------------------------------


def positive_float(text):
    """A number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError("expected a positive number of seconds, got %r" % text)
    return value


class Parser(argparse.ArgumentParser):
    """Usage errors as one line (not the usage block), exit status 2.

    Options are not abbreviated: a prefix that matches today could match two
    options tomorrow, and scripts calling the oracle must not change meaning.
    An unknown option is reported first, with the closest valid spelling,
    before argparse would complain about a required option the typo was
    meant to be.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(EXIT_BAD_INPUT, "%s: error: %s (see '%s --help')\n" % (self.prog, message, self.prog))

    def parse_known_args(self, args=None, namespace=None):
        arg_list = sys.argv[1:] if args is None else list(args)
        self._check_options(arg_list)
        parsed, rest = super().parse_known_args(arg_list, namespace)
        if getattr(parsed, "unicode", None) is not None:
            # One pattern key ("name@version") travels on: a missing name is the
            # profile's or the model's (``patterns.pattern_key``).
            parsed.pattern = pattern_key(parsed.pattern, parsed.unicode)
        return parsed, rest

    def _check_options(self, args):
        """Name the first unknown option in ``args`` (up to the subcommand, if any)."""
        known = set(self._option_string_actions)
        for arg in args:
            if arg == "--":
                return
            if not arg.startswith("-") or arg == "-" or self._negative_number_matcher.match(arg):
                if self._subparsers is not None:
                    return  # the subcommand's parser checks the rest
                continue
            option = arg.split("=", 1)[0]
            if option not in known:
                self.error("unknown option %s%s" % (option, _closest(option, known)))


def _closest(option, known):
    """' (did you mean --x?)' for the known option spelled most like ``option``, or ''.

    Compared without the leading dashes, which every option shares."""
    names = {k.lstrip("-"): k for k in known if k.startswith("--")}
    close = difflib.get_close_matches(option.lstrip("-"), sorted(names), n=1, cutoff=0.6)
    return " (did you mean %s?)" % names[close[0]] if close else ""


def add_special_token_argument(p, help="a special token (repeatable), e.g. '<|endoftext|>'"):
    p.add_argument(
        "--special-token", action="append", default=[], metavar="TOKEN", type=utf8_argument, help=help
    )


def add_allowed_special_argument(p, scope):
    """``--special-tokens all|none|TOKEN...``: the special tokens an encoder matches (tiktoken's
    ``allowed_special``; ``specials.allowed_specials`` reads it)."""
    p.add_argument(
        "--special-tokens",
        nargs="+",
        metavar="all|none|TOKEN",
        type=utf8_argument,
        default=None,
        help="%s: the special tokens of the model matched as special tokens, as tiktoken's "
        "allowed_special: all (the default: every special token of the model), none (special-token "
        "text is ordinary text, as encode_ordinary) or these tokens only" % scope,
    )


def utf8_argument(text):
    """``text`` if it is valid UTF-8 (a command line's undecodable bytes come as surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise argparse.ArgumentTypeError(
            "not valid UTF-8 (byte 0x%02x at offset %d)" % (ord(text[e.start]) & 0xFF, e.start)
        )
    return text


def add_profile_argument(p):
    """``--profile``: the trainer whose conventions to reproduce (``refbpe.learn.profiles``)."""
    p.add_argument(
        "--profile",
        choices=profile_names(),
        default=None,
        help="reproduce this trainer exactly: cs336 (the default), rustbpe (rustbpe %s) or hf "
        "(HF tokenizers %s): tie rule, id layout, how input is cut, special tokens"
        % (get_profile("rustbpe").peer[1], get_profile("hf").peer[1]),
    )


def pattern_regex(text):
    """``--pattern-regex``: the pattern's name (``regex:TEXT``) once ``TEXT`` is known to compile."""
    try:
        return Pattern.from_regex(text).name
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def add_pattern_argument(p):
    """``--pattern NAME`` or ``--pattern-regex REGEX`` (one of them), both into ``args.pattern``."""
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--pattern-regex",
        dest="pattern",
        type=pattern_regex,
        default=None,
        metavar="REGEX",
        help="a split pattern of your own, in the regex module's syntax (docs/patterns.md lists what is "
        "supported), with refbpe's pinned Unicode classes; a known pattern's text uses its scanner",
    )
    group.add_argument(
        "--pattern",
        choices=pattern_names(),
        default=None,
        metavar="NAME",
        help="the split pattern: %s (default gpt2, or the --profile's own: rustbpe's is llama3; "
        "llama3 is cl100k's original form)" % ", ".join(pattern_names()),
    )
    add_unicode_argument(p)


def unicode_version_arg(text):
    """``--unicode``: a known Unicode version (``unicode_tables``), canonical."""
    return _argument(unicode_version, text)


def add_unicode_argument(p):
    """``--unicode``: the Unicode version the split pattern reads; joined to ``--pattern`` after parsing."""
    p.add_argument(
        "--unicode",
        type=unicode_version_arg,
        default=None,
        metavar="VERSION",
        help="the Unicode version whose letters, numbers and marks the split reads: %s (default: the "
        "model's, else the --profile's or encoding's peer's, else the latest; docs/unicode.md)"
        % ", ".join(UNICODE_VERSIONS),
    )


# -- options spelled alike in several subcommands -------------------------------------

# One spelling, one meaning (docs/cli.md, "Options"): what each option shared by several
# subcommands takes, stated once.  A subcommand adds one with ``add_option``, giving the help
# that says what it does there (and its default, where that differs).
OPTIONS = {
    "corpus": {"metavar": "CORPUS"},
    "--out": {"flags": ("-o", "--out")},
    "--json": {"action": "store_true"},
    "--quiet": {"action": "store_true"},
    "--vocab-size": {"type": positive_int},
    "--extend": {"metavar": "MODEL"},
    "--inherit-merges": {"type": int, "metavar": "K"},
    "--trace": {"metavar": "FILE.jsonl"},
    "--dtype": {"choices": DTYPES},
    "--hex": {"action": "store_true"},
    "--workers": {"type": positive_int},
    "--chunk-size": {"type": size, "metavar": "BYTES"},
    "--report": {"metavar": "FILE"},
    "--seed": {"type": int, "default": 0},
    "--timeout": {"type": positive_float, "metavar": "SECONDS"},
    "--persistent": {"action": "store_true"},
}


def add_option(p, name, help, **given):
    """Add option ``name`` of ``OPTIONS`` to ``p`` (a parser or a group) with ``help``;
    ``given`` adds to or overrides what ``OPTIONS`` says (a default, ``required``, a metavar)."""
    options = dict(OPTIONS[name], help=help)
    options.update(given)
    flags = options.pop("flags", (name,))
    return p.add_argument(*flags, **options)


def add_errors_argument(p):
    """``--errors``: invalid UTF-8 in the input (``corpus.io``'s handling)."""
    p.add_argument(
        "--errors",
        choices=("strict", "replace", "ignore"),
        default="strict",
        help="invalid UTF-8 handling (default strict: fail)",
    )


def _add_progress_arguments(p, report_help):
    """``--progress`` or ``--quiet``, and ``--report FILE``."""
    shown = p.add_mutually_exclusive_group()
    shown.add_argument(
        "--progress", action="store_true", help="show progress even when stderr is not a terminal"
    )
    add_option(shown, "--quiet", "no progress and no summary")
    add_option(p, "--report", report_help)


def add_counting_arguments(p, workers_help=None):
    """The options of every command that counts a corpus (train, count, verify)."""
    add_pattern_argument(p)
    add_option(
        p,
        "--workers",
        workers_help
        or "processes for counting (default: CPU count; 1 = in-process); with --executor, the worker "
        "threads to keep busy, 2 units in flight each (default: the cluster's worker threads)",
    )
    add_option(
        p,
        "--chunk-size",
        "bytes per work unit; K, M, G suffixes (default: about 3 units per worker, 8M-16M)",
        default=DEFAULT_CHUNK_SIZE,
    )
    add_errors_argument(p)
    p.add_argument(
        "--executor",
        metavar="dask://HOST:PORT",
        help="count on this Dask cluster (needs pip install 'refbpe[dask]'); the result is the same as a "
        "local run",
    )
    p.add_argument(
        "--executor-data",
        choices=("path", "chunk"),
        default="path",
        help="how input bytes reach the cluster's workers: path (default: they open the same paths, "
        "a shared filesystem) or chunk (this process reads the inputs and ships the bytes)",
    )
    _add_progress_arguments(p, "write per-phase figures as JSON")


def add_encoding_arguments(p, what="encoding"):
    """The options of the commands that encode a corpus (encode, stats): its work units and output."""
    add_option(p, "--workers", "processes for %s (default: CPU count; 1 = in-process)" % what)
    add_option(
        p,
        "--chunk-size",
        "bytes per work unit; K, M, G suffixes (default: 256K, or about 3 units per worker); "
        "the ids do not depend on it",
    )
    add_errors_argument(p)
    _add_progress_arguments(p, "write the figures as JSON")


def make_progress(args):
    return Progress(enabled=(args.progress or sys.stderr.isatty()) and not args.quiet)


def encoding_run(args, tok, inputs, label, **options):
    """The ``EncodeRun`` of ``tok`` over ``inputs`` with the encoding options
    (``add_encoding_arguments``) and ``options``, and its ``Progress``, started, which
    shows the bytes done as ``label``."""
    progress = make_progress(args)
    progress.start()
    run = EncodeRun(
        tok,
        inputs,
        workers=args.workers,
        chunk_size=args.chunk_size,
        errors=args.errors,
        progress=lambda done, total: progress.bytes(done, total, label),
        **options,
    )
    return run, progress


def executor_context(args):
    """A context giving ``(executor, threads)`` for ``--executor``, or ``(None, None)``."""
    if not args.executor:
        return contextlib.nullcontext((None, None))
    return dask_executor(args.executor)  # imports distributed (optional) only now


def counting_options(args, executor, threads, workers=None):
    """The counting options of ``train_bpe``/``count_corpus`` as the command line gave them."""
    return {
        "workers": args.workers or threads or workers,
        "chunk_size": args.chunk_size,
        "errors": args.errors,
        "executor": executor,
        "executor_data": args.executor_data,
        "pattern": args.pattern,
    }


def counting_error(args, error):
    """A CliError for an error raised while counting (a worker's included)."""
    if isinstance(error, InputError) or not args.executor or args.executor_data != "path":
        return CliError(str(error))
    return CliError(
        "%s (the cluster's workers open the inputs by path: they need the same files at the same "
        "paths, else use --executor-data chunk)" % error
    )


# -- checks before any work --------------------------------------------------------


def check_inputs(sources):
    """A one-line CliError for an input that is missing, a directory or unreadable."""
    for s in sources:
        if s == "-":
            continue
        if os.path.isdir(s):
            raise CliError("%s: is a directory, not a file" % s)
        if not os.path.exists(s):
            raise CliError("%s: no such file" % s)
        if is_stream(s) and not s.endswith(".gz"):  # opening a FIFO to check it would take its writer
            if not os.access(s, os.R_OK):
                raise CliError("%s: cannot read (permission denied)" % s)
            continue
        try:
            open(s, "rb").close()
        except OSError as e:
            raise CliError("%s: cannot read (%s)" % (s, e.strerror or e))


def check_special_tokens(tokens):
    for k, token in enumerate(tokens):
        if token in tokens[:k]:
            raise CliError("special token %r is given twice" % (token,))


def check_output_dir(directory, label="--out"):
    """A one-line CliError unless ``directory`` is, or can be made, a writable directory.

    Checked before any work, so that a long run does not fail at its end: a
    probe file is made there (and directories when missing), then removed.
    """
    path = os.path.abspath(directory)
    if os.path.exists(path) and not os.path.isdir(path):
        raise CliError("%s %s: exists and is not a directory" % (label, directory))
    missing = missing_directories([path])  # deepest first
    existing = os.path.dirname(missing[-1]) if missing else path
    if not os.path.isdir(existing):
        raise CliError("%s %s: cannot create a directory under the file %s" % (label, directory, existing))
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".refbpe-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise CliError("%s %s: cannot write there (%s)" % (label, directory, e.strerror or e))
    finally:
        remove_empty_directories(missing)


def check_output_file(path, label):
    """As ``check_output_dir``, for a file to be written at ``path``."""
    if os.path.isdir(path):
        raise CliError("%s %s: is a directory" % (label, path))
    check_output_dir(os.path.dirname(os.path.abspath(path)), "%s %s:" % (label, path))


def check_report_output(args):
    """``--report FILE``, when given, checked as ``check_output_file`` checks an output."""
    if args.report:
        check_output_file(args.report, "--report")


# -- input and output --------------------------------------------------------------


def read_input_bytes(path, check_first=None):
    """The bytes of file ``path`` ('-': stdin); a missing file is a one-line CliError.  A stream
    (a pipe, a device) is read up to ``reading.STREAM_LIMIT``; ``check_first(first bytes)`` may
    refuse the input before the rest is read."""
    check_inputs([path])
    try:
        if path == "-":
            return read_whole(sys.stdin.buffer, "stdin", check_first, STREAM_LIMIT)
        with open(path, "rb") as f:
            return read_whole(f, path, check_first, None if os.path.isfile(path) else STREAM_LIMIT)
    except ValueError as e:
        raise CliError(str(e))


def read_text_arg(path):
    """The UTF-8 text of file ``path`` ('-': stdin), or a one-line CliError."""
    data = read_input_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CliError("%s: invalid UTF-8 at byte offset %d" % (path, e.start))


def write_report(path, report):
    """``--report``: the figures as JSON, written atomically."""
    atomic_write(path, (json.dumps(report, indent=2) + "\n").encode("utf-8"))


def write_stdout(text):
    """Write ``text`` as UTF-8 to stdout, all of it or an error.

    Under ``PYTHONUNBUFFERED`` stdout's text layer writes straight to the
    file and ignores a short write, so a reader that goes away would
    truncate the output without an error; the loop turns that into
    BrokenPipeError.
    """
    sys.stdout.flush()
    out = sys.stdout.buffer
    view = memoryview(text.encode("utf-8"))
    while view:
        written = out.write(view)
        view = view[len(view) if written is None else written :]
    out.flush()


def silence_stdout():
    """Point stdout at /dev/null so that flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def fail(line, status):
    """Print ``line`` as one printable line (after erasing a progress line); return ``status``."""
    try:
        clear_status_line()
        sys.stderr.write(one_line(line) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed
        pass
    return status
