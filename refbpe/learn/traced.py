"""The trace of a training run (``train --trace``): per merge its count, ties and runner-up.

``TracedTables`` are the engine's ``step.StepTables`` with three flat lists
beside them, filled as the merges are made: the merged pair's count, the
runner-up (the greatest count among the other pairs, read before the merge:
the heap's next entry, or, when none is left at the floor, the greatest count
below it, which the refill the next step would make anyway finds) and the
change in how many pairs have the merged count.  ``records`` works the ties
out from them backwards at the end.

Invariant: the heap's (``heap``) is kept while observing: every pair at the
floor or above has an entry, so the runner-up is exact, ties included.  It may
be below the floor: when the winner was the heap's last entry at the floor, the
greatest count left is off the heap, and the refill ``observe`` makes (the one
the next step would make) puts it on top, exactly.

Cost: two comparisons per changed pair and the heap's next entry per merge,
only when tracing; one pass over the counts at the end.  ``train --counts
--trace`` costs 1.01-1.05x the CPU of ``train --counts`` under PyPy on
english_medium at vocab 10,000, its merge phase 1.05x (medians of 5 rounds;
perf/certify_cost.py).
"""

import heapq

from .heap import refill
from .step import StepTables

__all__ = ["TracedTables"]


def _peek_best(heap, counts, where, floor):
    """The greatest current count on the heap without taking it, or 0 when the heap
    has no pair at ``floor`` or above left (``heap.pop_best``'s, the pair left on)."""
    while heap:
        entry = heap[0]
        current = counts.get(entry.pair, 0)
        if current == entry.count:
            return current
        if current > 0 and current >= floor:
            entry.count = current
            heapq.heapreplace(heap, entry)
        else:
            heapq.heappop(heap)
            if current == 0:
                where.pop(entry.pair, None)
    return 0


class TracedTables(StepTables):
    """``StepTables`` that also record the trace: per merge its count, the
    runner-up (read before the merge, ``observe``) and the change in how many
    pairs have the merged count (``collect``'s).

    ``ties``, how many pairs had the merged count (it included), is worked out
    backwards once the merges are done: the count of merge k is the greatest,
    so no pair is above it, and a run of merges at one count ends with no pair
    left at it (the next merge's count is lower) or with the training (a scan
    of the counts then); before merge k there were the pairs after it, plus
    the merged one, less the change.  The histogram of every count this replaces
    cost dict updates for every changed pair.
    """

    def __init__(self, vocab_size, code):
        StepTables.__init__(self, vocab_size, code)
        self.level = 0  # the count whose pairs ``collect`` tallies (0: none has it)
        # Per merge, in flat lists of ints (no object per merge under PyPy).
        self.merged_counts, self.runner_ups, self.changes = [], [], []

    def observe(self, best, heap, counts, where, floor, make_entry, last):
        """Note ``best``, just popped, before it is merged; returns the heap's floor.

        The runner-up is the heap's next entry when one is at ``floor`` or
        above.  Otherwise it is below the floor, and the greatest count of the
        pairs off the heap: the heap is refilled now, with ``best`` left out
        (its slots set aside), which the next step would have done anyway, and
        the floor lowered; at the ``last`` merge, one pass over the counts.
        """
        self.level = counts[best]
        self.merged_counts.append(self.level)
        runner_up = _peek_best(heap, counts, where, floor)
        if runner_up == 0 and floor > 1:
            slots = where.pop(best)
            if last:
                runner_up = max([c for p, c in counts.items() if p in where] or [0])
            else:
                floor = refill(heap, counts, where, make_entry)
                runner_up = heap[0].count if heap else 0
            where[best] = slots
        self.runner_ups.append(runner_up)
        return floor

    def collect_pushing(self, counts, where, a, b, z, shift, heap, floor, make_entry):
        """``StepTables.collect_pushing`` (the new pairs entered in ``counts`` and
        ``where``, the replaced ones losing the same counts, each new pair at
        ``floor`` or above pushed as it is made), and ``changes`` gets how many
        pairs reach ``level`` less how many leave it, the merged pair left out (two
        comparisons per entry).  One pass, no list of new pairs: with a list and a
        second pass for the pushes ``train --counts --trace`` took 1.07-1.11x the CPU
        of ``train --counts`` (english_medium, 10,000, PyPy; perf/certify_cost.py).
        The two loops are the untraced ones with the tally written in, not a method
        per entry: ``train_from_counts`` with a trace took 1.071-1.078x its CPU without
        one with the method, 1.049-1.056x written in (perf/certify_cost.py --repeats 5,
        its ``train --trace / train`` phase ratio, two runs of each tree)."""
        merged, level, change = (a << shift) | b, self.level, 0
        left_count, left_at = self.left_count, self.left_at
        for x in self.left_touched:
            c = left_count[x]
            q = ((b if x == z else x) << shift) | a
            old = counts[q]
            if old == level and q != merged:
                change -= 1
            counts[q] = old - c
            p = (x << shift) | z
            counts[p] = c
            if c == level:
                change += 1
            where[p] = left_at[x]
            left_at[x] = None
            if c >= floor:
                heapq.heappush(heap, make_entry(c, p))
        right_count, right_at = self.right_count, self.right_at
        for y in self.right_touched:
            c = right_count[y]
            q = (b << shift) | y
            old = counts[q]
            if old == level and q != merged:
                change -= 1
            counts[q] = old - c
            p = (z << shift) | y
            counts[p] = c
            if c == level:
                change += 1
            where[p] = right_at[y]
            right_at[y] = None
            if c >= floor:
                heapq.heappush(heap, make_entry(c, p))
        del self.left_touched[:], self.right_touched[:]
        self.changes.append(change)

    def records(self, counts):
        """``(count, ties, runner_up)`` per merge, ``counts`` the pairs' counts at the end."""
        merged, n = self.merged_counts, len(self.merged_counts)
        out = [None] * n
        level = merged[-1] if n else 0
        after = sum(1 for c in counts.values() if c == level)  # pairs at the last merge's count
        for k in range(n - 1, -1, -1):
            c = merged[k]
            if c != level:
                level, after = c, 0
            before = after + 1 - self.changes[k]
            out[k] = (c, before, self.runner_ups[k])
            after = before
        return out
