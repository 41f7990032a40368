"""The README and docs/ stay true to the tree: the README opens with the code, every link and
anchor resolves, every path named exists, every option of every subcommand is in docs/cli.md,
and every measured figure names the script or command that reproduces it."""

import glob
import os
import re

import pytest
from support import REPO_ROOT

from refbpe.cli import build_parser

README = os.path.join(REPO_ROOT, "README.md")
DOCS = sorted(glob.glob(os.path.join(REPO_ROOT, "docs", "*.md")))
PAGES = [README] + DOCS

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
