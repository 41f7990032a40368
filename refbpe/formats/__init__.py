"""Tokenizer formats: read any of them, write any of them.

Every reader returns a ``Model`` (``model``): vocab {id: bytes}, merges in
rank order, special tokens, the format read, and whether the file had ids.

Formats, one module each
    gpt2      ``gpt2_files``: a directory with ``vocab.json`` + ``merges.txt``
              (``#version`` line optional) and, when written by refbpe,
              ``refbpe.json`` (special tokens).
    hf        ``hf``: a Hugging Face ``tokenizer.json`` (byte-level BPE).
    tiktoken  ``tiktoken``: a ranks file (``base64(token) rank`` lines); merges
              rebuilt from the ranks; special tokens from the caller or a
              refbpe manifest beside it.
    json      ``hexjson``: refbpe's JSON with hex-encoded bytes.

``bytemap`` is the GPT-2 byte-to-unicode table (gpt2 and hf), ``detect`` tells
the formats apart, ``peers`` writes a profile's model in its peer's own shape
(``train --profile rustbpe|hf``), ``trace`` reads and writes training traces
(``train --trace``), and this module dispatches.  Named encodings (``gpt2``,
``cl100k_base``, ...) live in ``refbpe.encodings``.  Every file is written
atomically (``refbpe._util.atomic``).
"""

from __future__ import annotations

import json
import os
from typing import Dict, Iterable, Optional, Tuple, Union

from .._util.atomic import atomic_write, atomic_write_many
from ..pretokenize.patterns import get_pattern
from .bytemap import decode_token, encode_token
from .detect import FILE_OF, detect_format, gpt2_paths
from .gpt2_files import (
    MANIFEST,
    read_gpt2,
    read_gpt2_unchecked,
    read_manifest_pattern,
    read_manifest_specials,
    write_gpt2_dir_any_ids,
    write_model_dir,
)
from .hexjson import hex_json_chunks, read_hex_json
from .hf import hf_tokenizer_json_chunks, read_hf
from .model import FORMATS, FormatError, Model, special_ids, with_specials
from .tiktoken import (
    merges_from_ranks,
    read_tiktoken,
    tiktoken_ranks_chunks,
    tiktoken_special_tokens,
)

__all__ = [
    "FORMATS",
    "MANIFEST",
    "FormatError",
    "Model",
    "decode_token",
    "detect_format",
    "encode_token",
    "merges_from_ranks",
    "read_gpt2",
    "read_manifest_pattern",
    "pattern_fields",
    "read_model_file",
    "tiktoken_special_tokens",
    "write_model",
    "write_model_dir",
    "write_model_file_in_dir",
]


def read_model_file(
    path: Union[str, os.PathLike],
    fmt: str = "auto",
    special_tokens: Iterable[str] = (),
    *,
    strict: bool = True,
) -> Model:
    """A ``Model`` from the file or directory ``path`` in format ``fmt`` (``auto`` detects it;
    ``FORMATS``).  ``refbpe.read_model`` (``loader``) also takes encoding names and is what
    callers use; this reads files only.

    ``special_tokens`` (given by the caller) are added to those the file
    names; formats without special tokens (tiktoken, plain GPT-2) need them.
    ``strict=False`` reads GPT-2 merges of tokens the vocab lacks (``verify``
    reports such output as a difference instead of refusing to read it).
    A file that is not valid in its format is a ``FormatError`` (a
    ValueError) naming it.  Cost: O(file size); a tiktoken ranks file also
    has its merges rebuilt, O(L^2) per token of L bytes.

    >>> import os, tempfile
    >>> from refbpe import train_from_texts
    >>> vocab, merges = train_from_texts(["low low lower"], 259, ["<|endoftext|>"])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = write_model(os.path.join(d, "m"), "gpt2", vocab, merges, ["<|endoftext|>"])
    ...     m = read_model_file(os.path.join(d, "m"))
    >>> m.format, m.merges, m.special_tokens, m.vocab[258]
    ('gpt2', [(b'o', b'w'), (b'l', b'ow')], ['<|endoftext|>'], b'<|endoftext|>')
    """
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt not in FORMATS:
        raise FormatError("unknown format %r (expected one of %s)" % (fmt, ", ".join(FORMATS)))
    if not os.path.exists(path):
        raise FormatError("%s: no such file or directory" % path)
    special_tokens = list(special_tokens or ())
    if fmt == "gpt2":
        vocab_path, merges_path = gpt2_paths(path)
        for p in (vocab_path, merges_path):
            if not os.path.isfile(p):
                raise FormatError("%s: missing %s" % (path, os.path.basename(p)))
        specials = []
        manifest = os.path.join(os.path.dirname(vocab_path), MANIFEST)
        try:
            if strict:
                vocab, merges = read_gpt2(vocab_path, merges_path)
            else:
                vocab, merges = read_gpt2_unchecked(vocab_path, merges_path)
            # Without a manifest (plain GPT-2 files) a vocab entry that is not
            # byte-mapped was read as itself; the caller's special tokens are
            # looked up or appended.
            if os.path.isfile(manifest):
                for content, i in read_manifest_specials(manifest, vocab):
                    vocab[i] = content.encode("utf-8")
                    specials.append(content)
        except ValueError as e:
            raise FormatError(str(e))
        for t in special_tokens:
            if t not in specials:
                specials.append(t)
        return Model(with_specials(vocab, specials), merges, specials, "gpt2", True, path)
    if os.path.isdir(path):
        path = os.path.join(path, FILE_OF[fmt])
        if not os.path.isfile(path):
            raise FormatError("%s: no such file" % path)
    if fmt == "hf":
        m = read_hf(path)
    elif fmt == "tiktoken":
        # Special tokens: the caller's, after those of a refbpe manifest beside the file.
        manifest = os.path.join(os.path.dirname(os.path.abspath(path)), MANIFEST)
        specials = []
        if os.path.isfile(manifest):
            with open(manifest, encoding="utf-8") as f:
                info = json.load(f)
            if info.get("format") == "refbpe-tiktoken" and info.get("file") == os.path.basename(path):
                specials = [s["content"] for s in info.get("special_tokens", [])]
        specials += [t for t in special_tokens if t not in specials]
        return read_tiktoken(path, specials)
    else:
        m = read_hex_json(path, special_tokens)
    for t in special_tokens:
        if t not in m.special_tokens:
            m.special_tokens.append(t)
    m.vocab = with_specials(m.vocab, m.special_tokens)
    return m


read_model = read_model_file  # the name this reader had; ``refbpe.read_model`` is the loader


def _json_bytes(obj, indent=None):
    return (json.dumps(obj, ensure_ascii=False, indent=indent) + "\n").encode("utf-8")


def pattern_fields(pattern):
    """What a manifest records of the split pattern: nothing for GPT-2's on the
    latest Unicode table (so the default output is as before), else its name
    and, for another table, ``"unicode"``: its version."""
    split = get_pattern(pattern)
    fields = {} if split.name == "gpt2" else {"pattern": split.name}
    if split.key != split.name:
        fields["unicode"] = split.unicode
    return fields


def write_model(
    dest: Union[str, os.PathLike],
    fmt: str,
    vocab: Dict[int, bytes],
    merges: Iterable[Tuple[bytes, bytes]],
    special_tokens: Iterable[str],
    *,
    pattern: Optional[str] = None,
) -> str:
    """Write ``(vocab, merges, special_tokens)`` to ``dest`` in format ``fmt``.

    ``pattern`` (a split pattern's name; GPT-2's by default) goes into the
    refbpe.json manifest (gpt2) or the pre-tokenizer (hf).

    gpt2: ``dest`` is a directory (vocab.json, merges.txt, refbpe.json).
    hf: a file, or a directory to hold ``tokenizer.json``.  tiktoken and json:
    a file.  Returns the path written (the directory for gpt2).  Every file is
    written atomically.  Cost: O(size of the vocab and merges).

    >>> import os, tempfile
    >>> from refbpe import train_from_texts
    >>> vocab, merges = train_from_texts(["low low lower"], 259, ["<|endoftext|>"])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = write_model(os.path.join(d, "m"), "gpt2", vocab, merges, ["<|endoftext|>"])
    ...     sorted(os.listdir(os.path.join(d, "m")))
    ['merges.txt', 'refbpe.json', 'vocab.json']
    """
    special_tokens = list(special_tokens or ())
    if fmt == "gpt2":
        vocab = with_specials(vocab, special_tokens)
        n = len(vocab) - len(special_tokens)
        ids = special_ids(vocab, special_tokens)
        if sorted(ids.values()) == list(range(n, len(vocab))) and [ids[t] for t in special_tokens] == list(
            range(n, len(vocab))
        ):
            write_model_dir(dest, vocab, merges, special_tokens, pattern_fields(pattern) or None)
        else:
            write_gpt2_dir_any_ids(dest, vocab, merges, special_tokens, ids, pattern_fields(pattern))
        return dest
    if fmt == "hf":
        if os.path.isdir(dest):
            dest = os.path.join(dest, "tokenizer.json")
        name = get_pattern(pattern).name
        regex = None if name == "gpt2" else get_pattern(name).regex
        atomic_write(dest, hf_tokenizer_json_chunks(vocab, merges, special_tokens, regex))
        return dest
    if fmt == "tiktoken":
        atomic_write(dest, tiktoken_ranks_chunks(vocab, merges, special_tokens))
        return dest
    if fmt == "json":
        atomic_write(dest, hex_json_chunks(vocab, merges, special_tokens))
        return dest
    raise FormatError("unknown format %r (expected one of %s)" % (fmt, ", ".join(FORMATS)))


def write_model_file_in_dir(directory, fmt, vocab, merges, special_tokens, pattern=None):
    """``train --format``: write ``directory``/tokenizer.json (hf),
    tokenizer.tiktoken + refbpe.json (tiktoken: the manifest names the special
    tokens and the split pattern, ``pat_str``), tokenizer.hex.json (json), or
    the GPT-2 files (gpt2)."""
    if fmt != "tiktoken":
        if fmt != "gpt2":
            os.makedirs(directory, exist_ok=True)
            directory = os.path.join(directory, FILE_OF[fmt])
        return write_model(directory, fmt, vocab, merges, special_tokens, pattern=pattern)
    # The ranks and the manifest naming the special tokens are replaced together.
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, FILE_OF[fmt])
    ids = tiktoken_special_tokens(vocab, special_tokens)
    manifest = {
        "format": "refbpe-tiktoken",
        "file": FILE_OF[fmt],
        "pat_str": get_pattern(pattern).regex,
        "special_tokens": [{"content": t, "id": ids[t]} for t in special_tokens],
    }
    manifest.update(pattern_fields(pattern))
    atomic_write_many(
        {
            path: tiktoken_ranks_chunks(vocab, merges, special_tokens),
            os.path.join(directory, MANIFEST): _json_bytes(manifest, indent=2),
        }
    )
    return path
