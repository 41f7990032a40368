"""Command line: ``refbpe train | count | encode | decode`` (also ``python -m refbpe``).

Exit status: 0 success; 1 a run that failed for another reason than its
input (a counting worker died, out of memory); 2 bad input or an unreadable
or unwritable file; 130 on Ctrl-C (SIGINT); 143 on SIGTERM; 141, silently,
when the reader of stdout goes away (``refbpe encode ... | head``), as other
Unix tools do.  Errors are one line on stderr (``refbpe: error: ...``), never
a traceback.  Inputs and outputs are checked before any work starts, and
outputs are written to temporary files and renamed into place only when all
of them are complete, so a failed or interrupted run leaves no file behind
and the previous outputs intact.
"""

import argparse
import contextlib
import glob
import json
import os
import signal
import sys
import sysconfig
import tempfile
import time

from . import __version__
from .count import DEFAULT_CHUNK_SIZE, InputError, WorkerError
from .io import parse_size
from .progress import Progress, clear_status_line, peak_memory_mb

__all__ = ["main"]

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class CliError(Exception):
    """An error reported as one line, exit status 2."""


class Terminated(BaseException):
    """Raised in the main thread by SIGTERM, so that cleanup runs as for Ctrl-C."""


def _raise_terminated(signum, frame):
    raise Terminated()


def check_inputs(sources):
    """A one-line CliError for an input that is missing, a directory or unreadable."""
    for s in sources:
        if s == "-":
            continue
        if os.path.isdir(s):
            raise CliError("%s: is a directory, not a file" % s)
        if not os.path.exists(s):
            raise CliError("%s: no such file" % s)
        try:
            open(s, "rb").close()
        except OSError as e:
            raise CliError("%s: cannot read (%s)" % (s, e.strerror or e))


def check_output_dir(directory, label="--out"):
    """A one-line CliError unless ``directory`` is, or can be made, a writable directory.

    Checked before any work, so that a long run does not fail at its end: a
    probe file is made there (and directories when missing), then removed.
    """
    path = os.path.abspath(directory)
    if os.path.exists(path) and not os.path.isdir(path):
        raise CliError("%s %s: exists and is not a directory" % (label, directory))
    missing, existing = [], path
    while not os.path.exists(existing):
        missing.append(existing)
        existing = os.path.dirname(existing)
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
        for d in missing:  # deepest first
            try:
                os.rmdir(d)
            except OSError:
                pass


def check_output_file(path, label):
    """As ``check_output_dir``, for a file to be written at ``path``."""
    if os.path.isdir(path):
        raise CliError("%s %s: is a directory" % (label, path))
    check_output_dir(os.path.dirname(os.path.abspath(path)), "%s %s:" % (label, path))


def stdlib_sources():
    """The running interpreter's standard-library ``.py`` files, sorted."""
    root = sysconfig.get_paths()["stdlib"]
    files = sorted(glob.glob(os.path.join(root, "*.py")) + glob.glob(os.path.join(root, "*", "*.py")))
    return [
        f
        for f in files
        if "site-packages" not in f and "test" not in os.path.relpath(f, root).split(os.sep)[0]
    ]


def _size(text):
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected an integer, got %r" % (text,))
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive, got %d" % value)
    return value


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (not the usage block), exit status 2.

    Options are not abbreviated: a prefix that matches today could match two
    options tomorrow, and scripts calling the oracle must not change meaning.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super(_Parser, self).__init__(*args, **kwargs)

    def error(self, message):
        self.exit(EXIT_BAD_INPUT, "%s: error: %s (see '%s --help')\n" % (self.prog, message, self.prog))


def build_parser():
    parser = _Parser(
        prog="refbpe",
        description="Reference byte-level BPE (CS336 semantics): train, encode, decode.",
    )
    parser.add_argument("--version", action="version", version="refbpe " + __version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    t = sub.add_parser(
        "train",
        help="train a BPE tokenizer on text files (or on word-count files)",
        description="Train byte-level BPE and write DIR/vocab.json, DIR/merges.txt (GPT-2 format) "
        "and DIR/refbpe.json (special tokens). The input is CORPUS files, or with --counts the "
        "word-count files written by 'refbpe count' (added up; the same output as training on the corpus).",
    )
    t.add_argument(
        "corpus", nargs="*", metavar="CORPUS", help="UTF-8 text files; '-' is stdin, *.gz is decompressed"
    )
    t.add_argument(
        "--counts",
        nargs="+",
        metavar="FILE",
        help="train on these word-count files (from 'refbpe count', "
        "e.g. one per shard; *.gz allowed) instead of CORPUS",
    )
    t.add_argument(
        "--stdlib",
        action="store_true",
        help="train on this interpreter's standard-library sources (a sample that needs no download)",
    )
    t.add_argument(
        "--vocab-size", type=_positive_int, required=True, help="256 bytes + merges + special tokens"
    )
    t.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="TOKEN",
        help="a special token (repeatable), e.g. '<|endoftext|>'",
    )
    t.add_argument("--out", required=True, metavar="DIR", help="output directory (created if missing)")
    _add_counting_arguments(t)
    t.add_argument(
        "--format",
        choices=("gpt2", "hf", "tiktoken", "json"),
        default="gpt2",
        help="output format (default gpt2): gpt2 writes DIR/vocab.json, merges.txt, refbpe.json; "
        "hf DIR/tokenizer.json; tiktoken DIR/tokenizer.tiktoken (ranks; special tokens in DIR/refbpe.json); "
        "json DIR/tokenizer.hex.json",
    )
    shown = t.add_mutually_exclusive_group()
    shown.add_argument(
        "--progress", action="store_true", help="show progress even when stderr is not a terminal"
    )
    shown.add_argument("--quiet", action="store_true", help="no progress and no summary")
    t.add_argument("--report", metavar="FILE", help="write per-phase figures as JSON")
    t.set_defaults(func=cmd_train)

    c = sub.add_parser(
        "count",
        help="write the word (pre-token) counts of text files, or of one shard of them",
        description="Write the word (pre-token) counts of CORPUS: one 'count<TAB>escaped bytes' line per word, "
        "sorted by bytes (format: README, refbpe/countfile.py; *.gz output is gzip-compressed). With --shard I/N, "
        "only shard I of N byte ranges of the inputs (cut where no pre-token is split): the counts of shards "
        "0..N-1 add up to the whole, and 'refbpe train --counts' trains on them.",
    )
    c.add_argument(
        "corpus",
        nargs="+",
        metavar="CORPUS",
        help="UTF-8 text files ('-' is stdin, *.gz is decompressed; --shard needs regular files)",
    )
    c.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="TOKEN",
        help="a special token (repeatable); give train the same ones",
    )
    c.add_argument(
        "-o",
        "--out",
        required=True,
        metavar="FILE",
        help="output file (conventionally NAME.counts.tsv, or .counts.tsv.gz)",
    )
    c.add_argument(
        "--shard",
        metavar="I/N",
        help="count only shard I of N, numbered from 0 (0/4 .. 3/4): "
        "every shard must be given the same CORPUS files in the same order and the same special tokens",
    )
    _add_counting_arguments(c)
    c.set_defaults(func=cmd_count)

    e = sub.add_parser("encode", help="print the token ids of a text file")
    e.add_argument("model", metavar="DIR", help="directory written by 'refbpe train'")
    e.add_argument("text", metavar="FILE", help="UTF-8 text file ('-' for stdin)")
    e.add_argument("--json", action="store_true", help="one JSON list instead of one id per line")
    e.set_defaults(func=cmd_encode)

    d = sub.add_parser("decode", help="print the text of token ids (whitespace-separated or a JSON list)")
    d.add_argument("model", metavar="DIR", help="directory written by 'refbpe train'")
    d.add_argument("ids", metavar="FILE", help="file of ids ('-' for stdin)")
    d.set_defaults(func=cmd_decode)

    for register in _EXTRA_COMMANDS:
        register(sub)
    return parser


def _add_counting_arguments(p):
    p.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        help="processes for counting (default: CPU count; "
        "1 = in-process); with --executor, the worker threads to keep busy, 2 units in flight each "
        "(default: the cluster's worker threads)",
    )
    p.add_argument(
        "--chunk-size",
        type=_size,
        default=DEFAULT_CHUNK_SIZE,
        metavar="BYTES",
        help="bytes per work unit; K, M, G suffixes (default: about 3 units per worker, 8M-16M)",
    )
    p.add_argument(
        "--errors",
        choices=("strict", "replace", "ignore"),
        default="strict",
        help="invalid UTF-8 handling (default strict: fail)",
    )
    p.add_argument(
        "--executor",
        metavar="dask://HOST:PORT",
        help="count on this Dask cluster (needs pip install 'refbpe[dask]'); "
        "the result is the same as a local run",
    )
    p.add_argument(
        "--executor-data",
        choices=("path", "chunk"),
        default="path",
        help="how input bytes reach the cluster's workers: path (default: they open the same paths, "
        "a shared filesystem) or chunk (this process reads the inputs and ships the bytes)",
    )


# Other modules add subcommands here: each entry is ``register(subparsers)``.
_EXTRA_COMMANDS = []

# refbpe convert (exports) and refbpe verify (verify).
from . import exports as _exports  # noqa: E402
from . import verify as _verify

for _register in (_exports.register, _verify.register):
    if _register not in _EXTRA_COMMANDS:
        _EXTRA_COMMANDS.append(_register)


def _executor(args):
    """A context giving ``(executor, threads)`` for ``--executor``, or ``(None, None)``."""
    if not args.executor:
        return contextlib.nullcontext((None, None))
    from .cluster import dask_executor

    return dask_executor(args.executor)


def _counting_error(args, error):
    """A CliError for an error raised while counting (a worker's included)."""
    if isinstance(error, InputError) or not args.executor or args.executor_data != "path":
        return CliError(str(error))
    return CliError(
        "%s (the cluster's workers open the inputs by path: they need the same files at the same "
        "paths, else use --executor-data chunk)" % error
    )


def cmd_train(args):
    sources = list(args.corpus)
    if args.stdlib:
        sources += stdlib_sources()
    if args.counts and sources:
        raise CliError("give either CORPUS files (or --stdlib) or --counts FILE..., not both")
    if not sources and not args.counts:
        raise CliError("no input: give CORPUS files, --counts FILE... or --stdlib")
    if args.counts and args.executor:
        raise CliError("--executor counts a corpus; with --counts there is nothing to count")
    check_inputs(args.counts or sources)
    from .formats import write_model_dir
    from .train import check_training_args, train_bpe, train_from_count_files

    for k, token in enumerate(args.special_token):
        if token in args.special_token[:k]:
            raise CliError("special token %r is given twice" % (token,))
    try:
        vocab_size, specials = check_training_args(args.vocab_size, args.special_token)
    except ValueError as e:
        raise CliError(str(e))
    check_output_dir(args.out)
    if args.report:
        check_output_file(args.report, "--report")
    progress = Progress(enabled=(args.progress or sys.stderr.isatty()) and not args.quiet)
    report = {}
    t0 = time.time()
    if args.counts:
        vocab, merges = train_from_count_files(
            args.counts, vocab_size, specials, progress=progress, report=report
        )
    else:
        with _executor(args) as (executor, threads):
            try:
                vocab, merges = train_bpe(
                    sources,
                    vocab_size,
                    specials,
                    workers=args.workers or threads,
                    chunk_size=args.chunk_size,
                    errors=args.errors,
                    executor=executor,
                    executor_data=args.executor_data,
                    progress=progress,
                    report=report,
                )
            except (InputError, OSError) as e:
                raise _counting_error(args, e)
    t1 = time.time()
    if args.format == "gpt2":
        write_model_dir(args.out, vocab, merges, specials)
    else:
        from .exports import write_model_file_in_dir

        write_model_file_in_dir(args.out, args.format, vocab, merges, specials)
    report["write"] = {"seconds": round(time.time() - t1, 3), "directory": args.out}
    report["total_seconds"] = round(time.time() - t0, 3)
    own, children = peak_memory_mb()
    report["peak_memory_mb"] = {"main": round(own, 1), "largest_worker": round(children, 1)}
    report["inputs"] = len(args.counts or sources)
    report["executor"] = args.executor or "local"
    report["vocab_size"] = len(vocab)
    if args.report:
        from .formats import atomic_write

        atomic_write(args.report, (json.dumps(report, indent=2) + "\n").encode("utf-8"))
    if not args.quiet:
        _summary(args, report, progress)
    return 0


def _summary(args, report, progress):
    c, m = report["count"], report["merge"]
    if "count_files" in c:
        progress.line(
            "count: read %d count files in %.2fs, %d unique words, peak %.0f MB"
            % (c["count_files"], c["seconds"], c["unique_words"], c["peak_memory_mb"])
        )
    else:
        rate = " %.1f MB/s," % c["mb_per_s"] if c.get("mb_per_s") else ""
        if args.executor:  # the cluster's workers are not this process's children: no figure for them
            progress.line(
                "count on %s: %.2fs,%s %d unique words, peak %.0f MB"
                % (args.executor, c["seconds"], rate, c["unique_words"], c["peak_memory_mb"])
            )
        else:
            progress.line(
                "count: %.2fs,%s %d unique words, peak %.0f MB (largest worker %.0f MB)"
                % (c["seconds"], rate, c["unique_words"], c["peak_memory_mb"], c["peak_worker_memory_mb"])
            )
    progress.line(
        "merge: %.2fs, %d merges, %d unique words, peak %.0f MB"
        % (m["seconds"], m["merges"], m["unique_words"], m["peak_memory_mb"])
    )
    if report.get("stopped_early"):
        progress.line(
            "note: stopped early after %d of %d merges: no pair left to merge"
            % (m["merges"], m["merges_requested"])
        )
    written = {
        "gpt2": "vocab.json, merges.txt, refbpe.json",
        "hf": "tokenizer.json",
        "tiktoken": "tokenizer.tiktoken, refbpe.json",
        "json": "tokenizer.hex.json",
    }[args.format]
    progress.line(
        "write: %.2fs, %s/%s (%d tokens)"
        % (report["write"]["seconds"], args.out, written, report["vocab_size"])
    )


def cmd_count(args):
    from .count import count_words
    from .countfile import write_counts
    from .io import input_size
    from .shard import parse_shard

    check_inputs(args.corpus)
    check_output_file(args.out, "-o")
    shard = parse_shard(args.shard) if args.shard else None
    if shard is not None:
        for s in args.corpus:
            if input_size(s) is None:
                raise CliError(
                    "%s: --shard needs regular files (stdin and .gz cannot be cut at an offset; "
                    "decompress first)" % s
                )
    with _executor(args) as (executor, threads):
        try:
            word_counts = count_words(
                args.corpus,
                args.special_token,
                workers=args.workers or threads,
                chunk_size=args.chunk_size,
                errors=args.errors,
                executor=executor,
                executor_data=args.executor_data,
                shard=shard,
            )
        except (InputError, OSError) as e:
            raise _counting_error(args, e)
    write_counts(args.out, word_counts)
    return 0


def _load_model(directory):
    from .tokenizer import Tokenizer

    for name in ("vocab.json", "merges.txt"):
        if not os.path.isfile(os.path.join(directory, name)):
            raise CliError(
                "%s: missing %s (expected a directory written by 'refbpe train')" % (directory, name)
            )
    return Tokenizer.from_dir(directory)


def _read_text(path):
    check_inputs([path])
    data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CliError("%s: invalid UTF-8 at byte offset %d" % (path, e.start))


def cmd_encode(args):
    tok = _load_model(args.model)
    ids = tok.encode(_read_text(args.text))
    if args.json:
        write_stdout(json.dumps(ids) + "\n")
    else:
        write_stdout("".join("%d\n" % i for i in ids))
    return 0


def cmd_decode(args):
    tok = _load_model(args.model)
    raw = _read_text(args.ids).strip()
    try:
        ids = json.loads(raw) if raw.startswith("[") else [int(x) for x in raw.split()]
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise ValueError
    except ValueError:
        raise CliError("%s: expected whitespace-separated integers or a JSON list of integers" % args.ids)
    unknown = [i for i in ids if i not in tok.vocab]
    if unknown:
        raise CliError(
            "%s: unknown token id %d (at position %d; the vocab has %d ids, %d..%d)"
            % (args.ids, unknown[0], ids.index(unknown[0]), len(tok.vocab), min(tok.vocab), max(tok.vocab))
        )
    write_stdout(tok.decode(ids))
    return 0


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        return args.func(args)
    except CliError as e:
        return _fail("refbpe: error: %s" % e, EXIT_BAD_INPUT)
    except BrokenPipeError:  # the reader went away (``refbpe encode ... | head``): stop quietly
        _silence_stdout()
        return 128 + signal.SIGPIPE
    except MemoryError:
        return _fail("refbpe: error: out of memory; nothing was written", EXIT_FAILED)
    except (OSError, ValueError) as e:  # InputError, ModelFileError, a failed read or write
        return _fail("refbpe: error: %s" % e, EXIT_BAD_INPUT)
    except WorkerError as e:
        return _fail("refbpe: error: %s; nothing was written" % e, EXIT_FAILED)
    except KeyboardInterrupt:
        return _fail("refbpe: interrupted", 128 + signal.SIGINT)
    except Terminated:
        return _fail("refbpe: terminated", 128 + signal.SIGTERM)
    finally:
        signal.signal(signal.SIGTERM, previous)


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


def _silence_stdout():
    """Point stdout at /dev/null so that flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _fail(line, status):
    try:
        clear_status_line()
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed
        pass
    return status
