"""The merge engine's old variants against its tricks: a self-contained copy of the engine with
one trick switched at a time (cases run as ``perf/micro.py``'s are, by ``harness.Cases``).

    PYTHONPATH=. .venv-pypy/bin/python perf/experiments/merge_variants.py --list
    PYTHONPATH=. .venv-pypy/bin/python perf/experiments/merge_variants.py merge-entry-lt

- ``merge-entry-lt``: ``heap._Entry.__lt__`` against tuple keys ``(-count, left, right, pair)``
  (the heap operations alone are timed as well);
- ``merge-where-lists``: ``where[p]`` as lists of word ids against sets;
- ``merge-in-place``: words edited in place against a new list per word.

The copy (``mini_learn``) is checked once against ``refbpe.learn.merge.learn_merges`` on
english_small before anything is timed, so a variant that no longer matches the engine stops
the run.  An experiment: the engine keeps the tricks; the copy exists only to switch them off.
Python 3.9 syntax (PyPy runs it).
"""

import heapq
import os
import sys

# Run as a script from perf/experiments/: the harness is one level up.
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import Cases, cpu_seconds, fmt_seconds  # noqa: E402
from harness import corpus as corpus_path  # noqa: E402

CASES = Cases()
case = CASES.case


class Entry(object):
    """heap._Entry: a heap entry, the greatest (count, left bytes, right bytes) first."""

    __slots__ = ("count", "left", "right", "pair")

    def __init__(self, count, left, right, pair):
        self.count, self.left, self.right, self.pair = count, left, right, pair

    def __lt__(self, other):
        if self.count != other.count:
            return self.count > other.count
        if self.left != other.left:
            return self.left > other.left
        return self.right > other.right


def pop_entry(heap, counts):
    """heap.pop_best: lazy deletion, a stale entry re-sifted with its current count."""
    while heap:
        entry = heap[0]
        current = counts.get(entry.pair, 0)
        if current == entry.count:
            heapq.heappop(heap)
            return entry.pair
        if current > 0:
            entry.count = current
            heapq.heapreplace(heap, entry)
        else:
            heapq.heappop(heap)
    return None


def tuple_key(count, left, right, pair):
    """The alternative: a tuple with the count negated (ties then go to the smaller bytes)."""
    return (-count, left, right, pair)


def pop_tuple(heap, counts):
    while heap:
        neg, left, right, pair = heap[0]
        current = counts.get(pair, 0)
        if current == -neg:
            heapq.heappop(heap)
            return pair
        if current > 0:
            heapq.heapreplace(heap, (-current, left, right, pair))
        else:
            heapq.heappop(heap)
    return None


def note_list(where, pair, w):
    """where[pair] as merge keeps it: a list, the word appended unless it is the last one."""
    s = where.get(pair)
    if s is None:
        where[pair] = [w]
    elif s[-1] != w:
        s.append(w)


def note_set(where, pair, w):
    """The alternative: a set."""
    s = where.get(pair)
    if s is None:
        where[pair] = {w}
    else:
        s.add(w)


def merge_in_place(words, freqs, counts, where, note, word_ids, a, b, z, shift):
    """step.apply_merge: (a, b) -> z in each listed word, edited in place; {new pair: count}."""
    fresh = {}
    for w in word_ids:
        ids = words[w]
        n = len(ids)
        i = 0
        while i < n - 1 and not (ids[i] == a and ids[i + 1] == b):
            i += 1
        if i >= n - 1:
            continue
        f = freqs[w]
        while i < n - 1:
            if ids[i] == a and ids[i + 1] == b:
                if i > 0:
                    left = ids[i - 1]
                    counts[((b if left == z else left) << shift) | a] -= f
                    pair = (left << shift) | z
                    fresh[pair] = fresh.get(pair, 0) + f
                    note(where, pair, w)
                if i + 2 < n and not (ids[i + 2] == a and i + 3 < n and ids[i + 3] == b):
                    counts[(b << shift) | ids[i + 2]] -= f
                    pair = (z << shift) | ids[i + 2]
                    fresh[pair] = fresh.get(pair, 0) + f
                    note(where, pair, w)
                ids[i] = z
                del ids[i + 1]
                n -= 1
            i += 1
    counts.update(fresh)
    return fresh


def merge_new_list(words, freqs, counts, where, note, word_ids, a, b, z, shift):
    """The alternative: the same updates, and a new list built for each word holding the pair."""
    fresh = {}
    for w in word_ids:
        ids = words[w]
        n = len(ids)
        i = 0
        while i < n - 1 and not (ids[i] == a and ids[i + 1] == b):
            i += 1
        if i >= n - 1:
            continue
        f = freqs[w]
        new = ids[:i]
        while i < n:
            if i < n - 1 and ids[i] == a and ids[i + 1] == b:
                if new:
                    left = new[-1]
                    counts[((b if left == z else left) << shift) | a] -= f
                    pair = (left << shift) | z
                    fresh[pair] = fresh.get(pair, 0) + f
                    note(where, pair, w)
                if i + 2 < n and not (ids[i + 2] == a and i + 3 < n and ids[i + 3] == b):
                    counts[(b << shift) | ids[i + 2]] -= f
                    pair = (z << shift) | ids[i + 2]
                    fresh[pair] = fresh.get(pair, 0) + f
                    note(where, pair, w)
                new.append(z)
                i += 2
            else:
                new.append(ids[i])
                i += 1
        words[w] = new
    counts.update(fresh)
    return fresh


def mini_learn(word_counts, num_merges, make=Entry, pop=pop_entry, note=note_list, apply=merge_in_place):
    """merge.learn_merges with the heap key, ``where`` and word edit passed in: (merges, heap seconds)."""
    token_bytes = [bytes([i]) for i in range(256)]
    shift = max(16, (256 + num_merges).bit_length())
    mask = (1 << shift) - 1
    words, freqs = [], []
    for word, n in word_counts.items():
        if len(word) > 1 and n > 0:
            words.append(list(word))
            freqs.append(n)
    counts, where = {}, {}
    for w, (ids, n) in enumerate(zip(words, freqs)):
        for k in range(len(ids) - 1):
            p = (ids[k] << shift) | ids[k + 1]
            counts[p] = counts.get(p, 0) + n
            note(where, p, w)
    t0 = cpu_seconds()
    heap = [make(c, token_bytes[p >> shift], token_bytes[p & mask], p) for p, c in counts.items()]
    heapq.heapify(heap)
    in_heap = cpu_seconds() - t0
    merges = []
    while len(merges) < num_merges:
        t0 = cpu_seconds()
        best = pop(heap, counts)
        in_heap += cpu_seconds() - t0
        if best is None:
            break
        a, b = best >> shift, best & mask
        z = len(token_bytes)
        token_bytes.append(token_bytes[a] + token_bytes[b])
        merges.append((token_bytes[a], token_bytes[b]))
        fresh = apply(words, freqs, counts, where, note, where.pop(best), a, b, z, shift)
        del counts[best]
        t0 = cpu_seconds()
        for p, c in fresh.items():
            heapq.heappush(heap, make(c, token_bytes[p >> shift], token_bytes[p & mask], p))
        in_heap += cpu_seconds() - t0
    return merges, in_heap


_WORDS = {}


def merge_runs(args, variants, heap_seconds=None):
    """Runs of mini_learn on english_small's word counts (checked once against learn_merges)."""
    if not _WORDS:
        from refbpe.corpus.count import count_words
        from refbpe.learn.merge import learn_merges

        path = corpus_path("english_small")
        _WORDS["w"] = words = count_words([path], special_tokens=["<|endoftext|>"], workers=1)
        if mini_learn(words, args.merges)[0] != learn_merges(words, args.merges):
            raise AssertionError("the engine copy here no longer matches refbpe.learn.merge.learn_merges")

    def run(label, kw):
        merges, in_heap = mini_learn(_WORDS["w"], args.merges, **kw)
        if heap_seconds is None:
            return merges
        heap_seconds.setdefault(label, []).append(in_heap)
        return len(merges)  # ties break the other way with tuples: only the number is equal

    runs = [(label, lambda label=label, kw=kw: run(label, kw)) for label, kw in variants]
    return runs, "english_small, %d merges" % args.merges


@case("merge-entry-lt", "merge.py _Entry.__lt__, 'about 2x': vs tuple keys (-count, left, right, pair)", 9, 2)
def bench_merge_entry_lt(args):
    heap = {}
    runs, note = merge_runs(args, [("entry", {}), ("tuple", {"make": tuple_key, "pop": pop_tuple})], heap)

    def with_heap_times():
        e, t = min(heap["entry"]), min(heap["tuple"])
        return "%s; heap operations alone: entry %s, tuple %s = %.2fx" % (
            note,
            fmt_seconds(e),
            fmt_seconds(t),
            t / e,
        )

    yield runs, with_heap_times


@case("merge-where-lists", "merge.py where[p], '~20% less merge time': lists vs sets of word ids", 9, 2)
def bench_merge_where_lists(args):
    yield merge_runs(args, [("lists", {}), ("sets", {"note": note_set})])


@case("merge-in-place", "merge.py _apply_merge, '~20%': words edited in place vs a new list per word", 9, 2)
def bench_merge_in_place(args):
    yield merge_runs(args, [("in place", {}), ("new list", {"apply": merge_new_list})])


def options(parser):
    parser.add_argument("--merges", type=int, default=9743, help="merges (default 9743: vocab 10,000)")


if __name__ == "__main__":
    sys.exit(CASES.main(__doc__, options=options))
