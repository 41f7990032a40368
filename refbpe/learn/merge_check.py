"""Checking another trainer's merges on the engine's state (``verify.certify``'s fast path).

Their merges are applied in their order, whatever the rule would choose, and
before each the rule's own choice is read from the engine's own heap of
candidate pairs, with its floor (``merge``'s docstring: only the pairs at or
above the floor are on the heap, and ``heap.refill`` lowers it when nothing
there is left).  The rule's choice is popped as the engine pops it; when their
pair is another, the choice goes back on the heap at its count, which is
current, so the engine's invariant holds after any merge: every pair at or
above the floor has an entry, its count an upper bound.

Cost: the engine's, step for step (``step.apply_merge``, ``heap.pop_best``,
``heap.refill``), plus one push for each step where their pair is not the
rule's choice.  Before, pairs waited in buckets by count, every pair in one:
a dict lookup and an append per new pair, where the engine's floor costs one
comparison (perf/certify_cost.py, PyPy, english_medium, vocab 10,000: the
check's phase 1.14x the engine's; CHANGELOG, "Certify, traces and split").
"""

import heapq

from .heap import entry_maker, pop_best, refill
from .inherited import well_formed
from .step import StepTables, apply_merge
from .table import count_byte_pairs, link_words

__all__ = ["MergeCheck"]


class MergeCheck(object):
    """Another trainer's merges applied in their order on the engine's state, with
    the rule's choice read before each.

    ``merges`` must make a new token each and use only tokens made before
    (``valid``); ``tie`` is the engine's (``"bytes"``, ``"ids"`` or a rank
    list over every id the merges make).  ``check_all`` applies them all, each
    whatever the rule would choose, and names the steps where it chose another;
    ``choice()`` is the pair the rule takes now.
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
        self.step = StepTables(256 + len(merges), self.sym.typecode)
        self.heap = []
        self.floor = refill(self.heap, self.counts, self.where, self.make_entry)

    valid = staticmethod(well_formed)

    def pair_of(self, k):
        """The packed pair of their k-th merge (both sides are tokens by then)."""
        return self.packed[k]

    def bytes_of(self, p):
        return (self.token_bytes[p >> self.shift], self.token_bytes[p & self.mask])

    def count(self, p):
        return self.counts.get(p, 0)

    def choice(self):
        """The packed pair the tie rule takes now, or None when no pair is left (it stays on
        the heap: for the pair after their last merge)."""
        best, self.floor = _pop_choice(self.heap, self.counts, self.where, self.floor, self.make_entry)
        if best is not None:
            heapq.heappush(self.heap, self.make_entry(self.counts[best], best))
        return best

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

    def check_all(self, min_count, failed):
        """Apply every merge of their list in order, calling ``failed(k, theirs, choice)``
        (packed pairs; ``choice`` None when no pair is left) before their k-th merge
        where the rule takes another pair or theirs occurs fewer than ``min_count`` times.

        The engine's loop (``merge.learn_merges``), with their pair merged where it would
        merge its choice: one function over local names, as there.  Measured by
        perf/experiments/certify_loop.py (PyPy, english_medium, vocab 10,000, a cold process
        each, medians of 6-8, six runs): this loop 0.96-1.05x the engine's CPU, the engine's
        own cost within the noise; the same steps driven a merge at a time from a loop
        outside, as ``certify`` drove them before, 1.03-1.12x.
        """
        heap, counts, where, make_entry, step = self.heap, self.counts, self.where, self.make_entry, self.step
        sym, nxt, prv, freq = self.sym, self.nxt, self.prv, self.freq
        shift, mask, token_bytes, packed = self.shift, self.mask, self.token_bytes, self.packed
        floor = self.floor
        merges = self.merges
        for k in range(len(merges)):
            best, floor = _pop_choice(heap, counts, where, floor, make_entry)
            a, b = merges[k]
            p = packed[k]
            if best != p or counts[p] < min_count:
                failed(k, p, best)
            if best is not None and best != p:
                heapq.heappush(heap, make_entry(counts[best], best))  # not merged: back on the heap
            z = len(token_bytes)
            token_bytes.append(a + b)
            slots = where.pop(p, None)
            if slots is None or counts.get(p, 0) <= 0:
                continue  # their pair does not occur: only its token is made
            x, y = p >> shift, p & mask
            apply_merge(sym, nxt, prv, freq, slots, x, y, z, step)
            step.collect_pushing(counts, where, x, y, z, shift, heap, floor, make_entry)
            del counts[p]
        self.floor = floor


def _pop_choice(heap, counts, where, floor, make_entry):
    """(the rule's choice popped, or None when no pair is left; the floor), the floor lowered
    by ``heap.refill`` while nothing at it is left, as the engine's loop does."""
    best = pop_best(heap, counts, where, floor)
    while best is None and floor > 1:
        floor = refill(heap, counts, where, make_entry)
        best = pop_best(heap, counts, where, floor)
    return best, floor


def _packed_merges(merges, shift):
    """Each merge as a packed pair of ids (merge k makes id 256 + k)."""
    id_of = {bytes([i]): i for i in range(256)}
    packed = []
    for a, b in merges:
        packed.append((id_of[a] << shift) | id_of[b])
        id_of[a + b] = len(id_of)
    return packed
