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
    most = limit << refbpe.encode.piece_ids._CACHE_DOUBLINGS  # a generation may have doubled
    assert len(tok._cache) <= most and len(tok._small_cache) <= most
    assert len(tok._old) <= most and len(tok._small_old) <= most


def _words(n, length):
    """``n`` distinct words of ``length`` letters (a, b, ... in base 26), each with a leading space."""
    out = []
    for k in range(n):
        letters = []
        for _ in range(length):
            k, r = divmod(k, 26)
            letters.append("abcdefghijklmnopqrstuvwxyz"[r])
        out.append(" " + "".join(letters))
    return out


def test_a_generation_doubles_while_its_pieces_come_back(monkeypatch):
    _, vocab, merges = small_tokenizer()
    tok = Tokenizer(vocab, merges, SMALL_SPECIALS)
    monkeypatch.setattr(refbpe.encode.piece_ids, "_CACHE_LIMIT", 16)
    # Working sets between one generation and two: their pieces come back from the previous
    # one, so it doubles (16 -> 32 -> 64), and no further, though 96 would have it double again.
    words = _words(96, 9)  # pieces of 10 bytes: the cache of bytes keys
    text = "".join(words[:24] * 4 + words[:48] * 4 + words[:96] * 4)
    assert tok.encode(text) == naive_encode(text, vocab, merges, SMALL_SPECIALS)
    assert tok._grown == refbpe.encode.piece_ids._CACHE_DOUBLINGS == 2
    assert len(tok._cache) <= 16 << tok._grown
    assert tok.encode(text) == naive_encode(text, vocab, merges, SMALL_SPECIALS)


def test_a_generation_stays_small_when_its_pieces_do_not_come_back(monkeypatch):
    _, vocab, merges = small_tokenizer()
    tok = Tokenizer(vocab, merges, SMALL_SPECIALS)
    monkeypatch.setattr(refbpe.encode.piece_ids, "_CACHE_LIMIT", 16)
    text = "".join(_words(400, 9))  # every piece once
    assert tok.encode(text) == naive_encode(text, vocab, merges, SMALL_SPECIALS)
    assert tok._grown == 0
    assert len(tok._cache) <= 16


def test_the_small_cache_starts_at_its_largest_generation(monkeypatch):
    """Pieces under 8 bytes (int keys): a generation holds ``_CACHE_LIMIT << _CACHE_DOUBLINGS``
    from the start, rotates there, and grows no further."""
    _, vocab, merges = small_tokenizer()
    tok = Tokenizer(vocab, merges, SMALL_SPECIALS)
    monkeypatch.setattr(refbpe.encode.piece_ids, "_CACHE_LIMIT", 16)
    most = 16 << refbpe.encode.piece_ids._CACHE_DOUBLINGS
    words = _words(most + 16, 4)  # pieces of 5 bytes
    text = "".join(words[:most])
    assert tok.encode(text) == naive_encode(text, vocab, merges, SMALL_SPECIALS)
    assert len(tok._small_cache) == most and not tok._small_old  # held, not rotated
    text = "".join(words * 3)
    assert tok.encode(text) == naive_encode(text, vocab, merges, SMALL_SPECIALS)
    assert len(tok._small_old) == most  # each generation rotated at its largest
    assert len(tok._small_cache) <= most and len(tok._small_old) <= most and tok._small_old


def test_each_cached_form_gives_the_ids_again():
    """Long pieces of one, two and more tokens are cached as an int, a pair and a list; a
    second call, answered from the cache, gives each piece's ids again, in order."""
    _, vocab, merges = small_tokenizer()
    tok = Tokenizer(vocab, merges, SMALL_SPECIALS)
    words = [t.decode() for t in vocab.values() if t[:1] == b" " and t[1:].isalpha() and len(t) >= 4]
    tails = [t.decode() for t in vocab.values() if t.isalpha() and t.islower()]
    pieces = [w + t for w in words[:40] for t in tails[:40]] + words + _words(50, 9)
    pieces = [p for p in pieces if len(p.encode()) >= 8]
    text = "".join(pieces)
    expected = naive_encode(text, vocab, merges, SMALL_SPECIALS)
    assert tok.encode(text) == expected
    sizes = {len(naive_encode(p, vocab, merges, SMALL_SPECIALS)) for p in pieces}
    assert {1, 2, 3} <= sizes  # the text has pieces of each form
    forms = {type(ids) for ids in tok._cache.values()}
    assert forms == {int, tuple, list}, forms
    assert all(len(ids) == 2 for ids in tok._cache.values() if type(ids) is tuple)
    assert all(len(ids) > 2 for ids in tok._cache.values() if type(ids) is list)
    assert tok.encode(text) == expected
    assert tok.encode(text + text) == expected + expected
