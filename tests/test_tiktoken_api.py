"""``refbpe.Encoding`` is a drop-in for ``tiktoken.Encoding``: same ids, results and exceptions.

For gpt2, cl100k_base and o200k_base (tiktoken read from the shared offline
cache), on generated ``str`` (lone and paired surrogates and special-token
text included) and ``bytes`` (valid, truncated and arbitrary), every public
method gives tiktoken's result, or raises an exception of tiktoken's type.
Generated text keeps to characters assigned in the ``unicodedata`` of the
running CPython (Unicode 14 for 3.11): newer ones are classified by
refbpe's and tiktoken's Unicode tables differently (tests/test_tiktoken_ids.py).
Then: pickling and copying, an ``Encoding`` built in memory against the one
loaded by name, a ``pat_str`` refbpe has no scanner for, the names and model
tables, batches in processes, and the engine's own entry points
(``Tokenizer.encode_utf8``, ``encode_iterable``) on the same inputs.
"""

import copy
import os
import pickle
import unicodedata

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from support import IS_PYPY, corpus_path, cs336_path, edge_atoms, examples, shared_root

import refbpe
from refbpe.encode.tokenizer import Tokenizer
from refbpe.encodings.api import Encoding, encoding_definition

pytestmark = pytest.mark.slow  # each test needs an encoding built from its ranks: seconds under CPython

NAMES = ["gpt2", "cl100k_base", "o200k_base"]
_LOADED = {}


def _use_shared_tiktoken_cache():
    cache = os.path.join(shared_root(), "data", "tiktoken", "cache")
    if not os.path.isdir(cache):
        pytest.skip("tiktoken cache not found at %s (set REFBPE_SHARED to the shared/ directory)" % cache)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache


def ours(name):
    _use_shared_tiktoken_cache()
    return refbpe.get_encoding(name)


def theirs(name):
    if IS_PYPY:
        pytest.skip("tiktoken is not installed for PyPy")
    tiktoken = pytest.importorskip("tiktoken")
    _use_shared_tiktoken_cache()
    return tiktoken.get_encoding(name)


def pair(name):
    if name not in _LOADED:
        _LOADED[name] = (ours(name), theirs(name))
    return _LOADED[name]


def outcome(f, *args, **kwargs):
    """What a call gives: ("ok", result) or ("raises", exception type)."""
    try:
        return "ok", f(*args, **kwargs)
    except Exception as e:  # the type is what is compared
        return "raises", type(e)


def _assigned(s):
    return all(unicodedata.category(c) != "Cn" for c in s)


SPECIALS = ["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", "<|endoftext", "|>"]
high = st.characters(min_codepoint=0xD800, max_codepoint=0xDBFF)
low = st.characters(min_codepoint=0xDC00, max_codepoint=0xDFFF)
assigned_char = st.characters(blacklist_categories=("Cn",))  # surrogates included
atoms = st.one_of(
    edge_atoms().filter(_assigned),
    st.text(assigned_char, min_size=1, max_size=4),
    high,
    low,
    st.tuples(high, low).map("".join),
    st.sampled_from(SPECIALS),
)


def _repaired(text):
    """What tiktoken encodes: surrogate pairs joined, lone ones U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _texts(max_atoms):
    """Text whose characters, once surrogate pairs are joined, are all assigned (see the docstring)."""
    return st.lists(atoms, max_size=max_atoms).map("".join).filter(lambda t: _assigned(_repaired(t)))


texts = _texts(12)


def _valid_prefix_assigned(data):
    try:
        data.decode("utf-8")
        valid = len(data)
    except UnicodeDecodeError as e:
        valid = e.start
    return _assigned(data[:valid].decode("utf-8"))  # bytes cannot hold surrogates: nothing to join


byte_strings = st.one_of(
    st.binary(max_size=24),
    st.tuples(texts, st.binary(max_size=4), texts).map(
        lambda t: t[0].encode("utf-8", "replace") + t[1] + t[2].encode("utf-8", "replace")
    ),
    st.tuples(texts, st.integers(0, 3)).map(lambda t: t[0].encode("utf-8", "replace")[: -t[1] or None]),
).filter(_valid_prefix_assigned)

EXAMPLES = [
    "\ud83d\udc4d",
    "\ud83d",
    "a\udc4d b",
    "hi \ud83d\ud83d\udc4d",
    "<|endoftext|>",
    "x <|endoftext|> \ud800",
    "",
    "  \n\t ",
]
BYTE_EXAMPLES = [
    b" \xec\x8b\xa4\xed",
    b"\x80",
    b"hello \x80 world",
    b"a  \n\t \xff\xfe",
    b"",
    b"\xed\xa0\x80",
]


def _with_examples(values):
    def decorate(f):
        for v in values:
            f = example(v)(f)
        return f

    return decorate


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(300))
@given(text=texts)
@_with_examples(EXAMPLES)
def test_encode_matches_tiktoken_on_any_str(name, text):
    enc, ref = pair(name)
    assert enc.encode_ordinary(text) == ref.encode_ordinary(text)
    assert outcome(enc.encode, text) == outcome(ref.encode, text)
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert enc.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
    some = {"<|endoftext|>"}
    assert outcome(enc.encode, text, allowed_special=some) == outcome(ref.encode, text, allowed_special=some)
    assert outcome(enc.encode, text, allowed_special=some, disallowed_special=()) == outcome(
        ref.encode, text, allowed_special=some, disallowed_special=()
    )


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(300))
@given(data=byte_strings)
@_with_examples(BYTE_EXAMPLES)
def test_encode_bytes_matches_tiktoken_on_any_bytes(name, data):
    enc, ref = pair(name)
    assert enc._encode_bytes(data) == ref._encode_bytes(data)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(100))
@given(data=byte_strings)
@_with_examples(BYTE_EXAMPLES)
def test_engine_encode_utf8_gives_tiktokens_ids_and_consistent_segments(name, data):
    """``Tokenizer.encode_utf8`` (what ``refbpe encode`` runs) never fails on bytes, and its
    per-stretch figures add up; with no special token in the bytes it is ``_encode_bytes``."""
    enc, ref = pair(name)
    segments = []
    ids = enc._core.encode_utf8(data, segments)
    assert sum(t for _, t in segments) + (len(segments) - 1) == len(ids)  # one id per special token
    if not any(s.encode() in data for s in enc.special_tokens_set):
        assert ids == ref._encode_bytes(data)
        assert sum(b for b, _ in segments) == len(data)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(100))
@given(text=texts, cut=st.integers(0, 40))
def test_encode_iterable_repairs_surrogates_as_the_whole_text(name, text, cut):
    """A surrogate pair split between two chunks is still joined."""
    enc, ref = pair(name)
    chunks = [text[:cut], text[cut:]]
    assert list(enc._core.encode_iterable(chunks)) == ref.encode(text, allowed_special="all")


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(25))
@given(text=_texts(4))
@example("hello fanta")
@example("x  ")
@example("<|endoftext|>")
def test_encode_with_unstable_matches_tiktoken(name, text):
    enc, ref = pair(name)
    for kwargs in ({}, {"allowed_special": "all"}):
        got, want = (
            outcome(enc.encode_with_unstable, text, **kwargs),
            outcome(ref.encode_with_unstable, text, **kwargs),
        )
        if want[0] == "ok":
            want = ("ok", (want[1][0], sorted(list(c) for c in want[1][1])))
        assert got == want


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(200))
@given(data=st.data())
def test_decoding_matches_tiktoken(name, data):
    enc, ref = pair(name)
    n = ref.n_vocab
    ids = st.one_of(st.integers(0, n - 1), st.integers(-3, n + 3), st.sampled_from([2**32, 2**40, -(2**40)]))
    tokens = data.draw(st.lists(st.one_of(st.integers(0, n - 1), ids), max_size=8))
    for method in ("decode_bytes", "decode_tokens_bytes", "decode_with_offsets"):
        assert outcome(getattr(enc, method), tokens) == outcome(getattr(ref, method), tokens), method
    for errors in ("replace", "strict", "ignore", "surrogateescape"):
        assert outcome(enc.decode, tokens, errors=errors) == outcome(ref.decode, tokens, errors=errors)
    token = data.draw(ids)
    assert outcome(enc.decode_single_token_bytes, token) == outcome(ref.decode_single_token_bytes, token)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("tokens", [[1.0], ["a"], "abc", [True], (5, 6), None, [[1]]])
def test_decoding_odd_arguments_raises_as_tiktoken(name, tokens):
    enc, ref = pair(name)
    for method in ("decode_bytes", "decode", "decode_tokens_bytes"):
        assert outcome(getattr(enc, method), tokens) == outcome(getattr(ref, method), tokens), method


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(200))
@given(data=st.data())
def test_encode_single_token_matches_tiktoken(name, data):
    enc, ref = pair(name)
    if ("pieces", name) not in _LOADED:
        tokens = st.sampled_from(ref.token_byte_values())
        _LOADED["pieces", name] = st.one_of(
            tokens,
            tokens.map(lambda b: b.decode("utf-8", "replace")),
            st.sampled_from(sorted(ref.special_tokens_set)),
            st.binary(max_size=3),
            texts,
        )
    piece = data.draw(_LOADED["pieces", name])
    assert outcome(enc.encode_single_token, piece) == outcome(ref.encode_single_token, piece)
    if isinstance(piece, bytes) and piece:
        assert enc._encode_single_piece(piece) == ref._encode_single_piece(piece)


@pytest.mark.parametrize("name", NAMES)
def test_attributes_match_tiktoken(name):
    enc, ref = pair(name)
    assert repr(enc) == repr(ref)
    assert enc.name == ref.name
    assert enc._pat_str == ref._pat_str
    assert enc._special_tokens == ref._special_tokens
    assert enc._mergeable_ranks == ref._mergeable_ranks
    assert (enc.n_vocab, enc.max_token_value, enc.eot_token) == (
        ref.n_vocab,
        ref.max_token_value,
        ref.eot_token,
    )
    assert enc.special_tokens_set == ref.special_tokens_set
    assert enc.token_byte_values() == ref.token_byte_values()
    for token in (0, ref.eot_token, ref.max_token_value, ref.n_vocab):
        assert enc.is_special_token(token) == ref.is_special_token(token)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(50))
@given(text=texts)
def test_encode_to_numpy_matches_tiktoken(name, text):
    np = pytest.importorskip("numpy")
    enc, ref = pair(name)
    got, want = outcome(enc.encode_to_numpy, text), outcome(ref.encode_to_numpy, text)
    assert got[0] == want[0]
    if got[0] == "ok":
        assert got[1].dtype == want[1].dtype == np.uint32
        assert got[1].tolist() == want[1].tolist()
        assert got[1].flags.writeable == want[1].flags.writeable
    else:
        assert got == want


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(30))
@given(batch=st.lists(texts, max_size=5))
def test_small_batches_match_tiktoken(name, batch):
    enc, ref = pair(name)
    assert enc.encode_ordinary_batch(batch) == ref.encode_ordinary_batch(batch)
    assert outcome(enc.encode_batch, batch) == outcome(ref.encode_batch, batch)
    assert enc.encode_batch(batch, allowed_special="all", num_threads=2) == ref.encode_batch(
        batch, allowed_special="all", num_threads=2
    )
    ids = ref.encode_ordinary_batch(batch)
    for errors in ("replace", "strict"):
        assert outcome(enc.decode_batch, ids, errors=errors) == outcome(ref.decode_batch, ids, errors=errors)
    assert enc.decode_bytes_batch(ids) == ref.decode_bytes_batch(ids)


@pytest.mark.parametrize("method", ["encode_batch", "encode_ordinary_batch", "decode_batch"])
def test_batch_thread_count_is_checked_as_tiktoken(method):
    enc, ref = pair("cl100k_base")
    assert outcome(getattr(enc, method), [], num_threads=0) == outcome(
        getattr(ref, method), [], num_threads=0
    )


@pytest.fixture
def processes_for_any_batch(monkeypatch):
    from refbpe.encode import batch

    monkeypatch.setattr(batch, "_PROCESSES_FROM", 0)


def test_large_batch_runs_in_processes_and_matches_tiktoken(processes_for_any_batch):
    """The forked workers' results, in order, and the first error."""
    enc, ref = pair("cl100k_base")
    with open(corpus_path("english_small.txt"), encoding="utf-8") as f:
        docs = f.read().split("<|endoftext|>")
    assert enc.encode_ordinary_batch(docs, num_threads=2) == ref.encode_ordinary_batch(docs, num_threads=2)
    poisoned = docs[:3] + ["x<|endofprompt|>"] + docs[3:]
    assert outcome(enc.encode_batch, poisoned, num_threads=2) == ("raises", ValueError)


@pytest.mark.parametrize("name", NAMES)
def test_pickle_and_copy_of_a_loaded_encoding_share_it(name):
    enc = ours(name)
    for clone in (pickle.loads(pickle.dumps(enc)), copy.copy(enc), copy.deepcopy(enc)):
        assert clone.__dict__ is enc.__dict__
    assert len(pickle.dumps(enc)) < 100  # by name


def _in_memory(name, new_name):
    definition = encoding_definition(name)
    return Encoding(
        new_name,
        pat_str=definition["pat_str"],
        mergeable_ranks=dict(definition["mergeable_ranks"]),
        special_tokens=dict(definition["special_tokens"]),
    )


def _in_memory_cl100k():
    if "in-memory" not in _LOADED:
        ours("cl100k_base")
        _LOADED["in-memory"] = _in_memory("cl100k_base", "cl100k_copy")
    return _LOADED["in-memory"]


@settings(max_examples=examples(100))
@given(text=texts, data=byte_strings)
def test_an_encoding_built_in_memory_equals_the_one_loaded_by_name(text, data):
    enc = ours("cl100k_base")
    mine = _in_memory_cl100k()
    assert mine._pat_str == enc._pat_str and mine._mergeable_ranks == enc._mergeable_ranks
    assert mine.n_vocab == enc.n_vocab and mine.special_tokens_set == enc.special_tokens_set
    assert mine.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert mine.encode_ordinary(text) == enc.encode_ordinary(text)
    assert mine._encode_bytes(data) == enc._encode_bytes(data)


def test_an_in_memory_encoding_pickles_by_its_definition():
    mine = _in_memory_cl100k()
    text = "hello \ud83d\udc4d <|endoftext|> world"
    for clone in (pickle.loads(pickle.dumps(mine)), copy.deepcopy(mine)):
        assert clone is not mine and clone.__dict__ is not mine.__dict__
        assert clone.name == "cl100k_copy" and clone._mergeable_ranks == mine._mergeable_ranks
        assert clone.encode(text, allowed_special="all") == mine.encode(text, allowed_special="all")


def test_explicit_n_vocab_is_checked():
    ranks = {bytes([b]): b for b in range(256)}
    Encoding(
        "bytes", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={"<s>": 256}, explicit_n_vocab=257
    )
    with pytest.raises(AssertionError):
        Encoding("bytes", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={}, explicit_n_vocab=257)


CUSTOM_PAT = r"""\s+|\S+"""  # no scanner: the regex module splits


@settings(max_examples=examples(150))
@given(text=texts, data=byte_strings)
def test_a_pattern_without_a_scanner_matches_tiktoken(text, data):
    """An ``Encoding`` with a ``pat_str`` refbpe has no scanner for, against tiktoken's with the same."""
    tiktoken = pytest.importorskip("tiktoken")
    if "custom" not in _LOADED:
        ranks = ours("gpt2")._mergeable_ranks
        specials = {"<|endoftext|>": 50256}
        _LOADED["custom"] = (
            Encoding("custom", pat_str=CUSTOM_PAT, mergeable_ranks=ranks, special_tokens=specials),
            tiktoken.Encoding("custom", pat_str=CUSTOM_PAT, mergeable_ranks=ranks, special_tokens=specials),
        )
    enc, ref = _LOADED["custom"]
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert enc._encode_bytes(data) == ref._encode_bytes(data)
    assert outcome(enc._encode_only_native_bpe, text) == outcome(ref._encode_only_native_bpe, text)


def test_names_and_models_match_tiktoken():
    tiktoken = pytest.importorskip("tiktoken")
    if IS_PYPY:
        pytest.skip("tiktoken is not installed for PyPy")
    from tiktoken import model

    assert refbpe.list_encoding_names() == tiktoken.list_encoding_names()
    names = list(model.MODEL_TO_ENCODING) + [p + "x" for p in model.MODEL_PREFIX_TO_ENCODING] + ["nope", ""]
    for m in names:
        assert outcome(refbpe.encoding_name_for_model, m) == outcome(tiktoken.encoding_name_for_model, m)
    assert refbpe.encoding_for_model("gpt-4") is ours("cl100k_base")
    for bad in ("nope", 3, None):
        assert outcome(refbpe.get_encoding, bad) == outcome(tiktoken.get_encoding, bad)


def test_r50k_base_has_gpt2s_ranks_and_o200k_harmony_o200ks():
    r50k, gpt2 = ours("r50k_base"), ours("gpt2")
    assert r50k._mergeable_ranks == gpt2._mergeable_ranks and r50k.name == "r50k_base"
    assert r50k.encode("hello <|endoftext|>", allowed_special="all") == [31373, 220, 50256]
    harmony = ours("o200k_harmony")
    assert harmony.encode("<|call|><|reserved_200018|>", allowed_special="all") == [200012, 200018]
    if not IS_PYPY:
        ref = theirs("o200k_harmony")
        assert harmony._special_tokens == ref._special_tokens and harmony.n_vocab == ref.n_vocab


@pytest.mark.parametrize("name", ["p50k_base", "p50k_edit"])
def test_p50k_encodings_load_when_their_file_is_found(name):
    try:
        enc = ours(name)
    except OSError as e:  # registry: cache.FileUnavailable
        pytest.skip("p50k_base.tiktoken is not available offline: %s" % e)
    assert enc.n_vocab == {"p50k_base": 50281, "p50k_edit": 50284}[name]
    assert enc.encode("    x") != ours("gpt2").encode("    x")  # p50k has whitespace-run tokens


def test_cs336_tokenizer_keeps_its_contract_and_encodes_any_bytes():
    """The CS336 ``Tokenizer`` matches every special token without being asked, and now takes any
    bytes (``encode_utf8(b"\\x80")`` was an IndexError) and repairs surrogates as tiktoken does."""
    tok = Tokenizer.from_files(
        cs336_path("gpt2_vocab.json"), cs336_path("gpt2_merges.txt"), ["<|endoftext|>"]
    )
    assert tok.encode("a<|endoftext|>") == [64, 50256]
    assert tok.encode_utf8(b"\x80") == [tok._id_of[b"\x80"]]
    assert tok.encode_utf8(b"hi<|endoftext|>\xff") == tok.encode("hi") + [50256, tok._id_of[b"\xff"]]
    assert tok.encode("\ud83d\udc4d") == tok.encode("\U0001f44d")
    assert tok.encode("\ud83d") == tok.encode("\ufffd")


@settings(max_examples=examples(100))
@given(data=byte_strings)
def test_cs336_encode_utf8_of_any_bytes_is_tiktokens_gpt2(data):
    enc, ref = pair("gpt2")
    if "cs336" not in _LOADED:
        vocab, merges = cs336_path("gpt2_vocab.json"), cs336_path("gpt2_merges.txt")
        _LOADED["cs336"] = Tokenizer.from_files(vocab, merges, ["<|endoftext|>"])
    tok = _LOADED["cs336"]
    assume(b"<|endoftext|>" not in data)
    assert tok.encode_utf8(data) == ref._encode_bytes(data)


@pytest.mark.parametrize("errors", ["replace", "ignore"])
def test_refbpe_encode_on_bytes_that_are_not_utf8_is_tiktoken_on_the_decoded_text(capsys, tmp_path, errors):
    import json

    from support import run_main

    enc, ref = pair("cl100k_base")
    data = b"hello \x80 world \xe2\x82 caf\xc3\xa9 \xed\xa0\x80 end\xff\n  \xf0\x9f"
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    status, out, err = run_main(
        capsys, "encode", "cl100k_base", path, "--errors", errors, "--json", "--quiet"
    )
    assert status == 0, err
    assert json.loads(out) == ref.encode_ordinary(data.decode("utf-8", errors))


def test_batches_in_processes_equal_one_by_one(processes_for_any_batch):
    """On every interpreter (no tiktoken needed): the forked path against a plain loop."""
    enc = ours("gpt2")
    with open(corpus_path("english_small.txt"), encoding="utf-8") as f:
        docs = f.read().split("<|endoftext|>")[:40]
    assert enc.encode_ordinary_batch(docs, num_threads=2) == [enc.encode_ordinary(d) for d in docs]
    poisoned = docs[:5] + ["<|endoftext|>"] + docs[5:]
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode_batch(poisoned, num_threads=2)
    assert enc.encode_batch(poisoned, num_threads=2, allowed_special="all")[5] == [enc.eot_token]
