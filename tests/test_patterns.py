"""The GPT-4 / GPT-4o / Llama 3 scanners against ``regex`` running the exact patterns.

On CPython every scanner is held to ``regex.findall`` of its pattern text (the
strings tiktoken ships, possessive quantifiers and ``\\s++$`` included) on text
built to hit each alternative's edges.  On PyPy, whose ``regex`` is wrong
outside ASCII, the same scanners are held to ``regex`` run by a CPython
subprocess on a fixed, seeded batch of such texts.
"""

import json
import os
import random
import subprocess

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import (
    CONTRACTIONS_ANY_CASE,
    EMOJI,
    IS_PYPY,
    MARKS,
    NEWLINE_RUNS,
    NUMBERS,
    PREFIXES,
    PUNCT_NEWLINE,
    REPO_ROOT,
    SOUP,
    WHITESPACE,
    WORDS_ANY_CASE,
    edge_text,
    examples,
    import_regex_or_skip,
    needs_regex,
    other_interpreter,
    regex_version_mismatch,
    soup_text,
)

from refbpe.pretokenize.patterns import get_pattern, pattern_names

NEW_PATTERNS = ["cl100k_base", "llama3", "o200k_base"]

# -- pattern texts are tiktoken's ----------------------------------------------------


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_pattern_text_is_tiktokens(name, monkeypatch):
    pytest.importorskip("tiktoken")
    import tiktoken_ext.openai_public as public

    # The constructor without its ranks file: only pat_str is wanted here.
    monkeypatch.setattr(public, "load_tiktoken_bpe", lambda *args, **kwargs: {})
    assert get_pattern(name).regex == getattr(public, name)()["pat_str"]


def test_registry_names_and_errors():
    assert pattern_names()[0] == "gpt2"
    assert set(pattern_names()) == {"gpt2", "cl100k_base", "llama3", "o200k_base"}
    assert get_pattern() is get_pattern("gpt2")
    with pytest.raises(ValueError, match="unknown pattern 'gpt5'"):
        get_pattern("gpt5")


# -- hand cases (every interpreter; checked against regex too on CPython) ---------------

HAND_CASES = {
    "cl100k_base": [
        ("Hello world", ["Hello", " world"]),
        ("DON'T i'M we'LL", ["DON", "'T", " i", "'M", " we", "'LL"]),
        ("'\u017f", ["'\u017f"]),
        ("12345 1", ["123", "45", " ", "1"]),
        ("\tx  y", ["\tx", " ", " y"]),
        ("a!\n\nb", ["a", "!\n\n", "b"]),
        ("x\n  ", ["x", "\n  "]),  # \s++$
        ("x\n  y", ["x", "\n", " ", " y"]),
        ("a\r\n\r\nb", ["a", "\r\n\r\n", "b"]),
        ("e\u0301t\u00e9", ["e", "\u0301t\u00e9"]),  # a mark is not \p{L}
    ],
    "llama3": [
        ("x\n  ", ["x", "\n", "  "]),  # the one difference from cl100k_base
        ("x\n  y", ["x", "\n", " ", " y"]),
        ("DON'T", ["DON", "'T"]),
    ],
    "o200k_base": [
        ("Hello world", ["Hello", " world"]),
        ("HelloWorld", ["Hello", "World"]),
        ("DON'T don't", ["DON'T", " don't"]),
        ("'s", ["'s"]),
        ("HELLOworld", ["HELLOworld"]),
        ("12345", ["123", "45"]),
        ("a/\n/b", ["a", "/\n/", "b"]),
        ("e\u0301t\u00e9", ["e\u0301t\u00e9"]),
        ("\u0301HELLO ", ["\u0301", "HELLO", " "]),
        ("x\n  ", ["x", "\n", "  "]),
        # ASCII runs that a non-ASCII character continues or ends (the scanner's a-z shortcut)
        ("ABC\u00e9 x", ["ABC\u00e9", " x"]),
        ("abc\u00c0x", ["abc", "\u00c0x"]),
        ("A\u02b0b", ["A\u02b0b"]),
        ("Hi\u0301!", ["Hi\u0301", "!"]),
        ("na\u00efve's", ["na\u00efve's"]),
        (".\u00c9t\u00e9", [".\u00c9t\u00e9"]),
        ("\u00c0B c", ["\u00c0B", " c"]),
        ("ABC\u00c0\u00c9", ["ABC\u00c0\u00c9"]),
        ("(\u0301a", ["(\u0301a"]),
    ],
}


@pytest.mark.parametrize(
    "name,text,pieces", [(name, t, p) for name, cases in HAND_CASES.items() for t, p in cases]
)
def test_hand_written_examples(name, text, pieces):
    assert get_pattern(name).pretokenize_str(text) == pieces
    if not IS_PYPY:
        regex = import_regex_or_skip()
        assert regex.findall(get_pattern(name).regex, text) == pieces


# -- against regex (CPython) -------------------------------------------------------------

_filter_state = {}


def _comparable(text):
    """``text`` without the characters whose categories changed between the pinned
    table's Unicode and regex's (none when the versions agree)."""
    regex = import_regex_or_skip()
    if "keep" not in _filter_state:
        keep = None
        if regex_version_mismatch():
            from refbpe.pretokenize._gen_unicode_table import classify_all, classify_categories
            from refbpe.pretokenize._unicode_categories import RUNS
            from refbpe.pretokenize.gpt2 import CLASS_OF

            now, cats = classify_categories(), classify_all()
            pinned = bytearray(0x110000)
            bounds = list(RUNS) + [(0x110000, 0)]
            for (a, c), (b, _) in zip(bounds, bounds[1:]):
                pinned[a:b] = bytes([c]) * (b - a)
            keep = lambda ch: now[ord(ch)] == pinned[ord(ch)] and cats[ord(ch)] == CLASS_OF[ord(ch)]  # noqa: E731
        _filter_state["keep"] = keep
    keep = _filter_state["keep"]
    return regex, text if keep is None else "".join(ch for ch in text if keep(ch))


def _check_against_regex(name, text):
    regex, text = _comparable(text)
    pattern = get_pattern(name)
    assert pattern.pretokenize_str(text) == regex.findall(pattern.regex, text)


@pytest.mark.slow
@needs_regex
@settings(max_examples=examples(400))
@given(edge_text())
@example("x\n  ")
@example("DON'T we'LL I'\u017f 'S 'Ll")
@example("\u0301HELLO A\u0301B\u01c5\u02b0x ")
@example(" !\r\n/ //\n 12345 \t\r\n\r\n")
def test_cl100k_equals_regex(text):
    _check_against_regex("cl100k_base", text)


@needs_regex
@settings(max_examples=examples(400))
@given(edge_text())
@example("x\n  ")
@example("a \r\n \n\t")
def test_llama3_equals_regex(text):
    _check_against_regex("llama3", text)


@needs_regex
@settings(max_examples=examples(400))
@given(edge_text())
@example("\u0301HELLO A\u0301B\u01c5\u02b0x ")
@example("DON'T HelloWorld'S \u017f'\u017f")
@example("!\u0301 !!\u0301 \u0301\u0301a \u3005A")
@example(" !\r\n/ //\n 12345 \t\r\n\r\n")
@example(
    "ABC ABc aBC\tHello !Hi HELLO\u00e9 Ab\u00e9c A\u0301 x'S DON'T ab\u00c9 Ab1 AB!"
    " (Hi) .x ,\u00e9 !\u0301 ,, a"
)
def test_o200k_equals_regex(text):
    _check_against_regex("o200k_base", text)


@pytest.mark.slow
@needs_regex
@pytest.mark.parametrize("name", NEW_PATTERNS)
@settings(max_examples=examples(300))
@given(text=soup_text)
def test_scanners_equal_regex_on_soup(name, text):
    _check_against_regex(name, text)


@needs_regex
def test_llama3_differs_from_cl100k_only_at_the_end():
    """The finding behind the ``llama3`` name: the original pattern splits a final
    whitespace run holding a newline, today's cl100k_base keeps it whole."""
    regex = import_regex_or_skip()
    cl, ll = get_pattern("cl100k_base").regex, get_pattern("llama3").regex
    assert regex.findall(cl, "x\n  ") == ["x", "\n  "]
    assert regex.findall(ll, "x\n  ") == ["x", "\n", "  "]
    assert regex.findall(cl, "x\n  y") == regex.findall(ll, "x\n  y")


# -- the category table ------------------------------------------------------------------


def test_categories_collapse_to_the_gpt2_classes():
    """Ll, Lu/Lt, Lm/Lo together are GPT-2's letters; marks are its "other"; numbers
    and whitespace agree: one Unicode reading for every pattern."""
    from refbpe.pretokenize import gpt2, o200k

    collapse = {0: gpt2.OTHER, 6: gpt2.LETTER, 5: gpt2.LETTER, 7: gpt2.LETTER, 3: gpt2.OTHER}
    collapse.update({8: gpt2.NUMBER, 16: gpt2.SPACE})
    flags = o200k.FLAGS_OF
    bad = [cp for cp in range(0, 0x110000, 1) if collapse[flags[cp]] != gpt2.CLASS_OF[cp]]
    assert not bad, ["U+%04X" % cp for cp in bad[:10]]


def test_case_variants_are_the_ascii_pair_and_long_s():
    from refbpe.pretokenize._unicode_categories import CASE_VARIANTS

    for letter, cps in CASE_VARIANTS.items():
        extra = {0x17F} if letter == "s" else set()
        assert set(cps) == {ord(letter), ord(letter.upper())} | extra


# -- invariants (every interpreter) -----------------------------------------------------


@pytest.mark.parametrize("name", NEW_PATTERNS)
@settings(max_examples=examples(100))
@given(text=edge_text())
def test_pieces_concatenate_and_restart(name, text):
    """Pieces cover the input, never split a UTF-8 sequence, and a scan restarted at
    any piece boundary gives the same pieces (matches never look behind)."""
    pattern = get_pattern(name)
    data = text.encode("utf-8")
    pieces = pattern.pretokenize(data)
    assert b"".join(pieces) == data and all(pieces)
    for p in pieces:
        p.decode("utf-8")
    for k in range(1, len(pieces)):
        assert pattern.pretokenize(b"".join(pieces[k:])) == pieces[k:]


@pytest.mark.parametrize("name", pattern_names())
@settings(max_examples=examples(50))
@given(text=edge_text())
def test_count_pretokens_equals_counter(name, text):
    from collections import Counter

    pattern = get_pattern(name)
    data = text.encode("utf-8")
    assert pattern.count_pretokens(data) == dict(Counter(pattern.pretokenize(data)))
    small, counts = {}, {}
    pattern.count_pretokens(data, counts, small)
    from refbpe.pretokenize.gpt2 import add_small_counts

    assert add_small_counts(small, counts) == dict(Counter(pattern.pretokenize(data)))


@settings(max_examples=examples(100))
@given(pieces=st.lists(st.binary(max_size=7), max_size=20))
@example(pieces=[b"", b"\x00", b"\x00\x00\x01", b"\xff" * 7, b"\x80" + b"\x00" * 6])
def test_small_keys_become_their_bytes(pieces):
    """``add_small_pairs`` turns each packed key (a leading 1 bit, then the bytes) back into
    its bytes, leading zero bytes and all lengths 0-7 included, adding to what is there."""
    from collections import Counter

    from refbpe.pretokenize.gpt2 import add_small_pairs

    pairs = [(int.from_bytes(b"\x01" + p, "big"), 1) for p in pieces]
    assert add_small_pairs(pairs, {b"\x00": 5}) == dict(Counter(pieces) + Counter({b"\x00": 5}))


# -- the same splits on PyPy (and CPython) ----------------------------------------------


def seeded_texts(count=3000, seed=14):
    """A fixed batch of edge texts (no Hypothesis: both interpreters must make the same)."""
    rng = random.Random(seed)
    pools = [
        WORDS_ANY_CASE,
        CONTRACTIONS_ANY_CASE,
        MARKS,
        NUMBERS,
        PREFIXES,
        PUNCT_NEWLINE,
        NEWLINE_RUNS,
        WHITESPACE,
        EMOJI,
        SOUP,
    ]
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(0, 10)):
            pool = rng.choice(pools)
            parts.append(rng.choice(pool))
            if rng.random() < 0.1:
                parts.append(chr(rng.choice([rng.randint(0x20, 0x2FFF), rng.randint(0x3000, 0xD7FF)])))
        texts.append("".join(parts))
    return texts


_SPLIT_SCRIPT = r"""
import json, sys
texts = json.loads(sys.stdin.read())
mode = sys.argv[1]
out = {}
if mode == "regex":
    import regex
    from refbpe.pretokenize.patterns import get_pattern
    for name in sys.argv[2:]:
        pat = regex.compile(get_pattern(name).regex)
        out[name] = [pat.findall(t) for t in texts]
else:
    from refbpe.pretokenize.patterns import get_pattern
    for name in sys.argv[2:]:
        out[name] = [get_pattern(name).pretokenize_str(t) for t in texts]
sys.stdout.write(json.dumps(out))
"""


def _splits_in(python, mode, texts, names):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    r = subprocess.run(
        [python, "-c", _SPLIT_SCRIPT, mode] + list(names),
        input=json.dumps(texts).encode(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    return json.loads(r.stdout)


@pytest.mark.slow
def test_scanners_equal_regex_across_interpreters():
    """This interpreter's scanners equal ``regex`` on CPython (a subprocess from PyPy;
    from CPython, PyPy's scanners are checked too when PyPy is here)."""
    names = NEW_PATTERNS + ["gpt2"]
    texts = seeded_texts()
    if IS_PYPY:
        cpython = other_interpreter()
        if cpython is None:
            pytest.skip("no CPython with regex next to this PyPy to record the expected splits")
        expected = _splits_in(cpython, "regex", texts, names)
    else:
        regex = import_regex_or_skip()
        if regex_version_mismatch():
            pytest.skip(regex_version_mismatch())
        expected = {n: [regex.findall(get_pattern(n).regex, t) for t in texts] for n in names}
    mine = {n: [get_pattern(n).pretokenize_str(t) for t in texts] for n in names}
    for n in names:
        bad = [t for t, a, b in zip(texts, mine[n], expected[n]) if a != b]
        assert not bad, "%s: %d texts differ, first %r" % (n, len(bad), bad[0])
    if not IS_PYPY:
        pypy = other_interpreter()
        if pypy is None:
            return  # PyPy's own run of this test covers it
        theirs = _splits_in(pypy, "scanner", texts, names)
        for n in names:
            bad = [t for t, a, b in zip(texts, theirs[n], expected[n]) if a != b]
            assert not bad, "%s on PyPy: %d texts differ, first %r" % (n, len(bad), bad[0])
