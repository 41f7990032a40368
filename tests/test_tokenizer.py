"""Encoding/decoding: CS336 expected ids, round trips, streaming, naive oracle, tiktoken."""

import io
import json
import os
import tempfile
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import (
    EMOJI,
    HEAVY,
    IS_PYPY,
    WORDS,
    cs336_path,
    examples,
    gpt2_tokenizer,
    mixed_text,
    shared_root,
)

from refbpe.corpus.count import count_words
from refbpe.encode.tokenizer import Tokenizer
from refbpe.learn.train import train_from_counts
from refbpe.naive import naive_encode

EOT = "<|endoftext|>"
SMALL_SPECIALS = [EOT, "<|eot|>", "<|eot|><|eot|>"]

_TOKENIZERS = {}


def small_tokenizer():
    """A refbpe-trained tokenizer (vocab 400) with overlapping special tokens."""
    if "small" not in _TOKENIZERS:
        text = open(cs336_path("tinystories_sample.txt"), encoding="utf-8").read()
        text += " ".join(WORDS + EMOJI) * 3 + "<|eot|><|eot|> don't we'll \u4e2d\u6587\u4e2d\u6587 \n\n\n  \t"
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "c.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            counts = count_words(path, SMALL_SPECIALS, workers=1)
        vocab, merges = train_from_counts(counts, 400, SMALL_SPECIALS)
        _TOKENIZERS["small"] = (Tokenizer(vocab, merges, SMALL_SPECIALS), vocab, merges)
    return _TOKENIZERS["small"]


# -- CS336 expected ids ---------------------------------------------------------------


def _expected_cases():
    path = os.path.join(shared_root(), "data", "cs336", "tiktoken_gpt2_expected_ids.json")
    if not os.path.exists(path):
        return [pytest.param(None, id="shared-data-missing")]
    with open(path, encoding="utf-8") as f:
        return [pytest.param(c, id=c["name"]) for c in json.load(f)["cases"]]


@pytest.mark.slow
@pytest.mark.parametrize("case", _expected_cases())
def test_cs336_expected_ids(case):
    if case is None:
        cs336_path("tiktoken_gpt2_expected_ids.json")  # skips with the path
    tok = gpt2_tokenizer(case["special_tokens"])
    if "file" in case:
        path = cs336_path(case["file"])
        with open(path, encoding="utf-8") as f:
            text = f.read()
    else:
        text = case["text"]
    ids = case["ids"]
    assert tok.encode(text) == ids
    assert tok.decode(ids) == text
    if "file" in case:
        with open(path, encoding="utf-8") as f:
            assert list(tok.encode_iterable(f)) == ids
    else:
        assert list(tok.encode_iterable(io.StringIO(text))) == ids


# -- properties -----------------------------------------------------------------------------

tok_text = mixed_text(max_atoms=20, extra=SMALL_SPECIALS + ["<|eot", "|>", "<|endof"])


@settings(max_examples=examples(100))
@given(tok_text)
@example("Hello<|endoftext|><|endoftext|> world<|eot|><|eot|><|eot|>\n\n  ")
def test_round_trip(text):
    for tok in (gpt2_tokenizer(), gpt2_tokenizer(()), small_tokenizer()[0]):
        assert tok.decode(tok.encode(text)) == text


def _splits(text, cuts):
    points = sorted({c % (len(text) + 1) for c in cuts}) if text else []
    bounds = [0] + points + [len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


@settings(max_examples=examples(150))
@given(tok_text, st.lists(st.integers(0, 10**6), max_size=12))
@example("a   \n\n  b<|eot|><|eot|>x we'll've", [3, 5, 7, 13, 15, 19, 27, 29])
@example("<|eot|><|eot|><|eot|>", [1, 2, 8, 9, 14])
@example("x \u3000 \u3000y it's", [2, 3, 4, 11, 12])
def test_encode_iterable_equals_encode(text, cuts):
    chunks = _splits(text, cuts)
    assert "".join(chunks) == text
    for tok in (small_tokenizer()[0], gpt2_tokenizer(SMALL_SPECIALS)):
        assert list(tok.encode_iterable(iter(chunks))) == tok.encode(text)


@settings(max_examples=examples(100))
@given(tok_text)
def test_encode_equals_naive_small_vocab(text):
    tok, vocab, merges = small_tokenizer()
    assert tok.encode(text) == naive_encode(text, vocab, merges, SMALL_SPECIALS)


@pytest.mark.slow
@settings(max_examples=examples(10))
@given(mixed_text(max_atoms=5, extra=[EOT]))
def test_encode_equals_naive_gpt2(text):
    tok = gpt2_tokenizer()
    vocab = {i: v for i, v in tok.vocab.items() if i != 50256}
    assert tok.encode(text) == naive_encode(text, vocab, tok.merges, [EOT])


# -- tiktoken ------------------------------------------------------------------------------------

# tiktoken's GPT-2 pre-tokenizer uses the Unicode tables of its Rust regex engine,
# which are older than the Unicode 17 table refbpe pins.  Characters assigned
# since then (or unassigned) would differ for reasons that are not bugs, so this
# comparison draws from characters that CPython 3.11's unicodedata (Unicode 14)
# knows to be assigned (category not 'Cn'), in the BMP, plus a few older emoji.
OLD_EMOJI = [
    "\U0001f600",
    "\U0001f643",
    "\U0001f44d\U0001f3fd",
    "\U0001f1fa\U0001f1f8",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\u2764\ufe0f",
    "\U0001f308",
]
_old_bmp_char = st.characters(max_codepoint=0xFFFF, blacklist_categories=("Cs", "Cn"))


def _tiktoken_or_skip():
    if IS_PYPY:
        pytest.skip("tiktoken is not installed for PyPy")
    try:
        import tiktoken
    except ImportError:
        pytest.skip("tiktoken is not importable")
    cache = os.path.join(shared_root(), "data", "cs336", "tiktoken_cache")
    if not os.path.isdir(cache):
        pytest.skip("tiktoken cache not found at %s" % cache)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    return tiktoken.get_encoding("gpt2")


_tiktoken_text = (
    st.lists(
        st.one_of(
            st.text(_old_bmp_char, min_size=1, max_size=5),
            st.sampled_from(
                OLD_EMOJI
                + WORDS[:20]
                + [EOT, "'s", "'ll", " 's", "''", "\n\n", "  ", "\t", "\u3000", "123", "\u0661\u0662"]
            ),
        ),
        max_size=15,
    )
    .map("".join)
    .filter(lambda t: all(unicodedata.category(c) != "Cn" for c in t))
)


@settings(max_examples=examples(150))
@given(_tiktoken_text)
def test_encode_equals_tiktoken(text):
    enc = _tiktoken_or_skip()
    assert gpt2_tokenizer().encode(text) == enc.encode(text, allowed_special="all")


# -- decoding ----------------------------------------------------------------------------------------


def test_decode_invalid_utf8_gives_replacement_character():
    tok = gpt2_tokenizer()
    id_of = {v: i for i, v in tok.vocab.items()}
    assert tok.decode([id_of[b"\x80"]]) == "\ufffd"  # a lone continuation byte
    assert (
        tok.decode([id_of[b"a"], id_of[b"\xe4"], id_of[b"\xb8"], id_of[b"b"]]) == "a\ufffdb"
    )  # truncated sequence
    assert tok.decode([id_of[b"\xff"], id_of[b"\xfe"]]) == "\ufffd\ufffd"
    small = small_tokenizer()[0]
    assert small.decode([0x80, 0xC3]) == b"\x80\xc3".decode("utf-8", "replace")
    assert small.decode(small.encode("\U0001f600")[:1]) == "\ufffd"


@pytest.mark.parametrize("bad", [50257, 10**9, -1])
def test_decode_unknown_id_raises_naming_it(bad):
    tok = gpt2_tokenizer()
    with pytest.raises(ValueError) as info:
        tok.decode([15496, bad, 11])
    assert str(bad) in str(info.value)


# -- streaming memory -------------------------------------------------------------------------------


@pytest.mark.slow
def test_encode_iterable_memory_is_bounded():
    if IS_PYPY:
        pytest.skip("tracemalloc is not available on PyPy")
    import tracemalloc

    tok = gpt2_tokenizer()
    words = [
        "Pneumonoultramicroscopicsilicovolcanoconiosis",
        "antidisestablishmentarianism",
        "Supercalifragilisticexpialidocious",
        "floccinaucinihilipilification",
    ]
    block = " ".join(words[k % 4] for k in range(600)) + "\n<|endoftext|>"  # ~21 KB, no long pre-token
    # tracemalloc slows encoding ~15x: 2 MB by default, 20 MB under the heavy profile.
    stream_size, limit = ((20 << 20), (5 << 20)) if HEAVY else ((2 << 20), (1 << 20))
    n_blocks = stream_size // len(block)

    def stream():
        for _ in range(n_blocks):
            yield block

    expected_per_block = tok.encode(block)
    tracemalloc.start()
    try:
        total = 0
        for _ in tok.encode_iterable(stream()):
            total += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n_blocks * len(block) >= stream_size - len(block)
    assert total == n_blocks * len(expected_per_block)
    assert peak < limit, "peak %d bytes while streaming %d bytes" % (peak, n_blocks * len(block))
