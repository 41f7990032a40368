"""Pickling a worker's word counts: plain dict vs ``refbpe.corpus.count.pack_counts``.

    .venv/bin/python perf/bench_pickle.py            # both interpreters, side by side
    .venv-pypy/bin/python perf/bench_pickle.py --here --json   # this interpreter only

The word-count dict is the one a worker returns for a 4 MB English chunk (the
first 4 MB of english_small.txt, ``count_chunk`` semantics).  Timed (best of
``--repeats``): pickle.dumps of the dict and pickle.loads; pack_counts +
pickle.dumps of the packed triple, and pickle.loads + unpack_counts into an
empty dict.  Python 3.9 syntax (PyPy runs it).
"""

import json
import os
import pickle
import subprocess
import sys

from harness import INTERPRETERS, corpus, implementation, timed, tree_env

CHUNK = 4 << 20


def measure_here(repeats):
    from refbpe.corpus.count import pack_counts, unpack_counts
    from refbpe.pretokenize.gpt2 import add_small_counts
    from refbpe.pretokenize.patterns import get_pattern

    with open(corpus("english_small"), "rb") as f:
        chunk = f.read(CHUNK)
    while chunk and (chunk[-1] & 0xC0) == 0x80:
        chunk = chunk[:-1]
    if chunk and chunk[-1] >= 0xC0:
        chunk = chunk[:-1]
    # What a worker holds after counting: short pieces under packed-int keys,
    # the rest under bytes keys; `counts` is the same table as one bytes dict.
    small, long_ = {}, {}
    get_pattern("gpt2").count_pretokens(chunk, long_, small)
    counts = add_small_counts(small, dict(long_))

    def unpack(packed):
        s, c = {}, {}
        unpack_counts(packed, s, c)
        return add_small_counts(s, c)

    proto = pickle.HIGHEST_PROTOCOL
    # warm-up (PyPy's JIT), then best of `repeats`
    for _ in range(2):
        pickle.loads(pickle.dumps(counts, proto))
        unpack(pickle.loads(pickle.dumps(pack_counts(small, long_), proto)))
    t_dump, blob = timed(lambda: pickle.dumps(counts, proto), repeats)
    t_load, _ = timed(lambda: pickle.loads(blob), repeats)
    t_pack, packed = timed(lambda: pack_counts(small, long_), repeats)
    t_pdump, pblob = timed(lambda: pickle.dumps(packed, proto), repeats)
    t_pload, loaded = timed(lambda: pickle.loads(pblob), repeats)
    t_unpack, again = timed(lambda: unpack(loaded), repeats)
    assert again == counts
    return {
        "interpreter": implementation(),
        "version": sys.version.split()[0],
        "chunk_bytes": len(chunk),
        "unique_words": len(counts),
        "dict": {
            "dumps_ms": t_dump * 1e3,
            "loads_ms": t_load * 1e3,
            "bytes": len(blob),
            "total_ms": (t_dump + t_load) * 1e3,
        },
        "packed": {
            "pack_ms": t_pack * 1e3,
            "dumps_ms": t_pdump * 1e3,
            "loads_ms": t_pload * 1e3,
            "unpack_ms": t_unpack * 1e3,
            "bytes": len(pblob),
            "total_ms": (t_pack + t_pdump + t_pload + t_unpack) * 1e3,
        },
    }


def run_all(repeats):
    results = []
    for name, exe in INTERPRETERS.items():
        if not os.path.exists(exe):
            results.append({"interpreter": name, "absent": True})
            continue
        p = subprocess.run(
            [exe, os.path.abspath(__file__), "--here", "--json", "--repeats", str(repeats)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            universal_newlines=True,
            env=tree_env(),
        )
        if p.returncode != 0:
            results.append({"interpreter": name, "error": p.stderr.strip().splitlines()[-1:]})
        else:
            results.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return results


def format_table(results):
    lines = [
        "Pickling one worker's word counts (4 MB English chunk), best of N, milliseconds",
        "%-8s %7s | %8s %8s %8s %6s | %7s %8s %8s %8s %8s %6s | %7s"
        % (
            "interp",
            "words",
            "dumps",
            "loads",
            "total",
            "MB",
            "pack",
            "dumps",
            "loads",
            "unpack",
            "total",
            "MB",
            "speedup",
        ),
    ]
    for r in results:
        if r.get("absent") or r.get("error"):
            lines.append(
                "%-8s %s" % (r["interpreter"], "absent" if r.get("absent") else "error: %s" % r["error"])
            )
            continue
        d, p = r["dict"], r["packed"]
        lines.append(
            "%-8s %7d | %8.1f %8.1f %8.1f %6.2f | %7.1f %8.1f %8.1f %8.1f %8.1f %6.2f | %6.1fx"
            % (
                r["interpreter"],
                r["unique_words"],
                d["dumps_ms"],
                d["loads_ms"],
                d["total_ms"],
                d["bytes"] / 1e6,
                p["pack_ms"],
                p["dumps_ms"],
                p["loads_ms"],
                p["unpack_ms"],
                p["total_ms"],
                p["bytes"] / 1e6,
                d["total_ms"] / p["total_ms"] if p["total_ms"] else float("nan"),
            )
        )
    lines.append(
        "(left: pickle of the dict; right: pack_counts + pickle, unpickle + unpack_counts; "
        "speedup = dict total / packed total)"
    )
    return "\n".join(lines)


def main(argv):
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 5
    results = [measure_here(repeats)] if "--here" in argv else run_all(repeats)
    if "--json" in argv:
        print(json.dumps(results[0] if "--here" in argv else results))
    else:
        print(format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
