"""Reading and writing tokenizer files.

GPT-2 format (the default): ``vocab.json`` maps each token, written with the
GPT-2 byte-to-unicode table, to its id; ``merges.txt`` has one merge per line,
``left right`` in the same mapping, optionally after a ``#version`` line.  The
table maps the printable bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF to the code
point of the same value and the other 68 bytes, in increasing order, to U+0100,
U+0101, ...; so no mapped token contains a space and each line splits
unambiguously.

``refbpe train`` also writes ``refbpe.json``, a small manifest naming the
special tokens and their ids (a special token whose bytes equal a learned
token's cannot be told apart from it in ``vocab.json``: the manifest is what
keeps both).

Every file is written atomically: to a temporary file in the same directory,
flushed and fsynced, then renamed over the target.
"""

import json
import os
import tempfile

__all__ = [
    "bytes_to_unicode",
    "encode_token",
    "decode_token",
    "read_gpt2",
    "write_gpt2",
    "read_model_dir",
    "write_model_dir",
    "atomic_write",
]

MANIFEST = "refbpe.json"


def bytes_to_unicode():
    """The GPT-2 table: {byte value: one-character str}."""
    printable = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(0x100 + extra)
            extra += 1
    return table


_BYTE_TO_CHAR = bytes_to_unicode()
_CHAR_TO_BYTE = {c: b for b, c in _BYTE_TO_CHAR.items()}


def encode_token(token):
    """bytes -> the GPT-2 printable string."""
    return "".join(_BYTE_TO_CHAR[b] for b in token)


def decode_token(text):
    """The GPT-2 printable string -> bytes (ValueError for unmapped characters)."""
    try:
        return bytes(_CHAR_TO_BYTE[c] for c in text)
    except KeyError as e:
        raise ValueError("%r is not a GPT-2 byte-mapped token (character %r)" % (text, e.args[0]))


def atomic_write(path, data):
    """Write ``data`` (bytes) to ``path`` so readers see all of it or none."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def gpt2_vocab_json(vocab, skip_ids=()):
    """The ``vocab.json`` text for {id: bytes}, in id order."""
    entries = {}
    for i in sorted(vocab):
        if i in skip_ids:
            continue
        entries.setdefault(encode_token(vocab[i]), i)
    return json.dumps(entries, ensure_ascii=False)


def gpt2_merges_txt(merges):
    """The ``merges.txt`` text, one merge a line and no ``#version`` header
    (as ``gpt2_merges.txt``; readers skip such a header when present)."""
    lines = []
    lines.extend("%s %s" % (encode_token(a), encode_token(b)) for a, b in merges)
    return "".join(line + "\n" for line in lines)


def write_gpt2(vocab, merges, vocab_path, merges_path):
    atomic_write(vocab_path, gpt2_vocab_json(vocab).encode("utf-8"))
    atomic_write(merges_path, gpt2_merges_txt(merges).encode("utf-8"))


def read_gpt2_vocab(vocab_path):
    with open(vocab_path, encoding="utf-8") as f:
        raw = json.load(f)
    if not isinstance(raw, dict):
        raise ValueError("%s: expected a JSON object of token -> id" % vocab_path)
    vocab = {}
    for text, i in raw.items():
        if not isinstance(i, int):
            raise ValueError("%s: id of %r is not an integer" % (vocab_path, text))
        try:
            vocab[i] = decode_token(text)
        except ValueError:
            vocab[i] = text.encode("utf-8")  # an added token written as itself
    return vocab


def read_gpt2_merges(merges_path):
    merges = []
    with open(merges_path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if (lineno == 1 and line.startswith("#version")) or not line:
                continue
            parts = line.split(" ")
            if len(parts) != 2:
                raise ValueError("%s:%d: expected two tokens separated by one space" % (merges_path, lineno))
            merges.append((decode_token(parts[0]), decode_token(parts[1])))
    return merges


def read_gpt2(vocab_path, merges_path):
    """(vocab {id: bytes}, merges [(bytes, bytes)]) from GPT-2 format files."""
    return read_gpt2_vocab(vocab_path), read_gpt2_merges(merges_path)


def write_model_dir(directory, vocab, merges, special_tokens, extra=None):
    """Write vocab.json, merges.txt and the refbpe.json manifest into ``directory``."""
    os.makedirs(directory, exist_ok=True)
    n = len(vocab) - len(special_tokens)
    specials = [{"content": t, "id": n + k} for k, t in enumerate(special_tokens)]
    manifest = {
        "format": "refbpe-gpt2",
        "vocab_size": len(vocab),
        "num_merges": len(merges),
        "special_tokens": specials,
    }
    manifest.update(extra or {})
    # A special token is left out of vocab.json when its bytes equal another
    # token's: the manifest carries it.
    taken = {vocab[i] for i in range(n)}
    skip = {s["id"] for s in specials if vocab[s["id"]] in taken}
    atomic_write(os.path.join(directory, "vocab.json"), gpt2_vocab_json(vocab, skip).encode("utf-8"))
    atomic_write(os.path.join(directory, "merges.txt"), gpt2_merges_txt(merges).encode("utf-8"))
    atomic_write(os.path.join(directory, MANIFEST), (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def read_model_dir(directory):
    """(vocab, merges, special_tokens) from a directory written by ``write_model_dir``.

    Without a manifest the directory is read as plain GPT-2 files, with no
    special tokens.
    """
    vocab, merges = read_gpt2(os.path.join(directory, "vocab.json"), os.path.join(directory, "merges.txt"))
    special_tokens = []
    manifest_path = os.path.join(directory, MANIFEST)
    if os.path.exists(manifest_path):
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
        for s in manifest.get("special_tokens", []):
            vocab[s["id"]] = s["content"].encode("utf-8")
            special_tokens.append(s["content"])
    return vocab, merges, special_tokens
