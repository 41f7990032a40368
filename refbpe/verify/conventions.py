"""Trainer conventions that explain a difference, each named with the setting that reproduces it.

Other trainers differ from the CS336 reference by a convention rather than a
bug; each check here proves one by reproducing their model under it:

* ``min_count_stop``: a stop at a minimum count (HF's ``min_frequency``) other
  than the reference's.  Every one of their merges has the maximum reference
  count, and after the last one pairs are left, all below the counts they
  merged: a threshold T with ``left < T <= lowest merged count`` stops there
  (not named when the count left is past a 32-bit int's range: a wrapped
  counter is the likelier cause); or, against a reference trained with a
  minimum count, they merge past it: no threshold (or a lower one) does.
  Cost: one replay of their merges.
* ``newline_translation``: the corpus read in text mode (Python's
  ``open(path)``, universal newlines: ``\\r\\n`` and ``\\r`` read as ``\\n``).
  The reference trained on the translated text gives exactly their merges.
  Cost: one counting and one training of the text, only when it holds ``\\r``.
* ``id_layout``: the same vocab under another id layout: special tokens
  first or last, the 256 bytes in byte order or in GPT-2's byte-level order
  (HF's ``initial_alphabet=ByteLevel.alphabet()``).  Cost: O(vocab) per layout.

Each returns None when its convention does not reproduce them, else a dict
``{"name", "setting", ...}``: the report's ``convention`` (docs/verify.md).
"""

from ..corpus.sequences import count_texts
from ..formats.bytemap import bytes_to_unicode
from ..learn.merge import learn_merges
from .replay import PairReplay

__all__ = [
    "LAYOUTS",
    "id_layout",
    "layout_vocab",
    "min_count_stop",
    "newline_translation",
    "translate_newlines",
]

_TABLE = bytes_to_unicode()
GPT2_BYTE_ORDER = sorted(range(256), key=lambda b: _TABLE[b])

# name -> (special tokens first, the bytes in GPT-2's byte-level order)
LAYOUTS = {
    "refbpe": (False, False),
    "specials-first": (True, False),
    "hf": (True, True),
    "gpt2-bytes": (False, True),
}


def min_count_stop(word_counts, their_merges, wanted, min_count=1, replayed=None):
    """``{"name": "min-count", "min_count": T, ...}`` when a minimum count T other
    than ``min_count`` (the one the reference trained with; 1: none) explains all
    their merges and their stopping there, else None.

    T explains them when every one of their merges has the maximum count and
    at least T, and they stop where T stops a training: at ``wanted`` merges,
    or with the best pair left below T.  The thresholds that do are a range,
    ``min_count`` (its lowest) to ``min_count_up_to``; one that stops early
    with pairs left is not named past a 32-bit int's range (a wrapped counter
    is the likelier cause: refbpe certify shows which).

    ``replayed``: ``(lowest, left)`` from a replay of ``their_merges`` over
    ``word_counts`` that found each at the maximum count (verify's reference
    hypothesis): the least count merged and the best count left after them,
    so that they are not replayed again."""
    if replayed is None:
        replayed = _lowest_and_left(word_counts, their_merges)
        if replayed is None:
            return None
    lowest, left = replayed
    stopped = len(their_merges) < wanted and left > 0  # pairs left: only a threshold stops there
    lo = left + 1 if stopped else 1
    hi = float("inf") if lowest is None else lowest
    if lo > hi or lo <= max(1, min_count) <= hi:
        return None  # no threshold stops there, or the reference's own does
    if stopped and left >= 2**31:
        return None  # a counter that wraps at 2^31 or 2^32 stops there too: refbpe certify shows which
    return {
        "name": "min-count",
        "min_count": lo,
        "min_count_up_to": lowest,
        "left": left,
        "setting": "min_frequency=%d" % (lo if lo > 1 else 0),
        "option": "--min-frequency %d" % (lo if lo > 1 else 0),
    }


def _lowest_and_left(word_counts, their_merges):
    """(the least count of their merges, the best count left after them) over
    ``word_counts``, or None when one of them is not at the maximum count."""
    replay = PairReplay(word_counts)
    lowest = None
    for pair in their_merges:
        c = replay.count(pair)
        if c <= 0 or c != replay.best():
            return None
        lowest = c if lowest is None else min(lowest, c)
        replay.apply(pair)
    return lowest, replay.best()


def translate_newlines(text):
    """``text`` as Python's text mode reads it: ``\\r\\n`` and a lone ``\\r`` become ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def newline_translation(texts, special_tokens, pattern, wanted, their_merges, min_count=1):
    """``{"name": "newline-translation", ...}`` when the reference trained on ``texts``
    read in text mode (with ``min_count``, the reference's) makes exactly ``their_merges``, else None."""
    if texts is None or not any("\r" in t for t in texts):
        return None
    read = [translate_newlines(t) for t in texts]
    counts = count_texts(read, "documents", list(special_tokens), pattern)
    if learn_merges(counts, wanted, min_count=min_count) != list(their_merges):
        return None
    return {
        "name": "newline-translation",
        "setting": "open(path) in text mode (newline=None: \\r\\n and \\r read as \\n); "
        "the reference reads bytes, as open(path, newline='') does",
    }


def layout_vocab(name, merges, special_tokens):
    """{id: bytes} of ``merges`` and ``special_tokens`` in layout ``name``."""
    first, gpt2 = LAYOUTS[name]
    tokens = [t.encode("utf-8") for t in special_tokens]
    order = [bytes([b]) for b in (GPT2_BYTE_ORDER if gpt2 else range(256))]
    seen, made = set(order), []
    for a, b in merges:
        if a + b not in seen:
            seen.add(a + b)
            made.append(a + b)
    body = order + made
    return dict(enumerate(tokens + body if first else body + tokens))


def _layout_setting(name, special_tokens):
    first, gpt2 = LAYOUTS[name]
    n = len(special_tokens)
    where = ("the special tokens at ids 0-%d, then " % (n - 1) if first else "") if n else ""
    alphabet = (
        "the 256 bytes in GPT-2's byte-level order (HF: initial_alphabet=ByteLevel.alphabet())"
        if gpt2
        else "the 256 bytes in byte order"
    )
    last = ", then the special tokens" if n and not first else ""
    return where + alphabet + ", then one id per merge" + last


def id_layout(vocab, merges, special_tokens):
    """``{"name": "id-layout", "layout", "setting"}`` of the known layout that gives
    exactly ``vocab`` ({id: bytes}), else None."""
    for name in LAYOUTS:
        if layout_vocab(name, merges, special_tokens) == vocab:
            return {"name": "id-layout", "layout": name, "setting": _layout_setting(name, special_tokens)}
    return None
