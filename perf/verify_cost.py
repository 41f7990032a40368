"""What verify's explanations cost: ``refbpe verify`` against ``refbpe train`` on one corpus.

For each interpreter, times (whole-process wall seconds) and peak RSS (MB,
``wait4`` rusage, by ``harness.measure``) of a plain ``refbpe train`` and of ``refbpe verify`` (its
default, explanations included) against models that differ in several ways,
all in the same run, and the ratio verify / train::

    .venv/bin/python perf/verify_cost.py                      # english_small, vocab 1000
    .venv/bin/python perf/verify_cost.py --vocab 2000 --repeats 3

Models verified: refbpe's own output (identical); two adjacent tied merges
swapped (a tie broken otherwise); merges trained on counts read in chunks of
4096 characters (a count difference on a reference tie); merges trained on
counts read line by line with special tokens as text; and, when the
``tokenizers`` package is installed, a Hugging Face BPE model.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from harness import INTERPRETERS, corpus, measure, tree_env
from harness import SPECIAL as EOT

from refbpe.formats import write_model
from refbpe.train import build_vocab, train_from_counts
from refbpe.verify import PairReplay, count_variant


def run(argv, python):
    """(wall seconds, peak MB of the process, exit status, stdout) of ``python -m refbpe ARGV``."""
    r = measure([python, "-m", "refbpe"] + argv, tree_env(), cwd=None)
    return r["wall"], r["max_process_mb"], r["rc"], r["stdout"]


def models(corpus, vocab, tmp):
    text = open(corpus, encoding="utf-8").read()
    counts = count_variant([text], [EOT])
    _, ours = train_from_counts(counts, vocab, [EOT])
    out = {}

    def save(name, merges):
        path = os.path.join(tmp, name + ".json")
        write_model(path, "json", build_vocab(merges, [EOT]), merges, [EOT])
        out[name] = path

    save("identical", ours)
    replay = PairReplay(counts)
    swapped = None
    for k, m in enumerate(ours[:-1]):
        top = replay.max_count()
        nxt = ours[k + 1]
        if len(replay.tied(top)) > 1 and replay.count(nxt) == top and m[0] + m[1] not in nxt:
            swapped = ours[:k] + [nxt, m] + ours[k + 2 :]
            break
        replay.apply(m)
    if swapped:
        save("swapped-tie", swapped)
    save("chunks-4096", train_from_counts(count_variant([text], [EOT], chunk=4096), vocab, [EOT])[1])
    lines = count_variant([text], [EOT], specials_as_text=True, lines="keep")
    save("lines+specials-as-text", train_from_counts(lines, vocab, [EOT])[1])
    try:
        import tokenizers
        from tokenizers import models as hf_models
        from tokenizers import pre_tokenizers, trainers

        tok = tokenizers.Tokenizer(hf_models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab,
            special_tokens=[EOT],
            show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        tok.train([corpus], trainer)
        out["hf"] = os.path.join(tmp, "tokenizer.json")
        tok.save(out["hf"])
    except ImportError:
        pass
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=corpus("english_small"))
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument(
        "--python",
        action="append",
        default=None,
        help="interpreters (default: PyPy and CPython, as perf/harness.py finds them)",
    )
    ap.add_argument("--build", metavar="DIR", help=argparse.SUPPRESS)  # internal: write the models
    args = ap.parse_args()
    if args.build:
        print(json.dumps(models(args.corpus, args.vocab, args.build)))
        return
    pythons = args.python or [p for p in (INTERPRETERS["pypy"], INTERPRETERS["cpython"]) if os.path.exists(p)]
    with tempfile.TemporaryDirectory() as tmp:
        # The models are built in a child process: a child forked from a large
        # driver would report the driver's pages as its own peak RSS.
        built = json.loads(
            subprocess.check_output(
                [
                    sys.executable,
                    __file__,
                    "--build",
                    tmp,
                    "--corpus",
                    args.corpus,
                    "--vocab",
                    str(args.vocab),
                ]
            )
        )
        common = ["--vocab-size", str(args.vocab), "--special-token", EOT, "--workers", "1"]
        for python in pythons:
            name = "pypy" if "pypy" in python else "cpython"
            rows = []
            for _ in range(args.repeats):
                t, mb, _, _ = run(
                    ["train", args.corpus, "--out", os.path.join(tmp, "t"), "--quiet"] + common, python
                )
                rows.append(("train", t, mb, ""))
                for label, path in built.items():
                    t2, mb2, rc, out = run(["verify", args.corpus, "--against", path] + common, python)
                    verdict = next((x for x in out.splitlines() if not x.startswith("warning")), "rc %d" % rc)
                    rows.append((label, t2, mb2, verdict))
            base = {}
            for label, t, mb, _ in rows:
                base.setdefault(label, []).append((t, mb))
            med = {
                k: (sorted(x[0] for x in v)[len(v) // 2], sorted(x[1] for x in v)[len(v) // 2])
                for k, v in base.items()
            }
            tt, tm = med["train"]
            print(
                "== %s  %s  vocab %d  (medians of %d)"
                % (name, os.path.basename(args.corpus), args.vocab, args.repeats)
            )
            print(
                "%-24s %8s %8s %8s %8s  %s" % ("run", "seconds", "x train", "peak MB", "x train", "verdict")
            )
            first = {label: verdict for label, _, _, verdict in rows}
            for label, (t, mb) in med.items():
                print(
                    "%-24s %8.2f %8.2f %8.1f %8.2f  %s" % (label, t, t / tt, mb, mb / tm, first[label][:70])
                )


if __name__ == "__main__":
    main()
