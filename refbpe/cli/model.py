"""The MODEL argument of the commands that read a model (encode, decode): a directory
written by ``refbpe train``, or a tiktoken encoding (a known name or a ``.tiktoken`` file)."""

import os

from ..formats import FormatError
from ..tiktoken_encodings import KNOWN_ENCODINGS
from ..tokenizer import Tokenizer
from .common import CliError

__all__ = ["add_model_argument", "load_tokenizer"]


def add_model_argument(p):
    p.add_argument(
        "model",
        metavar="MODEL",
        help="directory written by 'refbpe train', or a tiktoken encoding: %s or a .tiktoken ranks file"
        % ", ".join(sorted(KNOWN_ENCODINGS)),
    )


def load_tokenizer(directory, pattern=None):
    """The Tokenizer of MODEL; ``pattern`` (a name) replaces the model's own."""
    if (directory in KNOWN_ENCODINGS and not os.path.exists(directory)) or (
        directory.endswith(".tiktoken") and os.path.isfile(directory)
    ):
        try:
            return Tokenizer.from_tiktoken(directory, pattern=pattern)
        except (OSError, ValueError, FormatError) as e:
            raise CliError(str(e))
    for name in ("vocab.json", "merges.txt"):
        if not os.path.isfile(os.path.join(directory, name)):
            raise CliError(
                "%s: missing %s (expected a directory written by 'refbpe train')" % (directory, name)
            )
    try:
        return Tokenizer.from_dir(directory, pattern)
    except ValueError as e:  # an unknown pattern named in the manifest
        raise CliError("%s: %s" % (directory, e))
