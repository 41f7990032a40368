"""User bytes in an error message: escaped, printable, and cut to one short line.

An error may quote what it read (a count file's field, a model file's line,
a pre-token); that can be binary, control characters or megabytes long.
``quote(value)`` renders it as a Python literal of at most ``limit``
characters (printable ASCII, other bytes as ``\\xNN``, other characters as
``\\uNNNN`` escapes), with the full length when cut; ``one_line(message)``
is the last guard on a whole message: control characters escaped, cut to
``limit`` characters.

    >>> quote(b"ab\\x01" * 30, limit=20)
    "b'ab\\\\x01ab\\\\x01ab'... (90 bytes)"
    >>> one_line("bad\\nline\\x1b[2J")
    'bad\\\\nline\\\\x1b[2J'

Cost: linear in ``limit``, not in the value (only its head is rendered).
"""

__all__ = ["one_line", "quote"]


def quote(value, limit=60):
    """A short printable literal of ``value`` (bytes or str; anything else its repr)."""
    if not isinstance(value, (bytes, bytearray, str)):
        return one_line(repr(value), limit)
    head = value[: limit + 1]
    if isinstance(head, bytearray):
        head = bytes(head)
    text = repr(head) if isinstance(head, bytes) else ascii(head)
    if len(value) <= limit and len(text) <= limit + 3:
        return text
    while len(text) > limit and len(head) > 1:
        head = head[: max(1, min(len(head) - 1, len(head) * limit // len(text)))]
        text = repr(head) if isinstance(head, bytes) else ascii(head)
    unit = "bytes" if isinstance(value, (bytes, bytearray)) else "characters"
    return "%s... (%d %s)" % (text, len(value), unit)


def one_line(message, limit=1000):
    """``message`` with control characters (newlines too) escaped, cut to ``limit`` characters."""
    out = []
    for c in message:
        out.append(c if c.isprintable() else ascii(c)[1:-1])
    text = "".join(out)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text
