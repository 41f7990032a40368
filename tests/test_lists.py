"""refbpe/_util/lists.py: an empty list with room reserved under PyPy."""

import pytest
from support import IS_PYPY

from refbpe._util.lists import list_with_room


def test_an_empty_new_list_that_grows_as_any_list():
    a, b = list_with_room(4), list_with_room(4)
    assert a == [] and type(a) is list and a is not b
    a.extend(range(10))
    a.append(b"x")
    assert a == list(range(10)) + [b"x"] and b == []
    assert list_with_room(0) == [] and list_with_room(-1) == []


@pytest.mark.skipif(not IS_PYPY, reason="PyPy's newlist_hint; CPython has no hint")
def test_under_pypy_the_room_is_reserved():
    from __pypy__ import list_get_physical_size

    ids = list_with_room(100000)
    ids.append(1)
    assert list_get_physical_size(ids) >= 100000
    plain = []
    plain.append(1)
    assert list_get_physical_size(plain) < 100


@pytest.mark.skipif(not IS_PYPY, reason="PyPy's newlist_hint; CPython has no hint")
def test_the_ids_of_a_megabyte_or_more_have_room_for_one_per_byte():
    """encode.tokenizer._ids_room: from 1 MB of text on, the ids' list is made with one slot per
    UTF-8 byte (not per character), so it is never copied as it grows."""
    from __pypy__ import list_get_physical_size

    from refbpe import Tokenizer, train_from_texts

    vocab, merges = train_from_texts(["привет мир, hello world 123<|endoftext|>"], 300, ["<|endoftext|>"])
    tok = Tokenizer(vocab, merges, ["<|endoftext|>"])
    doc = "привет мир, hello world 123 ёж\n"
    text = "<|endoftext|>".join([doc * 40] * 700)
    data = text.encode("utf-8")
    assert len(data) >= 1 << 20 and len(text) < len(data)
    for ids in (tok.encode(text), tok.encode_utf8(data)):
        assert list_get_physical_size(ids) >= len(data)
        assert ids == tok.encode(doc * 40) + ([tok.encode("<|endoftext|>")[0]] + tok.encode(doc * 40)) * 699
    small = tok.encode(doc * 40)
    assert list_get_physical_size(small) < len((doc * 40).encode("utf-8"))
