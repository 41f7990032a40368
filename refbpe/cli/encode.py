"""``refbpe encode``: the token ids of a corpus, as ``.npy``, ``.bin`` or text.

The output kind follows ``-o``: ``*.npy`` (uint16 when every id fits, else
uint32, or ``--dtype``), ``*.bin`` (the raw little-endian array; the summary
states the dtype), any other name a text file, ``-`` or no ``-o`` stdout (one
id per line, or ``--json``).  Several inputs are separate texts, encoded one
after another (``--separator T`` puts special token T between them; T must
be a token of the model or declared with ``--special-token``, and a declared
token the model lacks gets a new id, which the summary line and ``--report``
name with the vocab size the ids then need).  The
encoding is ``corpus.encode.write_ids``: parallel, streaming, written
atomically.  Under PyPy a long run first restarts itself with a small
nursery (``pypy_gc``), which keeps each process's memory to its working set.
"""

import sys

from .._util.atomic import outputs_together
from .._util.quoting import quote
from ..corpus.encode import write_ids
from ..corpus.idfile import file_kind
from ..corpus.progress import peak_memory_figures
from ..corpus.units import input_spans, total_bytes
from .common import (
    CliError,
    add_encoding_arguments,
    add_option,
    check_inputs,
    check_output_file,
    check_report_output,
    encoding_run,
    write_report,
)
from .model_argument import add_model_argument, load_tokenizer
from .pypy_gc import restart_with_small_nursery

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]


HELP = "write the token ids of text files (.npy, .bin or text)"
DESCRIPTION = (
    "Encode INPUT... (files, *.gz, '-' for stdin; separate texts, in order) with the model "
    "at MODEL. -o OUT.npy: a NumPy array; -o OUT.bin: the raw little-endian array; another name: one id "
    "per line; no -o or '-o -': stdout. The ids are the same for every --workers and --chunk-size."
)


def add_arguments(e):
    add_model_argument(e)
    e.add_argument("inputs", metavar="INPUT", nargs="+", help="UTF-8 text files ('-' for stdin)")
    add_option(e, "--out", "OUT.npy, OUT.bin, a text file or '-'", default="-", metavar="OUT")
    add_option(
        e,
        "--dtype",
        "the array's dtype for .npy/.bin (default: uint16 when every id fits, else uint32); "
        "an id that does not fit is an error",
    )
    add_option(e, "--json", "text output as one JSON list")
    e.add_argument(
        "--separator",
        metavar="TOKEN",
        help="put this special token between the inputs: a token of the model or a --special-token "
        "(a new one gets the id after the model's last, named in the summary)",
    )
    add_encoding_arguments(e)


def _kind(args):
    if args.out == "-":
        kind = "text"
    else:
        kind = file_kind(args.out)
    if args.json and kind != "text":
        raise CliError("--json is for text output, not %s (-o %s)" % (kind, args.out))
    if args.dtype and kind == "text":
        raise CliError("--dtype is for .npy and .bin outputs (-o %s)" % args.out)
    return "json" if args.json else kind


def run(args):
    kind = _kind(args)
    check_inputs(args.inputs)
    if args.inputs.count("-") > 1:
        raise CliError("stdin ('-') can be read only once")
    if args.out != "-":
        check_output_file(args.out, "-o")
    check_report_output(args)
    restart_with_small_nursery(getattr(args, "command_line", None), total_bytes(input_spans(args.inputs)))
    added = {}
    tok = load_tokenizer(args.model, args.format, args.special_token, args.pattern, added, args.separator)
    run, progress = encoding_run(args, tok, args.inputs, "encoding", separator=args.separator)
    report = {}
    stream = sys.stdout.buffer if args.out == "-" else None
    with outputs_together():  # the ids and the report: both or neither
        write_ids(run, args.out, kind=kind, dtype=args.dtype, stream=stream, report=report)
        progress.finish()
        report["peak_memory_mb"] = peak_memory_figures()
        if added:
            report["new_special_tokens"] = added
            report["vocab_size_needed"] = max(tok.vocab) + 1
        if args.report:
            write_report(args.report, report)
    if not args.quiet:
        progress.line(_summary(report))
    return 0


def _summary(r):
    target = "stdout" if r["output"] == "-" else r["output"]
    dtype = " (%s)" % r["dtype"] if r["dtype"] else ""
    return _counts_line(r, target, dtype) + _new_ids_note(r)


def _new_ids_note(r):
    """The ids given to declared special tokens the model lacks: the ids need a larger vocab."""
    if not r.get("new_special_tokens"):
        return ""
    ids = ", ".join(
        "%s %d" % (quote(t), i) for t, i in sorted(r["new_special_tokens"].items(), key=lambda x: x[1])
    )
    return "; new special token ids (not in the model): %s, so the ids need vocab size %d" % (
        ids,
        r["vocab_size_needed"],
    )


def _counts_line(r, target, dtype):
    return (
        "encode: %.1f MB, %d documents, %d tokens (%s bytes/token) in %.2fs, %.1f MB/s, %d worker%s; "
        "wrote %s%s; peak %.0f MB main, %.0f MB largest worker"
        % (
            r["bytes"] / 1e6,
            r["documents"],
            r["tokens"],
            "%.3f" % r["bytes_per_token"] if r["bytes_per_token"] else "-",
            r["seconds"],
            r["mb_per_second"],
            r["workers"],
            "" if r["workers"] == 1 else "s",
            target,
            dtype,
            r["peak_memory_mb"]["main"],
            r["peak_memory_mb"]["largest_worker"],
        )
    )
