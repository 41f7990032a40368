"""Repeats of groups in custom split patterns: linear time, and ``regex``'s pieces.

* patterns that ``re`` and ``regex`` backtrack on exponentially (``(a+)+$``,
  ``(a|aa)+$``, ``(aa?)+$``, ``(?:ab|a)*c``, ...) split ``a`` x 5000 then ``!``
  in a child process well within its timeout, into the pieces ``regex`` gives
  on the same text with fewer ``a`` (where it is fast), and a few thousand
  characters of mixed text into ``regex``'s pieces; ``refbpe train
  --pattern-regex`` trains on that text; those that match the empty string are
  refused in one line;
* the generated matcher equals ``regex.findall`` (CPython) on random patterns
  built from alternation, repeats of groups (greedy, lazy, possessive,
  bounded or not), classes, lookahead, atomic groups and anchors, and equals
  ``re`` over the same bytes pattern on every interpreter (short texts, where
  ``re``'s backtracking is bounded);
* a long loop needs no deep Python stack (``regex_loops.drive``), even when the
  scan starts near the recursion limit;
* ``re`` never runs a pattern it could backtrack on exponentially: CPython
  takes the generated matcher, and a pattern too large for it is refused in
  one line naming the fix (``regex_risk``).
"""

import json
import re
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support import IS_PYPY, assert_one_line_error, cli_env, examples, import_regex_or_skip, run_main

from refbpe.pretokenize.regex_compile import _nullable, _Writer, compile_split_regex
from refbpe.pretokenize.regex_engine import build_matcher
from refbpe.pretokenize.regex_risk import backtracks_exponentially
from refbpe.pretokenize.regex_syntax import RegexError, parse_regex
from refbpe.pretokenize.unicode_classes import PinnedClasses

PINNED = PinnedClasses()

# Exponential in ``re`` and ``regex`` on ``a`` x n then ``!``, but ``(x|y+)+|\S`` (an issue's example:
# nothing follows its repeat, so it is safe for both) and ``(a+)+$`` (``regex``'s time grows as n^3).
ADVERSARIAL = [
    r"(a+)+$|\s+|\S",
    r"(a|a)+$|\s+|\S",
    r"(a|aa)+$|\s+|\S",
    r"(aa?)+$|\s+|\S",
    r"(?:ab|a)*c|\s+|\S",
    r"(x|y+)+|\S",
    r"(?:a|a)+?$|\s+|\S",
    r"(?:a{1,3})+$|\s+|\S",
    r"(?:a|aa){0,20}b|\s+|\S",
    r"(?:(?:a|a)+b?)+$|\s+|\S",
    r"(?:|a)+b|\S",
]


_CHILD = """
import json, sys
from refbpe.pretokenize import Pattern
out = {}
for regex in json.loads(sys.argv[1]):
    out[regex] = Pattern.from_regex(regex).pretokenize_str("a" * 5000 + "!")
print(json.dumps(out))
"""


def _regex_pieces(regex, text, timeout=None):
    """``regex``'s matches (``findall`` would give a capturing group's text instead)."""
    return [m.group() for m in import_regex_or_skip().finditer(regex, text, timeout=timeout)]


def _pieces(regex, text, engine=None):
    compiled = compile_split_regex(regex, PINNED, engine)
    return [p.decode("utf-8") for p in compiled.pieces(text.encode("utf-8"))]


def test_exponential_shapes_split_their_worst_text_quickly():
    """The child's timeout is the bound: all of them take 3-6 s together on CPython and 8-16 s
    on PyPy (most of it its JIT warming up to many small functions), on a loaded machine, where
    ``re`` would take 2^5000 steps on most."""
    r = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(ADVERSARIAL)],
        capture_output=True,
        text=True,
        timeout=120,
        env=cli_env(),
    )
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    # On a shorter text of the same shape ``regex`` is fast: one piece per character, every k.
    shape = [list("a" * k + "!") for k in range(13)]
    for regex in ADVERSARIAL:
        assert [_pieces(regex, "a" * k + "!") for k in range(13)] == shape, regex
        if not IS_PYPY:
            assert [_regex_pieces(regex, "a" * k + "!") for k in range(13)] == shape, regex
        assert got[regex] == list("a" * 5000 + "!"), regex


def test_train_with_an_exponential_shape_on_its_worst_text(tmp_path):
    corpus = tmp_path / "in.txt"
    corpus.write_text(("a" * 5000 + "!\n") * 3 + "the cat sat\n", encoding="utf-8")
    args = ["train", str(corpus), "--pattern-regex", r"(a|aa)+$|a{1,3}|\s+|\S", "--vocab-size", "258"]
    r = subprocess.run(
        [sys.executable, "-m", "refbpe"] + args + ["-o", str(tmp_path / "m"), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        env=cli_env(),
    )
    assert r.returncode == 0, r.stderr
    merges = (tmp_path / "m" / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert merges[-2:] == ["a a", "aa a"]  # pieces "aaa", never longer


@pytest.mark.parametrize("regex", ADVERSARIAL)
def test_an_exponential_shape_gives_regex_pieces_on_mixed_text(regex):
    import_regex_or_skip()
    regex += "" if r"\s" in regex else r"|\s"  # the text holds whitespace
    text = "".join(("a" * (k % 7) + "b !a\n"[k % 5] + "c" * (k % 3 == 0)) for k in range(900))
    assert len(text) > 3000
    assert _pieces(regex, text) == _regex_pieces(regex, text)


@pytest.mark.parametrize("regex", [r"(?:a*b?)*|\S", r"((a+)?)+|\S", r"(a|a)*$|\s+|\S", r"(aa?)*$|\s+|\S"])
def test_an_exponential_shape_that_matches_the_empty_string_is_refused_in_one_line(tmp_path, capsys, regex):
    path = tmp_path / "t.txt"
    path.write_text("a" * 5000 + "!", encoding="utf-8")
    status, _, err = run_main(capsys, "split", str(path), "--pattern-regex", regex, "-o", str(tmp_path / "o"))
    assert_one_line_error(status, err, "refbpe split: error: .*empty string")


# -- random patterns against regex and re --------------------------------------------------

_LEAVES = ["a", "b", "[ab]", " ", "a+", "b*", "[ab]?", "a{1,2}?", "a++", "$", "^", "(?=a)", "(?!b)"]
_QUANTIFIERS = ["*", "+", "?", "{2}", "{0,2}", "{1,3}", "{2,}", "{,2}", "{0,20}"]


def _patterns():
    def extend(children):
        sequence = st.lists(children, min_size=1, max_size=3).map("".join)
        alternation = st.lists(sequence, min_size=2, max_size=3).map(lambda xs: "(?:%s)" % "|".join(xs))
        group = st.one_of(sequence.map("(?:{})".format), alternation)
        repeat = st.tuples(group, st.sampled_from(_QUANTIFIERS), st.sampled_from(["", "?", "+"]))
        wrapped = st.tuples(st.sampled_from(["(?=", "(?!", "(?>"]), sequence).map(lambda t: t[0] + t[1] + ")")
        return st.one_of(alternation, repeat.map("".join), wrapped, sequence)

    body = st.recursive(st.sampled_from(_LEAVES), extend, max_leaves=8)
    tail = st.sampled_from(["", "a", "b", "!", "[ab]", "(?:a|b!)"])
    return st.tuples(body, tail, st.sampled_from([r"|\s+|\S", "|.|\n"])).map("".join)


def _texts(short):
    letters = st.sampled_from(["a", "b", " ", "!", "\n", "aa", "ab"])
    return st.lists(letters, max_size=6 if short else 150).map("".join)


class _Matcher(object):
    """``regex`` written by ``regex_engine`` (and as ``re``'s bytes pattern), as
    ``compile_split_regex`` does, without deriving its cuts (the slow part, here)."""

    def __init__(self, regex):
        try:
            tree = parse_regex(regex)
        except RegexError:  # a quantified lookahead or anchor, as (?=a)*
            tree = ("look", None, False)
        assume(not _nullable(tree))
        writer = _Writer(PINNED)
        self.byte_pattern = writer.write(tree)
        self.scan, self.atoms = build_matcher(tree, writer.code_points, _nullable)

    def pieces(self, data):
        ends, gap = self.scan(self.atoms(data), data, len(data))
        assert gap < 0, gap  # the catch-all matches every character
        return [data[a:b] for a, b in zip([0] + ends, ends)]


@settings(max_examples=examples(150))
@given(regex=_patterns(), text=st.one_of(_texts(True), _texts(False)))
def test_the_generated_matcher_equals_regex_on_random_patterns(regex, text):
    import_regex_or_skip()
    matcher = _Matcher(regex)
    try:
        expected = _regex_pieces(regex, text, timeout=5)
    except TimeoutError:  # regex itself backtracking: no reference
        assume(False)
    assert [p.decode() for p in matcher.pieces(text.encode())] == expected


@settings(max_examples=examples(150))
@given(regex=_patterns(), text=_texts(True))
def test_the_generated_matcher_equals_re_on_random_patterns(regex, text):
    """``re`` over the same bytes pattern (exact on every interpreter) is the reference; on
    texts this short its backtracking is bounded."""
    matcher = _Matcher(regex)
    data = text.encode()
    assert matcher.pieces(data) == [m.group() for m in re.finditer(matcher.byte_pattern, data)]


# -- the stack, and re kept away from exponential patterns -----------------------------------


def _stack_depth():
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def test_a_long_loop_started_near_the_recursion_limit_completes():
    """3000 iterations of a loop whose continuation can fail, each a few nested calls."""
    regex = r"(?:a|aa)+c|(?:ab|a)+c|\s+|\S"
    text = "a" * 3000 + "c " + "ab" * 1500 + "c"
    shallow = _pieces(regex, text, "generated")
    assert [len(p) for p in shallow] == [3001, 1, 3001]

    def nested(depth):
        return nested(depth - 1) if depth else _pieces(regex, text, "generated")

    assert nested(sys.getrecursionlimit() - _stack_depth() - 80) == shallow
    if not IS_PYPY:
        assert shallow == _regex_pieces(regex, text)


@pytest.mark.parametrize(
    "regex,risky",
    [
        (r"(a+)+$", True),
        (r"(a|aa)+$", True),
        (r"(aa?)+b", True),
        (r"(?:ab|a)*c", True),
        (r"(?:a|a){1,50}$", True),
        (r"(?:a|aa){3}", True),  # its three mandatory iterations backtrack, whatever follows
        (r"(?:a|aa){3}+", True),  # possessive too
        (r"(?:a{1,3})+(?=b)", True),
        (r"(?:a|(?=b))+c", True),
        (r"(?:(?:a|aa)+b)+", True),  # the inner repeat: b can fail
        (r"(?=(?:a|aa)+$)a", True),
        (r"(a+)+", False),  # nothing follows: the first iteration that matches is kept
        (r"(a|aa)+[\r\n]*", False),
        (r"[^\r\n\p{L}\p{N}]?(?:\p{L}|\p{L}\p{M})+", False),
        (r"(?=(?:a|aa)+)a", False),
        (r"(?:(?:a|aa)+)++c", False),
        (r"(?:ab)+$", False),
        (r"(?:a{2}b)+$", False),
        (r"(?:a|aa)++$", False),
        (r"(?>a|aa)+$", False),
        (r"b(?:a|aa)?$", False),
        (r"\p{L}+\s*\d{1,3}$", False),
        (r"(?:a++b)+$", False),
    ],
)
def test_which_patterns_re_may_backtrack_on_exponentially(regex, risky):
    assert backtracks_exponentially(parse_regex(regex), _nullable) is risky
    split = regex + r"|\s+|\S"
    if not risky:
        assert compile_split_regex(split, PINNED, "re").engine == "re"
        return
    assert compile_split_regex(split, PINNED).engine == "generated"  # the default engine, on CPython too
    with pytest.raises(RegexError, match="exponential"):
        compile_split_regex(split, PINNED, "re")


def test_a_risky_pattern_too_large_for_the_generated_matcher_is_refused_in_one_line():
    with pytest.raises(RegexError) as e:
        compile_split_regex(r"(?:a|aa){3000}|\s+|\S", PINNED)
    message = str(e.value)
    assert "exponential" in message and "(?>" in message and "\n" not in message
    # The same count of a group without a choice is safe for re, which takes it.
    assert compile_split_regex(r"(?:ab){3000}|\s+|\S", PINNED, "generated").engine == "re"
