"""``refbpe verify`` / ``refbpe count``: exit codes, the JSON report, and the
explanation of the first divergence (tie rules, counting differences)."""

import json
import os
import struct
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import REPO_ROOT, examples, run_main, shared_root

from refbpe.corpus.countfile import counts_tsv, escape_word, read_counts, unescape_word
from refbpe.corpus.idfile import read_ids
from refbpe.encode.tokenizer import Tokenizer
from refbpe.formats import Model, read_model, write_model
from refbpe.learn.train import build_vocab, train_from_counts
from refbpe.pretokenize.patterns import get_pattern
from refbpe.specials import special_pattern, split_specials
from refbpe.verify import PairReplay, count_variant, verify_encoding, verify_merges

REPO = REPO_ROOT
CS336 = os.path.join(shared_root(), "data", "cs336")
EXAMPLES = examples(50)
pretokenize = get_pattern("gpt2").pretokenize

EOT = "<|endoftext|>"

TEXT = (
    "low lower lowest newer wider new news low low the cat sat on the mat.\n"
    "a b ab ba abab baba aa bb cc dd cd dc\n"
    * 3
    + EOT
    + "\nthe end of the story, and the end of the text.\n"
    + "зима мир мир зима 中文 中文 日本\n" * 2
)


@pytest.fixture
def corpus(tmp_path):
    p = tmp_path / "corpus.txt"
    p.write_text(TEXT, encoding="utf-8")
    return p


def ref_counts(text=TEXT, specials=(EOT,)):
    return count_variant([text], list(specials), False, None, False)


def tie_trainer(text, num_merges, specials, rule):
    """A textbook trainer with another tie rule: 'smallest-bytes', or
    'first-counted' (minbpe / tiktoken _educational: the first pair counted
    scanning the pre-tokens in text order wins)."""
    pattern = special_pattern(specials)
    words = []
    for seg, is_special in split_specials(text, pattern):
        if not is_special:
            words.extend(
                [tuple(p[i : i + 1] for i in range(len(p))) for p in pretokenize(seg.encode("utf-8"))]
            )
    merges = []
    for _ in range(num_merges):
        stats = Counter()
        for w in words:
            for p in zip(w, w[1:]):
                stats[p] += 1
        if not stats:
            break
        if rule == "first-counted":
            best = max(stats, key=lambda p: stats[p])  # first in insertion order among the maxima
        else:
            top = max(stats.values())
            best = min(p for p in stats if stats[p] == top)
        merges.append(best)
        a, b = best
        new = []
        for w in words:
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new.append(tuple(out))
        words = new
    return merges


# -- word-count files --------------------------------------------------------------


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(st.binary(min_size=1, max_size=20))
def test_escape_round_trip(word):
    e = escape_word(word)
    assert "\t" not in e and "\n" not in e and all(0x20 <= ord(c) <= 0x7E for c in e)
    assert unescape_word(e) == word


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.dictionaries(st.binary(min_size=1, max_size=8), st.integers(1, 10**12), max_size=30))
def test_counts_file_round_trip(tmp_path_factory, counts):
    p = tmp_path_factory.mktemp("c") / "w.counts.tsv"
    p.write_bytes(counts_tsv(counts).encode("ascii"))
    assert read_counts(str(p)) == counts
    # Deterministic: the same text whatever the dict order.
    assert counts_tsv(dict(reversed(list(counts.items())))) == counts_tsv(counts)


def test_count_cli_writes_sorted_escaped_lines(corpus, tmp_path, capsys):
    out = tmp_path / "c.counts.tsv"
    assert run_main(capsys, "count", corpus, "--special-token", EOT, "-o", out)[0] == 0
    lines = out.read_bytes().decode("ascii").splitlines()
    words = [unescape_word(line.split("\t", 1)[1]) for line in lines]
    assert words == sorted(words)
    assert "1\t\\n" not in lines and any(line.endswith("\t\\n") for line in lines)
    assert read_counts(str(out)) == ref_counts()
    assert any("\\xd0" in line for line in lines)  # Cyrillic, escaped


def test_malformed_counts_file_is_bad_input(tmp_path, capsys):
    p = tmp_path / "bad.counts.tsv"
    p.write_text("3\tok\nx\tnot a count\n")
    (tmp_path / "m").mkdir()
    write_model(str(tmp_path / "m"), "gpt2", build_vocab([], []), [], [])
    rc, out, err = run_main(capsys, "verify", p, "--vocab-size", 300, "--against", tmp_path / "m")
    assert rc == 2 and "bad.counts.tsv:2" in err and err.count("\n") == 1


# -- merges: identical ----------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["gpt2", "hf", "tiktoken", "json"])
def test_verify_own_output_is_identical(corpus, tmp_path, capsys, fmt):
    out = tmp_path / "model"
    assert (
        run_main(
            capsys,
            "train",
            corpus,
            "--vocab-size",
            300,
            "--special-token",
            EOT,
            "--out",
            out,
            "--format",
            fmt,
            "--quiet",
            "--workers",
            1,
        )[0]
        == 0
    )
    rc, stdout, _ = run_main(
        capsys, "verify", corpus, "--vocab-size", 300, "--special-token", EOT, "--against", out, "--json"
    )
    assert rc == 0
    report = json.loads(stdout)
    assert report["identical"] is True and report["first_divergence"] is None
    assert report["merges_identical"] and report["vocab"]["identical_as_set"]


def test_verify_word_count_file(corpus, tmp_path, capsys):
    counts = tmp_path / "w.counts.tsv"
    assert run_main(capsys, "count", corpus, "--special-token", EOT, "-o", counts)[0] == 0
    out = tmp_path / "model"
    run_main(
        capsys,
        "train",
        corpus,
        "--vocab-size",
        290,
        "--special-token",
        EOT,
        "--out",
        out,
        "--quiet",
        "--workers",
        1,
    )
    rc, stdout, _ = run_main(
        capsys, "verify", counts, "--vocab-size", 290, "--special-token", EOT, "--against", out
    )
    assert rc == 0 and stdout.startswith("identical")
    # --counts for a file with another name
    other = tmp_path / "w.txt"
    other.write_bytes(counts.read_bytes())
    assert (
        run_main(
            capsys, "verify", other, "--counts", "--vocab-size", 290, "--special-token", EOT, "--against", out
        )[0]
        == 0
    )


def test_same_merges_other_ids(tmp_path, capsys, corpus):
    counts = ref_counts()
    vocab, merges = train_from_counts(counts, 290, [EOT])
    # Special token first, as the CS336 reference vocab: same set, other ids.
    shifted = {0: EOT.encode()}
    for i in sorted(vocab):
        if vocab[i] != EOT.encode():
            shifted[len(shifted)] = vocab[i]
    write_model(str(tmp_path / "m.json"), "json", shifted, merges, [EOT])
    rc, out, _ = run_main(
        capsys,
        "verify",
        corpus,
        "--vocab-size",
        290,
        "--special-token",
        EOT,
        "--against",
        tmp_path / "m.json",
        "--json",
    )
    r = json.loads(out)
    # CS336's tests compare the merges and the vocab as a set: exit 0, with a note on the ids.
    assert (
        rc == 0
        and r["identical"] is True
        and r["merges_identical"]
        and r["vocab"]["identical_as_set"]
        and r["vocab"]["ids_identical"] is False
    )
    assert r["first_divergence"] is None and r["cause"] is None
    assert [w["code"] for w in r["warnings"]] == ["ids-differ"]
    rc, out, _ = run_main(
        capsys,
        "verify",
        corpus,
        "--vocab-size",
        290,
        "--special-token",
        EOT,
        "--against",
        tmp_path / "m.json",
        "--exact-ids",
    )
    assert rc == 1 and out.startswith("warning [ids-differ]: ") and "\nsetup: DIFFERENT" in out
    assert (
        run_main(
            capsys,
            "verify",
            corpus,
            "--vocab-size",
            290,
            "--special-token",
            EOT,
            "--against",
            tmp_path / "m.json",
            "--ignore-ids",
        )[0]
        == 0
    )


# -- merges: divergences explained -----------------------------------------------------


def _their_model(merges, specials, layout="refbpe"):
    return Model(build_vocab(merges, specials), merges, specials, "json", True, "theirs")


@pytest.mark.parametrize("rule", ["smallest-bytes", "first-counted"])
def test_tie_rule_is_named(rule):
    counts = ref_counts()
    n = 40
    theirs = tie_trainer(TEXT, n, [EOT], rule)
    r = verify_merges(counts, 256 + 1 + n, [EOT], _their_model(theirs, [EOT]), texts=[TEXT])
    assert r["identical"] is False
    k = r["first_divergence"]["index"]
    assert isinstance(k, int)
    d = r["divergence"]
    assert d["kind"] == "tie" and d["tie"] is True
    assert d["ours"]["count"] == d["theirs"]["count"] == d["max_count"]
    assert rule in d["tie_rules"]
    assert "greatest-bytes" not in d["tie_rules"]
    assert "a tie" in r["explanation"]
    # Every merge of theirs has the maximum count under the reference.
    assert "only tie-breaking differs" in r["explanation"]


def test_swapped_tied_merges(tmp_path, capsys, corpus):
    counts = ref_counts()
    vocab, merges = train_from_counts(counts, 300, [EOT])
    replay = PairReplay(counts)
    for k, m in enumerate(merges):
        top = replay.max_count()
        if (
            len(replay.tied(top)) > 1
            and k + 1 < len(merges)
            and replay.count(merges[k + 1]) == top
            and merges[k + 1][0] != merges[k][0] + merges[k][1]
            and merges[k + 1][1] != merges[k][0] + merges[k][1]
        ):
            break
        replay.apply(m)
    else:
        pytest.skip("no adjacent tied merges in this corpus")
    swapped = merges[:k] + [merges[k + 1], merges[k]] + merges[k + 2 :]
    write_model(str(tmp_path / "theirs"), "gpt2", build_vocab(swapped, [EOT]), swapped, [EOT])
    rc, out, _ = run_main(
        capsys,
        "verify",
        corpus,
        "--vocab-size",
        300,
        "--special-token",
        EOT,
        "--against",
        tmp_path / "theirs",
        "--json",
    )
    r = json.loads(out)
    assert rc == 1 and r["first_divergence"]["index"] == k
    assert r["divergence"]["tie"] is True and r["divergence"]["kind"] == "tie"
    assert r["divergence"]["ours"]["text"] != r["divergence"]["theirs"]["text"]
    assert "greatest-bytes" not in r["divergence"]["tie_rules"]


def test_count_difference_names_the_counting_variant():
    text = TEXT * 2 + ("the  end\n\n  of \n  lines\n" + EOT + "eot text" + EOT) * 5
    counts = ref_counts(text)
    variant = count_variant([text], [EOT], True, "keep", False)  # line by line, specials as text
    _, theirs = train_from_counts(variant, 330, [EOT])
    r = verify_merges(counts, 330, [EOT], _their_model(theirs, [EOT]), texts=[text])
    d = r["divergence"]
    assert r["identical"] is False and isinstance(r["first_divergence"]["index"], int)
    assert d["kind"] in ("count_difference", "missing_pair")
    assert d["theirs"]["count"] < d["max_count"]
    best = d["hypotheses"][0]
    assert best["variant"] == "lines+specials-as-text" and best["consistent_merges"] == best["of"]
    assert "lines+specials-as-text" in r["explanation"]


def test_length_divergence():
    counts = ref_counts()
    _, merges = train_from_counts(counts, 280, [EOT])
    r = verify_merges(counts, 281, [EOT], _their_model(merges, [EOT]), texts=[TEXT])
    assert r["first_divergence"]["index"] == len(merges) and r["divergence"]["kind"] == "length"


def test_json_report_shape(corpus, tmp_path, capsys):
    theirs = tie_trainer(TEXT, 30, [EOT], "smallest-bytes")
    write_model(str(tmp_path / "t.json"), "json", build_vocab(theirs, [EOT]), theirs, [EOT])
    rc, out, err = run_main(
        capsys,
        "verify",
        corpus,
        "--vocab-size",
        287,
        "--special-token",
        EOT,
        "--against",
        tmp_path / "t.json",
        "--json",
    )
    assert rc == 1 and err == ""
    assert out.count("\n") == 1
    r = json.loads(out)
    assert isinstance(r["identical"], bool) and isinstance(r["first_divergence"]["index"], int)
    assert {"ours", "theirs", "vocab", "divergence", "explanation"} <= set(r)
    d = r["divergence"]
    for side in ("ours", "theirs"):
        assert {"left", "right", "text", "count"} <= set(d[side])
        bytes.fromhex(d[side]["left"])
    assert {"index", "kind", "tie", "tie_rules", "max_count", "hints"} <= set(d)


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "CORPUS", "--vocab-size", "300", "--against", "/nonexistent/model"],
        ["verify", "/nonexistent/corpus.txt", "--vocab-size", "300", "--against", "MODEL"],
        ["verify", "CORPUS", "--against", "MODEL"],  # no --vocab-size
        ["verify", "CORPUS", "--vocab-size", "300", "--against", "JUNK"],
        ["verify", "CORPUS", "--vocab-size", "300", "--against", "MODEL", "--format", "tiktoken"],
        ["verify", "--encode", "CORPUS", "--against", "MODEL"],  # no --ids
    ],
)
def test_bad_input_exits_2(corpus, tmp_path, capsys, argv):
    write_model(str(tmp_path / "model"), "gpt2", build_vocab([], []), [], [])
    (tmp_path / "junk").write_text("not a tokenizer\n")
    subst = {"CORPUS": str(corpus), "MODEL": str(tmp_path / "model"), "JUNK": str(tmp_path / "junk")}
    rc, out, err = run_main(capsys, *[subst.get(a, a) for a in argv])
    assert rc == 2 and out == ""
    assert err.startswith("refbpe: error: ") and err.count("\n") == 1


@pytest.mark.slow
def test_against_hf_trained_tokenizer_on_corpus_en(tmp_path, capsys):
    tokenizers = pytest.importorskip("tokenizers")
    corpus = os.path.join(CS336, "corpus.en")
    if not os.path.exists(corpus):
        pytest.skip("shared test data not found: %s (set REFBPE_SHARED)" % corpus)
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=500,
        special_tokens=[EOT],
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train([corpus], trainer)
    path = str(tmp_path / "tokenizer.json")
    tok.save(path)
    rc, out, _ = run_main(
        capsys, "verify", corpus, "--vocab-size", 500, "--special-token", EOT, "--against", path, "--json"
    )
    r = json.loads(out)
    assert rc == 1 and r["identical"] is False
    assert isinstance(r["first_divergence"]["index"], int) and r["explanation"]
    d = r["divergence"]
    assert r["theirs"]["format"] == "hf"
    if d["kind"] == "tie":
        assert "smallest-ids" in d["tie_rules"], r["explanation"]
    else:
        assert d["hints"], r["explanation"]


# -- encodings --------------------------------------------------------------------------


def _npy(path, ids, dtype="<i4"):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (dtype, len(ids))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    fmt = {"<i4": "<%di", "<u2": "<%dH", "<i8": "<%dq"}[dtype] % len(ids)
    with open(path, "wb") as f:
        f.write(
            b"\x93NUMPY\x01\x00"
            + struct.pack("<H", len(header))
            + header.encode("latin-1")
            + struct.pack(fmt, *ids)
        )


@pytest.mark.parametrize("dtype", ["<i4", "<u2", "<i8"])
def test_read_ids_npy_and_json(tmp_path, dtype):
    ids = [0, 5, 300, 65535 if dtype == "<u2" else 70000]
    _npy(str(tmp_path / "a.npy"), ids, dtype)
    assert read_ids(str(tmp_path / "a.npy")) == ids
    (tmp_path / "a.json").write_text(json.dumps(ids))
    assert read_ids(str(tmp_path / "a.json")) == ids


def test_verify_encode_cli(corpus, tmp_path, capsys):
    model = tmp_path / "model"
    run_main(
        capsys,
        "train",
        corpus,
        "--vocab-size",
        300,
        "--special-token",
        EOT,
        "--out",
        model,
        "--quiet",
        "--workers",
        1,
    )
    ids = _tokenizer(read_model(str(model))).encode(TEXT)
    _npy(str(tmp_path / "ids.npy"), ids)
    rc, out, _ = run_main(
        capsys, "verify", "--encode", corpus, "--ids", tmp_path / "ids.npy", "--against", model
    )
    assert rc == 0 and out.startswith("identical")
    bad = list(ids)
    bad[7] += 1
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    rc, out, _ = run_main(
        capsys, "verify", "--encode", corpus, "--ids", tmp_path / "bad.json", "--against", model, "--json"
    )
    r = json.loads(out)
    assert rc == 1 and r["first_divergence"] == 7 and r["divergence"]["position"] == 7
    assert r["divergence"]["pretoken"]["text"] and r["divergence"]["pretoken"]["line"] == 1
    (tmp_path / "short.json").write_text(json.dumps(ids[:-1]))
    rc, out, _ = run_main(
        capsys, "verify", "--encode", corpus, "--ids", tmp_path / "short.json", "--against", model, "--json"
    )
    assert rc == 1 and json.loads(out)["first_divergence"] == len(ids) - 1


def test_verify_encoding_kinds():
    merges = [(b"o", b" ")]
    m = Model(build_vocab(merges, []), merges, [], "json")
    text = "hello world"
    ours = _tokenizer(m).encode(text)
    theirs = [ord(c) for c in "hell"] + [256] + [ord(c) for c in "world"]
    r = verify_encoding(m, text, theirs)
    assert r["first_divergence"] == 4 and r["divergence"]["kind"] == "pretokenization"
    assert r["divergence"]["pretoken"]["text"] == repr("hello")
    assert verify_encoding(m, text, ours)["identical"]
    r = verify_encoding(m, text, ours[:3] + ours[4:])
    assert r["divergence"]["kind"] == "text_mismatch"


def _tokenizer(model):
    return Tokenizer(model.vocab, model.merges, model.special_tokens)
