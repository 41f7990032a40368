"""Show where the tokens fall in a text: coloured in a terminal, brackets otherwise.

Token k covers the characters from its offset to the next token's
(``Tokenizer.encode_with_offsets``).  Byte-level tokens may split a
character (an emoji into two tokens, say): tokens that share a character
are shown as one unit, and their ids are joined by ``+``.

Colour: each unit gets the next of a few background colours (ANSI SGR), so
neighbours differ; a newline inside a unit is drawn as ``↵`` and then
breaks the line, so the layout of the text is kept.  Plain: each unit in
``[...]``, with ``\\n``, ``\\t``, ``\\r`` written as escapes.  With ids, a
line of ids follows (in the same colours): one per unit.

    >>> render_plain([("Hello", "15496"), (" world", "995")], with_ids=True)
    '[Hello][ world]\\n15496 995\\n'

Cost: O(characters + tokens).
"""

__all__ = ["units", "render", "render_plain"]

_BACKGROUNDS = ["48;5;153", "48;5;223", "48;5;157", "48;5;225", "48;5;229"]
_RESET = "\x1b[0m"
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def units(tokenizer, text):
    """``[(characters, ids text)]``: the display units of ``text`` in order."""
    ids, offsets = tokenizer.encode_with_offsets(text)
    out = []
    k = 0
    while k < len(ids):
        j = k + 1
        while j < len(ids) and offsets[j] == offsets[k]:
            j += 1  # tokens j.. start inside the same character: one unit
        # A unit must also take tokens that start inside its last character.
        end = offsets[j] if j < len(ids) else len(text)
        while j < len(ids) and end == offsets[j] and _starts_inside(tokenizer, ids[j]):
            j += 1
            end = offsets[j] if j < len(ids) else len(text)
        out.append((text[offsets[k] : end], "+".join(str(i) for i in ids[k:j])))
        k = j
    return out


def _starts_inside(tokenizer, i):
    token = tokenizer.vocab[i]
    return bool(token) and 0x80 <= token[0] < 0xC0


def render_plain(parts, with_ids=False):
    text = "".join("[%s]" % "".join(_ESCAPES.get(c, c) for c in chars) for chars, _ in parts) + "\n"
    if with_ids:
        text += " ".join(ids for _, ids in parts) + "\n"
    return text


def render_ansi(parts, with_ids=False):
    pieces = []
    for k, (chars, _) in enumerate(parts):
        colour = "\x1b[%sm\x1b[30m" % _BACKGROUNDS[k % len(_BACKGROUNDS)]
        lines = chars.split("\n")
        drawn = ("↵" + _RESET + "\n" + colour).join(lines)
        pieces.append(colour + drawn + _RESET)
    text = "".join(pieces) + "\n"
    if with_ids:
        text += (
            " ".join(
                "\x1b[%sm\x1b[30m%s%s" % (_BACKGROUNDS[k % len(_BACKGROUNDS)], ids, _RESET)
                for k, (_, ids) in enumerate(parts)
            )
            + "\n"
        )
    return text


def render(tokenizer, text, colour, with_ids=False):
    """``text`` with its token boundaries marked (``colour``: ANSI, else brackets)."""
    parts = units(tokenizer, text)
    return render_ansi(parts, with_ids) if colour else render_plain(parts, with_ids)
