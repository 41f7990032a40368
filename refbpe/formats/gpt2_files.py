"""The GPT-2 format: ``vocab.json`` + ``merges.txt``, and refbpe's ``refbpe.json`` manifest.

GPT-2 format (refbpe's default): ``vocab.json`` maps each token, written with the
GPT-2 byte-to-unicode table, to its id; ``merges.txt`` has one merge per line,
``left right`` in the same mapping, optionally after a ``#version`` line.  The
table maps the printable bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF to the code
point of the same value and the other 68 bytes, in increasing order, to U+0100,
U+0101, ... (``bytemap``); so no mapped token contains a space and each line
splits unambiguously.

``refbpe train`` also writes ``refbpe.json``, a small manifest naming the
special tokens and their ids (a special token whose bytes equal a learned
token's cannot be told apart from it in ``vocab.json``: the manifest is what
keeps both).

Reading names the file and line of anything invalid (``ModelFileError``).
Every file is written atomically (``refbpe._util.atomic``), the files of one model
together.
"""

import json
import os
import re

from .._util.atomic import atomic_write_many, chunked
from .._util.quoting import quote
from .bytemap import MappedText, TokenBytes, encode_token
from .model import FormatError

__all__ = [
    "MANIFEST",
    "gpt2_vocab_json",
    "read_gpt2",
    "read_gpt2_unchecked",
    "write_model_dir",
    "write_gpt2_dir_any_ids",
    "read_manifest_specials",
    "read_manifest_pattern",
]

MANIFEST = "refbpe.json"


def gpt2_vocab_json(vocab, skip_ids=()):
    """The ``vocab.json`` text for {id: bytes}, in id order."""
    return b"".join(gpt2_vocab_json_chunks(vocab, skip_ids)).decode("utf-8")


def gpt2_merges_txt(merges):
    """The ``merges.txt`` text, one merge a line and no ``#version`` header
    (as ``gpt2_merges.txt``; readers skip such a header when present)."""
    return b"".join(gpt2_merges_txt_chunks(merges)).decode("utf-8")


def gpt2_vocab_json_chunks(vocab, skip_ids=(), text=None):
    """``vocab.json`` as UTF-8 chunks: ``json.dumps({text: id}, ensure_ascii=False)``
    byte for byte (ids in order, the first id of a repeated token kept), built
    from the mapped texts (``text``: a ``bytemap.MappedText``) without a JSON
    encoder's per-character work."""
    return chunked(_vocab_json_pieces(vocab, skip_ids, text or MappedText()))


def _vocab_json_pieces(vocab, skip_ids, text):
    seen = set()
    opening = b'{"'
    for i in sorted(vocab):
        token = vocab[i]
        if i in skip_ids or token in seen:
            continue
        seen.add(token)
        yield opening
        yield text.json(token)
        yield b'": %d' % i
        opening = b', "'
    yield b"{}" if opening == b'{"' else b"}"


def gpt2_merges_txt_chunks(merges, text=None):
    """``merges.txt`` as UTF-8 chunks (see ``gpt2_merges_txt``)."""
    return chunked(_merge_line_pieces(merges, text or MappedText(merges)))


def _merge_line_pieces(merges, text):
    for a, b in merges:
        yield text(a)
        yield b" "
        yield text(b)
        yield b"\n"


def _model_files(directory, vocab, merges, skip, manifest):
    text = MappedText(merges, vocab)
    return {
        os.path.join(directory, "vocab.json"): gpt2_vocab_json_chunks(vocab, skip, text),
        os.path.join(directory, "merges.txt"): gpt2_merges_txt_chunks(merges, text),
        os.path.join(directory, MANIFEST): (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode(
            "utf-8"
        ),
    }


def write_gpt2(vocab, merges, vocab_path, merges_path):
    text = MappedText(merges, vocab)
    atomic_write_many(
        {
            vocab_path: gpt2_vocab_json_chunks(vocab, (), text),
            merges_path: gpt2_merges_txt_chunks(merges, text),
        }
    )


# -- reading, with every error naming its file and line ------------------------


class ModelFileError(ValueError):
    """A vocab, merges or manifest file that is not valid ("file:line: what")."""


def _read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ModelFileError("%s:%d: not UTF-8 (byte offset %d)" % (path, line, e.start))


class _Pairs(list):
    """A JSON object as the list of its (key, value) pairs, duplicates kept."""


def _load_json(path):
    """(parsed JSON with objects as ``_Pairs``, text); ModelFileError if not JSON."""
    text = _read_text(path)
    try:
        return json.loads(text, object_pairs_hook=_Pairs), text
    except ValueError as e:  # json.JSONDecodeError
        line = getattr(e, "lineno", None)
        where = "%s:%d" % (path, line) if line else path
        raise ModelFileError("%s: not valid JSON (%s)" % (where, getattr(e, "msg", e)))


def _key_line(text, key, occurrence=1):
    """The line of the ``occurrence``-th appearance of ``key`` as a JSON key (1 if unknown)."""
    for spelling in (json.dumps(key, ensure_ascii=False), json.dumps(key)):
        pos = -1
        for _ in range(occurrence):
            pos = text.find(spelling + ":", pos + 1)
            if pos < 0:
                pos = text.find(spelling + " :", pos + 1)
            if pos < 0:
                break
        if pos >= 0:
            return text.count("\n", 0, pos) + 1
    return 1


def _is_id(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read_gpt2_vocab(vocab_path, decode=None):
    """{id: bytes} from a GPT-2 ``vocab.json`` (token -> id); ``decode``: a
    ``bytemap.TokenBytes`` (one that read the merges knows the long tokens).

    A flat one-line object as ``json.dumps`` writes it (``{"t": 0, "u": 1}``,
    as refbpe and GPT-2 write it) is split with bytes operations, at the speed
    of copying; anything else, and any file with a fault, is read by the JSON
    parser, whose errors name the line."""
    decode = decode or TokenBytes()
    with open(vocab_path, "rb") as f:
        data = f.read()
    pairs = _flat_vocab_pairs(data)
    if pairs is not None:
        vocab = {}
        try:
            for text, i in pairs:
                vocab[i] = _token_of_text(decode, text)
        except UnicodeDecodeError:
            vocab = None
        if vocab is not None and len(vocab) == len(pairs) == len({t for t, _ in pairs}):
            return vocab
    return _read_vocab_json(vocab_path, decode)


def _token_of_text(decode, text):
    try:
        return decode(text)
    except UnicodeDecodeError:
        raise
    except ValueError:
        return text  # an added token written as itself


_ESCAPED_OR_BAD = re.compile(b'[\x00-\x1f"\\\\]')  # in a key: an escape, or an unescaped control or quote


def _flat_vocab_pairs(data):
    """[(token text as UTF-8 bytes, id)] of ``{"t": 0, "u": 1}`` written as ``json.dumps``
    writes it, or None for any other shape.  No space or quote is in a key unless
    escaped, so ``, "`` only separates entries and the last ``": `` ends a key;
    each key is found, checked and copied once (no split of the whole file)."""
    end = len(data.rstrip(b"\r\n"))
    if data[:end] == b"{}":
        return []
    if not (data.startswith(b'{"') and data[end - 1 : end] == b"}"):
        return None
    pairs = []
    start, last = 2, end - 1
    while start <= last:
        stop = data.find(b', "', start, last)
        stop = last if stop < 0 else stop
        colon = data.rfind(b'": ', start, stop)
        number = data[colon + 3 : stop]
        if colon < 0 or not number.isdigit() or (number[:1] == b"0" and len(number) > 1):
            return None
        text = data[start:colon]
        if _ESCAPED_OR_BAD.search(text) is not None:
            try:
                text = json.loads(b'"' + text + b'"').encode("utf-8")
            except ValueError:
                return None
        pairs.append((text, int(number)))
        start = stop + 3
    return pairs


def _read_vocab_json(vocab_path, decode):
    pairs, text = _load_json(vocab_path)
    if not isinstance(pairs, _Pairs):
        raise ModelFileError("%s:1: expected a JSON object of token -> id" % vocab_path)
    vocab, token_of = {}, {}
    for token, i in pairs:
        if token in token_of:
            raise ModelFileError(
                "%s:%d: token %r appears twice" % (vocab_path, _key_line(text, token, 2), token)
            )
        if not _is_id(i):
            raise ModelFileError(
                "%s:%d: the id of token %r is not a non-negative integer: %r"
                % (vocab_path, _key_line(text, token), token, i)
            )
        if i in vocab:
            raise ModelFileError(
                "%s:%d: id %d is given to two tokens, %r and %r"
                % (vocab_path, _key_line(text, token), i, _token_of_id(token_of, i), token)
            )
        token_of[token] = i
        try:
            vocab[i] = decode(token.encode("utf-8", "surrogatepass"))
        except ValueError:
            vocab[i] = token.encode("utf-8")  # an added token written as itself
    return vocab


def _token_of_id(token_of, i):
    return next(t for t, j in token_of.items() if j == i)


def _read_merge_lines(merges_path, decode=None):
    """[(line number, (left bytes, right bytes))] from a GPT-2 ``merges.txt``; ``decode``
    (a ``bytemap.TokenBytes``) learns each merge's result, so the tokens merges make
    are decoded by joining bytes, not character by character."""
    decode = decode or TokenBytes()
    with open(merges_path, "rb") as f:
        data = f.read()
    merges = []
    try:
        for lineno, left, right in _merge_lines(data, merges_path):
            try:
                merges.append((lineno, decode.join(left, right)))
            except UnicodeDecodeError:
                raise
            except ValueError as e:
                raise ModelFileError("%s:%d: %s" % (merges_path, lineno, e))
    except UnicodeDecodeError:
        _read_text(merges_path)  # raises the error naming the line
        raise
    return merges


def _merge_lines(data, merges_path):
    """(line number, left text, right text) of each merge line, each part copied once
    (no split of the whole file); ModelFileError for a line that is not two tokens."""
    pos, lineno, size = 0, 0, len(data)
    while pos < size:
        lineno += 1
        end = data.find(b"\n", pos)
        end = size if end < 0 else end
        stop = end - 1 if end > pos and data[end - 1 : end] == b"\r" else end
        start, pos = pos, end + 1
        if stop == start or (lineno == 1 and data.startswith(b"#version", start)):
            continue
        space = data.find(b" ", start, stop)
        if space <= start or space == stop - 1 or data.find(b" ", space + 1, stop) >= 0:
            line = data[start:stop].decode("utf-8", "replace")
            raise ModelFileError(
                "%s:%d: expected two tokens separated by one space, got %s"
                % (merges_path, lineno, quote(line))
            )
        yield lineno, data[start:space], data[space + 1 : stop]


def _check_merges(vocab, numbered_merges, merges_path, vocab_path):
    """Each merge's two parts and their join must be tokens of the vocab."""
    present = set(vocab.values())
    for lineno, (a, b) in numbered_merges:
        for token in (a, b, a + b):
            if token not in present:
                raise ModelFileError(
                    "%s:%d: merge %s %s uses %s, which is not in %s"
                    % (merges_path, lineno, encode_token(a), encode_token(b), encode_token(token), vocab_path)
                )


def _read_gpt2_numbered(vocab_path, merges_path):
    """(vocab, numbered merges): the merges read first, so that the vocab's tokens are found
    by the decoder they taught, not decoded again character by character."""
    decode = TokenBytes()
    numbered = _read_merge_lines(merges_path, decode)
    return read_gpt2_vocab(vocab_path, decode), numbered


def read_gpt2_unchecked(vocab_path, merges_path):
    """``read_gpt2`` without ``_check_merges``: merges of tokens the vocab lacks are read
    too (``verify`` and ``certify`` report them)."""
    vocab, numbered = _read_gpt2_numbered(vocab_path, merges_path)
    return vocab, [pair for _, pair in numbered]


def read_gpt2(vocab_path, merges_path):
    """(vocab {id: bytes}, merges [(bytes, bytes)]) from GPT-2 format files.

    ModelFileError (a ValueError) names the file and line of anything invalid:
    malformed JSON or lines, a token twice, an id twice, a merge of tokens the
    vocab lacks.
    """
    vocab, numbered = _read_gpt2_numbered(vocab_path, merges_path)
    _check_merges(vocab, numbered, merges_path, vocab_path)
    return vocab, [pair for _, pair in numbered]


def write_model_dir(directory, vocab, merges, special_tokens, extra=None):
    """Write vocab.json, merges.txt and the refbpe.json manifest into ``directory``.

    The three files are replaced together (``atomic_write_many``); a
    directory made here is removed again when writing fails.
    """
    created = not os.path.isdir(directory)
    os.makedirs(directory, exist_ok=True)
    try:
        _write_model_files(directory, vocab, merges, special_tokens, extra)
    except BaseException:
        if created:
            try:
                os.rmdir(directory)
            except OSError:
                pass
        raise


def _check_ids_from_zero(vocab, n):
    """GPT-2's files number the tokens 0..n-1 (the special tokens after): a gap (a rank
    file may skip ids) is a ``FormatError`` naming the first missing id."""
    missing = next((i for i in range(n) if i not in vocab), None)
    if missing is not None:
        raise FormatError(
            "the gpt2 format numbers its tokens 0..%d, and this vocab has no id %d "
            "(ids up to %d); keep it in its own format" % (n - 1, missing, max(vocab))
        )


def _write_model_files(directory, vocab, merges, special_tokens, extra):
    n = len(vocab) - len(special_tokens)
    _check_ids_from_zero(vocab, n)
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
    atomic_write_many(_model_files(directory, vocab, merges, skip, manifest))


def read_manifest_specials(manifest_path, vocab):
    """[(content, id)] of the manifest's special tokens, checked against ``vocab``."""
    pairs, text = _load_json(manifest_path)
    manifest = dict(pairs) if isinstance(pairs, _Pairs) else None
    entries = (manifest or {}).get("special_tokens", [])
    line = _key_line(text, "special_tokens")
    if manifest is None or not isinstance(entries, list):
        raise ModelFileError("%s:%d: expected an object with a list 'special_tokens'" % (manifest_path, line))
    out = []
    for k, entry in enumerate(entries):
        entry = dict(entry) if isinstance(entry, _Pairs) else {}
        content, i = entry.get("content"), entry.get("id")
        line = _key_line(text, "content", k + 1) if "content" in entry else line
        if not isinstance(content, str) or not content or not _is_id(i):
            raise ModelFileError(
                "%s:%d: each special token needs a non-empty 'content' and an integer 'id'"
                % (manifest_path, line)
            )
        if i in vocab and vocab[i] != content.encode("utf-8"):
            raise ModelFileError(
                "%s:%d: special token %r has id %d, which vocab.json gives to %r"
                % (manifest_path, line, content, i, vocab[i])
            )
        out.append((content, i))
    return out


def read_manifest_pattern(path):
    """The split pattern a refbpe manifest names (``"pattern"``, with ``"unicode"``: a pattern key), or
    None (GPT-2's on the latest Unicode table)."""
    if not os.path.isfile(path):
        return None
    pairs, text = _load_json(path)
    manifest = dict(pairs) if isinstance(pairs, _Pairs) else {}
    pattern = manifest.get("pattern")
    if pattern is not None and not isinstance(pattern, str):
        line = _key_line(text, "pattern")
        raise ModelFileError("%s:%d: 'pattern' must be a pattern name (a string)" % (path, line))
    unicode = manifest.get("unicode")
    if unicode is not None:
        if not isinstance(unicode, str):
            line = _key_line(text, "unicode")
            raise ModelFileError("%s:%d: 'unicode' must be a Unicode version (a string)" % (path, line))
        return "%s@%s" % (pattern or "gpt2", unicode)
    return pattern


def write_gpt2_dir_any_ids(directory, vocab, merges, special_tokens, special_ids, extra=None):
    """GPT-2 files for a vocab whose special tokens are not the last ids
    (for example one converted from an HF-trained tokenizer.json, or an
    extended model's); ``extra`` is added to the manifest."""
    os.makedirs(directory, exist_ok=True)
    taken = {vocab[i] for i in vocab if i not in set(special_ids.values())}
    skip = {i for t, i in special_ids.items() if vocab[i] in taken}
    manifest = {
        "format": "refbpe-gpt2",
        "vocab_size": len(vocab),
        "num_merges": len(merges),
        "special_tokens": [{"content": t, "id": special_ids[t]} for t in special_tokens],
    }
    manifest.update(extra or {})
    atomic_write_many(_model_files(directory, vocab, merges, skip, manifest))
