"""``Tokenizer.from_tiktoken`` leaves the merge list until it is asked for: encoding by
ranks does not use it.  Asked for, it is the list ``read_tiktoken`` rebuilds; a ranks
file whose tokens are not merges still loads and encodes as tiktoken does."""

import base64

import pytest

import refbpe.encode.tokenizer
from refbpe.encode.tokenizer import Tokenizer
from refbpe.formats.model import FormatError
from refbpe.formats.tiktoken import read_tiktoken
from refbpe.naive import naive_rank_encode


def _ranks_file(tmp_path, tokens):
    path = tmp_path / "tiny.tiktoken"
    lines = [base64.b64encode(t) + b" %d\n" % r for r, t in enumerate(tokens)]
    path.write_bytes(b"".join(lines))
    return str(path)


BYTES = [bytes([b]) for b in range(256)]


def test_merges_are_rebuilt_only_when_asked_for(tmp_path, monkeypatch):
    path = _ranks_file(tmp_path, BYTES + [b"ab", b"abc", b" a", b" abc"])
    calls = []
    rebuild = refbpe.encode.tokenizer.merges_from_ranks
    monkeypatch.setattr(refbpe.encode.tokenizer, "merges_from_ranks", lambda r: calls.append(1) or rebuild(r))
    tok = Tokenizer.from_tiktoken(path)
    assert tok.encode("abc abc ab") == [257, 259, 32, 256] and calls == []
    expected = [(b"a", b"b"), (b"ab", b"c"), (b" ", b"a"), (b" ", b"abc")]
    assert tok.merges == read_tiktoken(path).merges == expected
    assert tok.merges is tok.merges and calls == [1]


def test_ranks_that_are_not_merges_load_and_encode_but_have_no_merge_list(tmp_path):
    tokens = BYTES + [b"xyz", b"xy"]  # "xyz" ranks before any part it could be made of
    path = _ranks_file(tmp_path, tokens)
    tok = Tokenizer.from_tiktoken(path)
    ranks = {t: r for r, t in enumerate(tokens)}
    for text in ("xyz", "xyzxy", "axyzb"):
        assert tok.encode(text) == naive_rank_encode(text.encode("utf-8"), ranks)  # one piece each
    with pytest.raises(FormatError, match="not the merge of two lower-ranked tokens"):
        _ = tok.merges
