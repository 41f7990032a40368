"""``refbpe show``: a text with its token boundaries marked (``refbpe.show``)."""

import sys

from ..analysis.show import render
from .common import CliError, read_text_arg, write_stdout
from .model_argument import add_model_argument, load_tokenizer

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]


HELP = "show where the tokens fall in a text (coloured in a terminal, [brackets] otherwise)"
DESCRIPTION = (
    "Print TEXT (or the file -f FILE) with each token coloured (in a terminal) or in "
    "[brackets] (otherwise, or --plain); --ids adds a line of the ids, one per token (ids of tokens "
    "that share a character are joined by +)."
)


def add_arguments(s):
    add_model_argument(s)
    s.add_argument("text", metavar="TEXT", nargs="?", help="the text (or use -f FILE)")
    s.add_argument("-f", "--file", metavar="FILE", help="read the text from FILE ('-' for stdin)")
    s.add_argument("--ids", action="store_true", help="print the ids under the text")
    colour = s.add_mutually_exclusive_group()
    colour.add_argument("--colour", "--color", action="store_true", help="colour even when not a terminal")
    colour.add_argument("--plain", action="store_true", help="[brackets] even in a terminal")


def run(args):
    if (args.text is None) == (args.file is None):
        raise CliError("give TEXT or -f FILE (one of them)")
    text = args.text if args.file is None else read_text_arg(args.file)
    tok = load_tokenizer(args.model, args.format, args.special_token, args.pattern)
    colour = args.colour or (not args.plain and sys.stdout.isatty())
    write_stdout(render(tok, text, colour, args.ids))
    return 0
