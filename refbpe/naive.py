"""The oracle: textbook BPE, short enough to check by eye.

Training recounts every pair from scratch before each merge, and encoding
applies every merge, in creation order, to every pre-token.  Tokens are kept as
``bytes`` (as the CS336 reference does), so nothing here depends on id
bookkeeping.  It is quadratic and meant for small inputs: the test suite proves
the fast paths in ``merge`` and ``tokenizer`` equal to it.
"""

from collections import Counter

from .patterns import get_pattern
from .specials import special_pattern, split_specials

__all__ = [
    "naive_train_bpe",
    "naive_train_bpe_from_counts",
    "naive_encode",
    "naive_rank_encode",
    "merge_word",
]


def _pretoken_counts(text, special_tokens, pattern=None):
    pretokenize = get_pattern(pattern).pretokenize
    counts = Counter()
    for segment, is_special in split_specials(text, special_pattern(special_tokens)):
        if not is_special:
            counts.update(pretokenize(segment.encode("utf-8")))
    return counts


def merge_word(word, pair, merged):
    """``word`` (a sequence of tokens) with each ``pair`` replaced by ``merged``,
    left to right, without overlap."""
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(merged)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def naive_train_bpe(text, vocab_size, special_tokens=(), pattern=None):
    """(vocab, merges) for ``text`` (a str), by full recount every step."""
    counts = _pretoken_counts(text, special_tokens, pattern)
    return naive_train_bpe_from_counts(counts, vocab_size, special_tokens)


def naive_train_bpe_from_counts(word_counts, vocab_size, special_tokens=()):
    """(vocab, merges) for ``{pre-token bytes: count}``, by full recount every step."""
    special_tokens = list(special_tokens)
    words = Counter()
    for piece, n in word_counts.items():
        words[tuple(bytes([b]) for b in piece)] += n
    merges = []
    for _ in range(vocab_size - 256 - len(special_tokens)):
        pairs = Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += n
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p[0], p[1]))
        merges.append(best)
        merged = best[0] + best[1]
        new_words = Counter()
        for word, n in words.items():
            new_words[merge_word(word, best, merged)] += n
        words = new_words
    vocab = {i: bytes([i]) for i in range(256)}
    for a, b in merges:
        vocab[len(vocab)] = a + b
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    return vocab, merges


def naive_encode(text, vocab, merges, special_tokens=(), pattern=None):
    """Token ids of ``text``: every merge applied in order to every pre-token.

    A special token takes the largest id holding its bytes (appended at the
    next free id when no id does); ordinary tokens take the smallest.
    """
    vocab = dict(vocab)
    for t in special_tokens or ():
        if t.encode("utf-8") not in vocab.values():
            vocab[max(vocab) + 1] = t.encode("utf-8")
    smallest_id, largest_id = {}, {}
    for i in sorted(vocab):
        smallest_id.setdefault(vocab[i], i)
        largest_id[vocab[i]] = i
    pretokenize = get_pattern(pattern).pretokenize
    ids = []
    for segment, is_special in split_specials(text, special_pattern(special_tokens)):
        if is_special:
            ids.append(largest_id[segment.encode("utf-8")])
            continue
        for piece in pretokenize(segment.encode("utf-8", "surrogatepass")):
            word = tuple(bytes([b]) for b in piece)
            for pair in merges:
                word = merge_word(word, tuple(pair), pair[0] + pair[1])
            ids.extend(smallest_id[t] for t in word)
    return ids


def naive_rank_encode(piece, rank_of):
    """tiktoken's ids of one pre-token (bytes), from its ranks ``{token bytes: rank}``.

    The whole piece if it is a token; else, starting from single bytes, join
    the two adjacent parts whose concatenation has the lowest rank (the
    leftmost such pair on a tie) until no concatenation is a token.
    """
    if piece in rank_of:
        return [rank_of[piece]]
    parts = [piece[i : i + 1] for i in range(len(piece))]
    while True:
        joins = [(rank_of[a + b], k) for k, (a, b) in enumerate(zip(parts, parts[1:])) if a + b in rank_of]
        if not joins:
            return [rank_of[p] for p in parts]
        _, k = min(joins)
        parts[k : k + 2] = [parts[k] + parts[k + 1]]
