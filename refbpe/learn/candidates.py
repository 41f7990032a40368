"""Candidate pairs: of a table of many distinct pairs, only those that may be merged soon.

SuperBPE's stage-2 words repeat little: english_medium's hold 18 million
symbols and millions of distinct pairs, of which a few thousand are merged.
So the table laid out after a replay on pieces (``inherited``) is counted in
two steps: ``count_candidate_pairs`` tables only the pairs that may be chosen
in the next merges, and says under which count a pair may be missing;
``table_left_out_pairs`` tables the rest once the merges reach under that
count (``merge``'s refill).

Invariant: every pair left out of ``counts`` and ``where`` counts fewer than
``below``, and a pair's count only falls after the table is laid out (a merge
makes pairs with its new token only), so no pair at ``below`` or above is ever
missing.  A missing pair that a merge touched has a negative count in
``counts`` (its losses, entered by ``step``): it is tabled as missing.

Cost: two passes over the table, dict work for the candidates only; the rest,
one more pass if the merges ever go under ``below``.
"""

from array import array

from .table import SEP

__all__ = ["count_candidate_pairs", "table_left_out_pairs"]

_CANDIDATES = 4096  # pairs tabled at least, beyond ``_CANDIDATES_PER_MERGE`` per merge wanted
_CANDIDATES_PER_MERGE = 8
_SKETCH_BITS = 22  # at most 4 million buckets


def count_candidate_pairs(sym, freq, shift, wanted):
    """(counts, where, below) of a freshly linked table of any ids (neighbours
    are neighbouring slots; ``table.count_byte_pairs`` is for bytes): {pair: count} and
    {pair: array of slots, increasing} of only the pairs that may be chosen in
    the next ``wanted`` merges, and the count under which a pair may have been
    left out.

    A first pass adds each pair's count into a bucket of a sketch (a hash of
    the pair picks it; pairs sharing a bucket add up, so a bucket bounds its
    pairs' counts from above); ``below`` is the least power of two that at
    most ``_CANDIDATES_PER_MERGE * wanted + _CANDIDATES`` buckets reach, and a
    second pass tables every pair whose bucket reaches it.  So every pair left
    out counts fewer than ``below``: its count only falls afterwards (a merge
    makes pairs with its new token only), and ``table_left_out_pairs`` tables the rest
    before the merges go under ``below``.
    Cost: two passes over the table, dict work for the candidates only.
    """
    n = len(sym)
    bits = max(8, min(_SKETCH_BITS, n.bit_length() + 1))
    mask = (1 << bits) - 1
    sketch = [0] * (mask + 1)
    left = SEP
    for i in range(n):
        right = sym[i]
        if left >= 0 and right >= 0:
            sketch[_bucket(left, right, mask)] += freq[i]
        left = right
    below = _least_reached(sketch, _CANDIDATES_PER_MERGE * wanted + _CANDIDATES)
    where = {}
    code = sym.typecode
    left = SEP
    for i in range(n):
        right = sym[i]
        if left >= 0 and right >= 0 and sketch[_bucket(left, right, mask)] >= below:
            p = (left << shift) | right
            slots = where.get(p)
            if slots is None:
                slots = where[p] = array(code)
            slots.append(i - 1)
        left = right
    return _slot_counts(where, freq), where, below


def _bucket(left, right, mask):
    """The sketch bucket of pair (left, right): a multiplicative hash (products under 2**53)."""
    return (((left * 0x9E3779B1) ^ (right * 0x85EBCA77)) >> 7) & mask


def _slot_counts(where, freq):
    """{pair: count} summed off the slot lists ``where``: one dict lookup per slot fewer
    than counting as the slots are found."""
    counts = {}
    for p, slots in where.items():
        c = 0
        for i in slots:
            c += freq[i]
        counts[p] = c
    return counts


def _least_reached(sketch, most):
    """The least power of two (1 at least) that at most ``most`` of ``sketch``'s values reach."""
    reach = [0] * 64
    for v in sketch:
        if v > 0:
            reach[v.bit_length() - 1] += 1  # 2**k <= v < 2**(k + 1)
    total = 0
    for k in range(63, -1, -1):
        total += reach[k]
        if total > most:
            return 1 << (k + 1)
    return 1


def table_left_out_pairs(table, counts, where):
    """Enter in ``counts`` and ``where`` every pair of ``table`` (sym, nxt, freq,
    shift) that they lack (``count_candidate_pairs`` left it out): its count and
    its slots, increasing.  Cost: one pass over the table."""
    sym, nxt, freq, shift = table
    rest = {}
    code = sym.typecode
    for i in range(len(sym)):
        x = sym[i]
        if x >= 0:
            y = sym[nxt[i]]
            if y >= 0:
                p = (x << shift) | y
                if counts.get(p, -1) < 0:  # never tabled (or gone negative since)
                    slots = rest.get(p)
                    if slots is None:
                        slots = rest[p] = array(code)
                    slots.append(i)
    counts.update(_slot_counts(rest, freq))
    where.update(rest)
