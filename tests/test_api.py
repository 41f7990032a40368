"""The public API (``refbpe.__all__``): options are keyword-only, so a misspelt one fails at
once, by name; the docstring examples run; the annotations resolve on every interpreter."""

import doctest
import importlib
import inspect
import os
import typing

import pytest
from support import REPO_ROOT

import refbpe
from refbpe.analysis.stats import corpus_stats
from refbpe.corpus.count import count_words
from refbpe.corpus.countfile import read_counts
from refbpe.corpus.encode import encode_to_file, iter_encoded
from refbpe.encode.tokenizer import Tokenizer
from refbpe.formats import read_model, write_model
from refbpe.learn.train import (
    count_corpus,
    train_bpe,
    train_from_count_files,
    train_from_counts,
    train_from_texts,
)
from refbpe.naive import naive_train_bpe, naive_train_bpe_from_counts, naive_train_from_texts

BYTES = {i: bytes([i]) for i in range(256)}

# Each call is complete but for its options; the misspelt one must fail before any work.
CALLS = {
    "train_bpe": lambda **kw: train_bpe("corpus.txt", 260, [], **kw),
    "train_from_texts": lambda **kw: train_from_texts(["low lower"], 260, **kw),
    "train_from_counts": lambda **kw: train_from_counts({b"low": 2}, 260, **kw),
    "train_from_count_files": lambda **kw: train_from_count_files(["c.counts.tsv"], 260, **kw),
    "count_corpus": lambda **kw: count_corpus(["corpus.txt"], [], **kw),
    "count_words": lambda **kw: count_words(["corpus.txt"], **kw),
    "read_counts": lambda **kw: read_counts("c.counts.tsv", **kw),
    "read_model": lambda **kw: read_model("model", **kw),
    "write_model": lambda **kw: write_model("model", "gpt2", BYTES, [], [], **kw),
    "Tokenizer": lambda **kw: Tokenizer(BYTES, [], **kw),
    "Tokenizer.encode": lambda **kw: Tokenizer(BYTES, []).encode("low", **kw),
    "Tokenizer.from_dir": lambda **kw: Tokenizer.from_dir("model", **kw),
    "encode_to_file": lambda **kw: encode_to_file(Tokenizer(BYTES, []), ["corpus.txt"], "ids.npy", **kw),
    "iter_encoded": lambda **kw: next(iter_encoded(Tokenizer(BYTES, []), ["corpus.txt"], **kw)),
    "corpus_stats": lambda **kw: corpus_stats(Tokenizer(BYTES, []), ["corpus.txt"], **kw),
    "naive_train_bpe": lambda **kw: naive_train_bpe("low lower", 260, **kw),
    "naive_train_from_texts": lambda **kw: naive_train_from_texts(["low lower"], 260, **kw),
    "naive_train_bpe_from_counts": lambda **kw: naive_train_bpe_from_counts({b"low": 2}, 260, **kw),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_misspelt_option_is_a_type_error_naming_it(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing is read or written, but if it were, it would be here
    with pytest.raises(TypeError, match="wrkers"):
        CALLS[name](wrkers=2)
    assert list(tmp_path.iterdir()) == []


def test_options_cannot_be_given_by_position():
    with pytest.raises(TypeError):
        train_bpe("corpus.txt", 260, [], 2)
    with pytest.raises(TypeError):
        train_from_counts({b"low": 2}, 260, [], "hf")
    with pytest.raises(TypeError):
        Tokenizer(BYTES, [], None, "cl100k_base")
    with pytest.raises(TypeError):
        Tokenizer(BYTES, []).encode("low", "all")


def _positional(function):
    return [
        (p.name, p.default)
        for p in inspect.signature(function).parameters.values()
        if p.kind == p.POSITIONAL_OR_KEYWORD and p.name not in ("self", "cls")
    ]


def test_the_cs336_signatures_stay():
    empty = inspect.Parameter.empty
    assert _positional(train_bpe) == [("input_path", empty), ("vocab_size", empty), ("special_tokens", empty)]
    assert _positional(Tokenizer.__init__) == [("vocab", empty), ("merges", empty), ("special_tokens", None)]
    assert _positional(Tokenizer.from_files) == [
        ("vocab_path", empty),
        ("merges_path", empty),
        ("special_tokens", None),
    ]


def _public_objects():
    """The functions and classes of ``refbpe.__all__``, by name."""
    found = {}
    for name in refbpe.__all__:
        obj = getattr(refbpe, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            found[name] = obj
    return found


# The modules defining the public names, and the merge engine's (its example is the engine's shape).
DOCTEST_MODULES = sorted({obj.__module__ for obj in _public_objects().values()} | {"refbpe.learn.merge"})


@pytest.mark.parametrize("module", DOCTEST_MODULES)
def test_docstring_examples_run(module):
    failed, attempted = doctest.testmod(importlib.import_module(module), verbose=False, report=True)
    assert attempted > 0 and failed == 0


def test_the_examples_of_docs_api_md_run():
    path = os.path.join(REPO_ROOT, "docs", "api.md")
    failed, attempted = doctest.testfile(path, module_relative=False, verbose=False, report=True)
    assert attempted > 0 and failed == 0


def public_functions(obj):
    """``obj`` itself if a function; a class's own public methods and ``__init__``."""
    if inspect.isfunction(obj):
        return [obj]
    return [
        getattr(obj, name)
        for name, member in vars(obj).items()
        if (not name.startswith("_") or name == "__init__")
        and isinstance(member, (staticmethod, classmethod, type(public_functions)))
    ]


@pytest.mark.parametrize("name", sorted(_public_objects()))
def test_annotations_resolve(name):
    """``from __future__ import annotations`` keeps them as strings; each must evaluate here
    (no ``X | Y`` on 3.9, no name missing from its module)."""
    for function in public_functions(_public_objects()[name]):
        assert "return" in typing.get_type_hints(function), function.__qualname__
