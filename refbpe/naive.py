"""The oracle: textbook BPE, short enough to check by eye.

Training recounts every pair from scratch before each merge, and encoding
applies every merge, in creation order, to every pre-token.  Tokens are kept as
``bytes`` (as the CS336 reference does), so nothing here depends on id
bookkeeping.  It is quadratic and meant for small inputs: the test suite proves
the fast paths in ``merge`` and ``tokenizer`` equal to it.

The trainer profiles (``refbpe.learn.profiles``) are here as their rules, spelled out
again without the engine's renumbering trick: ``_ids`` lays out each profile's
ids (HF's: special tokens, the alphabet by mapped character, merges) and the
tie goes to the smallest pair of those ids (rustbpe, hf) or to the greatest
pair of bytes (cs336); ``naive_train_from_texts`` cuts texts into sequences
with a regular expression of its own.
"""

import re
from collections import Counter

from .formats.bytemap import decode_token, encode_token
from .learn.profiles import ProfileLimit, get_profile
from .pretokenize.patterns import get_pattern
from .specials import special_pattern, split_specials

__all__ = [
    "naive_train_bpe",
    "naive_train_bpe_from_counts",
    "naive_train_from_texts",
    "naive_train_superbpe",
    "naive_encode",
    "naive_rank_encode",
    "merge_word",
    "naive_trace",
    "naive_step_checks",
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


def naive_train_bpe(text, vocab_size, special_tokens=(), *, pattern=None):
    """(vocab, merges) for ``text`` (a str), by full recount every step."""
    counts = _pretoken_counts(text, special_tokens, pattern)
    return naive_train_bpe_from_counts(counts, vocab_size, special_tokens)


def naive_train_bpe_from_counts(
    word_counts, vocab_size, special_tokens=(), *, profile="cs336", min_frequency=0, initial_alphabet=(),
    extend=(),
):  # fmt: skip
    """(vocab, merges) for ``{pre-token bytes: count}``, by full recount every step.

    ``profile`` is ``cs336``, ``rustbpe`` or ``hf``; ``initial_alphabet`` (hf) is a
    list of byte values; ``min_frequency`` stops before a pair seen fewer times.
    ``extend``: merges applied first, in order, whatever the counts say (the
    definition in ``refbpe.learn.extend``); ids are the profile's own layout.
    ``superbpe``: SuperBPE's stage 2 on these (stage-2) counts, ``extend`` the
    stage-1 merges: hf's rules, except that an inherited merge whose pair never
    occurred is left out, and a pair whose token holds ``b": "`` or more than four
    space-separated words is never merged.
    """
    special_tokens = list(special_tokens)
    words = Counter()
    for piece, n in word_counts.items():
        words[tuple(bytes([b]) for b in piece)] += n
    superwords = profile == "superbpe"  # stage 2 of SuperBPE: hf's rules, and its own two
    profile = "hf" if superwords else profile
    ids = _ids(profile, special_tokens, words, initial_alphabet)
    if profile == "hf":
        wanted = vocab_size - len(ids)  # HF's vocab_size counts everything in the vocab
    else:
        wanted = vocab_size - 256 - len(special_tokens)
    merges = []
    seen = set(_pair_counts(words))  # every pair that ever occurred and is not merged yet
    for pair in extend:
        if superwords and pair not in seen:  # SuperBPE leaves out a merge its words never had
            continue
        words = _add_merge(profile, ids, words, merges, pair)
        seen.discard(pair)
        seen.update(_pair_counts(words))
    refused = set()
    while len(merges) < wanted:
        pairs = Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                if pair not in refused:
                    pairs[pair] += n
        if not pairs:
            break
        if profile == "cs336":
            best = max(pairs, key=lambda p: (pairs[p], p[0], p[1]))
        else:  # rustbpe, hf: the highest count, then the smallest pair of ids
            best = min(pairs, key=lambda p: (-pairs[p], ids[_name(profile, p[0])], ids[_name(profile, p[1])]))
        if pairs[best] < min_frequency:
            break
        token = best[0] + best[1]
        if superwords and (b": " in token or len([w for w in token.split(b" ") if w]) > 4):
            refused.add(best)  # dropped for good
            continue
        words = _add_merge(profile, ids, words, merges, best)
    if profile == "hf":
        n_special = len(set(special_tokens))
        vocab = {i: name.encode("utf-8") if i < n_special else decode_token(name) for name, i in ids.items()}
        return vocab, merges
    vocab = {i: bytes([i]) for i in range(256)}
    for a, b in merges:
        vocab[len(vocab)] = a + b
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    return vocab, merges


def _add_merge(profile, ids, words, merges, pair):
    """``words`` with ``pair`` merged; its token named in ``ids``, the pair appended to ``merges``."""
    merged = pair[0] + pair[1]
    if profile == "hf" and _name(profile, merged) in ids:
        raise ProfileLimit("hf: merge %d makes a token HF already has" % len(merges))
    ids.setdefault(_name(profile, merged), len(ids))
    merges.append(pair)
    new_words = Counter()
    for word, n in words.items():
        new_words[merge_word(word, pair, merged)] += n
    return new_words


def _ids(profile, special_tokens, words, initial_alphabet):
    """{token name: id} before the first merge, in ``profile``'s layout."""
    if profile != "hf":
        return {bytes([b]): b for b in range(256)}
    ids = {}
    for t in special_tokens:
        ids.setdefault(t, len(ids))
    alphabet = set(encode_token(bytes([b])) for b in initial_alphabet)
    for word in words:
        alphabet.update(encode_token(t) for t in word)
    for c in sorted(alphabet):
        ids.setdefault(c, len(ids))
    return ids


def _name(profile, token):
    """A token's key in ``_ids``: its bytes, or for hf its GPT-2 mapped string (as HF's vocab)."""
    return encode_token(token) if profile == "hf" else token


def naive_train_from_texts(
    texts,
    vocab_size,
    special_tokens=(),
    *,
    profile="cs336",
    cut=None,
    pattern=None,
    add_prefix_space=False,
    min_frequency=0,
    initial_alphabet=(),
    extend=(),
):
    """(vocab, merges) for ``texts`` as a peer's ``train_from_iterator`` takes them.

    ``cut``: ``items`` (each text one sequence; the default for hf, whose special
    tokens stay text), ``documents`` (cut at special tokens, dropped; the
    default otherwise) or ``lines`` (after each newline).  ``min_frequency`` and
    ``initial_alphabet`` and ``extend``: see ``naive_train_bpe_from_counts``.
    """
    cut = cut or ("items" if profile == "hf" else "documents")
    pattern = get_pattern(pattern or get_profile(profile).default_pattern)
    counts = Counter()
    for text in texts:
        if cut == "lines":
            sequences = re.findall(r"[^\n]*\n|[^\n]+\Z", text)
        elif cut == "documents" and special_tokens:
            sequences = re.split("|".join(re.escape(t) for t in sorted(special_tokens, key=len)[::-1]), text)
        else:
            sequences = [text]
        for seq in sequences:
            if add_prefix_space and seq and not seq.startswith(" "):
                seq = " " + seq
            counts.update(pattern.pretokenize(seq.encode("utf-8", "surrogatepass")))
    return naive_train_bpe_from_counts(
        counts,
        vocab_size,
        special_tokens,
        profile=profile,
        min_frequency=min_frequency,
        initial_alphabet=initial_alphabet,
        extend=extend,
    )


def naive_train_superbpe(texts, vocab_size, transition, special_tokens=()):
    """SuperBPE's two stages on ``texts`` (strs, each cut into lines): hf's BPE on
    the stage-1 pieces to ``transition`` merges, then stage 2 on the stage-2 pieces."""
    stage1 = Counter()
    stage2 = Counter()
    for text in texts:
        for line in re.findall(r"[^\n]*\n|[^\n]+\Z", text):
            data = line.encode("utf-8", "surrogatepass")
            stage1.update(get_pattern("superbpe-stage1").pretokenize(data))
            stage2.update(get_pattern("superbpe-stage2").pretokenize(data))
    words = Counter()
    for piece, n in stage1.items():
        words[tuple(bytes([b]) for b in piece)] += n
    size = len(_ids("hf", list(special_tokens), words, ())) + transition
    _, merges = naive_train_bpe_from_counts(stage1, size, special_tokens, profile="hf")
    return naive_train_bpe_from_counts(stage2, vocab_size, special_tokens, profile="superbpe", extend=merges)


def naive_encode(text, vocab, merges, special_tokens=(), *, pattern=None):
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


def _pair_counts(words):
    counts = Counter()
    for w, n in words.items():
        for pair in zip(w, w[1:]):
            counts[pair] += n
    return counts


def _merged_words(words, pair):
    out = Counter()
    for w, n in words.items():
        out[merge_word(w, pair, pair[0] + pair[1])] += n
    return out


def naive_trace(word_counts, merges):
    """``[(count, ties, runner_up)]`` of each merge, recounting every pair before
    each (what ``merge.learn_merges(trace=...)`` must equal)."""
    words = Counter({tuple(bytes([c]) for c in w): n for w, n in word_counts.items() if n > 0})
    out = []
    for pair in merges:
        counts = _pair_counts(words)
        c = counts[pair]
        others = [v for p, v in counts.items() if p != pair and v > 0]
        out.append((c, sum(1 for v in counts.values() if v == c), max(others, default=0)))
        words = _merged_words(words, pair)
    return out


def naive_step_checks(word_counts, merges, choose):
    """The steps at which ``merges`` are not what BPE takes, recounting every pair:
    their pair does not occur, is below the maximum, or is not ``choose(tied
    pairs)`` among the pairs of the maximum count (what ``verify.certify`` must list)."""
    words = Counter({tuple(bytes([c]) for c in w): n for w, n in word_counts.items() if n > 0})
    failing = []
    for step, pair in enumerate(merges):
        counts = _pair_counts(words)
        top = max(counts.values(), default=0)
        c = counts.get(pair, 0)
        if c == 0 or c < top or choose([p for p, v in counts.items() if v == top]) != pair:
            failing.append(step)
        words = _merged_words(words, pair)
    return failing
