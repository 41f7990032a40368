"""``refbpe.testing``: the strategies draw what they promise, and the assertions pass for the
reference and fail with verify's report for a planted bug."""

import pytest
from hypothesis import given, settings
from planted_trainers import encode_leftmost_merge, train_smallest_bytes
from support import examples

from refbpe import Tokenizer, train_bpe, train_from_texts, write_model
from refbpe.testing import (
    CLASSES,
    COUNT_CLASSES,
    Corpus,
    assert_encodes_like_reference,
    assert_trains_like_reference,
    corpora,
    texts,
    word_counts,
)


@settings(max_examples=examples(10), deadline=None)
@given(corpus=corpora("ties"))
def test_the_reference_trains_like_itself(corpus):
    assert_trains_like_reference(train_bpe, corpus.text, corpus.vocab_size, corpus.special_tokens)


@pytest.mark.parametrize("bug_class", CLASSES)
def test_every_class_draws_a_corpus(bug_class):
    @settings(max_examples=examples(5), deadline=None)
    @given(corpus=corpora(bug_class))
    def check(corpus):
        assert isinstance(corpus, Corpus) and isinstance(corpus.text, str)
        assert corpus.vocab_size > 256 + len(corpus.special_tokens)
        if bug_class in ("special-tokens", "multi-document"):
            assert corpus.special_tokens

    check()


@settings(max_examples=examples(20), deadline=None)
@given(counts=word_counts())
def test_word_counts_reach_past_2_to_the_31(counts):
    words, vocab_size = counts
    assert COUNT_CLASSES == ("count-overflow",)
    assert words and vocab_size > 256 and all(n > 0 for n in words.values())


def test_some_word_counts_are_near_the_overflow_points():
    seen = []

    @settings(max_examples=50, deadline=None)
    @given(counts=word_counts())
    def collect(counts):
        seen.extend(counts[0].values())

    collect()
    assert any(abs(n - 2**32) <= 3 or abs(n - 2**31) <= 3 or abs(n - 2**63) <= 3 for n in seen)


@settings(max_examples=examples(10), deadline=None)
@given(text=texts("contractions", pattern="cl100k_base"))
def test_texts_take_a_pattern(text):
    assert isinstance(text, str)


def test_a_planted_bug_fails_with_verify_s_report():
    with pytest.raises(AssertionError) as e:
        assert_trains_like_reference(train_smallest_bytes, "ab ab ba ba", 258)
    assert "tie-rule" in str(e.value) and "smallest-bytes" in str(e.value)


def test_encoders_are_held_to_the_reference(tmp_path):
    vocab, merges = train_from_texts(["low lower lowest newer wider news " * 4], 300, ["<|endoftext|>"])
    path = str(tmp_path / "model.hex.json")
    write_model(path, "json", vocab, merges, ["<|endoftext|>"])
    tok = Tokenizer(vocab, merges, ["<|endoftext|>"])
    assert_encodes_like_reference(tok.encode, "the lowest<|endoftext|> newer", path)
    with pytest.raises(AssertionError) as e:
        assert_encodes_like_reference(lambda t: encode_leftmost_merge(path, t), " lower", path)
    assert "merges are applied differently" in str(e.value)
