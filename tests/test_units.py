"""Work units (``refbpe.corpus.units``): one producer for counting and encoding, three ways in."""

import gzip
import itertools
import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples, mixed_text

from refbpe.corpus.io import InputError
from refbpe.corpus.pool import pool_passes, run_units
from refbpe.corpus.units import END, auto_chunk_size, checked_utf8, input_spans, run_range, work_units

EOT = "<|endoftext|>"


def where(chunk, offset, source, tag):
    """A work function that shows what it was given."""
    return (source, offset, chunk, tag)


def results(units):
    """Each unit run here, ``END`` kept: what a caller of ``work_units`` sees, in order."""
    return [u if u is END else (u[0](*u[1]), u[2]) for u in units]


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(mixed_text(extra=[EOT, "\n", "a\nb"]), min_size=1, max_size=3), st.integers(1, 64))
def test_ranges_shipped_bytes_and_streams_give_the_same_units(tmp_path_factory, texts, chunk_size):
    tmp = str(tmp_path_factory.mktemp("units"))
    plain, packed = [], []
    for k, text in enumerate(texts):
        data = text.encode("utf-8")
        plain.append(os.path.join(tmp, "%d.txt" % k))
        packed.append(os.path.join(tmp, "%d.txt.gz" % k))
        with open(plain[-1], "wb") as f:
            f.write(data)
        with gzip.open(packed[-1], "wb") as f:
            f.write(data)
    specials = [EOT.encode("utf-8")]

    def units(sources, **options):
        """(file name without .gz, offset, chunk) per unit, END after each input."""
        made = work_units(input_spans(sources), chunk_size, specials, where, ("x",), ends=True, **options)
        out = []
        for u in results(made):
            if u is END:
                out.append(END)
                continue
            (source, offset, chunk, tag), covered = u
            assert tag == "x" and covered == len(chunk) > 0
            out.append((os.path.basename(source).replace(".gz", ""), offset, chunk))
        return out

    ranges, shipped, streamed = units(plain), units(plain, ship_bytes=True), units(packed)
    assert ranges == shipped == streamed  # the same cuts, whichever way the bytes travel
    assert ranges.count(END) == len(texts) and ranges[-1] is END
    chunks = [u for u in ranges if u is not END]
    for k, text in enumerate(texts):
        mine = [(offset, chunk) for name, offset, chunk in chunks if name == "%d.txt" % k]
        assert b"".join(chunk for _, chunk in mine) == text.encode("utf-8")
        assert [offset for offset, _ in mine] == [sum(len(c) for _, c in mine[:i]) for i in range(len(mine))]


def test_a_unit_runs_the_work_with_its_params_and_covers_its_bytes(tmp_path):
    path = str(tmp_path / "c.txt")
    with open(path, "wb") as f:
        f.write(b"one\ntwo\nthree\n" * 100)
    units = list(work_units(input_spans([path]), 100, [], where, ("tag",)))
    assert units[0][0] is run_range and sum(covered for _, _, covered in units) == 1400
    got = []
    run_units(units, 1, lambda result, covered: got.append((result, covered)))
    assert [r[3] for r, _ in got] == ["tag"] * len(units)
    assert [len(r[2]) for r, _ in got] == [covered for _, covered in got]


def test_shard_spans_are_the_units_of_a_shard(tmp_path):
    path = str(tmp_path / "c.txt")
    with open(path, "wb") as f:
        f.write(b"alpha\nbeta\n" * 500)
    whole = input_spans([path])
    halves = input_spans([path], shard=(0, 2)) + input_spans([path], shard=(1, 2))
    assert whole == [(path, 0, 5500)] and halves[0][1] == 0 and halves[1][2] == 5500
    assert halves[0][2] == halves[1][1]
    assert input_spans(["-"]) == [("-", 0, None)]


@pytest.mark.parametrize(
    "errors, expected",
    [("strict", None), ("replace", "a\ufffdb".encode("utf-8")), ("ignore", b"ab")],
)
def test_checked_utf8_names_the_source_and_the_offset(errors, expected):
    assert checked_utf8(b"caf\xc3\xa9", 5, "x.txt", "strict") == b"caf\xc3\xa9"
    if expected is None:
        with pytest.raises(InputError, match=r"^x\.txt: invalid UTF-8 at byte offset 1001$"):
            checked_utf8(b"a\xffb", 1000, "x.txt", errors)
    else:
        assert checked_utf8(b"a\xffb", 1000, "x.txt", errors) == expected


def test_auto_chunk_size_bounds():
    mib = 1 << 20
    assert auto_chunk_size(None, 2, 8 * mib, 16 * mib, 8 * mib) == 8 * mib
    assert auto_chunk_size(75 * mib, 2, 8 * mib, 16 * mib, 8 * mib) == 75 * mib // 6 + 1
    assert auto_chunk_size(1000 * mib, 2, 8 * mib, 16 * mib, 8 * mib) == 16 * mib
    assert auto_chunk_size(mib, 2, 8 * mib, 16 * mib, 8 * mib) == 8 * mib
    assert auto_chunk_size(mib, 2, 64 << 10, 256 << 10, 256 << 10, whole_below=16 * mib) == mib
    assert auto_chunk_size(0, 2, 64 << 10, 256 << 10, 256 << 10, whole_below=16 * mib) == 1
    encoding = dict(least=64 << 10, most=256 << 10, stream=256 << 10, whole_below=16 * mib)
    assert auto_chunk_size(100 * mib, 200, **encoding) == 100 * mib // 600 + 1
    assert auto_chunk_size(100 * mib, 2, **encoding) == 256 << 10
    assert auto_chunk_size(100 * mib, 2000, **encoding) == 64 << 10


def test_tapered_units_shrink_at_the_end_and_cover_the_file(tmp_path):
    path = str(tmp_path / "c.txt")
    with open(path, "wb") as f:
        f.write(b"one two\n" * 1000)  # 8000 bytes, a safe cut after every space and newline
    plain = [covered for _, _, covered in work_units(input_spans([path]), 1000, [], where, ("tag",))]
    tapered = list(work_units(input_spans([path]), 1000, [], where, ("tag",), taper=2))
    sizes = [covered for _, _, covered in tapered]
    assert sum(sizes) == sum(plain) == 8000 and max(plain[:-1]) >= 1000
    # Full units while 2 or more remain, then half of what remains, down to a third of a unit.
    full = [s for s in sizes if s >= 1000]
    assert sizes[: len(full)] == full and sum(full) >= 8000 - 2000
    assert len(tapered) > len(plain) and all(333 <= s < 1000 for s in sizes[len(full) : -1])
    assert sizes[len(full)] <= (8000 - sum(full)) // 2 + 8 and sizes[-1] < 1000
    starts = [args[2] for _, args, _ in tapered]
    assert starts == [sum(sizes[:i]) for i in range(len(sizes))]  # contiguous, in order


@pytest.mark.parametrize("data", [b"a", b"ab", b"a b c d\n", b"\n\n\n\n"])
@pytest.mark.parametrize("chunk_size", [1, 2, 3])
def test_tapered_units_of_a_few_bytes_end(tmp_path, data, chunk_size):
    path = str(tmp_path / "c.txt")
    with open(path, "wb") as f:
        f.write(data)
    units = list(itertools.islice(work_units(input_spans([path]), chunk_size, [], where, (), taper=3), 20))
    sizes = [covered for _, _, covered in units]
    assert sum(sizes) == len(data) and all(covered > 0 for covered in sizes)


def square_slowly(x, pause):
    """A work function for the pool: ``x * x`` after ``pause`` seconds, as the one
    part of a result (the spool carries tuples of parts); 13 fails."""
    time.sleep(pause)
    if x == 13:
        raise ValueError("thirteen")
    return ([x * x],)


def test_passes_hand_over_each_pass_in_full_and_run_later_ones_meanwhile():
    got = {0: [], 1: [], 2: []}
    with pool_passes(2) as passes:
        for k, pause in enumerate([0.0, 0.2, 0.0]):
            units = [(square_slowly, (x + 20 * k, pause), 1 + k) for x in range(1, 6)]
            assert passes.queue(units, lambda r, covered, k=k: got[k].append((r[0][0], covered))) == k
        passes.finish(0)
        assert sorted(got[0]) == [(x * x, 1) for x in range(1, 6)]
        assert not passes.waiting  # the rest is with the pool, running while this process works
        own = os.getpriority(os.PRIO_PROCESS, 0)
        workers = [p.pid for p in passes.executor._processes.values()]
        assert workers and all(os.getpriority(os.PRIO_PROCESS, pid) == min(19, own + 10) for pid in workers)
        passes.finish(2)
    assert sorted(got[1]) == [((x + 20) ** 2, 2) for x in range(1, 6)]
    assert sorted(got[2]) == [((x + 40) ** 2, 3) for x in range(1, 6)]


def test_passes_raise_a_later_pass_error_when_it_is_finished():
    with pytest.raises(ValueError, match="thirteen"):
        with pool_passes(2) as passes:
            passes.queue([(square_slowly, (x, 0.0), 1) for x in range(3)], lambda r, c: None)
            passes.queue([(square_slowly, (x, 0.0), 1) for x in (12, 13)], lambda r, c: None)
            passes.finish(0)
            passes.finish(1)


def with_work(work, *args):
    """A unit's function in ``run_units``' form: its work comes first (``here`` replaces it)."""
    return work(*args)


def units_then_error(n, error):
    """Units squaring 1..n slowly, then ``error`` raised by the unit generator itself."""
    for x in range(1, n + 1):
        yield with_work, (square_slowly, x, 0.02), 1
    raise error


def test_units_with_here_are_each_handed_over_once_and_shared_with_the_pool():
    got, here = [], []

    def here_square(x, pause):
        here.append(x)
        return square_slowly(x, pause)

    units = [(with_work, (square_slowly, x, 0.02), x) for x in range(1, 31) if x != 13]
    run_units(units, 2, lambda r, covered: got.append((r[0][0], covered)), here=here_square)
    assert sorted(got) == [(x * x, x) for x in range(1, 31) if x != 13]
    assert 0 < len(here) < 29  # both this process and the pool's took units


@pytest.mark.parametrize("bad_unit", [1, 20])
def test_units_with_here_raise_a_failing_unit_error_wherever_it_ran(bad_unit):
    units = [(with_work, (square_slowly, 13 if x == bad_unit else x, 0.02), 1) for x in range(1, 21)]
    with pytest.raises(ValueError, match="thirteen"):
        run_units(units, 2, lambda r, covered: None, here=square_slowly)


def test_units_with_here_raise_the_unit_generator_error_whoever_met_it():
    for n in (0, 1, 5):
        with pytest.raises(InputError, match="bad stream"):
            run_units(units_then_error(n, InputError("bad stream")), 2, lambda r, c: None, here=square_slowly)
