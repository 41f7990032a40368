"""``refbpe decode``: the text of token ids."""

import json

from .common import CliError, read_text_arg, write_stdout
from .model import add_model_argument, load_tokenizer

__all__ = ["register", "run"]


def register(sub):
    d = sub.add_parser(
        "decode",
        help="print the text of token ids (whitespace-separated or a JSON list)",
        description="Decode the ids in FILE with the model at MODEL; invalid UTF-8 becomes U+FFFD.",
    )
    add_model_argument(d)
    d.add_argument("ids", metavar="FILE", help="file of ids ('-' for stdin)")
    return d


def run(args):
    tok = load_tokenizer(args.model)
    raw = read_text_arg(args.ids).strip()
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
