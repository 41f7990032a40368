"""``refbpe decode``: the text of token ids (``.npy``, ``.bin`` with ``--dtype``, or text)."""

from ..corpus.idfile import (
    IdFileError,
    check_ids_head,
    dtype_for_ids,
    file_kind,
    holds,
    read_bin,
    read_npy,
    read_text_ids,
)
from .common import CliError, add_option, read_input_bytes, write_stdout
from .model_argument import add_model_argument, load_tokenizer

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]


HELP = "print the text of token ids (.npy, .bin, whitespace-separated or a JSON list)"
DESCRIPTION = (
    "Decode the ids in IDS with the model at MODEL; invalid UTF-8 becomes U+FFFD. IDS is a "
    ".npy array, a .bin raw little-endian array (give --dtype), or text: whitespace-separated ids or a "
    "JSON list ('-' for stdin)."
)


def add_arguments(d):
    add_model_argument(d)
    d.add_argument("ids", metavar="IDS", help="file of ids ('-' for stdin)")
    add_option(d, "--dtype", "the dtype of a .bin file")


def _read(path, dtype):
    as_text = file_kind(path) not in ("bin", "npy")
    data = read_input_bytes(path, (lambda head: check_ids_head(path, head)) if as_text else None)
    if data[:6] == b"\x93NUMPY":
        return read_npy(path, data).tolist()
    if file_kind(path) == "bin":
        return read_bin(path, dtype, data).tolist()
    if dtype is not None:
        raise CliError("--dtype is for .bin files; %s is read as text" % path)
    try:
        return read_text_ids(path, data)
    except IdFileError:
        raise CliError("%s: expected whitespace-separated integers or a JSON list of integers" % path)


def _check_dtype(path, dtype, vocab):
    """A ``.bin`` read as ``dtype``: a dtype too narrow for the model's ids is not its file's."""
    largest = max(vocab) if vocab else 0
    if dtype is not None and not holds(dtype, largest):
        raise CliError(
            "%s: --dtype %s cannot hold the model's ids (up to %d); its .bin files are %s"
            % (path, dtype, largest, dtype_for_ids(largest))
        )


def run(args):
    tok = load_tokenizer(args.model, args.format, args.special_token, args.pattern)
    vocab = tok.vocab
    _check_dtype(args.ids, args.dtype, vocab)
    ids = _read(args.ids, args.dtype)
    bad = next((k for k, i in enumerate(ids) if i not in vocab), None)
    if bad is not None:
        raise CliError(
            "%s: unknown token id %d (at position %d; the vocab has %d ids, %d..%d)"
            % (args.ids, ids[bad], bad, len(vocab), min(vocab), max(vocab))
        )
    write_stdout(tok.decode(ids))
    return 0
