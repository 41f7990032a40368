"""Assertions for other projects' tests: their trainer or encoder against the reference.

``assert_trains_like_reference(train, text, vocab_size, special_tokens)`` writes
``text`` to a temporary file, calls ``train(path, vocab_size, special_tokens)``
(CS336's signature, returning ``(vocab, merges)``) and compares with the
reference; ``assert_encodes_like_reference(encode, text, ...)`` compares
``encode(text)`` with the reference's ids.  On a difference each raises
``AssertionError`` whose message is ``refbpe verify``'s report (the first
divergence, the counts involved, the cause when one hypothesis explains it).
Both run in this process; the fuzzer's child processes are for code that may
crash or hang.  Cost: one reference training (or encoding) of the input.
"""

import os
import tempfile

from ..corpus.sequences import count_texts
from ..encode.tokenizer import Tokenizer
from ..formats import Model
from ..learn.profiles import ProfileLimit
from ..loader import read_model
from ..verify.judge import judge_encoding, judge_training

__all__ = ["assert_encodes_like_reference", "assert_trains_like_reference"]


def assert_trains_like_reference(train, text, vocab_size, special_tokens=(), *, profile=None, pattern=None):
    """Fail with verify's report unless ``train`` learns the reference's merges and vocab (as a set).

    >>> from refbpe import train_bpe
    >>> assert_trains_like_reference(train_bpe, "low low lower lowest", 260, ["<|endoftext|>"])
    """
    special_tokens = list(special_tokens)
    with tempfile.TemporaryDirectory(prefix="refbpe-testing-") as d:
        path = os.path.join(d, "input.txt")
        with open(path, "wb") as f:
            f.write(text.encode("utf-8", "surrogatepass"))
        vocab, merges = train(path, vocab_size, special_tokens)
        theirs = Model(dict(vocab), [(bytes(a), bytes(b)) for a, b in merges], special_tokens, "json", True)
        counts = count_texts([text], "documents", special_tokens, pattern)
        try:
            report = judge_training(
                counts, vocab_size, special_tokens, theirs, [text], [path], profile=profile, pattern=pattern
            )
        except ProfileLimit:
            return
    if not report["identical"]:
        raise AssertionError(report["explanation"])


def assert_encodes_like_reference(encode, text, model, special_tokens=(), *, pattern=None):
    """Fail with verify's report unless ``encode(text)`` gives the reference's ids under
    ``model``: a ``formats.Model``, a path refbpe reads, or a tiktoken encoding's name.

    >>> tok = Tokenizer.from_tiktoken("cl100k_base")  # doctest: +SKIP
    >>> assert_encodes_like_reference(tok.encode, "Hello world", "cl100k_base")  # doctest: +SKIP
    """
    tokenizer = None
    if isinstance(model, str) and not os.path.exists(model):
        tokenizer = Tokenizer.from_tiktoken(model, pattern=pattern)
        model = Model(tokenizer.vocab, tokenizer.merges, tokenizer.special_tokens, "tiktoken", True)
    elif not isinstance(model, Model):
        model = read_model(model, "auto", special_tokens)
    report = judge_encoding(model, text, [int(i) for i in encode(text)], pattern, tokenizer)
    if not report["identical"]:
        raise AssertionError(report["explanation"])
