"""The GPT-2 byte-to-unicode table, which GPT-2 files and HF ``tokenizer.json`` use.

The printable bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF map to the code point
of the same value and the other 68 bytes, in increasing order, to U+0100,
U+0101, ...; so no mapped token contains a space and a ``left right`` merge
line splits unambiguously::

    >>> encode_token(b" the")
    'Ġthe'
    >>> decode_token("Ġthe")
    b' the'
"""

import platform
import re

__all__ = ["bytes_to_unicode", "encode_token", "decode_token"]

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
