"""What verify's explanations cost: ``refbpe verify`` against ``refbpe train`` on one corpus.

For each interpreter, in the same run and round-robin (train, then each
verify, then again), CPU seconds (user + system, ``wait4`` rusage, by
``harness.measure``: the machine is shared, so wall time is noisy), wall
seconds and peak RSS (MB) of a plain ``refbpe train`` and of ``refbpe
verify`` (its default: explanations and the profile search included) against
models that differ in several ways, and the ratio verify / train of the
medians and of the least CPU seconds of the rounds, with the load average::

    .venv/bin/python perf/verify_cost.py                      # english_small, vocab 1000, every model
    .venv/bin/python perf/verify_cost.py --vocab 2000 --models identical,hf --repeats 3
    .venv/bin/python perf/verify_cost.py --tree ../main --tree . ...   # two checkouts, alternating

Models verified: refbpe's own output (``identical``); two adjacent tied merges
swapped (``swapped-tie``: a tie broken otherwise); merges trained on counts read
in chunks of 4096 characters (``chunks-4096``: a count difference on a reference
tie); merges trained on counts read line by line with special tokens as text
(``lines+specials-as-text``); and, when the ``tokenizers`` package is installed,
a Hugging Face ``ByteLevel`` BPE model trained with ``train([file])`` (``hf``:
a count difference that the lines+specials-as-text variant explains and the hf
profile reproduces).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from harness import INTERPRETERS, ROOT, corpus, measure, tree_env
from harness import SPECIAL as EOT

from refbpe.formats import write_model
from refbpe.learn.train import build_vocab, train_from_counts
from refbpe.verify import PairReplay, count_variant


def run(argv, python, tree):
    """(CPU seconds, wall seconds, peak MB, exit status, stdout) of ``python -m refbpe ARGV`` in ``tree``."""
    # cwd=tree: "python -m" puts the working directory first on sys.path, before PYTHONPATH
    r = measure([python, "-m", "refbpe"] + argv, tree_env(tree), cwd=tree)
    return r["cpu_seconds"], r["wall"], r["max_process_mb"], r["rc"], r["stdout"]


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


def _median(xs):
    return sorted(xs)[len(xs) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=corpus("english_small"))
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--models", default=None, help="comma-separated model labels (default: all)")
    ap.add_argument(
        "--tree",
        action="append",
        default=None,
        help="a checkout to measure (repeatable: the trees alternate within each round; default: this one)",
    )
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
        if args.models:
            wanted = args.models.split(",")
            built = {k: v for k, v in built.items() if k in wanted}
        common = ["--vocab-size", str(args.vocab), "--special-token", EOT, "--workers", "1"]
        trees = args.tree or [ROOT]
        for python in pythons:
            name = "pypy" if "pypy" in python else "cpython"
            runs, verdicts, loads = {}, {}, []
            for _ in range(args.repeats):
                for tree in trees:
                    jobs = [("train", ["train", args.corpus, "--out", os.path.join(tmp, "t"), "--quiet"])]
                    jobs += [(label, ["verify", args.corpus, "--against", p]) for label, p in built.items()]
                    for label, argv in jobs:
                        loads.append(os.getloadavg()[0])
                        cpu, wall, mb, rc, out = run(argv + common, python, tree)
                        runs.setdefault((tree, label), []).append((cpu, wall, mb))
                        lines = [x for x in out.splitlines() if not x.startswith("warning")]
                        verdicts.setdefault(label, lines[0] if lines and label != "train" else "rc %d" % rc)
            med = {k: [_median([r[i] for r in v]) for i in range(3)] for k, v in runs.items()}
            least = {k: min(r[0] for r in v) for k, v in runs.items()}
            print(
                "== %s  %s  vocab %d  (medians of %d; load average %.1f-%.1f)"
                % (name, os.path.basename(args.corpus), args.vocab, args.repeats, min(loads), max(loads))
            )
            for tree in trees:
                tc, tw, _ = med[(tree, "train")]
                tl = least[(tree, "train")]
                print("-- %s" % os.path.abspath(tree))
                print(
                    "%-24s %8s %8s %8s %8s %8s %8s %8s  %s"
                    % (
                        "run",
                        "cpu s",
                        "x train",
                        "min cpu",
                        "x train",
                        "wall s",
                        "x train",
                        "peak MB",
                        "verdict",
                    )
                )
                for (t, label), (c, w, mb) in med.items():
                    if t == tree:
                        lc = least[(t, label)]
                        print(
                            "%-24s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.1f  %s"
                            % (label, c, c / tc, lc, lc / tl, w, w / tw, mb, verdicts[label][:60])
                        )


if __name__ == "__main__":
    main()
