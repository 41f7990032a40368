"""``refbpe split``: the pieces the split pattern cuts a text into, one per line.

Each piece is a JSON string on its own line (``--hex``: its bytes in hex;
``--offsets``: ``[byte offset in its file, piece]``).  Special tokens split the
text first and are not pieces.  Streaming, in bounded memory; with
``--workers K`` the chunks are split in K processes and written in input
order, so the output is the same for every ``--workers`` and ``--chunk-size``.
"""

import collections
import sys

from .._util.atomic import atomic_stream
from ..corpus.count import InputError
from ..corpus.pool import make_executor, pool_session, result_of, submit
from ..corpus.pretokens import CHUNK_SIZE, split_unit, warm_up_splitter
from ..corpus.spool import SpoolDirectory
from ..corpus.units import input_spans, total_bytes, work_units
from ..specials import special_pattern
from .common import (
    CliError,
    add_errors_argument,
    add_option,
    add_pattern_argument,
    add_special_token_argument,
    check_inputs,
    check_output_file,
    check_special_tokens,
)

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]


HELP = "print the pieces the split pattern cuts the text into, one JSON string per line"
DESCRIPTION = (
    "Pre-tokenize FILEs with the split pattern and print each piece on its own line: a JSON "
    "string, its bytes in hex (--hex), with its byte offset (--offsets). For comparing a hand-written "
    "pre-tokenizer: 'refbpe verify --split THEIRS FILE...'."
)


def add_arguments(s):
    s.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files ('-': stdin; *.gz)")
    add_pattern_argument(s)
    add_special_token_argument(s)
    add_option(s, "--hex", "each piece's bytes in hex instead of a JSON string")
    s.add_argument("--offsets", action="store_true", help="each line [byte offset in its file, piece]")
    add_option(s, "--out", "write here (atomically) instead of stdout ('-': stdout)", metavar="FILE")
    add_errors_argument(s)
    add_option(s, "--workers", "processes (default 1: this one)", default=1)
    add_option(s, "--chunk-size", "bytes per work unit (default 1M)", default=CHUNK_SIZE)


def workers_for_the_work(asked, total, chunk_size, inputs):
    """At most one process per work unit: ``--workers 1000`` on 200 KB starts none.  ``total``
    None (a stream) leaves ``asked`` as it is."""
    if total is None:
        return asked
    units = total // chunk_size + inputs  # each input may end in a part-unit
    return max(1, min(asked, units))


def _chunk_lines(args, specials, tokens):
    """Each unit's output lines (bytes) in input order, made here or in a pool.

    The units are counting's (``units.work_units``): workers read their own
    byte ranges of a regular file, and their lines come back through spool
    files (``spool``), at most 2 units per worker in flight, taken oldest first.
    """
    options = (args.errors, args.pattern, specials, args.hex, args.offsets)
    spans = input_spans(args.files)
    workers = workers_for_the_work(args.workers, total_bytes(spans), args.chunk_size, len(spans))
    units = work_units(spans, args.chunk_size, tokens, split_unit, options, pattern=args.pattern)
    if workers == 1:
        for func, unit_args, _ in units:
            yield func(*unit_args)[0]
        return
    executor = make_executor(workers, warm_up=lambda: warm_up_splitter(args.pattern, args.hex, args.offsets))
    spool = SpoolDirectory()
    pending = collections.deque()
    with pool_session(executor, True, spool, "a splitting", lambda: pending):
        for func, unit_args, _ in units:
            pending.append(submit(executor, spool, func, unit_args))
            if len(pending) >= 2 * workers:
                yield result_of(pending.popleft(), spool)[0]
        while pending:
            yield result_of(pending.popleft(), spool)[0]


def _write(args, out):
    check_special_tokens(args.special_token)
    specials = special_pattern(args.special_token, as_bytes=True)
    tokens = [t.encode("utf-8") for t in args.special_token]
    for lines in _chunk_lines(args, specials, tokens):
        out.write(lines)


def run(args):
    check_inputs(args.files)
    try:
        if args.out and args.out != "-":
            check_output_file(args.out, "--out")
            with atomic_stream(args.out) as out:
                _write(args, out)
        else:
            _write(args, sys.stdout.buffer)
            sys.stdout.buffer.flush()
    except InputError as e:
        raise CliError(str(e))
    return 0
