"""refbpe's plain JSON with hex-encoded bytes, for harnesses in other languages::

    {"format": "refbpe-hex-v1",
     "vocab": [[0, "00"], [1, "01"], ..., [256, "2074"], ...],
     "merges": [["20", "74"], ...],
     "special_tokens": [{"content": "<|endoftext|>", "id": 500}]}

The reader also takes ``merges`` alone (the refbpe layout is then assumed),
``vocab`` as an object {"id": "hex"}, ``vocab_values`` (a list of hex, no ids)
and ``special_tokens`` as a list of strings.  The CS336 snapshot file reads as
it is.
"""

import json
from binascii import hexlify

from .._util.atomic import chunked
from .._util.quoting import quote
from .model import FormatError, Model, build_vocab, special_ids, with_specials

__all__ = ["hex_json", "hex_json_chunks", "read_hex_json"]


def hex_json(vocab, merges, special_tokens):
    vocab = with_specials(vocab, special_tokens)
    specials = special_ids(vocab, special_tokens)
    return {
        "format": "refbpe-hex-v1",
        "vocab_size": len(vocab),
        "vocab": [[i, vocab[i].hex()] for i in sorted(vocab)],
        "merges": [[a.hex(), b.hex()] for a, b in merges],
        "special_tokens": [{"content": t, "id": specials[t]} for t in special_tokens],
    }


def hex_json_chunks(vocab, merges, special_tokens):
    """``json.dumps(hex_json(...), ensure_ascii=False) + "\\n"`` as UTF-8 chunks, byte for
    byte; the vocab and merges lists (hex: nothing to escape) are laid out directly."""
    data = hex_json({}, [], [])
    vocab = with_specials(vocab, special_tokens)
    specials = special_ids(vocab, special_tokens)
    data["vocab_size"] = len(vocab)
    data["special_tokens"] = [{"content": t, "id": specials[t]} for t in special_tokens]
    data["vocab"], data["merges"] = "\x00vocab", "\x00merges"
    text = json.dumps(data, ensure_ascii=False) + "\n"
    head, rest = text.split(json.dumps(data["vocab"]))
    middle, tail = rest.split(json.dumps(data["merges"]))
    return chunked(_pieces(head, middle, tail, vocab, merges))


def _pieces(head, middle, tail, vocab, merges):
    yield head.encode("utf-8")
    separator = b"["
    for i in sorted(vocab):
        yield separator + b'[%d, "' % i
        yield hexlify(vocab[i])
        yield b'"]'
        separator = b", "
    yield b"[]" if separator == b"[" else b"]"
    yield middle.encode("utf-8")
    separator = b'[["'
    for a, b in merges:
        yield separator
        yield hexlify(a)
        yield b'", "'
        yield hexlify(b)
        yield b'"]'
        separator = b', ["'
    yield b"[]" if separator == b'[["' else b"]"
    yield tail.encode("utf-8")


def _unhex(path, value, what):
    if not isinstance(value, str):
        raise FormatError("%s: %s is not a hex string: %s" % (path, what, quote(value)))
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise FormatError("%s: %s is not a hex string: %s" % (path, what, quote(value)))


def read_hex_json(path, special_tokens=()):
    """A ``Model`` from refbpe's hex JSON (or a JSON holding at least ``merges`` in hex)."""
    try:
        # bytes, then one decode: a text-mode read translates newlines, slowly under PyPy
        # (0.65 s of 0.9 s reading a 122 MB tokenizer.json: perf/writers.py ws)
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
    except ValueError as e:
        raise FormatError("%s: not JSON (%s)" % (path, e))
    if isinstance(data, list):
        data = {"merges": data}
    if not isinstance(data, dict) or not isinstance(data.get("merges"), list):
        raise FormatError("%s: expected a JSON object with a 'merges' list of [hex, hex]" % path)
    merges = []
    for k, m in enumerate(data["merges"]):
        if not isinstance(m, (list, tuple)) or len(m) != 2:
            raise FormatError("%s: merge %d is not a pair: %s" % (path, k, quote(m)))
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
                raise FormatError("%s: vocab entry is not [id, hex]: %s" % (path, quote(entry)))
            vocab[entry[0]] = _unhex(path, entry[1], "vocab id %d" % entry[0])
    else:
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
    vocab = with_specials(vocab, specials)
    return Model(vocab, merges, specials, "json", carries_ids, path)
