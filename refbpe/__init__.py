"""refbpe: the reference implementation of byte-level BPE (CS336 semantics).

    vocab, merges = refbpe.train_bpe("corpus.txt", 10000, ["<|endoftext|>"])
    tok = refbpe.Tokenizer(vocab, merges, ["<|endoftext|>"])
    tok.decode(tok.encode("Hello world")) == "Hello world"

The tree is the pipeline:

    ``pretokenize``  split patterns: hand-written scanners over pinned Unicode tables
    ``specials``     split text on special tokens first
    ``corpus``       inputs read in safe chunks, counted in parallel, count files, id files
    ``learn``        learning the merges: the engine, the trainers, profiles, extend
    ``encode``       the tokenizer: encode and decode, piece cuts, batches
    ``encodings``    tiktoken's ``Encoding`` API, encodings by name, their cache, the model table
    ``formats``      every model format, one module each
    ``analysis``     compression figures and token boundaries of a trained model
    ``loader``       ``read_model``: the one place that decides what a model source is
    ``naive``        the short, slow oracle the tests hold the fast code to
    ``verify``       comparing another implementation with the reference
    ``fuzz``         generating inputs that break other implementations, and the conformance pack
    ``testing``      the fuzzer's strategies and the reference as assertions, for other projects' tests
    ``_util``        small private helpers: atomic files, reserved lists, quoting in messages
    ``cli``          the command line, a layer on top that the library never imports

``__all__`` is the public API, described in ``docs/api.md``: the trainers, counting
and word-count files, ``Tokenizer``, the split patterns, and model files.

Importing the package is cheap: each name is imported from its module on first use
(PEP 562's module ``__getattr__``), so ``refbpe train`` can restart under PyPy
(``cli/pypy_gc.py``) before paying for the modules, about 0.2 CPU seconds there
(``perf/startup.py``).  ``refbpe.formats``, ``refbpe.encode.tokenizer`` and the other
modules load on first attribute access as well, as they did when this file imported them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for type checkers and readers: where each name lives
    from .corpus.count import count_words
    from .corpus.countfile import read_counts, write_counts
    from .encode.tokenizer import Tokenizer
    from .encodings.api import Encoding, get_encoding, list_encoding_names
    from .encodings.models import encoding_for_model, encoding_name_for_model
    from .formats import FORMATS, Model, write_model
    from .learn.train import train_bpe, train_from_count_files, train_from_counts, train_from_texts
    from .loader import read_model
    from .pretokenize import Pattern, get_pattern, pattern_names

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
    "encoding_for_model": ".encodings.models",
    "encoding_name_for_model": ".encodings.models",
    "FORMATS": ".formats",
    "Model": ".formats",
    "read_model": ".loader",
    "write_model": ".formats",
    "Pattern": ".pretokenize",
    "get_pattern": ".pretokenize",
    "pattern_names": ".pretokenize",
    "Encoding": ".encodings.api",
    "get_encoding": ".encodings.api",
    "list_encoding_names": ".encodings.api",
    "Tokenizer": ".encode.tokenizer",
    "train_bpe": ".learn.train",
    "train_from_count_files": ".learn.train",
    "train_from_counts": ".learn.train",
    "train_from_texts": ".learn.train",
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
