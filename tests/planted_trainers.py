"""A zoo of trainers with planted bugs, for ``refbpe verify``'s explanations and ``refbpe fuzz``.

Each is the naive oracle (``refbpe.naive``: recount every pair, take the
best, merge it everywhere) with one thing changed, a few lines each: how the
text is read (``READERS``), how pairs are counted (``COUNTERS``), which tied
pair wins (``CHOOSERS``) or how a merge is applied (``MERGERS``).  ``ZOO``
names each bug with the cause, tie rule and variant verify should report.

``FUZZ_BUGS`` adds the bugs reported against real trainers, for the fuzzer:
counts kept as wrapping 32-bit ints, a stale heap (a count trusted after it
fell, so a vanished pair is merged), ties broken by hash order (a set's
iteration order, which changes with the process's hash seed), special tokens
cut at chunk boundaries, and a pre-tokenizer that calls the digits of other
scripts letters.  Each is a command (``python planted_trainers.py train BUG
INPUT VOCAB_SIZE OUT [SPECIAL...]``, writing hex JSON; INPUT may be a word-count
file) and a CS336-signature function (``train_<bug>``, for ``--train-py``).
"""

import json
import os
import sys
from collections import Counter

from refbpe.corpus.countfile import is_counts_path, read_counts
from refbpe.corpus.sequences import count_texts
from refbpe.formats import read_model, write_model
from refbpe.formats.bytemap import bytes_to_unicode
from refbpe.naive import merge_word
from refbpe.pretokenize.gpt2 import NUMBER, char_class
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
    "FUZZ_BUGS",
    "planted_split",
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


def _read_piece_chunks(text, specials, chunk):
    """Chunks of about ``chunk`` characters, each cut at a piece end of the whole text
    (so no piece is cut) but special tokens are looked for in each chunk alone."""
    units, start, at = [], 0, 0
    for piece in get_pattern("gpt2").pretokenize_str(text):
        at += len(piece)
        if at - start >= chunk:
            units.append(text[start:at])
            start = at
    units.append(text[start:])
    return _count(units, special_pattern(specials))


_AS_LETTER = {1: "a", 2: "\u00e9", 3: "\u4e2d", 4: "\U0001d518"}


def planted_split(text):
    """GPT-2's pieces of ``text`` (bytes), but with the digits of other scripts taken as letters."""
    data = text.encode("utf-8", "surrogatepass")
    shadow = "".join(
        _AS_LETTER[len(c.encode("utf-8", "surrogatepass"))]
        if ord(c) > 127 and char_class(ord(c)) == NUMBER
        else c
        for c in text
    )
    out, at = [], 0
    for piece in pretokenize(shadow.encode("utf-8", "surrogatepass")):
        out.append(data[at : at + len(piece)])
        at += len(piece)
    return out


def _count_split(text, specials):
    counts = Counter()
    for segment, is_special in split_specials(text, special_pattern(specials)):
        if not is_special:
            counts.update(planted_split(segment))
    return counts


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
    "hash-order": lambda tied, layout: next(iter(set(tied))),  # a set's order: the hash seed's
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
    wrap=None,
    stale=False,
    counts=None,
    min_count=1,
):
    """Merges of the naive trainer with the planted changes.

    ``double_count``: an incremental update's bug, kept as a persistent
    correction: when merging (a, b) -> z makes z adjacent to z, (z, z) is
    counted once more and (b, a) once less than it occurs, until merged.
    ``layout``: the ids the id tie rules use (``their_layout``).
    ``wrap``: pair counts kept as wrapping signed ints of this many bits.
    ``stale``: a count is trusted after it fell (a heap entry never refreshed),
    so a pair that no longer occurs can be merged.
    ``counts``: {pre-token bytes: count} given instead of ``text``.
    ``min_count``: stop when the best pair occurs fewer times (HF's ``min_frequency``).
    """
    words = Counter()
    if counts is not None:
        read = counts
    elif reader == "chunk-boundaries":
        read = _read_chunks(text, specials, chunk)
    elif reader == "special-chunks":
        read = _read_piece_chunks(text, specials, chunk)
    elif reader == "split-digits-as-letters":
        read = _count_split(text, specials)
    else:
        read = READERS[reader](text, specials)
    for piece, n in read.items():
        words[tuple(bytes([b]) for b in piece)] += n
    merges, bogus, seen = [], Counter(), Counter()
    ids = their_layout(layout, [])
    for _ in range(vocab_size - 256 - len(specials)):
        pairs = COUNTERS[counter](words)
        for p, c in bogus.items():
            pairs[p] += c
        if wrap:
            pairs = Counter({p: (c + 2 ** (wrap - 1)) % 2**wrap - 2 ** (wrap - 1) for p, c in pairs.items()})
        pairs = Counter({p: c for p, c in pairs.items() if c > 0})
        if stale:
            for p, c in pairs.items():
                seen[p] = max(seen[p], c)
            pairs = seen
        if not pairs or max(pairs.values()) < min_count:
            break
        top = max(pairs.values())
        tied = [p for p in pairs if pairs[p] == top]
        best = CHOOSERS[rule](tied, ids)
        seen.pop(best, None)
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


# -- the fuzzer's planted bugs ------------------------------------------------------------

FUZZ_CHUNK = 16  # short chunks, so a minimal failing input stays small

# name -> (planted_train options, the bug classes of refbpe fuzz expected to find it)
FUZZ_BUGS = {
    "none": (dict(), None),  # the naive oracle itself: no finding expected
    "int32-counts": (dict(wrap=32), ("count-overflow",)),
    "stale-heap": (dict(stale=True), None),
    "hash-order": (dict(rule="hash-order"), ("ties", "overlapping-runs", "long-pieces", "special-tokens")),
    "special-chunks": (dict(reader="special-chunks", chunk=FUZZ_CHUNK), ("special-tokens", "multi-document")),
    "split-digits-as-letters": (
        dict(reader="split-digits-as-letters"),
        ("digits", "unicode", "random", "multi-document"),
    ),
    "smallest-bytes": (dict(rule="smallest-bytes"), None),
    "greatest-ids": (dict(rule="greatest-ids"), None),  # ids in refbpe's layout, as CS336's
    "first-counted": (dict(rule="first-counted"), None),
    "specials-as-text": (dict(reader="specials-as-text"), None),
    "lines": (dict(reader="lines"), None),
    "chunk-boundaries": (dict(reader="chunk-boundaries", chunk=FUZZ_CHUNK), None),
    "once-per-pretoken": (dict(counter="once-per-pretoken"), None),
    "overlapping-merges": (dict(merger="overlapping-merges"), None),
}


def train_planted(bug, input_path, vocab_size, special_tokens):
    """CS336's ``(vocab, merges)`` from the planted trainer ``bug``; ``input_path`` may be a count file."""
    options = dict(FUZZ_BUGS[bug][0])
    if is_counts_path(str(input_path)):
        options["counts"] = read_counts(str(input_path))
        text = ""
    else:
        with open(input_path, encoding="utf-8", newline="") as f:
            text = f.read()
    merges = planted_train(text, vocab_size, list(special_tokens), **options)
    return layout_vocab("refbpe", merges, special_tokens), merges


def _train_function(bug):
    def train(input_path, vocab_size, special_tokens):
        return train_planted(bug, input_path, vocab_size, special_tokens)

    train.__name__ = "train_" + bug.replace("-", "_")
    return train


for _bug in FUZZ_BUGS:
    globals()["train_" + _bug.replace("-", "_")] = _train_function(_bug)


# -- conventions of real trainers (verify names them: tests/test_conventions.py) ----------


def train_text_mode(input_path, vocab_size, special_tokens):
    """A CS336 student's trainer that opens the corpus in text mode (``\\r\\n`` and ``\\r`` read
    as ``\\n``)."""
    with open(input_path, encoding="utf-8") as f:
        text = f.read()
    merges = planted_train(text, vocab_size, list(special_tokens))
    return layout_vocab("refbpe", merges, special_tokens), merges


def train_min_count_2(input_path, vocab_size, special_tokens):
    """A trainer that merges only pairs that occur at least twice (HF's ``min_frequency=2``)."""
    with open(input_path, encoding="utf-8", newline="") as f:
        text = f.read()
    merges = planted_train(text, vocab_size, list(special_tokens), min_count=2)
    return layout_vocab("refbpe", merges, special_tokens), merges


# HF's ByteLevel regex on its Oniguruma's Unicode tables (``profiles.HFProfile``)
HF_PATTERN = "gpt2@16.0.0"
_BYTE_TO_CHAR = bytes_to_unicode()


def planted_hf(text, vocab_size, specials, whole_alphabet=True, min_count=1):
    """HF's BpeTrainer (over the documents, ``ByteLevel(add_prefix_space=True)``), naively:
    ids are the special tokens, then the alphabet by the code point of each byte's
    byte-level character, then one per merge; ``vocab_size`` counts all three; ties go to
    the smallest (left id, right id).  ``whole_alphabet``: every byte is in the alphabet
    (``initial_alphabet=ByteLevel.alphabet()``), else the bytes that occur.  Returns
    (vocab {id: bytes}, merges)."""
    counts = count_texts([text], "documents", list(specials), HF_PATTERN, add_prefix_space=True)
    words = Counter({tuple(bytes([b]) for b in w): n for w, n in counts.items()})
    present = set(range(256)) if whole_alphabet else {b for w in counts for b in w}
    ids = {}
    for t in specials:
        ids.setdefault(t.encode("utf-8"), len(ids))
    for b in sorted(present, key=lambda b: _BYTE_TO_CHAR[b]):
        ids.setdefault(bytes([b]), len(ids))
    merges = []
    while len(ids) < vocab_size:
        pairs = Counter({p: c for p, c in _count_all(words).items() if c > 0})
        if not pairs or max(pairs.values()) < min_count:
            break
        top = max(pairs.values())
        best = min((p for p in pairs if pairs[p] == top), key=lambda p: (ids[p[0]], ids[p[1]]))
        merges.append(best)
        merged = best[0] + best[1]
        if merged in ids:
            break  # HF would reuse the id; refbpe's profile refuses the case (``ProfileLimit``)
        ids[merged] = len(ids)
        new = Counter()
        for word, n in words.items():
            new[merge_word(word, best, merged)] += n
        words = new
    return {i: b for b, i in ids.items()}, merges


def train_hf_whole_alphabet(input_path, vocab_size, special_tokens):
    """An HF trainer with ``initial_alphabet=ByteLevel.alphabet()``: all 256 bytes in its
    vocab and its vocab size, whatever occurs (``train --profile hf --initial-alphabet bytelevel``)."""
    with open(input_path, encoding="utf-8", newline="") as f:
        text = f.read()
    return planted_hf(text, vocab_size, list(special_tokens))


def train_hf(input_path, vocab_size, special_tokens):
    """HF's trainer with the alphabet of the bytes that occur (``train --profile hf``)."""
    with open(input_path, encoding="utf-8", newline="") as f:
        text = f.read()
    return planted_hf(text, vocab_size, list(special_tokens), whole_alphabet=False)


def planted_extend(text, vocab_size, specials, base_path, ignore_base=False):
    """The naive trainer continuing the model at ``base_path`` (``train --extend``): its
    special tokens first, its merges replayed in order (each makes its token, occurring
    or not), then the greatest-bytes rule; ``ignore_base``: trains from the bytes instead."""
    base = read_model(base_path)
    specials = list(base.special_tokens) + [t for t in specials if t not in base.special_tokens]
    words = Counter()
    for piece, n in READERS["reference"](text, specials).items():
        words[tuple(bytes([b]) for b in piece)] += n
    merges = [] if ignore_base else [(bytes(a), bytes(b)) for a, b in base.merges]
    for pair in merges:
        words = Counter({merge_word(w, pair, pair[0] + pair[1]): n for w, n in words.items()})
    while len(merges) < vocab_size - 256 - len(specials):
        pairs = {p: c for p, c in _count_all(words).items() if c > 0}
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best)
        new = Counter()
        for word, n in words.items():
            new[merge_word(word, best, best[0] + best[1])] += n
        words = new
    return layout_vocab("refbpe", merges, specials), merges


def train_extending(input_path, vocab_size, special_tokens, base_path):
    """``fuzz --extend``'s function: extends the model at ``base_path``, as ``train --extend``."""
    with open(input_path, encoding="utf-8", newline="") as f:
        return planted_extend(f.read(), vocab_size, list(special_tokens), base_path)


def train_ignoring_base(input_path, vocab_size, special_tokens, base_path):
    """A trainer asked to extend a model that trains from the bytes instead."""
    with open(input_path, encoding="utf-8", newline="") as f:
        return planted_extend(f.read(), vocab_size, list(special_tokens), base_path, ignore_base=True)


def split_digits_as_letters(text):
    """The planted pre-tokenizer as ``--split-py`` calls it: str -> [str]."""
    return [p.decode("utf-8", "surrogatepass") for p in planted_split(text)]


def main(argv):
    """``train BUG INPUT VOCAB_SIZE OUT [SPECIAL...]`` (hex JSON to OUT) or ``split INPUT OUT``."""
    if argv[0] == "split":
        with open(argv[1], encoding="utf-8", newline="") as f:
            pieces = split_digits_as_letters(f.read())
        with open(argv[2], "w", encoding="utf-8") as f:
            f.writelines(json.dumps(p) + "\n" for p in pieces)
        return 0
    bug, input_path, vocab_size, out = argv[1:5]
    specials = argv[5:]
    vocab, merges = train_planted(bug, input_path, int(vocab_size), specials)
    write_model(out, "json", vocab, merges, specials)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main(sys.argv[1:]))


def encode_leftmost_merge(model_path, text):
    """A planted encoder (``--encode-py``): merges the leftmost mergeable pair first, not the lowest rank."""
    model = read_model(model_path)
    ids = {b: i for i, b in model.vocab.items()}
    ranks = {m: r for r, m in enumerate(model.merges)}
    out = []
    for segment, is_special in split_specials(text, special_pattern(model.special_tokens)):
        if is_special:
            out.append(ids[segment.encode("utf-8")])
            continue
        for piece in pretokenize(segment.encode("utf-8", "surrogatepass")):
            parts = [bytes([b]) for b in piece]
            while True:
                k = next((k for k in range(len(parts) - 1) if (parts[k], parts[k + 1]) in ranks), None)
                if k is None:
                    break
                parts[k : k + 2] = [parts[k] + parts[k + 1]]
            out.extend(ids[x] for x in parts)
    return out


def encode_specials_as_text(model_path, text):
    """A planted encoder (``--encode-py``): special-token text encoded as ordinary text (tiktoken's
    ``encode_ordinary``)."""
    from refbpe.encode.tokenizer import Tokenizer

    model = read_model(model_path)
    return Tokenizer(model.vocab, model.merges, model.special_tokens).encode_ordinary(text)
