"""``Tokenizer.from_tiktoken`` gives tiktoken's ids for cl100k_base and o200k_base.

On every shared corpus (a 1 MB prefix; whole files under the heavy profile)
and on generated text, ``encode_ordinary`` and ``encode(text,
allowed_special="all")`` are compared with tiktoken's, which is read from the
shared offline cache (``TIKTOKEN_CACHE_DIR``).

Unicode versions: tiktoken's Rust regex tables are Unicode 16.0, refbpe's
pinned table is regex's 18.0.  Every code point they classify differently
(letter, number, o200k's word classes) is unassigned in Unicode 14.0, the
``unicodedata`` of CPython 3.11 (checked, under the heavy profile, by
``test_tables_differ_only_on_characters_new_since_unicode_14``): generated text
keeps to characters assigned there.
"""

import os
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import HEAVY, IS_PYPY, MARKS, WORDS_ANY_CASE, edge_atoms, examples, shared_root

from refbpe.encode.tokenizer import Tokenizer
from refbpe.naive import naive_rank_encode

ENCODINGS = ["cl100k_base", "o200k_base"]
CORPORA = [
    "english_small",
    "english_medium",
    "python_code",
    "russian",
    "chinese",
    "mixed_multilingual",
    "tinystories_ru",
]
PREFIX = 1 << 20

_LOADED = {}


def _tiktoken(name):
    if IS_PYPY:
        pytest.skip("tiktoken is not installed for PyPy")
    tiktoken = pytest.importorskip("tiktoken")
    cache = os.path.join(shared_root(), "data", "tiktoken", "cache")
    if not os.path.isdir(cache):
        pytest.skip("tiktoken cache not found at %s (set REFBPE_SHARED to the shared/ directory)" % cache)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    return tiktoken.get_encoding(name)


def _ranks_file(name):
    path = os.path.join(shared_root(), "data", "tiktoken", name + ".tiktoken")
    if not os.path.isfile(path):
        pytest.skip("shared data not found: %s (set REFBPE_SHARED to the shared/ directory)" % path)
    return path


def pair(name):
    """(refbpe Tokenizer, tiktoken Encoding), loaded once."""
    if name not in _LOADED:
        enc = _tiktoken(name)
        _ranks_file(name)
        _LOADED[name] = (Tokenizer.from_tiktoken(name), enc)
    return _LOADED[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
def test_known_encoding_matches_tiktokens_definition(name):
    tok, enc = pair(name)
    assert tok.pattern == name
    from refbpe.pretokenize.patterns import get_pattern

    assert get_pattern(name).regex == enc._pat_str
    assert {t: tok._special_id[t] for t in tok.special_tokens} == enc._special_tokens
    assert max(tok.vocab) == enc.max_token_value  # ids are ranks, not renumbered
    for i in (0, 1000, 100255, len(tok.vocab) // 2):
        if i in tok.vocab and i not in enc._special_tokens.values():
            assert tok.vocab[i] == enc.decode_single_token_bytes(i)


@pytest.mark.slow
def test_from_tiktoken_by_path_is_the_same_encoding():
    path = _ranks_file("cl100k_base")
    tok = Tokenizer.from_tiktoken(path)
    named = pair("cl100k_base")[0]
    assert tok.pattern == "cl100k_base" and tok.special_tokens == named.special_tokens
    text = "Hello <|endoftext|> world\n\n  x"
    assert tok.encode(text) == named.encode(text)


# -- corpora --------------------------------------------------------------------------------


def _refbpe_only(name):
    """The refbpe Tokenizer alone (tiktoken not needed)."""
    if name in _LOADED:
        return _LOADED[name][0]
    key = ("refbpe", name)
    if key not in _LOADED:
        _ranks_file(name)
        _LOADED[key] = Tokenizer.from_tiktoken(name)
    return _LOADED[key]


def _corpus_prefix(name):
    path = os.path.join(shared_root(), "data", "corpora", name + ".txt")
    if not os.path.isfile(path):
        pytest.skip("shared data not found: %s" % path)
    with open(path, "rb") as f:
        data = f.read() if HEAVY else f.read(PREFIX)
    return data.decode("utf-8", "ignore")  # a prefix may end inside a character


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("name", ENCODINGS)
def test_corpus_ids_equal_tiktoken(name, corpus):
    tok, enc = pair(name)
    text = _corpus_prefix(corpus)
    expected = enc.encode_ordinary(text)
    got = tok.encode_ordinary(text)
    if got != expected:
        at = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b) if got[:1] else 0
        pytest.fail(
            "%s/%s: first differing token #%d: %r vs %r"
            % (name, corpus, at, got[at : at + 5], expected[at : at + 5])
        )
    # With special tokens between documents, matched as tiktoken matches them.
    specials = list(enc._special_tokens)
    joined = "".join(line + specials[k % len(specials)] for k, line in enumerate(text[:200000].split("\n\n")))
    assert tok.encode(joined, allowed_special="all") == enc.encode(joined, allowed_special="all")


# -- generated text -----------------------------------------------------------------------------

SPECIAL_TEXT = [
    "<|endoftext|>",
    "<|endofprompt|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|endoftext",
]


def _assigned_in_unicode_14(text):
    return "".join(c for c in text if unicodedata.category(c) not in ("Cn", "Cs"))


tiktoken_text = st.lists(
    st.one_of(
        edge_atoms(),
        st.sampled_from(SPECIAL_TEXT),
        st.text(st.characters(blacklist_categories=("Cs", "Cn")), max_size=4),
    ),
    max_size=14,
).map(lambda parts: _assigned_in_unicode_14("".join(parts)))


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=examples(300))
@given(text=tiktoken_text)
@example(text="x\n  ")
@example(text="DON'T we'LL I'\u017f <|endoftext|><|endofprompt|>  \r\n\r\n ")
@example(text="\u0301HELLO A\u0301B\u01c5\u02b0x 12345 !/\n/")
def test_generated_ids_equal_tiktoken(name, text):
    tok, enc = pair(name)
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    some = {"<|endofprompt|>"}
    assert tok.encode(text, allowed_special=some, disallowed_special=()) == enc.encode(
        text, allowed_special=some, disallowed_special=()
    )


_piece_text = st.lists(
    st.one_of(
        st.sampled_from(WORDS_ANY_CASE + MARKS),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
    ),
    min_size=1,
    max_size=6,
).map("".join)


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=examples(300))
@given(text=_piece_text)
def test_piece_encoding_equals_the_plain_tiktoken_rule(name, text):
    """The fast pair table (every split of every token) merges as ``naive_rank_encode``
    does, on pieces of any length and script (no tiktoken needed: runs on PyPy too)."""
    from refbpe.pretokenize.patterns import get_pattern

    tok = _refbpe_only(name)
    for piece in get_pattern(name).pretokenize(text.encode("utf-8")) + [text.encode("utf-8")]:
        assert tok._encode_one(piece) == naive_rank_encode(piece, tok._rank_of)


@pytest.mark.parametrize("name", ENCODINGS)
def test_disallowed_special_raises_as_tiktoken_does(name):
    tok, enc = pair(name)
    text = "a <|endoftext|> b"
    with pytest.raises(ValueError):
        enc.encode(text)
    with pytest.raises(ValueError, match="disallowed special token '<|endoftext|>'"):
        tok.encode(text, allowed_special=set())
    with pytest.raises(ValueError):
        tok.encode(text, disallowed_special="all")
    with pytest.raises(ValueError):
        tok.encode(text, allowed_special={"<|endofprompt|>"})
    # Allowed, or not disallowed: no error, and tiktoken's ids.
    assert tok.encode(text, allowed_special={"<|endoftext|>"}) == enc.encode(
        text, allowed_special={"<|endoftext|>"}
    )
    assert tok.encode(text, disallowed_special=()) == enc.encode(text, disallowed_special=())
    # The CS336 call is unchanged: every special token is matched.
    assert tok.encode(text) == enc.encode(text, allowed_special="all")


# -- the Unicode difference (heavy) ---------------------------------------------------------------


@pytest.mark.skipif(
    not HEAVY, reason="probes all 1.1M code points through tiktoken (~2 min): heavy profile only"
)
def test_tables_differ_only_on_characters_new_since_unicode_14():
    """Each code point's class as tiktoken sees it, observed through an encoding whose
    only multi-byte tokens are the probes (a probe comes out as one id exactly when
    the pattern keeps it one piece), against refbpe's scanners."""
    tiktoken = pytest.importorskip("tiktoken")
    from refbpe.pretokenize.patterns import get_pattern

    cps = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
    for name, prefix in (
        ("cl100k_base", "a"),
        ("cl100k_base", "1"),
        ("o200k_base", "a"),
        ("o200k_base", "A"),
    ):
        pattern = get_pattern(name)
        ranks = {bytes([b]): b for b in range(256)}
        for cp in cps:
            ranks.setdefault((prefix + chr(cp)).encode("utf-8", "surrogatepass"), len(ranks))
        enc = tiktoken.Encoding("probe", pat_str=pattern.regex, mergeable_ranks=ranks, special_tokens={})
        texts = [prefix + chr(cp) for cp in cps]
        theirs = enc.encode_ordinary_batch(texts, num_threads=1)
        differ = [
            cp
            for cp, text, ids in zip(cps, texts, theirs)
            if (len(ids) == 1) != (len(pattern.piece_ends(text.encode("utf-8"))) == 1)
        ]
        assigned = [cp for cp in differ if unicodedata.category(chr(cp)) != "Cn"]
        assert not assigned, (name, prefix, ["U+%04X" % cp for cp in assigned[:10]])


_long_piece = st.integers(96, 400).flatmap(
    lambda n: st.sampled_from([" \t", " \n", "ab", " a", "-=", "01", " .", "ab ", "\t\n ", "的是"]).flatmap(
        lambda alphabet: st.text(alphabet=alphabet, min_size=n, max_size=n)
    )
)


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=examples(100))
@given(text=_long_piece)
def test_long_pieces_follow_the_plain_tiktoken_rule(name, text):
    """A tiktoken token may rank below one of its parts (cl100k_base: four spaces
    rank 257, three 262), so long pieces take the heap of (rank, slot), never the
    rank-by-rank path that a merge list allows."""
    tok = _refbpe_only(name)
    assert not tok._ranks_grow
    piece = text.encode("utf-8")
    assert tok._encode_one(piece) == naive_rank_encode(piece, tok._rank_of)


@pytest.mark.slow
def test_a_merge_list_lets_long_pieces_go_rank_by_rank(gpt2_files):
    assert Tokenizer.from_files(*gpt2_files, ["<|endoftext|>"])._ranks_grow


def _all_splits(rank_of, shift):
    """The pair table by its definition: every split of every token into two tokens."""
    pairs = {}
    for token, r in rank_of.items():
        for k in range(1, len(token)):
            left, right = rank_of.get(token[:k]), rank_of.get(token[k:])
            if left is not None and right is not None:
                pairs[(left << shift) | right] = (r << shift) | r
    return pairs


_abc_token = st.binary(min_size=2, max_size=7).map(lambda b: bytes(97 + x % 3 for x in b))


@settings(max_examples=examples(60))
@given(tokens=st.lists(_abc_token, max_size=60), order=st.randoms(use_true_random=False))
def test_the_pair_table_holds_every_split_into_two_tokens(tokens, order):
    """``_rank_pairs`` finds the left parts by a stack over the sorted tokens; over a
    three-letter alphabet most tokens begin with others, and many splits are not
    two tokens."""
    multi = sorted(set(tokens))
    order.shuffle(multi)
    rank_of = {bytes([b]): b for b in range(256)}
    rank_of.update({t: 256 + k for k, t in enumerate(multi)})
    tok = Tokenizer.from_ranks(rank_of)
    assert tok._ranks == _all_splits(rank_of, tok._shift)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_the_pair_table_of_a_known_encoding_holds_every_split(name):
    tok = _refbpe_only(name)
    assert tok._ranks == _all_splits(tok._rank_of, tok._shift)


# Runs of one script, as the GPT-4-family patterns leave them in one piece (letters, marks) or a
# GPT-2 piece would hold them; each piece here is encoded whole, 10-2000 bytes.
_SCRIPTS = {
    "han": (0x4E00, 0x9FFF),
    "hiragana": (0x3041, 0x3096),
    "katakana": (0x30A1, 0x30FA),
    "hangul": (0xAC00, 0xD7A3),
    "thai": (0x0E01, 0x0E3A),
    "devanagari": (0x0900, 0x097F),
    "arabic": (0x0620, 0x064A),
    "cyrillic": (0x0410, 0x044F),
    "greek": (0x0391, 0x03C9),
    "latin": (0x61, 0x7A),
    "emoji": (0x1F600, 0x1F64F),
}


def _script_run(script, size):
    """Code points of ``script`` making about ``size`` bytes of UTF-8 (at least 10)."""
    lo, hi = _SCRIPTS[script]
    n = max(size // len(chr(lo).encode("utf-8")), 10)
    return st.lists(st.integers(lo, hi), min_size=n, max_size=n).map(
        lambda cps: "".join(chr(c) for c in cps).encode("utf-8")
    )


_script_piece = st.tuples(st.sampled_from(sorted(_SCRIPTS)), st.integers(10, 2000)).flatmap(
    lambda drawn: _script_run(*drawn)
)


def _gpt2_ranks():
    """GPT-2 as tiktoken's ``gpt2`` encoding (its files from the shared offline cache)."""
    key = ("refbpe", "gpt2")
    if key not in _LOADED:
        cache = os.path.join(shared_root(), "data", "tiktoken", "cache")
        if not os.path.isdir(cache):
            pytest.skip("tiktoken cache not found at %s (set REFBPE_SHARED to the shared/ directory)" % cache)
        os.environ["TIKTOKEN_CACHE_DIR"] = cache
        _LOADED[key] = Tokenizer.from_tiktoken("gpt2")
    return _LOADED[key]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2"] + ENCODINGS)
@settings(max_examples=examples(25))
@given(piece=_script_piece)
def test_long_pieces_of_every_script_follow_the_plain_tiktoken_rule(name, piece):
    """Short pieces take the scan of ``_encode_piece``, pieces of ``_LONG_PIECE`` bytes
    or more the heap of (rank, slot); both against the plain rule, in every script."""
    tok = _gpt2_ranks() if name == "gpt2" else _refbpe_only(name)
    assert tok._encode_one(piece) == naive_rank_encode(piece, tok._rank_of)


@pytest.mark.parametrize("gap", [ord("z"), 0x80])
def test_a_vocab_without_a_byte_merges_pieces_without_it_and_refuses_those_with_it(gap):
    """The merging loop builds its list straight from the bytes only where every byte has a
    token (``RankTables._byte_gap``); otherwise each piece is checked first."""
    ranks = {bytes([i]): i for i in range(256) if i != gap}
    ranks.update({b"ab": 256, b"bc": 257, b"abc": 258, b"cab": 259})
    tok = Tokenizer.from_ranks(ranks)
    assert tok._byte_gap
    for piece in (b"abcab", b"cabcabc", b"a", b""):
        assert tok._merge_piece(piece) == naive_rank_encode(piece, ranks)
    with pytest.raises(ValueError, match="single-byte token"):
        tok._merge_piece(b"ab" + bytes([gap]) + b"c")
    complete = Tokenizer.from_ranks({**ranks, bytes([gap]): 260})
    assert not complete._byte_gap
