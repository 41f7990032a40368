"""The one loader: what a model source is, and its ``Model``.

``read_model(source)`` takes every source a user can name and decides, here
and nowhere else, what it is:

    an encoding name   ``cl100k_base``, ``o200k_base``, ``gpt2``, ``r50k_base``, ...
                       (``encodings.registry``: its files found in
                       ``$REFBPE_TIKTOKEN_DIR``, tiktoken's cache, refbpe's
                       cache, else downloaded once), when no such path exists
    a ranks file       ``*.tiktoken``: a file named like a known encoding gets
                       its special tokens and pattern, one with a refbpe
                       manifest beside it the manifest's
    anything else      a directory or file in any format ``formats`` reads
                       (GPT-2 files, ``tokenizer.json``, hex JSON, ...),
                       detected by ``formats.detect``

Invariants: a source's special tokens keep their ids (``<|endoftext|>`` is
100257 in cl100k_base, as in tiktoken), and the caller's special tokens that
the source lacks are appended at the next free id.  An encoding or ranks file
comes back ``by_rank`` (encoded by tiktoken's rule, ``Tokenizer.from_ranks``)
with ``special_ids`` {token: id}; given extra special tokens, it is a merge
list like any other model (as the command line has always read it).  The
``pattern`` is the split pattern's key the source records: a refbpe manifest's,
a named encoding's, or the file's own (hf).  ``Tokenizer.load`` builds a
tokenizer from this; the command line and ``verify`` call only these two.

Cost: O(file size); a ranks file's merges are rebuilt (O(L^2) per token of L
bytes) unless ``merges=False``.
"""

from __future__ import annotations

import os
from typing import Iterable, Union

from .encodings.registry import KNOWN_ENCODINGS, is_encoding_name, load_encoding, load_tiktoken
from .formats import MANIFEST, Model, read_manifest_pattern, read_model_file
from .formats.model import with_specials

__all__ = ["read_encoding", "read_model"]


def read_model(
    source: Union[str, os.PathLike],
    fmt: str = "auto",
    special_tokens: Iterable[str] = (),
    *,
    strict: bool = True,
    merges: bool = True,
) -> Model:
    """The ``Model`` of ``source``: an encoding name, a ranks file, or a model
    directory or file in format ``fmt`` (``auto`` detects it; ``FORMATS``).

    ``special_tokens`` are added to those the source names.  ``strict=False``
    reads GPT-2 merges of tokens the vocab lacks (``verify``).  ``merges=False``
    leaves a ranks source's merges unbuilt (None; ``Tokenizer.load`` needs only
    the ranks).  A source that is not valid is a ``FormatError`` (a ValueError)
    naming it; an encoding whose files cannot be had, an OSError.  Cost: O(file size), and
    rebuilding a ranks source's merges, O(L^2) per token of L bytes.

    >>> import os, tempfile
    >>> from refbpe import train_from_texts, write_model
    >>> vocab, merges = train_from_texts(["low low lower"], 259, ["<|endoftext|>"])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = write_model(os.path.join(d, "m"), "gpt2", vocab, merges, ["<|endoftext|>"])
    ...     m = read_model(os.path.join(d, "m"))
    >>> m.format, m.merges, m.special_tokens, m.vocab[258]
    ('gpt2', [(b'o', b'w'), (b'l', b'ow')], ['<|endoftext|>'], b'<|endoftext|>')
    """
    path = os.fspath(source)
    if is_encoding_name(path) or _is_ranks_file(path, fmt):
        return _tiktoken_model(path, special_tokens, merges)
    if isinstance(special_tokens, dict):
        raise ValueError("%s: special tokens with ids are for an encoding or ranks file" % path)
    model = read_model_file(path, fmt, list(special_tokens or ()), strict=strict)
    model.pattern = _manifest_pattern(path) or model.pattern
    return model


def read_encoding(name: str, *, merges: bool = True) -> Model:
    """The ``Model`` of the known encoding ``name`` (``encodings.registry``), even where a
    path of that name exists; KeyError for an unknown name.  Its files are found or fetched
    once (an OSError when they cannot be had).  Cost: O(file size) (``read_model``'s).

    >>> read_encoding("cl101k")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    KeyError: "unknown encoding 'cl101k' ..."
    """
    if name not in KNOWN_ENCODINGS:
        raise KeyError("unknown encoding %r (known: %s)" % (name, ", ".join(sorted(KNOWN_ENCODINGS))))
    return _tiktoken_model(name, (), merges, by_name=True)


def _is_ranks_file(path, fmt):
    ranks = fmt == "tiktoken" or (fmt == "auto" and path.endswith(".tiktoken"))
    return ranks and os.path.isfile(path)


def _tiktoken_model(path, special_tokens, with_merges, by_name=False):
    """An encoding by name or a ranks file: its own special tokens at their ids, or the
    caller's {token: id} in their place; a list of the caller's is added to them."""
    given = special_tokens if isinstance(special_tokens, dict) else None
    added = [] if given is not None else list(special_tokens or ())
    load = load_encoding if by_name else load_tiktoken
    vocab, merges, specials, pattern = load(path, given, merges=with_merges or bool(added))
    names = sorted(specials, key=specials.get)
    extra = [t for t in added if t not in specials]
    names += extra
    model = Model(with_specials(vocab, extra), merges, names, "tiktoken", True, path, pattern)
    model.encoding = path if by_name or is_encoding_name(path) else None
    if not extra:
        model.by_rank = True
        model.special_ids = specials
    return model


def _manifest_pattern(path):
    """The pattern key a refbpe manifest in (or beside) ``path`` names, or None."""
    directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    return read_manifest_pattern(os.path.join(directory, MANIFEST))
