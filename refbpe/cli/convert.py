"""``refbpe convert``: read a tokenizer in any supported format and write it in another."""

import os
import sys

from .._util.atomic import outputs_together
from ..formats import FORMATS, write_model
from ..loader import read_model
from .common import (
    CliError,
    add_option,
    add_pattern_argument,
    add_special_token_argument,
    check_output_dir,
    check_output_file,
)

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]


HELP = "convert a tokenizer between formats (gpt2, hf, tiktoken, json)"
DESCRIPTION = (
    "Read a tokenizer in any supported format and write it in another. "
    "gpt2 writes a directory; hf, tiktoken and json write a file."
)


def add_arguments(c):
    c.add_argument(
        "src",
        metavar="SRC",
        help="a directory (GPT-2 files or tokenizer.json), a model file, or an encoding (cl100k_base, ...)",
    )
    c.add_argument(
        "--from",
        dest="source_format",
        choices=("auto",) + FORMATS,
        default="auto",
        help="format of SRC (default: detect)",
    )
    c.add_argument("--to", choices=FORMATS, required=True, help="format of the output")
    add_option(c, "--out", "output directory (gpt2) or file", required=True, metavar="DEST")
    add_special_token_argument(c, help="a special token SRC does not name (tiktoken files carry none)")
    add_option(c, "--quiet", "no summary line")
    add_pattern_argument(c)  # default: the one SRC's refbpe.json names, else gpt2


def run(args):
    if args.to == "gpt2" or os.path.isdir(args.out):
        check_output_dir(args.out, "-o")
    else:
        check_output_file(args.out, "-o")
    try:
        m = read_model(args.src, args.source_format, args.special_token)
        pattern = args.pattern or m.pattern
        with outputs_together(directories=(args.out,)):  # no empty directory left by a failure
            out = write_model(args.out, args.to, m.vocab, m.merges, m.special_tokens, pattern=pattern)
    except (OSError, ValueError) as e:  # FormatError is a ValueError; OSError: an encoding's files
        raise CliError(str(e))
    if not args.quiet:
        sys.stderr.write(
            "convert: %s (%s) -> %s (%s): %d tokens, %d merges, %d special tokens\n"
            % (args.src, m.format, out, args.to, len(m.vocab), len(m.merges), len(m.special_tokens))
        )
    return 0
