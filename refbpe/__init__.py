"""refbpe: the reference implementation of byte-level BPE (CS336 semantics).

    vocab, merges = refbpe.train_bpe("corpus.txt", 10000, ["<|endoftext|>"])
    tok = refbpe.Tokenizer(vocab, merges, ["<|endoftext|>"])
    tok.decode(tok.encode("Hello world")) == "Hello world"

The tree is the pipeline:

    ``pretokenize``  split patterns: hand-written scanners over pinned Unicode tables
    ``specials``     split text on special tokens first
    ``corpus``       inputs read in safe chunks, counted in parallel, count files, id files
    ``merge``        the merge engine (heap with lazy deletion, inverted index)
    ``train``        ``train_bpe`` and friends: counting, then merging, then the vocab
    ``profiles``     trainers' conventions (cs336, rustbpe, hf)
    ``extend``       continuing a model: its merges replayed, its ids kept
    ``tokenizer``    encode and decode
    ``tiktoken_api`` tiktoken's ``Encoding`` on the tokenizer's engine, encodings by name
    ``encoding_models``  which encoding an OpenAI model uses (``encoding_for_model``)
    ``batch``        a function over a list of texts in forked worker processes
    ``formats``      every model format, one module each
    ``analysis``     compression figures and token boundaries of a trained model
    ``naive``        the short, slow oracle the tests hold the fast code to
    ``verify``       comparing another implementation with the reference
    ``fuzz``         generating inputs that break other implementations, and the conformance pack
    ``testing``      the fuzzer's strategies and the reference as assertions, for other projects' tests
    ``atomic``       files written atomically
    ``quoting``      user bytes in an error message, escaped and short
    ``cli``          the command line, a layer on top that the library never imports

``__all__`` is the public API, described in ``docs/api.md``: the trainers, counting
and word-count files, ``Tokenizer``, the split patterns, and model files.
"""

from .corpus.count import count_words
from .corpus.countfile import read_counts, write_counts
from .encoding_models import encoding_for_model, encoding_name_for_model
from .formats import FORMATS, Model, read_model, write_model
from .pretokenize import Pattern, get_pattern, pattern_names
from .tiktoken_api import Encoding, get_encoding, list_encoding_names
from .tokenizer import Tokenizer
from .train import train_bpe, train_from_count_files, train_from_counts, train_from_texts

__version__ = "0.1.0"

__all__ = [
    "train_bpe",
    "train_from_texts",
    "train_from_counts",
    "train_from_count_files",
    "count_words",
    "read_counts",
    "write_counts",
    "Tokenizer",
    "Pattern",
    "get_pattern",
    "pattern_names",
    "Model",
    "read_model",
    "write_model",
    "FORMATS",
    "__version__",
    "Encoding",
    "get_encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "list_encoding_names",
]
