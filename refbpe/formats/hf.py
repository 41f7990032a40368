"""Hugging Face ``tokenizer.json`` (byte-level BPE): write it, read it.

Written: a BPE model over the GPT-2 byte mapping (``bytemap``), the ByteLevel
pre-tokenizer (no prefix space, GPT-2 regex; for another split pattern, a
Split on that pattern's regex, ``Isolated``, before a ByteLevel without its
own regex, as Llama 3's ``tokenizer.json`` has it), the ByteLevel decoder, and
the special tokens as added tokens (``special: true``).  Read: any byte-level BPE
``tokenizer.json``; added tokens keep their ids.
"""

import json

from .._util.atomic import chunked
from .._util.quoting import quote
from ..pretokenize.patterns import Pattern
from .bytemap import MappedText, TokenBytes, encode_token
from .model import FormatError, Model, special_ids, with_specials

__all__ = ["hf_tokenizer_json", "hf_tokenizer_json_chunks", "read_hf"]


def _pre_tokenizer(pattern_regex):
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    if pattern_regex is None:
        return byte_level
    return {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern_regex}, "behavior": "Isolated", "invert": False},
            dict(byte_level, use_regex=False),
        ],
    }


def hf_tokenizer_json(vocab, merges, special_tokens, pattern_regex=None):
    """The ``tokenizer.json`` object (a dict) for a byte-level BPE model.

    The ByteLevel pre-tokenizer with ``use_regex`` splits with the GPT-2
    pattern (the same alternatives, ``\\s+(?!\\S)`` included), so no Split
    pre-tokenizer is needed; the Unicode tables are Oniguruma's (older than
    refbpe's pinned table: characters assigned after it may split differently).
    ``pattern_regex`` (another split pattern's regex) adds a Split before it.
    """
    data, entries = _skeleton(vocab, special_tokens, pattern_regex)
    data["model"]["vocab"] = {encode_token(token): i for token, i in entries}
    # "a b" strings (no mapped token contains a space): read by every
    # tokenizers version, old and new.
    data["model"]["merges"] = ["%s %s" % (encode_token(a), encode_token(b)) for a, b in merges]
    return data


_VOCAB_SLOT, _MERGES_SLOT = "\x00vocab", "\x00merges"


def hf_tokenizer_json_chunks(vocab, merges, special_tokens, pattern_regex=None):
    """``json.dumps(hf_tokenizer_json(...), ensure_ascii=False, indent=1) + "\\n"`` as
    UTF-8 chunks, byte for byte, with the vocab and merges (nearly all of the file)
    built from the mapped texts (``bytemap.MappedText``), not by a JSON encoder."""
    data, entries = _skeleton(vocab, special_tokens, pattern_regex)
    data["model"]["vocab"], data["model"]["merges"] = _VOCAB_SLOT, _MERGES_SLOT
    text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    head, rest = text.split(json.dumps(_VOCAB_SLOT))
    middle, tail = rest.split(json.dumps(_MERGES_SLOT))
    indent = head[head.rindex("\n") + 1 :].index('"')
    mapped = MappedText(merges, vocab)
    pieces = [head.encode("utf-8")]
    pieces += _json_block(b"{", b"}", indent, _vocab_items(entries, mapped))
    pieces.append(middle.encode("utf-8"))
    pieces += _json_block(b"[", b"]", indent, _merge_items(merges, mapped))
    pieces.append(tail.encode("utf-8"))
    return chunked(pieces)


def _vocab_items(entries, mapped):
    for token, i in entries:
        yield [b'"', mapped.json(token), b'": %d' % i]


def _merge_items(merges, mapped):
    for a, b in merges:
        yield [b'"', mapped.json(a), b" ", mapped.json(b), b'"']


def _json_block(opening, closing, indent, items):
    """The pieces of a JSON object or list as ``json.dumps(indent=1)`` lays it out at
    ``indent`` (the column of its key): one item a line, one space deeper."""
    pieces = [opening]
    separator = b"\n" + b" " * (indent + 1)
    for item in items:
        pieces.append(separator)
        pieces.extend(item)
        separator = b",\n" + b" " * (indent + 1)
    if len(pieces) > 1:
        pieces.append(b"\n" + b" " * indent)
    pieces.append(closing)
    return pieces


def _skeleton(vocab, special_tokens, pattern_regex):
    """(the tokenizer.json dict without model vocab and merges, [(token bytes, id)] of
    the model vocab in its order): ids in order, then the special tokens."""
    vocab = with_specials(vocab, special_tokens)
    specials = special_ids(vocab, special_tokens)
    special_id_set = set(specials.values())
    entries, seen = [], set()
    for i in sorted(vocab):
        if i not in special_id_set and vocab[i] not in seen:
            seen.add(vocab[i])
            entries.append((vocab[i], i))
    for t, i in sorted(specials.items(), key=lambda kv: kv[1]):
        # As GPT-2's tokenizer.json: the special token also in the model vocab
        # (unreachable by merges), unless its mapped form is a real token.
        if t.encode("utf-8") not in seen:
            seen.add(t.encode("utf-8"))
            entries.append((t.encode("utf-8"), i))
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
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": _pre_tokenizer(pattern_regex),
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
            "vocab": None,
            "merges": None,
        },
    }
    return data, entries


def read_hf(path):
    """A ``Model`` from a Hugging Face ``tokenizer.json`` (byte-level BPE)."""
    try:
        # bytes, then one decode: a text-mode read translates newlines, slowly under PyPy
        # (0.65 s of 0.9 s reading a 122 MB tokenizer.json: perf/writers.py ws)
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
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
    decode = TokenBytes()  # learns the merges' results: long tokens are joined, not decoded by character
    merges = []
    for k, m in enumerate(model.get("merges") or []):
        # split as UTF-8 bytes: splitting a long non-ASCII str costs more under PyPy
        parts = m.encode("utf-8", "surrogatepass").split(b" ") if isinstance(m, str) else list(m)
        if len(parts) != 2:
            raise FormatError("%s: merge %d (%s) is not a pair" % (path, k, quote(m)))
        try:
            merges.append(decode.join(_utf8(parts[0]), _utf8(parts[1])))
        except ValueError as e:
            raise FormatError("%s: merge %d: %s" % (path, k, e))
    vocab = {}
    for text, i in model["vocab"].items():
        if i in added:
            continue
        try:
            vocab[i] = decode(_utf8(text))
        except ValueError:
            raise FormatError("%s: token %s is not in the byte-level (GPT-2) mapping" % (path, quote(text)))
    for i, content in added.items():
        vocab[i] = content.encode("utf-8")
    return Model(vocab, merges, specials, "hf", True, path, _split_pattern(path, data.get("pre_tokenizer")))


def _utf8(text):
    if isinstance(text, bytes):
        return text
    if not isinstance(text, str):
        raise ValueError("%s is not a string" % quote(text))
    return text.encode("utf-8")


def _split_pattern(path, pre_tokenizer):
    """The split pattern's name of a ``Split`` (regex, ``Isolated``) before ByteLevel, or None."""
    steps = pre_tokenizer.get("pretokenizers") if isinstance(pre_tokenizer, dict) else None
    for step in steps or []:
        regex = step.get("pattern", {}).get("Regex") if isinstance(step, dict) else None
        if step.get("type") == "Split" and isinstance(regex, str) and step.get("behavior") == "Isolated":
            try:
                return Pattern.from_regex(regex).name
            except ValueError as e:
                raise FormatError("%s: the Split pre-tokenizer's regex: %s" % (path, e))
    return None
