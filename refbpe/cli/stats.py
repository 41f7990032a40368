"""``refbpe stats``: compression and vocab use of one or more models on a corpus (``refbpe.stats``)."""

import json
import sys

from ..analysis.stats import format_table, format_top_tokens, stats_of
from .common import (
    CliError,
    add_encoding_arguments,
    add_option,
    check_inputs,
    check_report_output,
    encoding_run,
    write_report,
)
from .model_argument import add_model_options, load_tokenizer

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]


HELP = "bytes per token, per-document ratios, vocab use and frequent tokens of models on a corpus"
DESCRIPTION = (
    "Encode CORPUS... with each model and print bytes, documents, tokens, bytes per token "
    "(overall; per document: mean, median, p99), the share of the vocab used, the most frequent tokens "
    "and the throughput, one table row per model. 'refbpe stats MODEL CORPUS...' or "
    "'refbpe stats --model A --model B CORPUS...'. Documents: the stretches between special tokens."
)


def add_arguments(s):
    s.add_argument(
        "args", metavar="MODEL|CORPUS", nargs="+", help="MODEL then CORPUS..., or CORPUS... with --model"
    )
    s.add_argument(
        "--model", action="append", default=[], metavar="MODEL", help="a model to compare (repeatable)"
    )
    add_model_options(s)
    s.add_argument("--top", type=int, default=10, metavar="N", help="how many frequent tokens (default 10)")
    add_option(s, "--json", "the figures as JSON on stdout")
    add_encoding_arguments(s)


def run(args):
    models = list(args.model)
    corpus = list(args.args)
    if not models:
        if len(corpus) < 2:
            raise CliError("give MODEL and at least one CORPUS file (or --model MODEL ... CORPUS...)")
        models, corpus = [corpus[0]], corpus[1:]
    check_inputs(corpus)
    check_report_output(args)
    if args.top < 0:
        raise CliError("--top must be 0 or more, got %d" % args.top)
    tokenizers = [load_tokenizer(m, args.format, args.special_token, args.pattern) for m in models]
    rows = []
    for name, tok in zip(models, tokenizers):
        run, progress = encoding_run(args, tok, corpus, "stats %s" % name)
        s = stats_of(run, top=args.top)
        progress.finish()
        rows.append((name, s))
    report = {"corpus": corpus, "models": [dict(s, model=name) for name, s in rows]}
    if args.report:
        write_report(args.report, report)
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        lines = [format_table(rows), ""] + [format_top_tokens(name, s) for name, s in rows]
        sys.stdout.write("\n".join(lines) + "\n")
    return 0
