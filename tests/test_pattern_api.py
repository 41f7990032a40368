"""``pattern=`` through counting, training and encoding, held to the naive oracle.

The cut rule each pattern uses to split inputs into chunks (``io.cut_points``)
must not change any piece: proven here directly (pieces of the whole equal the
pieces of the two sides at every cut found) and through ``count_words`` with
tiny chunks, in this process and in a pool.
"""

from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import edge_atoms, examples, write_file

from refbpe.corpus.count import count_words
from refbpe.corpus.io import cut_points, next_cut
from refbpe.encode.tokenizer import Tokenizer
from refbpe.learn.train import train_bpe
from refbpe.naive import naive_encode, naive_train_bpe
from refbpe.pretokenize.patterns import get_pattern, pattern_names

PATTERNS = pattern_names()
SPECIALS = ["<|endoftext|>"]

# Text with plenty of cut candidates: lines joined by lone CR/LF/tab between ASCII bytes.
cut_text = st.lists(
    st.one_of(
        edge_atoms(), st.sampled_from(["x\ny", "a\rb", "!\n/", "!\n!", "q\tw", "z\x0bz", "<|endoftext|>"])
    ),
    max_size=16,
).map("".join)


@pytest.mark.slow
@pytest.mark.parametrize("name", PATTERNS)
@settings(max_examples=examples(150))
@given(text=cut_text)
@example(text="!\n/b")
@example(text="x\ty\nz")
def test_every_cut_leaves_the_pieces_alone(name, text):
    pattern = get_pattern(name)
    data = text.encode("utf-8")
    whole = pattern.pretokenize(data)
    specials = [t.encode("utf-8") for t in SPECIALS]
    pos = 1
    while True:
        c = next_cut(data, pos, specials, at_end=True, cuts=cut_points(name))
        if c == -1 or c >= len(data):
            break
        if not any(data.startswith(t, c) for t in specials):
            assert pattern.pretokenize(data[:c]) + pattern.pretokenize(data[c:]) == whole, c
        pos = c + 1


def _naive_counts(text, name):
    pattern = get_pattern(name)
    counts = Counter()
    for part in text.split(SPECIALS[0]):
        counts.update(pattern.pretokenize(part.encode("utf-8")))
    return dict(counts)


@pytest.mark.parametrize("name", PATTERNS)
@settings(max_examples=examples(40))
@given(text=cut_text)
def test_count_words_with_tiny_chunks_equals_one_scan(tmp_path_factory, name, text):
    path = write_file(tmp_path_factory.mktemp("c") / "c.txt", text)
    counts = count_words(path, SPECIALS, workers=1, chunk_size=8, pattern=name)
    assert counts == _naive_counts(text, name)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_count_words_in_a_pool_equals_one_scan(tmp_path, name):
    """The spool workers get the pattern: counts through a process pool, tiny chunks."""
    text = (
        "Hello\tworld!\n/path don't\r\nDON'T 12345\n\n  x\u0301y \u4e2d\u6587\n" * 300
    ) + "<|endoftext|>end  \n"
    path = write_file(tmp_path / "c.txt", text)
    pooled = count_words(path, SPECIALS, workers=2, chunk_size=1024, pattern=name)
    assert pooled == _naive_counts(text, name)
    assert pooled != count_words(path, SPECIALS, workers=1, pattern="gpt2")


@pytest.mark.parametrize("name", PATTERNS)
@settings(max_examples=examples(15))
@given(text=st.lists(edge_atoms(), min_size=5, max_size=40).map(lambda p: "".join(p) * 3))
def test_train_bpe_equals_naive(tmp_path_factory, name, text):
    path = write_file(tmp_path_factory.mktemp("t") / "c.txt", text)
    vocab, merges = train_bpe(path, 300, SPECIALS, workers=1, pattern=name)
    nvocab, nmerges = naive_train_bpe(text, 300, SPECIALS, pattern=name)
    assert merges == nmerges and vocab == nvocab


def test_train_bpe_default_is_gpt2(tmp_path):
    text = "Hello\tworld x\n  \n  y don't DON'T 12345 " * 20
    path = write_file(tmp_path / "c.txt", text)
    assert train_bpe(path, 300, SPECIALS, workers=1) == train_bpe(
        path, 300, SPECIALS, workers=1, pattern="gpt2"
    )
    assert train_bpe(path, 300, SPECIALS, workers=1) != train_bpe(
        path, 300, SPECIALS, workers=1, pattern="cl100k_base"
    )


def test_unknown_pattern_is_refused_before_any_work(tmp_path):
    path = write_file(tmp_path / "c.txt", "abc")
    with pytest.raises(ValueError, match="unknown pattern"):
        train_bpe(path, 300, [], workers=1, pattern="gpt-5")
    with pytest.raises(ValueError, match="unknown pattern"):
        Tokenizer({i: bytes([i]) for i in range(256)}, [], pattern="gpt-5")


_TRAINED = {}


def _trained(name):
    if name not in _TRAINED:
        text = "Hello world! don't we'LL HELLO\tworld\n\n  12345 \u4e2d\u6587 e\u0301t\u00e9 /x/\n" * 50
        vocab, merges = naive_train_bpe(text, 330, SPECIALS, pattern=name)
        _TRAINED[name] = (Tokenizer(vocab, merges, SPECIALS, pattern=name), vocab, merges)
    return _TRAINED[name]


@pytest.mark.parametrize("name", PATTERNS)
@settings(max_examples=examples(60))
@given(text=st.lists(st.one_of(edge_atoms(), st.just("<|endoftext|>")), max_size=12).map("".join))
def test_encode_equals_naive_and_streams(name, text):
    tok, vocab, merges = _trained(name)
    assert tok.pattern == name
    ids = tok.encode(text)
    assert ids == naive_encode(text, vocab, merges, SPECIALS, pattern=name)
    assert tok.decode(ids) == text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    for step in (1, 2, 3, 7):
        chunks = [text[k : k + step] for k in range(0, len(text), step)]
        assert list(tok.encode_iterable(iter(chunks))) == ids


def test_encode_iterable_in_batches_keeps_the_end_of_text_rule():
    """cl100k_base's ``\\s++$`` decides a final whitespace run by the end of the *text*:
    a batch ending inside such a run must not be taken as the end."""
    tok = _trained("cl100k_base")[0]
    text = ("word\n   " * 20000) + "end\n   "
    chunks = [text[k : k + 1000] for k in range(0, len(text), 1000)]
    assert list(tok.encode_iterable(iter(chunks))) == tok.encode(text)
