"""Checking another trainer's merges on the engine's state (``verify.certify``'s fast path).

Their merges are applied in their order, whatever the rule would choose, and
before each the rule's own choice is read (``MergeCheck.choice``).  Their
order is given, so no heap of every pair is kept: pairs wait in buckets by
count (``levels``, a heap of the counts that have a bucket, plain ints), and
a bucket holding two live pairs of the top count is ordered by the tie rule
(``heap.entry_maker``'s entries) the first time it is read.

Invariant: each pair sits in a bucket at an upper bound of its current count,
as on the engine's heap (``merge``'s lazy deletion argument: counts only fall
after the step that made a pair); only the buckets above the pair being
checked are read, and stale entries there move down to their current count.

Cost: the engine's merge steps (``step.apply_merge``) without its heap: a new
pair costs a dict lookup and an append; slot lists are kept only for the pairs
their list merges later (the rest are never applied).
"""

import heapq

from .heap import entry_maker
from .inherited import well_formed
from .step import StepTables, apply_merge
from .table import count_byte_pairs, link_words

__all__ = ["MergeCheck"]


class MergeCheck(object):
    """Another trainer's merges applied in their order on the engine's state, with
    the rule's choice read before each.

    ``merges`` must make a new token each and use only tokens made before
    (``valid``); ``tie`` is the engine's (``"bytes"``, ``"ids"`` or a rank
    list over every id the merges make).  ``choice()`` is the pair the rule
    takes now, ``apply(k)`` merges their k-th pair, whatever it is.
    """

    def __init__(self, word_counts, merges, tie="bytes"):
        self.token_bytes = [bytes([i]) for i in range(256)]
        self.shift = shift = max(16, (256 + len(merges)).bit_length())
        self.mask = (1 << shift) - 1
        self.sym, self.nxt, self.prv, self.freq = link_words(word_counts.items(), 256 + len(merges))
        self.counts, self.where = count_byte_pairs(self.sym, self.freq, shift)
        self.make_entry = entry_maker(tie, self.token_bytes, shift, self.mask)
        self.merges = merges
        self.packed = _packed_merges(merges, shift)
        self.step = _CheckTables(256 + len(merges), self.sym.typecode, set(self.packed))
        self.plain, self.ordered, self.levels = {}, {}, []
        for p, c in self.counts.items():
            self._add(c, p)

    valid = staticmethod(well_formed)

    def pair_of(self, k):
        """The packed pair of their k-th merge (both sides are tokens by then)."""
        return self.packed[k]

    def bytes_of(self, p):
        return (self.token_bytes[p >> self.shift], self.token_bytes[p & self.mask])

    def count(self, p):
        return self.counts.get(p, 0)

    def _add(self, c, p):
        bucket = self.plain.get(c)
        if bucket is not None:
            bucket.append(p)
            return
        ordered = self.ordered.get(c)
        if ordered is not None:
            heapq.heappush(ordered, self.make_entry(c, p))
            return
        self.plain[c] = [p]
        heapq.heappush(self.levels, -c)

    def choice(self):
        """The packed pair the tie rule takes now, or None when no pair is left."""
        levels, counts, plain, ordered = self.levels, self.counts, self.plain, self.ordered
        while levels:
            top = -levels[0]
            heap = ordered.get(top)
            if heap is None:
                live = []
                for p in plain.pop(top):
                    c = counts.get(p, 0)
                    if c == top:
                        live.append(p)
                    elif c > 0:
                        self._add(c, p)  # below ``top``: the levels' top stays
                if len(live) == 1:
                    plain[top] = live
                    return live[0]
                if not live:
                    heapq.heappop(levels)
                    continue
                heap = ordered[top] = [self.make_entry(top, p) for p in live]
                heapq.heapify(heap)
            while heap:
                p = heap[0].pair
                c = counts.get(p, 0)
                if c == top:
                    return p
                heapq.heappop(heap)
                if c > 0:
                    self._add(c, p)
            del ordered[top]
            heapq.heappop(levels)
        return None

    def tied(self, count):
        """Every packed pair whose count is ``count`` (a scan: for reports only)."""
        return [p for p, c in self.counts.items() if c == count]

    def runner_up(self, p):
        """The greatest count among the pairs other than ``p``."""
        best = 0
        for q, c in self.counts.items():
            if q != p and c > best:
                best = c
        return best

    def apply(self, k):
        """Merge their k-th pair everywhere it occurs (nowhere: only its token is made)."""
        a, b = self.merges[k]
        p = self.packed[k]
        x, y = p >> self.shift, p & self.mask
        z = len(self.token_bytes)
        self.token_bytes.append(a + b)
        slots = self.where.pop(p, None)
        if slots is None or self.counts.get(p, 0) <= 0:
            return
        apply_merge(self.sym, self.nxt, self.prv, self.freq, slots, x, y, z, self.step)
        self.step.collect_into(self, x, y, z)
        del self.counts[p]


def _packed_merges(merges, shift):
    """Each merge as a packed pair of ids (merge k makes id 256 + k)."""
    id_of = {bytes([i]): i for i in range(256)}
    packed = []
    for a, b in merges:
        packed.append((id_of[a] << shift) | id_of[b])
        id_of[a + b] = len(id_of)
    return packed


class _CheckTables(StepTables):
    """``step.StepTables`` for ``MergeCheck``: the new pairs go straight into its
    buckets, and only the slot lists of ``later`` pairs (their merges) are kept."""

    def __init__(self, vocab_size, code, later):
        StepTables.__init__(self, vocab_size, code)
        self.later = later

    def collect_into(self, check, a, b, z):
        """The new pairs of this step (each (x, z), then each (z, y)) entered in ``check``."""
        shift, left_count, left_at = check.shift, self.left_count, self.left_at
        for x in self.left_touched:
            q, p = ((b if x == z else x) << shift) | a, (x << shift) | z
            self._enter(check, q, p, left_count[x], left_at[x])
            left_at[x] = None
        right_count, right_at = self.right_count, self.right_at
        for y in self.right_touched:
            q, p = (b << shift) | y, (z << shift) | y
            self._enter(check, q, p, right_count[y], right_at[y])
            right_at[y] = None
        del self.left_touched[:], self.right_touched[:]

    def _enter(self, check, q, p, c, slots):
        """New pair ``p``, of count ``c`` at ``slots``, in ``check``'s tables and buckets; the
        pair ``q`` it replaces loses ``c``.  (No loop: PyPy's JIT inlines it into the two above.)"""
        counts = check.counts
        # A pair left untabled goes negative (``candidates.count_candidate_pairs``).
        counts[q] = counts.get(q, 0) - c
        counts[p] = c
        if p in self.later:
            check.where[p] = slots
        bucket = check.plain.get(c)
        if bucket is None:
            check._add(c, p)
        else:
            bucket.append(p)
