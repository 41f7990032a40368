"""``Pattern.from_regex``: any split regex, with the pinned Unicode classes.

* pieces equal the ``regex`` module's (CPython, same Unicode version) for nanochat's
  pattern, GPT-2/GPT-4/GPT-4o as regex text, digit-run variants, a
  case-insensitive one and one with ``\\p{Lu}`` classes, over text drawn from
  every plane; on PyPy the same texts give the pieces CPython gives (the
  expected pieces are computed by the standard ``re`` over bytes on both, and a
  fixed sample is compared with pieces recorded from ``regex``);
* chunked counting equals one whole-text scan for every chunk size;
* refused constructs fail with one line; a known pattern's text uses its scanner;
* rustbpe trained with nanochat's pattern equals ``--profile rustbpe --pattern-regex``;
  ``tiktoken.Encoding`` with cl100k ranks and a custom ``pat_str`` equals ``from_tiktoken``.
"""

import base64
import doctest
import os
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import (
    IS_PYPY,
    corpus_path,
    examples,
    import_regex_or_skip,
    mixed_text,
    regex_version_mismatch,
    run_main,
    shared_root,
)

from refbpe.cli.model_argument import load_tokenizer
from refbpe.corpus.count import count_words
from refbpe.corpus.countfile import read_counts_pattern
from refbpe.encode.tokenizer import Tokenizer
from refbpe.formats import write_model_dir
from refbpe.learn.train import train_from_texts
from refbpe.pretokenize import _unicode_categories, _unicode_properties, _unicode_table, utf8_ranges
from refbpe.pretokenize import patterns as patterns_module
from refbpe.pretokenize.patterns import ALIASES, Pattern, get_pattern
from refbpe.pretokenize.regex_compile import UnmatchedText, compile_split_regex
from refbpe.pretokenize.regex_syntax import RegexError
from refbpe.pretokenize.unicode_classes import PinnedClasses, _runs_to_sets
from refbpe.pretokenize.utf8_ranges import union

NANOCHAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]++[\r\n]*|"""
    r"""\s*[\r\n]|\s+(?!\S)|\s+"""
)
DIGITS_ONE = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
DIGITS_FOUR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,4}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+(?!\S)|\s+"""
)
CASELESS = r"""(?i)'(?:s|t|re|ve|m|ll|d)|[a-z]+|k|[^a-z\s\d]+|\d+|\s+"""
CASE_CLASSES = (
    r"""\p{Lu}\p{Ll}*|\p{Lt}+|[\p{Lm}\p{Lo}\p{M}]+|\p{Ll}+|\p{Nd}{1,3}|[^\p{L}\p{Nd}\s]+|\s+(?!\S)|\s+"""
)
ATOMIC = r"""(?>\p{L}+|\p{L}\p{N})|\w+?\d|.|\n"""
TEST_PATTERNS = {
    "nanochat": NANOCHAT,
    "gpt2": get_pattern("gpt2").regex,
    "cl100k_base": get_pattern("cl100k_base").regex,
    "llama3": get_pattern("llama3").regex,
    "o200k_base": get_pattern("o200k_base").regex,
    "digits_one": DIGITS_ONE,
    "digits_four": DIGITS_FOUR,
    "caseless": CASELESS,
    "case_classes": CASE_CLASSES,
    "atomic": ATOMIC,
}

# Characters where case folding, categories and whitespace have corners.
CORNERS = "ſKkKıIiİǅǄǆßẞΣσςµΜ\u0345ͅ\u00a0\u2028\u0085\u1680٣²½Ⅷ\u0301\u200d_'’\r\n\t\x0b\x0c\x1c/"
corner_text = st.text(st.sampled_from(CORNERS + "aZ9 .,"), max_size=20)
any_text = st.one_of(mixed_text(), corner_text, st.lists(st.one_of(mixed_text(8), corner_text)).map("".join))


ENGINES = ("generated", "re")
PINNED = PinnedClasses()


_COMPILED = {}


def custom(regex):
    """The pattern compiled from ``regex`` even when it is a known one's text (no scanner);
    compiled once per process (o200k's takes seconds)."""
    if regex not in _COMPILED:
        _COMPILED[regex] = Pattern.from_regex(regex, classes=PinnedClasses())
    return _COMPILED[regex]


def _pieces(compiled, text):
    data = text.encode("utf-8", "surrogatepass")
    start, out = 0, []
    for end in compiled.piece_ends(data):
        out.append(data[start:end].decode("utf-8", "surrogatepass"))
        start = end
    return out


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(TEST_PATTERNS))
def test_pieces_equal_regex_module(name, engine):
    regex = import_regex_or_skip()
    if regex_version_mismatch():
        pytest.skip(regex_version_mismatch())
    expected = regex.compile(TEST_PATTERNS[name])
    mine = compile_split_regex(TEST_PATTERNS[name], PINNED, engine)
    assert mine.engine == engine

    @settings(max_examples=examples(100))
    @given(any_text)
    def check(text):
        assert _pieces(mine, text) == expected.findall(text)

    check()


@pytest.mark.parametrize("name", sorted(TEST_PATTERNS))
def test_the_engines_agree_on_every_interpreter(name):
    """The generated matcher (PyPy's) and ``re`` over bytes (exact on both interpreters) agree."""
    generated, by_re = (compile_split_regex(TEST_PATTERNS[name], PINNED, e) for e in ENGINES)

    @settings(max_examples=examples(100))
    @given(any_text)
    def check(text):
        assert _pieces(generated, text) == _pieces(by_re, text)

    check()


def test_a_pattern_past_the_generated_matcher_keeps_re():
    assert compile_split_regex(r"(?:ab){3000}|[\s\S]", PINNED, "generated").engine == "re"


# Pieces recorded from the regex module (CPython, Unicode 18.0.0): PyPy must give these too.
RECORDED = [
    ("nanochat", "It's 12345 ſtrange\u00a0 KELVIN\u212a\r\n\n  x", None),
    ("caseless", "ſKIıİ it'S 42", None),
    ("case_classes", "ǅemo ÜberCase 1234\u0301 a", None),
]


@pytest.mark.parametrize("name,text,_", RECORDED)
def test_pieces_same_on_every_interpreter(name, text, _):
    pieces = custom(TEST_PATTERNS[name]).pretokenize_str(text)
    assert "".join(pieces) == text
    if not IS_PYPY:
        regex = import_regex_or_skip()
        assert pieces == regex.findall(TEST_PATTERNS[name], text)
    else:
        assert pieces == _EXPECTED[name]


_EXPECTED = {
    "nanochat": [
        "It",
        "'s",
        " ",
        "12",
        "34",
        "5",
        " \u017ftrange",
        "\xa0",
        " KELVIN\u212a",
        "\r\n\n",
        " ",
        " x",
    ],
    "caseless": ["\u017fKI", "\u0131", "\u0130", " ", "it", "'S", " ", "42"],
    "case_classes": ["\u01c5", "emo", " ", "\u00dcber", "Case", " ", "123", "4", "\u0301", " ", "a"],
}


@pytest.mark.parametrize("name", ["nanochat", "gpt2", "o200k_base"])
@settings(max_examples=examples(25))
@given(text=mixed_text(40), chunk=st.integers(1, 64))
def test_chunked_counting_equals_one_scan(tmp_path_factory, name, text, chunk):
    pattern = custom(TEST_PATTERNS[name])
    special = "<|endoftext|>"
    path = tmp_path_factory.mktemp("c") / "in.txt"
    data = (special.join([text, text[::-1], "x"])).encode("utf-8", "surrogatepass")
    path.write_bytes(data)
    whole = {}
    for part in data.split(special.encode()):
        for piece in pattern.pretokenize(part):
            whole[piece] = whole.get(piece, 0) + 1
    got = count_words([str(path)], [special], workers=1, chunk_size=chunk, pattern=pattern.name)
    assert got == whole


def test_parallel_counting_with_a_custom_pattern_equals_one_scan(tmp_path):
    """Two worker processes get the pattern by its name and count what one scan counts."""
    special = "<|endoftext|>"
    path = tmp_path / "in.txt"
    path.write_text(special.join([TEXT[k:] for k in range(0, 400, 7)]), encoding="utf-8")
    pattern = Pattern.from_regex(NANOCHAT)
    whole = {}
    for part in path.read_bytes().split(special.encode()):
        for piece in pattern.pretokenize(part):
            whole[piece] = whole.get(piece, 0) + 1
    assert count_words([str(path)], [special], workers=2, chunk_size=256, pattern=pattern.name) == whole


ascii_heavy = st.text(st.sampled_from("ab'sS1 2\n\r\t\x0b.!/-_\x00\u00e9\u00a0K"), max_size=40)


@pytest.mark.parametrize("name", sorted(TEST_PATTERNS))
def test_derived_cuts_do_not_change_the_pieces(name):
    """Every cut the pattern's derived rule offers (``regex_cuts``) splits the pieces, not a piece."""
    compiled = compile_split_regex(TEST_PATTERNS[name], PINNED, "re")
    cuts = compiled.cut_points

    @settings(max_examples=examples(300))
    @given(st.one_of(ascii_heavy, any_text))
    def check(text):
        data = text.encode("utf-8", "surrogatepass")
        whole = compiled.pieces(data)
        for c in [m.end() for m in cuts.finditer(data)]:
            assert compiled.pieces(data[:c]) + compiled.pieces(data[c:]) == whole, c

    check()


def test_nanochat_pattern_cuts_at_newlines_between_words():
    cuts = Pattern.from_regex(NANOCHAT).cut_points
    assert [m.end() for m in cuts.finditer(b"ab\ncd")] == [3]
    assert not cuts.search(b"ab.\ncd") and not cuts.search(b"ab\n cd") and not cuts.search(b"ab \ncd")


def test_a_known_pattern_text_uses_its_scanner():
    for name in ("gpt2", "cl100k_base", "llama3", "o200k_base"):
        assert Pattern.from_regex(get_pattern(name).regex) is get_pattern(name)
    assert get_pattern(Pattern.from_regex(NANOCHAT).name).regex == NANOCHAT


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_an_alias_is_its_scanner(alias):
    """Another spelling of a known pattern gives its scanner: the two agree on any text."""
    scanner = Pattern.from_regex(alias)
    assert scanner is get_pattern(ALIASES[alias])
    compiled = compile_split_regex(alias, PINNED, "re")

    @settings(max_examples=examples(100))
    @given(any_text)
    def check(text):
        assert scanner.pretokenize_str(text) == _pieces(compiled, text)

    check()


def test_a_custom_pattern_travels_by_name():
    p = Pattern.from_regex(NANOCHAT, name="nanochat")
    assert p.name == "regex:" + NANOCHAT and p.label == "nanochat"
    q = pickle.loads(pickle.dumps(p))
    assert q.regex == NANOCHAT and q.pretokenize_str("it's 1234") == ["it", "'s", " ", "12", "34"]


@pytest.mark.parametrize(
    "regex,words",
    [
        (r"(?<=a)b|.", "lookbehind"),
        (r"(a)\1|.", "backreferences"),
        (r"\bx|.", "word boundaries"),
        (r"\p{Han}+|.", "the property"),
        (r"[[a-z]--[k]]|.", "nested sets"),
        (r"a(?i)b|.", "not at the start"),
        (r"a*|b", "empty string"),
        (r"(?x)a", "the group or flag"),
        (r"(a", "missing ')'"),
        (r"a{3,1}", "maximum below its minimum"),
    ],
)
def test_refused_constructs_fail_with_one_line(regex, words):
    with pytest.raises(RegexError) as e:
        Pattern.from_regex(regex)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_a_pattern_that_leaves_text_unmatched_is_an_error():
    p = Pattern.from_regex(r"\p{L}+|\s")
    with pytest.raises(UnmatchedText, match="byte 4 "):
        p.pretokenize(b"abc 1")


def test_cli_refuses_a_bad_regex_in_one_line(capsys):
    code, out, err = run_main(capsys, "count", "-", "--pattern-regex", r"(?<=x)y", "-o", "-")
    assert code == 2 and "lookbehind" in err and len(err.strip().splitlines()) == 1


def test_the_class_tables_agree_where_they_overlap():
    """\\p{L}, \\p{N}, \\p{Ll}, \\p{M} come from the scanners' tables; the general-category
    table must give the same sets, so a custom pattern and a scanner never disagree."""
    gc = _runs_to_sets(_unicode_properties.GC_RUNS)
    names = _unicode_properties.GENERAL_CATEGORIES

    def cats(*codes):
        return union(*(gc.get(names.index(c), ()) for c in codes))

    pinned = PinnedClasses()
    assert cats("Lu", "Ll", "Lt", "Lm", "Lo") == pinned.set_of("gc:L")
    assert cats("Nd", "Nl", "No") == pinned.set_of("gc:N")
    assert cats("Mn", "Mc", "Me") == pinned.set_of("gc:M")
    assert cats("Ll") == pinned.set_of("gc:Ll")
    assert _unicode_table.UNICODE_VERSION == _unicode_properties.UNICODE_VERSION
    assert _unicode_categories.UNICODE_VERSION == _unicode_properties.UNICODE_VERSION


def _rustbpe():
    if IS_PYPY:
        pytest.skip("rustbpe is a CPython extension (not importable on PyPy)")
    return pytest.importorskip("rustbpe", reason="rustbpe is not installed")


def _rustbpe_ranks(docs, vocab_size, pattern):
    tok = _rustbpe().Tokenizer()
    tok.train_from_iterator(docs, vocab_size, pattern=pattern)
    return [(bytes(b), r) for b, r in tok.get_mergeable_ranks()]


@pytest.mark.parametrize("name", ["english_small", "chinese", "mixed_multilingual", "python_code"])
def test_rustbpe_profile_with_nanochat_pattern_equals_rustbpe(name):
    _rustbpe()
    with open(corpus_path(name + ".txt"), "rb") as f:
        docs = f.read(1 << 17).decode("utf-8", "ignore").split("<|endoftext|>")
    vocab, _ = train_from_texts(docs, 1000, profile="rustbpe", pattern="regex:" + NANOCHAT)
    assert [(vocab[i], i) for i in sorted(vocab)] == _rustbpe_ranks(docs, 1000, NANOCHAT)


def test_cli_rustbpe_profile_with_pattern_regex_equals_rustbpe(tmp_path, capsys):
    _rustbpe()
    with open(corpus_path("english_small.txt"), "rb") as f:
        text = f.read(1 << 17).decode("utf-8", "ignore")
    src = tmp_path / "in.txt"
    src.write_bytes(text.encode("utf-8"))
    code, _, err = run_main(
        capsys, "train", str(src), "--profile", "rustbpe", "--pattern-regex", NANOCHAT,
        "--vocab-size", "800", "-o", str(tmp_path / "m"), "--quiet",
    )  # fmt: skip
    assert code == 0, err
    tok = Tokenizer.from_tiktoken(str(tmp_path / "m" / "tokenizer.tiktoken"))  # rustbpe's own shape
    assert tok.pattern == "regex:" + NANOCHAT
    assert [(tok.vocab[i], i) for i in sorted(tok.vocab)] == _rustbpe_ranks([text], 800, NANOCHAT)


def test_tiktoken_encoding_with_a_custom_pat_str():
    if IS_PYPY:
        pytest.skip("tiktoken is a CPython extension")
    tiktoken = pytest.importorskip("tiktoken")
    cache = os.path.join(shared_root(), "data", "tiktoken", "cache")
    if not os.path.isdir(cache):
        pytest.skip("tiktoken cache not found at %s (set REFBPE_SHARED to the shared/ directory)" % cache)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    base = tiktoken.get_encoding("cl100k_base")
    theirs = tiktoken.Encoding(
        "custom", pat_str=NANOCHAT, mergeable_ranks=base._mergeable_ranks, special_tokens={}
    )
    mine = Tokenizer.from_tiktoken("cl100k_base", special_tokens={}, pattern="regex:" + NANOCHAT)
    with open(corpus_path("mixed_multilingual.txt"), "rb") as f:
        text = f.read(1 << 16).decode("utf-8", "ignore")
    for part in (text, "It's 12345 ſtrange KELVIN\u212a\r\n\n  x", "x\n  "):
        assert mine.encode_ordinary(part) == theirs.encode_ordinary(part)


TEXT = "It's 12345 cats, ſtrange KELVIN\u212a!\n\n  Über 42\r\n" * 20


@pytest.mark.parametrize("fmt", ["gpt2", "hf", "tiktoken"])
def test_a_model_trained_with_a_regex_encodes_with_it(tmp_path, capsys, fmt):
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "m"
    code, _, err = run_main(
        capsys, "train", str(src), "--pattern-regex", NANOCHAT, "--vocab-size", "300", "--format", fmt,
        "-o", str(out), "--quiet",
    )  # fmt: skip
    assert code == 0, err
    model = {"gpt2": out, "hf": out / "tokenizer.json", "tiktoken": out / "tokenizer.tiktoken"}[fmt]
    tok = load_tokenizer(str(model))
    assert tok.pattern == "regex:" + NANOCHAT
    ids = tok.encode("x 12345")
    assert [tok.decode([i]) for i in ids] == ["x", " ", "12", "34", "5"]  # digits in pairs: nanochat's


def test_count_files_record_the_pattern(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    counts = tmp_path / "c.counts.tsv.gz"
    assert run_main(capsys, "count", str(src), "--pattern-regex", NANOCHAT, "-o", str(counts))[0] == 0
    assert read_counts_pattern(str(counts)) == "regex:" + NANOCHAT
    args = ["--vocab-size", "300", "--quiet", "-o"]
    assert run_main(capsys, "train", "--counts", str(counts), *args, str(tmp_path / "a"))[0] == 0
    direct = ["train", str(src), "--pattern-regex", NANOCHAT]
    assert run_main(capsys, *direct, *args, str(tmp_path / "b"))[0] == 0
    for name in ("vocab.json", "merges.txt", "refbpe.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    plain = tmp_path / "p.counts.tsv"
    assert run_main(capsys, "count", str(src), "-o", str(plain))[0] == 0
    code, _, err = run_main(capsys, "train", "--counts", str(counts), str(plain), *args, str(tmp_path / "c"))
    assert code == 2 and "different split patterns" in err


@settings(max_examples=examples(30))
@given(text=mixed_text(30), cuts=st.lists(st.integers(0, 200), max_size=6))
def test_encode_iterable_with_a_custom_pattern_equals_encode(text, cuts):
    tok = _model()
    text = text + "<|endoftext|>" + text[::-1]
    bounds = sorted(set(c for c in cuts if c < len(text)))
    parts = [text[a:b] for a, b in zip([0] + bounds, bounds + [len(text)])]
    assert list(tok.encode_iterable(parts)) == tok.encode(text)


def test_cli_encode_with_a_custom_pattern_in_parallel(tmp_path, capsys):
    tok = _model()
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(("<|endoftext|>".join([TEXT] * 30)), encoding="utf-8")
    model = tmp_path / "m"
    write_model_dir(str(model), tok.vocab, tok.merges, tok.special_tokens, {"pattern": tok.pattern})
    out = tmp_path / "ids.txt"
    args = ["--workers", "2", "--chunk-size", "1K", "--quiet"]
    assert run_main(capsys, "encode", str(model), str(corpus), "-o", str(out), *args)[0] == 0
    ids = [int(x) for x in out.read_text().split()]
    assert ids == tok.encode(corpus.read_bytes().decode("utf-8"))


_MODELS = {}


def _model():
    if not _MODELS:
        vocab, merges = train_from_texts([TEXT], 300, ["<|endoftext|>"], pattern="regex:" + NANOCHAT)
        _MODELS["m"] = Tokenizer(vocab, merges, ["<|endoftext|>"], pattern="regex:" + NANOCHAT)
    return _MODELS["m"]


def test_verify_against_rustbpe_with_the_pattern_regex(tmp_path, capsys):
    rustbpe = _rustbpe()
    text = TEXT + " 2024 12345 987654 " * 50
    src = tmp_path / "in.txt"
    src.write_bytes(text.encode("utf-8"))
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator([text], 320, pattern=NANOCHAT)
    ranks = tmp_path / "theirs.tiktoken"
    lines = ["%s %d\n" % (base64.b64encode(bytes(b)).decode(), r) for b, r in tok.get_mergeable_ranks()]
    ranks.write_text("".join(lines))
    common = ["verify", str(src), "--against", str(ranks), "--vocab-size", "320", "--profile", "rustbpe"]
    code, out, err = run_main(capsys, *common, "--pattern-regex", NANOCHAT)
    assert code == 0, out + err
    code, out, err = run_main(capsys, *common, "--pattern", "llama3")  # digits in threes: not theirs
    assert code == 1, out + err


@pytest.mark.parametrize("module", [patterns_module, utf8_ranges])
def test_the_docstring_examples_hold(module):
    assert doctest.testmod(module).failed == 0
