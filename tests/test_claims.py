"""Units claimed by the processes themselves (``refbpe.corpus.claims``): counting's schedule
for regular files.  Each unit runs once, in one process; errors come back; the sums equal
one worker's."""

import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples, mixed_text
from test_units import square_slowly, with_work

from refbpe.corpus.claims import run_claimed
from refbpe.corpus.count import count_words, pack_counts, unpack_counts
from refbpe.pretokenize.gpt2 import add_small_counts

EOT = "<|endoftext|>"


def tagged_square(x, pause, flag=None):
    """``square_slowly`` with the pid of the process that ran it (a pool process's result);
    ``flag``: a file created first, to say that a pool process has started."""
    if flag is not None:
        open(flag, "a").close()
    return square_slowly(x, pause) + ([os.getpid()],)


def run(units, workers=2, flag=None):
    """(pool results, units run here, progress seen) of ``run_claimed`` over ``units``;
    with ``flag``, this process's first unit waits until a pool process has run one
    (a pool started by ``forkserver`` under load may otherwise find every unit taken)."""
    pooled, here, seen = [], [], []

    def here_square(x, pause, flag=None):
        deadline = time.time() + 60
        while flag is not None and not here and not os.path.exists(flag) and time.time() < deadline:
            time.sleep(0.01)
        here.append(x)
        return square_slowly(x, pause)

    run_claimed(units, workers, here_square, pooled.append, seen.append, "a test")
    return pooled, here, seen


@pytest.mark.parametrize("workers", [2, 3])
def test_every_unit_runs_once_and_every_process_takes_some(workers, tmp_path):
    flag = str(tmp_path / "pool-started")
    units = [(with_work, (tagged_square, x, 0.02, flag), x) for x in range(1, 41) if x != 13]
    pooled, here, seen = run(units, workers)
    squares = sorted([r[0][0] for r in pooled] + [x * x for x in here])
    assert squares == [x * x for x in range(1, 41) if x != 13]
    assert here and pooled  # this process and the pool's both took units
    assert len({r[1][0] for r in pooled}) <= workers - 1 and os.getpid() not in {r[1][0] for r in pooled}
    assert seen[-1] == sum(range(1, 41)) - 13 and seen == sorted(seen)  # progress: bytes done


def test_each_process_claims_its_units_in_input_order():
    units = [(with_work, (tagged_square, x, 0.01), 1) for x in range(1, 31) if x != 13]
    pooled, here, _ = run(units)
    assert here == sorted(here)  # the pool's results are taken as published, in any order
    assert sorted(r[0][0] for r in pooled) == sorted(x * x for x in range(1, 31) if x not in here + [13])


@pytest.mark.parametrize("bad_unit", [1, 6, 20])
def test_a_failing_unit_raises_wherever_it_ran_and_no_unit_is_claimed_after(bad_unit):
    units = [(with_work, (tagged_square, 13 if x == bad_unit else x, 0.02), 1) for x in range(1, 21)]
    with pytest.raises(ValueError, match="thirteen"):
        run(units)


def test_no_units_and_fewer_units_than_processes():
    pooled, here, seen = run([])
    assert pooled == here == [] and seen and set(seen) == {0}  # progress as the pool ends: none
    pooled, here, _ = run([(with_work, (tagged_square, 3, 0.0), 1)], workers=3)
    assert [r[0][0] for r in pooled] + [x * x for x in here] == [9]


@settings(max_examples=examples(8), deadline=None)
@given(text=mixed_text(), chunk=st.integers(1, 64), workers=st.integers(2, 3))
def test_claimed_counting_equals_one_worker(tmp_path_factory, text, chunk, workers):
    path = tmp_path_factory.mktemp("claims") / "corpus.txt"
    path.write_bytes((text + EOT + text[::-1]).encode("utf-8"))
    alone = count_words(str(path), [EOT], workers=1, chunk_size=chunk)
    assert count_words(str(path), [EOT], workers=workers, chunk_size=chunk) == alone


def test_more_units_than_claimed_ones_are_handed_out_as_cut(tmp_path, monkeypatch):
    import refbpe.corpus.claims as claims
    import refbpe.corpus.count as count

    path = tmp_path / "corpus.txt"
    path.write_bytes(("low lower lowest, newer newest\n" * 200).encode("utf-8"))
    alone = count_words(str(path), [EOT], workers=1, chunk_size=64)
    claimed = []
    monkeypatch.setattr(
        count,
        "run_claimed",
        lambda units, *a, **k: claimed.append(len(units)) or claims.run_claimed(units, *a, **k),
    )
    assert count_words(str(path), [EOT], workers=2, chunk_size=64) == alone and claimed
    monkeypatch.setattr(count, "CLAIMED_UNITS", 3)
    claimed.clear()
    assert count_words(str(path), [EOT], workers=2, chunk_size=64) == alone and not claimed


def test_here_done_runs_once_after_this_process_s_last_unit():
    events = []

    def here_square(x, pause):
        events.append(("here", x))
        return square_slowly(x, pause)

    units = [(with_work, (tagged_square, x, 0.01), 1) for x in range(1, 21) if x != 13]
    run_claimed(
        units,
        2,
        here_square,
        lambda r: None,
        lambda done: None,
        "a test",
        here_done=lambda: events.append("done"),
    )
    assert events.count("done") == 1 and events[-1] == "done"


small_keys = st.integers(1, 6).flatmap(lambda n: st.integers(1 << (8 * n), (2 << (8 * n)) - 1))
tables = st.tuples(
    st.dictionaries(small_keys, st.integers(1, 1 << 70), max_size=8),
    st.dictionaries(st.binary(min_size=1, max_size=12), st.integers(1, 1 << 40), max_size=8),
)


@settings(max_examples=examples(50), deadline=None)
@given(table=tables)
def test_a_packed_table_unpacks_to_itself(table):
    """``pack_counts`` reads each table's counts in its keys' order: unpacked into empty tables,
    every key has its own count again (counts above 2**63 included)."""
    small, counts = {}, {}
    unpack_counts(pack_counts(*table), small, counts)
    assert small == table[0] and counts == table[1]


@settings(max_examples=examples(50), deadline=None)
@given(mine=tables, theirs=st.lists(tables, max_size=3), settle_after=st.integers(0, 3))
def test_tables_added_after_the_small_keys_are_settled_sum_the_same(mine, theirs, settle_after):
    """``count._Tables.settle``: packed tables added with ``small`` None (their small keys turned
    to bytes as they come) give the sums of adding them all first."""
    small, counts = dict(mine[0]), dict(mine[1])
    for t in theirs:
        unpack_counts(pack_counts(*t), small, counts)
    expected = add_small_counts(small, counts)
    small, counts = dict(mine[0]), dict(mine[1])
    for t in theirs[:settle_after]:
        unpack_counts(pack_counts(*t), small, counts)
    add_small_counts(small, counts)
    for t in theirs[settle_after:]:
        unpack_counts(pack_counts(*t), None, counts)
    assert counts == expected


def test_closing_does_not_wait_for_a_lock_taken_for_good():
    """``claims._close`` with the shared lock left taken (as a signal raised inside its acquire
    left it under PyPy): it writes the value anyway, within its wait, instead of hanging."""
    import multiprocessing
    import threading

    from refbpe.corpus import claims

    shared = multiprocessing.get_context().Array("q", [3, 0])
    taker = threading.Thread(target=shared.get_lock().acquire)  # the lock's owner ends, holding it
    taker.start()
    taker.join()
    closer = threading.Thread(target=claims._close, args=(shared, 7), daemon=True)
    t0 = time.time()
    closer.start()
    closer.join(10)
    assert not closer.is_alive(), "_close waited for a lock nobody will release"
    assert time.time() - t0 < 5 and shared.get_obj()[0] == 7
