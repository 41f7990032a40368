"""Other libraries' tokenizer formats: write them, read them, tell them apart.

Every reader returns a ``Model``: ``vocab`` {id: bytes}, ``merges``
[(bytes, bytes)] in rank order, ``special_tokens`` [str], the ``format`` it was
read as, and ``carries_ids`` (False when the file has no ids of its own and the
refbpe layout was assumed).

Formats
    gpt2      a directory with ``vocab.json`` + ``merges.txt`` (``#version`` line
              optional) and, when written by refbpe, ``refbpe.json`` (specials).
    hf        a Hugging Face ``tokenizer.json``: a BPE model over the GPT-2 byte
              mapping, ByteLevel pre-tokenizer (no prefix space, GPT-2 regex),
              ByteLevel decoder, special tokens as added tokens (special: true).
    tiktoken  the ranks file ``tiktoken.load.load_tiktoken_bpe`` reads: one
              ``base64(token) rank`` line per token.  It has no merges and no
              special tokens: the merges are rebuilt from the ranks as tiktoken
              does (the token of rank r splits into the two parts that byte-pair
              merging with ranks < r leaves), and special tokens are given by the
              caller and take the ids after the largest rank.
    json      refbpe's plain JSON with hex-encoded bytes, for harnesses in other
              languages::

                  {"format": "refbpe-hex-v1",
                   "vocab": [[0, "00"], [1, "01"], ..., [256, "2074"], ...],
                   "merges": [["20", "74"], ...],
                   "special_tokens": [{"content": "<|endoftext|>", "id": 500}]}

              The reader also takes ``merges`` alone (the refbpe layout is then
              assumed), ``vocab`` as an object {"id": "hex"}, ``vocab_values`` (a
              list of hex, no ids) and ``special_tokens`` as a list of strings.
              The CS336 snapshot file reads as it is.

Every file is written atomically (``formats.atomic_write``).
"""

import base64
import binascii
import json
import os

from .formats import (
    MANIFEST,
    atomic_write,
    atomic_write_many,
    decode_token,
    encode_token,
    read_gpt2,
    read_gpt2_merges,
    read_gpt2_vocab,
    read_manifest_specials,
    write_model_dir,
)
from .pretokenize import GPT2_PATTERN

__all__ = [
    "FORMATS",
    "Model",
    "FormatError",
    "detect_format",
    "read_model",
    "write_model",
    "write_model_file_in_dir",
    "tiktoken_special_tokens",
    "hf_tokenizer_json",
    "read_hf",
    "tiktoken_ranks_text",
    "read_tiktoken",
    "merges_from_ranks",
    "hex_json",
    "read_hex_json",
    "GPT2_PATTERN",
]

FORMATS = ("gpt2", "hf", "tiktoken", "json")


class FormatError(ValueError):
    """A file that is not (valid) in the format it was read as."""


class Model(object):
    """What any format holds: vocab {id: bytes}, merges, special tokens."""

    def __init__(self, vocab, merges, special_tokens, fmt, carries_ids=True, path=None):
        self.vocab = vocab
        self.merges = merges
        self.special_tokens = list(special_tokens)
        self.format = fmt
        self.carries_ids = carries_ids
        self.path = path

    def id_of(self):
        """{bytes: smallest id}: the id an ordinary token's bytes get."""
        out = {}
        for i in sorted(self.vocab):
            out.setdefault(self.vocab[i], i)
        return out

    def tokenizer(self):
        from .tokenizer import Tokenizer

        return Tokenizer(self.vocab, self.merges, self.special_tokens)


def _special_ids(vocab, special_tokens):
    """{special token: id}: the largest id holding its bytes (the CS336 rule)."""
    largest = {}
    for i in sorted(vocab):
        largest[vocab[i]] = i
    out = {}
    for t in special_tokens:
        if t.encode("utf-8") not in largest:
            raise FormatError("special token %r is not in the vocab" % (t,))
        out[t] = largest[t.encode("utf-8")]
    return out


def _with_specials(vocab, special_tokens):
    """A copy of ``vocab`` with each missing special token appended (as Tokenizer does)."""
    vocab = dict(vocab)
    have = set(vocab.values())
    for t in special_tokens:
        b = t.encode("utf-8")
        if b not in have:
            vocab[max(vocab, default=-1) + 1] = b
            have.add(b)
    return vocab


# -- Hugging Face tokenizer.json ------------------------------------------


def hf_tokenizer_json(vocab, merges, special_tokens):
    """The ``tokenizer.json`` object (a dict) for a byte-level BPE model.

    The ByteLevel pre-tokenizer with ``use_regex`` splits with the GPT-2
    pattern (the same alternatives, ``\\s+(?!\\S)`` included), so no Split
    pre-tokenizer is needed; the Unicode tables are Oniguruma's (older than
    refbpe's pinned table: characters assigned after it may split differently).
    """
    vocab = _with_specials(vocab, special_tokens)
    specials = _special_ids(vocab, special_tokens)
    special_id_set = set(specials.values())
    model_vocab = {}
    for i in sorted(vocab):
        if i in special_id_set:
            continue
        model_vocab.setdefault(encode_token(vocab[i]), i)
    for t, i in sorted(specials.items(), key=lambda kv: kv[1]):
        # As GPT-2's tokenizer.json: the special token also in the model vocab
        # (unreachable by merges), unless its mapped form is a real token.
        model_vocab.setdefault(encode_token(t.encode("utf-8")), i)
    added = [
        {
            "id": i,
            "content": t,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for t, i in sorted(specials.items(), key=lambda kv: kv[1])
    ]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": dict(byte_level),
        "post_processor": None,
        "decoder": dict(byte_level),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "vocab": model_vocab,
            # "a b" strings (no mapped token contains a space): read by every
            # tokenizers version, old and new.
            "merges": ["%s %s" % (encode_token(a), encode_token(b)) for a, b in merges],
        },
    }


def read_hf(path):
    """A ``Model`` from a Hugging Face ``tokenizer.json`` (byte-level BPE)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except ValueError as e:
        raise FormatError("%s: not JSON (%s)" % (path, e))
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict) or model.get("type", "BPE") != "BPE" or "vocab" not in model:
        raise FormatError("%s: not a tokenizer.json with a BPE model" % path)
    added = {}
    specials = []
    for t in data.get("added_tokens") or []:
        added[t["id"]] = t["content"]
        if t.get("special", True):
            specials.append(t["content"])
    vocab = {}
    for text, i in model["vocab"].items():
        if i in added:
            continue
        try:
            vocab[i] = decode_token(text)
        except ValueError:
            raise FormatError("%s: token %r is not in the byte-level (GPT-2) mapping" % (path, text))
    for i, content in added.items():
        vocab[i] = content.encode("utf-8")
    merges = []
    for k, m in enumerate(model.get("merges") or []):
        parts = m.split(" ") if isinstance(m, str) else list(m)
        if len(parts) != 2:
            raise FormatError("%s: merge %d (%r) is not a pair" % (path, k, m))
        try:
            merges.append((decode_token(parts[0]), decode_token(parts[1])))
        except ValueError as e:
            raise FormatError("%s: merge %d: %s" % (path, k, e))
    return Model(vocab, merges, specials, "hf", True, path)


# -- tiktoken ranks --------------------------------------------------------


def _check_ranks_follow_merges(vocab, merges):
    """tiktoken merges by the rank (id) of the merged bytes: the ids must grow
    with the merge order, and exceed the ids of both parts, or the file would
    mean other merges."""
    id_of = {}
    for i in sorted(vocab):
        id_of.setdefault(vocab[i], i)
    last = -1
    for k, (a, b) in enumerate(merges):
        r = id_of.get(a + b)
        if r is None or r <= last or id_of.get(a, r) >= r or id_of.get(b, r) >= r:
            raise FormatError(
                "merge %d (%r, %r): the vocab ids do not follow the merge order, so tiktoken ranks "
                "(= ids) cannot express these merges" % (k, a, b)
            )
        last = r


def tiktoken_ranks_text(vocab, merges, special_tokens):
    """The ranks file: ``base64(token) rank`` per token, rank = refbpe id.

    Special tokens are left out (tiktoken takes them separately: see
    ``tiktoken_special_tokens``); a byte string held by several ids is written
    once, with its smallest id.
    """
    special_bytes = {t.encode("utf-8") for t in special_tokens}
    vocab = _with_specials(vocab, special_tokens)
    _check_ranks_follow_merges(vocab, merges)
    specials = set(_special_ids(vocab, special_tokens).values())
    seen = set()
    lines = []
    for i in sorted(vocab):
        b = vocab[i]
        if i in specials and b in special_bytes:
            continue
        if b in seen:
            continue
        seen.add(b)
        lines.append("%s %d\n" % (base64.b64encode(b).decode("ascii"), i))
    return "".join(lines)


def tiktoken_special_tokens(vocab, special_tokens):
    """{special token: id} for ``tiktoken.Encoding(special_tokens=...)``."""
    return _special_ids(_with_specials(vocab, special_tokens), special_tokens)


def _byte_pair_merge(ranks, piece, max_rank):
    """tiktoken's merging: join the adjacent parts whose bytes have the lowest
    rank below ``max_rank``, leftmost first, until none is left."""
    parts = [piece[i : i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best, best_at = None, -1
        for k in range(len(parts) - 1):
            r = ranks.get(parts[k] + parts[k + 1])
            if r is not None and r < max_rank and (best is None or r < best):
                best, best_at = r, k
        if best is None:
            break
        parts[best_at : best_at + 2] = [parts[best_at] + parts[best_at + 1]]
    return parts


def merges_from_ranks(ranks):
    """The merges [(bytes, bytes)] that tiktoken's ranks {bytes: rank} imply, in rank order."""
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) < 2:
            continue
        parts = _byte_pair_merge(ranks, token, rank)
        if len(parts) != 2:
            raise FormatError(
                "token %r (rank %d) is not the merge of two lower-ranked tokens (%d parts)"
                % (token, rank, len(parts))
            )
        if any(ranks.get(p, rank) >= rank for p in parts):
            raise FormatError(
                "token %r (rank %d) splits into %r, not two tokens of lower rank" % (token, rank, parts)
            )
        merges.append((parts[0], parts[1]))
    return merges


def read_tiktoken(path, special_tokens=()):
    """A ``Model`` from a tiktoken ranks file; ``special_tokens`` take the ids after the largest rank."""
    ranks = {}
    with open(path, "rb") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            parts = line.split()
            try:
                if len(parts) != 2:
                    raise ValueError("expected two fields")
                token = base64.b64decode(parts[0], validate=True)
                rank = int(parts[1])
            except (ValueError, binascii.Error) as e:
                raise FormatError("%s:%d: not a 'base64-token rank' line (%s)" % (path, lineno, e))
            ranks[token] = rank
    if not ranks:
        raise FormatError("%s: empty tiktoken ranks file" % path)
    vocab = {r: t for t, r in ranks.items()}
    if len(vocab) != len(ranks):
        raise FormatError("%s: two tokens share a rank" % path)
    try:
        merges = merges_from_ranks(ranks)
    except FormatError as e:
        raise FormatError("%s: %s" % (path, e))
    vocab = _with_specials(vocab, special_tokens)
    return Model(vocab, merges, special_tokens, "tiktoken", True, path)


# -- hex JSON ---------------------------------------------------------------


def hex_json(vocab, merges, special_tokens):
    vocab = _with_specials(vocab, special_tokens)
    specials = _special_ids(vocab, special_tokens)
    return {
        "format": "refbpe-hex-v1",
        "vocab_size": len(vocab),
        "vocab": [[i, vocab[i].hex()] for i in sorted(vocab)],
        "merges": [[a.hex(), b.hex()] for a, b in merges],
        "special_tokens": [{"content": t, "id": specials[t]} for t in special_tokens],
    }


def _unhex(path, value, what):
    if not isinstance(value, str):
        raise FormatError("%s: %s is not a hex string: %r" % (path, what, value))
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise FormatError("%s: %s is not a hex string: %r" % (path, what, value))


def read_hex_json(path, special_tokens=()):
    """A ``Model`` from refbpe's hex JSON (or a JSON holding at least ``merges`` in hex)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except ValueError as e:
        raise FormatError("%s: not JSON (%s)" % (path, e))
    if isinstance(data, list):
        data = {"merges": data}
    if not isinstance(data, dict) or not isinstance(data.get("merges"), list):
        raise FormatError("%s: expected a JSON object with a 'merges' list of [hex, hex]" % path)
    merges = []
    for k, m in enumerate(data["merges"]):
        if not isinstance(m, (list, tuple)) or len(m) != 2:
            raise FormatError("%s: merge %d is not a pair: %r" % (path, k, m))
        merges.append((_unhex(path, m[0], "merge %d" % k), _unhex(path, m[1], "merge %d" % k)))
    specials = []
    special_ids = {}
    for s in data.get("special_tokens") or []:
        if isinstance(s, dict):
            specials.append(s["content"])
            if "id" in s:
                special_ids[s["id"]] = s["content"]
        else:
            specials.append(s)
    for t in special_tokens:
        if t not in specials:
            specials.append(t)
    raw = data.get("vocab")
    carries_ids = True
    if isinstance(raw, dict):
        vocab = {int(i): _unhex(path, h, "vocab id %s" % i) for i, h in raw.items()}
    elif isinstance(raw, list):
        vocab = {}
        for entry in raw:
            if not isinstance(entry, (list, tuple)) or len(entry) != 2 or not isinstance(entry[0], int):
                raise FormatError("%s: vocab entry is not [id, hex]: %r" % (path, entry))
            vocab[entry[0]] = _unhex(path, entry[1], "vocab id %d" % entry[0])
    else:
        from .train import build_vocab

        carries_ids = False
        if isinstance(data.get("vocab_values"), list):
            # Ids are not given: lay the values out as refbpe would, checking the set.
            values = {_unhex(path, h, "vocab value") for h in data["vocab_values"]}
            vocab = build_vocab(merges, [])
            extra = sorted(values - set(vocab.values()) - {t.encode("utf-8") for t in specials})
            for b in extra:
                vocab[len(vocab)] = b
        else:
            vocab = build_vocab(merges, [])
    for i, content in special_ids.items():
        vocab[i] = content.encode("utf-8")
    vocab = _with_specials(vocab, specials)
    return Model(vocab, merges, specials, "json", carries_ids, path)


# -- detection, reading and writing any format ------------------------------


def _gpt2_paths(path):
    """(vocab.json, merges.txt) for a directory, or for either file of a pair
    named PREFIXvocab.json / PREFIXmerges.txt (as the CS336 reference files)."""
    if os.path.isdir(path):
        return os.path.join(path, "vocab.json"), os.path.join(path, "merges.txt")
    d, name = os.path.split(path)
    for mine, other in (("merges.txt", "vocab.json"), ("vocab.json", "merges.txt")):
        if name.endswith(mine):
            sibling = os.path.join(d, name[: -len(mine)] + other)
            return (sibling, path) if mine == "merges.txt" else (path, sibling)
    return os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt")


# The file each format is written to inside a directory (``train --format``).
_DIR_FILES = {"tokenizer.json": "hf", "tokenizer.tiktoken": "tiktoken", "tokenizer.hex.json": "json"}
_FILE_OF = {fmt: name for name, fmt in _DIR_FILES.items()}


def detect_format(path):
    """'gpt2', 'hf', 'tiktoken' or 'json' for ``path``; FormatError if none fits."""
    if not os.path.exists(path):
        raise FormatError("%s: no such file or directory" % path)
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, "vocab.json")) and os.path.isfile(
            os.path.join(path, "merges.txt")
        ):
            return "gpt2"
        for name, fmt in _DIR_FILES.items():
            if os.path.isfile(os.path.join(path, name)):
                return fmt
        raise FormatError(
            "%s: a directory without vocab.json + merges.txt, tokenizer.json, tokenizer.tiktoken "
            "or tokenizer.hex.json" % path
        )
    name = os.path.basename(path)
    if name.endswith("merges.txt") or name.endswith("vocab.json"):
        v, m = _gpt2_paths(path)
        if os.path.isfile(v) and os.path.isfile(m):
            return "gpt2"
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except ValueError as e:
            raise FormatError("%s: looks like JSON but is not valid (%s)" % (path, e))
        if isinstance(data, dict) and isinstance(data.get("model"), dict):
            return "hf"
        if isinstance(data, list) or (isinstance(data, dict) and "merges" in data):
            return "json"
        raise FormatError("%s: a JSON file that is neither a tokenizer.json nor hex merges" % path)
    first = stripped.split(b"\n", 1)[0].split()
    if len(first) == 2 and first[1].isdigit():
        try:
            base64.b64decode(first[0], validate=True)
            return "tiktoken"
        except (ValueError, binascii.Error):
            pass
    raise FormatError(
        "%s: unknown format (expected a GPT-2 directory, tokenizer.json, tiktoken ranks or hex JSON)" % path
    )


def read_model(path, fmt="auto", special_tokens=(), strict=True):
    """A ``Model`` from ``path`` in format ``fmt`` (``auto`` detects it).

    ``special_tokens`` (given by the caller) are added to those the file
    names; formats without special tokens (tiktoken, plain GPT-2) need them.
    ``strict=False`` reads GPT-2 merges of tokens the vocab lacks (``verify``
    reports such output as a difference instead of refusing to read it).
    """
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt not in FORMATS:
        raise FormatError("unknown format %r (expected one of %s)" % (fmt, ", ".join(FORMATS)))
    if not os.path.exists(path):
        raise FormatError("%s: no such file or directory" % path)
    special_tokens = list(special_tokens or ())
    if fmt == "gpt2":
        vocab_path, merges_path = _gpt2_paths(path)
        for p in (vocab_path, merges_path):
            if not os.path.isfile(p):
                raise FormatError("%s: missing %s" % (path, os.path.basename(p)))
        specials = []
        manifest = os.path.join(os.path.dirname(vocab_path), MANIFEST)
        try:
            if strict:
                vocab, merges = read_gpt2(vocab_path, merges_path)
            else:
                vocab, merges = read_gpt2_vocab(vocab_path), read_gpt2_merges(merges_path)
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
        return Model(_with_specials(vocab, specials), merges, specials, "gpt2", True, path)
    if os.path.isdir(path):
        path = os.path.join(path, _FILE_OF[fmt])
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
    m.vocab = _with_specials(m.vocab, m.special_tokens)
    return m


def _json_bytes(obj, indent=None):
    return (json.dumps(obj, ensure_ascii=False, indent=indent) + "\n").encode("utf-8")


def write_model(dest, fmt, vocab, merges, special_tokens):
    """Write ``(vocab, merges, special_tokens)`` to ``dest`` in format ``fmt``.

    gpt2: ``dest`` is a directory (vocab.json, merges.txt, refbpe.json).
    hf: a file, or a directory to hold ``tokenizer.json``.  tiktoken and json:
    a file.  Returns the path written (the directory for gpt2).
    """
    special_tokens = list(special_tokens or ())
    if fmt == "gpt2":
        vocab = _with_specials(vocab, special_tokens)
        n = len(vocab) - len(special_tokens)
        ids = _special_ids(vocab, special_tokens)
        if sorted(ids.values()) == list(range(n, len(vocab))) and [ids[t] for t in special_tokens] == list(
            range(n, len(vocab))
        ):
            write_model_dir(dest, vocab, merges, special_tokens)
        else:
            _write_gpt2_dir_any_ids(dest, vocab, merges, special_tokens, ids)
        return dest
    if fmt == "hf":
        if os.path.isdir(dest):
            dest = os.path.join(dest, "tokenizer.json")
        atomic_write(dest, _json_bytes(hf_tokenizer_json(vocab, merges, special_tokens), indent=1))
        return dest
    if fmt == "tiktoken":
        atomic_write(dest, tiktoken_ranks_text(vocab, merges, special_tokens).encode("ascii"))
        return dest
    if fmt == "json":
        atomic_write(dest, _json_bytes(hex_json(vocab, merges, special_tokens)))
        return dest
    raise FormatError("unknown format %r (expected one of %s)" % (fmt, ", ".join(FORMATS)))


def write_model_file_in_dir(directory, fmt, vocab, merges, special_tokens):
    """``train --format``: write ``directory``/tokenizer.json (hf),
    tokenizer.tiktoken + refbpe.json (tiktoken: the manifest names the special
    tokens), tokenizer.hex.json (json), or the GPT-2 files (gpt2)."""
    if fmt != "tiktoken":
        if fmt != "gpt2":
            os.makedirs(directory, exist_ok=True)
            directory = os.path.join(directory, _FILE_OF[fmt])
        return write_model(directory, fmt, vocab, merges, special_tokens)
    # The ranks and the manifest naming the special tokens are replaced together.
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, _FILE_OF[fmt])
    ids = tiktoken_special_tokens(vocab, special_tokens)
    manifest = {
        "format": "refbpe-tiktoken",
        "file": _FILE_OF[fmt],
        "pat_str": GPT2_PATTERN,
        "special_tokens": [{"content": t, "id": ids[t]} for t in special_tokens],
    }
    atomic_write_many(
        {
            path: tiktoken_ranks_text(vocab, merges, special_tokens).encode("ascii"),
            os.path.join(directory, MANIFEST): _json_bytes(manifest, indent=2),
        }
    )
    return path


def _write_gpt2_dir_any_ids(directory, vocab, merges, special_tokens, special_ids):
    """GPT-2 files for a vocab whose special tokens are not the last ids
    (for example one converted from an HF-trained tokenizer.json)."""
    from .formats import gpt2_merges_txt, gpt2_vocab_json

    os.makedirs(directory, exist_ok=True)
    taken = {vocab[i] for i in vocab if i not in set(special_ids.values())}
    skip = {i for t, i in special_ids.items() if vocab[i] in taken}
    manifest = {
        "format": "refbpe-gpt2",
        "vocab_size": len(vocab),
        "num_merges": len(merges),
        "special_tokens": [{"content": t, "id": special_ids[t]} for t in special_tokens],
    }
    atomic_write_many(
        {
            os.path.join(directory, "vocab.json"): gpt2_vocab_json(vocab, skip).encode("utf-8"),
            os.path.join(directory, "merges.txt"): gpt2_merges_txt(merges).encode("utf-8"),
            os.path.join(directory, MANIFEST): _json_bytes(manifest, indent=2),
        }
    )


# -- CLI: refbpe convert -----------------------------------------------------


def cmd_convert(args):
    from .cli import CliError, check_output_dir, check_output_file

    if args.to == "gpt2" or os.path.isdir(args.out):
        check_output_dir(args.out, "-o")
    else:
        check_output_file(args.out, "-o")
    try:
        m = read_model(args.src, args.source_format, args.special_token)
        out = write_model(args.out, args.to, m.vocab, m.merges, m.special_tokens)
    except FormatError as e:
        raise CliError(str(e))
    if not args.quiet:
        import sys

        sys.stderr.write(
            "convert: %s (%s) -> %s (%s): %d tokens, %d merges, %d special tokens\n"
            % (args.src, m.format, out, args.to, len(m.vocab), len(m.merges), len(m.special_tokens))
        )
    return 0


def register(sub):
    c = sub.add_parser(
        "convert",
        help="convert a tokenizer between formats (gpt2, hf, tiktoken, json)",
        description="Read a tokenizer in any supported format and write it in another. "
        "gpt2 writes a directory; hf, tiktoken and json write a file.",
    )
    c.add_argument("src", metavar="SRC", help="a directory (GPT-2 files or tokenizer.json) or a file")
    c.add_argument(
        "--from",
        dest="source_format",
        choices=("auto",) + FORMATS,
        default="auto",
        help="format of SRC (default: detect)",
    )
    c.add_argument("--to", choices=FORMATS, required=True, help="output format")
    c.add_argument("-o", "--out", required=True, metavar="DEST", help="output directory (gpt2) or file")
    c.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="TOKEN",
        help="a special token SRC does not name (tiktoken files carry none)",
    )
    c.add_argument("--quiet", action="store_true", help="no summary line")
    c.set_defaults(func=cmd_convert)
