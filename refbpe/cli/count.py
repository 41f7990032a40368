"""``refbpe count``: write the word (pre-token) counts of text files, or of one shard of them."""

import time

from .._util.atomic import outputs_together
from ..corpus.count import InputError
from ..corpus.countfile import write_counts
from ..corpus.io import input_size
from ..corpus.shard import parse_shard
from ..learn.train import count_corpus
from ..pretokenize.patterns import get_pattern
from .common import (
    CliError,
    add_counting_arguments,
    add_option,
    add_special_token_argument,
    check_inputs,
    check_output_file,
    check_report_output,
    check_special_tokens,
    counting_error,
    counting_options,
    executor_context,
    make_progress,
    write_report,
)

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]


HELP = "write the word (pre-token) counts of text files, or of one shard of them"
DESCRIPTION = (
    "Write the word (pre-token) counts of CORPUS: one 'count<TAB>escaped bytes' line per "
    "word, sorted by bytes (format: docs/formats.md, refbpe/corpus/countfile.py; *.gz output is "
    "gzip-compressed). With "
    "--shard I/N, only shard I of N byte ranges of the inputs (cut where no pre-token is split): the "
    "counts of shards 0..N-1 add up to the whole, and 'refbpe train --counts' trains on them."
)


def add_arguments(c):
    add_option(
        c,
        "corpus",
        "UTF-8 text files ('-' is stdin, *.gz is decompressed; --shard needs regular files)",
        nargs="+",
    )
    add_special_token_argument(c, help="a special token (repeatable); give train the same ones")
    add_option(
        c,
        "--out",
        "output file (conventionally NAME.counts.tsv, or .counts.tsv.gz)",
        required=True,
        metavar="FILE",
    )
    c.add_argument(
        "--shard",
        metavar="I/N",
        help="count only shard I of N, numbered from 0 (0/4 .. 3/4): "
        "every shard must be given the same CORPUS files in the same order and the same special tokens",
    )
    add_counting_arguments(c)


def run(args):
    check_inputs(args.corpus)
    check_special_tokens(args.special_token)
    check_output_file(args.out, "-o")
    check_report_output(args)
    shard = parse_shard(args.shard) if args.shard else None
    if shard is not None:
        for s in args.corpus:
            if input_size(s) is None:
                raise CliError(
                    "%s: --shard needs regular files (stdin, a pipe and .gz cannot be cut at an offset; "
                    "decompress or save it first)" % s
                )
    progress = make_progress(args)
    report = {}
    with executor_context(args) as (executor, threads):
        try:
            word_counts = count_corpus(
                args.corpus,
                args.special_token,
                progress=progress,
                report=report,
                shard=shard,
                **counting_options(args, executor, threads),
            )
        except (InputError, OSError) as e:
            raise counting_error(args, e)
    t0 = time.time()
    with outputs_together():  # the counts and the report: both or neither
        write_counts(args.out, word_counts, get_pattern(args.pattern).key)
        report["write"] = {"seconds": round(time.time() - t0, 3), "file": args.out}
        if args.report:
            write_report(args.report, report)
    if progress.enabled:  # count writes nothing on stderr unless progress is shown (as before)
        c = report["count"]
        progress.line(
            "count: %.2fs, %d unique words, peak %.0f MB; wrote %s"
            % (c["seconds"], c["unique_words"], c["peak_memory_mb"], args.out)
        )
    return 0
