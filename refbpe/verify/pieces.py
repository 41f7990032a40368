"""Comparing another pre-tokenizer's pieces with the pattern's: ``compare_split``.

Their pieces and the reference's (``corpus.split.iter_pieces``) are read side
by side, streaming; at the first piece that differs the report gives its
place (piece number and byte offset), both pieces, the alternative of the
pattern that produced the reference's piece (``pretokenize.alternatives``)
and the code point where the two part, with its class in the pinned table.
Cost: the scanner's over the text up to the difference, plus the reading of
their file; memory: one chunk.

``name_other_version``: when they differ, the same pattern read by another
Unicode version that gives exactly their pieces (cause ``unicode-version``),
tried only for the versions that class a code point of the first differing
pieces differently: one more comparison each.

    >>> compare_split([(0, b"a b")], [b"a", b" ", b"b"])["difference"]["piece"]
    1
"""

import unicodedata

from ..pretokenize.alternatives import alternative
from ..pretokenize.gpt2 import CLASS_OF, LETTER, NUMBER, SPACE
from ..pretokenize.patterns import get_pattern
from ..pretokenize.unicode_tables import UNICODE_VERSIONS, changed_code_points
from .display import show
from .readings import versioned

__all__ = ["compare_split", "render_split_comparison", "name_other_version"]

_CLASS_NAMES = {LETTER: "letter (\\p{L})", NUMBER: "number (\\p{N})", SPACE: "whitespace (\\s)"}


def compare_split(segments, theirs, pattern=None):
    """The report (a dict) of ``theirs`` (an iterable of piece bytes) against the
    pattern's pieces of ``segments``: ``(offset, text bytes)`` in order, texts
    between special tokens, each cut only between pieces."""
    p = get_pattern(pattern)
    theirs = iter(theirs)
    n, end = 0, 0
    for offset, data in segments:
        start = 0
        for stop in p.piece_ends(data):
            ours = data[start:stop]
            other = next(theirs, None)
            if other != ours:
                return {
                    "identical": False,
                    "pieces": n,
                    "difference": _difference(p.name, data, start, ours, other, n, offset + start),
                }
            n += 1
            start = stop
        end = offset + len(data)
    extra = next(theirs, None)
    if extra is not None:
        return {
            "identical": False,
            "pieces": n,
            "difference": {"piece": n, "offset": end, "ours": None, "theirs": _text(extra)},
        }
    return {"identical": True, "pieces": n, "difference": None}


def name_other_version(report, segments, theirs, pattern=None):
    """``report`` (of ``compare_split``, different) concluded: the newest other Unicode
    version whose classes give exactly their pieces, with the code points of the
    first differing pieces the two versions class differently, or unchanged.

    ``segments()`` and ``theirs()`` make the inputs of ``compare_split`` again."""
    p = get_pattern(pattern)
    d = report["difference"]
    if report["identical"] or not versioned(p):
        return report
    near = set(map(ord, (d["ours"] or "") + (d["theirs"] or "")))
    for version in reversed(UNICODE_VERSIONS):
        if version == p.unicode:
            continue
        changed = sorted(near.intersection(changed_code_points(version, p.unicode)))
        if changed and compare_split(segments(), theirs(), get_pattern(p, unicode=version))["identical"]:
            out = dict(report, cause="unicode-version", unicode=version)
            out["code_points"] = ["U+%04X" % cp for cp in changed]
            return out
    return report


def _difference(name, data, start, ours, other, n, offset):
    alt = alternative(name, data, start, start + len(ours))
    common = 0
    if other is not None:
        while common < min(len(ours), len(other)) and ours[common] == other[common]:
            common += 1
    at = start + common
    part = {
        "piece": n,
        "offset": offset,
        "ours": _text(ours),
        "theirs": None if other is None else _text(other),
    }
    part["alternative"] = None if alt is None else {"index": alt[0], "regex": alt[1]}
    if at < len(data):
        cp = _code_point_at(data, at)
        part["code_point"] = {
            "offset": offset + common,
            "code_point": "U+%04X" % cp,
            "name": unicodedata.name(chr(cp), ""),
            "class": _CLASS_NAMES.get(CLASS_OF[cp], "other ([^\\s\\p{L}\\p{N}])"),
        }
    return part


def _code_point_at(data, i):
    while i > 0 and 0x80 <= data[i] < 0xC0:  # back to the start of the character
        i -= 1
    end = i + 1
    while end < len(data) and 0x80 <= data[end] < 0xC0:
        end += 1
    return ord(data[i:end].decode("utf-8", "surrogatepass"))


def _text(piece):
    return piece.decode("utf-8", "surrogatepass") if isinstance(piece, bytes) else piece


def render_split_comparison(report):
    """The report as text."""
    if report["identical"]:
        return "identical: %s pieces" % format(report["pieces"], ",")
    d = report["difference"]
    if d["ours"] is None:
        return "DIFFERENT: theirs has more pieces than the %s of the text, from %r" % (
            format(report["pieces"], ","),
            d["theirs"],
        )
    lines = [
        "DIFFERENT at piece %s (byte %s): the pattern gives %s, theirs %s"
        % (
            format(d["piece"], ","),
            format(d["offset"], ","),
            show(d["ours"].encode("utf-8", "surrogatepass")),
            "nothing (their pieces end)"
            if d["theirs"] is None
            else show(d["theirs"].encode("utf-8", "surrogatepass")),
        )
    ]
    if d.get("alternative"):
        lines.append(
            "  the pattern's piece comes from alternative %d: %s"
            % (d["alternative"]["index"] + 1, d["alternative"]["regex"])
        )
    if d.get("code_point"):
        c = d["code_point"]
        lines.append(
            "  they part at byte %s: %s %s, %s"
            % (format(c["offset"], ","), c["code_point"], c["name"], c["class"])
        )
    if report.get("cause") == "unicode-version":
        lines.append(
            "  unicode-version: the pattern reading Unicode %s gives exactly their pieces (it classes %s "
            "otherwise)" % (report["unicode"], " ".join(report["code_points"]))
        )
    return "\n".join(lines)
