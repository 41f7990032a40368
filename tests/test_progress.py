"""Progress lines: the merge phase shows its percentage and ETA; counting shows no
ETA until its rate is measured over counted work (not the pool's start-up)."""

import io

import pytest

import refbpe.corpus.progress as progress_module
from refbpe.corpus.progress import Progress
from refbpe.learn.train import train_from_counts, train_from_texts


class Clock(object):
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(progress_module.time, "time", c)
    return c


def _last_line(stream):
    return stream.getvalue().split("\r\x1b[K")[-1]


def test_merge_progress_has_percentage_and_eta(clock):
    out = io.StringIO()
    p = Progress(True, stream=out, interval=0)
    p.start()
    clock.now += 10
    p.merges(100, 1000)
    assert _last_line(out) == "merging: 100 of 1000 merges (10%), 10 merges/s, ETA 90s"
    clock.now += 90
    p.merges(1000, 1000)
    assert _last_line(out) == "merging: 1000 of 1000 merges (100%), 10 merges/s, ETA 0s"


def test_counting_shows_no_eta_until_the_rate_is_known(clock):
    out = io.StringIO()
    p = Progress(True, stream=out, interval=0)
    p.start()
    clock.now += 3.0  # the pool's start-up: the first results arrive late, all at once
    p.bytes(4000000, 400000000)
    assert _last_line(out).endswith("ETA -")
    clock.now += 0.5
    p.bytes(54000000, 400000000)
    assert _last_line(out).endswith("ETA -")  # half a second of counting: not yet
    clock.now += 1.0
    p.bytes(154000000, 400000000)  # 150 MB in 1.5 s since the first result: 100 MB/s
    assert _last_line(out).endswith("ETA 2s")


def test_every_trainer_takes_a_progress_object():
    """``train_from_counts`` takes a ``Progress`` as the other trainers do (it used to call it)."""
    for train in (
        lambda p: train_from_counts({b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6}, 262, progress=p),
        lambda p: train_from_texts(["low low lower widest newest"], 262, progress=p),
    ):
        out = io.StringIO()
        vocab, merges = train(Progress(True, stream=out, interval=0))
        assert merges and "merging: %d of %d merges (100%%)" % (len(merges), len(merges)) in out.getvalue()
