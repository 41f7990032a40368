"""The conformance pack: a fixed, versioned set of cases any test runner can replay: ``write_pack``.

Cases are drawn from the fuzzer's classes with ``random.Random`` seeded by a
string (the same on every interpreter and platform, no Hypothesis needed), so
``refbpe conformance write`` gives byte-identical packs on CPython and PyPy.
The layout (docs/ci.md, "The conformance pack")::

    manifest.json        {"format": "refbpe-conformance", "version": 1, "refbpe_version", "profile",
                          "pattern", "unicode_version", "settings", "cases": [{"name", "kind",
                          "class", "files": {name: sha256}}]}
    <case>/params.json   {"kind": train|encode|split, "class", "vocab_size", "special_tokens",
                          "profile", "pattern", "unicode_version", "settings"}
    <case>/input.txt     the text (UTF-8), or input.counts.tsv (word counts, ``countfile``)
    <case>/expected.hex.json   train: the reference's vocab and merges (``formats.hexjson``)
    <case>/model.hex.json, ids.json     encode: the model and the expected ids
    <case>/pieces.json   split: the expected pieces, a JSON list of hex strings

``settings`` are the training settings the answers were trained with (the recorded
``Profile.settings`` of the profile and its options: ``train``'s); ``check_pack``
holds their trainer to them (a pack without them: the profile's defaults).

With ``--cs336 DIR`` the CS336 fixtures found there are cases too: ``corpus.en``
(vocab 500) and ``tinystories_sample.txt`` (400) trained with ``<|endoftext|>``,
and five fixture texts encoded with the pack's model (class ``cs336-fixtures``).

``check_pack`` replays a pack against their command (``target.Target``) with
the fuzzer's judge and yields one result per case.  A trainer reads either
text or word counts (``counts``): the cases of the other input are skipped
and counted (``skipped``).  Encode cases follow ``special_tokens``
(``specials.allowed_specials``: all of the model's by default).  Cost: writing, one small
training per case (about 250 cases, seconds); checking, one run of theirs
per case.
"""

import fnmatch
import hashlib
import json
import os
import random

from .. import __version__
from .._util.atomic import atomic_write
from ..corpus.countfile import counts_tsv, read_counts
from ..encode.tokenizer import Tokenizer
from ..formats.hexjson import hex_json
from ..learn.profiles import ProfileLimit, get_profile
from ..learn.train import train_from_counts, train_from_texts
from ..loader import read_model
from ..pretokenize._unicode_table import UNICODE_VERSION
from ..pretokenize.patterns import get_pattern
from ..specials import allowed_specials
from ..testing.atoms import (
    COMBINING,
    CONTRACTIONS,
    CONTRACTIONS_ANY_CASE,
    DIGITS,
    EMOJI,
    MARKS,
    NEWLINE_RUNS,
    NUMBERS,
    PUNCT,
    RECENT,
    SPECIAL_TOKENS,
    WHITESPACE,
    WORDS,
    WORDS_ANY_CASE,
)
from ..testing.strategies import CLASSES, EOT
from ..verify.setting_search import as_options
from .trial import Trial

__all__ = ["PackError", "check_pack", "write_pack", "pack_settings"]

FORMAT, VERSION = "refbpe-conformance", 1
PER_CLASS = 16  # training cases per class: 10 classes, plus counts, encode and split cases
MODEL_TEXT = (
    "the cat sat on the mat; low lower lowest newer wider new news " * 4
) + "abab aaaa 1234 \u4e2d\u6587"


class PackError(ValueError):
    """A pack that is incomplete, altered, or of another version."""


def _join(rng, atoms, n):
    return "".join(_pick(rng, atoms) for _ in range(rng.randint(1, n)))


def _pick(rng, atoms):
    a = rng.choice(atoms)
    return a(rng) if callable(a) else a


def _run(chars, lo, hi):
    return lambda rng: "".join(rng.choice(chars) for _ in range(rng.randint(lo, hi)))


def _text(rng, cls, tokens):
    if cls == "ties":
        words = list({_run("ab c\u00e9\u4e2d'", 1, 4)(rng) for _ in range(rng.randint(1, 5))})
        words.sort()
        return rng.choice(["", " ", "\n"]).join(words * rng.randint(1, 4))
    if cls == "overlapping-runs":
        units = ["a", "ab", "aab", "aba", "\u00e9", "\u4e2d", " ", "\n", "1"]
        return " ".join(rng.choice(units) * rng.randint(1, 12) for _ in range(rng.randint(1, 5)))
    if cls == "long-pieces":
        unit = rng.choice(["a", "ab", "x", "1", "!", " ", "\u4e2d", "\U0001f600", "\r\n"])
        return (
            _text(rng, "random", tokens)[:12]
            + unit * rng.randint(20, 200)
            + _text(rng, "random", tokens)[:12]
        )
    if cls == "special-tokens":
        fragments = [t[: len(t) // 2] for t in tokens] + [t[len(t) // 2 :] for t in tokens]
        atoms = tokens + [t * 2 for t in tokens] + fragments + WORDS[:6] + [" ", "\n", "a"]
        return _join(rng, atoms, 16)
    if cls == "whitespace":
        return _join(rng, WHITESPACE + NEWLINE_RUNS + ["\r\n", "\x85", "\u3000", " ", "  "] + WORDS[:6], 16)
    if cls == "unicode":
        return _join(rng, RECENT + EMOJI + COMBINING + MARKS + WORDS + [" ", "\n"], 12)
    if cls == "contractions":
        return _join(rng, CONTRACTIONS_ANY_CASE + WORDS_ANY_CASE[:9] + [" ", "  ", "\n"], 14)
    if cls == "digits":
        digits = NUMBERS + list(DIGITS) + RECENT[5::2]
        return _join(rng, [_run(digits, 1, 5), _run("0123456789", 1, 5), " ", "  ", "\n", "a", " x", "."], 14)
    if cls == "multi-document":
        return EOT.join(_text(rng, "random", tokens) for _ in range(rng.randint(1, 4)))
    atoms = WORDS + CONTRACTIONS + EMOJI + COMBINING + PUNCT + [_run(DIGITS, 1, 4), _run(WHITESPACE, 1, 3)]
    return _join(rng, atoms, 12)


def _tokens(rng, cls):
    if cls == "special-tokens":
        return rng.sample(SPECIAL_TOKENS, rng.randint(1, 3))
    if cls == "multi-document":
        return [EOT]
    return rng.choice([[], [EOT]])


def _counts(rng):
    near = [2**31, 2**32, 2**63]
    words = {}
    for _ in range(rng.randint(1, 6)):
        word = _run("abcd \u00e9", 2, 5)(rng).encode("utf-8")
        words[word] = rng.randint(1, 1000) if rng.random() < 0.4 else rng.choice(near) + rng.randint(-3, 3)
    return words


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _dumps(obj):
    return (json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode("utf-8")


# CS336's fixtures (``--cs336 DIR``): (file, vocab size) trained with <|endoftext|>, and texts encoded.
CS336_TRAIN = (("corpus.en", 500), ("tinystories_sample.txt", 400))
CS336_ENCODE = (
    "address.txt",
    "german.txt",
    "tinystories_sample.txt",
    "special_token_trailing_newlines.txt",
    "special_token_double_newlines_non_whitespace.txt",
)


def _fixture_cases(directory, params, options, model, tok):
    """The cases of CS336's fixture files in ``directory`` (those present)."""
    for name, vocab_size in CS336_TRAIN:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        vocab, merges = train_from_texts([text], vocab_size, [EOT], **options)
        p = dict(params, kind="train", vocab_size=vocab_size, special_tokens=[EOT], fixture=name)
        p["class"] = "cs336-fixtures"
        files = {"input.txt": text.encode("utf-8"), "params.json": _dumps(p)}
        files["expected.hex.json"] = _dumps(hex_json(vocab, merges, [EOT]))
        yield "train-cs336-%s" % name.split(".")[0].replace("_", "-"), "train", "cs336-fixtures", files
    for name in CS336_ENCODE:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        p = dict(params, kind="encode", special_tokens=[EOT], fixture=name)
        p["class"] = "cs336-fixtures"
        files = {"input.txt": text.encode("utf-8"), "params.json": _dumps(p), "model.hex.json": model}
        files["ids.json"] = _dumps(tok.encode(text))
        yield "encode-cs336-%s" % name.split(".")[0].replace("_", "-"), "encode", "cs336-fixtures", files


def _cases(seed, profile, pattern, fixtures=None, settings=None):
    """(name, kind, class, files {name: bytes}) of every case, in order."""
    rng = random.Random("refbpe-conformance-%d" % seed)
    pattern = get_pattern(pattern or get_profile(profile).default_pattern).name
    params = {
        "profile": profile or "cs336",
        "pattern": get_pattern(pattern).name,
        "unicode_version": UNICODE_VERSION,
    }
    options = {"profile": profile, "pattern": pattern}
    if settings is not None:
        params["settings"] = settings
        options = dict(as_options(settings), profile=profile)
    for cls in CLASSES:
        for k in range(PER_CLASS):
            tokens = _tokens(rng, cls)
            text = _text(rng, cls, tokens)
            vocab_size = 256 + len(tokens) + rng.randint(1, 30)
            try:
                vocab, merges = train_from_texts([text], vocab_size, tokens, **options)
            except ProfileLimit:
                continue
            p = dict(params, kind="train", vocab_size=vocab_size, special_tokens=tokens)
            p["class"] = cls
            files = {"input.txt": text.encode("utf-8"), "params.json": _dumps(p)}
            files["expected.hex.json"] = _dumps(hex_json(vocab, merges, tokens))
            yield "train-%s-%03d" % (cls, k), "train", cls, files
    for k in range(PER_CLASS):
        counts = _counts(rng)
        vocab_size = 256 + rng.randint(1, 10)
        try:
            vocab, merges = train_from_counts(counts, vocab_size, [], **options)
        except ProfileLimit:
            continue
        p = dict(params, kind="train", vocab_size=vocab_size, special_tokens=[])
        p["class"] = "count-overflow"
        files = {"input.counts.tsv": counts_tsv(counts).encode("ascii"), "params.json": _dumps(p)}
        files["expected.hex.json"] = _dumps(hex_json(vocab, merges, []))
        yield "train-count-overflow-%03d" % k, "train", "count-overflow", files
    vocab, merges = train_from_texts([MODEL_TEXT], 320, [EOT], pattern=pattern)
    tok = Tokenizer(vocab, merges, [EOT], pattern=pattern)
    model = _dumps(hex_json(vocab, merges, [EOT]))
    for kind in ("encode", "split"):
        for cls in CLASSES:
            for k in range(2):
                text = _text(rng, cls, [EOT])
                p = dict(params, kind=kind, special_tokens=[EOT] if kind == "encode" else [])
                p["class"] = cls
                files = {"input.txt": text.encode("utf-8"), "params.json": _dumps(p)}
                if kind == "encode":
                    files["model.hex.json"] = model
                    files["ids.json"] = _dumps(tok.encode(text))
                else:
                    pieces = get_pattern(pattern).pretokenize(text.encode("utf-8"))
                    files["pieces.json"] = _dumps([x.hex() for x in pieces])
                yield "%s-%s-%03d" % (kind, cls, k), kind, cls, files
    if fixtures:
        for case in _fixture_cases(fixtures, params, options, model, tok):
            yield case


def write_pack(directory, profile=None, pattern=None, seed=0, fixtures=None, settings=None):
    """Write the pack to ``directory`` (created; it must be empty); the manifest.
    ``fixtures``: CS336's fixture directory, whose files become cases too; ``settings``:
    the recorded settings of ``profile`` to train the answers with (default its own)."""
    if settings is None:
        settings = get_profile(profile).settings(pattern=pattern)
    if fixtures and not os.path.isdir(fixtures):
        raise PackError("%s: not a directory" % fixtures)
    if os.path.isdir(directory) and os.listdir(directory):
        raise PackError("%s: not empty (the pack is written to a new or empty directory)" % directory)
    entries = []
    for name, kind, cls, files in _cases(seed, profile, pattern, fixtures, settings):
        os.makedirs(os.path.join(directory, name), exist_ok=True)
        for fname, data in sorted(files.items()):
            atomic_write(os.path.join(directory, name, fname), data)
        entries.append(
            {
                "name": name,
                "kind": kind,
                "class": cls,
                "files": {f: _sha256(d) for f, d in sorted(files.items())},
            }
        )
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "refbpe_version": __version__,
        "profile": profile or "cs336",
        "pattern": get_pattern(pattern or get_profile(profile).default_pattern).name,
        "unicode_version": UNICODE_VERSION,
        "settings": settings,
        "seed": seed,
        "cases": entries,
    }
    atomic_write(os.path.join(directory, "manifest.json"), _dumps(manifest))
    return manifest


def pack_settings(directory):
    """The recorded settings a pack's answers were trained with (its manifest's; None when
    it names none: the profile's defaults), without checking the pack's files."""
    try:
        with open(os.path.join(directory, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise PackError("%s: cannot read the manifest (%s)" % (directory, e))
    settings = manifest.get("settings") if isinstance(manifest, dict) else None
    if settings is None and isinstance(manifest, dict):
        settings = get_profile(manifest.get("profile")).settings(pattern=manifest.get("pattern"))
    return settings


def read_manifest(directory):
    """The manifest, after checking the format, the version and every file's sha256."""
    path = os.path.join(directory, "manifest.json")
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise PackError("%s: cannot read the manifest (%s)" % (path, e))
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise PackError("%s: not a version %d refbpe conformance pack" % (path, VERSION))
    for case in manifest["cases"]:
        for fname, digest in case["files"].items():
            file_path = os.path.join(directory, case["name"], fname)
            try:
                with open(file_path, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise PackError("%s: cannot read (%s)" % (file_path, e.strerror or e))
            if _sha256(data) != digest:
                raise PackError("%s: sha256 differs from the manifest's (altered?)" % file_path)
    return manifest


def _case(directory, entry):
    """(case dict, params) of one case directory."""
    d = os.path.join(directory, entry["name"])
    with open(os.path.join(d, "params.json"), encoding="utf-8") as f:
        params = json.load(f)
    case = {"vocab_size": params.get("vocab_size", 0), "special_tokens": params.get("special_tokens", [])}
    if "input.counts.tsv" in entry["files"]:
        case["counts"] = read_counts(os.path.join(d, "input.counts.tsv"))
    else:
        with open(os.path.join(d, "input.txt"), encoding="utf-8", newline="") as f:
            case["text"] = f.read()
    return case, params


def is_counts_case(entry):
    """True for a case whose input is a word-count file (class ``count-overflow``)."""
    return "input.counts.tsv" in entry["files"]


def check_pack(
    directory, target, timeout, workdir, cases="*", counts=False, special_tokens=None, skipped=None
):
    """Yield ``(entry, verdict)`` for each case of the target's kind whose name matches
    one of the globs in ``cases`` (comma-separated; verdict None: pass).  A trainer
    reads word counts when ``counts``, else text: the matching cases of the other
    input are not run but counted in ``skipped`` (a dict, when given: {"counts": n,
    "text": n}).  ``special_tokens``: ``allowed_specials``' choice for encode cases."""
    globs = [g for g in cases.split(",") if g]
    manifest = read_manifest(directory)
    target.check_placeholders()
    profile = manifest["profile"] if manifest["profile"] != "cs336" else None
    for entry in manifest["cases"]:
        if entry["kind"] != target.mode or not any(fnmatch.fnmatchcase(entry["name"], g) for g in globs):
            continue
        if target.mode == "train" and is_counts_case(entry) != counts:
            if skipped is not None:
                key = "counts" if is_counts_case(entry) else "text"
                skipped[key] = skipped.get(key, 0) + 1
            continue
        case, params = _case(directory, entry)
        model = path = tok = allowed = None
        if target.mode == "encode":
            path = os.path.join(directory, entry["name"], "model.hex.json")
            model = read_model(path, "json")
            tok = Tokenizer(model.vocab, model.merges, model.special_tokens, pattern=params["pattern"])
            try:
                allowed = allowed_specials(special_tokens, model.special_tokens)
            except ValueError as e:
                raise PackError("%s: %s" % (entry["name"], e))
            if allowed is not None:
                case["special_tokens"] = allowed
        trial = Trial(target, profile, params["pattern"], timeout, model, path, tok, allowed)
        trial.settings = params.get("settings", manifest.get("settings"))
        run_dir = os.path.join(workdir, entry["name"])
        os.makedirs(run_dir, exist_ok=True)
        yield entry, trial.run(case, run_dir)
