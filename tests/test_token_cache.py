"""The two-generation piece caches of Tokenizer._encode_bytes: rotating them never changes an id."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import EMOJI, examples, mixed_text
from test_tokenizer import SMALL_SPECIALS, small_tokenizer

import refbpe.encode.piece_ids
from refbpe.encode.tokenizer import Tokenizer
from refbpe.naive import naive_encode


@pytest.mark.slow
@settings(max_examples=examples(100))
@given(
    texts=st.lists(mixed_text(extra=EMOJI + SMALL_SPECIALS), min_size=1, max_size=6), limit=st.integers(1, 6)
)
def test_ids_with_tiny_caches_equal_the_naive_ones(texts, limit):
    _, vocab, merges = small_tokenizer()
    tok = Tokenizer(vocab, merges, SMALL_SPECIALS)
    saved = refbpe.encode.piece_ids._CACHE_LIMIT
    refbpe.encode.piece_ids._CACHE_LIMIT = limit  # a rotation every few pieces
    try:
        for text in texts + texts:  # the second round hits both generations
            assert tok.encode(text) == naive_encode(text, vocab, merges, SMALL_SPECIALS)
    finally:
        refbpe.encode.piece_ids._CACHE_LIMIT = saved
    assert len(tok._cache) <= limit and len(tok._small_cache) <= limit
    assert len(tok._old) <= limit and len(tok._small_old) <= limit
