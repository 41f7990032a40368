"""Warm encoding against tiktoken per source of a corpus: where a mixed text's time goes.

    .venv/bin/python perf/encode_sources.py                          # mixed_multilingual, o200k_base
    .venv/bin/python perf/encode_sources.py --encodings cl100k_base,gpt2 --repeats 5 --misses

A corpus with a ``.docs.tsv`` (index, bytes, source) is made of documents joined by the
special token; mixed_multilingual's come from a dozen sources (Russian literature, CLDR
annotations in every script, Gutenberg, Chinese poetry, Python and Rust code, man pages, ...).
Each run is one process per system (refbpe under PyPy, tiktoken under CPython) that encodes
the documents of the first ``--mb`` MB in one call (the JIT and the piece caches warm, as in
``perf/encode_patterns.py``'s warm call), then, source by source, the documents of the next
``--mb`` MB of each source joined by newlines, one ``encode_ordinary`` call per source, each
timed in CPU seconds.  Systems alternate for ``--repeats`` rounds; medians are printed with
``x tiktoken`` (tiktoken's seconds over refbpe's: above 1, refbpe is faster).  The ids of both
systems must agree for every source.

``--misses`` runs refbpe once more, counting the pieces each source's call sent to BPE
(a miss in both cache generations) and, of those, the ones BPE'd before in the same process
(``again``: a larger cache would have kept them; the rest are first seen).  The counting
process is not timed.  Every run's figures are saved in ``perf/results/encode-sources-*.json``.
"""

import argparse
import os
import statistics
import sys

from harness import (
    INTERPRETERS,
    PEERS,
    ROOT,
    corpus,
    load_tokenizer,
    run_result,
    save_results,
    stopwatch,
    tree_env,
)

SEPARATOR = "<|endoftext|>"


# -- the worker (its own process) ---------------------------------------------------------


def documents(path):
    """[(source, text)] of a corpus whose documents ``path + .docs.tsv`` lists in order."""
    with open(path, "rb") as f:
        texts = f.read().decode("utf-8").split(SEPARATOR)
    tsv = os.path.splitext(path)[0] + ".docs.tsv"
    with open(tsv, encoding="utf-8") as f:
        sources = [line.rstrip("\n").split("\t")[2] for line in f.readlines()[1:]]
    texts = [t for t in texts if t] if len(texts) == len(sources) + 1 else texts
    if len(texts) != len(sources):
        raise SystemExit("%s: %d documents, %d rows in %s" % (path, len(texts), len(sources), tsv))
    return [(s.split(":", 1)[0], t) for s, t in zip(sources, texts)]


def windows(docs, max_bytes):
    """(the warm-up text: the documents of the first ``max_bytes``, {source: text of its
    documents in the next ``max_bytes``})."""
    first, later, pos = [], {}, 0
    for source, text in docs:
        if pos < max_bytes:
            first.append(text)
        elif pos < 2 * max_bytes:
            later.setdefault(source, []).append(text)
        pos += len(text.encode("utf-8"))
    return "\n".join(first), {s: "\n".join(ts) for s, ts in later.items()}


def encoder(system, name):
    if system == "tiktoken":
        import tiktoken

        return tiktoken.get_encoding(name)
    return load_tokenizer(name)


def count_misses(tok):
    """Count the pieces ``tok`` sends to BPE, and those it had BPE'd before ({"bpe", "again"})."""
    from refbpe.encode import piece_ids

    counts, seen = {"bpe": 0, "again": 0}, set()
    encode_one = piece_ids.PieceEncoder._encode_one

    def counted(self, piece):
        counts["bpe"] += 1
        counts["again"] += piece in seen
        seen.add(piece)
        return encode_one(self, piece)

    piece_ids.PieceEncoder._encode_one = counted
    return counts


def worker(system, name, path, max_bytes, misses):
    sys.path.insert(0, PEERS)
    from _common import emit, ids_digest

    warm_up, later = windows(documents(path), max_bytes)
    tok = encoder(system, name)
    counts = count_misses(tok) if misses else None
    tok.encode_ordinary(warm_up)
    sources = {}
    for source in sorted(later):
        text = later[source]
        if counts is not None:
            counts["bpe"] = counts["again"] = 0
        with stopwatch() as clock:
            ids = tok.encode_ordinary(text)
        row = {"bytes": len(text.encode("utf-8")), "seconds": clock.cpu, "digest": ids_digest(ids)}
        if counts is not None:
            row.update(counts)
        sources[source] = row
    emit(sources=sources)


# -- the driver ---------------------------------------------------------------------------


def job(system, name, text, max_bytes, tree, misses=False):
    python = INTERPRETERS["pypy" if system == "refbpe" else "cpython"]
    cmd = [python, __file__, "--worker", system, name, corpus(text), str(max_bytes), "1" if misses else ""]
    return cmd, tree_env(tree)


def print_table(name, runs, counted):
    print("\n%s (CPU seconds, medians of %d)" % (name, len(runs["refbpe"])))
    head = "%-24s %8s %9s %9s %10s" % ("source", "KB", "refbpe", "tiktoken", "x tiktoken")
    print(head + ("  %8s %8s" % ("BPE'd", "again") if counted else ""))
    totals = [0.0, 0.0]
    for source in sorted(runs["refbpe"][0]):
        ours = statistics.median(r[source]["seconds"] for r in runs["refbpe"])
        theirs = statistics.median(r[source]["seconds"] for r in runs["tiktoken"])
        totals[0] += ours
        totals[1] += theirs
        digests = {r[source]["digest"] for system in runs for r in runs[system]}
        line = "%-24s %8d %9.4f %9.4f %9.2fx" % (
            source,
            runs["refbpe"][0][source]["bytes"] >> 10,
            ours,
            theirs,
            theirs / ours if ours else float("nan"),
        )
        if counted:
            line += "  %8d %8d" % (counted[source]["bpe"], counted[source]["again"])
        print(line + ("" if len(digests) == 1 else "  IDS DIFFER"))
    print("%-24s %8s %9.4f %9.4f %9.2fx" % ("all", "", totals[0], totals[1], totals[1] / totals[0]))
    sys.stdout.flush()


def main(argv):
    if argv[:1] == ["--worker"]:
        return worker(argv[1], argv[2], argv[3], int(argv[4]), bool(argv[5]))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--encodings", default="o200k_base", help="gpt2, cl100k_base, o200k_base (comma list)")
    p.add_argument("--text", default="mixed_multilingual", help="a corpus with a .docs.tsv")
    p.add_argument("--mb", type=float, default=8, help="MB of warm-up and of the measured window (default 8)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--misses", action="store_true", help="count refbpe's BPE'd pieces per source")
    p.add_argument("--tree", default=ROOT, help="the source tree refbpe is imported from")
    args = p.parse_args(argv)
    max_bytes = int(args.mb * 1e6)
    print("load average %.2f %.2f %.2f" % os.getloadavg())
    saved = {"args": vars(args), "load": [os.getloadavg()], "encodings": {}}
    for name in args.encodings.split(","):
        runs = {"refbpe": [], "tiktoken": []}
        for _ in range(args.repeats):
            for system in runs:
                cmd, env = job(system, name, args.text, max_bytes, args.tree)
                runs[system].append(run_result(cmd, env, timeout=600)["result"]["sources"])
        counted = None
        if args.misses:
            cmd, env = job("refbpe", name, args.text, max_bytes, args.tree, misses=True)
            counted = run_result(cmd, env, timeout=600)["result"]["sources"]
        print_table(name, runs, counted)
        saved["encodings"][name] = {"runs": runs, "misses": counted}
    print("load average %.2f %.2f %.2f" % os.getloadavg())
    saved["load"].append(os.getloadavg())
    print("results: %s" % save_results("encode-sources", saved))


if __name__ == "__main__":
    main(sys.argv[1:])
