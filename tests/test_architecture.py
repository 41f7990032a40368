"""The package's shape: no import cycle, the command line a layer on top, accurate ``__all__``.

The graph comes from ``tests/import_graph.py`` (``python tests/import_graph.py``
prints it).
"""

import ast
import importlib
import io
import re
import tokenize

import pytest
from import_graph import find_cycle, import_graph, modules

# Imports that stay inside functions on purpose: optional or generator-only dependencies.
OPTIONAL = {"regex", "distributed", "dask", "numpy"}


def test_no_import_cycle():
    assert find_cycle(import_graph()) is None


def test_find_cycle_finds_one():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]


def test_the_library_never_imports_the_command_line():
    for module, edges in import_graph().items():
        if module == "refbpe.cli" or module.startswith("refbpe.cli.") or module == "refbpe.__main__":
            continue
        assert not [e for e in edges if e == "refbpe.cli" or e.startswith("refbpe.cli.")], module


def test_cli_common_imports_nothing_else_of_the_command_line():
    edges = import_graph()["refbpe.cli.common"]
    assert not [e for e in edges if e.startswith("refbpe.cli")]


def _function_level_imports(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    found += [(fn.name, a.name) for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    found.append((fn.name, "." * node.level + (node.module or "")))
    return found


def test_imports_inside_functions_are_only_optional_dependencies():
    late = []
    for name, path in modules().items():
        for fn, target in _function_level_imports(path):
            if target.lstrip(".").split(".")[0] not in OPTIONAL:
                late.append("%s.%s imports %s" % (name, fn, target))
    assert late == []


@pytest.mark.parametrize("name", sorted(modules()))
def test_all_lists_only_existing_names(name):
    if name.endswith("__main__"):
        return
    module = importlib.import_module(name)
    for attr in getattr(module, "__all__", ()):
        assert hasattr(module, attr), "%s.__all__ names %s, which it lacks" % (name, attr)


def test_names_imported_between_modules_are_in_the_all_of_their_module():
    known = modules()
    missing = []
    for name, path in sorted(known.items()):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        package = path.endswith("__init__.py")
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.level or not node.module:
                continue
            base = name if package else name.rsplit(".", 1)[0]
            for _ in range(node.level - 1):
                base = base.rsplit(".", 1)[0]
            target = base + "." + node.module
            if target not in known:
                continue
            exported = getattr(importlib.import_module(target), "__all__", None)
            for alias in node.names:
                if (
                    exported is not None
                    and alias.name not in exported
                    and target + "." + alias.name not in known
                ):
                    missing.append("%s imports %s from %s" % (name, alias.name, target))
    assert missing == []


def _short_names(package_name):
    """The names of the modules (and subpackages) directly inside ``package_name``."""
    prefix = package_name + "."
    return sorted({m[len(prefix) :].split(".")[0] for m in modules() if m.startswith(prefix)} - {"__main__"})


@pytest.mark.parametrize("package", ["refbpe", "refbpe.cli", "refbpe.formats", "refbpe.verify"])
def test_each_package_docstring_names_its_modules(package):
    doc = importlib.import_module(package).__doc__
    missing = [m for m in _short_names(package) if "``%s``" % m not in doc and "%s.py" % m not in doc]
    assert missing == [], "%s's docstring does not name %s" % (package, missing)


def test_the_module_map_lists_every_module():
    import os

    with open(
        os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "modules.md")
    ) as f:
        readme = f.read()
    missing = []
    for path in sorted(modules().values()):
        rel = "refbpe/" + path.split("/refbpe/", 1)[1]
        if rel.endswith("__main__.py"):
            continue
        if "`%s`" % rel not in readme and "`%s`" % os.path.basename(rel) not in readme:
            missing.append(rel)
    assert missing == []


_MEASURED = re.compile(r"\bmeasured\b|\bprobe under\b", re.I)
_REPRODUCER = re.compile(r"perf/\w+\.py|python -m |tests/\w+\.py|refbpe \w+ ")


def _comment_blocks_and_docstring_paragraphs(path):
    with open(path, encoding="utf-8") as f:
        src = f.read()
    out, run, last = [], [], None
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            if run and tok.start[0] == last + 1:
                run.append(tok.string)
            else:
                if run:
                    out.append(" ".join(run))
                run = [tok.string]
            last = tok.start[0]
    if run:
        out.append(" ".join(run))
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.extend(re.split(r"\n\s*\n", doc))
    return out


def test_every_measured_figure_names_the_script_that_reproduces_it():
    """A comment block or docstring paragraph that says "measured" names a perf/ script or a command."""
    bare = []
    for name, path in sorted(modules().items()):
        if name.endswith("_unicode_table"):
            continue
        for text in _comment_blocks_and_docstring_paragraphs(path):
            if _MEASURED.search(text) and not _REPRODUCER.search(text):
                bare.append("%s: %s" % (name, " ".join(text.split())[:120]))
    assert bare == []
