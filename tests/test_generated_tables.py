"""The generated tables, regenerated: each committed file is byte for byte what its generator writes.

    _unicode_table.py        _gen_unicode_table's ``render`` (GPT-2's classes, from ``regex``)
    _unicode_categories.py   _gen_unicode_table's ``render_categories`` (GPT-4/4o's, from ``regex``)
    _unicode_properties.py   _gen_unicode_properties's ``render`` (categories, ``\\w``, case partners)
    _unicode_versions.py     _gen_unicode_table's ``render_versions`` (one ``unicodedata2`` per version)

Every module of the package whose docstring calls it GENERATED must be in ``GENERATORS``, so a
new generated file cannot go unchecked.  The ``regex`` tables regenerate on CPython when the
installed ``regex`` implements the pinned Unicode version, and skip with the two versions named
otherwise; the texts are compared as bytes, so an edit by hand, even of line endings, fails.
"""

import ast
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import IS_PYPY, import_regex_or_skip, needs_regex, regex_version_mismatch

import refbpe
from refbpe.pretokenize.table_text import ROW_WIDTH, groups, pairs, text_rows, triples
from refbpe.pretokenize.unicode_tables import LATEST, UNICODE_VERSIONS, category_table

PACKAGE_DIR = os.path.dirname(os.path.abspath(refbpe.__file__))

# Each generated file (relative to the package) and the generator that writes it.
GENERATORS = {
    "pretokenize/_unicode_table.py": "refbpe.pretokenize._gen_unicode_table",
    "pretokenize/_unicode_categories.py": "refbpe.pretokenize._gen_unicode_table",
    "pretokenize/_unicode_versions.py": "refbpe.pretokenize._gen_unicode_table --ucd DIR ...",
    "pretokenize/_unicode_properties.py": "refbpe.pretokenize._gen_unicode_properties",
}


def committed_bytes(relpath):
    with open(os.path.join(PACKAGE_DIR, relpath), "rb") as f:
        return f.read()


def assert_regenerates(relpath, text, committed=None):
    """``text`` (what the generator writes) is exactly the committed file's bytes; else the first
    line that differs, and the command that rewrites the file."""
    committed = committed_bytes(relpath) if committed is None else committed
    written = text.encode("ascii")
    if written == committed:
        return
    ours, theirs = written.split(b"\n"), committed.split(b"\n")
    line = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    pytest.fail(
        "refbpe/%s is not what its generator writes; first difference at line %d:\n"
        "  generated: %r\n  committed: %r\nregenerate with: python -m %s"
        % (
            relpath,
            line + 1,
            ours[line] if line < len(ours) else b"<end of file>",
            theirs[line] if line < len(theirs) else b"<end of file>",
            GENERATORS[relpath],
        )
    )


def _regex_at_the_pinned_version():
    import_regex_or_skip()
    reason = regex_version_mismatch()
    if reason:
        pytest.skip(reason)


# -- which files are generated -------------------------------------------------------------


def _generated_modules():
    """Package files (relative paths) whose docstring's first line says GENERATED."""
    out = set()
    for root, _dirs, files in os.walk(PACKAGE_DIR):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    first = f.readline()
                if first.startswith('"""') and "GENERATED" in first:
                    out.add(os.path.relpath(path, PACKAGE_DIR).replace(os.sep, "/"))
    return out


def test_every_generated_file_has_its_regeneration_check():
    assert _generated_modules() == set(GENERATORS)


def test_a_hand_edit_fails_the_comparison(tmp_path):
    """An edited copy of a generated file (a digit, the line endings, the last newline) is not
    what its generator writes, however small the edit."""
    relpath = "pretokenize/_unicode_properties.py"
    text = committed_bytes(relpath).decode("ascii")
    assert_regenerates(relpath, text)
    edits = [
        text.replace(" 20:17 ", " 20:16 ", 1),
        text.replace("\n", "\r\n"),
        text[:-1],
        text + "\n",
    ]
    for edited in edits:
        assert edited != text
        copy = tmp_path / "edited.py"
        copy.write_bytes(edited.encode("ascii"))
        with pytest.raises(pytest.fail.Exception, match="not what its generator writes"):
            assert_regenerates(relpath, text, committed=copy.read_bytes())


# -- the text form of the tables ------------------------------------------------------------

_NUMBER = st.integers(0, 0x10FFFF)


def _written(tuples, indent):
    """The string that ``text_rows``' source lines spell, and the lines."""
    rows = text_rows(tuples, indent)
    return "".join(ast.literal_eval(row.strip()) for row in rows), rows


@given(st.lists(st.tuples(_NUMBER, _NUMBER)), st.sampled_from(["", "    ", "        "]))
def test_pairs_read_back_what_is_written(tuples, indent):
    text, rows = _written(tuples, indent)
    assert pairs(text) == tuple(tuples)
    assert all(len(row) <= ROW_WIDTH and row.startswith(indent + '"') for row in rows)


@given(st.lists(st.tuples(_NUMBER, _NUMBER, _NUMBER)))
def test_triples_read_back_what_is_written(tuples):
    assert triples(_written(tuples, "    ")[0]) == tuple(tuples)


@given(st.lists(st.lists(_NUMBER, min_size=1, max_size=5).map(tuple)))
def test_groups_read_back_tuples_of_any_length(tuples):
    assert groups(_written(tuples, "    ")[0]) == tuple(tuples)


# -- from regex (CPython) ----------------------------------------------------------------------


@pytest.mark.slow
@needs_regex
def test_gpt2_table_is_current():
    """Re-running the generator reproduces the committed ``_unicode_table.py``: a stale table fails."""
    _regex_at_the_pinned_version()
    import refbpe.pretokenize._unicode_table as table
    from refbpe.pretokenize._gen_unicode_table import classify_all, regex_unicode_version, render, runs

    # GENERATED_WITH_REGEX records which regex release wrote the file; the table
    # itself must be reproduced exactly by the installed one (same Unicode version).
    text = render(regex_unicode_version(), table.GENERATED_WITH_REGEX, runs(classify_all()))
    assert_regenerates("pretokenize/_unicode_table.py", text)


@pytest.mark.slow
@needs_regex
def test_category_table_is_current():
    """Re-running the generator reproduces the committed ``_unicode_categories.py``."""
    _regex_at_the_pinned_version()
    import refbpe.pretokenize._unicode_categories as table
    from refbpe.pretokenize._gen_unicode_table import (
        case_variants,
        classify_categories,
        regex_unicode_version,
        render_categories,
        runs,
    )

    text = render_categories(
        regex_unicode_version(), table.GENERATED_WITH_REGEX, runs(classify_categories()), case_variants()
    )
    assert_regenerates("pretokenize/_unicode_categories.py", text)


@pytest.mark.slow
@needs_regex
def test_properties_table_is_current():
    """Re-running the generator reproduces the committed ``_unicode_properties.py``: general
    categories, ``\\w`` and case partners."""
    _regex_at_the_pinned_version()
    import refbpe.pretokenize._unicode_properties as table
    from refbpe.pretokenize._gen_unicode_properties import (
        case_partners,
        general_categories,
        render,
        word_table,
    )
    from refbpe.pretokenize._gen_unicode_table import regex_unicode_version, runs

    text = render(
        regex_unicode_version(),
        table.GENERATED_WITH_REGEX,
        runs(general_categories()),
        runs(word_table()),
        case_partners(),
    )
    assert_regenerates("pretokenize/_unicode_properties.py", text)


# -- from unicodedata2 (CPython) ------------------------------------------------------------


def _installed_unicodedata2():
    if IS_PYPY:
        pytest.skip("unicodedata2 is installed for CPython (the peers extra)")
    module = pytest.importorskip("unicodedata2", reason="unicodedata2 is not installed (extra: peers)")
    if module.unidata_version not in UNICODE_VERSIONS:
        pytest.skip(
            "unicodedata2 %s is not a version refbpe carries (%s)"
            % (module.unidata_version, ", ".join(UNICODE_VERSIONS))
        )
    return module


@pytest.mark.slow
def test_versions_table_is_current_for_the_installed_unicodedata2():
    """The ``peers`` extra installs ``unicodedata2`` 16.0.0 (tiktoken's version): its table, from
    Unicode's data by the generator, is the committed one; and ``_unicode_versions.py`` with that
    version's runs regenerated, the other versions' as committed, is the committed file byte for
    byte (every version regenerated: the test below, given the wheels)."""
    unicodedata2 = _installed_unicodedata2()
    from refbpe.pretokenize import _unicode_versions
    from refbpe.pretokenize._gen_unicode_table import classify_ucd, delta_runs, render_versions

    version = unicodedata2.unidata_version
    table = classify_ucd(unicodedata2)
    assert table == bytearray(category_table(version))
    deltas = {v: list(runs) for v, runs in _unicode_versions.DELTAS.items()}
    regenerated = delta_runs(table, bytearray(category_table(LATEST)))
    if regenerated:
        deltas[version] = regenerated
    else:
        deltas.pop(version, None)
    assert_regenerates("pretokenize/_unicode_versions.py", render_versions(LATEST, deltas))


def _ucd_dirs():
    """Unpacked ``unicodedata2`` wheels: ``REFBPE_UNICODEDATA2_DIRS``, os.pathsep-separated."""
    return [d for d in os.environ.get("REFBPE_UNICODEDATA2_DIRS", "").split(os.pathsep) if d]


def test_older_versions_regenerate_from_unicodedata2():
    """The generator, given each version's ``unicodedata2``, writes the committed ``_unicode_versions.py``;
    and ``unicodedata2`` of the latest version reproduces the ``regex`` table exactly."""
    dirs = _ucd_dirs()
    if not dirs or IS_PYPY:
        pytest.skip(
            "set REFBPE_UNICODEDATA2_DIRS to unpacked unicodedata2 wheels (15.0.0 15.1.0 16.0.0 17.0.1 "
            "18.0.0; pip download unicodedata2==X, unzip) to regenerate the older tables (CPython)"
        )
    from refbpe.pretokenize._gen_unicode_table import (
        classify_ucd,
        load_unicodedata,
        render_versions,
        version_deltas,
    )

    latest = bytearray(category_table(LATEST))
    found = {load_unicodedata(d).unidata_version: d for d in dirs}
    if LATEST in found:
        assert classify_ucd(load_unicodedata(found[LATEST])) == latest
    missing = sorted(set(UNICODE_VERSIONS) - set(found))
    if missing:
        pytest.skip("no unicodedata2 for %s in REFBPE_UNICODEDATA2_DIRS" % ", ".join(missing))
    text = render_versions(LATEST, version_deltas(dirs, latest))
    assert_regenerates("pretokenize/_unicode_versions.py", text)
