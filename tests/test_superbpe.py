"""SuperBPE (``--profile superbpe``, docs/superbpe.md): both stages against the naive oracle,
its pre-tokenizations against ``regex``, the round trip, and the official trainer when present.

The official trainer is HF tokenizers' fork (alisawuffles/tokenizers-superbpe); it has to be
built from source (Rust, maturin), in its own environment since it conflicts with the real
``tokenizers``.  ``REFBPE_SUPERBPE_PYTHON`` names that environment's interpreter, or
``REFBPE_SUPERBPE_TRAINER`` a Rust build of the recipe that ``tests/superbpe_official/build.sh``
makes (the recipe, the fork's patch and the shim crates are in that directory); without either
the comparison is skipped with the reason.
"""

import json
import os
import subprocess

import pytest
import regex
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from support import REPLAY_ROUTES, corpus_path, edge_text, examples, mixed_text, replay_route, run_main
from test_patterns import _comparable

from refbpe.corpus import sequences
from refbpe.corpus.io import cut_points
from refbpe.corpus.sequences import count_texts, count_texts_per_pattern, counting_pattern_by_pattern
from refbpe.encode.tokenizer import Tokenizer
from refbpe.formats.bytemap import encode_token
from refbpe.learn.merge import learn_merges
from refbpe.learn.profiles import ProfileLimit, SuperBPEProfile
from refbpe.learn.train import train_bpe, train_from_counts, train_from_texts
from refbpe.naive import naive_train_bpe_from_counts, naive_train_superbpe
from refbpe.pretokenize.patterns import get_pattern, pattern_names
from refbpe.pretokenize.superbpe import STAGE1_PATTERN, STAGE2_PATTERN

WORDS = ["the", "of", "a", "cat", "sat", ":", "on", "mat", "12", "345", "!!", "by", "way", "x", "é"]
lines = st.lists(st.sampled_from(WORDS), min_size=1, max_size=20).map(" ".join)
texts = st.lists(
    st.tuples(lines, st.sampled_from(["\n", "", "  \n", ". ", ": "])).map("".join), min_size=1, max_size=6
)


def _superbpe(texts, vocab_size, transition):
    try:
        return train_from_texts(texts, vocab_size, profile=SuperBPEProfile(transition=transition))
    except ProfileLimit:
        assume(False)
    except ValueError as e:  # no room for the transition's merges after the stage-2 alphabet
        assert "transition" in str(e)
        assume(False)


@settings(max_examples=examples(60), deadline=None)
@given(docs=texts, transition=st.integers(0, 25), more=st.integers(0, 40))
def test_engine_equals_naive_both_stages(docs, transition, more):
    vocab_size = 40 + transition + more
    assert _superbpe(docs, vocab_size, transition) == naive_train_superbpe(docs, vocab_size, transition)


@pytest.mark.parametrize(
    "name, regex_text", [("superbpe-stage1", STAGE1_PATTERN), ("superbpe-stage2", STAGE2_PATTERN)]
)
@settings(max_examples=examples(150), deadline=None)
@given(text=st.one_of(edge_text(), mixed_text(), st.text(alphabet=" \n\t.,!/:\u0301a1\u0661", max_size=30)))
@example(text="a  \n!!\n/ 1234 ,, x  ")
@example(
    text="ABC ABc aBC\tHello !Hi HELLO\u00e9 Ab\u00e9c A\u0301 x'S ab\u00c9 Ab1 AB!"
    " (Hi) .x ,\u00e9 !\u0301 ,, a"
)
def test_scanners_are_hf_isolated_splits(name, regex_text, text):
    """The pieces are the regex's matches and the stretches between them (HF's ``isolated``),
    on the characters whose classes the pinned table and ``regex`` agree on."""
    _, text = _comparable(text)
    expected = [p for p in regex.split("(%s)" % regex_text, text) if p]
    assert get_pattern(name).pretokenize_str(text) == expected


def test_superbpe_patterns_are_found_by_name_but_not_listed():
    assert "superbpe-stage2" not in pattern_names()
    assert get_pattern("superbpe-stage2").pretokenize_str("Hello, world!!  42\n") == [
        "Hello, world", "!!", " ", " ", "42", "\n",
    ]  # fmt: skip


def test_stage2_rules_in_the_engine():
    # Replay: a stage-1 merge whose pair the stage-2 words never had is left out (no token).
    rules = SuperBPEProfile.train_counted.__globals__["_SuperwordRules"]
    merges = learn_merges({b"ab ab": 3}, 3, inherited=[(b"x", b"y"), (b"a", b"b")], rules=rules)
    assert merges[:1] == [(b"a", b"b")] and (b"x", b"y") not in merges
    # Refused: a token holding ": ", or more than four space-separated words.
    merges = learn_merges({b"a: b": 5, b"cd": 1}, 10, rules=rules)
    assert all(b": " not in a + b for a, b in merges) and (b"c", b"d") in merges
    merges = learn_merges({b"a a a a a": 9}, 10, rules=rules)
    assert max(len([w for w in (a + b).split(b" ") if w]) for a, b in merges) == 4


@pytest.fixture(scope="module")
def model():
    with open(corpus_path("english_small.txt"), encoding="utf-8") as f:
        head = f.read(200000)
    return train_from_texts([head], 1500, profile=SuperBPEProfile(transition=1000))


@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_round_trip(model, data):
    """A SuperBPE model encodes and decodes every text identically (its stage-2 pieces).

    Texts of the characters whose bytes the model holds: its vocab is HF's, the
    corpus's alphabet only, as the official trainer lays it out."""
    vocab, merges = model
    singles = {t for t in vocab.values() if len(t) == 1}
    chars = [chr(b[0]) for b in sorted(singles) if b[0] < 128]
    text = data.draw(st.one_of(st.text(alphabet=chars, max_size=200), texts.map("".join)))
    assume(all(bytes([b]) in singles for b in text.encode("utf-8")))
    tok = Tokenizer(vocab, merges, pattern="superbpe-stage2")
    assert tok.decode(tok.encode(text)) == text


def test_superwords_appear_and_encode_across_spaces(model):
    vocab, merges = model
    superwords = [t for t in vocab.values() if b" " in t.strip(b" ")]
    assert superwords
    tok = Tokenizer(vocab, merges, pattern="superbpe-stage2")
    ids = tok.encode("in the morning, by the way")
    assert any(b" " in vocab[i].strip(b" ") for i in ids)


@pytest.mark.parametrize("cut", ["lines", "documents", "items"])
@pytest.mark.parametrize("prefix", [False, True])
def test_one_pass_counts_each_stage_as_counted_alone(cut, prefix, monkeypatch):
    monkeypatch.setattr(sequences, "POOL_FROM", 0)  # the pool even for these few bytes
    eot = "<|endoftext|>"
    text = "the cat, by the way!!\n  12345 x<|endoftext|>of the mat: \u00e9\n\n" * 40 + "tail 7"
    stages = ["superbpe-stage1", "superbpe-stage2"]
    alone = [count_texts([text, "z 12"], cut, [eot], stage, prefix) for stage in stages]
    assert alone[0] != alone[1]
    for workers in (1, 2):
        assert count_texts_per_pattern([text, "z 12"], cut, [eot], stages, prefix, workers) == alone


# The pool from POOL_FROM bytes on; the first stage counted in this process below it.
POOL_FROM = pytest.mark.parametrize("pool_from", [0, sequences.POOL_FROM])


@POOL_FROM
@pytest.mark.parametrize("cut", ["lines", "items"])
def test_stage_by_stage_counts_are_the_one_pass_counts(cut, pool_from, monkeypatch):
    monkeypatch.setattr(sequences, "POOL_FROM", pool_from)
    eot = "<|endoftext|>"
    text = "the cat, by the way!!\n  12345 x<|endoftext|>of the mat: \u00e9\n\n" * 40 + "tail 7"
    stages = ["superbpe-stage1", "superbpe-stage2", "gpt2"]
    alone = [count_texts([text, "z 12"], cut, [eot], stage) for stage in stages]
    with counting_pattern_by_pattern([text, "z 12"], cut, [eot], stages, False, 2) as (first, rest):
        assert first == alone[0]
        assert rest() == alone[1:] == rest()


@POOL_FROM
def test_stage_two_counted_while_stage_one_trains_gives_the_same_model(tmp_path, pool_from, monkeypatch):
    monkeypatch.setattr(sequences, "POOL_FROM", pool_from)
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat, by the way.\nof the world: 12 345!!\n" * 30 + "z\n")
    profile = SuperBPEProfile(transition=30)
    report = {}
    overlapped = train_bpe(str(corpus), 330, ["<|endoftext|>"], profile=profile, workers=2, report=report)
    assert overlapped == train_bpe(str(corpus), 330, ["<|endoftext|>"], profile=profile, workers=1)
    assert [s["counted"] for s in report["count"]["stages"][1:]] == ["during stage 1"]
    assert report["count"]["unique_words"] == report["count"]["stages"][1]["unique_words"]


def test_cli_writes_what_the_official_tokenizer_loads(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat, by the way.\nof the world: 12 345!!\n" * 30)
    code, _, err = run_main(capsys, "train", str(corpus), "--vocab-size", "320", "--profile", "superbpe",
                            "--transition", "30", "-o", str(tmp_path / "m"), "--quiet",
                            "--report", str(tmp_path / "r.json"))  # fmt: skip
    assert code == 0, err
    count = json.loads((tmp_path / "r.json").read_text())["count"]
    assert [s["pattern"] for s in count["stages"]] == ["superbpe-stage1", "superbpe-stage2"]
    assert count["stages"][0]["unique_words"] != count["stages"][1]["unique_words"] == count["unique_words"]
    data = json.loads((tmp_path / "m" / "tokenizer.json").read_text())
    split, byte_level = data["pre_tokenizer"]["pretokenizers"]
    assert split["pattern"]["Regex"] == STAGE2_PATTERN and split["behavior"] == "Isolated"
    assert byte_level["type"] == "ByteLevel" and not byte_level["use_regex"]
    assert not byte_level["add_prefix_space"]
    manifest = json.loads((tmp_path / "m" / "refbpe.json").read_text())
    assert manifest["pattern"] == "superbpe-stage2" and manifest["profile"]["transition"] == 30
    vocab, merges = train_bpe(str(corpus), 320, [], profile=SuperBPEProfile(transition=30), workers=1)
    assert [m if isinstance(m, str) else " ".join(m) for m in data["model"]["merges"]] == [
        encode_token(a) + " " + encode_token(b) for a, b in merges
    ]
    assert data["model"]["vocab"] == {encode_token(t): i for i, t in vocab.items()}
    code, out, _ = run_main(capsys, "show", str(tmp_path / "m"), "sat on the mat, by the way")
    assert code == 0 and "[ on the mat][, by the way]" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--profile", "superbpe"], "needs --transition"),
        (["--transition", "3"], "--transition is an option of --profile superbpe"),
        (["--profile", "superbpe", "--transition", "-1"], "transition must be"),
    ],
)
def test_cli_errors(tmp_path, capsys, args, message):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat\n")
    code, _, err = run_main(
        capsys, "train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "m"), *args
    )
    assert code == 2 and message in err


OFFICIAL_PYTHON = os.environ.get("REFBPE_SUPERBPE_PYTHON")
OFFICIAL_TRAINER = os.environ.get("REFBPE_SUPERBPE_TRAINER")

# The official recipe (scripts/train_tokenizer.sh, scripts/extend_tokenizer.sh, utils.py):
# stage 1 in an empty directory, stage 2 in one holding the first T merges as merges.txt.
_OFFICIAL_SCRIPT = r"""
import json, os, sys
from tokenizers import Tokenizer, pre_tokenizers, Regex
from tokenizers.models import BPE
from tokenizers.pre_tokenizers import ByteLevel, Split
from tokenizers.trainers import BpeTrainer
corpus, work, t, vocab_size, r1, r2, unseen = sys.argv[1:8]
def train(directory, size, pattern):
    os.makedirs(directory, exist_ok=True)
    os.chdir(directory)
    tok = Tokenizer(BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        Split(pattern=Regex(pattern), behavior="isolated", invert=False),
        ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tok.train([corpus], BpeTrainer(show_progress=False, vocab_size=size))
    tok.model.save(".")
    tok.save("tokenizer.json")
    return tok
train(os.path.join(work, "stage1"), int(vocab_size), r1)
lines = open(os.path.join(work, "stage1", "merges.txt"), encoding="utf-8").read().split("\n")
os.makedirs(os.path.join(work, "stage2"))
with open(os.path.join(work, "stage2", "merges.txt"), "w", encoding="utf-8") as f:
    f.write("\n".join(lines[: int(t) + 1]) + "\n")
tok = train(os.path.join(work, "stage2"), int(vocab_size), r2)
print(json.dumps(tok.encode(open(unseen, encoding="utf-8").read()).ids))
"""


def _slice(name, start, size):
    """Whole lines of corpus ``name`` from byte ``start`` (None when the corpora are absent)."""
    path = corpus_path(name + ".txt")
    if path is None:
        return None
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(size)
    if start:
        data = data[data.index(b"\n") + 1 :]
    return data[: data.rindex(b"\n") + 1]


OFFICIAL_BUILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "superbpe_official")


def test_the_official_trainers_build_is_complete():
    """build.sh copies the patch, the shim crates and the recipe from its own directory."""
    with open(os.path.join(OFFICIAL_BUILD, "build.sh")) as f:
        script = f.read()
    assert '"$here/fork.patch"' in script and '"$here/shims" "$here/trainer"' in script
    for part in ("fork.patch", "trainer/Cargo.toml", "trainer/src/main.rs", "shims/rayon-cond/Cargo.toml"):
        assert os.path.isfile(os.path.join(OFFICIAL_BUILD, part)), part


def _official(corpus, work, vocab_size, transition, unseen):
    """(stage 2's tokenizer.json, ids of ``unseen``) from the official trainer: the fork's
    Python bindings (REFBPE_SUPERBPE_PYTHON) or a Rust build of its recipe
    (REFBPE_SUPERBPE_TRAINER: ``train OUT VOCAB T FILE`` writes OUT/stage2/tokenizer.json
    after ``head -n T+1`` of stage 1's merges.txt; ``encode TOKENIZER_JSON FILE`` prints the ids)."""
    if OFFICIAL_PYTHON:
        out = subprocess.run(
            [OFFICIAL_PYTHON, "-c", _OFFICIAL_SCRIPT, str(corpus), str(work), str(transition),
             str(vocab_size), STAGE1_PATTERN, STAGE2_PATTERN, str(unseen)],
            check=True, capture_output=True,
        ).stdout  # fmt: skip
    else:
        run = [OFFICIAL_TRAINER, "train", str(work), str(vocab_size), str(transition), str(corpus)]
        subprocess.run(run, check=True, capture_output=True)
        encode = [OFFICIAL_TRAINER, "encode", str(work / "stage2" / "tokenizer.json"), str(unseen)]
        out = subprocess.run(encode, check=True, capture_output=True).stdout
    data = json.loads((work / "stage2" / "tokenizer.json").read_text(encoding="utf-8"))
    return data, json.loads(out.decode("utf-8").strip().splitlines()[-1])


@pytest.mark.skipif(
    not (OFFICIAL_PYTHON or OFFICIAL_TRAINER),
    reason="SuperBPE's official trainer (the tokenizers fork alisawuffles/tokenizers-superbpe) is not "
    "available: it is built from source (Rust; tests/superbpe_official/build.sh, docs/superbpe.md says how "
    "it was built offline); set "
    "REFBPE_SUPERBPE_TRAINER to the Rust build of its recipe or REFBPE_SUPERBPE_PYTHON to an "
    "interpreter with the fork installed",
)
@pytest.mark.parametrize(
    "name, vocab_size, transition",
    [("english_small", 1000, 500), ("english_small", 3000, 1000), ("english_small", 5000, 4000),
     ("english_small", 2000, 0), ("russian", 3000, 1500), ("python_code", 5000, 3000),
     ("chinese", 5000, 2000)],
)  # fmt: skip
def test_byte_for_byte_against_the_official_trainer(tmp_path, name, vocab_size, transition):
    """Merges, vocab and the ids of unseen text (the next 200 KB's lines whose bytes the
    first MB holds: the vocab has the corpus's bytes only) equal the official trainer's."""
    train_data = _slice(name, 0, 1000000)
    if train_data is None:
        pytest.skip("shared corpora not found")
    seen = set(train_data)
    unseen_lines = _slice(name, 1000000, 200000).splitlines(keepends=True)
    corpus, unseen = tmp_path / "corpus.txt", tmp_path / "unseen.txt"
    corpus.write_bytes(train_data)
    unseen.write_bytes(b"".join(line for line in unseen_lines if set(line) <= seen))
    theirs, their_ids = _official(corpus, tmp_path / "w", vocab_size, transition, unseen)
    vocab, merges = train_bpe(str(corpus), vocab_size, [], profile=SuperBPEProfile(transition=transition))
    assert [m if isinstance(m, str) else " ".join(m) for m in theirs["model"]["merges"]] == [
        encode_token(a) + " " + encode_token(b) for a, b in merges
    ]
    assert theirs["model"]["vocab"] == {encode_token(t): i for i, t in vocab.items()}
    text = unseen.read_bytes().decode("utf-8")
    assert len(text) > 10000 and Tokenizer(vocab, merges, pattern="superbpe-stage2").encode(text) == their_ids


tables = st.dictionaries(
    st.text(alphabet="ab :.c", min_size=1, max_size=8).map(str.encode),
    st.integers(1, 4),
    min_size=1,
    max_size=8,
)


@settings(max_examples=examples(80), deadline=None)
@given(
    first=tables, second=tables, transition=st.integers(0, 12), more=st.integers(0, 15), route=REPLAY_ROUTES
)
def test_stage2_replays_any_stage1(first, second, transition, more, route):
    """Stage 1 learned on one table, replayed on another whose words hold pairs stage 1's
    tokens span and pairs they do not (long words are replayed on pieces cut between the
    latter, ``inherited.replay_in_pieces``; both routes drawn), then stage 2: the naive
    oracle's result."""
    with replay_route(route):
        _check_stage2_replays_any_stage1(first, second, transition, more)


def _check_stage2_replays_any_stage1(first, second, transition, more):
    profile = SuperBPEProfile(transition=transition)
    first_alphabet = len(profile.layout(first, [], []))
    _, stage1 = naive_train_bpe_from_counts(first, first_alphabet + transition, profile="hf")
    vocab_size = len(profile.layout(second, [], [])) + len(stage1) + more
    try:
        ours = train_from_counts((first, second), vocab_size, profile=profile)
    except ProfileLimit:
        assume(False)
    assert ours == naive_train_bpe_from_counts(second, vocab_size, profile="superbpe", extend=stage1)


@settings(max_examples=examples(80), deadline=None)
@given(text=st.one_of(mixed_text(), texts.map("".join), st.text(alphabet="ab1 2\n.:!", max_size=40)))
def test_stage2_cut_points_keep_the_pieces(text):
    """Every cut ``corpus.io`` may make under stage 2 leaves the pieces as they are
    (so ``encode`` and ``stats`` can work in chunks)."""
    data = text.encode("utf-8", "surrogatepass")
    pattern = get_pattern("superbpe-stage2")
    whole = pattern.pretokenize(data)
    for m in cut_points("superbpe-stage2").finditer(data):
        c = m.end()
        assert pattern.pretokenize(data[:c]) + pattern.pretokenize(data[c:]) == whole


def test_stats_compares_superbpe_with_plain_bpe(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat, by the way. 1999 and 2000\n" * 40)
    common = ["--vocab-size", "330", "--quiet"]
    run_main(capsys, "train", str(corpus), "--profile", "superbpe", "--transition", "40",
             "-o", str(tmp_path / "s"), *common)  # fmt: skip
    run_main(capsys, "train", str(corpus), "-o", str(tmp_path / "p"), *common)
    code, out, _ = run_main(capsys, "stats", "--model", str(tmp_path / "s"), "--model", str(tmp_path / "p"),
                            str(corpus), "--workers", "1", "--chunk-size", "64")  # fmt: skip
    header, _, superbpe, plain = out.splitlines()[:4]
    assert code == 0 and header.rstrip().endswith("tokens vs first |")
    assert superbpe.rstrip().endswith("+0.0% |") and plain.split("|")[-2].strip().startswith("+")
    code, out, _ = run_main(capsys, "stats", "--model", str(tmp_path / "s"), "--model", str(tmp_path / "p"),
                            str(corpus), "--workers", "1", "--json")  # fmt: skip
    s, p = json.loads(out)["models"]
    assert s["bytes_per_token"] > p["bytes_per_token"]
