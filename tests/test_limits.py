"""Limits: ``encode_iterable`` keeps memory flat on a long stream, and counts
far beyond 2**31 (and 2**63) train exactly.

The stream test runs in a fresh interpreter and reads its resident set size
(``VmRSS``) as it goes, after a full collection each time (PyPy collects
garbage only once the heap has grown 1.8 times, so without it the size shows
garbage not yet collected, not memory retained): after a warm-up stream
(caches filled, at a small bound; JIT compiled) the size must stay within a
few MB of where it was however much more text flows through (measured: under 1 MB of growth over 50 MB on both
interpreters; joining the stream and calling ``encode`` instead adds 240 MB).
(CS336's own test caps the address space instead; under PyPy the garbage
collector reserves address space ahead of use, so the resident size is what
is measured here.)
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import HEAVY, IS_PYPY, REPO_ROOT, examples, read_outputs, run_cli

from refbpe import Tokenizer
from refbpe.corpus.count import pack_counts, unpack_counts
from refbpe.corpus.countfile import read_counts, write_counts
from refbpe.learn.train import train_from_counts
from refbpe.naive import naive_train_bpe_from_counts

EOT = "<|endoftext|>"

# Stream size: 50 MB under PyPy; CPython encodes about 5x slower, so 12 MB there
# unless the heavy profile asks for the full 50 MB.
STREAM_MB = 50 if (IS_PYPY or HEAVY) else 12

_STREAM_SCRIPT = textwrap.dedent("""
    import gc, random, sys
    import refbpe.encode.piece_ids
    from refbpe import Tokenizer, train_bpe

    # The piece caches are bounded (two generations of _CACHE_LIMIT entries each, doubled at most
    # _CACHE_DOUBLINGS times), but the bound is reached only after some 100 MB of this text: a
    # small one is reached in the warm-up, so any growth after it is memory that grows with the
    # stream.
    refbpe.encode.piece_ids._CACHE_LIMIT = 1 << 10

    def rss_mb():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0

    total_mb, corpus = int(sys.argv[1]), sys.argv[2]
    vocab, merges = train_bpe(corpus, 1500, ["<|endoftext|>"], workers=1)
    tok = Tokenizer(vocab, merges, ["<|endoftext|>"])
    rng = random.Random(5)
    words = open(corpus, encoding="utf-8").read().split()[:20000]

    def chunks(total):
        made = 0
        while made < total:
            # chunks of varied sizes, cut anywhere (inside words and special tokens too)
            line = " ".join(rng.choice(words) for _ in range(rng.randint(1, 400)))
            line += rng.choice(["\\n", " ", "<|endoftext|>", "\\n\\n", str(rng.randint(0, 99999))])
            cut = rng.randint(0, len(line))
            for part in (line[:cut], line[cut:]):
                made += len(part)
                yield part

    for _ in tok.encode_iterable(chunks(4 << 20)):  # warm-up: caches filled, JIT compiled
        pass
    gc.collect()
    baseline = rss_mb()
    samples, n_ids = [], 0
    for _ in tok.encode_iterable(chunks(total_mb << 20)):
        n_ids += 1
        if n_ids % 200000 == 0:
            gc.collect()  # PyPy collects garbage late (after 1.8x growth): measure what is retained
            samples.append(rss_mb())
    print(n_ids, "%.1f" % baseline, " ".join("%.1f" % s for s in samples))
""")


@pytest.mark.slow
def test_encode_iterable_memory_is_flat_on_a_long_stream(tmp_path):
    import random

    rng = random.Random(1)
    letters = "abcdefghijklmnopqrstuvwxyz"
    text = " ".join("".join(rng.choice(letters) for _ in range(rng.randint(1, 8))) for _ in range(30000))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text + "\n" + EOT + " caf\u00e9 \u4e2d\u6587 \U0001f600\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    r = subprocess.run(
        [sys.executable, "-c", _STREAM_SCRIPT, str(STREAM_MB), str(corpus)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr.decode()
    fields = r.stdout.decode().split()
    n_ids, baseline, samples = int(fields[0]), float(fields[1]), [float(x) for x in fields[2:]]
    assert n_ids > STREAM_MB * 150000  # the whole stream was encoded (about 4 bytes per id)
    growth = max(samples) - baseline
    assert growth < 16, "RSS grew %.1f MB over %d MB of stream (from %.1f MB): %s" % (
        growth,
        STREAM_MB,
        baseline,
        samples,
    )


# -- counts beyond 2**31 ---------------------------------------------------------------

huge = st.integers(min_value=2**31, max_value=2**80)


@settings(max_examples=examples(40))
@given(
    st.dictionaries(st.binary(min_size=1, max_size=6), huge, min_size=1, max_size=12),
    st.integers(min_value=0, max_value=30),
)
def test_huge_counts_train_exactly(counts, extra):
    assert train_from_counts(counts, 256 + extra)[1] == naive_train_bpe_from_counts(counts, 256 + extra)[1]


def test_huge_counts_survive_packing_between_processes(tmp_path):
    from refbpe.corpus.spool import run_spooled, take

    counts = {b"the": 2**40, b" longer word": 2**64 + 3}
    small = {1 << 8 | 65: 2**33}
    got_small, got_counts = {1 << 8 | 65: 1}, {b"the": 2}
    spooled = run_spooled(
        str(tmp_path), pack_counts, (small, counts)
    )  # as a worker of refbpe's own pool does
    unpack_counts(take(spooled), got_small, got_counts)
    assert not os.path.exists(spooled)
    assert got_small == {1 << 8 | 65: 2**33 + 1}
    assert got_counts == {b"the": 2**40 + 2, b" longer word": 2**64 + 3}


def test_huge_counts_through_a_count_file(tmp_path):
    """Counts far beyond 2**31 in a word-count file: the reference accepts them and
    they decide the merges (a pair's count, not its word count, wins)."""
    counts = {b" the": 3 * 2**40, b" then": 2**41, b"xy": 2**70, b"xyz": 5, b"q\x00\xff\n": 2**33}
    path = str(tmp_path / "big.counts.tsv")
    write_counts(path, counts)
    assert read_counts(path) == counts
    vocab, merges = train_from_counts(read_counts(path), 262)
    assert merges[0] == (b"x", b"y")
    assert merges == naive_train_bpe_from_counts(counts, 262)[1]
    # The command line trains on the same file, and verify agrees with itself.
    model = str(tmp_path / "model")
    r = run_cli(["train", "--counts", path, "--vocab-size", "262", "--out", model, "--quiet"])
    assert r.returncode == 0, r.stderr
    assert read_outputs(model)["merges.txt"].startswith(b"x y\n")
    assert Tokenizer.from_dir(model).merges == merges
    r = run_cli(["verify", path, "--vocab-size", "262", "--against", model])
    assert r.returncode == 0, r.stdout + r.stderr


_VOCAB_SCRIPT = textwrap.dedent("""
    import resource, sys
    from refbpe.learn.train import train_from_counts

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # a table by the request would not fit
    words = {("w%dx" % i).encode() * (1 + i % 7): 1 + i % 5 for i in range(3000)}
    vocab, merges = train_from_counts(words, int(sys.argv[1]), ["<|endoftext|>"], profile=sys.argv[2])
    print(len(merges), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def _train_in_child(vocab_size, profile):
    out = subprocess.run(
        [sys.executable, "-c", _VOCAB_SCRIPT, str(vocab_size), profile],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    merges, peak_kb = out.stdout.split()
    return int(merges), int(peak_kb) / 1024.0


def test_a_huge_vocab_size_costs_what_the_merges_cost():
    # "Train until no pair is left": 10**9 and 2**62 cost what the merges that can
    # exist cost (at most the symbols minus the words), under every profile.
    if IS_PYPY:
        pytest.skip("PyPy's collector reserves address space ahead of use: RLIMIT_AS would stop it")
    for profile in ("cs336", "hf"):
        small_merges, small_peak = _train_in_child(10000, profile)
        for vocab_size in (10**9, 2**62):
            merges, peak = _train_in_child(vocab_size, profile)
            assert merges >= small_merges
            assert peak < small_peak + 8, (profile, vocab_size, peak, small_peak)


def test_a_huge_vocab_size_on_the_command_line(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat; the dog sat on the log.\n" * 50)
    reports = {}
    for vocab_size in (10000, 2**63 - 1):
        report = tmp_path / ("r%d.json" % vocab_size)
        model = tmp_path / ("m%d" % vocab_size)
        r = run_cli(
            ["train", corpus, "--vocab-size", str(vocab_size), "--out", model, "--quiet", "--report", report]
        )
        assert r.returncode == 0, r.stderr
        reports[vocab_size] = json.loads(report.read_text())
    assert reports[2**63 - 1]["stopped_early"]
    assert reports[2**63 - 1]["merge"]["merges"] == reports[10000]["merge"]["merges"]
    r = run_cli(
        ["verify", corpus, "--vocab-size", str(2**63 - 1), "--against", tmp_path / ("m%d" % (2**63 - 1))]
    )
    assert r.returncode == 0, r.stdout + r.stderr
