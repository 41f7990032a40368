"""The README and docs/ stay true to the tree: the README opens with the code, every link and
anchor resolves, every path named exists, every option of every subcommand is in docs/cli.md,
every measured figure names the script or command that reproduces it, and every code block runs.

Docs that run: every fence names its language. A ```python, ```pycon, ```sh, ```bash or
```shell block is run, unless the line right before its fence is a marker with the reason,
``<!-- not run: needs a Rust trainer -->``. The runnable blocks of a page run in order in one
temporary directory (so a block may use what an earlier one wrote) holding small inputs made
here: ``corpus.txt`` and ``big.txt`` (the first 200 KB of the shared english_small corpus),
``more.txt`` (the next 100 KB), ``my_bpe.py`` (a trainer of yours: refbpe's own
``train_bpe``) and, for a page that verifies ``theirs/``, that trainer's model at vocab 1,000.
Python blocks run in one namespace per page, a block of ``>>>`` lines as a doctest; shell
blocks run under ``bash -e`` with ``refbpe`` and ``python`` meaning this interpreter and this
tree, and the tiktoken encodings read from the shared data (``support`` sets the variables).
A block that needs a peer library this interpreter lacks is skipped, saying so; without the
shared data the runs are skipped with the reason. Other languages (json, yaml, text, console
transcripts) are data."""

import doctest
import glob
import os
import re
import subprocess
import sys

import pytest
from support import REPO_ROOT, cli_env, corpus_path

import refbpe
from refbpe.cli import build_parser

README = os.path.join(REPO_ROOT, "README.md")
CHANGELOG = os.path.join(REPO_ROOT, "CHANGELOG.md")
DOCS = sorted(glob.glob(os.path.join(REPO_ROOT, "docs", "*.md")))
PAGES = [README, CHANGELOG] + DOCS

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_MEASURED = re.compile(r"\bmeasured\b", re.I)
_REPRODUCER = re.compile(r"perf/\w+\.py|python -m |tests/\w+\.py|refbpe \w+ ")
_PATH = re.compile(r"`((?:refbpe|perf|tests)/[\w/.]+\.py)`")


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _rel(path):
    return os.path.relpath(path, REPO_ROOT).replace(os.sep, "/")


def _slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(text):
    return {_slug(line.lstrip("#")) for line in _FENCE.sub("", text).splitlines() if line.startswith("#")}


def test_the_readme_opens_with_a_python_and_a_cli_example():
    lines = _read(README).splitlines()
    assert len(lines) <= 250
    first_screen = "\n".join(lines[:40])
    assert "```python\nimport refbpe" in first_screen
    assert "```sh\nrefbpe train " in first_screen


_HISTORY = re.compile(r"\b(since then|tried and not kept|tried and dropped|latest round|this round)\b", re.I)


@pytest.mark.parametrize("page", [README] + DOCS, ids=_rel)
def test_each_page_states_what_is_true_now(page):
    """What changed, the figures before and what was not kept belong in CHANGELOG.md."""
    assert _HISTORY.findall(_FENCE.sub("", _read(page))) == []


def test_the_performance_page_is_one_table_per_job():
    performance = _read(os.path.join(REPO_ROOT, "docs", "performance.md"))
    assert len(performance.splitlines()) <= 300
    for job in ("Training", "Counting", "Encoding", "Verify", "Certify", "SuperBPE", "Worst cases"):
        assert re.search(r"^## %s" % job, performance, re.M), job


def _section(text, heading):
    """The text under ``heading`` up to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = text.index("\n" + heading + "\n")
    end = re.search(r"^#{1,%d} " % len(level), text[start + len(heading) + 2 :], re.M)
    return text[start : start + len(heading) + 2 + end.start()] if end else text[start:]


def test_the_readme_figures_are_those_of_the_performance_tables():
    """Every time and ratio the README's Speed section gives is in performance.md's Training
    section, and every ratio it gives for SuperBPE is in the SuperBPE table."""
    readme = _read(README)
    performance = _read(os.path.join(REPO_ROOT, "docs", "performance.md"))
    figure = re.compile(r"\b\d+\.\d+(?: s|x)")
    speed = figure.findall(_section(readme, "## Speed"))
    assert speed and [f for f in speed if f not in _section(performance, "## Training")] == []
    claim = re.search(r"--profile superbpe --transition T`:[^)]*", readme).group(0)
    superbpe = re.findall(r"\d+\.\d+", claim)
    assert superbpe and [f for f in superbpe if f + "x" not in _section(performance, "## SuperBPE")] == []


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_link_and_anchor_resolves(page):
    text = _read(page)
    broken = []
    for target in _LINK.findall(_FENCE.sub("", text)):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(dest):
            broken.append(target)
        elif anchor and anchor not in _anchors(_read(dest)):
            broken.append(target)
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_path_named_exists(page):
    missing = [p for p in _PATH.findall(_read(page)) if not os.path.exists(os.path.join(REPO_ROOT, p))]
    assert missing == []


def test_every_option_of_every_subcommand_is_in_the_cli_page():
    cli = _read(os.path.join(REPO_ROOT, "docs", "cli.md"))
    commands = build_parser()._subparsers._group_actions[0].choices
    missing = []
    for name, sub in sorted(commands.items()):
        assert "refbpe %s " % name in cli, name
        for action in sub._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help" and option not in cli:
                    missing.append("%s %s" % (name, option))
    assert missing == []


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_measured_figure_names_the_script_that_reproduces_it(page):
    """A paragraph (or a table row) that says "measured" names a perf/ script, a test or a command."""
    bare = []
    for block in re.split(r"\n\s*\n", _FENCE.sub("", _read(page))):
        if _MEASURED.search(block) and not _REPRODUCER.search(block):
            bare.append(" ".join(block.split())[:120])
    assert bare == []


# -- docs that run ------------------------------------------------------------------------------

_BLOCK = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```", re.S | re.M)
_MARKER = re.compile(r"<!--\s*not run\b:?(.*?)-->")
_RUNS = {"python": "python", "pycon": "python", "sh": "sh", "bash": "sh", "shell": "sh"}
_DATA = {"json", "jsonl", "yaml", "toml", "text", "console"}
_EOT = "<|endoftext|>"
_LOADS_RANKS = re.compile(r"get_encoding\(|from_tiktoken\(")
_OPTIONAL = {"tiktoken", "tokenizers", "rustbpe", "numpy", "hypothesis"}
_SHELL_PRELUDE = 'refbpe() { "$PYTHON" -m refbpe "$@"; }\npython() { "$PYTHON" "$@"; }\n'


def _blocks(text):
    """(line, language, code, marker or None) of every fenced block, in order."""
    for m in _BLOCK.finditer(text):
        before = text[: m.start()].rstrip("\n").rpartition("\n")[2].strip()
        marker = _MARKER.fullmatch(before)
        yield text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2), marker


def _runnable(page):
    blocks = _blocks(_read(page))
    return [(line, _RUNS[lang], code) for line, lang, code, marker in blocks if lang in _RUNS and not marker]


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_code_block_runs_or_says_why_not(page):
    """Each fence names its language; a marker sits before a code block and gives its reason."""
    wrong = []
    for line, lang, _, marker in _blocks(_read(page)):
        if lang not in _RUNS and lang not in _DATA:
            wrong.append("line %d: a fence without a known language (%r)" % (line, lang))
        elif marker and lang not in _RUNS:
            wrong.append("line %d: a marker before a %s block, which never runs" % (line, lang))
        elif marker and len(marker.group(1).split()) < 2:
            wrong.append("line %d: a marker without its reason" % line)
    assert wrong == []


def _prepare_inputs(directory, page_text=""):
    with open(corpus_path("english_small.txt"), "rb") as f:
        head = f.read(300_000).decode("utf-8", "ignore")
    files = {
        "corpus.txt": head[:200_000],
        "big.txt": head[:200_000],
        "more.txt": head[200_000:],
        "my_bpe.py": "from refbpe import train_bpe  # noqa: F401\n",
    }
    for name, text in files.items():
        with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
            f.write(text)
    if "theirs/" in page_text:  # the model of "your" trainer that a page verifies
        vocab, merges = refbpe.train_bpe(os.path.join(directory, "corpus.txt"), 1000, [_EOT], workers=1)
        refbpe.write_model(os.path.join(directory, "theirs"), "gpt2", vocab, merges, [_EOT])


def _run_python(code, where, namespace):
    if code.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(code, namespace, where, where, 0)
        lines = []
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=lines.append, clear_globs=False)
        namespace.update(test.globs)  # a DocTest runs on a copy of the names it is given
        assert runner.failures == 0, "".join(lines)
    else:
        exec(compile(code, where, "exec"), namespace)


def _run_shell(code, where, directory):
    r = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", _SHELL_PRELUDE + code],
        cwd=directory,
        env=cli_env({"PYTHON": sys.executable}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=300,
    )
    assert r.returncode == 0, "%s exited %d:\n%s" % (where, r.returncode, r.stderr.decode(errors="replace"))


def _page_params():
    params = []
    for page in PAGES:
        blocks = _runnable(page)
        if blocks:
            # Past the quick run's 0.7 s: a shell block (a process per command, 0.3-1 s each) or
            # loading one of tiktoken's encodings by name (reading its ranks, 1-2 s on CPython).
            slow = any(lang == "sh" or _LOADS_RANKS.search(code) for _, lang, code in blocks)
            params.append(pytest.param(page, id=_rel(page), marks=[pytest.mark.slow] if slow else []))
    return params


@pytest.mark.parametrize("page", _page_params())
def test_the_code_blocks_of_each_page_run(page, tmp_path, monkeypatch):
    _prepare_inputs(str(tmp_path), _read(page))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace = {"__name__": "__doc_example__"}
    skipped = []
    for line, lang, code in _runnable(page):
        where = "%s:%d" % (_rel(page), line)
        if lang == "python":
            try:
                _run_python(code, where, namespace)
            except ImportError as e:
                if e.name not in _OPTIONAL:
                    raise
                skipped.append("%s needs %s, not installed for this interpreter" % (where, e.name))
        else:
            _run_shell(code, where, str(tmp_path))
    sys.modules.pop("my_bpe", None)
    if skipped:  # the other blocks of the page ran and passed
        pytest.skip("; ".join(skipped))
