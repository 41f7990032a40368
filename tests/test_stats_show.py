"""refbpe.analysis.stats against figures computed from Tokenizer.encode; refbpe.analysis.show's units."""

import collections
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import EMOJI, examples, mixed_text
from test_tokenizer import EOT, small_tokenizer

from refbpe.analysis.show import render, render_plain, units
from refbpe.analysis.stats import corpus_stats, format_table, format_top_tokens, percentile


def test_percentile_is_nearest_rank():
    assert percentile([1, 2, 3, 4], 50) == 2
    assert percentile(list(range(1, 101)), 99) == 99
    assert percentile(list(range(1, 201)), 99) == 198
    assert percentile([5], 99) == 5
    assert percentile([], 99) is None


@settings(max_examples=examples(30))
@given(
    docs=st.lists(mixed_text(max_atoms=12, extra=["a\nb", "\n"]), min_size=1, max_size=6),
    chunk_size=st.integers(1, 30),
)
def test_stats_equal_direct_figures(tmp_path_factory, docs, chunk_size):
    tok = small_tokenizer()[0]
    text = EOT.join(docs)
    path = tmp_path_factory.mktemp("stats") / "c.txt"
    path.write_bytes(text.encode("utf-8"))
    s = corpus_stats(tok, [str(path)], top=5, workers=1, chunk_size=chunk_size)
    ids = tok.encode(text)
    nonempty = [d for d in docs if d]
    ratios = sorted(len(d.encode("utf-8")) / len(tok.encode(d)) for d in nonempty)
    assert s["bytes"] == len(text.encode("utf-8"))
    assert s["tokens"] == len(ids)
    assert s["documents"] == len(nonempty)
    per_doc = s["per_document_bytes_per_token"]
    if ratios:
        assert per_doc["median"] == pytest.approx(statistics.median(ratios))
        assert per_doc["mean"] == pytest.approx(sum(ratios) / len(ratios))
        assert per_doc["p99"] == percentile(ratios, 99)
    else:
        assert per_doc == {"mean": None, "median": None, "p99": None}
    counts = collections.Counter(ids)
    assert s["vocab_used"] == len(counts)
    want_top = sorted(counts, key=lambda i: (-counts[i], i))[:5]
    assert [t["id"] for t in s["top_tokens"]] == want_top
    assert [t["count"] for t in s["top_tokens"]] == [counts[i] for i in want_top]


def test_table_has_one_row_per_model(tmp_path):
    tok = small_tokenizer()[0]
    (tmp_path / "c.txt").write_text("hello world\n" + EOT + "again\n", encoding="utf-8")
    s = corpus_stats(tok, [str(tmp_path / "c.txt")], workers=1)
    table = format_table([("A", s), ("B", s)])
    lines = table.splitlines()
    assert len(lines) == 4 and lines[0].startswith("| model") and lines[2].startswith("| A ")
    assert "%.3f" % s["bytes_per_token"] in lines[3]
    assert format_top_tokens("A", s).startswith("A most frequent: ")


@settings(max_examples=examples(100))
@given(mixed_text(extra=EMOJI + [EOT, "\U0001fae8", " \U0001fae8\U0001fae8"]))
def test_show_units_cover_the_text_and_the_ids(text):
    tok = small_tokenizer()[0]
    parts = units(tok, text)
    assert "".join(chars for chars, _ in parts) == text
    assert [int(i) for _, ids in parts for i in ids.split("+")] == tok.encode(text)
    assert all(chars for chars, _ in parts)
    for chars, ids in parts:  # each unit is exactly the characters of its tokens
        assert tok.decode([int(i) for i in ids.split("+")]) == chars


def test_plain_and_colour_rendering():
    tok = small_tokenizer()[0]
    plain = render(tok, "a b\n", colour=False, with_ids=True)
    first, second = plain.splitlines()
    assert first.replace("][", "").strip("[]").replace("\\n", "\n") == "a b\n"
    assert second.split() == [ids for _, ids in units(tok, "a b\n")]
    assert render_plain([("x\ty", "1")]) == "[x\\ty]\n"
    colour = render(tok, "a b\nc", colour=True)
    assert "\x1b[" in colour and "↵" in colour and colour.count("\n") == 2


@pytest.mark.parametrize("module", ["refbpe.analysis.show", "refbpe.analysis.stats", "refbpe.corpus.idfile"])
def test_docstring_examples(module):
    import doctest
    import importlib

    failures, _ = doctest.testmod(importlib.import_module(module))
    assert failures == 0
