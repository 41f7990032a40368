"""The MODEL argument of the commands that read a model (encode, decode, stats, show).

A model is any format refbpe reads (``formats.read_model``): a ``refbpe train``
directory, a GPT-2 ``vocab.json`` + ``merges.txt`` directory or file pair, an
HF ``tokenizer.json``, a tiktoken ranks file (with its manifest), hex JSON;
``--format`` says which when detection is not enough, and ``--special-token``
declares special tokens the files do not (GPT-2's own ``vocab.json`` holds
``<|endoftext|>`` as an ordinary entry).
"""

import os

from ..formats import FORMATS, FormatError, read_model
from ..tokenizer import Tokenizer
from .common import CliError, add_special_token_argument, check_special_tokens

__all__ = ["add_model_argument", "add_model_options", "load_tokenizer"]


def add_model_argument(p):
    p.add_argument(
        "model",
        metavar="MODEL",
        help="a model in any format refbpe reads: a 'refbpe train' directory, vocab.json + merges.txt, "
        "tokenizer.json, tiktoken ranks",
    )
    add_model_options(p)


def add_model_options(p):
    """``--format`` and ``--special-token``, for the model(s) a command reads."""
    p.add_argument(
        "--format",
        choices=("auto",) + tuple(FORMATS),
        default="auto",
        help="the model's format (default: detected)",
    )
    add_special_token_argument(
        p, help="a special token the model's files do not declare (repeatable), e.g. '<|endoftext|>'"
    )


def load_tokenizer(path, fmt="auto", special_tokens=()):
    """The ``Tokenizer`` of the model at ``path``, or a one-line CliError."""
    check_special_tokens(list(special_tokens))
    if os.path.isdir(path) and fmt == "auto" and not _has_model_file(path):
        missing = "vocab.json" if not os.path.isfile(os.path.join(path, "vocab.json")) else "merges.txt"
        raise CliError(
            "%s: no model here (vocab.json + merges.txt, tokenizer.json, tokenizer.tiktoken or "
            "tokenizer.hex.json): missing %s (expected a directory written by 'refbpe train')"
            % (path, missing)
        )
    try:
        model = read_model(path, fmt, special_tokens)
        return Tokenizer(model.vocab, model.merges, model.special_tokens)
    except FormatError as e:
        raise CliError(str(e))
    except OSError as e:
        raise CliError("%s: cannot read (%s)" % (getattr(e, "filename", None) or path, e.strerror or e))


def _has_model_file(directory):
    names = ("tokenizer.json", "tokenizer.tiktoken", "tokenizer.hex.json")
    if any(os.path.isfile(os.path.join(directory, n)) for n in names):
        return True
    return all(os.path.isfile(os.path.join(directory, n)) for n in ("vocab.json", "merges.txt"))
