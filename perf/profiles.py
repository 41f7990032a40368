"""Trainer profiles: time against cs336 and against the peer each reproduces, and check equality.

    .venv/bin/python perf/profiles.py                       # english_medium, vocab 10,000, 3 rounds
    .venv/bin/python perf/profiles.py --corpora english_small,chinese --vocab 1000,10000 --repeats 1

One row per profile setting.  refbpe runs as ``python -m refbpe train CORPUS
--vocab-size N --special-token '<|endoftext|>' --profile P ... --workers 2`` in
its own process under PyPy (``--interpreter``; whole-process wall time, and the
count and merge phases from ``--report``); the peer runs in this process
(CPython), its time covering reading the file, splitting it and training:

    cs336              (the baseline)
    rustbpe-gpt2       rustbpe.Tokenizer().train_from_iterator(docs, N - 1, pattern=GPT-2)
    rustbpe            the same with rustbpe's own pattern (GPT4_PATTERN: refbpe's llama3)
    hf                 HF BpeTrainer(vocab_size=N, special_tokens=[EOT]), ByteLevel() (prefix
                       space), tokenizer.train_from_iterator(docs)
    hf-lines           the same with ByteLevel(add_prefix_space=False), tokenizer.train([CORPUS])

docs = the corpus split on '<|endoftext|>'.  Rounds go round-robin over the rows
(median reported), so that load elsewhere does not hit one row only.  Every
refbpe output is compared with the peer's: rustbpe's ``get_mergeable_ranks()``
against refbpe's tokenizer.tiktoken line by line, HF's ``tokenizer.json`` model
(vocab with ids, merges in order) against refbpe's; the ``same`` column says
whether they are byte-identical.
"""

import argparse
import base64
import json
import os
import shutil
import statistics
import sys
import tempfile

from harness import INTERPRETERS, PEERS, corpus, run_result, stopwatch, tree_env
from harness import SPECIAL as EOT

sys.path.insert(0, PEERS)
from _common import GPT2_PATTERN  # noqa: E402  (perf/peers/_common.py)

# row -> (refbpe options, peer)
ROWS = {
    "cs336": ([], None),
    "rustbpe-gpt2": (["--profile", "rustbpe", "--pattern", "gpt2"], "rustbpe-gpt2"),
    "rustbpe": (["--profile", "rustbpe"], "rustbpe"),
    "hf": (["--profile", "hf"], "hf"),
    "hf-lines": (["--profile", "hf", "--sequences", "lines", "--no-add-prefix-space"], "hf-lines"),
}


def run_refbpe(python, corpus, vocab, options, out, workers):
    report = out + ".report.json"
    argv = [python, "-m", "refbpe", "train", corpus, "--vocab-size", str(vocab), "--special-token", EOT]
    argv += options + ["--workers", str(workers), "--out", out, "--report", report, "--quiet"]
    wall = run_result(argv, tree_env())["wall"]
    with open(report) as f:
        r = json.load(f)
    return {"wall": wall, "count": r["count"]["seconds"], "merge": r["merge"]["seconds"]}


def run_peer(peer, corpus, vocab):
    """(seconds, the peer's result in comparable form)."""
    clock = stopwatch()
    if peer.startswith("rustbpe"):
        import rustbpe

        with open(corpus, encoding="utf-8") as f:
            docs = f.read().split(EOT)
        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(docs, vocab - 1, pattern=GPT2_PATTERN if peer == "rustbpe-gpt2" else None)
        ranks = tok.get_mergeable_ranks()
        return clock.elapsed(), ["%s %d" % (base64.b64encode(bytes(b)).decode("ascii"), r) for b, r in ranks]
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=peer == "hf")
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=[EOT], show_progress=False)
    if peer == "hf":
        with open(corpus, encoding="utf-8") as f:
            tok.train_from_iterator(f.read().split(EOT), trainer)
    else:
        tok.train([corpus], trainer)
    seconds = clock.elapsed()
    model = json.loads(tok.to_str())["model"]
    return seconds, (model["vocab"], [list(m) for m in model["merges"]])


def refbpe_result(peer, out):
    if peer.startswith("rustbpe"):
        with open(os.path.join(out, "tokenizer.tiktoken"), encoding="ascii") as f:
            return f.read().splitlines()
    with open(os.path.join(out, "tokenizer.json"), encoding="utf-8") as f:
        model = json.load(f)["model"]
    return model["vocab"], model["merges"]


def versions():
    from importlib.metadata import version

    return "rustbpe %s, tokenizers %s" % (version("rustbpe"), version("tokenizers"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="english_medium")
    ap.add_argument("--vocab", default="10000")
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--interpreter", choices=sorted(INTERPRETERS), default="pypy")
    args = ap.parse_args(argv)
    python = INTERPRETERS[args.interpreter]
    rows = args.rows.split(",")
    print(
        "refbpe under %s, --workers %d; peers in-process on CPython (%s)"
        % (args.interpreter, args.workers, versions())
    )
    tmp = tempfile.mkdtemp(prefix="refbpe-profiles-")
    failures = 0
    try:
        for name in args.corpora.split(","):
            path = corpus(name)
            for vocab in [int(v) for v in args.vocab.split(",")]:
                times = {row: [] for row in rows}
                peer_times = {row: [] for row in rows}
                same = {}
                for _ in range(args.repeats):
                    for row in rows:
                        options, peer = ROWS[row]
                        out = os.path.join(tmp, "%s-%d-%s" % (name, vocab, row))
                        times[row].append(run_refbpe(python, path, vocab, options, out, args.workers))
                        if peer:
                            seconds, theirs = run_peer(peer, path, vocab)
                            peer_times[row].append(seconds)
                            same[row] = refbpe_result(peer, out) == theirs
                base = statistics.median(t["wall"] for t in times["cs336"]) if "cs336" in rows else None
                print("\n%s, vocab %d (median of %d)" % (name, vocab, args.repeats))
                print(
                    "%-13s %8s %8s %8s %9s %8s %9s %5s"
                    % ("row", "wall s", "count s", "merge s", "vs cs336", "peer s", "vs peer", "same")
                )
                for row in rows:
                    wall = statistics.median(t["wall"] for t in times[row])
                    count = statistics.median(t["count"] for t in times[row])
                    merge = statistics.median(t["merge"] for t in times[row])
                    peer = statistics.median(peer_times[row]) if peer_times[row] else None
                    ok = same.get(row)
                    failures += ok is False
                    print(
                        "%-13s %8.2f %8.2f %8.2f %9s %8s %9s %5s"
                        % (
                            row,
                            wall,
                            count,
                            merge,
                            "%.2fx" % (wall / base) if base else "-",
                            "%.2f" % peer if peer else "-",
                            "%.2fx" % (wall / peer) if peer else "-",
                            {True: "yes", False: "NO", None: "-"}[ok],
                        )
                    )
                sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
