"""Adversarial inputs: long pre-tokens in training and encoding, refbpe against its peers.

    .venv/bin/python perf/adversarial.py            # full sizes (tens of minutes on 2 cores)
    .venv/bin/python perf/adversarial.py --quick    # sizes / 20, one repeat (~2 minutes)

The driver runs under CPython; refbpe trains and encodes under PyPy (``.venv-pypy``,
with ``PYTHONPATH`` set to this tree), the peers (rustbpe, HF tokenizers, tiktoken)
run from the CPython ``.venv``, every system as its own process (``harness.Runner``:
whole-process wall time, peak RSS of the process tree, medians), round-robin over the
systems when ``--repeats`` > 1.

Inputs are generated on the fly from ``--seed`` into a temporary directory (deleted
afterwards), each at half, once and twice its base size, to show growth:

    run1      one letter, 20 MB: a single pre-token
    rand2/4/26  random letters over 2, 4 and 26 symbols, 5 MB: a single pre-token
    spaces    whitespace runs (space, tab, newline mixed) of random lengths up to
              1 MB, separated by a short word, 10 MB
    han       random Han characters (U+4E00-U+9FFF), no punctuation, 2 MB: one pre-token

Training: vocab 1,000 with ``<|endoftext|>`` (as perf/run.py: rustbpe gets 999, HF
1,000 with the special token), refbpe with 2 workers.  Columns: wall seconds (the
whole process: start-up, reading, counting, merging, writing the model), refbpe's
write phase from its ``--report`` and its wall time without it (the rustbpe runner
writes no model, and a one-letter run's tokens are megabytes long: the model files
hold them several times over), CPU seconds (user + system of the process and its
waited-for children: what a loaded machine does not inflate), peak MB, refbpe / peer ratios, and growth =
time(size) / time(size / 2).  A peer that does not finish in
``--timeout`` seconds is shown as ``>T``; its larger sizes are then skipped.

Encoding: one pre-token of random lowercase letters of 100K, 200K, 400K and 1M
characters (``--quick``: / 10) with the GPT-2 vocab, refbpe (PyPy) against tiktoken,
encode seconds in-process (``perf/peers/encode_*.py``), ids compared by digest.

A last block checks the issue's targets under PyPy: each base-size input trains in
at most 2x rustbpe's wall time (refbpe without its write phase; and, for a one-piece
input, with it: the issue's "including the model write"); doubling a
one-piece input multiplies training and encoding time by at most 2.3; the
1M-character piece encodes in at most 2 s.
"""

import argparse
import json
import os
import random
import sys
from array import array

from harness import GPT2_FILES, INTERPRETERS, PEERS, RESULTS, SPECIAL, TIKTOKEN_CACHE, Runner, tree_env

MB = 1000 * 1000
FAMILIES = [
    # name, base size in bytes, one pre-token?
    ("run1", 20 * MB, True),
    ("rand2", 5 * MB, True),
    ("rand4", 5 * MB, True),
    ("rand26", 5 * MB, True),
    ("spaces", 10 * MB, False),
    ("han", 2 * MB, True),
]
SCALES = [0.5, 1, 2]
ENCODE_CHARS = [100000, 200000, 400000, 1000000]
TRAIN_SYSTEMS = ["refbpe-pypy", "rustbpe", "hf"]
ENCODE_SYSTEMS = ["refbpe-pypy", "tiktoken"]
VOCAB = 1000


# -- inputs ----------------------------------------------------------------------


def _letters(rng, n, alphabet):
    """``n`` bytes drawn from ``alphabet`` (bytes), from random bytes by a translation table."""
    table = bytes(alphabet[i % len(alphabet)] for i in range(256))
    if 256 % len(alphabet):  # keep it uniform: drop the bytes of the incomplete last round
        keep = 256 - 256 % len(alphabet)
        out = bytearray()
        while len(out) < n:
            out += bytes(b for b in rng.randbytes(n) if b < keep)
        return bytes(out[:n]).translate(table)
    return rng.randbytes(n).translate(table)


def generate(family, size, seed, path):
    """Write ``size`` bytes (about, for Han: whole characters) of ``family`` to ``path``."""
    rng = random.Random("%s-%d-%d" % (family, size, seed))
    if family == "run1":
        data = b"a" * size
    elif family.startswith("rand"):
        data = _letters(rng, size, b"abcdefghijklmnopqrstuvwxyz"[: int(family[4:])])
    elif family == "spaces":
        parts, total = [], 0
        while total < size:
            run_length = min(rng.randint(1, MB), size - total)
            ws = _letters(rng, run_length, b" \t\n")
            word = _letters(rng, rng.randint(1, 8), b"abcdefghijklmnopqrstuvwxyz")
            parts += [ws, word]
            total += run_length + len(word)
        data = b"".join(parts)[:size]
    elif family == "han":
        codes = array("H")
        codes.frombytes(rng.randbytes(2 * (size // 3)))
        data = "".join([chr(0x4E00 + c % 0x5200) for c in codes]).encode("utf-8")
    else:
        raise ValueError(family)
    with open(path, "wb") as f:
        f.write(data)
    return len(data)


def piece(chars, seed, path):
    rng = random.Random("piece-%d-%d" % (chars, seed))
    with open(path, "wb") as f:
        f.write(_letters(rng, chars, b"abcdefghijklmnopqrstuvwxyz"))


# -- commands ----------------------------------------------------------------------


def train_cmd(system, path, work):
    py, pypy = INTERPRETERS["cpython"], INTERPRETERS["pypy"]
    if system == "refbpe-pypy":
        cmd = [pypy, "-m", "refbpe", "train", path, "--vocab-size", str(VOCAB), "--special-token", SPECIAL]
        cmd += ["--out", os.path.join(work, "model"), "--workers", "2", "--quiet"]
        return cmd + ["--report", os.path.join(work, "report.json")], tree_env()
    if system == "rustbpe":
        return [py, os.path.join(PEERS, "train_rustbpe.py"), path, str(VOCAB)], {}
    if system == "hf":
        cmd = [py, os.path.join(PEERS, "train_hf.py"), path, str(VOCAB), os.path.join(work, "hf")]
        return cmd, {"TOKENIZERS_PARALLELISM": "true"}
    raise ValueError(system)


def encode_cmd(system, path):
    if system == "refbpe-pypy":
        return [INTERPRETERS["pypy"], os.path.join(PEERS, "encode_refbpe.py"), path] + GPT2_FILES, tree_env()
    if system == "tiktoken":
        cmd = [INTERPRETERS["cpython"], os.path.join(PEERS, "encode_tiktoken.py"), path]
        return cmd, {"TIKTOKEN_CACHE_DIR": TIKTOKEN_CACHE}
    raise ValueError(system)


def measure_all(runner, jobs):
    """Round-robin repeats of ``jobs`` [(key, cmd, env)] (``harness.Runner``); {key: summary}.
    A refbpe run's ``--report`` adds ``in_process`` (count + merge) and ``write`` to its result."""
    report = os.path.join(runner.work, "report.json")

    def after(r):
        if os.path.exists(report):
            with open(report) as f:
                rep = json.load(f)
            os.unlink(report)
            r["result"]["in_process"] = rep["count"]["seconds"] + rep["merge"]["seconds"]
            r["result"]["write"] = rep.get("write", {}).get("seconds")

    runs = [(" ".join(map(str, key)), cmd, env, None, after) for key, cmd, env in jobs]
    return {key: s for (key, _, _), s in zip(jobs, runner.run_many(runs))}


# -- sections ----------------------------------------------------------------------


def section_train(args, runner):
    work = runner.work
    results = {}
    timed_out = set()  # (system, family): bigger sizes are skipped
    for family, base, _ in FAMILIES:
        for scale in SCALES:
            size = int(base * scale * args.scale)
            path = os.path.join(work, "%s-%d.txt" % (family, size))
            size = generate(family, size, args.seed, path)
            jobs = []
            for system in TRAIN_SYSTEMS:
                if (system, family) in timed_out or system not in args.systems:
                    results[(family, scale, system)] = {"failed": "skipped", "size": size}
                    continue
                cmd, env = train_cmd(system, path, work)
                jobs.append(((family, scale, system), cmd, env))
            got = measure_all(runner, jobs)
            for key, s in got.items():
                s["size"] = size
                if s.get("failed") == "timeout":
                    timed_out.add((key[2], family))
            results.update(got)
            os.unlink(path)
    return results


def section_encode(args, runner):
    work = runner.work
    results = {}
    for chars in ENCODE_CHARS:
        chars = int(chars * args.encode_scale)
        path = os.path.join(work, "piece-%d.txt" % chars)
        piece(chars, args.seed, path)
        jobs = [((chars, system),) + encode_cmd(system, path) for system in ENCODE_SYSTEMS]
        results.update(measure_all(runner, jobs))
        os.unlink(path)
    return results


# -- tables ----------------------------------------------------------------------


def _secs(s, field="wall"):
    """A figure of a summary: ``wall``, or an in-process one of its result; None if it failed."""
    if s is None or "failed" in s or "absent" in s:
        return None
    return s.get(field, s.get("result", {}).get(field))


def _fmt(v, timeout):
    return "%8.2f" % v if v is not None else "%8s" % (">%d" % timeout)


def _ratio(a, b):
    return "%7.2fx" % (a / b) if a is not None and b else "%8s" % "-"


def _no_write(s):
    """refbpe's wall time without writing the model (rustbpe's runner writes nothing)."""
    return _secs(s) - (_secs(s, "write") or 0.0)


TRAIN_HEADER = [
    ("input", "%-7s"),
    ("MB", "%6s"),
    ("refbpe", "%8s"),
    ("write", "%6s"),
    ("no-wr", "%6s"),
    ("rustbpe", "%8s"),
    ("hf", "%8s"),
    ("ref cpu", "%7s"),
    ("rus cpu", "%7s"),
    ("ref MB", "%7s"),
    ("rust MB", "%7s"),
    ("hf MB", "%7s"),
    ("vs rust", "%8s"),
    ("nw/rust", "%8s"),
    ("vs hf", "%8s"),
    ("grow nw", "%8s"),
    ("grow rust", "%9s"),
]


def table_train(res, timeout):
    lines = [
        "TRAIN vocab %d: wall s of the whole process; write = refbpe writing the model files (its --report);"
        % VOCAB,
        "  no-wr = refbpe wall - write (the rustbpe runner writes nothing); cpu = user + system s of the",
        "  process tree (its waited-for children); peak MB of the process tree;",
        "  grow = t / t(half size); >T: did not finish in T s",
        "  " + " ".join(f % h for h, f in TRAIN_HEADER),
    ]
    for family, _, _ in FAMILIES:
        prev = {}
        for scale in SCALES:
            r = {sy: res.get((family, scale, sy)) for sy in TRAIN_SYSTEMS}
            ref, rust, hf = (_secs(r[sy]) for sy in TRAIN_SYSTEMS)
            nw = _no_write(r["refbpe-pypy"]) if ref is not None else None
            write = _secs(r["refbpe-pypy"], "write") if ref is not None else None
            size = next((v["size"] for v in r.values() if v and "size" in v), 0)

            def mb(sy, r=r):
                return "%7.0f" % _secs(r[sy], "peak_tree_mb") if _secs(r[sy]) is not None else "%7s" % "-"

            def cpu(sy, r=r):
                return "%7.2f" % _secs(r[sy], "cpu") if _secs(r[sy], "cpu") is not None else "%7s" % "-"

            cells = [
                "%-7s" % family,
                "%6.1f" % (size / MB),
                _fmt(ref, timeout),
                "%6.2f" % write if write is not None else "%6s" % "-",
                "%6.2f" % nw if nw is not None else "%6s" % "-",
                _fmt(rust, timeout),
                _fmt(hf, timeout),
                cpu("refbpe-pypy"),
                cpu("rustbpe"),
                mb("refbpe-pypy"),
                mb("rustbpe"),
                mb("hf"),
                _ratio(ref, rust),
                _ratio(nw, rust),
                _ratio(ref, hf),
                _ratio(nw, prev.get("nw")) if prev else "%8s" % "",
                " " + _ratio(rust, prev.get("rust")) if prev else "%9s" % "",
            ]
            lines.append("  " + " ".join(cells))
            prev = {"nw": nw, "rust": rust}
    return lines


def table_encode(res, timeout):
    lines = [
        "ENCODE one pre-token of random letters, GPT-2 vocab (in-process encode s; growth = t / t(previous))",
        "  %9s %9s %9s %8s %9s %9s %s"
        % ("chars", "refbpe", "tiktoken", "vs tik", "grow ref", "grow tik", "ids"),
    ]
    prev = None
    for chars in sorted({k[0] for k in res}):
        ref = _secs(res.get((chars, "refbpe-pypy")), "encode_seconds")
        tik = _secs(res.get((chars, "tiktoken")), "encode_seconds")
        digests = {
            res[(chars, s)]["result"].get("ids_digest") for s in ENCODE_SYSTEMS if _secs(res.get((chars, s)))
        }
        same = "same" if len(digests) == 1 else "DIFFER"
        lines.append(
            "  %9d %s %s %s %s %s %s"
            % (
                chars,
                _fmt(ref, timeout),
                _fmt(tik, timeout),
                _ratio(ref, tik),
                _ratio(ref, prev[0]) if prev else "%8s" % "",
                _ratio(tik, prev[1]) if prev else "%8s" % "",
                same,
            )
        )
        prev = (ref, tik)
    return lines


def table_targets(train, encode):
    lines = ["TARGETS (PyPy)"]

    def check(ok, text):
        lines.append("  %-5s %s" % ("met" if ok else "MISS", text))

    def no_write(family, scale):
        s = train.get((family, scale, "refbpe-pypy"))
        return _no_write(s) if _secs(s) is not None else None

    for family, _, one_piece in FAMILIES:
        ref, rust = no_write(family, 1), _secs(train.get((family, 1, "rustbpe")))
        whole = _secs(train.get((family, 1, "refbpe-pypy")))
        if ref is not None and rust:
            check(
                ref <= 2 * rust,
                "%s: train %.2fs (wall - write) <= 2x rustbpe %.2fs (%.2fx)"
                % (family, ref, rust, ref / rust),
            )
        if one_piece and whole is not None and rust:
            check(
                whole <= 2 * rust,
                "%s: train and write the model %.2fs (wall) <= 2x rustbpe %.2fs (%.2fx)"
                % (family, whole, rust, whole / rust),
            )
        if one_piece:
            for a, b in ((0.5, 1), (1, 2)):
                ta, tb = no_write(family, a), no_write(family, b)
                if ta and tb:
                    check(
                        tb / ta <= 2.3,
                        "%s: doubling %gx -> %gx multiplies train time (wall - write) by %.2f"
                        % (family, a, b, tb / ta),
                    )
    chars = sorted({k[0] for k in encode})
    for a, b in zip(chars, chars[1:]):
        ta = _secs(encode.get((a, "refbpe-pypy")), "encode_seconds")
        tb = _secs(encode.get((b, "refbpe-pypy")), "encode_seconds")
        if ta and tb:
            check(
                tb / ta <= 2.3 * (b / a) / 2,
                "encode %d -> %d chars: x%.2f (limit %.2f)" % (a, b, tb / ta, 2.3 * b / a / 2),
            )
    if chars:
        t = _secs(encode.get((chars[-1], "refbpe-pypy")), "encode_seconds")
        if t is not None:
            check(
                chars[-1] < 1000000 or t <= 2.0,
                "encode %d chars in %.2fs (target 2 s at 1M)" % (chars[-1], t),
            )
    return lines


def _keys_back(saved):
    """JSON keys ("run1 0.5 rustbpe", "100000 tiktoken") back to the tuples of the tables."""

    def number(text):
        value = float(text)
        return int(value) if value == int(value) else value

    out = {}
    for key, value in saved.items():
        parts = key.split(" ")
        if len(parts) == 3:
            out[(parts[0], number(parts[1]), parts[2])] = value
        else:
            out[(int(parts[0]), parts[1])] = value
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes / 20 (encode / 10), one repeat")
    ap.add_argument(
        "--scale", type=float, default=None, help="training sizes times this (default 1, --quick 0.05)"
    )
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--repeats", type=int, default=None, help="default 1 (quick) or 3")
    ap.add_argument("--scales", default=None, help="comma-separated subset of 0.5,1,2 (default all)")
    ap.add_argument(
        "--systems", default=",".join(TRAIN_SYSTEMS), help="trainers to run (default all: %(default)s)"
    )
    ap.add_argument("--timeout", type=int, default=None, help="seconds per run; default 30 (quick) or 300")
    ap.add_argument("--only", default="train,encode", help="train,encode")
    ap.add_argument(
        "--families", default=None, help="comma-separated subset of " + ",".join(f[0] for f in FAMILIES)
    )
    ap.add_argument(
        "--tables-from", help="print the tables of an earlier run's JSON (results/adversarial-*.json)"
    )
    args = ap.parse_args(argv)
    if args.tables_from:
        with open(args.tables_from) as f:
            saved = json.load(f)
        train, encode = _keys_back(saved["train"]), _keys_back(saved["encode"])
        timeout = saved["args"]["timeout"]
        print(
            "\n".join(
                table_train(train, timeout)
                + [""]
                + table_encode(encode, timeout)
                + [""]
                + table_targets(train, encode)
            )
        )
        return 0
    args.scale = args.scale or (0.05 if args.quick else 1.0)
    args.encode_scale = 0.1 if args.quick else 1.0
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.timeout = args.timeout or (30 if args.quick else 300)
    args.systems = args.systems.split(",")
    if args.scales:
        SCALES[:] = [float(x) for x in args.scales.split(",")]  # 1.0 == 1: the same keys
    if args.families:
        wanted = args.families.split(",")
        FAMILIES[:] = [f for f in FAMILIES if f[0] in wanted]
    sections = args.only.split(",")
    runner = Runner(args.repeats, args.timeout)
    try:
        train = section_train(args, runner) if "train" in sections else {}
        encode = section_encode(args, runner) if "encode" in sections else {}
    finally:
        runner.cleanup()
    lines = []
    if train:
        lines += table_train(train, args.timeout) + [""]
    if encode:
        lines += table_encode(encode, args.timeout) + [""]
    lines += table_targets(train, encode)
    print("\n".join(lines))
    out_dir = RESULTS
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "adversarial-latest.json"), "w") as f:
        json.dump(
            {
                "train": {" ".join(map(str, k)): v for k, v in train.items()},
                "encode": {" ".join(map(str, k)): v for k, v in encode.items()},
                "args": vars(args),
            },
            f,
            indent=1,
            default=str,
        )
    with open(os.path.join(out_dir, "adversarial-latest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
