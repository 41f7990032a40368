"""A zoo of trainers with planted bugs, for ``refbpe verify``'s explanations.

Each is the naive oracle (``refbpe.naive``: recount every pair, take the
best, merge it everywhere) with one thing changed, a few lines each: how the
text is read (``READERS``), how pairs are counted (``COUNTERS``), which tied
pair wins (``CHOOSERS``) or how a merge is applied (``MERGERS``).  ``ZOO``
names each bug with the cause, tie rule and variant verify should report.
"""

from collections import Counter

from refbpe.naive import merge_word
from refbpe.pretokenize.patterns import get_pattern
from refbpe.specials import special_pattern, split_specials

__all__ = [
    "ZOO",
    "ZOO_TEXT",
    "EOT",
    "CHUNK",
    "GPT2_BYTE_ORDER",
    "planted_train",
    "their_layout",
    "layout_vocab",
    "reproduce",
]

pretokenize = get_pattern("gpt2").pretokenize

EOT = "<|endoftext|>"

CHUNK = 64  # the chunk-boundary bug reads this many characters at a time

# Byte ids in the GPT-2 byte-level order (printable bytes first), as HF vocabularies have them.
GPT2_BYTE_ORDER = (
    list(range(33, 127))
    + list(range(161, 173))
    + list(range(174, 256))
    + [b for b in range(256) if not (33 <= b < 127 or 161 <= b < 173 or 174 <= b < 256)]
)


# -- reading: text -> {pre-token bytes: count}, in first-appearance order -----------


def _count(units, pattern):
    counts = Counter()
    for unit in units:
        for segment, is_special in split_specials(unit, pattern):
            if not is_special:
                counts.update(pretokenize(segment.encode("utf-8")))
    return counts


def _split_newlines(unit):
    out, start = [], 0
    while start < len(unit):
        end = unit.find("\n", start)
        end = len(unit) if end < 0 else end + 1
        out.append(unit[start:end])
        start = end
    return out


def _by_newline(text):
    return _split_newlines(text)


READERS = {
    "reference": lambda text, sp: _count([text], special_pattern(sp)),
    "specials-as-text": lambda text, sp: _count([text], None),
    "lines": lambda text, sp: _count(_by_newline(text), special_pattern(sp)),
    "lines+specials-as-text": lambda text, sp: _count(_by_newline(text), None),
}


def _read_chunks(text, specials, chunk):
    return _count([text[i : i + chunk] for i in range(0, len(text), chunk)], special_pattern(specials))


# -- counting: words -> pair counts --------------------------------------------------


def _count_all(words):
    pairs = Counter()
    for word, n in words.items():
        for p in zip(word, word[1:]):
            pairs[p] += n
    return pairs


def _count_once(words):
    pairs = Counter()
    for word, n in words.items():
        for p in set(zip(word, word[1:])):
            pairs[p] += n
    return pairs


COUNTERS = {"reference": _count_all, "once-per-pretoken": _count_once}


# -- choosing among the tied maximum --------------------------------------------------


def _ids(layout):
    def key(p):
        return (layout[p[0]], layout[p[1]])

    return key


CHOOSERS = {
    "greatest-bytes": lambda tied, layout: max(tied),
    "smallest-bytes": lambda tied, layout: min(tied),
    "greatest-concat": lambda tied, layout: max(tied, key=lambda p: (p[0] + p[1], p[0], p[1])),
    "smallest-concat": lambda tied, layout: min(tied, key=lambda p: (p[0] + p[1], p[0], p[1])),
    "smallest-ids": lambda tied, layout: min(tied, key=_ids(layout)),
    "greatest-ids": lambda tied, layout: max(tied, key=_ids(layout)),
    "first-counted": lambda tied, layout: tied[0],  # tied keeps first-counted order
}


# -- merging ---------------------------------------------------------------------------


def _merge_right_to_left(word, pair, merged):
    return tuple(reversed(merge_word(tuple(reversed(word)), (pair[1], pair[0]), merged)))


def _merge_overlapping(word, pair, merged):
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(merged)
            overlap = i + 2 < len(word) and (word[i + 1], word[i + 2]) == pair
            i += 1 if overlap else 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


MERGERS = {
    "reference": merge_word,
    "right-to-left": _merge_right_to_left,
    "overlapping-merges": _merge_overlapping,
}


def _adjacent(word, z):
    return sum(1 for x, y in zip(word, word[1:]) if x == y == z)


def planted_train(
    text,
    vocab_size,
    specials,
    reader="reference",
    counter="reference",
    rule="greatest-bytes",
    merger="reference",
    double_count=False,
    layout="refbpe",
    chunk=CHUNK,
):
    """Merges of the naive trainer with the planted changes.

    ``double_count``: an incremental update's bug, kept as a persistent
    correction: when merging (a, b) -> z makes z adjacent to z, (z, z) is
    counted once more and (b, a) once less than it occurs, until merged.
    ``layout``: the ids the id tie rules use (``their_layout``).
    """
    words = Counter()
    read = (
        READERS[reader](text, specials)
        if reader != "chunk-boundaries"
        else _read_chunks(text, specials, chunk)
    )
    for piece, n in read.items():
        words[tuple(bytes([b]) for b in piece)] += n
    merges, bogus = [], Counter()
    ids = their_layout(layout, [])
    for _ in range(vocab_size - 256 - len(specials)):
        pairs = COUNTERS[counter](words)
        for p, c in bogus.items():
            pairs[p] += c
        pairs = Counter({p: c for p, c in pairs.items() if c > 0})
        if not pairs:
            break
        top = max(pairs.values())
        tied = [p for p in pairs if pairs[p] == top]
        best = CHOOSERS[rule](tied, ids)
        merges.append(best)
        merged = best[0] + best[1]
        new = Counter()
        for word, n in words.items():
            out = MERGERS[merger](word, best, merged)
            if double_count:
                extra = _adjacent(out, merged) - _adjacent(word, merged)
                if extra > 0:
                    bogus[(merged, merged)] += n * extra
                    if best[0] != best[1]:
                        bogus[(best[1], best[0])] -= n * extra
            new[out] += n
        bogus.pop(best, None)
        words = new
        ids = their_layout(layout, merges)
    return merges


def their_layout(layout, merges, specials=()):
    """{token bytes: id}: ``refbpe`` (bytes 0-255, merge k = 256 + k) or
    ``gpt2`` (bytes in GPT-2's byte-level order, then the merges)."""
    order = list(range(256)) if layout == "refbpe" else GPT2_BYTE_ORDER
    ids = {bytes([b]): i for i, b in enumerate(order)}
    for a, b in merges:
        ids.setdefault(a + b, len(ids))
    return ids


def layout_vocab(layout, merges, specials):
    """{id: bytes} in ``layout``, special tokens last."""
    vocab = {i: bytes([b]) for i, b in enumerate(list(range(256)) if layout == "refbpe" else GPT2_BYTE_ORDER)}
    for a, b in merges:
        vocab[len(vocab)] = a + b
    for t in specials:
        vocab[len(vocab)] = t.encode("utf-8")
    return vocab


# name -> (planted_train options, their id layout, expected cause, tie_rule, variant)
ZOO = {
    "smallest-bytes": (dict(rule="smallest-bytes"), "refbpe", "tie-rule", "smallest-bytes", None),
    "greatest-concat": (dict(rule="greatest-concat"), "refbpe", "tie-rule", "greatest-concat", None),
    "smallest-concat": (dict(rule="smallest-concat"), "refbpe", "tie-rule", "smallest-concat", None),
    "smallest-ids": (dict(rule="smallest-ids", layout="gpt2"), "gpt2", "tie-rule", "smallest-ids", None),
    "greatest-ids": (dict(rule="greatest-ids", layout="gpt2"), "gpt2", "tie-rule", "greatest-ids", None),
    "smallest-ids-refbpe-layout": (
        dict(rule="smallest-ids"),
        "gpt2",
        "tie-rule",
        "smallest-ids-refbpe-layout",
        None,
    ),
    "greatest-ids-refbpe-layout": (
        dict(rule="greatest-ids"),
        "gpt2",
        "tie-rule",
        "greatest-ids-refbpe-layout",
        None,
    ),
    "first-counted": (dict(rule="first-counted"), "refbpe", "tie-rule", "first-counted", None),
    "specials-as-text": (
        dict(reader="specials-as-text"),
        "refbpe",
        "pre-tokenization",
        None,
        "specials-as-text",
    ),
    "lines": (dict(reader="lines"), "refbpe", "pre-tokenization", None, "lines"),
    "lines+specials-as-text": (
        dict(reader="lines+specials-as-text"),
        "refbpe",
        "pre-tokenization",
        None,
        "lines+specials-as-text",
    ),
    "chunk-boundaries": (
        dict(reader="chunk-boundaries"),
        "refbpe",
        "pre-tokenization",
        None,
        "chunk-boundaries",
    ),
    "once-per-pretoken": (dict(counter="once-per-pretoken"), "refbpe", "counts", None, "once-per-pretoken"),
    "double-counted-equal-pairs": (
        dict(double_count=True),
        "refbpe",
        "counts",
        None,
        "double-counted-equal-pairs",
    ),
    "right-to-left": (dict(merger="right-to-left"), "refbpe", "merge-application", None, "right-to-left"),
    "overlapping-merges": (
        dict(merger="overlapping-merges"),
        "refbpe",
        "merge-application",
        None,
        "overlapping-merges",
    ),
}


ZOO_TEXT = (
    "low lower lowest newer wider new news low low the cat sat on the mat.\n"
    + "a b ab ba abab baba aa bb cc dd cd dc\n" * 3
    + EOT
    + "\nthe end of the story, and the end of the text.\n"
    + "\u0437\u0438\u043c\u0430 \u043c\u0438\u0440 \u043c\u0438\u0440 \u4e2d\u6587 \u4e2d\u6587\n" * 2
    + "banana bandana hahaha lololol aaaa aaaaa ====  \n\n  the  end\n\n"
    + EOT
    + "eot text"
    + EOT
    + " x\n"
    + "def f(x):\n    if x:\n        return x\n    return 0\n\n\n" * 3
) * 2


def _rule_options(rule, layout):
    """planted_train options for a tie rule named as verify names it."""
    if rule.endswith("-refbpe-layout"):
        return dict(rule=rule[: -len("-refbpe-layout")], layout="refbpe")
    if rule in ("smallest-ids", "greatest-ids"):
        return dict(rule=rule, layout=layout)
    return dict(rule=rule)


def reproduce(explanation, text, vocab_size, specials, layout):
    """The merges of the planted trainer that verify's ``explanation`` names."""
    if explanation["kind"] == "tie-rule":
        return planted_train(text, vocab_size, specials, **_rule_options(explanation["name"], layout))
    options = dict(ZOO[explanation["name"]][0])
    rules = explanation.get("tie_rules")
    options.update(_rule_options(rules[0] if rules else "greatest-bytes", layout))
    if explanation.get("chunk_size"):
        options["chunk"] = explanation["chunk_size"]
    return planted_train(text, vocab_size, specials, **options)
