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

__all__ = ["bytes_to_unicode", "encode_token", "decode_token"]


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


def encode_token(token):
    """bytes -> the GPT-2 printable string."""
    return "".join(_BYTE_TO_CHAR[b] for b in token)


def decode_token(text):
    """The GPT-2 printable string -> bytes (ValueError for unmapped characters)."""
    try:
        return bytes(_CHAR_TO_BYTE[c] for c in text)
    except KeyError as e:
        raise ValueError("%r is not a GPT-2 byte-mapped token (character %r)" % (text, e.args[0]))
