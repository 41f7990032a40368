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
    ``piece_cuts``   where a pre-token may be cut without changing its ids
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
    ``lists``        an empty list with room reserved (PyPy), for the scanners and the encoder
    ``quoting``      user bytes in an error message, escaped and short
    ``cli``          the command line, a layer on top that the library never imports

``__all__`` is the public API, described in ``docs/api.md``: the trainers, counting
and word-count files, ``Tokenizer``, the split patterns, and model files.

Importing the package is cheap: each name is imported from its module on first use
(PEP 562's module ``__getattr__``), so ``refbpe train`` can restart under PyPy
(``cli/pypy_gc.py``) before paying for the modules, about 0.2 CPU seconds there
(``perf/startup.py``).  ``refbpe.formats``, ``refbpe.tokenizer`` and the other
modules load on first attribute access as well, as they did when this file imported them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for type checkers and readers: where each name lives
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

# name -> the module that defines it, as in the block above
_HOMES = {
    "count_words": ".corpus.count",
    "read_counts": ".corpus.countfile",
    "write_counts": ".corpus.countfile",
    "encoding_for_model": ".encoding_models",
    "encoding_name_for_model": ".encoding_models",
    "FORMATS": ".formats",
    "Model": ".formats",
    "read_model": ".formats",
    "write_model": ".formats",
    "Pattern": ".pretokenize",
    "get_pattern": ".pretokenize",
    "pattern_names": ".pretokenize",
    "Encoding": ".tiktoken_api",
    "get_encoding": ".tiktoken_api",
    "list_encoding_names": ".tiktoken_api",
    "Tokenizer": ".tokenizer",
    "train_bpe": ".train",
    "train_from_count_files": ".train",
    "train_from_counts": ".train",
    "train_from_texts": ".train",
}


def __getattr__(name):
    """A public name, imported from its module and kept here; else a submodule (``refbpe.formats``)."""
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name], __name__), name)
    else:
        try:
            value = importlib.import_module("." + name, __name__)
        except ModuleNotFoundError as e:
            if e.name != __name__ + "." + name:
                raise
            raise AttributeError("module %r has no attribute %r" % (__name__, name)) from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
