"""``piece_cuts``: a pre-token cut where no token spans it encodes to the same ids.

The cutter's one claim, that no token of the vocab is ``piece[i:j]`` across a place it
returns, is checked by brute force over every substring.  Vocabs are drawn over a few
characters of one to four bytes that share lead and continuation bytes (中 and 丁 share two
bytes), with tokens cut anywhere, inside characters too, and pieces as text or as any bytes
over the same byte values (malformed UTF-8 must never be cut wrongly either).  Then the ids:
``_encode_in_parts`` against ``_encode_piece`` and the plain rules of ``naive``, for
tiktoken-style ranks and for a trained merge list.
"""

from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import examples

from refbpe import train_from_texts
from refbpe.encode.piece_cuts import PieceCuts, _enter_runs
from refbpe.encode.tokenizer import Tokenizer
from refbpe.naive import naive_encode, naive_rank_encode

CHARS = "a é中丁文ア𝄞"
BYTES = sorted(set(CHARS.encode("utf-8")))

_text = st.text(alphabet=CHARS, min_size=1, max_size=24)
_any_bytes = st.lists(st.sampled_from(BYTES), min_size=1, max_size=40).map(bytes)


@st.composite
def _tokens(draw):
    """Substrings of drawn texts' bytes, two bytes or longer, cut anywhere."""
    tokens = []
    for source in draw(st.lists(_text.map(lambda t: t.encode("utf-8")), max_size=12)):
        i = draw(st.integers(0, len(source)))
        j = draw(st.integers(i, len(source)))
        if j - i >= 2:
            tokens.append(source[i:j])
    return sorted(set(tokens))


def _cuts(cutter, piece):
    """The places ``encode_in_parts`` cuts ``piece`` at (its parts, "encoded" as themselves)."""
    places, at = [], 0
    for part in cutter.encode_in_parts(piece, {}, lambda part: [part]):
        at += len(part)
        places.append(at)
    return places[:-1]


def _spanned(piece, k, tokens):
    """True if some token is ``piece[i:j]`` with ``i < k < j``."""
    return any(piece[i:j] in tokens for i in range(k) for j in range(k + 1, len(piece) + 1))


def _multibyte_places(piece):
    """Places between two well-formed multi-byte characters of text ``piece``."""
    text = piece.decode("utf-8")
    places, at = [], 0
    for a, b in zip(text, text[1:]):
        at += len(a.encode("utf-8"))
        if ord(a) >= 0x80 and ord(b) >= 0x80:
            places.append(at)
    return places


def _ranks(tokens, order):
    rank_of = {bytes([b]): b for b in range(256)}
    multi = [t for t in tokens if len(t) > 1]
    order.shuffle(multi)
    rank_of.update({t: 256 + k for k, t in enumerate(multi)})
    return rank_of


@settings(max_examples=examples(300))
@given(tokens=_tokens(), piece=st.one_of(_text.map(lambda t: t.encode("utf-8")), _any_bytes))
@example(tokens=[b"\xad\xe6"], piece="中文".encode("utf-8"))  # only the two bytes around the place
@example(tokens=["中文".encode("utf-8")], piece="丁中文".encode("utf-8"))
@example(tokens=[b"\xb8\xad\xe6\x96"], piece="中文".encode("utf-8"))  # partial on both sides
@example(tokens=["中é".encode("utf-8")], piece="中é".encode("utf-8") + b"\xa9")  # é, then a stray byte
def test_no_token_spans_a_cut(tokens, piece):
    token_set = set(tokens)
    for k in _cuts(PieceCuts(tokens), piece):
        assert not _spanned(piece, k, token_set), (piece, k)


@settings(max_examples=examples(200))
@given(tokens=st.lists(st.one_of(_text.map(lambda t: t.encode("utf-8")), _any_bytes), max_size=12))
def test_text_tokens_enter_the_tables_as_their_runs_do(tokens):
    """The table's build decodes a UTF-8 token instead of cutting it into runs: the same
    tables as entering every token run by run."""
    joined, partial = set(), bytearray(1 << 16)
    for token in tokens:
        if len(token) >= 2:
            _enter_runs(token, joined, partial)
    cutter = PieceCuts(tokens)
    assert (cutter._joined, cutter._partial) == (joined, bytes(partial))


@settings(max_examples=examples(200))
@given(piece=_text.map(lambda t: t.encode("utf-8")))
def test_without_multibyte_tokens_every_place_between_multibyte_characters_is_a_cut(piece):
    """Not vacuous: with no token holding a multi-byte character's bytes beside another's,
    every place between two multi-byte characters is found."""
    ascii_tokens = [b"ab", b" a", b"aa "]
    assert _cuts(PieceCuts(ascii_tokens), piece) == _multibyte_places(piece)


@settings(max_examples=examples(200))
@given(
    tokens=_tokens(),
    pieces=st.lists(st.one_of(_text.map(lambda t: t.encode("utf-8")), _any_bytes), min_size=1, max_size=8),
    order=st.randoms(use_true_random=False),
)
def test_parts_encode_as_the_whole_piece_by_ranks(tokens, pieces, order):
    """tiktoken's rule on ranks in any order (a token may rank below its parts); the parts'
    cache is shared across pieces, as it is across calls."""
    rank_of = _ranks(tokens, order)
    tok = Tokenizer.from_ranks(rank_of)
    for piece in pieces:
        expected = naive_rank_encode(piece, rank_of)
        assert tok._encode_one(piece) == expected
        whole = rank_of.get(piece)
        assert (tok._encode_in_parts(piece) if whole is None else [whole]) == expected


@settings(max_examples=examples(60), deadline=None)
@given(
    texts=st.lists(_text, min_size=1, max_size=6),
    pieces=st.lists(_text.map(lambda t: t.encode("utf-8")), min_size=1, max_size=8),
    vocab_size=st.integers(256, 330),
)
def test_parts_encode_as_the_whole_piece_by_merges(texts, pieces, vocab_size):
    """A trained merge list, whose tokens include pieces of characters; ``encode`` of the
    pieces as text against the textbook encoder."""
    vocab, merges = train_from_texts(texts, vocab_size, [])
    tok = Tokenizer(vocab, merges)
    for piece in pieces:
        assert tok._encode_in_parts(piece) == tok._encode_piece(piece)
        text = piece.decode("utf-8")
        assert tok.encode(text) == naive_encode(text, vocab, merges)


def test_a_long_cjk_piece_that_is_a_token_is_that_token():
    """The cut comes before tiktoken's rule, which is looked up only for a piece with no
    place to cut (a token equal to the piece spans every place).  中文中 is a token that no
    merge makes; 丁中文中 is none and is cut before 中文中 (no token spans that place), whose
    part gets no such rule: it is merged as BPE merges it."""
    piece = "中文中".encode("utf-8")
    rank_of = {bytes([b]): b for b in range(256)}
    for char in "中文":
        rank_of[char.encode("utf-8")[:2]] = len(rank_of)
        rank_of[char.encode("utf-8")] = len(rank_of)
    rank_of[piece] = len(rank_of)
    tok = Tokenizer.from_ranks(rank_of)
    assert tok._encode_one(piece) == [rank_of[piece]] == naive_rank_encode(piece, rank_of)
    assert tok._encode_piece(piece) != [rank_of[piece]]  # BPE alone would not make it
    longer = "丁".encode("utf-8") + piece
    made = [rank_of[t.encode("utf-8")] for t in "中文中"]
    assert tok._encode_one(longer) == naive_rank_encode(longer, rank_of) == [256, 0x81] + made
    # encode's own path for such pieces (``_extend_in_parts``: ids appended as found)
    assert tok.encode("中文中 丁中文中") == [rank_of[piece], 32, 256, 0x81] + made


_HAN = st.text(alphabet="中文字符丁七万三上下不与丐丑专且世丘", min_size=1, max_size=30)


@settings(max_examples=examples(60), deadline=None)
@given(texts=st.lists(_HAN, min_size=1, max_size=6), calls=st.lists(_HAN, min_size=1, max_size=6))
def test_one_character_parts_kept_by_code_point_encode_as_merged(texts, calls):
    """``encode``'s cut path keeps a part that is one three-byte character under its code
    point (``piece_cuts._char_ids``) instead of under its bytes: each call, the first filling
    those entries and the later ones reading them, gives the textbook encoder's ids."""
    vocab, merges = train_from_texts(texts, 290, [])
    tok = Tokenizer(vocab, merges)
    for text in calls + calls:
        text = " " + text  # a piece of 8 bytes or more ending in a three-byte character: cut
        assert tok.encode(text) == naive_encode(text, vocab, merges)


def test_one_character_parts_are_kept_by_code_point():
    """Not vacuous: with no token holding two of these characters, every part of the piece is
    one character, and each is kept under its code point, not under its bytes."""
    vocab, merges = train_from_texts(["中中 文文 字字"], 262, [])
    tok = Tokenizer(vocab, merges)
    text = " 中文字中文字"
    assert tok.encode(text) == naive_encode(text, vocab, merges) == tok.encode(text)
    kept = {chr(point) for point, ids in enumerate(tok._chars) if ids is not None}
    assert kept == set("中文字")
    assert list(tok._parts) == [" 中".encode("utf-8")]  # the first part, with the space
