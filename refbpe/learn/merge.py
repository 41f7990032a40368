"""The merge engine: BPE merges from word counts, incrementally.

Input is ``{pre-token bytes: count}``; output is the merge list.  Each step
merges the pair with the greatest ``(count, left_bytes, right_bytes)``, or,
under the rustbpe and HF tie rules (``refbpe.learn.profiles``), the greatest count
and then the smallest pair of ids; the rule is one heap-entry class
(``heap.entry_maker``), chosen before the loop.

Its parts, each a module of ``refbpe.learn``:
    ``table``       the words laid end to end in one linked symbol array
                    (sym, nxt, prv, freq), and their byte pairs counted
    ``candidates``  a table of many distinct pairs counted for the candidates only
    ``step``        one merge step: (a, b) -> z at each listed slot, the counts updated
    ``heap``        the candidate pairs, best first: entry order, lazy deletion, refills
    ``inherited``   a given merge list replayed first (``refbpe.learn.extend``, SuperBPE)
    ``traced``      the trace (``train --trace``): count, ties and runner-up per merge

State, beside the word table
    counts[p]    sum of freqs over occurrences of pair p (Python ints: exact)
    where[p]     the slots where p has occurred (its left symbol's slot), in
                 increasing order; a superset: a slot that no longer starts p
                 is skipped when the list is used (``sym[i] != a`` or
                 ``sym[nxt[i]] != b``), never removed before
    heap         candidate pairs, best first

    Example: words {b"ab": 3, b"abc": 1} (a, b, c for 97, 98, 99; the table's
    example): where = {(a, b): [1, 4], (b, c): [5]}.

A pair is packed into one int, ``left << shift | right``: tuple-keyed dicts and
tuple heap keys cost about twice as much under PyPy.

Costs
    Building the state is linear in the total length of the unique words.  A
    merge costs O(1) per slot listed for its pair, plus O(log H) per new pair
    pushed on the heap (H entries; only pairs at the floor or above are
    pushed, and each halving of the floor costs one pass over the pairs).
    Every listed slot was recorded by an earlier change at that slot (the word
    table, or a merge that made the pair there) and is visited at most once
    (the list is dropped after its merge), so the whole run is O(total symbols
    + changed occurrences + pushes * log H): a merge never pays for the length
    of the words holding it (it used to: each listed word was scanned from its
    start, and ``del`` shifted its tail), and a 20-million-symbol word costs
    what 20 million changes cost.
    Memory: four ``array('i')`` entries per symbol (sym, nxt, prv, freq: 16 B)
    plus 4 B per listed slot; a list per word held 8 B per symbol under PyPy,
    plus the lists of words.

    One representation for short and long words, no length threshold: on
    ordinary text the slot lists are faster too, since a stale entry costs one
    comparison instead of a scan of its word.  Measured by perf/merge_engine.py
    under PyPy (in-process, same run, a loaded machine), against the
    list-per-word engine: english_medium at 10,000 merges 4.26 s against 6.77 s,
    peak 214 MB against 279 MB; english_small 2.38 s against 2.42 s, 117 MB
    against 127 MB.

Lazy deletion (the heapq docs' "priority queue implementation notes")
    Stale heap entries are not removed; an entry is checked when it is popped.
    This is valid because a pair's count never increases after the step that
    created its newer token: new adjacencies only form next to the token just
    made, so a pair (x, y) gains occurrences only during the merge that created
    max(x, y).  Counts of older pairs only fall.  So every stored count is an
    upper bound of the true count, the best stored entry bounds every true key
    from above, and a popped entry whose count is still current is the true
    best.  A popped entry whose count fell is pushed back with the current count
    (or dropped at zero, with its position list).  New pairs are pushed once, at
    the end of the step that made them, when their count is final.  The same
    fact makes ``where`` complete: every current occurrence of p was recorded
    in the step that made p, and none is recorded twice.

A floor under the heap
    Most pairs never come near the top: at 32,000 merges on english_medium
    only a fifth of the new pairs ever reach the count of the last merge.  So
    the heap holds only the pairs whose count is at least ``floor``; the others
    wait in ``counts`` (with their slots in ``where``), and an entry whose count
    falls below the floor leaves the heap.  Invariant: every pair with count >=
    floor has an entry on the heap (with an upper bound of its count), so a
    current entry at the top with count >= floor is the true best, ties
    included.  When the heap has nothing at or above the floor left
    (``heap.pop_best`` returns None), ``heap.refill`` lowers the floor to half the
    greatest count and puts every pair at or above it on the heap: one pass
    over ``counts`` per halving, about 15 passes from the first merge to the
    last.  Measured by ``perf/compare.py --before main merge --vocab 32000``
    under PyPy (CPU seconds, fastest of 3, a loaded machine), with the word
    table filled in place (``table.link_words``): the merge phase of english_medium
    at 32,000 in 1.72 s instead of 2.23 s; the heap ends with 14,000 entries
    instead of 240,000.  A traced run keeps the floor too: the runner-up is
    the heap's next entry, or, when none is left at the floor, the greatest
    count below it, which the refill the next step would make anyway finds
    (``traced.TracedTables.observe``).
"""

from .candidates import count_candidate_pairs, table_left_out_pairs
from .heap import entry_maker, pop_best, refill
from .inherited import replay, replay_in_pieces, words_are_long
from .step import StepTables, apply_merge
from .table import count_byte_pairs, link_words
from .traced import TracedTables

__all__ = ["learn_merges", "merges_possible"]


def learn_merges(
    word_counts, num_merges, progress=None, tie="bytes", min_count=1, trace=None, inherited=(), rules=None
):
    """Return up to ``num_merges`` merges ``[(left_bytes, right_bytes), ...]``.

    ``inherited`` (``refbpe.learn.extend``): merges applied first, in their order,
    whatever the rule would choose (``inherited.replay``: on the words' own table, or
    on their pieces when the words are long, ``inherited.words_are_long``), then the loop
    continues; they are the first merges returned and count towards ``num_merges``.
    ``rules`` (``refbpe.learn.profiles``' SuperBPE): an object whose ``skip_absent``
    (True: an inherited merge whose tokens or pair never occurred is left out,
    as SuperBPE's trainer does) and ``refuse(token_bytes)`` (True: the best
    pair is dropped for good instead of merged) change those two steps.

    Fewer are returned when no pair is left, or when the best pair occurs
    fewer than ``min_count`` times (HF's ``min_frequency``).  ``tie`` picks the
    tie rule (``heap.entry_maker``; ``refbpe.learn.profiles`` chooses it): the default is
    CS336's.  ``progress(done, total)``, if given, is called now and then.
    ``trace``, a list, receives ``(count, ties, runner_up)`` per merge: the
    merged pair's count, how many pairs had that count (it included), and the
    greatest count among the other pairs (``traced.TracedTables``: two comparisons
    per changed pair and the heap's next entry per merge, only when tracing;
    the merge phase about 5% more CPU under PyPy on english_medium at vocab
    10,000, perf/certify_cost.py).

    >>> learn_merges({b"abab": 2, b"ab": 1}, 2)
    [(b'a', b'b'), (b'ab', b'ab')]

    Tables are sized by the merges that can exist (``merges_possible``), not by
    ``num_merges``: any request up to 2**63 costs what the words allow.
    """
    if inherited and trace is not None:
        raise ValueError("a trace records the rule's choices; inherited merges are not chosen")
    if len(inherited) > num_merges:
        raise ValueError("%d inherited merges exceed the %d merges wanted" % (len(inherited), num_merges))
    # Inherited merges each make a token, occurring or not; the rest are bounded by the words.
    num_merges = min(num_merges, len(inherited) + merges_possible(word_counts))
    token_bytes = [bytes([i]) for i in range(256)]
    shift = max(16, (256 + num_merges).bit_length())
    mask = (1 << shift) - 1

    skip_absent = rules is not None and rules.skip_absent
    below = 0  # pairs whose count is under this were left out of the tables (``count_candidate_pairs``)
    on_pieces = bool(inherited) and words_are_long(word_counts)
    if on_pieces:
        merges, (sym, nxt, prv, freq) = replay_in_pieces(
            word_counts, inherited, 256 + num_merges, token_bytes, shift, skip_absent
        )
        counts, where, below = count_candidate_pairs(sym, freq, shift, num_merges - len(merges))
    else:
        sym, nxt, prv, freq = link_words(word_counts.items(), 256 + num_merges)
        counts, where = count_byte_pairs(sym, freq, shift)
    if trace is None:
        step = StepTables(256 + num_merges, sym.typecode)
    else:
        step = TracedTables(256 + num_merges, sym.typecode)
    if inherited and not on_pieces:
        merges = replay(
            inherited, (sym, nxt, prv, freq, counts, where), token_bytes, shift, step, skip_absent
        )
    elif not inherited:
        merges = []
    make_entry = entry_maker(tie, token_bytes, shift, mask)
    heap = []
    floor, below = _refill_all(heap, counts, where, make_entry, below, (sym, nxt, freq, shift))

    refuse = rules.refuse if rules is not None else None
    while len(merges) < num_merges:
        best = pop_best(heap, counts, where, floor)
        if best is None and floor > 1:
            floor, below = _refill_all(heap, counts, where, make_entry, below, (sym, nxt, freq, shift))
            continue
        if best is None or counts[best] < min_count:
            break
        if refuse is not None and refuse(token_bytes[best >> shift] + token_bytes[best & mask]):
            where.pop(best, None)  # never offered again (``heap.refill`` skips it): it gains no occurrence
            continue
        if trace is not None:
            floor = step.observe(best, heap, counts, where, floor, make_entry, len(merges) + 1 == num_merges)
        a, b = best >> shift, best & mask
        z = len(token_bytes)
        token_bytes.append(token_bytes[a] + token_bytes[b])
        merges.append((token_bytes[a], token_bytes[b]))
        apply_merge(sym, nxt, prv, freq, where.pop(best), a, b, z, step)
        step.collect_pushing(counts, where, a, b, z, shift, heap, floor, make_entry)
        del counts[best]
        if progress is not None and len(merges) % 100 == 0:
            progress(len(merges), num_merges)
    if progress is not None:
        progress(len(merges), num_merges)
    if trace is not None:
        trace.extend(step.records(counts))
    return merges


def _refill_all(heap, counts, where, make_entry, below, table):
    """``heap.refill``, then, if its floor fell under ``below`` (pairs under it may be
    missing from ``counts``), the missing pairs tabled from ``table`` (sym, nxt,
    freq, shift) and ``heap.refill`` again; returns (floor, below: 0 once all are in)."""
    floor = refill(heap, counts, where, make_entry)
    if floor >= below:
        return floor, below
    table_left_out_pairs(table, counts, where)
    return refill(heap, counts, where, make_entry), 0


def merges_possible(word_counts):
    """An upper bound on the merges ``word_counts`` allows: each merge removes one
    symbol from every word it touches, and a word of n bytes has n - 1 to lose.

    >>> merges_possible({b"abab": 2, b"ab": 1, b"a": 5})
    4
    """
    return sum(len(w) - 1 for w, n in word_counts.items() if len(w) > 1 and n > 0)
