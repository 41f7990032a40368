"""Named encodings on a fresh machine: found in tiktoken's cache or refbpe's, fetched
once and checked by sha256, a one-line error offline; and the table of names is
tiktoken's own (addresses, hashes, patterns, special tokens).

Every test runs with a temporary HOME, temporary directory and cache, and the
variables that say where encodings are unset (``fresh_machine``), unless it
sets them itself.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import pytest
from support import IS_PYPY, REPO_ROOT, shared_data_path

import refbpe
import refbpe.encodings.cache as cache
from refbpe.encodings.registry import KNOWN_ENCODINGS, encoding_files, load_tiktoken, ranks_path

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
_VARIABLES = (
    "REFBPE_TIKTOKEN_DIR",
    "REFBPE_TIKTOKEN_MIRROR",
    "REFBPE_CACHE_DIR",
    "TIKTOKEN_CACHE_DIR",
    "DATA_GYM_CACHE_DIR",
    "XDG_CACHE_HOME",
)


@pytest.fixture
def fresh_machine(tmp_path, monkeypatch):
    """A HOME and temporary directory of its own, none of the variables set; the
    environment a subprocess gets (offline: the mirror does not exist)."""
    for var in _VARIABLES:
        monkeypatch.delenv(var, raising=False)
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    env = {k: v for k, v in os.environ.items() if k not in _VARIABLES}
    env["PYTHONPATH"] = REPO_ROOT
    env["REFBPE_TIKTOKEN_MIRROR"] = (tmp_path / "no-mirror").as_uri()
    return {"home": home, "tmp": tmp, "env": env}


def _cli(env, *args):
    return subprocess.run(
        [sys.executable, "-m", "refbpe"] + [str(a) for a in args],
        capture_output=True,
        env=env,
        timeout=300,
    )


def _cl100k_bytes():
    with open(shared_data_path("tiktoken", "cl100k_base.tiktoken"), "rb") as f:
        return f.read()


def _refbpe_cache(fresh):
    return fresh["home"] / ".cache" / "refbpe"


def test_a_name_resolves_from_tiktokens_default_cache(fresh_machine):
    # tiktoken's default cache: <temporary directory>/data-gym-cache/<sha1 of the address>
    cached = fresh_machine["tmp"] / "data-gym-cache" / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    cached.parent.mkdir()
    cached.write_bytes(_cl100k_bytes())
    assert ranks_path("cl100k_base") == str(cached)
    text = fresh_machine["tmp"] / "t.txt"
    text.write_text("hello world<|endoftext|>")
    out = fresh_machine["tmp"] / "ids.npy"
    r = _cli(fresh_machine["env"], "encode", "cl100k_base", text, "-o", out, "--quiet")
    assert r.returncode == 0, r.stderr
    assert out.exists() and not _refbpe_cache(fresh_machine).exists()


def test_a_name_resolves_from_tiktoken_cache_dir_and_the_documented_variable(fresh_machine, monkeypatch):
    cache_dir = fresh_machine["tmp"] / "tk"
    cache_dir.mkdir()
    (cache_dir / hashlib.sha1(CL100K_URL.encode()).hexdigest()).write_bytes(_cl100k_bytes())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache_dir))
    assert os.path.dirname(ranks_path("cl100k_base")) == str(cache_dir)
    mine = fresh_machine["tmp"] / "mine"
    mine.mkdir()
    (mine / "cl100k_base.tiktoken").write_bytes(_cl100k_bytes())
    monkeypatch.setenv("REFBPE_TIKTOKEN_DIR", str(mine))
    assert ranks_path("cl100k_base") == str(mine / "cl100k_base.tiktoken")  # the variable comes first


def test_gpt2_by_name_is_the_gpt2_files(fresh_machine, monkeypatch, gpt2_files):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", shared_data_path("tiktoken", "cache"))
    assert sorted(encoding_files("gpt2")) == ["merges", "vocab"]
    with pytest.raises(ValueError, match="no .tiktoken ranks file"):
        ranks_path("gpt2")
    named = refbpe.Tokenizer.from_tiktoken("gpt2")
    vocab, merges = refbpe.formats.read_gpt2(*gpt2_files)
    plain = refbpe.Tokenizer(vocab, merges, ["<|endoftext|>"])
    text = "Hello, world! It's 2026.<|endoftext|>  \n\tnew  document"
    assert named.encode(text) == plain.encode(text)
    assert named.encode("hello world") == [31373, 995]  # tiktoken's ids


def test_a_corrupted_cached_file_is_rejected_by_its_hash(fresh_machine, monkeypatch):
    cache_dir = fresh_machine["tmp"] / "data-gym-cache"
    cache_dir.mkdir()
    corrupt = cache_dir / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    data = bytearray(_cl100k_bytes())
    data[1000] ^= 1
    corrupt.write_bytes(bytes(data))
    monkeypatch.setattr(cache, "fetch", _fail_fetch)
    with pytest.raises(cache.FileUnavailable, match="sha256 differs") as e:
        ranks_path("cl100k_base")
    assert str(corrupt) in str(e.value) and "\n" not in str(e.value)
    good = _refbpe_cache(fresh_machine)
    good.mkdir(parents=True)
    (good / corrupt.name).write_bytes(_cl100k_bytes())
    assert ranks_path("cl100k_base") == str(good / corrupt.name)  # passed over the bad copy


def _fail_fetch(url):
    raise OSError("no network in this test")


def test_offline_the_error_is_one_line_and_exit_2(fresh_machine):
    text = fresh_machine["tmp"] / "t.txt"
    text.write_text("hello")
    for args in (
        ["encode", "r50k_base", text, "-o", fresh_machine["tmp"] / "ids.npy"],
        ["show", "o200k_base", "hello"],
        ["verify", text, "--vocab-size", "300", "--against", "p50k_base"],
    ):
        r = _cli(fresh_machine["env"], *args)
        err = r.stderr.decode()
        assert r.returncode == 2, err
        assert err.count("\n") == 1 and err.startswith("refbpe: error: "), err
        assert "REFBPE_TIKTOKEN_DIR" in err and "tiktoken's cache" in err and "refbpe's cache" in err
    assert not (fresh_machine["tmp"] / "ids.npy").exists()


def test_a_download_is_checked_and_cached_atomically(fresh_machine, monkeypatch, capsys):
    fetched = []

    def fake_fetch(url):
        fetched.append(url)
        return _cl100k_bytes()

    monkeypatch.setattr(cache, "fetch", fake_fetch)
    path = ranks_path("cl100k_base")
    assert fetched == [CL100K_URL]  # tiktoken's public address
    cache_dir = _refbpe_cache(fresh_machine)
    assert path == str(cache_dir / hashlib.sha1(CL100K_URL.encode()).hexdigest())
    assert os.listdir(str(cache_dir)) == [os.path.basename(path)]  # no temporary file left
    assert "downloaded %s" % CL100K_URL in capsys.readouterr().err
    assert ranks_path("cl100k_base") == path and len(fetched) == 1  # once


def test_a_download_with_the_wrong_hash_is_not_cached(fresh_machine, monkeypatch):
    monkeypatch.setenv("REFBPE_CACHE_DIR", str(fresh_machine["tmp"] / "c"))
    monkeypatch.setattr(cache, "fetch", lambda url: _cl100k_bytes()[:-10])
    with pytest.raises(cache.FileUnavailable, match="expected 223921b7"):
        ranks_path("cl100k_base")
    assert not (fresh_machine["tmp"] / "c").exists() or not os.listdir(str(fresh_machine["tmp"] / "c"))


def test_a_download_from_a_mirror_on_the_command_line(fresh_machine, tmp_path):
    mirror = tmp_path / "mirror" / "encodings"
    mirror.mkdir(parents=True)
    shutil.copy(shared_data_path("tiktoken", "cl100k_base.tiktoken"), str(mirror))
    env = dict(fresh_machine["env"], REFBPE_TIKTOKEN_MIRROR=(tmp_path / "mirror").as_uri())
    r = _cli(env, "show", "cl100k_base", "hello")
    assert r.returncode == 0, r.stderr
    assert b"downloaded" in r.stderr and b"sha256 checked" in r.stderr
    cached = _refbpe_cache(fresh_machine) / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    assert cached.read_bytes() == _cl100k_bytes()
    r = _cli(env, "show", "cl100k_base", "hello")
    assert r.returncode == 0 and b"downloaded" not in r.stderr  # found in the cache now


def test_the_table_is_tiktokens(monkeypatch):
    # tiktoken's constructors, with its loaders replaced by recorders: every name,
    # address, hash, pattern and special token of refbpe's table is tiktoken's.
    if IS_PYPY:
        pytest.skip("tiktoken is not installed for PyPy")
    public = pytest.importorskip("tiktoken_ext.openai_public")
    from refbpe.pretokenize.patterns import get_pattern

    seen = {}
    monkeypatch.setattr(
        public, "load_tiktoken_bpe", lambda url, expected_hash: seen.update(ranks=(url, expected_hash))
    )

    def data_gym(vocab_bpe_file, encoder_json_file, vocab_bpe_hash, encoder_json_hash):
        seen.update(merges=(vocab_bpe_file, vocab_bpe_hash), vocab=(encoder_json_file, encoder_json_hash))

    monkeypatch.setattr(public, "data_gym_to_mergeable_bpe_ranks", data_gym)
    assert sorted(KNOWN_ENCODINGS) == sorted(public.ENCODING_CONSTRUCTORS)
    for name, make in public.ENCODING_CONSTRUCTORS.items():
        seen.clear()
        spec = make()
        ours = KNOWN_ENCODINGS[name]
        assert ours["special_tokens"] == spec["special_tokens"], name
        files = {role: (cache.TIKTOKEN_HOST + where, sha) for role, (where, sha) in ours["files"].items()}
        assert files == seen, name
        pattern = get_pattern(ours["pattern"]).regex
        gpt2_equivalent = spec["pat_str"] == public.r50k_pat_str and ours["pattern"] == "gpt2"
        assert pattern == spec["pat_str"] or gpt2_equivalent, name


def test_load_tiktoken_by_name_gives_ranks_pattern_and_specials():
    vocab, merges, specials, pattern = load_tiktoken("cl100k_base")
    assert pattern == "cl100k_base@16.0.0" and specials["<|endoftext|>"] == 100257  # tiktoken's Unicode
    assert vocab[100257] == b"<|endoftext|>" and len(merges) == 100256 - 256


def test_the_package_holds_no_path_to_the_shared_data():
    root = os.path.dirname(refbpe.__file__)
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    text = f.read()
                for needle in (
                    "REFBPE_SHARED",
                    "../shared",
                    "'shared'",
                    '"shared"',
                    "shared/data",
                    "shared/",
                ):
                    assert needle not in text, (name, needle)
