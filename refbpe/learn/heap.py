"""The heap of candidate pairs: their order (the tie rule) and lazy deletion.

An entry holds a packed pair and a count; ``a < b`` means a is merged first
(heapq is a min-heap): the greater count, then the tie rule, each rule one
entry class (``_Entry``: CS336's greatest bytes; ``_IdEntry``: the smallest
ids, rustbpe's and HF's, or the greatest; ``_KeyEntry``: the other byte rules
of ``tie_rules``), chosen once per run by ``entry_maker``.

Invariant (``merge`` argues why it holds): an entry's count is an upper bound
of its pair's current count, and every pair whose count is at least the floor
has an entry.  So stale entries are never removed: an entry is checked when
it reaches the top (``pop_best``), pushed back with its current count, or
dropped once it falls below the floor; ``refill`` builds the heap anew under a
lower floor when nothing at the floor is left.

Cost: O(log H) per entry pushed, popped or re-sifted (H entries); a refill,
one pass over the counts plus O(n) for the n entries heapified.
"""

import heapq

__all__ = ["entry_maker", "pop_best", "refill"]


class _Entry(object):
    """A heap entry; ``a < b`` means a is merged first (heapq is a min-heap)."""

    __slots__ = ("count", "left", "right", "pair")

    def __init__(self, count, left, right, pair):
        self.count = count
        self.left = left
        self.right = right
        self.pair = pair

    def __lt__(self, other):
        # Bytes cannot be negated for a tuple key, and under PyPy an entry class
        # with __lt__ is faster than tuple keys with negated counts anyway
        # (perf/experiments/merge_variants.py merge-entry-lt: 1.3x for the heap, 1.15x for the merge phase).
        if self.count != other.count:
            return self.count > other.count
        if self.left != other.left:
            return self.left > other.left
        return self.right > other.right


class _IdEntry(object):
    """A heap entry for the id tie rules (rustbpe, HF): equal counts go to the
    smallest ``tie``, the pair's ids (in the peer's layout) packed into one int."""

    __slots__ = ("count", "tie", "pair")

    def __init__(self, count, tie, pair):
        self.count = count
        self.tie = tie
        self.pair = pair

    def __lt__(self, other):
        if self.count != other.count:
            return self.count > other.count
        return self.tie < other.tie


class _KeyEntry(object):
    """A heap entry for the other byte rules (``tie_rules``): equal counts go to the
    smallest ``key`` (a tuple of byte strings)."""

    __slots__ = ("count", "key", "pair")

    def __init__(self, count, key, pair):
        self.count = count
        self.key = key
        self.pair = pair

    def __lt__(self, other):
        if self.count != other.count:
            return self.count > other.count
        return self.key < other.key


class _GreatestKeyEntry(_KeyEntry):
    """As ``_KeyEntry``; equal counts go to the greatest ``key``."""

    __slots__ = ()

    def __lt__(self, other):
        if self.count != other.count:
            return self.count > other.count
        return self.key > other.key


# tie -> (key of (left bytes, right bytes), entry class)
_KEYED = {
    "smallest-bytes": (lambda a, b: (a, b), _KeyEntry),
    "greatest-concat": (lambda a, b: (a + b, a, b), _GreatestKeyEntry),
    "smallest-concat": (lambda a, b: (a + b, a, b), _KeyEntry),
}


def entry_maker(tie, token_bytes, shift, mask):
    """``make(count, pair)``: the heap entry for ``tie``, chosen once per run.

    ``tie`` is ``"bytes"`` (CS336: the greatest ``(left bytes, right bytes)``),
    ``"ids"`` (the smallest ``(left id, right id)``, ids as here: the packed pair
    itself), ``"greatest-ids"`` (the greatest), a list ``rank`` over every id
    (the smallest ``(rank[left], rank[right])``), or one of the other byte rules
    of ``tie_rules`` (``"smallest-bytes"``, ``"greatest-concat"``,
    ``"smallest-concat"``).
    """
    if tie == "bytes":
        return lambda c, p: _Entry(c, token_bytes[p >> shift], token_bytes[p & mask], p)
    if tie == "ids":
        return lambda c, p: _IdEntry(c, p, p)
    if tie == "greatest-ids":
        return lambda c, p: _IdEntry(c, -p, p)
    if isinstance(tie, str):
        key, entry = _KEYED[tie]
        return lambda c, p: entry(c, key(token_bytes[p >> shift], token_bytes[p & mask]), p)
    rank = tie
    rank_shift = max(rank).bit_length()
    return lambda c, p: _IdEntry(c, (rank[p >> shift] << rank_shift) | rank[p & mask], p)


def pop_best(heap, counts, where, floor=0):
    """The packed pair with the greatest current key, or None when the heap has
    no pair at ``floor`` or above left (entries that fell below it are dropped)."""
    while heap:
        entry = heap[0]
        current = counts.get(entry.pair, 0)
        if current == entry.count:
            heapq.heappop(heap)
            return entry.pair
        if current > 0 and current >= floor:
            entry.count = current  # only ever lowered: re-sift it in place
            heapq.heapreplace(heap, entry)
        else:
            heapq.heappop(heap)
            if current == 0:
                where.pop(entry.pair, None)  # gone for good: free its slots
    return None


def refill(heap, counts, where, make_entry, floor=None):
    """Fill the empty ``heap`` with every pair whose count is ``floor`` or more
    (default: half the greatest count, at least 1); returns the floor.

    Pairs whose count fell to 0 are forgotten here (``counts``, ``where``);
    pairs without slots (refused by the rules) are left off and do not count
    towards the greatest: so the heap gets at least the greatest live pair, or
    the floor is 1 when none is left, and the merge loop ends.
    Cost: O(pairs in ``counts``), plus O(n) for the n entries heapified.
    """
    top, gone = 0, []
    for p, c in counts.items():
        if c == 0:
            gone.append(p)
        elif c > top and p in where:  # a refused pair (no slots) must not set the floor
            top = c
    for p in gone:
        del counts[p]
        where.pop(p, None)
    if floor is None:
        floor = max(1, top // 2)
    heap[:] = [make_entry(c, p) for p, c in counts.items() if c >= floor and p in where]
    heapq.heapify(heap)
    return floor
