"""``refbpe.testing``: the fuzzer's strategies and the reference as assertions, for other projects' tests.

    from hypothesis import given, settings
    from refbpe.testing import assert_trains_like_reference, corpora

    from my_bpe import train_bpe               # (input_path, vocab_size, special_tokens) -> (vocab, merges)

    @settings(max_examples=200, deadline=None)
    @given(corpora("ties"))                    # or any class of refbpe.testing.CLASSES
    def test_trains_like_reference(corpus):
        assert_trains_like_reference(train_bpe, corpus.text, corpus.vocab_size, corpus.special_tokens)

Modules: ``atoms`` (text atoms, plain data), ``strategies`` (Hypothesis
strategies: ``corpora``, ``texts``, ``word_counts``, one class each) and
``asserts`` (``assert_trains_like_reference``, ``assert_encodes_like_reference``:
an ``AssertionError`` whose message is verify's report).  Hypothesis is an
optional dependency (``pip install 'refbpe[fuzz]'``); the strategies raise
``ImportError`` without it, the assertions work without it.
"""

from .asserts import assert_encodes_like_reference, assert_trains_like_reference
from .strategies import CLASSES, COUNT_CLASSES, Corpus, corpora, texts, word_counts

__all__ = [
    "CLASSES",
    "COUNT_CLASSES",
    "Corpus",
    "assert_encodes_like_reference",
    "assert_trains_like_reference",
    "corpora",
    "texts",
    "word_counts",
]
