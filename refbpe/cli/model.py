"""The MODEL argument of the commands that read a model (encode, decode)."""

import os

from ..tokenizer import Tokenizer
from .common import CliError

__all__ = ["add_model_argument", "load_tokenizer"]


def add_model_argument(p):
    p.add_argument("model", metavar="MODEL", help="directory written by 'refbpe train'")


def load_tokenizer(directory):
    for name in ("vocab.json", "merges.txt"):
        if not os.path.isfile(os.path.join(directory, name)):
            raise CliError(
                "%s: missing %s (expected a directory written by 'refbpe train')" % (directory, name)
            )
    return Tokenizer.from_dir(directory)
