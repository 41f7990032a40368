"""``refbpe encode``: the token ids of a text file."""

import json

from .common import add_pattern_argument, read_text_arg, write_stdout
from .model import add_model_argument, load_tokenizer

__all__ = ["register", "run"]


def register(sub):
    e = sub.add_parser(
        "encode",
        help="print the token ids of a text file",
        description="Encode FILE with the model at MODEL and print the ids, one per line (or --json).",
    )
    add_model_argument(e)
    e.add_argument("text", metavar="FILE", help="UTF-8 text file ('-' for stdin)")
    e.add_argument("--json", action="store_true", help="one JSON list instead of one id per line")
    add_pattern_argument(e)
    return e


def run(args):
    tok = load_tokenizer(args.model, args.pattern)
    ids = tok.encode(read_text_arg(args.text))
    if args.json:
        write_stdout(json.dumps(ids) + "\n")
    else:
        write_stdout("".join("%d\n" % i for i in ids))
    return 0
