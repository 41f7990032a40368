"""Comparing another encoder's token ids with the reference: ``verify_encoding``.

The first differing position is located in its pre-token (with the split
pattern's alternative that produced it, ``alternatives``), and the kind of
difference is named: their ids end early, an id outside the vocab, a token
that does not spell the text, one that crosses the pre-token's end
(pre-tokenization differs) or one inside it (merges applied differently).

When the ids differ and encoding the special tokens' text as ordinary text
(tiktoken's ``encode_ordinary``) gives exactly their ids, that convention is
named (cause ``special-tokens-as-text``, with the setting).  Otherwise the
same tokenizer with its pattern read by another
Unicode version is tried, newest first, for each version that classes a code
point of the text differently: the one that gives exactly their ids is named
(cause ``unicode-version``, with the code points).  Cost: one encoding of
the text per such version (and building the tokenizer again).

``allowed_special`` is tiktoken's: None (the default) matches every special
token of the model, a list only those (``specials.allowed_specials``), and the
text of the others is ordinary text on both sides.  A difference where one
side matched a special token and the other did not is named
``special_token``, with the setting that would match theirs.
"""

from ..encode.tokenizer import Tokenizer
from ..pretokenize.alternatives import alternative
from ..pretokenize.patterns import get_pattern
from ..pretokenize.unicode_tables import UNICODE_VERSIONS, changed_code_points
from ..specials import special_pattern, split_specials
from .display import show
from .readings import versioned

__all__ = ["encode_allowing", "verify_encoding"]


def encode_allowing(tok, text, allowed_special=None):
    """``tok``'s ids of ``text`` with only ``allowed_special`` matched (None: every special token)."""
    if allowed_special is None:
        return tok.encode(text)
    return tok.encode(text, allowed_special=set(allowed_special), disallowed_special=())


def verify_encoding(model, text, their_ids, pattern=None, tokenizer=None, rebuild=None, allowed_special=None):
    """Report comparing ``their_ids`` with refbpe's encoding of ``text`` under ``model``
    (split ``pattern``, GPT-2's by default), or under ``tokenizer`` when given
    (``Tokenizer.from_tiktoken``: tiktoken's encodings).  ``rebuild(version)``
    makes the tokenizer again reading Unicode ``version`` (default: from ``model``).
    ``allowed_special``: the special tokens matched (None: all of the model's)."""
    tok = tokenizer or Tokenizer(model.vocab, model.merges, model.special_tokens, pattern=pattern)
    split = get_pattern(tok.pattern, tok.unicode)
    pretokenize = split.pretokenize
    matched = tok.special_tokens if allowed_special is None else list(allowed_special)
    ours = encode_allowing(tok, text, allowed_special)
    n = min(len(ours), len(their_ids))
    pos = next((i for i in range(n) if ours[i] != their_ids[i]), None)
    if pos is None and len(ours) != len(their_ids):
        pos = n
    report = {
        "identical": pos is None,
        "first_divergence": pos,
        "ours_length": len(ours),
        "theirs_length": len(their_ids),
        "pattern": tok.pattern,
        "unicode": tok.unicode,
    }
    if pos is None:
        report["explanation"] = "token ids identical (%d ids)" % len(ours)
        return report

    def tok_json(i):
        if i is None:
            return None
        b = tok.vocab.get(i)
        return {"id": i, "text": show(b) if b is not None else None}

    # Walk the pre-tokens to find the one holding position ``pos``.
    offset = 0
    char_pos = 0
    found = None
    for segment, is_special in split_specials(text, special_pattern(matched)):
        seg_bytes = segment.encode("utf-8", "surrogatepass")
        pieces = (
            [segment] if is_special else [p.decode("utf-8", "surrogatepass") for p in pretokenize(seg_bytes)]
        )
        seg_pos = 0
        for piece in pieces:
            ids = encode_allowing(tok, piece, allowed_special)  # a special token alone: its id
            width = len(piece.encode("utf-8", "surrogatepass"))
            if offset + len(ids) > pos or (pos == len(ours) and offset + len(ids) == pos):
                alt = None if is_special else alternative(split, seg_bytes, seg_pos, seg_pos + width)
                found = (piece, is_special, ids, offset, char_pos, alt)
                break
            offset += len(ids)
            char_pos += len(piece)
            seg_pos += width
        if found:
            break
    div = {
        "position": pos,
        "ours": tok_json(ours[pos] if pos < len(ours) else None),
        "theirs": tok_json(their_ids[pos] if pos < len(their_ids) else None),
    }
    lines = [
        "first difference at token position %d: theirs %s, ours %s"
        % (
            pos,
            "%d %s" % (their_ids[pos], div["theirs"]["text"])
            if pos < len(their_ids)
            else "(end: theirs is shorter)",
            "%d %s" % (ours[pos], div["ours"]["text"]) if pos < len(ours) else "(end: ours is shorter)",
        )
    ]
    if found:
        piece, is_special, ids, start, cpos, alt = found
        line_no = text.count("\n", 0, cpos) + 1
        div["pretoken"] = {
            "text": repr(piece),
            "special": is_special,
            "char_offset": cpos,
            "line": line_no,
            "ours_ids": ids,
            "theirs_ids": list(their_ids[start : start + max(len(ids), pos - start + 1)]),
            "first_id_position": start,
            "alternative": None if alt is None else {"index": alt[0], "regex": alt[1]},
        }
        div["context"] = text[max(0, cpos - 40) : cpos + len(piece) + 40]
        lines.append(
            "in pre-token %r (%s) at character %d, line %d: ours %s, theirs %s"
            % (
                piece,
                "special token"
                if is_special
                else "a piece of the split pattern"
                if alt is None
                else "%s alternative %d, %s" % (tok.pattern, alt[0] + 1, alt[1]),
                cpos,
                line_no,
                ids,
                div["pretoken"]["theirs_ids"],
            )
        )
        their_tok = tok.vocab.get(their_ids[pos]) if pos < len(their_ids) else None
        piece_bytes = piece.encode("utf-8", "surrogatepass")
        text_bytes = text.encode("utf-8", "surrogatepass")
        at = len(b"".join(tok.vocab[i] for i in ours[:pos]))  # the ids before agree
        inside = at - len(b"".join(tok.vocab[i] for i in ours[start:pos]))  # start of the pre-token
        div["byte_offset"] = at
        if pos >= len(their_ids):
            div["kind"] = "length"
            lines.append("their ids end here; the text goes on")
        elif their_tok is None:
            div["kind"] = "unknown_id"
            lines.append("their id %d is not in the vocab" % their_ids[pos])
        elif text_bytes[at : at + len(their_tok)] != their_tok:
            div["kind"] = "text_mismatch"
            lines.append(
                "their token does not spell the text at byte %d (%s there): a token dropped or added, "
                "or their ids use another vocab/id layout" % (at, show(text_bytes[at : at + len(their_tok)]))
            )
        elif _special_handling(tok, is_special, piece, their_ids[pos], matched, allowed_special, lines):
            div["kind"] = "special_token"
        elif at + len(their_tok) > inside + len(piece_bytes):
            div["kind"] = "pretokenization"
            lines.append(
                "their token crosses the end of this pre-token: the pre-tokenization "
                "(or special-token matching) differs"
            )
        else:
            div["kind"] = "merge_application"
            lines.append(
                "their token lies inside the same pre-token: the merges are applied differently "
                "(merge order or rank rule)"
            )
    report["divergence"] = div
    if rebuild is None and model is not None:

        def rebuild(version):
            return Tokenizer(model.vocab, model.merges, model.special_tokens, pattern=split, unicode=version)

    ordinary = _specials_as_text(tok, text, their_ids) if allowed_special is None else None
    if ordinary is not None:
        report["cause"], report["convention"] = "special-tokens-as-text", ordinary
        report["setting"] = ordinary["setting"]
        if div.get("kind") not in (None, "special_token"):
            lines.pop()  # the kind's guess (merges applied differently, ...) is not the cause
        div["kind"] = "special_tokens_as_text"
        lines.append(
            "special-tokens-as-text: encoding the special token text %s as ordinary text "
            "gives exactly their ids (%s)"
            % (", ".join(repr(t) for t in ordinary["special_tokens"]), ordinary["setting"])
        )
        report["explanation"] = "\n".join(lines)
        return report
    found = None
    if rebuild is not None:
        found = _other_version(tok, split, text, their_ids, rebuild, allowed_special)
    if found is not None:
        report["cause"], report["unicode"], report["code_points"] = "unicode-version", found[0], found[1]
        lines.append(
            "unicode-version: the %s pattern reading Unicode %s instead of %s gives exactly their ids "
            "(it classes %s otherwise)" % (tok.pattern, found[0], tok.unicode, " ".join(found[1][:20]))
        )
    report["explanation"] = "\n".join(lines)
    return report


def _special_handling(tok, is_special, piece, their_id, matched, allowed_special, lines):
    """True (with the lines saying so) when one side matched a special token here and the other
    did not: ours at a special token and theirs not its id, or theirs a special token's id."""
    specials = {encode_allowing(tok, t, [t])[0]: t for t in tok.special_tokens}
    setting = "--special-tokens %s" % ("all" if allowed_special is None else " ".join(matched) or "none")
    if is_special and specials.get(their_id) != piece:
        lines.append(
            "special-token handling: ours matches %r as a special token (%s); theirs encodes it as "
            "text: if their encoder allows fewer special tokens, say which with --special-tokens "
            "(none, or the tokens it allows)" % (piece, setting)
        )
        return True
    if their_id in specials and not is_special:
        lines.append(
            "special-token handling: theirs emits the special token %r (id %d) where ours reads text "
            "(%s): if their encoder allows it, give --special-tokens all or a list with it"
            % (specials[their_id], their_id, setting)
        )
        return True
    return False


def _specials_as_text(tok, text, their_ids):
    """The convention ``{"name", "setting", "special_tokens"}`` when encoding the special
    tokens' text in ``text`` as ordinary text (tiktoken's ``encode_ordinary``) gives
    ``their_ids``, else None."""
    present = [t for t in tok.special_tokens if t in text]
    if not present or tok.encode_ordinary(text) != list(their_ids):
        return None
    return {
        "name": "special-tokens-as-text",
        "special_tokens": present,
        "setting": "special tokens matched as text: tiktoken's encode_ordinary, or encode(text, "
        "allowed_special=set(), disallowed_special=()); the reference encodes each as its id "
        "(allowed_special='all'; --special-tokens none to match theirs)",
    }


def _other_version(tok, split, text, their_ids, rebuild, allowed_special=None):
    """(version, code points) of the newest other Unicode version under which
    ``rebuild(version)`` encodes ``text`` to ``their_ids``, or None."""
    if not versioned(split):
        return None
    present = set(map(ord, set(text)))
    for version in reversed(UNICODE_VERSIONS):
        if version == split.unicode:
            continue
        changed = sorted(present.intersection(changed_code_points(version, split.unicode)))
        if changed and encode_allowing(rebuild(version), text, allowed_special) == list(their_ids):
            return version, ["U+%04X" % cp for cp in changed]
    return None
