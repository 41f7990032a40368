"""The hand-written GPT-2 scanner against the ``regex`` module and its own invariants."""

from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import (
    CONTRACTIONS,
    DIGITS,
    EMOJI,
    WHITESPACE,
    examples,
    import_regex_or_skip,
    mixed_text,
    needs_regex,
    regex_version_mismatch,
    wide_char,
)

from refbpe.pretokenize.gpt2 import (
    CLASS_OF,
    GPT2_PATTERN,
    LETTER,
    NUMBER,
    OTHER,
    SPACE,
)
from refbpe.pretokenize.patterns import get_pattern

GPT2 = get_pattern("gpt2")
count_pretokens, pretokenize, pretokenize_str = GPT2.count_pretokens, GPT2.pretokenize, GPT2.pretokenize_str

# Lone surrogates arrive encoded with surrogatepass and are "other", as for regex.
SURROGATES = ["\ud800", "\udfff", "\ud83d\ude00"]

HAND_CASES = [
    ("", []),
    ("Hello world", ["Hello", " world"]),
    ("I'm here's", ["I", "'m", " here", "'s"]),
    ("DON'T", ["DON", "'", "T"]),  # contractions are lower case only
    ("we'll've they're I'd", ["we", "'ll", "'ve", " they", "'re", " I", "'d"]),
    ("'ll'", ["'ll", "'"]),
    (" 's", [" '", "s"]),
    ("''s", ["''", "s"]),
    ("a  b", ["a", " ", " b"]),
    ("a\n\nb", ["a", "\n", "\n", "b"]),
    ("a\r\n\r\nb", ["a", "\r\n\r", "\n", "b"]),
    ("\t\tx", ["\t", "\t", "x"]),
    (" \n x", [" \n", " x"]),
    ("x   ", ["x", "   "]),
    ("  ", ["  "]),
    ("  x", [" ", " x"]),
    ("123 4567", ["123", " 4567"]),  # GPT-2 does not split digit runs
    ("a 1b", ["a", " 1", "b"]),
    ("hello!!! ?", ["hello", "!!!", " ?"]),
    ("\u0661\u0662 abc", ["\u0661\u0662", " abc"]),  # Arabic-Indic digits
    ("\u216b\u217b", ["\u216b\u217b"]),  # Roman numerals are \p{N}
    ("\u00bd1", ["\u00bd1"]),
    ("\U0001f44d\U0001f3fd", ["\U0001f44d\U0001f3fd"]),
    (" \U0001f600!", [" \U0001f600!"]),
    ("e\u0301", ["e", "\u0301"]),  # a combining mark is not \p{L}
    ("\u00a0x", ["\u00a0", "x"]),
    ("a \u3000b", ["a", " ", "\u3000", "b"]),
    ("x\u2028y", ["x", "\u2028", "y"]),
    ("a\x1cb", ["a", "\x1c", "b"]),  # U+001C is not \s for regex
    (
        "\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440",
        ["\u041f\u0440\u0438\u0432\u0435\u0442", " \u043c\u0438\u0440"],
    ),
    ("\u4e2d\u6587\u3002\u6587", ["\u4e2d\u6587", "\u3002", "\u6587"]),
    ("\U0001d518\U0001d52b 2", ["\U0001d518\U0001d52b", " 2"]),
]


@pytest.mark.parametrize("text,pieces", HAND_CASES)
def test_hand_written_examples(text, pieces):
    assert pretokenize_str(text) == pieces
    assert pretokenize(text.encode("utf-8")) == [p.encode("utf-8") for p in pieces]


def test_char_class_spot_checks():
    for ch, cls in [
        ("a", LETTER),
        ("\u00e9", LETTER),
        ("\u4e2d", LETTER),
        ("\U00020b9f", LETTER),
        ("5", NUMBER),
        ("\u0661", NUMBER),
        ("\u216b", NUMBER),
        ("\U0001d7ce", NUMBER),
        (" ", SPACE),
        ("\u3000", SPACE),
        ("\x85", SPACE),
        ("\x1c", OTHER),
        ("\u200b", OTHER),
        ("\u0301", OTHER),
        ("\U0001f600", OTHER),
        ("'", OTHER),
        ("\U0010ffff", OTHER),
    ]:
        assert CLASS_OF[ord(ch)] == cls, (ch, cls)
    assert len(CLASS_OF) == 0x110000


def test_pretokenize_appends_to_out():
    out = [b"x"]
    assert pretokenize(b"a b", out) is out
    assert out == [b"x", b"a", b" b"]


# -- against regex (CPython) -----------------------------------------------------


def _regex_class(regex):
    letter, number, space = regex.compile(r"\p{L}"), regex.compile(r"\p{N}"), regex.compile(r"\s")

    def cls(ch):
        if letter.match(ch):
            return LETTER
        if number.match(ch):
            return NUMBER
        if space.match(ch):
            return SPACE
        return OTHER

    return cls


@pytest.mark.slow
@needs_regex
def test_class_table_equals_regex():
    import_regex_or_skip()
    reason = regex_version_mismatch()
    if reason:
        pytest.skip(reason)
    from refbpe.pretokenize._gen_unicode_table import classify_all

    expected = classify_all()
    bad = [cp for cp in range(0x110000) if CLASS_OF[cp] != expected[cp]]
    assert not bad, "%d code points differ from regex, first: %s" % (
        len(bad),
        ", ".join("U+%04X table=%d regex=%d" % (cp, CLASS_OF[cp], expected[cp]) for cp in bad[:10]),
    )


@needs_regex
def test_regex_unicode_version_probe_is_exact():
    """``regex_unicode_version()`` must report the version regex declares; a probe
    list that stops short would let a newer regex regenerate the table under an
    old version label (and the version guard above would not skip)."""
    import_regex_or_skip()
    from support import regex_declared_unicode_version

    from refbpe.pretokenize._gen_unicode_table import regex_unicode_version

    declared = regex_declared_unicode_version()
    if declared is None:
        pytest.skip("the installed regex does not declare its Unicode version in its metadata")
    assert regex_unicode_version() == declared


_regex_state = {}


def _comparable_char_filter():
    """When regex's Unicode is newer than the pinned table, characters whose class
    changed between the versions are left out here (test_class_table_equals_regex
    covers the table; this test is about the scanner's logic)."""
    regex = import_regex_or_skip()
    if "filter" not in _regex_state:
        if regex_version_mismatch():
            cls = _regex_class(regex)
            _regex_state["filter"] = lambda ch: cls(ch) == CLASS_OF[ord(ch)]
        else:
            _regex_state["filter"] = None
    return regex, _regex_state["filter"]


def _regex_text():
    return st.lists(
        st.one_of(
            mixed_text(max_atoms=8),
            st.sampled_from(WHITESPACE + ["\x1c", "\x1d", "\x1e", "\x1f"]),
            st.sampled_from(CONTRACTIONS),
            st.sampled_from(SURROGATES),
            st.text(wide_char, max_size=6),
        ),
        max_size=10,
    ).map("".join)


@pytest.mark.slow
@needs_regex
@settings(max_examples=examples(300))
@given(_regex_text())
@example("  \u3000 \x1c 's''s'S 'll\n\n\t x\u2028")
@example("".join(WHITESPACE) + "x" + "".join(WHITESPACE))
@example("".join(EMOJI) + " " + DIGITS + " x")
def test_scanner_equals_regex_findall(text):
    regex, keep = _comparable_char_filter()
    if keep is not None:
        text = "".join(ch for ch in text if keep(ch))
    assert pretokenize_str(text) == regex.findall(GPT2_PATTERN, text)


@needs_regex
@settings(max_examples=examples(200))
@given(
    st.lists(
        st.sampled_from(WHITESPACE + ["\x1c", "\x1f", "a", "1", "!", "'", "s", "\U0001f600", "\u4e2d"]),
        max_size=12,
    ).map("".join)
)
def test_scanner_equals_regex_on_whitespace_soup(text):
    regex, _ = _comparable_char_filter()
    assert pretokenize_str(text) == regex.findall(GPT2_PATTERN, text)


# -- invariants (every interpreter) --------------------------------------------------


@settings(max_examples=examples(100))
@given(st.one_of(mixed_text(), st.text(wide_char)))
def test_pieces_concatenate_to_input(text):
    data = text.encode("utf-8")
    pieces = pretokenize(data)
    assert b"".join(pieces) == data
    assert all(pieces)
    for p in pieces:
        p.decode("utf-8")  # pieces never split a UTF-8 sequence


@settings(max_examples=examples(100))
@given(mixed_text())
def test_no_look_behind(text):
    """Matches start fresh at every piece boundary (what chunk cutting relies on)."""
    pieces = pretokenize_str(text)
    for k in range(1, len(pieces)):
        assert pretokenize_str("".join(pieces[k:])) == pieces[k:]


@settings(max_examples=examples(150))
@given(st.lists(mixed_text(max_atoms=6), max_size=4).map(lambda parts: "\n".join(parts * 2)))
def test_count_pretokens_equals_counter(text):
    data = text.encode("utf-8")
    assert count_pretokens(data) == dict(Counter(pretokenize(data)))
    counts = {b"seed": 3}
    count_pretokens(data, counts)
    expected = Counter(pretokenize(data))
    expected[b"seed"] += 3
    assert counts == dict(expected)
