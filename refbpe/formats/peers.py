"""Model files in a peer trainer's own shape (``refbpe train --profile rustbpe|hf``).

    hf        DIR/tokenizer.json as HF tokenizers saves a tokenizer it trained:
              ``Tokenizer(BPE())`` with the ``ByteLevel`` pre-tokenizer
              (``add_prefix_space`` as trained), the special tokens as added
              tokens at ids 0..k-1 and in the model vocab under their own text,
              merges as ``[left, right]`` lists (tokenizers 0.23's form); the
              ByteLevel decoder is added so that the file decodes text (HF's
              trainer leaves it unset; it does not change any id).
    rustbpe   DIR/tokenizer.tiktoken: one ``base64(token) rank`` line per id in
              id order, as ``get_mergeable_ranks()`` returns them (a token spelled
              by two merges keeps both lines); the special tokens (nanochat's,
              after the merges) in the manifest.

Both write DIR/refbpe.json beside the model, naming the profile, the peer
version it was proven against and the settings (``Profile.settings``).  The
files are replaced together (``atomic_write_many``).  Cost: linear in the vocab.
"""

import base64
import json
import os

from .._util.atomic import atomic_write_many
from ..pretokenize.patterns import get_pattern
from .bytemap import encode_token
from .gpt2_files import MANIFEST
from .hf import hf_tokenizer_json
from .model import special_ids

__all__ = ["PEER_FORMATS", "write_peer_model"]

# The format each profile writes in its peer's shape, and the file it goes to.
PEER_FORMATS = {
    "hf": ("hf", "tokenizer.json"),
    "rustbpe": ("tiktoken", "tokenizer.tiktoken"),
    "superbpe": ("hf", "tokenizer.json"),  # as SuperBPE's trainer saves it: HF's, Split on its stage-2 regex
}


def hf_profile_json(vocab, merges, special_tokens, add_prefix_space, pattern_regex=None):
    """The ``tokenizer.json`` object for a model in HF's id layout (``profiles.HFProfile``);
    ``pattern_regex``: a Split on it before a ByteLevel without its regex (SuperBPE's)."""
    data = hf_tokenizer_json(vocab, merges, special_tokens, pattern_regex)
    special = set(special_ids(vocab, special_tokens).values())
    names = {}
    for i in sorted(vocab):
        names[vocab[i].decode("utf-8") if i in special else encode_token(vocab[i])] = i
    data["model"]["vocab"] = names
    data["model"]["merges"] = [[encode_token(a), encode_token(b)] for a, b in merges]
    data["model"]["ignore_merges"] = False
    byte_level = data["pre_tokenizer"]
    if pattern_regex is not None:
        byte_level = byte_level["pretokenizers"][-1]
    byte_level["add_prefix_space"] = bool(add_prefix_space)
    data["decoder"]["add_prefix_space"] = True  # HF's ByteLevel decoder default
    return data


def rustbpe_ranks_text(vocab, special_tokens):
    """``base64(token) rank`` lines for every id but the special tokens', in id order."""
    special = set(special_ids(vocab, special_tokens).values())
    return "".join(
        "%s %d\n" % (base64.b64encode(vocab[i]).decode("ascii"), i) for i in sorted(vocab) if i not in special
    )


def write_peer_model(directory, settings, vocab, merges, special_tokens, extra=None):
    """Write the model of a ``rustbpe`` or ``hf`` run (``settings["profile"]``) and
    its manifest (``extra`` added) into ``directory``; returns the model file's path."""
    profile = settings["profile"]
    fmt, name = PEER_FORMATS[profile]
    path = os.path.join(directory, name)
    ids = special_ids(vocab, special_tokens)
    encoding = settings.get("stage2_pattern", settings["pattern"])  # SuperBPE encodes with stage 2's
    if profile == "hf":
        model = _json_bytes(hf_profile_json(vocab, merges, special_tokens, settings["add_prefix_space"]))
    elif profile == "superbpe":
        regex = get_pattern(encoding).regex
        model = _json_bytes(hf_profile_json(vocab, merges, special_tokens, False, regex))
    else:
        model = rustbpe_ranks_text(vocab, special_tokens).encode("ascii")
    manifest = {
        "format": "refbpe-" + fmt,
        "file": name,
        "pat_str": get_pattern(encoding).regex,
        "vocab_size": len(vocab),
        "num_merges": len(merges),
        "special_tokens": [{"content": t, "id": ids[t]} for t in special_tokens],
        "profile": dict(settings),
    }
    if encoding != settings["pattern"]:
        manifest["pattern"] = encoding  # what Tokenizer.from_dir and the commands encode with
    manifest.update(extra or {})
    os.makedirs(directory, exist_ok=True)
    atomic_write_many({path: model, os.path.join(directory, MANIFEST): _json_bytes(manifest, indent=2)})
    return path


def _json_bytes(data, indent=1):
    return (json.dumps(data, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")
