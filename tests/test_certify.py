"""Evidence step by step: ``certify`` (every failing step of a merge list) and training
traces (``train --trace``, ``verify --trace``), each held to a brute-force recount."""

import base64
import json
import os
import tempfile

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support import IS_PYPY, corpus_path, cs336_path, examples, run_main

from refbpe.formats import read_model
from refbpe.formats.trace import read_trace, trace_records, write_trace, write_training_trace
from refbpe.learn.merge import learn_merges
from refbpe.learn.train import count_with_profile, train_from_counts
from refbpe.naive import naive_step_checks, naive_trace
from refbpe.verify.certify import PROFILE_TIE_RULES, certify, render_certificate
from refbpe.verify.traces import compare_traces, render_trace_comparison

EOT = "<|endoftext|>"

word_counts = st.dictionaries(
    st.binary(min_size=1, max_size=8).map(lambda b: bytes(97 + x % 4 for x in b)),
    st.integers(1, 6),
    min_size=1,
    max_size=12,
)


def greatest_bytes(tied):
    return max(tied)


def smallest_ids(ids):
    return lambda tied: min(tied, key=lambda p: (ids.get(p[0], 1 << 60), ids.get(p[1], 1 << 60)))


def refbpe_layout(merges):
    ids = {bytes([i]): i for i in range(256)}
    for a, b in merges:
        ids.setdefault(a + b, len(ids))
    return ids


def failing_steps(report):
    return [f["step"] for f in report["failures"]]


# -- certify: refbpe's own output passes under every profile --------------------------


@settings(max_examples=examples(60), deadline=None)
@given(word_counts, st.integers(0, 30), st.sampled_from(["cs336", "rustbpe", "hf"]))
def test_refbpe_output_is_certified_under_its_profile(counts, extra, profile):
    vocab, merges = train_from_counts(counts, 300 + extra, profile=profile)
    their_ids = {b: i for i, b in vocab.items()}
    wanted = len(merges) if profile == "hf" else 300 + extra - 256
    report = certify(counts, merges, PROFILE_TIE_RULES[profile], their_ids, wanted)
    assert report["certified"], render_certificate(report)
    assert report["failing"] == 0 and report["early_stop"] is None


@settings(max_examples=examples(60), deadline=None)
@given(word_counts, st.integers(0, 30), st.integers(2, 5))
def test_a_minimum_count_is_held_both_ways(counts, extra, minimum):
    """Stopping where the best pair left occurs fewer than ``min_count`` times is no early stop;
    a merge of such a pair fails, at exactly the steps a recount finds below the minimum."""
    wanted = 300 + extra - 256
    stopped = train_from_counts(counts, 300 + extra, min_frequency=minimum)[1]
    report = certify(counts, stopped, merges_wanted=wanted, min_count=minimum)
    assert report["certified"], render_certificate(report)
    full = train_from_counts(counts, 300 + extra)[1]
    assert certify(counts, full, merges_wanted=wanted)["certified"]
    report = certify(counts, full, merges_wanted=wanted, min_count=minimum, limit=len(full))
    below = [k for k, (c, _, _) in enumerate(naive_trace(counts, full)) if c < minimum]
    assert failing_steps(report) == below and report["certified"] == (not below)
    assert all(f["kind"] == "below-minimum" for f in report["failures"])
    if len(stopped) < len(full):
        early = certify(counts, stopped, merges_wanted=wanted)  # no minimum: stopped early
        assert not early["certified"] and early["early_stop"]["count"] < minimum


# -- certify lists exactly the steps a brute-force recount lists ---------------------


def _wrapping_trainer(counts, num_merges, bits):
    """The naive trainer with pair counts kept as wrapping ``bits``-bit integers."""
    words = {tuple(bytes([c]) for c in w): n for w, n in counts.items()}
    merges = []
    for _ in range(num_merges):
        tally = {}
        for w, n in words.items():
            for p in zip(w, w[1:]):
                tally[p] = (tally.get(p, 0) + n) % (1 << bits)
        if not tally:
            break
        best = max(tally, key=lambda p: (tally[p], p))
        merges.append(best)
        new = {}
        for w, n in words.items():
            from refbpe.naive import merge_word

            k = merge_word(w, best, best[0] + best[1])
            new[k] = new.get(k, 0) + n
        words = new
    return merges


def _planted(counts, bug, draw_index):
    merges = learn_merges(counts, 40)
    if bug == "swap" and len(merges) >= 2:
        i = draw_index % (len(merges) - 1)
        merges[i], merges[i + 1] = merges[i + 1], merges[i]
    elif bug == "vanished" and merges:
        i = draw_index % len(merges)
        merges.insert(i + 1, merges[i])  # a stale heap entry merged again
    elif bug == "early-stop":
        merges = merges[: draw_index % (len(merges) + 1)]
    elif bug == "tie-rule":
        merges = learn_merges(counts, 40, tie="ids")
    return merges


@settings(max_examples=examples(80), deadline=None)
@given(
    word_counts, st.sampled_from(["swap", "vanished", "early-stop", "tie-rule", "none"]), st.integers(0, 99)
)
def test_certify_lists_the_failing_steps_a_recount_lists(counts, bug, k):
    merges = _planted(counts, bug, k)
    report = certify(counts, merges, "greatest-bytes", limit=1000, merges_wanted=40)
    assert failing_steps(report) == naive_step_checks(counts, merges, greatest_bytes)
    assert report["failing"] == len(report["failures"])
    left = naive_trace(counts, merges + [(b"", b"")])[-1][2]  # the greatest count after their merges
    assert (report["early_stop"] is not None) == (len(merges) < 40 and left > 0)
    if report["early_stop"]:
        assert report["early_stop"]["after"] == len(merges) and report["early_stop"]["count"] == left


@settings(max_examples=examples(40), deadline=None)
@given(word_counts, st.sampled_from(["smallest-ids-refbpe-layout", "smallest-bytes", "greatest-concat"]))
def test_certify_other_tie_rules_against_a_recount(counts, rule):
    merges = learn_merges(counts, 30)  # greatest-bytes merges, held to another rule
    report = certify(counts, merges, rule, limit=1000)
    if rule == "smallest-ids-refbpe-layout":
        choose = smallest_ids(refbpe_layout(merges))
    elif rule == "smallest-bytes":
        choose = min
    else:
        choose = lambda tied: max(tied, key=lambda p: (p[0] + p[1], p[0], p[1]))  # noqa: E731
    assert failing_steps(report) == naive_step_checks(counts, merges, choose)


def test_a_counter_that_wraps_at_2_32_is_caught_at_the_step_it_wraps():
    big = (1 << 32) + 5
    counts = {b"ab": big, b"cd": 1000, b"ef": 7}
    merges = _wrapping_trainer(counts, 3, 32)
    assert merges[0] == (b"c", b"d")  # 2^32 + 5 wrapped to 5
    report = certify(counts, merges, "greatest-bytes", merges_wanted=3)
    assert failing_steps(report) == naive_step_checks(counts, merges, greatest_bytes) == [0, 1]
    first = report["failures"][0]
    assert first["kind"] == "not-maximum" and first["maximum"] == big and first["count"] == 1000
    assert "4,294,967,301" in render_certificate(report)


def test_certify_names_an_absent_pair_and_an_early_stop():
    counts = {b"abab": 3, b"cd": 2}
    report = certify(counts, [(b"a", b"b"), (b"a", b"b")], merges_wanted=5)
    assert [f["kind"] for f in report["failures"]] == ["absent"]
    assert report["early_stop"]["count"] == 3 and report["early_stop"]["after"] == 2
    text = render_certificate(report)
    assert "does not occur" in text and "stopped after merge 2" in text


# -- traces ----------------------------------------------------------------------


@settings(max_examples=examples(80), deadline=None)
@given(word_counts, st.sampled_from(["bytes", "ids"]))
def test_the_engine_trace_equals_the_naive_trace(counts, tie):
    trace = []
    merges = learn_merges(counts, 40, tie=tie, trace=trace)
    assert trace == naive_trace(counts, merges)


_abc_words = st.binary(min_size=2, max_size=6).map(lambda b: bytes(97 + x % 3 for x in b))
_spread_counts = st.one_of(st.integers(1, 10**6), st.sampled_from([1, 2, 3, 64, 1000]))


@settings(max_examples=examples(40), deadline=None)
@given(
    st.dictionaries(_abc_words, _spread_counts, min_size=1, max_size=10),
    st.sampled_from(["cs336", "rustbpe", "hf"]),
    st.integers(1, 60),
)
def test_the_trace_equals_the_naive_trace_across_floors(counts, profile, wanted):
    """Counts over six orders of magnitude, many equal, a few letters: the heap runs dry above
    its floor again and again, and the runner-up is then found below it (``traced.TracedTables.observe``),
    at the last merge too; ``wanted`` often exceeds the merges the words allow."""
    trace = []
    merges = train_from_counts(counts, 256 + wanted, profile=profile, trace=trace)[1]
    assert trace == naive_trace(counts, merges)


@pytest.mark.parametrize(
    "counts, wanted, expected",
    [
        # After (a, b) the heap holds nothing at its floor (500): the runner-up 3 is below it.
        ({b"ab": 1000, b"cd": 3, b"ef": 1}, 3, [(1000, 1, 3), (3, 1, 1), (1, 1, 0)]),
        # The same at the last merge wanted, and with ties below the floor.
        ({b"ab": 1000, b"cd": 3, b"ef": 3}, 1, [(1000, 1, 3)]),
        ({b"abab": 40, b"cd": 7}, 9, [(80, 1, 40), (40, 1, 7), (7, 1, 0)]),
    ],
)
def test_a_runner_up_below_the_heap_floor(counts, wanted, expected):
    trace = []
    merges = learn_merges(counts, wanted, trace=trace)
    assert trace == naive_trace(counts, merges) == expected


def test_trace_files_round_trip(tmp_path):
    counts = {b"hello": 3, b"help": 2, b"world": 1}
    engine = []
    vocab, merges = train_from_counts(counts, 262, trace=engine)
    path = str(tmp_path / "t.jsonl")
    write_trace(path, trace_records(merges, engine, vocab))
    back = read_trace(path)
    assert [r["pair"] for r in back] == merges
    assert [(r["count"], r["ties"], r["runner_up"]) for r in back] == engine
    assert [r["id"] for r in back] == list(range(256, 256 + len(merges)))


def test_a_training_trace_is_written_as_its_records_are(tmp_path):
    counts = {b"hello": 3, b"help": 2, b"world": 1}
    engine = []
    vocab, merges = train_from_counts(counts, 262, trace=engine)
    merges, engine = merges + [(b"\x00", b"\xff")], engine + [(2**70, 3, 2**70)]  # no id; a huge count
    direct, via_records = str(tmp_path / "direct.jsonl"), str(tmp_path / "records.jsonl")
    write_training_trace(direct, merges, engine, vocab)
    write_trace(via_records, trace_records(merges, engine, vocab))
    with open(direct, "rb") as f, open(via_records, "rb") as g:
        text = f.read()
        assert text == g.read() and text.count(b"\n") == len(merges) and b'"id": null' in text


def test_trace_lines_are_the_json_text_of_their_records(tmp_path):
    records = [
        {"step": 0, "left": "74", "right": "68", "id": 256, "count": 42, "ties": 1, "runner_up": 40},
        {"step": 1, "left": "", "right": "6868", "id": None, "count": 2**70, "ties": 3, "runner_up": 2**70},
        {"step": 2, "left": "61", "right": "62", "count": 5},  # another trainer's: the keys it has
        {"step": 3, "left": 'a"b', "right": "62", "id": 7, "count": 5, "ties": 1, "runner_up": 0},
    ]
    path = str(tmp_path / "t.jsonl")
    write_trace(path, records)
    with open(path, encoding="utf-8") as f:
        assert f.read() == "".join(json.dumps(r, separators=(", ", ": ")) + "\n" for r in records)


def _off_by_one_trace(counts, marked):
    """The trace of a trainer that counts the pairs of word ``marked`` once too often."""
    planted = dict(counts)
    planted[marked] += 1
    merges = learn_merges(counts, 40)
    truth = naive_trace(counts, merges)
    wrong = naive_trace(planted, merges)
    ours = [{"step": k, "pair": m, "count": t[0]} for k, (m, t) in enumerate(zip(merges, truth))]
    theirs = [{"step": k, "pair": m, "count": t[0]} for k, (m, t) in enumerate(zip(merges, wrong))]
    return ours, theirs


@settings(max_examples=examples(60), deadline=None)
@given(word_counts, st.integers(0, 99))
def test_verify_trace_finds_a_planted_count_at_its_first_step_and_names_the_word(counts, k):
    marked = sorted(counts)[k % len(counts)]
    ours, theirs = _off_by_one_trace(counts, marked)
    expected = next((i for i, (o, t) in enumerate(zip(ours, theirs)) if o["count"] != t["count"]), None)
    report = compare_traces(ours, theirs, counts, limit=1000)
    if expected is None:
        assert report["identical"]
        return
    assert report["first_difference"]["step"] == expected
    assert report["first_difference"]["kind"] == "count"
    named = {bytes.fromhex(r["word"]): r for r in report["words"]}
    assert marked in named
    row, d = named[marked], theirs[expected]["count"] - ours[expected]["count"]
    assert row["adds"] == row["occurrences"] * counts[marked] and d == row["occurrences"]
    if d % counts[marked] == 0:
        assert row["implied_occurrences"] == row["occurrences"] + d // counts[marked]
    assert "DIFFERENT at step %d" % expected in render_trace_comparison(report)


# -- the command line --------------------------------------------------------------


def test_train_trace_and_verify_trace_and_certify_at_the_command_line(tmp_path, capsys):
    corpus = cs336_path("corpus.en")
    out, trace = str(tmp_path / "m"), str(tmp_path / "t.jsonl")
    assert (
        run_main(
            capsys,
            "train",
            corpus,
            "--vocab-size",
            "400",
            "--special-token",
            EOT,
            "-o",
            out,
            "--trace",
            trace,
            "--quiet",
        )[0]
        == 0
    )
    records = [json.loads(line) for line in open(trace)]
    assert len(records) == 400 - 257 and list(records[0]) == [
        "step",
        "left",
        "right",
        "id",
        "count",
        "ties",
        "runner_up",
    ]
    code, text, _ = run_main(
        capsys, "verify", corpus, "--vocab-size", "400", "--special-token", EOT, "--trace", trace
    )
    assert code == 0 and text.startswith("identical")
    records[30]["count"] += 2
    bad = str(tmp_path / "bad.jsonl")
    with open(bad, "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in records))
    code, text, _ = run_main(
        capsys, "verify", corpus, "--vocab-size", "400", "--special-token", EOT, "--trace", bad
    )
    assert code == 1 and "DIFFERENT at step 30" in text
    code, text, _ = run_main(capsys, "certify", out, corpus, "--vocab-size", "400", "--special-token", EOT)
    assert code == 0 and text.startswith("certified: 143 merges")
    code, text, _ = run_main(
        capsys, "certify", out, corpus, "--vocab-size", "500", "--special-token", EOT, "--json"
    )
    report = json.loads(text)
    assert code == 1 and report["early_stop"]["after"] == 143 and report["failing"] == 0


def test_certify_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    code, out, err = run_main(capsys, "certify", str(tmp_path / "nothing"), cs336_path("corpus.en"))
    assert code == 2 and err.count("\n") == 1 and "refbpe: error:" in err
    assert not os.path.exists(str(tmp_path / "nothing"))
    code, _, err = run_main(capsys, "certify", "m", "c.txt", "--tie-rule", "fewest-bytes")
    assert code == 2 and "--tie-rule" in err


@settings(max_examples=examples(60), deadline=None)
@given(
    word_counts,
    st.sampled_from(["swap", "early-stop", "tie-rule", "none"]),
    st.integers(0, 99),
    st.sampled_from(["greatest-bytes", "smallest-ids-refbpe-layout"]),
)
def test_the_engine_state_and_the_replay_state_give_the_same_report(counts, bug, k, rule):
    merges = _planted(counts, bug, k)
    fast = certify(counts, merges, rule, merges_wanted=40, limit=1000)
    with pytest.MonkeyPatch.context() as m:
        m.setattr("refbpe.verify.certify.MergeCheck.valid", staticmethod(lambda merges: False))
        slow = certify(counts, merges, rule, merges_wanted=40, limit=1000)
    assert fast == slow


# -- certify of the peers' own outputs, under their profiles ---------------------------------
#
# rustbpe and HF tokenizers train on the text; their models are read as the command line
# reads them; certify --profile P must certify them, and the other tie rule (cs336's) must
# fail exactly at the steps a brute-force recount says a tie decides otherwise.


def _peer(name):
    if IS_PYPY:
        pytest.skip("%s is a CPython extension (not importable on PyPy)" % name)
    return pytest.importorskip(name, reason="%s is not installed (the peers extra)" % name)


def _rustbpe_model(directory, docs, vocab_size):
    """The ranks rustbpe trains over ``docs`` (nanochat's way: no special tokens), as a
    tiktoken ranks file."""
    tok = _peer("rustbpe").Tokenizer()
    tok.train_from_iterator(docs, vocab_size)
    lines = [
        "%s %d\n" % (base64.b64encode(bytes(b)).decode("ascii"), r) for b, r in tok.get_mergeable_ranks()
    ]
    path = os.path.join(directory, "rust.tiktoken")
    with open(path, "w", encoding="ascii") as f:
        f.write("".join(lines))
    return path


def _hf_model(directory, docs, vocab_size):
    """The tokenizer.json HF's BpeTrainer writes over ``docs`` (ByteLevel, its defaults,
    ``<|endoftext|>`` special)."""
    tokenizers = _peer("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, special_tokens=[EOT])
    tok.train_from_iterator(docs, trainer)
    path = os.path.join(directory, "tokenizer.json")
    tok.save(path)
    return path


def _write_corpus(directory, docs):
    path = os.path.join(directory, "corpus.txt")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(EOT.join(docs))
    return path


def _certify_cli(capsys, model, corpus, vocab_size, *options):
    """(exit status, JSON report) of ``certify MODEL CORPUS`` with ``options``."""
    argv = ["certify", model, corpus, "--vocab-size", vocab_size, "--special-token", EOT, "--json"]
    code, out, err = run_main(capsys, *argv, *options)
    assert code in (0, 1), err
    report = json.loads(out)
    assert code == (0 if report["certified"] else 1)
    return report


def _certify_peer(capsys, model, corpus, vocab_size, profile):
    """(certify --profile's report, the check of the same merges held to cs336's rule,
    and its brute-force failing steps), counted as ``profile`` counts."""
    report = _certify_cli(capsys, model, corpus, vocab_size, "--profile", profile)
    theirs = read_model(model, "auto", [EOT], strict=False)
    counts = count_with_profile([corpus], [EOT], profile=profile, workers=1)
    wrong = certify(counts, theirs.merges, "greatest-bytes", limit=10**6)
    return report, wrong, naive_step_checks(counts, theirs.merges, greatest_bytes)


# Few characters, so that pairs tie; "'s", digits and a two-byte letter exercise the patterns.
peer_docs = st.lists(st.text(alphabet="ab \n'sA1\u00e9", min_size=0, max_size=40), min_size=1, max_size=8)
with_capsys = settings(
    max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@with_capsys
@given(docs=peer_docs, extra=st.integers(0, 40))
def test_rustbpe_output_is_certified_under_profile_rustbpe(capsys, docs, extra):
    _peer("rustbpe")
    with tempfile.TemporaryDirectory() as d:
        model, corpus = _rustbpe_model(d, docs, 256 + extra), _write_corpus(d, docs)
        report, wrong, expected = _certify_peer(capsys, model, corpus, 257 + extra, "rustbpe")
    assert report["certified"] and report["tie_rule"] == "smallest-ids-refbpe-layout", report
    assert failing_steps(wrong) == expected
    assert all(f["kind"] == "tie" for f in wrong["failures"])


def _hf_spells_a_token_twice(model):
    """HF reuses the id of a string its vocab holds; refbpe's profile does not model it."""
    data = json.load(open(model, encoding="utf-8"))["model"]
    spelled = ["".join(m) if isinstance(m, list) else m.replace(" ", "") for m in data["merges"]]
    initial = set(data["vocab"]) - set(spelled)
    return len(set(spelled)) < len(spelled) or bool(initial & set(spelled))


@with_capsys
@given(docs=peer_docs, extra=st.integers(0, 40))
def test_hf_output_is_certified_under_profile_hf(capsys, docs, extra):
    _peer("tokenizers")
    with tempfile.TemporaryDirectory() as d:
        vocab_size = 14 + extra  # the special token, at most 13 initial byte characters, merges
        model, corpus = _hf_model(d, docs, vocab_size), _write_corpus(d, docs)
        assume(not _hf_spells_a_token_twice(model))
        report, wrong, expected = _certify_peer(capsys, model, corpus, vocab_size, "hf")
    assert report["certified"] and report["tie_rule"] == "smallest-ids", report
    assert failing_steps(wrong) == expected
    assert all(f["kind"] == "tie" for f in wrong["failures"])


@pytest.mark.parametrize("peer", ["rustbpe", "hf"])
def test_peer_models_on_a_shared_corpus_pass_their_profile_and_fail_cs336_ties(tmp_path, capsys, peer):
    _peer("rustbpe" if peer == "rustbpe" else "tokenizers")
    with open(corpus_path("english_small.txt"), "rb") as f:
        docs = f.read(120000).decode("utf-8", "ignore").split(EOT)
    corpus = _write_corpus(str(tmp_path), docs)
    if peer == "rustbpe":
        model = _rustbpe_model(str(tmp_path), docs, 799)
    else:
        model = _hf_model(str(tmp_path), docs, 800)
    report = _certify_cli(capsys, model, corpus, 800, "--profile", peer)
    assert report["certified"] and report["merges"] > 400, report
    wrong = _certify_cli(capsys, model, corpus, 800, "--profile", peer, "--tie-rule", "greatest-bytes")
    assert not wrong["certified"] and wrong["failing"] > 0 and wrong["early_stop"] is None
    assert all(f["kind"] == "tie" and f["tied"] > 1 for f in wrong["failures"]), wrong["failures"]
