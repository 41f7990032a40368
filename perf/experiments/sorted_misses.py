"""Missed long pieces BPE'd per block of pieces, in sorted order, against the encoder as it is.

    .venv/bin/python perf/experiments/sorted_misses.py [--encodings o200k_base] [--repeats 2]
        [--texts english_medium,python_code,russian,chinese,mixed_multilingual]
    .venv/bin/python perf/experiments/sorted_misses.py --alone      # the misses' BPE in a loop of its own

Sorted, neighbouring pieces share their pair-table entries (`` программа``, `` программы``), so
a missed piece's look-ups would find them in the CPU's caches.  ``deferred_encode_bytes`` is
``PieceEncoder._encode_bytes`` with a block's missed long pieces (``_miss``) set aside, BPE'd
together in sorted order, and the block's ids appended in a second pass from what the first
kept (a piece's cached ids, or the missed piece; a cut CJK piece's ids in a list of their own).
Each run is a fresh PyPy process (``--worker``) that encodes the first 8 MB of a text (the first
call) and the next 8 MB (warm), CPU seconds of each (``harness.rusage``); the variants
alternate, medians are printed, and the ids of both variants must agree.  ``--alone``: the
pieces a warm o200k_base call of Russian sends to BPE, in call order, sorted and shuffled, each
order timed in a loop of its own in one process (best of 5).  What it gave is in the CHANGELOG
("Mixed text, source by source"): not kept.  Python 3.9 syntax.
"""

import argparse
import os
import random
import statistics
import sys

PERF = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PERF)

from harness import INTERPRETERS, PEERS, ROOT, load_tokenizer, read_corpus, run_result, rusage, tree_env  # noqa: E402

BLOCK = 1 << 15  # pieces per block


def deferred_encode_bytes(self, data, out, ends=None):
    """``PieceEncoder._encode_bytes`` with each block's long-piece misses BPE'd together, sorted."""
    from refbpe.encode.piece_ids import _UNCACHED_FROM

    if ends is None:
        ends = self._piece_ends(data)
    small, cache = self._small_cache, self._cache
    append = out.append
    start, b0, n = 0, 0, len(ends)
    while b0 < n:
        b1 = min(n, b0 + BLOCK)
        kept, pending = [], None
        for k in range(b0, b1):
            end = ends[k]
            if end - start < 8:
                key, p = 1, start
                while p < end:
                    key, p = (key << 8) | data[p], p + 1
                ids = small.get(key)
                if ids is None:
                    ids = self._small_miss(key, data, start, end)
                    small = self._small_cache
            elif end - start >= _UNCACHED_FROM and data[end - 3] >= 0xE0:
                ids = []
                self._extend_in_parts(data, start, end, ids)
            else:
                piece = data[start:end]
                ids = cache.get(piece)
                if ids is None:
                    pending = pending if pending is not None else {}
                    pending[piece] = None
                    ids = piece
            kept.append(ids)
            start = end
        if pending is not None:
            for piece in sorted(pending):
                pending[piece] = self._miss(piece)
            cache = self._cache
        for ids in kept:
            if type(ids) is bytes:
                ids = pending[ids]
            if type(ids) is int:
                append(ids)
            elif type(ids) is tuple:
                append(ids[0])
                append(ids[1])
            else:
                out.extend(ids)
        b0 = b1


def halves(text):
    """The first 8 MB of a corpus and the next 8 MB, each cut after a newline (``read_corpus``)."""
    head = read_corpus(text, 8 << 20)
    return head.decode("utf-8"), read_corpus(text, 16 << 20)[len(head) :].decode("utf-8")


def worker(variant, name, text):
    sys.path.insert(0, PEERS)
    from _common import emit, ids_digest

    if variant == "deferred":
        from refbpe.encode import piece_ids

        piece_ids.PieceEncoder._encode_bytes = deferred_encode_bytes
    tok = load_tokenizer(name)
    fields, ids = {}, []
    for phase, part in zip(("first", "warm"), halves(text)):
        r0 = rusage()
        ids += tok.encode_ordinary(part)
        r1 = rusage()
        fields[phase] = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    emit(digest=ids_digest(ids), **fields)


def alone():
    """The misses' BPE of a warm o200k_base call of Russian in three orders, one process."""
    from refbpe.encode import piece_ids

    tok = load_tokenizer("o200k_base")
    first, warm = halves("russian")
    tok.encode_ordinary(first)
    got, merge_piece = [], piece_ids.PieceEncoder._merge_piece

    def recorded(self, piece):
        got.append(piece)
        return merge_piece(self, piece)

    piece_ids.PieceEncoder._merge_piece = recorded
    tok.encode_ordinary(warm)
    piece_ids.PieceEncoder._merge_piece = merge_piece
    shuffled = list(got)
    random.Random(1).shuffle(shuffled)
    orders = {"call order": got, "sorted": sorted(got), "shuffled": shuffled}
    best = {k: [] for k in orders}
    for _ in range(5):
        for label, pieces in orders.items():
            r0 = rusage()
            for piece in pieces:
                tok._merge_piece(piece)
            r1 = rusage()
            best[label].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    print("o200k_base, russian: %d pieces BPE'd in a warm 8 MB call, best of 5 (CPU s)" % len(got))
    for label, times in best.items():
        print("  %-10s %.3f" % (label, min(times)))


def main(argv):
    if argv[:1] == ["--worker"]:
        return worker(*argv[1:4])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--encodings", default="o200k_base")
    p.add_argument("--texts", default="english_medium,python_code,russian,chinese,mixed_multilingual")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--alone", action="store_true", help="the misses' BPE alone, in three orders")
    args = p.parse_args(argv)
    if args.alone:
        sys.path.insert(0, ROOT)
        return alone()
    env = tree_env(ROOT)
    print("CPU seconds, medians of %d (first / warm), load average %.2f" % (args.repeats, os.getloadavg()[0]))
    for name in args.encodings.split(","):
        for text in args.texts.split(","):
            runs = {"as it is": [], "deferred": []}
            for _ in range(args.repeats):
                for variant in runs:
                    cmd = [INTERPRETERS["pypy"], __file__, "--worker", variant, name, text]
                    runs[variant].append(run_result(cmd, env, timeout=600)["result"])
            cells = []
            for variant, rs in runs.items():
                first = statistics.median(r["first"] for r in rs)
                warm = statistics.median(r["warm"] for r in rs)
                cells.append("%s %.3f / %.3f" % (variant, first, warm))
            same = len({r["digest"] for rs in runs.values() for r in rs}) == 1
            print(
                "%-11s %-19s %s  %s" % (name, text, "   ".join(cells), "same ids" if same else "IDS DIFFER")
            )
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
