"""Replaying any merge list over word counts, with exact pair counts.

``PairReplay`` applies merges one at a time, theirs or ours, and reads the
maximum count and the tied pairs through a lazily cleaned max-heap.  Cost per
merge: O(occurrences changed x word length) for the words holding the pair
(each such word is re-merged whole with ``naive.merge_word``), plus
O(log P) per changed pair count.  ``bpe`` encodes one pre-token with ranked
merges, naively (O(n^2) per piece): it is used on small corpora only.
"""

import heapq

from ..naive import merge_word

__all__ = ["PairReplay", "bpe"]


class PairReplay(object):
    """Word counts with merges applied one at a time, and the pair counts kept exact.

    ``apply(pair)`` merges any pair (theirs may not be ours); ``max_count()`` and
    ``tied(count)`` read the current counts through a lazily cleaned max-heap.
    """

    def __init__(self, word_counts):
        self.words, self.freqs = [], []
        for w, n in word_counts.items():
            if n > 0 and len(w) > 1:
                self.words.append([w[i : i + 1] for i in range(len(w))])
                self.freqs.append(n)
        self.counts, self.where = {}, {}
        for k, (toks, n) in enumerate(zip(self.words, self.freqs)):
            for p in zip(toks, toks[1:]):
                self.counts[p] = self.counts.get(p, 0) + n
                s = self.where.get(p)
                if s is None:
                    self.where[p] = s = set()
                s.add(k)
        self.heap = [(-c, p) for p, c in self.counts.items()]
        heapq.heapify(self.heap)

    def count(self, pair):
        return self.counts.get(pair, 0)

    def max_count(self):
        heap, counts = self.heap, self.counts
        while heap:
            c, p = heap[0]
            if counts.get(p, 0) == -c:
                return -c
            heapq.heappop(heap)
        return 0

    def tied(self, count):
        """All pairs whose count is ``count`` (the maximum), sorted."""
        heap, counts = self.heap, self.counts
        found, popped = set(), []
        while heap and -heap[0][0] >= count:
            c, p = heapq.heappop(heap)
            if counts.get(p, 0) == -c:
                popped.append((c, p))
                if -c == count:
                    found.add(p)
        for e in popped:
            heapq.heappush(heap, e)
        return sorted(found)

    def apply(self, pair):
        a, b = pair
        merged = a + b
        counts, where, heap = self.counts, self.where, self.heap
        changed = set()
        for k in where.pop(pair, ()):
            toks = self.words[k]
            if not any(x == a and y == b for x, y in zip(toks, toks[1:])):
                continue
            n = self.freqs[k]
            for p in zip(toks, toks[1:]):
                counts[p] -= n
                changed.add(p)
            out = merge_word(toks, pair, merged)
            self.words[k] = out
            for p in zip(out, out[1:]):
                counts[p] = counts.get(p, 0) + n
                changed.add(p)
                s = where.get(p)
                if s is None:
                    where[p] = s = set()
                s.add(k)
        for p in changed:
            c = counts.get(p, 0)
            if c > 0:
                heapq.heappush(heap, (-c, p))
            else:
                counts.pop(p, None)


def bpe(piece, ranks):
    toks = [piece[i : i + 1] for i in range(len(piece))]
    while len(toks) > 1:
        best = None
        for p in zip(toks, toks[1:]):
            r = ranks.get(p)
            if r is not None and (best is None or r < best[0]):
                best = (r, p)
        if best is None:
            break
        a, b = best[1]
        toks = merge_word(toks, (a, b), a + b)
    return toks
