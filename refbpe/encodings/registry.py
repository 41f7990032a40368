"""tiktoken's encodings by name: their files, split pattern and special tokens.

The names are those of tiktoken's public registry (its
``tiktoken_ext/openai_public.py``), with the addresses and sha256 it pins and
the patterns and special tokens it gives them, kept here so that refbpe needs
neither tiktoken nor, once the files are cached, a network:

    gpt2           vocab.bpe + encoder.json; pattern gpt2; <|endoftext|> 50256
    r50k_base      r50k_base.tiktoken; pattern gpt2; <|endoftext|> 50256
    p50k_base      p50k_base.tiktoken; pattern gpt2; <|endoftext|> 50256
    p50k_edit      p50k_base.tiktoken; pattern gpt2; <|endoftext|> 50256,
                   <|fim_prefix|> 50281, <|fim_middle|> 50282, <|fim_suffix|> 50283
    cl100k_base    cl100k_base.tiktoken; pattern cl100k_base; <|endoftext|> 100257,
                   <|fim_prefix|> 100258, <|fim_middle|> 100259, <|fim_suffix|> 100260,
                   <|endofprompt|> 100276
    o200k_base     o200k_base.tiktoken; pattern o200k_base; <|endoftext|> 199999,
                   <|endofprompt|> 200018
    o200k_harmony  o200k_base.tiktoken; pattern o200k_base; o200k_base's and the
                   chat tokens 199998 and 200000-201087

(tiktoken's r50k pattern is GPT-2's, written with possessive quantifiers.)  A
``.tiktoken`` ranks file has one ``base64(token bytes) rank`` line per token; a
token's rank is its id.  ``gpt2``'s files are GPT-2's own (``vocab.bpe`` is
``merges.txt``, ``encoder.json`` is ``vocab.json``; their ids are tiktoken's
ranks).  Files are found or fetched by ``cache.cached_file`` (the environment
variable ``REFBPE_TIKTOKEN_DIR``, tiktoken's cache, refbpe's cache, then the
public address).

Anything not a name is taken as a path; a ranks file that ``refbpe train
--format tiktoken`` wrote has its special tokens and pattern in the
``refbpe.json`` manifest beside it, and they are read from there.  Reading goes
through ``formats.tiktoken.read_tiktoken``, which also checks that every token
is the merge of two lower-ranked ones; ``load_tiktoken(..., merges=False)``
reads the ranks alone (``read_ranks``) and leaves the merges, and that check,
to whoever asks for them.
"""

import json
import os

from ..formats.gpt2_files import read_gpt2
from ..formats.tiktoken import ranks_vocab, read_ranks, read_tiktoken
from ..pretokenize.patterns import REGEX_PREFIX, Pattern, pattern_key
from .cache import TIKTOKEN_HOST, cached_file

__all__ = [
    "KNOWN_ENCODINGS",
    "TIKTOKEN_UNICODE",
    "encoding_files",
    "is_encoding_name",
    "load_encoding",
    "load_tiktoken",
    "ranks_path",
]

# The Unicode version tiktoken 0.14's split reads (its regex crate's), probed on every
# code point for gpt2, cl100k_base and o200k_base: tests/unicode_probe.py, docs/unicode.md.
TIKTOKEN_UNICODE = "16.0.0"

_EOT, _FIM = "<|endoftext|>", ("<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>")
_ENDOFPROMPT = "<|endofprompt|>"


def _ranks(name, sha256):
    return {"ranks": ("encodings/%s.tiktoken" % name, sha256)}


_R50K = _ranks("r50k_base", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930")
_P50K = _ranks("p50k_base", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069")
_CL100K = _ranks("cl100k_base", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7")
_O200K = _ranks("o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d")
_O200K_SPECIALS = {_EOT: 199999, _ENDOFPROMPT: 200018}


def _harmony_specials():
    named = {
        "<|startoftext|>": 199998,
        "<|return|>": 200002,
        "<|constrain|>": 200003,
        "<|channel|>": 200005,
        "<|start|>": 200006,
        "<|end|>": 200007,
        "<|message|>": 200008,
        "<|call|>": 200012,
    }
    specials = dict(_O200K_SPECIALS)
    specials.update(named)
    taken = set(named.values())
    for i in range(200000, 201088):
        if i not in taken:
            specials["<|reserved_%d|>" % i] = i
    return specials


# name -> {"files": {role: (path under tiktoken's host, sha256)}, "pattern", "special_tokens"}
KNOWN_ENCODINGS = {
    "gpt2": {
        "files": {
            "merges": (
                "gpt-2/encodings/main/vocab.bpe",
                "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
            ),
            "vocab": (
                "gpt-2/encodings/main/encoder.json",
                "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
            ),
        },
        "pattern": "gpt2",
        "unicode": TIKTOKEN_UNICODE,
        "special_tokens": {_EOT: 50256},
    },
    "r50k_base": {
        "files": _R50K,
        "pattern": "gpt2",
        "unicode": TIKTOKEN_UNICODE,
        "special_tokens": {_EOT: 50256},
    },
    "p50k_base": {
        "files": _P50K,
        "pattern": "gpt2",
        "unicode": TIKTOKEN_UNICODE,
        "special_tokens": {_EOT: 50256},
    },
    "p50k_edit": {
        "files": _P50K,
        "pattern": "gpt2",
        "unicode": TIKTOKEN_UNICODE,
        "special_tokens": {_EOT: 50256, _FIM[0]: 50281, _FIM[1]: 50282, _FIM[2]: 50283},
    },
    "cl100k_base": {
        "files": _CL100K,
        "pattern": "cl100k_base",
        "unicode": TIKTOKEN_UNICODE,
        "special_tokens": {
            _EOT: 100257,
            _FIM[0]: 100258,
            _FIM[1]: 100259,
            _FIM[2]: 100260,
            _ENDOFPROMPT: 100276,
        },
    },
    "o200k_base": {
        "files": _O200K,
        "pattern": "o200k_base",
        "unicode": TIKTOKEN_UNICODE,
        "special_tokens": _O200K_SPECIALS,
    },
    "o200k_harmony": {
        "files": _O200K,
        "pattern": "o200k_base",
        "unicode": TIKTOKEN_UNICODE,
        "special_tokens": _harmony_specials(),
    },
}


def is_encoding_name(path_or_name):
    """True for a known encoding's name that is not also an existing path."""
    return path_or_name in KNOWN_ENCODINGS and not os.path.exists(path_or_name)


def encoding_files(name):
    """{role: local path} of a known encoding's files ("ranks"; gpt2: "merges" and
    "vocab"), each found or fetched and checked by its sha256 (``cache.cached_file``).
    KeyError for an unknown name; ``cache.FileUnavailable`` (an OSError) when a file
    is nowhere to be had."""
    return {
        role: cached_file(TIKTOKEN_HOST + where, sha256) for role, (where, sha256) in _files(name).items()
    }


def ranks_path(name):
    """The local path of the ``.tiktoken`` ranks file of the known encoding ``name``
    (fetched once when no cache holds it).  ``gpt2`` has none (its files are GPT-2's
    ``vocab.bpe`` + ``encoder.json``: ``encoding_files``); ValueError then."""
    files = _files(name)
    if "ranks" not in files:
        raise ValueError("%s has no .tiktoken ranks file (its files: %s)" % (name, ", ".join(sorted(files))))
    where, sha256 = files["ranks"]
    return cached_file(TIKTOKEN_HOST + where, sha256)


def _files(name):
    if name not in KNOWN_ENCODINGS:
        raise KeyError("unknown encoding %r (known: %s)" % (name, ", ".join(sorted(KNOWN_ENCODINGS))))
    return KNOWN_ENCODINGS[name]["files"]


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
    pattern = manifest.get("pattern")
    if pattern is None and isinstance(manifest.get("pat_str"), str):
        pattern = Pattern.from_regex(manifest["pat_str"]).name
    return {"pattern": pattern or "gpt2", "unicode": manifest.get("unicode"), "special_tokens": specials}


def load_tiktoken(path_or_name, special_tokens=None, pattern=None, *, merges=True):
    """``(vocab {id: bytes}, merges, {special token: id}, pattern name)`` of an encoding.

    ``path_or_name``: a known name (``KNOWN_ENCODINGS``; its files found or
    fetched, see ``encoding_files``) or a ranks file's path; a file named like
    a known encoding (``.../cl100k_base.tiktoken``) gets that encoding's
    pattern and special tokens, a file with a refbpe manifest beside it the
    manifest's, any other file none and the default pattern (``gpt2``).
    ``special_tokens`` ({token: id}) and ``pattern`` replace those.  The
    pattern comes back as a key (``patterns.pattern_key``): a known
    encoding's reads ``TIKTOKEN_UNICODE``.  With ``merges=False`` the merges of a
    ranks file are not rebuilt (``merges_from_ranks``, half the load time of
    o200k_base) and None comes back in their place; a GPT-2 pair of files still
    gives its merge list, which costs nothing more.
    """
    path = os.fspath(path_or_name)
    if is_encoding_name(path):
        return load_encoding(path, special_tokens, pattern, merges=merges)
    known = _manifest_beside(path) or KNOWN_ENCODINGS.get(os.path.splitext(os.path.basename(path))[0], {})
    vocab, merges_list = _ranks_vocab(path, merges)
    return _with_known(known, vocab, merges_list, special_tokens, pattern)


def load_encoding(name, special_tokens=None, pattern=None, *, merges=True):
    """``load_tiktoken`` of the known encoding ``name``, even where a path of that name exists."""
    known = KNOWN_ENCODINGS[name]
    files = encoding_files(name)
    if "ranks" in files:
        vocab, merges_list = _ranks_vocab(files["ranks"], merges)
    else:
        vocab, merges_list = read_gpt2(files["vocab"], files["merges"])
    return _with_known(known, vocab, merges_list, special_tokens, pattern)


def _with_known(known, vocab, merges_list, special_tokens, pattern):
    """``load_tiktoken``'s result: ``known``'s special tokens and pattern, or the caller's."""
    specials = dict(known.get("special_tokens", {}) if special_tokens is None else special_tokens)
    recorded = known.get("pattern") or "gpt2"
    if known.get("unicode") and not recorded.startswith(REGEX_PREFIX):
        recorded = "%s@%s" % (recorded, known["unicode"])
    pattern = pattern_key(pattern, None, recorded)
    ordinary = dict(vocab)
    for token, i in specials.items():
        if i in ordinary and ordinary[i] != token.encode("utf-8"):
            raise ValueError("special token %r: id %d is already the token %r" % (token, i, ordinary[i]))
        vocab.setdefault(i, token.encode("utf-8"))  # two special tokens may share an id (o200k_harmony)
    return vocab, merges_list, specials, pattern


def _ranks_vocab(path, with_merges):
    """(vocab {rank: bytes}, merges or None) of a ranks file."""
    if with_merges:
        model = read_tiktoken(path)
        return dict(model.vocab), model.merges
    return ranks_vocab(path, read_ranks(path)), None
