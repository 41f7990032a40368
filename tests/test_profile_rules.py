"""verify's profile search takes shortcuts (``refbpe/verify/profile_rules.py``); each must change
nothing: a derived word table equals the recount, and a setting the cheap checks rule out never
reproduces the model (so it need not be trained)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from planted_trainers import EOT, ZOO, ZOO_TEXT, layout_vocab, planted_train
from support import examples

from refbpe.corpus.sequences import count_texts
from refbpe.formats import Model
from refbpe.learn.profiles import get_profile, settings_pattern
from refbpe.pretokenize.unicode_tables import UNICODE_VERSIONS, changed_code_points
from refbpe.verify import PairReplay, verify_merges
from refbpe.verify.profile_rules import (
    PROFILE_RULE,
    SettingChecks,
    WordTables,
    candidate_settings,
    compare_with_profile,
    derived_table,
)
from refbpe.verify.readings import Readings

OTHER_UNICODE = "\u0295"  # classed otherwise by Unicode 16 (the peers') than by the latest tables
TEXT_CHARS = st.sampled_from(list("ab c\n\n.'1\u00e9\u4e2d\t") + [EOT, " " + EOT, OTHER_UNICODE])


def _recount(texts, s):
    specials = [EOT] if s["sequences"] == "documents" else ()
    return count_texts(texts, s["sequences"], specials, settings_pattern(s), s["add_prefix_space"])


def test_unicode_versions_class_ascii_alike():
    # Readings.non_ascii_code_points leaves ASCII out for that reason.
    for a in UNICODE_VERSIONS:
        for b in UNICODE_VERSIONS:
            assert min(changed_code_points(a, b), default=0x80) >= 0x80


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.lists(TEXT_CHARS, max_size=30).map("".join), min_size=1, max_size=3))
def test_derived_table_equals_the_recount(texts):
    reference = count_texts(texts, "documents", [EOT])
    readings = Readings(texts, [EOT])
    assert readings.non_ascii_code_points() == set(ord(c) for t in texts for c in t if ord(c) >= 0x80)
    hf = get_profile("hf")
    for cut in ("documents", "lines"):
        for prefix in (False, True):
            s = hf.settings(cut=cut, add_prefix_space=prefix)
            table = derived_table(reference, readings, s)
            plain = not prefix and OTHER_UNICODE not in "".join(texts)
            assert (table is not None) == plain
            if table is not None:
                assert table == {w: n for w, n in _recount(texts, s).items() if n}


NEWLINE_SPECIAL = "<|x\n|>"  # a line cut falls inside it: the lines reading breaks it


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(list("ab \n.") + [NEWLINE_SPECIAL]), max_size=20).map("".join), max_size=3
    )
)
def test_derived_lines_table_with_a_special_token_holding_a_newline(texts):
    reference = count_texts(texts, "documents", [NEWLINE_SPECIAL])
    s = get_profile("hf").settings(cut="lines", add_prefix_space=False)
    table = derived_table(reference, Readings(texts, [NEWLINE_SPECIAL]), s)
    assert table == {
        w: n for w, n in count_texts(texts, "lines", (), settings_pattern(s), False).items() if n
    }


def _models(text, vocab):
    """(label, Model): the planted zoo, and the rustbpe and hf profiles' own outputs."""
    out = []
    for bug, (options, layout, _, _, _) in sorted(ZOO.items()):
        merges = planted_train(text, vocab, [EOT], **options)
        out.append((bug, Model(layout_vocab(layout, merges, [EOT]), merges, [EOT], "json", True)))
    every_byte = Model({i: bytes([i]) for i in range(256)}, [], [EOT], "json", True)
    for name in ("rustbpe", "hf"):
        profile = get_profile(name)
        none = Model({}, [], [EOT], "json", True)
        for s in candidate_settings(name, none) + (
            candidate_settings(name, every_byte) if name == "hf" else []
        ):
            specials = [EOT] if s["sequences"] == "documents" else ()
            table = count_texts([text], s["sequences"], specials, settings_pattern(s), s["add_prefix_space"])
            vocab_, merges = profile.train_counted(table, vocab, [EOT], s)
            label = "%s-%s-%s-%s-%d" % (
                name,
                s["pattern"],
                s["sequences"],
                s["add_prefix_space"],
                len(s["initial_alphabet"]),
            )
            out.append((label, Model(vocab_, merges, [EOT], "json", True)))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("vocab", [330, 2000])  # 2000: every profile runs out of pairs
def test_checks_agree_with_training(tmp_path, vocab):
    """A setting ruled out is never reproduced by training; one proven always is."""
    path = tmp_path / "zoo.txt"
    path.write_text(ZOO_TEXT, encoding="utf-8")
    texts = [ZOO_TEXT]
    counts = count_texts(texts, "documents", [EOT])
    ruled_out = proven = reproduced = by_ties = 0
    for label, model in _models(ZOO_TEXT, vocab):
        report = verify_merges(counts, vocab, [EOT], model, texts=texts)
        tables = WordTables(counts, [str(path)], [EOT], "gpt2", texts)
        checks = SettingChecks(report, model, [EOT], tables)
        for name in ("rustbpe", "hf"):
            for s in candidate_settings(name, model):
                result = compare_with_profile(name, s, model, vocab, [EOT], tables)
                if checks.ruled_out(name, s):
                    ruled_out += 1
                    rule = s.get("tie_rule") or PROFILE_RULE[name]
                    by_ties += tables.get(s) is tables.reference and rule in checks.rules_missed
                    assert not result["identical"], (label, s)
                if checks.proven(name, s, vocab):
                    proven += 1
                    assert result["identical"], (label, s)
                reproduced += result["identical"]
    assert ruled_out > 20 and reproduced >= 10  # each profile output is reproduced by its own settings
    assert proven >= 3
    assert by_ties >= 1  # the tie rules' check: the reference counts explain all their merges


def test_replay_copy_is_independent():
    counts = count_texts([ZOO_TEXT], "documents", [EOT])
    merges = planted_train(ZOO_TEXT, 300, [EOT])
    original = PairReplay(counts)
    copy = original.copy()
    for pair in merges:
        copy.apply(pair)
    fresh = PairReplay(counts)
    assert original.counts == fresh.counts and original.words == fresh.words
    for pair in merges:
        fresh.apply(pair)
    assert copy.counts == fresh.counts and copy.words == fresh.words and copy.max_count() == fresh.max_count()
