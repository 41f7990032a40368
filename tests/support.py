"""What the tests share: Hypothesis profiles, shared-data paths, the CLI runners, process readers,
input writers and checks, shared process pools and tokenizers, text strategies.

Test modules import from here (``from support import ...``); ``conftest.py``
holds the pytest fixtures and the markers.  Where the shared data is comes from
``shared_data`` (this directory's ``shared_data.py``), which ``perf/harness.py`` reads too (the benchmarks
and the tests look in the same places).

Hypothesis profiles: ``default`` (modest example counts, used by ``pytest -n auto``)
and ``heavy`` (10x), selected with ``REFBPE_HYPOTHESIS_PROFILE=heavy``.  Tests scale
their own ``max_examples`` with ``examples(n)``.

Shared data (read-only, never copied into the repository) is found through
``REFBPE_SHARED`` or ``<repo root>/../shared`` (``REFBPE_DATA`` for its ``data/``); tests
that need it skip when absent.
"""

import contextlib
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from processes import proc_stat, processes, session_processes  # noqa: F401 (the suite imports them from here)
from shared_data import DATA, TIKTOKEN_CACHE, shared_root  # noqa: F401 (tests import shared_root)

from refbpe.learn import candidates, inherited
from refbpe.testing.atoms import (  # noqa: F401 (the suite imports them from here)
    COMBINING,
    CONTRACTIONS,
    CONTRACTIONS_ANY_CASE,
    DIGITS,
    EMOJI,
    MARKS,
    NEWLINE_RUNS,
    NOT_WHITESPACE_BUT_ISSPACE,
    NUMBERS,
    PREFIXES,
    PUNCT,
    PUNCT_NEWLINE,
    SOUP,
    WHITESPACE,
    WORDS,
    WORDS_ANY_CASE,
)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IS_PYPY = platform.python_implementation() == "PyPy"

_PROFILE = os.environ.get("REFBPE_HYPOTHESIS_PROFILE", "default")
HEAVY = _PROFILE == "heavy"
_SCALE = 10 if HEAVY else 1

for _name, _scale in (("default", 1), ("heavy", 10)):
    settings.register_profile(
        _name,
        max_examples=100 * _scale,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
        print_blob=True,
    )
settings.load_profile(_PROFILE)


def examples(n):
    """``n`` examples under the default profile, ``10 * n`` under ``heavy``."""
    return n * _SCALE


# -- shared data ---------------------------------------------------------------


def _encodings_from_shared_data():
    """Named encodings (``cl100k_base``, ``gpt2``, ...) come from the shared data, never
    the network: ``REFBPE_TIKTOKEN_DIR`` holds the ranks files, ``TIKTOKEN_CACHE_DIR``
    gpt2's (a tiktoken cache), and a mirror that does not exist stops any download.
    Subprocesses inherit them."""
    os.environ.setdefault("REFBPE_TIKTOKEN_DIR", os.path.dirname(TIKTOKEN_CACHE))
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", TIKTOKEN_CACHE)
    os.environ.setdefault("REFBPE_TIKTOKEN_MIRROR", "file:///nonexistent/refbpe-test-mirror")


_encodings_from_shared_data()


def shared_data_path(*parts):
    """Path under shared/data, or a pytest skip naming what is missing."""
    path = os.path.join(DATA, *parts)
    if not os.path.exists(path):
        pytest.skip("shared data not found: %s (set REFBPE_SHARED to the shared/ directory)" % path)
    return path


def cs336_path(*parts):
    return shared_data_path("cs336", *parts)


def corpus_path(name):
    return shared_data_path("corpora", name)


# -- running the command line ---------------------------------------------------


def run_main(capsys, *argv):
    """The command line in this process: (exit status, stdout, stderr)."""
    from refbpe.cli import main

    try:
        status = main([str(a) for a in argv])
    except SystemExit as e:  # argparse: --help, usage errors
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def cli_env(env=None):
    """This environment with this tree first on ``PYTHONPATH`` (and ``env`` added)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = REPO_ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    return full_env


def run_cli(args, python=None, input=None, env=None, cwd=None):
    """``python -m refbpe ARGS`` in a child process (completed, stdout and stderr as bytes)."""
    return subprocess.run(
        [python or sys.executable, "-m", "refbpe"] + [str(a) for a in args],
        input=input,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(env),
        cwd=cwd,
        timeout=300,
    )


def start_train(corpus, out, *extra, stdout=subprocess.PIPE):
    """``refbpe train CORPUS --out OUT --progress EXTRA`` started in a new session, so that its
    whole process tree can be found (``session_processes(proc.pid)``); stderr is a pipe."""
    args = [sys.executable, "-m", "refbpe", "train", corpus, "--out", out, "--progress"] + list(extra)
    return subprocess.Popen(
        args,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=REPO_ROOT),
        start_new_session=True,
    )


def assert_one_line_error(status, err, pattern):
    """Bad input: exit status 2 and one line of stderr matching ``pattern``, no traceback."""
    assert status == 2, err
    assert err.endswith("\n") and err.count("\n") == 1, "not one line: %r" % err
    assert err[:-1].isprintable(), "not printable: %r" % err
    assert "Traceback" not in err
    assert re.match(pattern, err), "%r does not match %r" % (err, pattern)


def write_file(path, data):
    """Write ``data`` (bytes, or str as UTF-8) to ``path``; the path as str."""
    with open(str(path), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(path)


def digests(directory, names):
    """``{name: sha256}`` of the files ``names`` in ``directory``."""
    out = {}
    for name in names:
        with open(os.path.join(str(directory), name), "rb") as f:
            out[name] = hashlib.sha256(f.read()).hexdigest()
    return out


def read_outputs(directory):
    return {
        name: open(os.path.join(directory, name), "rb").read()
        for name in ("vocab.json", "merges.txt", "refbpe.json")
    }


def interpreter_candidates(name):
    """Where the ``name`` interpreter ("cpython" or "pypy") is looked for, in order: ``REFBPE_CPYTHON``
    / ``REFBPE_PYPY``, the repository's ``.venv`` / ``.venv-pypy``, ``pypy3`` on the PATH (the
    places ``perf/harness.py`` looks)."""
    found = [os.environ.get("REFBPE_" + name.upper())]
    found.append(os.path.join(REPO_ROOT, {"cpython": ".venv", "pypy": ".venv-pypy"}[name], "bin", "python"))
    if name == "pypy":
        found.append(shutil.which("pypy3"))
    return [exe for exe in found if exe]


def other_interpreter():
    """A second interpreter (PyPy from CPython, CPython from PyPy) that can import this refbpe."""
    for exe in interpreter_candidates("cpython" if IS_PYPY else "pypy"):
        if not os.path.exists(exe):
            continue
        if _imports_this_refbpe(exe, dict(os.environ, PYTHONPATH=REPO_ROOT)):
            return exe
    return None


_TARGET_PYTHON = []


def target_python():
    """The interpreter of the programs the fuzz and conformance tests run as their trainers and
    encoders (``planted_trainers.py`` and the like): under PyPy, a CPython that imports this
    refbpe as it is (``interpreter_candidates``) when there is one, else this interpreter.
    The system under test (``refbpe fuzz``, ``conformance``) still runs here; its targets are
    programs of any language.  A PyPy target starts in 0.22 s against CPython's 0.12 s, and a
    fuzz run starts hundreds: under PyPy the seed test took 57 CPU s with PyPy targets, 28 s
    with CPython ones (``time pytest tests/test_fuzz.py -k same_seed``)."""
    if not _TARGET_PYTHON:
        found = sys.executable
        if IS_PYPY:
            for exe in interpreter_candidates("cpython"):
                if os.path.exists(exe) and _imports_this_refbpe(exe):
                    found = exe
                    break
        _TARGET_PYTHON.append(found)
    return _TARGET_PYTHON[0]


def _imports_this_refbpe(exe, env=None):
    """Whether ``exe`` (with ``env``, by default this process's) imports this checkout's refbpe."""
    r = subprocess.run(
        [exe, "-c", "import refbpe, os; print(os.path.dirname(refbpe.__file__))"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        timeout=60,
    )
    where = os.path.realpath(r.stdout.decode().strip())
    return r.returncode == 0 and where == os.path.realpath(os.path.join(REPO_ROOT, "refbpe"))


# -- counting, pools and tokenizers shared by several modules -------------------


def whole_count(texts, specials):
    """The counts of each text (bytes) counted whole (split on ``specials``), added up."""
    from refbpe.pretokenize.patterns import get_pattern
    from refbpe.specials import special_pattern, split_specials

    count_pretokens = get_pattern("gpt2").count_pretokens
    counts = {}
    pattern = special_pattern(specials, as_bytes=True)
    for data in texts:
        for seg, is_special in split_specials(data, pattern):
            if not is_special:
                count_pretokens(seg, counts)
    return counts


_EXECUTORS = {}


def executor_for(workers):
    """Shared process pools (a fresh pool per Hypothesis example would dominate the run time);
    ``conftest.py`` shuts them down after each module."""
    from refbpe.corpus.pool import make_executor

    if workers not in _EXECUTORS:
        _EXECUTORS[workers] = make_executor(workers)
    return _EXECUTORS[workers]


def shutdown_executors():
    for ex in _EXECUTORS.values():
        ex.shutdown(wait=True)
    _EXECUTORS.clear()


_GPT2 = {}


def gpt2_tokenizer(special_tokens=("<|endoftext|>",)):
    """The GPT-2 tokenizer of the shared CS336 files (with ``special_tokens``), loaded once."""
    from refbpe.encode.tokenizer import Tokenizer

    key = tuple(special_tokens)
    if key not in _GPT2:
        files = (cs336_path("gpt2_vocab.json"), cs336_path("gpt2_merges.txt"))
        _GPT2[key] = Tokenizer.from_files(*files, list(special_tokens))
    return _GPT2[key]


# -- optional modules ------------------------------------------------------------


REPLAY_ROUTES = st.sampled_from(["words", "pieces", "pieces, few candidates"])


@contextlib.contextmanager
def replay_route(route):
    """Inherited merges replayed on the words where they are (``"words"``) or on their
    pieces (``"pieces"``, ``inherited.replay_in_pieces``), whatever the words' length;
    ``"pieces, few candidates"`` also tables as few pairs as it may at first
    (``candidates.count_candidate_pairs``), so that the rest is tabled later."""
    old = inherited._LONG_WORD, candidates._CANDIDATES, candidates._CANDIDATES_PER_MERGE
    inherited._LONG_WORD = 10**18 if route == "words" else 0
    if route == "pieces, few candidates":
        candidates._CANDIDATES, candidates._CANDIDATES_PER_MERGE = 0, 1
    try:
        yield
    finally:
        inherited._LONG_WORD, candidates._CANDIDATES, candidates._CANDIDATES_PER_MERGE = old


def import_regex_or_skip():
    """The ``regex`` module, for exact comparisons: CPython only."""
    if IS_PYPY:
        pytest.skip(
            "regex comparisons run on CPython only (regex's Unicode classes are only ASCII-correct on PyPy)"
        )
    try:
        import regex
    except ImportError:
        pytest.skip("the regex module is not importable on this interpreter")
    return regex


def _regex_skip_reason():
    if IS_PYPY:
        return (
            "regex comparisons run on CPython only (regex's Unicode classes are only ASCII-correct on PyPy)"
        )
    try:
        import regex  # noqa: F401
    except ImportError:
        return "the regex module is not importable on this interpreter"
    return None


REGEX_SKIP_REASON = _regex_skip_reason()
needs_regex = pytest.mark.skipif(REGEX_SKIP_REASON is not None, reason=REGEX_SKIP_REASON or "")


def regex_declared_unicode_version():
    """The Unicode version regex's own metadata declares ("supports Unicode X"), or None."""
    try:
        import re
        from importlib.metadata import distribution

        text = distribution("regex").read_text("METADATA") or ""
    except Exception:
        return None
    m = re.search(r"supports Unicode (\d+\.\d+\.\d+)", text)
    return m.group(1) if m else None


def regex_unicode_versions():
    """Every Unicode version the installed regex can be said to implement:
    refbpe's probe and regex's declared version (when the metadata says)."""
    from refbpe.pretokenize._gen_unicode_table import regex_unicode_version

    versions = {regex_unicode_version()}
    declared = regex_declared_unicode_version()
    if declared:
        versions.add(declared)
    return versions


def regex_version_mismatch():
    """A skip reason when regex's Unicode version is not the pinned table's, else None."""
    from refbpe.pretokenize._unicode_table import UNICODE_VERSION

    versions = regex_unicode_versions()
    if versions != {UNICODE_VERSION}:
        return "regex implements Unicode %s but refbpe/_unicode_table.py is pinned to Unicode %s" % (
            "/".join(sorted(v or "?" for v in versions)),
            UNICODE_VERSION,
        )
    return None


# -- text strategies -----------------------------------------------------------------

ws_run = st.lists(
    st.sampled_from(WHITESPACE + NOT_WHITESPACE_BUT_ISSPACE + [" ", " ", "\n", "\t"]), min_size=1, max_size=5
).map("".join)

wide_char = st.characters(blacklist_categories=("Cs",))  # every plane, incl. astral and unassigned
bmp_char = st.characters(max_codepoint=0xFFFF, blacklist_categories=("Cs",))


def text_atoms(extra=()):
    """Pieces of text that exercise the GPT-2 pattern's corners."""
    return st.one_of(
        st.sampled_from(WORDS),
        st.sampled_from(CONTRACTIONS),
        st.text(st.sampled_from(DIGITS), min_size=1, max_size=4),
        st.sampled_from(EMOJI),
        st.sampled_from(COMBINING),
        st.sampled_from(PUNCT),
        ws_run,
        st.text(wide_char, min_size=1, max_size=4),
        st.text(bmp_char, min_size=1, max_size=4),
        *[st.just(e) for e in extra],
    )


def mixed_text(max_atoms=25, extra=()):
    """Random text assembled from ``text_atoms`` (whitespace runs at both ends too)."""
    return st.lists(text_atoms(extra), max_size=max_atoms).map("".join)


def repeated_text(extra=()):
    """Few short words repeated many times: forces ties between pair counts."""
    vocab = st.lists(
        st.text(st.sampled_from("abcab \n\u00e9\u4e2d'st"), min_size=1, max_size=5), min_size=1, max_size=4
    )
    return st.tuples(
        vocab,
        st.lists(st.integers(0, 3), max_size=40),
        st.lists(st.sampled_from(list(extra) or [""]), max_size=3),
    ).map(
        lambda t: "".join(
            t[0][i % len(t[0])] + (t[2][i % len(t[2])] if t[2] and i % 3 == 0 else "") for i in t[1]
        )
    )


SPACE_RUNS = st.lists(st.sampled_from(WHITESPACE + [" ", " ", "\n", "\r", "\t"]), min_size=1, max_size=5).map(
    "".join
)


def edge_atoms():
    return st.one_of(
        st.sampled_from(WORDS_ANY_CASE),
        st.sampled_from(CONTRACTIONS_ANY_CASE),
        st.sampled_from(MARKS),
        st.text(st.sampled_from(NUMBERS), min_size=1, max_size=5),  # digit runs of 1-5
        st.text(st.sampled_from("0123456789"), min_size=1, max_size=5),
        st.sampled_from(PREFIXES),
        st.sampled_from(PUNCT_NEWLINE),
        st.sampled_from(NEWLINE_RUNS),
        SPACE_RUNS,
        st.sampled_from(EMOJI),
        st.text(wide_char, min_size=1, max_size=3),
    )


def edge_text(max_atoms=12):
    """Atoms joined; lists end (and start) anywhere, so runs at the end of the text come up often."""
    return st.lists(edge_atoms(), max_size=max_atoms).map("".join)


soup_text = st.lists(st.sampled_from(SOUP), max_size=14).map("".join)
