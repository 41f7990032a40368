"""Extending a model (``refbpe.learn.extend``, docs/extend.md): the definition, proven.

- The prefix property, for every profile: training to N then extending to M on
  the same input equals training to M (merges and vocab; with special tokens,
  the merges, and the special tokens keep the parent's ids).
- On another corpus: extending equals replaying the parent's first K merges and
  continuing, as the naive oracle spells it out (``naive_train_bpe_from_counts(extend=)``),
  with the parent's tokens at the parent's ids.
"""

import json
import os

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support import REPLAY_ROUTES, examples, replay_route, run_main

from refbpe.corpus.countfile import write_counts
from refbpe.formats import Model, read_model, write_model
from refbpe.learn.extend import keep_parent_ids, load_parent
from refbpe.learn.merge import learn_merges
from refbpe.learn.profiles import ProfileLimit
from refbpe.learn.train import train_from_count_files, train_from_counts, train_from_texts
from refbpe.naive import naive_train_bpe_from_counts

PROFILES = ("cs336", "rustbpe", "hf")
TIE_BYTES = [0x61, 0x62, 0x20, 0x0A, 0xFF, 0x80, 0x41]  # a b space newline 0xff 0x80 A

words = st.lists(st.sampled_from(TIE_BYTES), min_size=1, max_size=8).map(bytes)
word_tables = st.dictionaries(words, st.integers(1, 4), min_size=1, max_size=12)


def _base(profile, specials):
    return len(specials) + 8 if profile == "hf" else 256 + len(specials)


def _train(table, size, specials, profile, **kw):
    try:
        return train_from_counts(table, size, specials, profile=profile, **kw)
    except ProfileLimit:
        assume(False)


@settings(max_examples=examples(60))
@given(
    table=word_tables,
    profile=st.sampled_from(PROFILES),
    n=st.integers(0, 15),
    more=st.integers(0, 15),
    specials=st.sampled_from([(), ("<s>",)]),
)
def test_prefix_property(table, profile, n, more, specials):
    """Train to N, extend to M on the same counts == train to M."""
    base = _base(profile, specials)
    direct = _train(table, base + n + more, specials, profile)
    vocab, merges = _train(table, base + n, specials, profile)
    parent = Model(vocab, merges, specials, "json")
    extended = _train(table, base + n + more, (), profile, extend=parent)
    assert extended[1] == direct[1]
    if not specials or profile == "hf":  # hf: special tokens come first in both layouts
        assert extended == direct
    else:
        assert [extended[0][vocab_id] for vocab_id in sorted(extended[0])] != [] and all(
            extended[0][i] == t for i, t in vocab.items()
        )


@settings(max_examples=examples(60))
@given(
    first=word_tables,
    second=word_tables,
    profile=st.sampled_from(PROFILES),
    n=st.integers(0, 12),
    keep=st.integers(0, 12),
    more=st.integers(0, 15),
    specials=st.sampled_from([(), ("<s>",)]),
    route=REPLAY_ROUTES,
)
def test_extend_is_replay_then_continue(first, second, profile, n, keep, more, specials, route):
    """On another corpus: the parent's first K merges replayed, then the rule (the naive oracle)."""
    with replay_route(route):
        _check_extend_is_replay_then_continue(first, second, profile, n, keep, more, specials)


def _check_extend_is_replay_then_continue(first, second, profile, n, keep, more, specials):
    vocab, merges = _train(first, _base(profile, specials) + n, specials, profile)
    k = min(keep, len(merges))
    parent = load_parent(Model(vocab, merges, specials, "json"), k)
    size = _base(profile, specials) + k + more
    if profile == "hf":  # HF's vocab_size counts the alphabet, which is the second corpus's
        size = len(specials) + len(set(b"".join(second)) | {b for m in merges[:k] for b in m[0] + m[1]}) + k
        size += more
    try:
        mine = train_from_counts(second, size, (), profile=profile, extend=parent)
    except ProfileLimit:
        with pytest.raises(ProfileLimit):
            naive_train_bpe_from_counts(second, size, specials, profile=profile, extend=merges[:k])
        return
    except ValueError as e:  # the vocab has no room for the inherited merges
        assert "inherited" in str(e)
        return
    oracle_vocab, oracle_merges = naive_train_bpe_from_counts(
        second, size, specials, profile=profile, extend=merges[:k]
    )
    assert mine[1][:k] == merges[:k]
    assert mine[1] == oracle_merges
    assert mine[0] == keep_parent_ids(oracle_vocab, specials, parent)
    held = set(mine[0].values())
    for token, i in parent.ids.items():  # every parent token the child holds, at the parent's id
        if token in held:  # (hf: the alphabet is the second corpus's)
            assert mine[0][i] == token
    for t, i in parent.special_ids.items():
        assert mine[0][i] == t.encode("utf-8")


def test_merge_engine_replays_in_order_whatever_the_counts():
    table = {b"abab": 5, b"cd": 1}
    # The rule would take (a, b) first; inherited (c, d) goes first anyway.
    merges = learn_merges(table, 3, inherited=[(b"c", b"d")])
    assert merges == [(b"c", b"d"), (b"a", b"b"), (b"ab", b"ab")]
    # A merge whose pair never occurs still makes its token (the next id).
    assert learn_merges(table, 2, inherited=[(b"x", b"y")]) == [(b"x", b"y"), (b"a", b"b")]


def test_merge_engine_refuses_bad_inherited_merges():
    with pytest.raises(ValueError, match="made before"):
        learn_merges({b"abc": 1}, 3, inherited=[(b"ab", b"c")])
    with pytest.raises(ValueError, match="exceed"):
        learn_merges({b"abc": 1}, 1, inherited=[(b"a", b"b"), (b"ab", b"c")])
    with pytest.raises(ValueError, match="trace"):
        learn_merges({b"abc": 1}, 2, trace=[], inherited=[(b"a", b"b")])


def test_api_options_on_every_trainer(tmp_path):
    texts = ["low low lower lowest newest widest " * 3]
    vocab, merges = train_from_texts(texts, 262, ["<|endoftext|>"])
    write_model(str(tmp_path / "p"), "gpt2", vocab, merges, ["<|endoftext|>"])
    parent = read_model(str(tmp_path / "p"))
    report = {}
    v2, m2 = train_from_texts(texts, 266, extend=parent, inherit_merges=3, report=report)
    assert m2[:3] == merges[:3] and len(m2) == 265 - 256
    assert v2[261] == b"<|endoftext|>"  # the parent's special token keeps its id
    assert report["parent"]["inherit_merges"] == 3 and report["parent"]["parent_merges"] == 5
    assert set(report["parent"]["files"]) == {"vocab.json", "merges.txt"}
    counts = tmp_path / "c.counts.tsv"
    write_counts(str(counts), {b"low": 6, b" lower": 3, b" newest": 2})
    from_files = train_from_count_files([str(counts)], 266, extend=parent)
    from_counts = train_from_counts({b"low": 6, b" lower": 3, b" newest": 2}, 266, extend=parent)
    assert from_files == from_counts and from_files[1][:5] == merges
    with pytest.raises(ValueError, match="inherit_merges"):
        train_from_texts(texts, 266, extend=parent, inherit_merges=6)
    with pytest.raises(ValueError, match="inherited"):
        train_from_texts(texts, 261, extend=parent)
    with pytest.raises(TypeError, match="read_model"):
        train_from_texts(texts, 266, extend=str(tmp_path / "p"))


def test_cli_train_extend(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat. the dog sat on the log.\n" * 20 + "<|endoftext|>hello there\n")
    run_main(capsys, "train", str(corpus), "--vocab-size", "280", "--special-token", "<|endoftext|>",
             "-o", str(tmp_path / "p"), "--quiet")  # fmt: skip
    run_main(capsys, "train", str(corpus), "--vocab-size", "300", "--extend", str(tmp_path / "p"),
             "-o", str(tmp_path / "c"), "--quiet")  # fmt: skip
    run_main(capsys, "train", str(corpus), "--vocab-size", "300", "--special-token", "<|endoftext|>",
             "-o", str(tmp_path / "d"), "--quiet")  # fmt: skip
    assert (tmp_path / "c" / "merges.txt").read_bytes() == (tmp_path / "d" / "merges.txt").read_bytes()
    manifest = json.loads((tmp_path / "c" / "refbpe.json").read_text())
    theirs = json.loads((tmp_path / "p" / "refbpe.json").read_text())
    assert manifest["special_tokens"] == theirs["special_tokens"]
    assert manifest["parent"]["format"] == "gpt2"
    assert manifest["parent"]["inherit_merges"] == theirs["num_merges"] > 0
    child = read_model(str(tmp_path / "c"))
    parent = read_model(str(tmp_path / "p"))
    assert all(child.vocab[i] == t for i, t in parent.vocab.items())
    assert sorted(child.vocab) == list(range(len(child.vocab)))


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--inherit-merges", "3"], "--inherit-merges needs --extend"),
        (["--extend", "PARENT", "--inherit-merges", "999"], "inherit_merges must be"),
        (["--extend", "MISSING"], "--extend"),
        (["--extend", "PARENT", "--trace", "t.jsonl"], "--trace"),
    ],
)
def test_cli_extend_errors(tmp_path, capsys, extra, message):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\n" * 5)
    run_main(capsys, "train", str(corpus), "--vocab-size", "270", "-o", str(tmp_path / "p"), "--quiet")
    extra = [str(tmp_path / "p") if a == "PARENT" else str(tmp_path / a) if a in ("MISSING", "t.jsonl") else a
             for a in extra]  # fmt: skip
    code, out, err = run_main(capsys, "train", str(corpus), "--vocab-size", "280", "-o", str(tmp_path / "o"),
                              "--quiet", *extra)  # fmt: skip
    assert code == 2 and err.startswith("refbpe") and message in err and "Traceback" not in err
    assert not os.path.exists(tmp_path / "o")


def test_cli_verify_extend(tmp_path, capsys):
    """verify --extend: an extension is identical to the reference's; a model trained from
    scratch on the second corpus is not (it did not replay the parent's merges)."""
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("zebra zoo zone zero " * 30)
    second.write_text("the cat sat on the mat; the dog sat on the log " * 20)
    run_main(capsys, "train", str(first), "--vocab-size", "270", "-o", str(tmp_path / "p"), "--quiet")
    run_main(capsys, "train", str(second), "--vocab-size", "300", "--extend", str(tmp_path / "p"),
             "-o", str(tmp_path / "c"), "--quiet")  # fmt: skip
    run_main(capsys, "train", str(second), "--vocab-size", "300", "-o", str(tmp_path / "s"), "--quiet")
    verify = ["verify", str(second), "--vocab-size", "300", "--extend", str(tmp_path / "p"), "--against"]
    code, out, _ = run_main(capsys, *verify, str(tmp_path / "c"))
    assert code == 0 and out.startswith("identical")
    code, out, _ = run_main(capsys, *verify, str(tmp_path / "s"), "--json")
    report = json.loads(out)
    assert code == 1 and report["first_divergence"]["index"] == 0 and report["first_divergence"]["inherited"]
    code, _, err = run_main(capsys, *verify[:-1], "--inherit-merges", "99", "--against", str(tmp_path / "c"))
    assert code == 2 and "inherit_merges" in err
