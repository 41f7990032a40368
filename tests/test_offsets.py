"""Tokenizer.encode_with_offsets: tiktoken's decode_with_offsets convention, and a naive oracle."""

from hypothesis import given, settings
from support import EMOJI, examples, mixed_text
from test_tokenizer import EOT, _tiktoken_or_skip, _tiktoken_text, gpt2_tokenizer, small_tokenizer


def naive_offsets(tokenizer, text, ids):
    """Index of the character holding each token's first byte, by decoding prefixes."""
    data = text.encode("utf-8", "surrogatepass")
    offsets, pos = [], 0
    for i in ids:
        start = pos
        while start > 0 and 0x80 <= data[start] < 0xC0:
            start -= 1  # back to the first byte of the character holding byte `pos`
        offsets.append(len(data[:start].decode("utf-8", "surrogatepass")))
        pos += len(tokenizer.vocab[i])
    return offsets


@settings(max_examples=examples(150))
@given(mixed_text(extra=[EOT, "<|eot|>", "<|eot|><|eot|>"] + EMOJI))
def test_offsets_equal_the_naive_ones(text):
    tok = small_tokenizer()[0]
    ids, offsets = tok.encode_with_offsets(text)
    assert ids == tok.encode(text)
    assert offsets == naive_offsets(tok, text, ids)
    assert offsets == sorted(offsets)


@settings(max_examples=examples(100))
@given(_tiktoken_text)
def test_offsets_equal_tiktoken_decode_with_offsets(text):
    enc = _tiktoken_or_skip()
    ids, offsets = gpt2_tokenizer().encode_with_offsets(text)
    assert (text, offsets) == enc.decode_with_offsets(ids)


def test_a_token_inside_a_character_gets_that_characters_offset():
    tok = small_tokenizer()[0]
    text = "a\U0001fae8b"  # an emoji the small vocab has only as single bytes
    ids, offsets = tok.encode_with_offsets(text)
    assert len(ids) >= 4
    assert offsets[:1] == [0] and offsets[-1] == 2 and set(offsets[1:-1]) == {1}
