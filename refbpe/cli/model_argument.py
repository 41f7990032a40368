"""The MODEL argument of the commands that read a model (encode, decode, stats, show).

A model is any source ``refbpe.read_model`` (``loader``) takes: a ``refbpe train``
directory, a GPT-2 ``vocab.json`` + ``merges.txt`` directory or file pair, an
HF ``tokenizer.json``, a tiktoken ranks file (with its manifest), hex JSON;
or a tiktoken encoding by name (``tiktoken_encodings``).  ``--format`` says
which format when detection is not enough, ``--special-token`` declares
special tokens the files do not (GPT-2's own ``vocab.json`` holds
``<|endoftext|>`` as an ordinary entry), and ``--pattern`` names the split
pattern (default: the one a refbpe manifest names, else GPT-2's).
"""

import os

from .._util.quoting import quote
from ..encode.tokenizer import Tokenizer
from ..encodings.registry import KNOWN_ENCODINGS
from ..formats import FORMATS, FormatError
from ..loader import read_model
from .common import CliError, add_pattern_argument, add_special_token_argument, check_special_tokens

__all__ = ["add_model_argument", "add_model_options", "load_tokenizer"]


def add_model_argument(p):
    p.add_argument(
        "model",
        metavar="MODEL",
        help="a model in any format refbpe reads (a 'refbpe train' directory, vocab.json + merges.txt, "
        "tokenizer.json, a .tiktoken ranks file) or a tiktoken encoding: %s"
        % ", ".join(sorted(KNOWN_ENCODINGS)),
    )
    add_model_options(p)


def add_model_options(p):
    """``--format``, ``--special-token`` and ``--pattern``, for the model(s) a command reads."""
    p.add_argument(
        "--format",
        choices=("auto",) + tuple(FORMATS),
        default="auto",
        help="the model's format (default: detected)",
    )
    add_special_token_argument(
        p, help="a special token the model's files do not declare (repeatable), e.g. '<|endoftext|>'"
    )
    add_pattern_argument(p)


def load_tokenizer(path, fmt="auto", special_tokens=(), pattern=None, added=None, separator=None):
    """The ``Tokenizer`` of the model at ``path`` (``refbpe.read_model``: a path or an
    encoding name), or a one-line CliError.

    ``pattern`` is a pattern key (``--pattern`` with ``--unicode``); a part it
    leaves out is the model's (its manifest's, or a tiktoken encoding's).
    ``added`` (a dict), if given, receives {token: id} for each of
    ``special_tokens`` that the model lacks (given a new id after its last).
    ``separator`` must be a special token of the model, one of
    ``special_tokens``, or an ordinary token of the model (then made special,
    keeping its id); anything else would put an id outside the model: CliError.
    """
    special_tokens = list(special_tokens)
    check_special_tokens(special_tokens)
    if os.path.isdir(path) and fmt == "auto" and not _has_model_file(path):
        missing = "vocab.json" if not os.path.isfile(os.path.join(path, "vocab.json")) else "merges.txt"
        raise CliError(
            "%s: no model here (vocab.json + merges.txt, tokenizer.json, tokenizer.tiktoken or "
            "tokenizer.hex.json): missing %s (expected a directory written by 'refbpe train')"
            % (path, missing)
        )
    model = _read(path, fmt, ())
    if model.encoding and special_tokens:
        raise CliError(
            "%s: a tiktoken encoding's special tokens are its own; --special-token adds none" % path
        )
    if model.by_rank and not special_tokens:
        tok = _tokenizer(model, pattern, path)
        if separator is not None and separator not in tok.special_tokens:
            raise CliError(
                "--separator %s is not a special token of %s (its special tokens: %s)"
                % (quote(separator), path, ", ".join(tok.special_tokens) or "none")
            )
        return tok
    held = set(model.vocab.values())
    if model.by_rank:  # a ranks file given special tokens: its merges, with those added
        model = _read(path, fmt, special_tokens)
    model.special_tokens = _declared(model, special_tokens, separator, path)
    tok = _tokenizer(model, pattern, path)
    if added is not None:
        added.update((t, tok.encode(t)[0]) for t in special_tokens if t.encode("utf-8") not in held)
    return tok


def _read(path, fmt, special_tokens):
    try:
        return read_model(path, fmt, special_tokens, merges=False)
    except FormatError as e:
        raise CliError(str(e))
    except OSError as e:
        if getattr(e, "filename", None) is None:
            raise CliError(str(e))  # an encoding's files that cannot be had: the message says where
        raise CliError("%s: cannot read (%s)" % (e.filename, e.strerror or e))
    except ValueError as e:  # an unknown pattern named in the manifest
        raise CliError("%s: %s" % (path, e))


def _tokenizer(model, pattern, path):
    try:
        return Tokenizer.from_model(model, pattern=pattern)
    except FormatError as e:
        raise CliError(str(e))
    except ValueError as e:
        raise CliError("%s: %s" % (path, e))


def _declared(model, special_tokens, separator, path):
    """The model's special tokens, then the caller's, then ``separator`` if it is
    an ordinary token of the model; CliError if it is not in the model at all."""
    specials = list(model.special_tokens)
    specials += [t for t in special_tokens if t not in specials]
    if separator is None or separator in specials:
        return specials
    if separator.encode("utf-8") not in set(model.vocab.values()):
        raise CliError(
            "--separator %s is neither a token of %s nor a declared special token, so its id would be "
            "outside the model; declare it with --special-token to add it" % (quote(separator), path)
        )
    return specials + [separator]


def _has_model_file(directory):
    names = ("tokenizer.json", "tokenizer.tiktoken", "tokenizer.hex.json")
    if any(os.path.isfile(os.path.join(directory, n)) for n in names):
        return True
    return all(os.path.isfile(os.path.join(directory, n)) for n in ("vocab.json", "merges.txt"))
