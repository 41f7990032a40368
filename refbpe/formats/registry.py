"""tiktoken's encodings by name: where their ranks files are, their pattern and special tokens.

A ``.tiktoken`` ranks file has one ``base64(token bytes) rank`` line per token;
a token's rank is its id.  The pattern and the special tokens are not in the
file: for ``cl100k_base`` and ``o200k_base`` they are tiktoken's (its
``tiktoken_ext/openai_public.py``), kept here so that refbpe needs neither
tiktoken nor a network to load them:

    cl100k_base  pattern cl100k_base; <|endoftext|> 100257, <|fim_prefix|> 100258,
                 <|fim_middle|> 100259, <|fim_suffix|> 100260, <|endofprompt|> 100276
    o200k_base   pattern o200k_base; <|endoftext|> 199999, <|endofprompt|> 200018

A name is looked up as ``<name>.tiktoken`` in ``$REFBPE_TIKTOKEN_DIR``, then in
``data/tiktoken/`` of ``$REFBPE_SHARED`` and of the ``shared/`` directory
beside the repository (where the test suite finds its data); anything else is
taken as a path; a ranks file that ``refbpe train --format tiktoken`` wrote
has its special tokens and pattern in the ``refbpe.json`` manifest beside it,
and they are read from there.  Reading goes through ``formats.tiktoken.read_tiktoken``, which also
checks that every token is the merge of two lower-ranked ones.
"""

import json
import os

from .tiktoken import read_tiktoken

__all__ = ["KNOWN_ENCODINGS", "load_tiktoken", "locate_ranks"]

KNOWN_ENCODINGS = {
    "cl100k_base": {
        "pattern": "cl100k_base",
        "special_tokens": {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    },
    "o200k_base": {
        "pattern": "o200k_base",
        "special_tokens": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    },
}


def _search_dirs():
    dirs = []
    if os.environ.get("REFBPE_TIKTOKEN_DIR"):
        dirs.append(os.environ["REFBPE_TIKTOKEN_DIR"])
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for shared in (os.environ.get("REFBPE_SHARED"), os.path.join(repo, "..", "shared")):
        if shared:
            dirs.append(os.path.join(shared, "data", "tiktoken"))
    return dirs


def locate_ranks(name):
    """The ranks file of the known encoding ``name``; FileNotFoundError naming where it looked."""
    tried = [os.path.join(d, name + ".tiktoken") for d in _search_dirs()]
    for path in tried:
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(
        "%s.tiktoken not found (looked in %s); pass the ranks file's path, or set REFBPE_TIKTOKEN_DIR"
        % (name, ", ".join(tried) or "nowhere")
    )


def _manifest_beside(path):
    """{"pattern", "special_tokens"} from a refbpe-tiktoken manifest naming ``path``, or None."""
    manifest_path = os.path.join(os.path.dirname(os.path.abspath(path)), "refbpe.json")
    if not os.path.isfile(manifest_path):
        return None
    try:
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
    except ValueError as e:
        raise ValueError("%s: not valid JSON (%s)" % (manifest_path, e))
    if not isinstance(manifest, dict) or manifest.get("format") != "refbpe-tiktoken":
        return None
    if manifest.get("file") != os.path.basename(path):
        return None
    try:
        specials = {e["content"]: int(e["id"]) for e in manifest.get("special_tokens", [])}
    except (TypeError, KeyError, ValueError):
        raise ValueError("%s: 'special_tokens' must be a list of {content, id}" % manifest_path)
    return {"pattern": manifest.get("pattern", "gpt2"), "special_tokens": specials}


def load_tiktoken(path_or_name, special_tokens=None, pattern=None):
    """``(vocab {id: bytes}, merges, {special token: id}, pattern name)`` of an encoding.

    ``path_or_name``: a known name (``KNOWN_ENCODINGS``) or a ranks file's path;
    a file named like a known encoding (``.../cl100k_base.tiktoken``) gets
    that encoding's pattern and special tokens, a file with a refbpe
    manifest beside it the manifest's, any other file none and the default
    pattern (``gpt2``).  ``special_tokens`` ({token: id}) and
    ``pattern`` replace those.
    """
    path = os.fspath(path_or_name)
    if path in KNOWN_ENCODINGS and not os.path.exists(path):
        known = KNOWN_ENCODINGS[path]
        path = locate_ranks(path)
    else:
        known = _manifest_beside(path) or KNOWN_ENCODINGS.get(os.path.splitext(os.path.basename(path))[0], {})
    model = read_tiktoken(path)
    specials = dict(known.get("special_tokens", {}) if special_tokens is None else special_tokens)
    pattern = pattern or known.get("pattern") or "gpt2"
    vocab = dict(model.vocab)
    for token, i in specials.items():
        if i in vocab and vocab[i] != token.encode("utf-8"):
            raise ValueError("special token %r: id %d is already the token %r" % (token, i, vocab[i]))
        vocab[i] = token.encode("utf-8")
    return vocab, model.merges, specials, pattern
