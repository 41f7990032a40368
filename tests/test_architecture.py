"""The package's shape: no import cycle, the command line a layer on top, accurate ``__all__``,
one idea per module name, and a public API that is documented, annotated and exemplified.

The graph comes from ``tests/import_graph.py`` (``python tests/import_graph.py``
prints it).
"""

import ast
import glob
import importlib
import inspect
import io
import os
import re
import tokenize

import pytest
from import_graph import find_cycle, import_graph, modules
from support import IS_PYPY

# What these check is the source (its imports, names, sizes and docstrings), the same on every
# interpreter: the CPython half of the suite runs them (18 s of the PyPy half's test time).
pytestmark = pytest.mark.skipif(IS_PYPY, reason="source-level checks: the CPython run holds them")

# Imports that stay inside functions on purpose: optional or generator-only dependencies.
OPTIONAL = {"regex", "distributed", "dask", "numpy", "hypothesis"}


def test_no_import_cycle():
    assert find_cycle(import_graph()) is None


def _with_packages(graph):
    """``graph`` with an edge to each package an import runs the ``__init__`` of: ``from
    .formats.model import X`` in ``refbpe.learn.extend`` runs ``refbpe.formats`` first (its own
    packages are running already).  Not ``refbpe``: it imports its names on first use."""
    out = {}
    for module, edges in graph.items():
        own = _packages_of(module)
        found = set(edges)
        for target in edges:
            found |= {p for p in _packages_of(target) if p in graph and p not in own and p != "refbpe"}
        found.discard(module)
        out[module] = sorted(found)
    return out


def _packages_of(name):
    parts = name.split(".")
    return {".".join(parts[:k]) for k in range(1, len(parts))}


def test_no_import_cycle_through_a_package():
    """With the package importing nothing up front, any module may be the first imported:
    a cycle through a subpackage's ``__init__`` (train -> extend -> formats -> hexjson ->
    train, once) would fail there."""
    assert find_cycle(_with_packages(import_graph())) is None


def test_with_packages_adds_the_package_an_import_runs():
    """a takes p.m, so runs p, which takes p.n, which takes a: a cycle no module's own imports show."""
    graph = {
        "refbpe.a": ["refbpe.p.m"],
        "refbpe.p": ["refbpe.p.n"],
        "refbpe.p.m": [],
        "refbpe.p.n": ["refbpe.a"],
    }
    assert _with_packages(graph)["refbpe.a"] == ["refbpe.p", "refbpe.p.m"]
    assert _with_packages(graph)["refbpe.p.n"] == ["refbpe.a"]  # p is its own package: running already
    assert find_cycle(graph) is None and find_cycle(_with_packages(graph)) is not None


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
_REPRODUCER = re.compile(r"perf/(?:experiments/)?\w+\.py|python -m |tests/\w+\.py|refbpe \w+ ")


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


def test_no_two_modules_share_a_file_name_for_two_ideas():
    """A file name means one thing in the tree.  The one exception: a command-line module is named
    after its subcommand (``refbpe count`` is ``cli/count.py``), and may share that name with the
    library module it fronts (``corpus/count.py``), which it must import: one idea, two layers."""
    import refbpe.cli.commands

    subcommands = {m.__name__.rsplit(".", 1)[1] for m in refbpe.cli.commands.SUBCOMMANDS}
    graph = import_graph()
    by_file = {}
    for name, path in modules().items():
        if os.path.basename(path) not in ("__init__.py", "__main__.py"):
            by_file.setdefault(os.path.basename(path), []).append(name)
    clashes = []
    for file_name, names in sorted(by_file.items()):
        library = [n for n in names if not n.startswith("refbpe.cli.")]
        cli = [n for n in names if n.startswith("refbpe.cli.")]
        fronting = (
            len(library) == 1
            and file_name[: -len(".py")] in subcommands
            and all(library[0] in graph[c] for c in cli)
        )
        if len(names) > 1 and not fronting:
            clashes.append(names)
    assert clashes == []


def _documentation():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    texts = []
    for path in [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    return "\n".join(texts)


def test_every_public_name_is_documented():
    """Each name of ``refbpe.__all__`` appears, as code, in README.md or a page under docs/."""
    import refbpe

    docs = _documentation()
    assert [n for n in refbpe.__all__ if "`%s`" % n not in docs and "`%s(" % n not in docs] == []


def _public_functions():
    """(qualified name, function) for the functions and classes of ``refbpe.__all__``: a
    class's ``__init__`` and its public methods."""
    import refbpe

    out = []
    for name in refbpe.__all__:
        obj = getattr(refbpe, name)
        if inspect.isfunction(obj):
            out.append((name, obj))
        elif inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if inspect.isfunction(member):
                    out.append(("%s.%s" % (name, attr), member))
    return out


def test_every_public_function_is_annotated_with_keyword_only_options():
    bare = []
    for qualname, function in _public_functions():
        signature = inspect.signature(function)
        for p in signature.parameters.values():
            if p.kind == p.VAR_KEYWORD:
                bare.append("%s takes **%s: options are named, keyword-only parameters" % (qualname, p.name))
            elif p.annotation is p.empty and p.name not in ("self", "cls"):
                bare.append("%s: %s has no annotation" % (qualname, p.name))
        if signature.return_annotation is signature.empty:
            bare.append("%s has no return annotation" % qualname)
    assert bare == []


def test_every_public_function_and_class_has_an_example_and_its_cost():
    """The docstring of each function and class of ``refbpe.__all__`` holds a ``>>>`` example
    (``tests/test_api.py`` runs them) and the cost, as big-O."""
    import refbpe

    missing = []
    for name in refbpe.__all__:
        obj = getattr(refbpe, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            doc = obj.__doc__ or ""
            if ">>> " not in doc:
                missing.append("%s: no example" % name)
            if "O(" not in doc:
                missing.append("%s: no cost" % name)
    assert missing == []


def _imported_from(tree, current, is_package, known):
    """{module alias: refbpe module} and {refbpe module: names taken from it} of one parsed file."""
    aliases, taken = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update((a.asname or a.name, a.name) for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            target = node.module
            if node.level:
                base = current if is_package else current.rsplit(".", 1)[0]
                for _ in range(node.level - 1):
                    base = base.rsplit(".", 1)[0]
                target = base + "." + node.module if node.module else base
            if target not in known:
                continue
            for a in node.names:
                if target + "." + a.name in known:
                    aliases[a.asname or a.name] = target + "." + a.name
                else:
                    taken.setdefault(target, set()).add(a.name)
    return aliases, taken


def _names_used_from_outside():
    """{refbpe module: the names that another module, a test or a perf script takes from it},
    by ``from M import name`` or ``M.name`` on an imported module."""
    known = modules()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = {path: name for name, path in known.items()}
    for folder in ("tests", "perf"):
        for d, _, names in os.walk(os.path.join(root, folder)):
            files.update((os.path.join(d, f), None) for f in names if f.endswith(".py"))
    used = {}
    for path, current in files.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        aliases, taken = _imported_from(tree, current, path.endswith("__init__.py"), known)
        for module, names in taken.items():
            used.setdefault(module, set()).update(names)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) in aliases:
                used.setdefault(aliases[node.value.id], set()).add(node.attr)
    return used


_SUBCOMMAND_INTERFACE = ("HELP", "DESCRIPTION", "add_arguments", "run")


def test_all_lists_only_what_is_used_outside_the_module():
    """``__all__`` is a module's interface: a name nothing else takes is internal.  Exempt: the
    package's own ``__all__`` (the public API, for users), the ``HELP``, ``DESCRIPTION``,
    ``add_arguments`` and ``run`` of each subcommand module (``cli.commands.SUBCOMMANDS`` takes
    them) and ``cli.commands``' own ``build_parser``/``main`` (``cli/__init__.py`` imports that
    module on first use)."""
    import refbpe.cli.commands

    used = _names_used_from_outside()
    exempt = {m.__name__ + "." + f for m in refbpe.cli.commands.SUBCOMMANDS for f in _SUBCOMMAND_INTERFACE}
    exempt |= {"refbpe.cli.commands.build_parser", "refbpe.cli.commands.main"}
    unused = []
    for name in sorted(modules()):
        if name in ("refbpe", "refbpe.__main__"):
            continue
        for attr in getattr(importlib.import_module(name), "__all__", ()):
            if attr not in used.get(name, ()) and name + "." + attr not in exempt:
                unused.append("%s.%s" % (name, attr))
    assert unused == []


# What only ``refbpe.loader`` (``read_model``) and ``Tokenizer.load`` may decide: whether a
# source is an encoding name, which format a file is, how a format's file is read.
_SOURCE_DECIDERS = {"detect_format", "is_encoding_name", "from_tiktoken", "load_tiktoken", "load_encoding"}
_NOT_MODEL_FORMATS = {"refbpe.formats.trace"}  # training traces: not a model source


def _source_decisions(path, current):
    """The names ``path`` (module ``current``) takes that decide what a model source is: a name
    of ``_SOURCE_DECIDERS`` imported or used as an attribute, or a ``read_*`` reader imported
    from ``refbpe.formats`` or one of its format modules."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = current if path.endswith("__init__.py") else current.rsplit(".", 1)[0]
            for _ in range(node.level - 1):
                base = base.rsplit(".", 1)[0]
            target = (base + "." + node.module if node.module else base) if node.level else node.module
            in_formats = target == "refbpe.formats" or target.startswith("refbpe.formats.")
            for alias in node.names:
                reader = in_formats and target not in _NOT_MODEL_FORMATS and alias.name.startswith("read_")
                if alias.name in _SOURCE_DECIDERS or reader:
                    found.append("%s imports %s from %s" % (current, alias.name, target))
        elif isinstance(node, ast.Attribute) and node.attr in _SOURCE_DECIDERS:
            found.append("%s uses .%s" % (current, node.attr))
    return found


def _cli_and_verify_source_decisions(root):
    found = []
    for package in ("cli", "verify"):
        for path in sorted(glob.glob(os.path.join(root, package, "*.py"))):
            name = os.path.relpath(path, os.path.dirname(root))[: -len(".py")].replace(os.sep, ".")
            found += _source_decisions(
                path, name[: -len(".__init__")] if name.endswith(".__init__") else name
            )
    return found


def test_the_command_line_and_verify_leave_what_a_source_is_to_the_loader():
    """A model path travels one way down: ``cli`` and ``verify`` call ``refbpe.read_model`` and
    ``Tokenizer.load`` and never decide themselves whether a string is an encoding name, which
    format a file is, or read a format's file."""
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "refbpe")
    assert _cli_and_verify_source_decisions(root) == []


def test_source_decisions_are_found(tmp_path):
    """The check above finds each kind of decision (so it can fail)."""
    cli = tmp_path / "refbpe" / "cli"
    cli.mkdir(parents=True)
    (tmp_path / "refbpe" / "verify").mkdir()
    (cli / "bad.py").write_text(
        "from ..encodings.registry import is_encoding_name\n"
        "from ..formats import FORMATS, read_model\n"
        "from ..formats.detect import detect_format\n"
        "from ..formats.tiktoken import read_tiktoken\n"
        "from ..formats.trace import read_trace\n"
        "from ..loader import read_model as load\n"
        "tok = Tokenizer.from_tiktoken('x')\n"
    )
    assert _cli_and_verify_source_decisions(str(tmp_path / "refbpe")) == [
        "refbpe.cli.bad imports is_encoding_name from refbpe.encodings.registry",
        "refbpe.cli.bad imports read_model from refbpe.formats",
        "refbpe.cli.bad imports detect_format from refbpe.formats.detect",
        "refbpe.cli.bad imports read_tiktoken from refbpe.formats.tiktoken",
        "refbpe.cli.bad uses .from_tiktoken",
    ]


# -- the tree shows the pipeline, and a reader can hold each file -----------------------------

LOOSE_MODULES_AT_MOST = 4  # beside __init__ and __main__: the rest lives in a stage's package
LINES_AT_MOST = 700


def _loose_modules():
    return sorted(
        m.split(".", 1)[1]
        for m, path in modules().items()
        if m.count(".") == 1 and not path.endswith("__init__.py") and not m.endswith("__main__")
    )


def test_few_modules_lie_loose_in_the_package():
    loose = _loose_modules()
    assert len(loose) <= LOOSE_MODULES_AT_MOST, "loose in refbpe/: %s" % loose


def _generated(path):
    with open(path, encoding="utf-8") as f:
        return ": GENERATED" in f.readline()


def test_no_hand_written_module_is_over_700_lines():
    long = []
    for path in sorted(modules().values()):
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > LINES_AT_MOST and not _generated(path):
            long.append("%s: %d lines" % (os.path.relpath(path), n))
    assert long == []


def test_the_size_checks_can_fail(tmp_path):
    """The generated-file exemption reads the first line only, and a long file is counted."""
    hand = tmp_path / "hand.py"
    hand.write_text('"""A module."""\n' + "x = 1\n" * (LINES_AT_MOST + 1))
    made = tmp_path / "made.py"
    made.write_text('"""Tables: GENERATED."""\n' + "x = 1\n" * (LINES_AT_MOST + 1))
    assert not _generated(str(hand)) and _generated(str(made))
    with open(str(hand)) as f:
        assert sum(1 for _ in f) > LINES_AT_MOST
