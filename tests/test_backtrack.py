"""``backtrack``: the backtracking search gives the merging loop's ids, on any piece.

The search (``Backtracker.encode``) is run on every piece here, whatever its length (the
tokenizer only hands it long ones), with its step limit lifted, and checked against the
plain rules of ``naive``: tiktoken's ranks (``naive_rank_encode``, for pieces that are not
themselves a token: "a piece that is a token is that token" is the caller's rule) and a
merge list applied merge by merge.  Vocabs: gpt2 (as tiktoken's ranks and as the CS336
merge list), cl100k_base and o200k_base from the shared data (skipped when absent), small
trained models, merge lists listed out of order and random rank tables (where tokens that do
not encode to themselves and runs whose keys go down occur: the two fallbacks).  Inputs:
random text cut by each encoding's pattern, random bytes as one piece, and long runs,
long Han text and long random bytes.
"""

import contextlib
import random

import pytest
import test_long_words as long_words
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import HEAVY, examples, gpt2_tokenizer, mixed_text, shared_root

from refbpe import train_from_texts
from refbpe.encode import backtrack, piece_ids
from refbpe.encode.tokenizer import Tokenizer
from refbpe.naive import merge_word, naive_rank_encode
from refbpe.pretokenize.patterns import get_pattern

ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]
_LOADED = {}


@contextlib.contextmanager
def unlimited():
    """The search without its step limit (it then always finishes)."""
    saved = backtrack._STEPS_PER_BYTE, backtrack._STEPS_FLOOR
    backtrack._STEPS_PER_BYTE, backtrack._STEPS_FLOOR = 1 << 40, 1 << 40
    try:
        yield
    finally:
        backtrack._STEPS_PER_BYTE, backtrack._STEPS_FLOOR = saved


def searched(tok, piece):
    """The search's ids of ``piece`` (the tokenizer's own search, built on first use)."""
    if tok._backtracker is None:
        tok._backtracker = tok._make_backtracker()
    with unlimited():
        return tok._backtracker.encode(piece)


def encoding(name):
    """A known encoding from the shared tiktoken files, loaded once (skipped when absent)."""
    if name not in _LOADED:
        import os

        cache = os.path.join(shared_root(), "data", "tiktoken", "cache")
        if not os.path.isdir(cache):
            pytest.skip("tiktoken cache not found at %s (set REFBPE_SHARED to the shared/ directory)" % cache)
        _LOADED[name] = Tokenizer.from_tiktoken(name)
    return _LOADED[name]


def by_ranks(tok, piece):
    """tiktoken's rule for a piece that is not a token; the merging loop's ids for one that is."""
    if piece in tok._rank_of:
        return tok._merge_piece(piece)
    return naive_rank_encode(piece, tok._rank_of)


def by_merge_list(tok, piece):
    """Each merge of ``tok.merges`` applied in turn to the whole piece (``naive_encode``'s rule)."""
    word = tuple(bytes([b]) for b in piece)
    for a, b in tok.merges:
        word = merge_word(word, (a, b), a + b)
    return [tok._id_of[t] for t in word]


# -- the known encodings --------------------------------------------------------------------

_text = st.one_of(mixed_text(max_atoms=12), st.text(max_size=40))


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=examples(60))
@given(text=_text)
@example(text="Hello world, 你好世界 ，привет мир!   \n\n\t x = 1_000_000;")
def test_equals_tiktokens_rule_on_text(name, text):
    tok = encoding(name)
    data = text.encode("utf-8", "surrogatepass")
    for piece in get_pattern(name).pretokenize(data) + [data]:
        if piece:
            assert searched(tok, piece) == by_ranks(tok, piece)


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=examples(60))
@given(piece=st.binary(min_size=1, max_size=120))
def test_equals_tiktokens_rule_on_random_bytes(name, piece):
    tok = encoding(name)
    assert searched(tok, piece) == by_ranks(tok, piece)


@pytest.mark.slow
@settings(max_examples=examples(10))
@given(text=mixed_text(max_atoms=6))
def test_equals_gpt2s_merge_list(text):
    """The CS336 GPT-2 files: 50,000 merges applied one by one (so few, short pieces)."""
    tok = gpt2_tokenizer(())
    data = text.encode("utf-8", "surrogatepass")
    for piece in get_pattern("gpt2").pretokenize(data)[:4]:
        assert searched(tok, piece) == by_merge_list(tok, piece)


def _han(n, seed):
    rng = random.Random(seed)
    return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(n)).encode("utf-8")


def _random_bytes(n, seed):
    rng = random.Random(seed)
    return bytes(rng.randrange(256) for _ in range(n))


ADVERSARIAL = {
    "a-run": b"a" * 3000,
    "space-run": b" " * 5000,
    "eq-run": b"=" * 3000,
    "newline-space": b"\n " * 1500,
    "han": _han(1500, 1),
    "bytes": _random_bytes(4000, 2),
    "digits": bytes(random.Random(3).choice(b"0123456789") for _ in range(3000)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("family", sorted(ADVERSARIAL))
def test_long_adversarial_pieces(name, family):
    """Long pieces against the heap (the plain rule is quadratic), the search unlimited and
    as the tokenizer runs it (it may give up: then the heap's ids)."""
    tok = encoding(name)
    piece = ADVERSARIAL[family]
    heap = tok._merge_piece(piece)
    assert searched(tok, piece) == heap
    assert tok._encode_piece(piece) == heap
    short = piece[:300]
    assert searched(tok, short) == by_ranks(tok, short)


@pytest.mark.slow
def test_a_run_of_equal_signs_is_left_to_the_heap():
    """cl100k_base has '=' tokens of 1-16, 32, 48, 64 and 80 bytes: the search retries every
    length at every place and goes past its step limit, so the piece is merged instead."""
    tok = encoding("cl100k_base")
    piece = b"=" * piece_ids._SEARCH_FROM
    tok._backtracker = None
    assert tok._encode_piece(piece) == tok._merge_piece(piece)
    assert tok._backtracker.encode(piece) is None
    # it gives up early: past its allowance for the bytes it covered, long before the end
    assert tok._backtracker.steps < backtrack._STEPS_PER_BYTE * len(piece) // 4


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
def test_every_token_encodes_to_itself_by_a_monotone_run(name):
    """The module docstring's claim that lets every pair be walked, never merged: all tokens
    (heavy profile) or 3,000 drawn at random."""
    tok = encoding(name)
    bt = tok._make_backtracker()
    ids = sorted(tok._rank_of.values())
    if not HEAVY:
        ids = random.Random(len(ids)).sample(ids, 3000)
    for t in ids:
        bt._learn(t)
    assert {bt._kind[t] for t in ids} == {backtrack._MONOTONE}


# -- trained models and other vocabs ----------------------------------------------------------

_TRAINED = {}


def trained():
    """A refbpe-trained model (vocab 600) over words, whitespace runs, Cyrillic and Han."""
    if "t" not in _TRAINED:
        texts = [
            "the cat sat on the mat; the dog ate the hat.  \n\n\t" * 20,
            "привет мир, привет всем " * 15 + "中文中文测试中文" * 10,
            "aaaa bbbb abab " * 30 + "==== ---- " * 20,
        ]
        vocab, merges = train_from_texts(texts, 600, ["<|endoftext|>"])
        _TRAINED["t"] = Tokenizer(vocab, merges, ["<|endoftext|>"])
    return _TRAINED["t"]


_trained_text = st.lists(
    st.sampled_from(["the", " cat", "aaaa", "ab", "==", " ", "\n\n", "привет", "中文", "测", "x", "é", "\t"]),
    max_size=30,
).map("".join)


@settings(max_examples=examples(50))
@given(text=_trained_text)
@example(text="aaaa" * 60 + " " * 50)
def test_equals_the_merge_list_of_a_trained_model(text):
    tok = trained()
    data = text.encode("utf-8")
    for piece in get_pattern("gpt2").pretokenize(data) + [data]:
        if piece:
            assert searched(tok, piece) == by_merge_list(tok, piece)


@settings(max_examples=examples(100))
@given(piece=st.binary(min_size=1, max_size=200))
def test_equals_the_merge_list_of_a_trained_model_on_random_bytes(piece):
    tok = trained()
    assert searched(tok, piece) == by_merge_list(tok, piece)


def shuffled_merge_lists():
    """Merges of a, b, c listed in a random order (``test_long_words``' strategy): a merge may
    use a token a later one makes, so a run's keys may go down (then pairs are checked by merging)."""
    return long_words.shuffled_merge_lists().map(lambda vocab_merges: Tokenizer(*vocab_merges))


_abc = st.text(alphabet="abc", min_size=1, max_size=60).map(lambda t: t.encode("ascii"))


_abc_pieces = st.lists(_abc, min_size=1, max_size=8)  # several per vocab: building one is the cost


@settings(max_examples=examples(40))
@given(tok=shuffled_merge_lists(), pieces=_abc_pieces)
def test_equals_the_merging_loop_with_merges_out_of_order(tok, pieces):
    """Out of order, the loop (lowest rank first) is the tokenizer's rule, not merge by merge."""
    for piece in pieces:
        assert searched(tok, piece) == tok._merge_piece(piece)


@st.composite
def random_ranks(draw):
    """tiktoken-style ranks over a, b, c in a random order: tokens that no merge makes and
    tokens ranked below their parts come up often."""
    tokens = sorted(set(draw(st.lists(_abc.filter(lambda t: 2 <= len(t) <= 6), max_size=40))))
    order = draw(st.permutations(tokens))
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({t: 256 + k for k, t in enumerate(order)})
    return Tokenizer.from_ranks(ranks)


@settings(max_examples=examples(40))
@given(tok=random_ranks(), pieces=_abc_pieces)
def test_equals_tiktokens_rule_with_random_ranks(tok, pieces):
    for piece in pieces:
        assert searched(tok, piece) == by_ranks(tok, piece)


def _ranks(*tokens):
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({t: r for t, r in tokens})
    return Tokenizer.from_ranks(ranks)


def test_an_empty_piece_has_no_ids():
    assert searched(trained_ranks(), b"") == [] == trained_ranks()._merge_piece(b"")


def test_a_token_no_merge_makes_is_never_taken():
    tok = _ranks((b"abc", 256))  # no "ab" nor "bc": the loop cannot make "abc"
    ids = searched(tok, b"abcabc")
    assert tok._backtracker._kind[tok._rank_of[b"abc"]] == backtrack._NOT_SELF
    assert ids == list(b"abcabc") == by_ranks(tok, b"abcabc")


def test_a_token_ranked_below_its_parts_is_checked_by_merging():
    """ "abc" is made from "ab" (rank 300) at rank 260: its run's keys go down."""
    tok = _ranks((b"ab", 300), (b"abc", 260), (b"ca", 301), (b"bca", 302))
    for piece in (b"abcabc", b"abcab", b"cabcabca", b"bcabc"):
        assert searched(tok, piece) == by_ranks(tok, piece)
    assert tok._backtracker._kind[tok._rank_of[b"abc"]] == backtrack._BY_MERGING


def trained_ranks():
    """The trained model's tokens as tiktoken's ranks (their ids): tables that need not grow."""
    vocab = trained().vocab
    return Tokenizer.from_ranks({t: i for i, t in vocab.items() if t != b"<|endoftext|>"})


def test_the_tokenizer_searches_long_pieces_of_few_byte_values_of_ranks_only():
    ranks, merges = trained_ranks(), trained()
    assert not ranks._ranks_grow and merges._ranks_grow
    run = b"ab " * (piece_ids._SEARCH_FROM // 3 + 1)
    assert len(set(run)) <= piece_ids._SEARCH_ALPHABET < len(set(_random_bytes(256, 4)))
    for tok, rule in ((ranks, by_ranks), (merges, by_merge_list)):
        tok._backtracker = None
        assert tok._encode_piece(run[:300]) == rule(tok, run[:300])  # short: merged
        assert tok._encode_piece(_random_bytes(70000, 4)) == tok._merge_piece(_random_bytes(70000, 4))
        assert tok._backtracker is None
    assert ranks._encode_piece(run) == ranks._merge_piece(run)
    assert ranks._backtracker and ranks._backtracker.steps > 0  # searched
    assert merges._encode_piece(run) == merges._merge_piece(run)
    assert merges._backtracker is None  # a merge list keeps its heap


def test_the_tokenizer_merges_a_piece_the_search_gives_up_on(monkeypatch):
    tok = trained_ranks()
    piece = b"aaaa bbbb abab " * 20
    monkeypatch.setattr(piece_ids, "_SEARCH_FROM", 0)
    monkeypatch.setattr(backtrack, "_STEPS_PER_BYTE", 0)
    monkeypatch.setattr(backtrack, "_STEPS_FLOOR", 0)
    assert tok._encode_piece(piece) == tok._merge_piece(piece) == by_ranks(tok, piece)
    assert tok._backtracker.encode(piece) is None


def test_a_vocab_without_every_byte_has_no_search():
    ranks = {bytes([i]): i for i in range(256) if i != ord("z")}
    ranks.update({b"ab": 300, b"abc": 260})  # "abc" ranks below "ab": the tables need not grow
    tok = Tokenizer.from_ranks(ranks)
    assert not tok._ranks_grow and tok._make_backtracker() is False
    with pytest.raises(ValueError, match="single-byte token"):
        tok._encode_piece(b"z" * piece_ids._SEARCH_FROM)
