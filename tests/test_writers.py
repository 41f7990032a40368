"""The streaming model writers write what the plain ones did, byte for byte, and
the readers read it back.

The reference here is the writer as it was: each format's dict through
``json.dumps`` (``formats.hf.hf_tokenizer_json``, ``formats.hexjson.hex_json``) or
a line per token with ``encode_token``; the streaming writers
(``bytemap.MappedText``, ``atomic.chunked``) must match it on models trained
from every shared corpus, on random vocabs (quotes, backslashes, every byte),
and on models of megabyte-long tokens.  A ranks file's long tokens are split by
walking merge trees (``formats.tiktoken._split_long``), not by tiktoken's own
merging: both must give the same merges, and refuse the same files.
"""

import base64
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import corpus_path, cs336_path, examples, shared_data_path

from refbpe.formats import FormatError, read_model, write_model
from refbpe.formats.bytemap import MappedText, encode_token
from refbpe.formats.model import special_ids, with_specials
from refbpe.formats.tiktoken import merges_from_ranks, read_ranks
from refbpe.learn.train import train_from_texts

CORPORA = [
    "english_small.txt",
    "chinese.txt",
    "russian.txt",
    "tinystories_ru.txt",
    "mixed_multilingual.txt",
    "python_code.txt",
]
EOT = "<|endoftext|>"


def reference_files(vocab, merges, special_tokens):
    """{format: {file name: bytes}} as the writers wrote them before streaming."""
    from refbpe.formats.hexjson import hex_json
    from refbpe.formats.hf import hf_tokenizer_json

    full = with_specials(vocab, special_tokens)
    entries = {}
    for i in sorted(full):
        entries.setdefault(encode_token(full[i]), i)
    merges_txt = "".join("%s %s\n" % (encode_token(a), encode_token(b)) for a, b in merges)
    specials = set(special_ids(full, special_tokens).values())
    special_bytes = {t.encode("utf-8") for t in special_tokens}
    seen, ranks = set(), []
    for i in sorted(full):
        if (i in specials and full[i] in special_bytes) or full[i] in seen:
            continue
        seen.add(full[i])
        ranks.append("%s %d\n" % (base64.b64encode(full[i]).decode("ascii"), i))
    return {
        "gpt2": {
            "vocab.json": json.dumps(entries, ensure_ascii=False).encode("utf-8"),
            "merges.txt": merges_txt.encode("utf-8"),
        },
        "hf": {
            "tokenizer.json": (
                json.dumps(hf_tokenizer_json(vocab, merges, special_tokens), ensure_ascii=False, indent=1)
                + "\n"
            ).encode("utf-8")
        },
        "tiktoken": {"ranks.tiktoken": "".join(ranks).encode("ascii")},
        "json": {
            "hex.json": (
                json.dumps(hex_json(vocab, merges, special_tokens), ensure_ascii=False) + "\n"
            ).encode("utf-8")
        },
    }


def written_files(tmp_path, fmt, vocab, merges, special_tokens):
    dest = str(tmp_path / fmt)
    if fmt == "gpt2":
        write_model(dest, fmt, vocab, merges, special_tokens)
        names = ["vocab.json", "merges.txt"]
        out = {n: open(os.path.join(dest, n), "rb").read() for n in names}
    else:
        dest = os.path.join(
            dest + ".d", {"hf": "tokenizer.json", "tiktoken": "ranks.tiktoken", "json": "hex.json"}[fmt]
        )
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        write_model(dest, fmt, vocab, merges, special_tokens)
        out = {os.path.basename(dest): open(dest, "rb").read()}
    return dest, out


def check_model(tmp_path, vocab, merges, special_tokens, formats=("gpt2", "hf", "tiktoken", "json")):
    expected = reference_files(vocab, merges, special_tokens)
    for fmt in formats:
        dest, got = written_files(tmp_path, fmt, vocab, merges, special_tokens)
        assert got == expected[fmt], fmt
        model = read_model(dest, fmt, special_tokens)
        assert model.merges == merges, fmt
        assert model.vocab == with_specials(vocab, special_tokens), fmt


def _head(path, n=120000):
    with open(path, "rb") as f:
        return f.read(n).decode("utf-8", "ignore")


@pytest.mark.parametrize("corpus", CORPORA)
def test_every_shared_corpus_every_format(tmp_path, corpus):
    vocab, merges = train_from_texts([_head(corpus_path(corpus))], 800, [EOT])
    check_model(tmp_path, vocab, merges, [EOT])


def test_the_cs336_corpus_every_format(tmp_path):
    vocab, merges = train_from_texts([_head(cs336_path("corpus.en"), 10**6)], 500, [EOT])
    check_model(tmp_path, vocab, merges, [EOT])


@pytest.mark.parametrize("run", [b" ", b"a", b'"', b"\\", b"\xc3\xa9", b"\x00"])
def test_megabyte_tokens(tmp_path, run):
    # one run of a byte: tokens of 1, 2, 4, ... 2**20 bytes
    merges, token = [], run
    for _ in range(20):
        merges.append((token, token))
        token += token
    vocab = {i: bytes([i]) for i in range(256)}
    if len(run) > 1:  # a two-byte character: its bytes first
        merges.insert(0, (run[:1], run[1:]))
    for a, b in merges:
        vocab[len(vocab)] = a + b
    check_model(tmp_path, vocab, merges, [EOT])


def test_mapped_text_keys_a_merges_result_by_the_vocabs_own_token():
    merges = [(b"a", b"a"), (b"aa", b"aa"), (b" ", b"aaaa"), (b'"', b"a")]
    vocab = {i: bytes([i]) for i in range(256)}
    for a, b in merges:
        vocab[len(vocab)] = a + b
    plain = MappedText(merges)
    text = MappedText(merges, vocab)
    for i in range(256, 256 + len(merges)):
        assert (text(vocab[i]), text.json(vocab[i])) == (plain(vocab[i]), plain.json(vocab[i]))
    assert text(vocab[257]) is vocab[257]  # printable ASCII: its own text, the vocab's object
    # another layout (merge k is not id 256 + k): the texts are joined as without a vocab
    shifted = {i: bytes([i]) for i in range(256)}
    shifted.update({256: b"zz", 257: b"aa", 258: b"aaa", 259: b"aaaa"})
    other = MappedText(merges, shifted)
    for a, b in merges:
        assert (other(a + b), other.json(a + b)) == (plain(a + b), plain.json(a + b))


_tokens = st.binary(min_size=1, max_size=6) | st.sampled_from([b'"', b"\\", b'\\"', b" ", b"\n", b"\x7f\xad"])


@settings(max_examples=examples(30))
@given(
    st.lists(_tokens, max_size=40, unique=True), st.lists(st.sampled_from(["<|endoftext|>", 'a"b\\', "é"]))
)
def test_random_vocabs_write_as_before(tmp_path_factory, extra, specials):
    specials = list(dict.fromkeys(specials))
    vocab = {i: bytes([i]) for i in range(256)}
    merges = []
    for t in extra:
        if t not in vocab.values() and len(t) > 1:
            if t[1:] in vocab.values():
                merges.append((t[:1], t[1:]))
            vocab[len(vocab)] = t
    expected = reference_files(vocab, merges, specials)
    tmp_path = tmp_path_factory.mktemp("w")
    for fmt in ("gpt2", "hf", "json"):
        _, got = written_files(tmp_path, fmt, vocab, merges, specials)
        assert got == expected[fmt], fmt


def _merges_both_ways(ranks):
    """(merges or FormatError) from tiktoken's own merging for every token, and from the
    merge-tree walk for every token of two or more bytes."""
    out = []
    for short in (1 << 30, 1):
        try:
            out.append(merges_from_ranks(ranks, short_token=short))
        except FormatError:
            out.append(FormatError)
    return out


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.binary(min_size=1, max_size=60).map(
            lambda b: b.translate(bytes(b"ab "[i % 3] for i in range(256)))
        ),
        min_size=1,
        max_size=8,
    ),
    st.integers(258, 330),
)
def test_long_token_splits_match_tiktokens_merging_on_trained_models(texts, size):
    vocab, _ = train_from_texts([t.decode("latin-1") for t in texts], size, [])
    ranks = {t: i for i, t in vocab.items()}
    reference, walked = _merges_both_ways(ranks)
    assert reference is not FormatError
    assert walked == reference


@settings(max_examples=examples(150), deadline=None)
@given(
    st.sampled_from([b"ab", b"abc"]), st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), max_size=30)
)
def test_long_token_splits_match_tiktokens_merging_on_any_ranks(alphabet, joins):
    # tokens made by joining two earlier ones, ranked in the order made: about
    # half of such files are not what merging makes and must be refused
    ranks = {alphabet[i : i + 1]: i for i in range(len(alphabet))}
    tokens = list(ranks)
    for i, j in joins:
        token = tokens[i % len(tokens)] + tokens[j % len(tokens)]
        if token not in ranks:
            ranks[token] = len(ranks)
            tokens.append(token)
    reference, walked = _merges_both_ways(ranks)
    assert walked == reference


@pytest.mark.slow
def test_long_token_splits_match_tiktokens_merging_on_cl100k():
    # every token of OpenAI's ranks split both ways (about 2 s under CPython)
    ranks = read_ranks(shared_data_path("tiktoken", "cl100k_base.tiktoken"))
    reference, walked = _merges_both_ways(ranks)
    assert reference is not FormatError and len(reference) > 99000
    assert walked == reference


def _ranks_as_tiktoken_reads_them(path):
    """The reference: ``tiktoken.load.load_tiktoken_bpe``'s reading, line by line (None if refused)."""
    ranks = {}
    with open(path, "rb") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            parts = line.split()
            try:
                if len(parts) != 2:
                    return None
                ranks[base64.b64decode(parts[0], validate=True)] = int(parts[1])
            except ValueError:  # binascii.Error is one
                return None
    return ranks or None


@pytest.mark.parametrize(
    "text",
    [
        b"YQ== 0\nYg== 1\n",
        b"YQ== 0\r\nYg== 1\r\n",
        b"  YQ== 0\n\nYg==\t1   \n\n",
        b"YWI= 0\nYQ== 1",
        b"YQ=\n",
        b"YQ= 0\n",
        b"Y=Q= 0\n",
        b"YQ==YQ== 0\n",
        b"YQ== 0 1\n",
        b"YQ== x\n",
        b"YQ== -1\n",
        b"YQ== +1\n",
        b" 0\n",
        b"Y*Q= 0\n",
        b"YQ== 007\n",
        b"\n\n",
    ],
)
def test_rank_lines_read_as_tiktoken_reads_them(tmp_path, text):
    path = tmp_path / "r.tiktoken"
    path.write_bytes(text)
    expected = _ranks_as_tiktoken_reads_them(str(path))
    if expected is None:
        with pytest.raises(FormatError):
            read_ranks(str(path))
    else:
        assert read_ranks(str(path)) == expected
