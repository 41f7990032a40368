"""refbpe: the reference implementation of byte-level BPE (CS336 semantics).

    vocab, merges = refbpe.train_bpe("corpus.txt", 10000, ["<|endoftext|>"])
    tok = refbpe.Tokenizer(vocab, merges, ["<|endoftext|>"])
    tok.decode(tok.encode("Hello world")) == "Hello world"

Pipeline: ``io`` (bytes, chunking) -> ``pretokenize`` (GPT-2 scanner) ->
``count`` (parallel counting) -> ``merge`` (the engine) -> ``train`` ->
``tokenizer`` -> ``formats`` -> ``cli``.  ``naive`` is the oracle.
"""

from .tokenizer import Tokenizer
from .train import train_bpe

__version__ = "0.1.0"

__all__ = ["train_bpe", "Tokenizer", "__version__"]
