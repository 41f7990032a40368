"""Long pre-tokens: the merge engine and the encoder equal the naive oracle on them.

The inputs are built to take the long-word paths: pieces of 1-5,000 symbols over
alphabets of 1-4 letters (runs of one letter, periodic words, random words), the
same word repeated, and special tokens between the words.  Sizes stay small enough
for the quadratic oracle; ``REFBPE_HYPOTHESIS_PROFILE=heavy`` runs 10x the examples.
"""

import os
import tempfile

from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import examples, gpt2_tokenizer

from refbpe.corpus.count import count_words
from refbpe.encode import piece_ids as tokenizer_module
from refbpe.encode.tokenizer import Tokenizer
from refbpe.learn.merge import learn_merges
from refbpe.learn.train import train_from_counts
from refbpe.naive import naive_encode, naive_train_bpe, naive_train_bpe_from_counts

EOT = "<|endoftext|>"
# Letters of one GPT-2 class (so that a word of them is one piece), 1 to 3 UTF-8 bytes.
LETTERS = ["a", "b", "c", "d", "\u00e9", "\u4e2d", "\u6587"]
SEPARATORS = [" ", "", "\n", EOT, EOT + " ", "  ", ", "]


@st.composite
def long_words(draw, letters=LETTERS):
    """A word of 1-5,000 symbols over 1-4 letters: random, runs of one letter, or periodic."""
    alphabet = draw(st.lists(st.sampled_from(letters), min_size=1, max_size=4, unique=True))
    n = draw(st.one_of(st.integers(1, 40), st.integers(1, 5000)))
    rng = draw(st.randoms(use_true_random=False))
    shape = draw(st.sampled_from(["random", "runs", "periodic"]))
    if shape == "random":
        return "".join(rng.choice(alphabet) for _ in range(n))
    if shape == "periodic":
        period = [rng.choice(alphabet) for _ in range(rng.randint(1, 6))]
        return "".join(period[i % len(period)] for i in range(n))
    out = []
    while len(out) < n:
        out.extend(rng.choice(alphabet) * rng.randint(1, 300))
    return "".join(out[:n])


@st.composite
def long_texts(draw):
    """1-3 long words, repeated, with separators (special tokens among them) between them."""
    words = draw(st.lists(long_words(), min_size=1, max_size=3))
    picks = draw(st.lists(st.integers(0, len(words) - 1), min_size=1, max_size=6))
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(picks), max_size=len(picks)))
    return "".join(words[k] + s for k, s in zip(picks, seps))


def _count_text(text, specials):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.txt")
        with open(path, "wb") as f:
            f.write(text.encode("utf-8"))
        return count_words(path, specials, workers=1)


@settings(max_examples=examples(50))
@given(st.lists(st.tuples(long_words(), st.integers(1, 3)), min_size=1, max_size=3), st.integers(1, 60))
@example([("a" * 5000, 1)], 60)
@example([("a" * 4999, 2), ("a" * 3, 1)], 60)
@example([("ab" * 2500, 1), ("ba" * 7, 3)], 60)
@example([("aab" * 1000 + "a", 1)], 40)
def test_engine_equals_naive_on_long_words(words, merges):
    counts = {}
    for w, n in words:
        counts[w.encode("utf-8")] = counts.get(w.encode("utf-8"), 0) + n
    assert learn_merges(counts, merges) == naive_train_bpe_from_counts(counts, 256 + merges)[1]


@settings(max_examples=examples(30))
@given(long_texts(), st.integers(1, 50))
@example("a" * 3000 + EOT + "a" * 2999 + " " + "a" * 5, 50)
@example(" " * 4000 + "x" + "\n" * 1000, 30)
def test_training_equals_naive_on_long_pieces(text, merges):
    """Counting and merging a text of long pieces, special tokens between them."""
    vocab, got = train_from_counts(_count_text(text, [EOT]), 257 + merges, [EOT])
    n_vocab, want = naive_train_bpe(text, 257 + merges, [EOT])
    assert got == want and vocab == n_vocab


@settings(max_examples=examples(15))
@given(long_texts(), st.integers(1, 60))
@example("a" * 3000 + EOT + "a" * 2999 + " " + "a" * 5, 60)
@example("ab" * 900 + "a" + EOT + "\u4e2d" * 700, 60)
def test_encoder_equals_naive_on_long_pieces(text, merges):
    vocab, learned = train_from_counts(_count_text(text, [EOT]), 257 + merges, [EOT])
    tok = Tokenizer(vocab, learned, [EOT])
    assert tok.encode(text) == naive_encode(text, vocab, learned, [EOT])


@settings(max_examples=examples(10))
@given(long_words(letters=["a", "b", "e", "t", " ", "\u4e2d"]).filter(lambda w: len(w) >= 2))
@example("a" * 1500)
@example("\u4e2d\u6587" * 400)
def test_long_piece_path_equals_loop_with_gpt2_vocab(word):
    """Both paths of ``_merge_piece`` on the same piece, GPT-2's 50,000 merges."""
    tok = gpt2_tokenizer(())
    piece = word.encode("utf-8")[:1500]
    loop, heap = _both_paths(tok, piece)
    assert heap == loop
    assert b"".join(tok.vocab[i] for i in heap) == piece  # bytes: the cut may split a character


@settings(max_examples=examples(10))
@given(
    st.lists(
        st.tuples(
            long_words(letters=["a", "b"]),
            st.sampled_from([1, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64 + 3]),
        ),
        min_size=1,
        max_size=3,
    ),
    st.integers(1, 30),
)
def test_engine_equals_naive_with_counts_at_the_array_limits(words, merges):
    """Counts around 2**31 and 2**63, where the engine's arrays change typecode (or become lists)."""
    counts = {}
    for w, n in words:
        counts[w.encode("utf-8")] = counts.get(w.encode("utf-8"), 0) + n
    assert learn_merges(counts, merges) == naive_train_bpe_from_counts(counts, 256 + merges)[1]


@st.composite
def shuffled_merge_lists(draw):
    """A vocab and merges made by random merges of a, b, c, then listed in a random order
    (a merge may use a token that a later merge makes: not BPE order, but loadable)."""
    tokens = [b"a", b"b", b"c"]
    merges = []
    for _ in range(draw(st.integers(1, 25))):
        a, b = draw(st.sampled_from(tokens)), draw(st.sampled_from(tokens))
        if a + b not in tokens:
            tokens.append(a + b)
            merges.append((a, b))
    merges = draw(st.permutations(merges))
    vocab = {i: bytes([i]) for i in range(256)}
    for a, b in merges:
        vocab[len(vocab)] = a + b
    return vocab, merges


def _both_paths(tok, piece):
    saved = tokenizer_module._LONG_PIECE
    try:
        tokenizer_module._LONG_PIECE = 1 << 30
        loop = tok._merge_piece(piece)
        tokenizer_module._LONG_PIECE = 0
        return loop, tok._merge_piece(piece)
    finally:
        tokenizer_module._LONG_PIECE = saved


@settings(max_examples=examples(40))
@given(shuffled_merge_lists(), long_words(letters=["a", "b", "c"]).filter(lambda w: len(w) >= 2))
def test_long_piece_path_equals_loop_with_merges_out_of_order(vocab_merges, word):
    vocab, merges = vocab_merges
    loop, heap = _both_paths(Tokenizer(vocab, merges), word.encode("ascii")[:2000])
    assert heap == loop
