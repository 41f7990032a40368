"""The GPT-2 byte-to-unicode table, which GPT-2 files and HF ``tokenizer.json`` use.

The printable bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF map to the code point
of the same value and the other 68 bytes, in increasing order, to U+0100,
U+0101, ...; so no mapped token contains a space and a ``left right`` merge
line splits unambiguously::

    >>> encode_token(b" the")
    'Ġthe'
    >>> decode_token("Ġthe")
    b' the'

The mapping is byte by byte, so the text of a join is the join of the texts:
``MappedText`` (writing) and ``TokenBytes`` (reading) map a merge's result by
joining the already mapped parts, with no per-byte Python work: a model of
megabyte-long tokens (a run of spaces: every byte remapped) is written and read
at the speed of copying (perf/writers.py).  Tokens that no merge makes (single
bytes, special tokens, a vocab beyond the merges) are mapped directly.
"""

import platform
import re

__all__ = ["MappedText", "TokenBytes", "bytes_to_unicode", "encode_token", "decode_token"]

_CPYTHON = platform.python_implementation() == "CPython"


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

# 188 bytes map to the character of the same value, so a token without the
# other 68 is its own Latin-1 decoding, and back.  On a model of long tokens
# (perf/adversarial.py's one-letter runs: 172 MB of token text at 20 MB) this
# makes writing and reading it seconds instead of minutes.
_REMAPPED_BYTES = re.compile(b"[\x00-\x20\x7f-\xa0\xad]")
_NOT_LATIN1_ITSELF = re.compile("[^\x21-\x7e\xa1-\xac\xae-\xff]")
_ENCODE = dict(_BYTE_TO_CHAR)
_NOT_MAPPED_ASCII = re.compile(b"[\x00-\x20\x7f]")


def encode_token(token):
    """bytes -> the GPT-2 printable string."""
    if _REMAPPED_BYTES.search(token) is None:
        return token.decode("latin-1")
    if _CPYTHON:  # str.translate runs in C there; under PyPy the generator is faster
        return token.decode("latin-1").translate(_ENCODE)
    return "".join([_BYTE_TO_CHAR[b] for b in token])


def decode_token(text):
    """The GPT-2 printable string -> bytes (ValueError for unmapped characters)."""
    if _NOT_LATIN1_ITSELF.search(text) is None:
        return text.encode("latin-1")
    try:
        return bytes([_CHAR_TO_BYTE[c] for c in text])
    except KeyError as e:
        raise ValueError("%r is not a GPT-2 byte-mapped token (character %r)" % (text, e.args[0]))


_UTF8_OF_BYTE = [_BYTE_TO_CHAR[b].encode("utf-8") for b in range(256)]


def _joined(token, a, b):
    """``token`` when it is ``a + b`` (compared without joining), else ``a + b``."""
    if token is not None and len(token) == len(a) + len(b) and token.startswith(a) and token.endswith(b):
        return token
    return a + b


class MappedText(object):
    """token bytes -> its GPT-2 text as UTF-8 bytes, memoised along ``merges``.

    >>> text = MappedText([(b" ", b" "), (b"  ", b"  ")])
    >>> text(b"    ").decode("utf-8")
    'ĠĠĠĠ'
    >>> text.json(b'a"b')
    b'a\\\\"b'

    ``vocab`` ({id: bytes}, optional): the model's tokens; where merge k's result is
    ``vocab[256 + k]`` (refbpe's id layout) that object is the memo's key instead of a
    fresh join, so writing the vocab finds each token by identity: no second copy of the
    token bytes and no second hashing of them (a 3 MB run of spaces, 122 MB of GPT-2
    files: written in 0.25 s of CPU instead of 0.60 under PyPy, perf/writers.py --only ws).

    Memory: the texts of every merge's result (about the model's size).
    """

    def __init__(self, merges=(), vocab=None):
        # token -> (text, JSON escapes needed (a '"' or '\\' byte: they map to themselves),
        #           text is the token itself (printable ASCII only): a join then costs no copy)
        known = {}
        for b in range(256):
            token = bytes([b])
            itself = _UTF8_OF_BYTE[b] == token
            known[token] = (token if itself else _UTF8_OF_BYTE[b], b in b'"\\', itself)
        direct = self._direct
        made = vocab.get if vocab is not None else {}.get
        for k, (a, b) in enumerate(merges):
            ta = known.get(a) or direct(a)
            tb = known.get(b) or direct(b)
            token = _joined(made(256 + k), a, b)
            if ta[2] and tb[2]:
                known[token] = (token, ta[1] or tb[1], True)
            else:
                known[token] = (ta[0] + tb[0], ta[1] or tb[1], False)
        self._known = known

    @staticmethod
    def _direct(token):
        itself = token.isascii() and _REMAPPED_BYTES.search(token) is None
        text = token if itself else encode_token(token).encode("utf-8")
        return text, b'"' in token or b"\\" in token, itself

    def __call__(self, token):
        return (self._known.get(token) or self._direct(token))[0]

    def json(self, token):
        """The text as the inside of a JSON string (as ``json.dumps(ensure_ascii=False)``:
        the mapping has no control character, so only ``"`` and ``\\`` are escaped)."""
        text, escapes, _ = self._known.get(token) or self._direct(token)
        if escapes:
            text = text.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
        return text


class TokenBytes(object):
    """GPT-2 text (UTF-8 bytes) -> token bytes, memoised: ``join(a, b)`` learns the
    bytes of the text ``a + b`` from those of its parts (call it along the merges,
    in order).  ValueError for a character outside the mapping (UnicodeDecodeError
    for text that is not UTF-8).

    >>> dec = TokenBytes()
    >>> dec.join("Ġ".encode(), "Ġ".encode())
    (b' ', b' ')
    >>> dec("ĠĠ".encode())
    b'  '
    """

    def __init__(self):
        self._known = {}  # text -> (token, the token is the text itself: printable ASCII)

    def __call__(self, text):
        return self._entry(text)[0]

    def _entry(self, text):
        entry = self._known.get(text)
        if entry is None:
            if text.isascii() and _NOT_MAPPED_ASCII.search(text) is None:
                entry = text, True
            else:
                entry = decode_token(text.decode("utf-8")), False
            # Kept: a merge list names its single bytes again and again, a regex search
            # each.  The first read of a 32,000-merge model under PyPy, 109-120 ms of CPU
            # before, 72-83 ms kept (perf/writers.py --only english --formats gpt2, rd 1st).
            self._known[text] = entry
        return entry

    def join(self, a, b):
        """(bytes of ``a``, bytes of ``b``), remembering ``a + b``."""
        ea, eb = self._entry(a), self._entry(b)
        text = a + b
        self._known[text] = (text, True) if ea[1] and eb[1] else (ea[0] + eb[0], False)
        return ea[0], eb[0]
