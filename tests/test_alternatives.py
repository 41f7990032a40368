"""``alternatives.alternative`` names the regex alternative that produced each pre-token:
held to ``regex`` with every alternative in its own capturing group (CPython)."""

import pytest
from hypothesis import example, given, settings
from support import edge_text, examples, import_regex_or_skip, needs_regex, regex_version_mismatch, soup_text

from refbpe.pretokenize.alternatives import alternative, alternatives
from refbpe.pretokenize.patterns import get_pattern, pattern_names


@pytest.mark.parametrize("name", pattern_names())
def test_alternatives_join_to_the_pattern(name):
    assert "|".join(alternatives(name)) == get_pattern(name).regex


def _check(name, text):
    regex = import_regex_or_skip()
    if regex_version_mismatch():
        pytest.skip(regex_version_mismatch())
    grouped = regex.compile("|".join("(%s)" % a for a in alternatives(name)))
    data = text.encode("utf-8")
    start = 0
    matches = list(grouped.finditer(text))
    ends = get_pattern(name).piece_ends(data)
    assert len(matches) == len(ends)
    for m, end in zip(matches, ends):
        index, regex_text = alternative(name, data, start, end)
        assert index == m.lastindex - 1, (m.group(), index, m.lastindex - 1)
        assert regex_text == alternatives(name)[index]
        start = end


@pytest.mark.slow
@needs_regex
@pytest.mark.parametrize("name", pattern_names())
@settings(max_examples=examples(200))
@given(text=edge_text())
@example(text="x\n  ")
@example(text="!!\u0301 !\u0301 \u0301HELLO HELLO's x's 's A'S \u01c5\u02b0 \t\n  \n x")
def test_alternative_equals_regex(name, text):
    _check(name, text)


@pytest.mark.slow
@needs_regex
@pytest.mark.parametrize("name", pattern_names())
@settings(max_examples=examples(200))
@given(text=soup_text)
def test_alternative_equals_regex_on_soup(name, text):
    _check(name, text)
