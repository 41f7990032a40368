"""Unicode versions: the tables per version, their generator, and each peer's version.

The peers (tiktoken, HF tokenizers, rustbpe) are probed on every code point by
``tests/unicode_probe.py``; here each must split as refbpe does under the
version its profile or encoding defaults to, and train or encode byte for
byte on texts drawn from every assigned code point of every version.
"""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import HEAVY, IS_PYPY, examples
from test_profiles import hf_model, refbpe_hf_model, refbpe_ranks, rustbpe_ranks
from test_tiktoken_ids import _tiktoken, pair

from refbpe.encode.tokenizer import Tokenizer
from refbpe.learn.profiles import ProfileLimit, get_profile
from refbpe.learn.train import train_from_texts
from refbpe.pretokenize import unicode_tables
from refbpe.pretokenize.patterns import get_pattern, pattern_key
from refbpe.pretokenize.unicode_tables import LATEST, UNICODE_VERSIONS, category_table, class_table

PEER_VERSIONS = {
    "tiktoken:gpt2": "16.0.0",
    "tiktoken:cl100k_base": "16.0.0",
    "tiktoken:o200k_base": "16.0.0",
    "hf:ByteLevel": get_profile("hf").default_unicode,
    "rustbpe": get_profile("rustbpe").default_unicode,
}


def _changed_anywhere():
    """Code points whose class differs between some two known versions, sorted."""
    out = set()
    for v in UNICODE_VERSIONS:
        out.update(unicode_tables.changed_code_points(v))
    return sorted(out)


# -- the tables --------------------------------------------------------------------------


def test_version_names():
    assert unicode_tables.unicode_version("16") == "16.0.0"
    assert unicode_tables.unicode_version("15.1") == "15.1.0"
    assert unicode_tables.unicode_version(None) == LATEST
    with pytest.raises(ValueError, match="known: 15.0.0"):
        unicode_tables.unicode_version("14.0")
    assert pattern_key(None, "16") == "@16.0.0"
    assert pattern_key("llama3", None, "gpt2@15.1.0") == "llama3@15.1.0"
    assert get_pattern("@16").key == "gpt2@16.0.0"
    assert get_pattern("o200k_base", unicode="18").key == "o200k_base"


def test_versions_agree_on_whitespace_and_only_add_classes():
    """White_Space is the same in every version; a newer version only gives a class to
    code points an older one left "other", except U+0295 (Ll in 15.0-16.0, Lo from 17.0)."""
    spaces = bytes(6) + b"\x01" + bytes(249)
    latest = category_table(LATEST).translate(spaces)
    for older, newer in zip(UNICODE_VERSIONS, UNICODE_VERSIONS[1:]):
        a = category_table(older)
        assert a.translate(spaces) == latest
        moved = [cp for cp in unicode_tables.changed_code_points(older, newer) if a[cp] != 0]
        assert moved == ([0x295] if (older, newer) == ("16.0.0", "17.0.0") else [])


def test_gpt2_classes_are_the_categories_collapsed_in_every_version():
    collapse = bytes((0, 1, 1, 1, 0, 2, 3)) + bytes(249)
    for v in UNICODE_VERSIONS:
        assert class_table(v) == category_table(v).translate(collapse)


def test_a_version_splits_differently_only_where_its_table_differs():
    """U+1C89 (CYRILLIC CAPITAL LETTER TJE) is a letter from Unicode 16.0 on."""
    text = "a\u1c89b x"
    assert get_pattern("gpt2", unicode="15.1").pretokenize_str(text) == ["a", "\u1c89", "b", " x"]
    assert get_pattern("gpt2", unicode="16").pretokenize_str(text) == ["a\u1c89b", " x"]
    assert get_pattern("gpt2").pretokenize_str(text) == ["a\u1c89b", " x"]


# -- the peers, probed ---------------------------------------------------------------------


def _probe_code_points():
    """Every scalar value under the heavy profile or with ``REFBPE_UNICODE_PROBE=all`` (CI
    sets it); else the code points that decide the version (their class changed between
    versions), every one below U+0800, and every 61st other."""
    import unicode_probe

    if HEAVY or os.environ.get("REFBPE_UNICODE_PROBE") == "all":
        return unicode_probe.scalar_values()
    picked = set(_changed_anywhere()) | set(range(0x800)) | set(range(0, 0x110000, 61))
    return sorted(cp for cp in picked if not 0xD800 <= cp <= 0xDFFF)


def _peer_or_skip(peer):
    if IS_PYPY:
        pytest.skip("the peers are CPython extensions")
    module = {"tiktoken": "tiktoken", "hf": "tokenizers", "rustbpe": "rustbpe"}[peer.split(":")[0]]
    pytest.importorskip(module, reason="%s is not installed" % module)
    if peer.startswith("tiktoken:"):
        _tiktoken(peer.split(":")[1])  # skips without the offline cache


PROBE_PARTS = 4  # each peer's probe in parts, so that the test workers share it (pytest -n)


def _probe_part(code_points, part):
    """Part ``part`` of ``PROBE_PARTS`` contiguous parts of ``code_points``, each a whole number of
    the probe's blocks: together the parts probe the same texts as the whole list."""
    import unicode_probe

    blocks = -(-len(code_points) // unicode_probe.BLOCK)
    per = -(-blocks // PROBE_PARTS) * unicode_probe.BLOCK
    return code_points[part * per : (part + 1) * per]


def test_the_probe_parts_are_the_whole_list_in_whole_blocks():
    import unicode_probe

    for n in (0, 1, unicode_probe.BLOCK, 5 * unicode_probe.BLOCK + 3, 1112064):
        cps = list(range(n))
        parts = [_probe_part(cps, k) for k in range(PROBE_PARTS)]
        assert sum(parts, []) == cps
        assert all(p[0] % unicode_probe.BLOCK == 0 for p in parts if p)  # each starts a block


def _peer_groups():
    """The peers by (pattern, default version), each group probed over one split of refbpe's."""
    import unicode_probe

    groups = {}
    for peer in sorted(PEER_VERSIONS):
        groups.setdefault((unicode_probe.PATTERN_OF_PEER[peer], PEER_VERSIONS[peer]), []).append(peer)
    return sorted(groups.values())


@pytest.mark.parametrize("part", range(PROBE_PARTS))
@pytest.mark.parametrize("peers", _peer_groups(), ids="+".join)
def test_peer_splits_as_its_default_version_on_every_probed_code_point(peers, part):
    import unicode_probe

    present, reasons = [], []
    for peer in peers:
        try:
            _peer_or_skip(peer)
            present.append(peer)
        except pytest.skip.Exception as e:
            reasons.append(str(e))
    if not present:
        pytest.skip("; ".join(reasons))
    version = PEER_VERSIONS[present[0]]
    code_points = _probe_part(_probe_code_points(), part)
    result = unicode_probe.probe_peers(present, code_points, versions=(version,))
    for peer in present:
        differ = result[peer][version]
        assert differ == [], "%s differs from Unicode %s at %s" % (
            peer,
            version,
            " ".join("U+%04X" % cp for cp in differ[:20]),
        )


def test_the_probe_tells_versions_apart():
    """The probe is not blind: HF's ByteLevel differs from the latest table on new letters."""
    import unicode_probe

    _peer_or_skip("hf:ByteLevel")
    result = unicode_probe.probe("hf:ByteLevel", [0x41, 0x558, 0x58B, 0x209D, 0x3D000], versions=("18.0.0",))
    assert result["18.0.0"] == [0x558, 0x58B, 0x209D, 0x3D000]


# -- byte for byte on every assigned code point --------------------------------------------


def _assigned():
    """Code points assigned in the latest version (``regex``'s ``\\p{Assigned}``), surrogates left out."""
    import regex

    if IS_PYPY:
        pytest.skip("regex's Unicode classes are ASCII-only on PyPy")
    assigned = regex.compile(r"\p{Assigned}")
    return [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and assigned.match(chr(cp))]


_CHARS = {}


def _characters():
    if not _CHARS:
        _CHARS["assigned"] = _assigned()
        _CHARS["changed"] = _changed_anywhere()
    return st.one_of(
        st.sampled_from(_CHARS["assigned"]), st.sampled_from(_CHARS["changed"]), st.sampled_from(b" a1'\n!")
    ).map(chr)


def _docs():
    word = st.text(_characters(), min_size=1, max_size=4)
    doc = st.lists(st.one_of(word, st.sampled_from([" ", "a", "ab", " the", "\n"])), max_size=12).map("".join)
    return st.lists(doc, min_size=1, max_size=6)


@settings(max_examples=examples(60))
@given(data=st.data(), extra=st.integers(0, 40))
def test_rustbpe_profile_equals_rustbpe_on_every_assigned_code_point(data, extra):

    _peer_or_skip("rustbpe")
    docs = data.draw(_docs())
    vocab, _ = train_from_texts(docs, 256 + extra, profile="rustbpe")
    assert refbpe_ranks(vocab) == rustbpe_ranks(docs, 256 + extra)


@settings(max_examples=examples(60))
@given(data=st.data(), extra=st.integers(0, 40), prefix=st.booleans())
def test_hf_profile_equals_hf_on_every_assigned_code_point(data, extra, prefix):

    _peer_or_skip("hf:ByteLevel")
    docs = data.draw(_docs())
    try:
        vocab, merges = train_from_texts(docs, 6 + extra, profile="hf", add_prefix_space=prefix)
    except ProfileLimit:
        return  # HF reuses an id (the one rule not modelled; tests/test_profiles.py)
    assert refbpe_hf_model(vocab, merges, ()) == hf_model(docs, 6 + extra, (), prefix)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
@settings(max_examples=examples(100))
@given(data=st.data())
def test_tiktoken_ids_equal_on_every_code_point(name, data):
    """Texts drawn from all code points (surrogates aside), with the encoding's default version."""

    _peer_or_skip("tiktoken:" + name)
    enc = _tiktoken(name)
    tok = _TOKENIZERS.get(name)
    if tok is None:
        tok = _TOKENIZERS[name] = _tokenizer_of(enc, name, Tokenizer)
    any_cp = st.integers(0, 0x10FFFF).filter(lambda cp: not 0xD800 <= cp <= 0xDFFF).map(chr)
    text = data.draw(st.text(st.one_of(any_cp, _characters()), max_size=40))
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


_TOKENIZERS = {}


def _tokenizer_of(enc, name, Tokenizer):
    if name != "gpt2":
        tok = pair(name)[0]  # loaded once per process, shared with tests/test_tiktoken_ids.py
        assert tok.unicode == PEER_VERSIONS["tiktoken:" + name]
        return tok
    # gpt2 has no ranks file among the shared data: its ranks come from tiktoken itself.
    import tempfile

    path = os.path.join(tempfile.mkdtemp(), "gpt2.tiktoken")
    import base64

    with open(path, "w", encoding="ascii") as f:
        for token, rank in sorted(enc._mergeable_ranks.items(), key=lambda kv: kv[1]):
            f.write("%s %d\n" % (base64.b64encode(token).decode("ascii"), rank))
    return Tokenizer.from_tiktoken(path, unicode=PEER_VERSIONS["tiktoken:gpt2"])


# -- verify names the table ----------------------------------------------------------------

EOT = "<|endoftext|>"


def _new_letter(older, newer):
    """The first code point that is "other" in Unicode ``older`` and a letter in ``newer``."""
    a, b = class_table(older), class_table(newer)
    return next(cp for cp in unicode_tables.changed_code_points(older, newer) if a[cp] == 0 and b[cp] == 1)


def _model(merges):
    from refbpe.formats import Model
    from refbpe.learn.train import build_vocab

    return Model(build_vocab(merges, [EOT]), merges, [EOT], "json", True, "theirs")


def _verify(text, merges, vocab):
    from refbpe.verify import count_variant, verify_merges

    return verify_merges(count_variant([text], [EOT]), vocab, [EOT], _model(merges), texts=[text])


def _unicode_text():
    """Words around a letter new in each version 16.0, 17.0 and 18.0, and ASCII around them."""
    new = [_new_letter(o, n) for o, n in (("15.1.0", "16.0.0"), ("16.0.0", "17.0.0"), ("17.0.0", "18.0.0"))]
    words = ["x%sy" % chr(cp) for cp in new] + ["%s%sab" % (chr(new[0]), chr(new[1])), "low lower"]
    return " ".join(words[k % len(words)] for k in range(7 * len(words))) + EOT


@pytest.mark.parametrize("version", ["15.1.0", "16.0.0", "17.0.0"])
def test_verify_names_the_unicode_version_of_an_older_table(version):
    from refbpe.naive import naive_train_bpe

    text = _unicode_text()
    theirs = naive_train_bpe(text, 300, [EOT], pattern=get_pattern("gpt2", unicode=version))[1]
    assert theirs != naive_train_bpe(text, 300, [EOT])[1]
    r = _verify(text, theirs, 300)
    assert (r["cause"], r["variant"], r["unicode"]) == ("unicode-version", "unicode-version", version)
    named = r["explanations"][0]
    assert named["code_points"] and named["code_points_total"] >= 1
    assert "Unicode %s" % version in r["explanation"].splitlines()[0]


@settings(max_examples=examples(40), deadline=None)
@given(
    words=st.lists(
        st.text(st.sampled_from("ab c\u1c89\u0558\U0003d000"), min_size=1, max_size=5), max_size=30
    ),
    rule=st.sampled_from(["reference", "smallest-bytes"]),
)
def test_verify_never_names_unicode_version_for_the_same_table(words, rule):
    """A trainer on the reference table (with or without a planted tie rule) is not a Unicode version."""
    from planted_trainers import planted_train

    text = " ".join(words) + EOT
    theirs = (
        planted_train(text, 280, [EOT]) if rule == "reference" else planted_train(text, 280, [EOT], rule=rule)
    )
    r = _verify(text, theirs, 280)
    assert r["cause"] != "unicode-version"
    assert all(e.get("kind") != "variant" or e["name"] != "unicode-version" for e in r["explanations"])


# -- the version travels: count files, manifests, the command line -------------------------


def test_cli_records_the_version_and_reads_it_back(tmp_path, capsys):
    import json

    from support import run_main

    text = "hello a\u0558b world a\u0558b \u1c89x\n" * 3
    corpus = tmp_path / "c.txt"
    corpus.write_text(text, encoding="utf-8")
    counts = tmp_path / "c.counts.tsv"
    assert run_main(capsys, "count", corpus, "--out", counts, "--unicode", "16", "--quiet")[0] == 0
    assert counts.read_text(encoding="ascii").splitlines()[0] == "# pattern: gpt2@16.0.0"
    for name, source in (("from-counts", ["--counts", counts]), ("from-text", [corpus, "--unicode", "16.0"])):
        out = tmp_path / name
        assert run_main(capsys, "train", *source, "--vocab-size", 270, "--out", out, "--quiet")[0] == 0
        assert json.loads((out / "refbpe.json").read_text(encoding="utf-8"))["unicode"] == "16.0.0"
        status, ids, _ = run_main(capsys, "encode", out, corpus, "--quiet")
        tok = Tokenizer.from_dir(str(out))
        assert tok.unicode == "16.0.0"
        assert [int(i) for i in ids.split()] == tok.encode(text)
    default = tmp_path / "latest"
    assert run_main(capsys, "train", corpus, "--vocab-size", 270, "--out", default, "--quiet")[0] == 0
    assert "unicode" not in json.loads((default / "refbpe.json").read_text(encoding="utf-8"))
    latest = Tokenizer.from_dir(str(default))
    assert latest.encode(text) != Tokenizer.from_dir(str(default), unicode="16").encode(text)
    status, _, err = run_main(
        capsys, "train", corpus, "--vocab-size", 270, "--out", default, "--unicode", "14"
    )
    assert status == 2 and err.count("\n") == 1 and "unknown Unicode version '14'" in err


def test_profiles_and_encodings_default_to_their_peers_version():
    from refbpe.encodings.registry import KNOWN_ENCODINGS, TIKTOKEN_UNICODE

    assert get_profile("cs336").settings()["unicode"] == LATEST
    assert get_profile("rustbpe").settings()["unicode"] == PEER_VERSIONS["rustbpe"]
    assert get_profile("hf").settings()["unicode"] == PEER_VERSIONS["hf:ByteLevel"]
    assert get_profile("rustbpe").settings(unicode="18")["unicode"] == LATEST
    assert get_profile("rustbpe").settings(pattern="gpt2@17.0.0")["unicode"] == "17.0.0"
    # Every encoding is split by tiktoken's one regex crate: the probed ones (gpt2, cl100k_base,
    # o200k_base) say which version it reads, and the others (r50k, p50k, harmony) share it.
    probed = [n for n in KNOWN_ENCODINGS if "tiktoken:" + n in PEER_VERSIONS]
    assert sorted(probed) == ["cl100k_base", "gpt2", "o200k_base"]
    for name in KNOWN_ENCODINGS:
        assert KNOWN_ENCODINGS[name]["unicode"] == TIKTOKEN_UNICODE
    for name in probed:
        assert PEER_VERSIONS["tiktoken:" + name] == TIKTOKEN_UNICODE


# -- verify names the table under every pattern, version and profile -----------------------

NAMED = ("gpt2", "cl100k_base", "llama3", "o200k_base")
# Words around the letters new in 16.0, 17.0 and 18.0 (``_unicode_text``), with drawn ASCII noise.
_noise = st.lists(st.sampled_from(["ab", "low", " x", "12", "!!", "a\nb", "\tq"]), max_size=6)


def _cs336_verify(text, key, merges, vocab_size):
    from refbpe.corpus.sequences import count_texts
    from refbpe.verify import verify_merges

    counts = count_texts([text], "documents", [EOT], key)
    return verify_merges(counts, vocab_size, [EOT], _model(merges), texts=[text], pattern=key)


def _tells_apart(text, a, b):
    """Whether ``text`` holds a code point Unicode ``a`` and ``b`` class differently."""
    return bool(set(map(ord, text)).intersection(unicode_tables.changed_code_points(a, b)))


def _named_versions(r):
    """The version a report names and those it says count the corpus alike."""
    best = r["explanations"][0]
    return [best["unicode"]] + [a["unicode"] for a in best.get("same_counts_as", ()) if a.get("unicode")]


@settings(max_examples=examples(12), deadline=None)
@given(
    name=st.sampled_from(NAMED),
    ours=st.sampled_from([LATEST, "16.0.0", "15.1.0"]),
    theirs=st.sampled_from(UNICODE_VERSIONS),
    noise=_noise,
)
def test_verify_names_the_version_of_a_trainer_under_every_pattern(name, ours, theirs, noise):
    """The reference on ``name`` reading ``ours`` (the default, or --unicode), their trainer
    on ``theirs``: named with its version and the code points, and never when the tables agree."""
    from refbpe.naive import naive_train_bpe

    text = " ".join(noise) + _unicode_text()
    key = get_pattern(name, unicode=ours).key
    merges = naive_train_bpe(text, 300, [EOT], pattern=get_pattern(name, unicode=theirs))[1]
    r = _cs336_verify(text, key, merges, 300)
    if not _tells_apart(text, theirs, ours):
        assert r["identical"] and r["cause"] is None
        return
    assert (r["cause"], r["variant"]) == ("unicode-version", "unicode-version")
    assert theirs in _named_versions(r)
    changed = set(unicode_tables.changed_code_points(r["unicode"], ours))
    named = r["explanations"][0]
    assert named["code_points"] and all(int(c[2:], 16) in changed for c in named["code_points"])
    assert "Unicode %s" % r["unicode"] in r["explanation"]


@settings(max_examples=examples(12), deadline=None)
@given(
    name=st.sampled_from(NAMED),
    ours=st.sampled_from([LATEST, "16.0.0"]),
    words=st.lists(st.text(st.sampled_from("ab c\u1c89\u0558\u088f\n"), min_size=1, max_size=5), max_size=30),
)
def test_verify_never_names_a_version_for_a_same_table_trainer_under_any_pattern(name, ours, words):
    """rustbpe's trainer (another tie rule and id layout) on the reference's table is not a version."""
    text = " ".join(words) + EOT
    key = get_pattern(name, unicode=ours).key
    merges = train_from_texts([text], 280, [EOT], profile="rustbpe", pattern=name, unicode=ours)[1]
    r = _cs336_verify(text, key, merges, 280)
    assert r["cause"] != "unicode-version" and "unicode" not in r
    assert all(e.get("kind") != "variant" or e["name"] != "unicode-version" for e in r["explanations"])


# (profile, their file's format, the pattern, the profile's default version)
PROFILE_CASES = [
    ("rustbpe", "tiktoken", "llama3", get_profile("rustbpe").default_unicode),
    ("rustbpe", "tiktoken", "o200k_base", get_profile("rustbpe").default_unicode),
    ("hf", "hf", "gpt2", get_profile("hf").default_unicode),
    ("cs336", "json", "cl100k_base", LATEST),
    ("cs336", "json", "o200k_base", LATEST),
]


def _cli_json(capsys, *argv):
    import json

    from support import run_main

    status, out, err = run_main(capsys, *argv)
    assert status in (0, 1), err
    return status, json.loads(out)


@settings(
    max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    case=st.sampled_from(PROFILE_CASES),
    theirs=st.sampled_from(UNICODE_VERSIONS),
    explicit=st.sampled_from([None, "16.0.0", "17.0.0"]),
    noise=_noise,
)
def test_verify_profile_names_the_version_of_their_trainer(
    tmp_path_factory, capsys, case, theirs, explicit, noise
):
    """``verify --profile P`` (P's default version, or ``--unicode``) against P's trainer on
    another version names that version and the code points; on the same version, identical."""
    from refbpe.formats import write_model

    profile, fmt, name, default = case
    ours = explicit or default
    d = tmp_path_factory.mktemp("profile")
    text = " ".join(noise) + _unicode_text().replace(EOT, "\n")
    corpus = d / "c.txt"
    corpus.write_text(text, encoding="utf-8")
    prefix = False if profile == "hf" else None  # as their tokenizer.json says
    vocab, merges = train_from_texts(
        [text],
        300,
        [],
        profile=profile,
        pattern=name,
        unicode=theirs,
        cut="documents",
        add_prefix_space=prefix,
    )
    path = str(d / ("theirs." + fmt))
    write_model(path, fmt, vocab, merges, [], pattern=name)
    argv = ["verify", corpus, "--against", path, "--vocab-size", 300, "--profile", profile, "--json"]
    argv += ["--pattern", name] if profile != "hf" else []
    argv += ["--unicode", explicit] if explicit else []
    status, r = _cli_json(capsys, *argv)
    if not _tells_apart(text, theirs, ours):
        assert (status, r["identical"], r["cause"]) == (0, True, None)
        return
    assert (status, r["cause"]) == (1, "unicode-version")
    assert not _tells_apart(text, r["unicode"], theirs)  # theirs, or one that reads this text alike
    changed = set(unicode_tables.changed_code_points(r["unicode"], ours))
    assert r["code_points"] and all(int(c[2:], 16) in changed for c in r["code_points"])
    assert "reading Unicode %s instead of %s" % (r["unicode"], ours) in r["explanation"]


@pytest.mark.parametrize("profile", ["rustbpe", "hf"])
def test_verify_profile_never_names_a_version_for_a_same_table_trainer(tmp_path, capsys, profile):
    """The CS336 trainer (another tie rule) on the profile's own table is not a version."""
    from refbpe.formats import write_model

    text = _unicode_text().replace(EOT, "\n") + " ab ba ab ba cd dc"
    corpus = tmp_path / "c.txt"
    corpus.write_text(text, encoding="utf-8")
    key = get_pattern("llama3" if profile == "rustbpe" else "gpt2", unicode="16").key
    vocab, merges = train_from_texts([text], 300, [], pattern=key)
    assert merges != train_from_texts([text], 300, [], profile=profile, pattern=key, cut="documents")[1]
    write_model(str(tmp_path / "theirs.json"), "json", vocab, merges, [])
    status, r = _cli_json(
        capsys,
        "verify",
        corpus,
        "--against",
        tmp_path / "theirs.json",
        "--vocab-size",
        300,
        "--profile",
        profile,
        "--json",
    )
    assert status == 1 and r["cause"] != "unicode-version" and "unicode" not in r


@settings(
    max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(NAMED),
    ours=st.sampled_from([None, "16.0.0"]),
    theirs=st.sampled_from(UNICODE_VERSIONS),
    noise=_noise,
)
def test_verify_split_and_encode_name_the_version_of_their_pieces(
    tmp_path_factory, capsys, name, ours, theirs, noise
):
    """``verify --split`` against pieces cut by another version, and ``verify --encode`` against
    ids encoded with it, name that version; pieces and ids of the same version are identical."""
    import json

    from refbpe.formats import write_model

    d = tmp_path_factory.mktemp("split")
    text = " ".join(noise) + _unicode_text().replace(EOT, "\n")
    corpus = d / "c.txt"
    corpus.write_text(text, encoding="utf-8")
    split = get_pattern(name, unicode=theirs)
    (d / "pieces.jsonl").write_text(
        "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in split.pretokenize_str(text)),
        encoding="utf-8",
    )
    vocab, merges = train_from_texts([text], 290, [], pattern=name)
    write_model(str(d / "m.json"), "json", vocab, merges, [])
    ids = Tokenizer(vocab, merges, pattern=split).encode(text)
    (d / "ids.json").write_text(json.dumps(ids), encoding="ascii")
    version = ["--unicode", ours] if ours else []
    mine = ours or LATEST
    for extra in (["--split", d / "pieces.jsonl"], ["--encode", corpus, "--ids", d / "ids.json"]):
        argv = ["verify", corpus, "--against", d / "m.json", "--pattern", name, "--json"] + version + extra
        status, r = _cli_json(capsys, *argv)
        if not _tells_apart(text, theirs, mine):
            assert status == 0 and "cause" not in r
            continue
        if status == 0:  # this text's pieces (or ids) do not tell the two versions apart
            assert extra[0] == "--encode"
            continue
        assert r["cause"] == "unicode-version", extra[0]
        assert not _tells_apart(text, r["unicode"], theirs)
        changed = set(unicode_tables.changed_code_points(r["unicode"], mine))
        assert r["code_points"] and all(int(c[2:], 16) in changed for c in r["code_points"])
