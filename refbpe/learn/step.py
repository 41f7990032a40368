"""One merge step on the word table: (a, b) -> z at every listed occurrence, and its count changes.

Incremental counts
    Merging (a, b) -> z at an occurrence only changes the pairs that touch it:
    (x, a) becomes (x, z) on the left, (b, y) becomes (z, y) on the right.  When
    two occurrences are adjacent (``a b a b``) the pair between them, (b, a),
    becomes (z, z) once; the right-hand update is skipped and the left-hand
    update of the next occurrence does it, so nothing is counted twice.
    ``apply_merge`` notes the changes in a ``StepTables``, whose
    ``collect_pushing`` enters them in ``counts`` and ``where`` (the new pairs
    and their slots; the pairs they replace lose the same counts).

Left to right, without overlap
    ``where[p]`` is sorted, so a word's occurrences are merged left to right,
    as in ``naive.merge_word``.  In a run ``a a a`` merging (a, a) merges slots
    1-2 first; slot 2 is then DEAD, so its entry is skipped: ``aa a``.  The
    list is sorted because a pair gains occurrences only in one step (``merge``'s
    lazy deletion argument) and that step visits slots in increasing order: it
    records (x, z) at the left neighbour and (z, y) at the merged slot, both
    increasing with the merged slot; (z, z) is only ever recorded as a left
    neighbour.

Cost: O(1) per slot listed for the pair (a stale slot, one comparison), plus
O(1) per new pair collected and O(log H) per one pushed on a heap of H entries.
"""

import heapq
from array import array

from .table import DEAD

__all__ = ["StepTables", "apply_merge"]


class StepTables(object):
    """What one merge (a, b) -> z changes, indexed by the other token of each new pair.

    ``left_count[x]``, ``left_at[x]``: occurrences of the new pair (x, z) (old
    (x, a), or (b, a) when x is z) and their slots; ``right_count[y]``,
    ``right_at[y]``: of (z, y) (old (b, y)).  Every new pair contains z, so a
    flat table over token ids replaces five dict operations per occurrence
    (one word of 20 million ``a`` under PyPy: the first merge took 1.4 s with
    dicts; the whole phase is now under 2 s, perf/merge_engine.py --long);
    ``collect_pushing`` (``traced.TracedTables``' when tracing) turns
    the entries touched into counts and slot lists and clears them.
    """

    def __init__(self, vocab_size, code):
        self.code = code
        self.left_count, self.right_count = [0] * vocab_size, [0] * vocab_size
        self.left_at, self.right_at = [None] * vocab_size, [None] * vocab_size
        self.left_touched, self.right_touched = [], []

    def collect_pushing(self, counts, where, a, b, z, shift, heap, floor, make_entry):
        """The new pairs of this step entered in ``counts`` and ``where``, the pairs they
        replace losing the same counts; each new pair that reaches ``floor`` is pushed on
        ``heap`` as it is made (the others wait for a refill, ``heap.refill``): the untraced loop's.  No list
        of new pairs, no second pass over them: the merge phase of english_medium at 32,000
        took 5% less CPU (perf/compare.py --before main merge --vocab 32000)."""
        left_count, left_at = self.left_count, self.left_at
        for x in self.left_touched:
            c = left_count[x]
            q = ((b if x == z else x) << shift) | a
            counts[q] = (
                counts.get(q, 0) - c
            )  # a pair left untabled goes negative (``candidates.count_candidate_pairs``)
            p = (x << shift) | z
            counts[p] = c
            where[p] = left_at[x]
            left_at[x] = None
            if c >= floor:
                heapq.heappush(heap, make_entry(c, p))
        right_count, right_at = self.right_count, self.right_at
        for y in self.right_touched:
            c = right_count[y]
            q = (b << shift) | y
            counts[q] = counts.get(q, 0) - c
            p = (z << shift) | y
            counts[p] = c
            where[p] = right_at[y]
            right_at[y] = None
            if c >= floor:
                heapq.heappush(heap, make_entry(c, p))
        del self.left_touched[:], self.right_touched[:]


def apply_merge(sym, nxt, prv, freq, slots, a, b, z, step):
    """Merge (a, b) -> z at every live occurrence in ``slots``, noting the changes in ``step``.

    The old pairs' losses equal the new pairs' gains, side by side, so one
    table entry per side carries both (``StepTables.collect_pushing``).
    """
    code = step.code
    left_count, left_at, left_touched = step.left_count, step.left_at, step.left_touched
    right_count, right_at, right_touched = step.right_count, step.right_at, step.right_touched
    for i in slots:
        if sym[i] != a:
            continue
        j = nxt[i]
        if sym[j] != b:
            continue
        f = freq[i]
        k = prv[i]
        x = sym[k]
        if x >= 0:
            at = left_at[x]
            if at is None:  # empty, then appended: 1.3x array(code, [k]) (perf/micro.py merge-new-slots)
                at = left_at[x] = array(code)
                left_count[x] = f
                left_touched.append(x)
            else:
                left_count[x] += f
            at.append(k)
        r = nxt[j]
        y = sym[r]
        if y >= 0 and not (y == a and sym[nxt[r]] == b):
            at = right_at[y]
            if at is None:
                at = right_at[y] = array(code)
                right_count[y] = f
                right_touched.append(y)
            else:
                right_count[y] += f
            at.append(i)
        sym[i] = z
        sym[j] = DEAD
        nxt[i] = r
        prv[r] = i
