"""How many bytes a warm encode call allocates through PyPy's nursery, and in which step.

    .venv-pypy/bin/python perf/experiments/nursery_bytes.py [--encoding o200k_base]
        [--texts russian,english_medium] [--mb 8]

Each text runs in a PyPy process of its own with a 1 MB nursery (``PYPY_GC_NURSERY``), so that
the count of minor collections (``gc.hooks``) is about the MB allocated: the process encodes the
first ``--mb`` MB (the caches fill), then, on the next ``--mb`` MB, it counts a warm
``encode_ordinary`` (its misses included), the scan alone (``_piece_ends``), the piece loop
alone with every piece cached (``_encode_bytes`` with the ends given, after the warm call), the
BPE of the long pieces the warm call missed (``_merge_piece``, each once; then again, and by
``merge_in_one_loop_function``, its loop inside a loop made one loop, the ids checked equal), and a
function that holds only a counting loop, called once per missed piece (what a call of a
function with a loop allocates by itself under PyPy's JIT).  CPU seconds beside each
(``harness.stopwatch``).  Under PyPy only; the figures are in the CHANGELOG ("What a warm call
allocates").  Python 3.9 syntax.
"""

import argparse
import gc
import os
import subprocess
import sys

PERF = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PERF)

from harness import INTERPRETERS, load_tokenizer, read_corpus, stopwatch, tree_env  # noqa: E402

# Three edits of ``PieceEncoder._merge_piece``'s source, once dedented, that make its loop inside a
# loop one loop (the rest stays the library's own): (found, replaced by) each.
ONE_LOOP_EDITS = [
    (
        "    while True:\n        best, q = none, -1\n        k, m = 1, len(chain)\n        while k < m:\n",
        "    best, q, k, m = none, -1, 1, len(chain)\n    while True:\n        if k < m:\n",
    ),
    ("            k += 2\n", "            k += 2\n            continue\n"),
    (
        "if can_left[new] and can_right[b] else none\n",
        "if can_left[new] and can_right[b] else none\n        best, q, k, m = none, -1, 1, len(chain)\n",
    ),
]


def merge_in_one_loop_function():
    """``_merge_piece`` with its scan for the lowest rank and its merge step in one ``while``
    loop instead of a loop inside a loop: the method's source, edited and compiled."""
    import inspect
    import textwrap

    from refbpe.encode import piece_ids

    source = textwrap.dedent(inspect.getsource(piece_ids.PieceEncoder._merge_piece))
    for found, replaced in ONE_LOOP_EDITS:
        assert source.count(found) == 1, "_merge_piece has changed: %r" % found
        source = source.replace(found, replaced)
    namespace = dict(vars(piece_ids))
    exec(
        compile(source.replace("def _merge_piece(", "def merge_in_one_loop("), "one_loop", "exec"), namespace
    )
    return namespace["merge_in_one_loop"]


def counting_loop(piece):
    k, n = 0, len(piece)
    while k < n:
        k += 1
    return k


def worker(name, text, mb):
    head = read_corpus(text, mb << 20)  # each cut after a newline
    data = read_corpus(text, 2 * mb << 20)[len(head) :]
    first, later = head.decode("utf-8"), data.decode("utf-8")
    tok = load_tokenizer(name)
    tok.encode_ordinary(first)
    seen = set(tok._cache) | set(tok._old)
    minors = [0]

    def on_minor(stats):
        minors[0] += stats.count

    gc.hooks.on_gc_minor = on_minor

    def step(label, run):
        minors[0] = 0
        with stopwatch() as watch:
            result = run()
        print("  %-40s %6d MB  %.3f CPU s" % (label, minors[0], watch.cpu))
        return result

    print("%s, %s, %d MB (1 MB nursery: minor collections = MB allocated)" % (name, text, mb))
    step("warm encode_ordinary", lambda: tok.encode_ordinary(later))
    ends = step("the scan (_piece_ends)", lambda: tok._piece_ends(data))
    step("the piece loop, every piece cached", lambda: tok._encode_bytes(data, [], ends))
    missed, start = [], 0
    for end in ends:
        piece = data[start:end]
        start = end
        if 8 <= len(piece) and piece not in seen and data[end - 3] < 0xE0:
            seen.add(piece)
            missed.append(piece)
    print("  (%d long pieces missed by the warm call)" % len(missed))
    step("their BPE (_merge_piece)", lambda: [tok._merge_piece(p) for p in missed])
    short = [p for p in missed if len(p) < 192]
    merge_in_one_loop = merge_in_one_loop_function()
    assert [merge_in_one_loop(tok, p) for p in short] == [tok._merge_piece(p) for p in short]
    step("their BPE (_merge_piece), again", lambda: [tok._merge_piece(p) for p in missed])
    step("the same by one loop (merge_in_one_loop)", lambda: [merge_in_one_loop(tok, p) for p in short])
    step("a function holding a loop, per piece", lambda: [counting_loop(p) for p in missed])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--encoding", default="o200k_base")
    p.add_argument("--texts", default="russian,english_medium")
    p.add_argument("--mb", type=int, default=8)
    p.add_argument("--worker", nargs=2, metavar=("ENCODING", "TEXT"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.mb)
        return
    env = tree_env(PYPY_GC_NURSERY="1MB")
    for text in args.texts.split(","):
        cmd = [INTERPRETERS["pypy"], os.path.abspath(__file__), "--mb", str(args.mb)]
        subprocess.run(cmd + ["--worker", args.encoding, text], env=env, check=True)


if __name__ == "__main__":
    main()
