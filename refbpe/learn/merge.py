"""The merge engine: BPE merges from word counts, incrementally.

Input is ``{pre-token bytes: count}``; output is the merge list.  Each step
merges the pair with the greatest ``(count, left_bytes, right_bytes)``, or,
under the rustbpe and HF tie rules (``refbpe.learn.profiles``), the greatest count
and then the smallest pair of ids; the rule is one heap-entry class
(``_Entry``, ``_IdEntry``), chosen before the loop.

State: all unique words laid end to end in one linked symbol array
    sym[i]       the token id in slot i; SEP in the slot before and after every
                 word, DEAD in a slot whose token was merged into its left neighbour
    nxt[i]       the next live slot of the same word (or the SEP after the word)
    prv[i]       the previous live slot (or the SEP before the word)
    freq[i]      the count in the corpus of the word that slot i belongs to
                 (all four are ``array``s; ``freq`` a list when a count needs
                 more than 64 bits)
    counts[p]    sum of freqs over occurrences of pair p (Python ints: exact)
    where[p]     the slots where p has occurred (its left symbol's slot), in
                 increasing order; a superset: a slot that no longer starts p
                 is skipped when the list is used (``sym[i] != a`` or
                 ``sym[nxt[i]] != b``), never removed before
    heap         candidate pairs, best first

    Example: words {b"ab": 3, b"abc": 1} (a, b, c for 97, 98, 99)
        slot   0    1  2  3    4  5  6  7
        sym    SEP  a  b  SEP  a  b  c  SEP
        freq   0    3  3  0    1  1  1  0
        where  {(a, b): [1, 4], (b, c): [5]}
    Merging (a, b) -> z in slot 4 sets sym[4] = z, sym[5] = DEAD, nxt[4] = 6,
    prv[6] = 4.

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

Incremental counts
    Merging (a, b) -> z at an occurrence only changes the pairs that touch it:
    (x, a) becomes (x, z) on the left, (b, y) becomes (z, y) on the right.  When
    two occurrences are adjacent (``a b a b``) the pair between them, (b, a),
    becomes (z, z) once; the right-hand update is skipped and the left-hand
    update of the next occurrence does it, so nothing is counted twice.

Left to right, without overlap
    ``where[p]`` is sorted, so a word's occurrences are merged left to right,
    as in ``naive.merge_word``.  In a run ``a a a`` merging (a, a) merges slots
    1-2 first; slot 2 is then DEAD, so its entry is skipped: ``aa a``.  The
    list is sorted because a pair gains occurrences only in one step (next
    paragraph) and that step visits slots in increasing order: it records
    (x, z) at the left neighbour and (z, y) at the merged slot, both increasing
    with the merged slot; (z, z) is only ever recorded as a left neighbour.

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
    (``_pop_best`` returns None), ``_refill`` lowers the floor to half the
    greatest count and puts every pair at or above it on the heap: one pass
    over ``counts`` per halving, about 15 passes from the first merge to the
    last.  Measured by ``perf/compare.py --before main merge --vocab 32000``
    under PyPy (CPU seconds, fastest of 3, a loaded machine), with the word
    table filled in place (``_link_words``): the merge phase of english_medium
    at 32,000 in 1.72 s instead of 2.23 s; the heap ends with 14,000 entries
    instead of 240,000.  A traced run keeps the floor too: the runner-up is
    the heap's next entry, or, when none is left at the floor, the greatest
    count below it, which the refill the next step would make anyway finds
    (``_TracedTables.observe``).
"""

import heapq
from array import array

__all__ = ["learn_merges", "merges_possible", "MergeCheck"]

SEP = -1  # the slot between two words
DEAD = -2  # a slot merged into its left neighbour
_NO_HEAP = float("inf")  # a floor no count reaches: ``collect_pushing`` pushes nothing


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


def _entry_maker(tie, token_bytes, shift, mask):
    """``make(count, pair)``: the heap entry for ``tie``, chosen once per run.

    ``tie`` is ``"bytes"`` (CS336: the greatest ``(left bytes, right bytes)``),
    ``"ids"`` (the smallest ``(left id, right id)``, ids as here: the packed pair
    itself) or a list ``rank`` over every id (the smallest ``(rank[left],
    rank[right])``).
    """
    if tie == "bytes":
        return lambda c, p: _Entry(c, token_bytes[p >> shift], token_bytes[p & mask], p)
    if tie == "ids":
        return lambda c, p: _IdEntry(c, p, p)
    rank = tie
    rank_shift = max(rank).bit_length()
    return lambda c, p: _IdEntry(c, (rank[p >> shift] << rank_shift) | rank[p & mask], p)


def learn_merges(
    word_counts, num_merges, progress=None, tie="bytes", min_count=1, trace=None, inherited=(), rules=None
):
    """Return up to ``num_merges`` merges ``[(left_bytes, right_bytes), ...]``.

    ``inherited`` (``refbpe.learn.extend``): merges applied first, in their order,
    whatever the rule would choose (``_replay``: on the words' own table, or on
    their pieces when the words are long, ``_long_words``), then the loop
    continues; they are the first merges returned and count towards ``num_merges``.
    ``rules`` (``refbpe.learn.profiles``' SuperBPE): an object whose ``skip_absent``
    (True: an inherited merge whose tokens or pair never occurred is left out,
    as SuperBPE's trainer does) and ``refuse(token_bytes)`` (True: the best
    pair is dropped for good instead of merged) change those two steps.

    Fewer are returned when no pair is left, or when the best pair occurs
    fewer than ``min_count`` times (HF's ``min_frequency``).  ``tie`` picks the
    tie rule (``_entry_maker``; ``refbpe.learn.profiles`` chooses it): the default is
    CS336's.  ``progress(done, total)``, if given, is called now and then.
    ``trace``, a list, receives ``(count, ties, runner_up)`` per merge: the
    merged pair's count, how many pairs had that count (it included), and the
    greatest count among the other pairs (``_TracedTables``: two comparisons
    per changed pair and the heap's next entry per merge, only when tracing;
    ``train --trace`` costs 1-3% more CPU than ``train`` under PyPy on
    english_medium at vocab 10,000 and 32,000, perf/certify_cost.py).

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
    below = 0  # pairs whose count is under this were left out of the tables (``_count_candidate_pairs``)
    on_pieces = bool(inherited) and _long_words(word_counts)
    if on_pieces:
        merges, (sym, nxt, prv, freq) = _replay_in_pieces(
            word_counts, inherited, 256 + num_merges, token_bytes, shift, skip_absent
        )
        counts, where, below = _count_candidate_pairs(sym, freq, shift, num_merges - len(merges))
    else:
        sym, nxt, prv, freq = _link_words(word_counts.items(), 256 + num_merges)
        counts, where = _count_pairs(sym, freq, shift)
    if trace is None:
        step = _StepTables(256 + num_merges, sym.typecode)
    else:
        step = _TracedTables(256 + num_merges, sym.typecode)
    if inherited and not on_pieces:
        merges = _replay(
            inherited, (sym, nxt, prv, freq, counts, where), token_bytes, shift, step, skip_absent
        )
    elif not inherited:
        merges = []
    make_entry = _entry_maker(tie, token_bytes, shift, mask)
    heap = []
    floor, below = _refill_all(heap, counts, where, make_entry, below, (sym, nxt, freq, shift))

    refuse = rules.refuse if rules is not None else None
    while len(merges) < num_merges:
        best = _pop_best(heap, counts, where, floor)
        if best is None and floor > 1:
            floor, below = _refill_all(heap, counts, where, make_entry, below, (sym, nxt, freq, shift))
            continue
        if best is None or counts[best] < min_count:
            break
        if refuse is not None and refuse(token_bytes[best >> shift] + token_bytes[best & mask]):
            where.pop(best, None)  # never offered again (``_refill`` skips it): it gains no occurrence
            continue
        if trace is not None:
            floor = step.observe(best, heap, counts, where, floor, make_entry, len(merges) + 1 == num_merges)
        a, b = best >> shift, best & mask
        z = len(token_bytes)
        token_bytes.append(token_bytes[a] + token_bytes[b])
        merges.append((token_bytes[a], token_bytes[b]))
        _apply_merge(sym, nxt, prv, freq, where.pop(best), a, b, z, step)
        step.collect_pushing(counts, where, a, b, z, shift, heap, floor, make_entry)
        del counts[best]
        if progress is not None and len(merges) % 100 == 0:
            progress(len(merges), num_merges)
    if progress is not None:
        progress(len(merges), num_merges)
    if trace is not None:
        trace.extend(step.records(counts))
    return merges


def _long_words(word_counts):
    """True when the words average more than ``_LONG_WORD`` bytes: replaying on their
    pieces (``_replay_in_pieces``) then pays; ordinary words are replayed where they are,
    the loop going on from that table (extending english_medium from 10,000 to 20,000:
    1.00 s -> 0.57-0.69 s, the replay alone 0.83 s -> 0.45-0.53 s, perf/extend.py).
    SuperBPE's stage-2 words average 45 bytes on english_small, pre-tokens 5-8."""
    total = 0
    for w in word_counts:
        total += len(w)
    return total > _LONG_WORD * len(word_counts)


_LONG_WORD = 16


def _replay_in_pieces(word_counts, inherited, ids, token_bytes, shift, skip_absent):
    """(merges applied, the words' table after them): ``inherited`` replayed.

    An inherited merge only ever joins two symbols into one of the inherited
    tokens, so it never joins across a place in a word whose two bytes no
    inherited token holds side by side (``_spanned_bigrams``).  The words are
    cut at those places, equal pieces are counted together (``_pieces``) and
    the merges are replayed on the pieces (``_replay``); each word is then its
    pieces' symbols end to end.  The result is what replaying on the whole
    words gives: every pair an inherited merge asks for lies inside a piece,
    so the pieces see the same pairs, counts and left-to-right order, and so
    the same merges are applied or left out.  SuperBPE's stage-2 words are
    whole stretches of a line that repeat little, while their pieces are
    about stage 1's words: perf/superbpe.py's merge phase (english_small,
    8,000 merges replayed) went from 4.8x the plain profile's to 3.0x.

    Cost: one pass over the words' bytes, then one merge step per inherited
    merge on the pieces, then the words' table laid out from the pieces'
    symbols (``_link_pieces``).
    """
    spanned = _spanned_bigrams(inherited)
    piece_counts, word_pieces = _pieces(word_counts, spanned)
    sym, nxt, prv, freq = _link_words(piece_counts.items(), ids)
    counts, where = _count_pairs(sym, freq, shift)
    step = _StepTables(ids, sym.typecode)
    merges = _replay(inherited, (sym, nxt, prv, freq, counts, where), token_bytes, shift, step, skip_absent)
    return merges, _link_pieces(word_pieces, _symbols_of_pieces(piece_counts, sym, nxt), ids)


def _spanned_bigrams(inherited):
    """A table over ``left << 8 | right``: True where an inherited token holds byte
    ``left`` followed by byte ``right``."""
    spanned = [False] * 65536
    for left, right in inherited:
        token = left + right
        for i in range(1, len(token)):
            spanned[(token[i - 1] << 8) | token[i]] = True
    return spanned


def _pieces(word_counts, spanned):
    """({piece: summed count}, [(word's pieces, count)]): the words that can hold a
    pair cut wherever two neighbouring bytes are not ``spanned``; a word's pieces
    are their places in the table's order (ints: the rebuild looks them up by place)."""
    place, totals, word_pieces = {}, [], []
    for w, n in word_counts.items():
        if len(w) < 2 or n <= 0:
            continue
        pieces, start, left = [], 0, w[0]
        for i in range(1, len(w)):
            right = w[i]
            if not spanned[(left << 8) | right]:
                pieces.append(w[start:i])
                start = i
            left = right
        pieces.append(w[start:] if start else w)
        places = []
        for piece in pieces:
            k = place.get(piece)
            if k is None:
                k = place[piece] = len(totals)
                totals.append(n)
            else:
                totals[k] += n
            places.append(k)
        word_pieces.append((places, n))
    return dict(zip(place, totals)), word_pieces


def _symbols_of_pieces(piece_counts, sym, nxt):
    """[each piece's symbols] in the order of ``piece_counts``, read off the table
    ``_link_words`` laid out for it (same order; a one-byte piece is not in the table)."""
    symbols, i = [], 1
    for piece, n in piece_counts.items():
        if len(piece) < 2 or n <= 0:
            symbols.append([piece[0]] if piece else [])
            continue
        out, j = [], i
        while sym[j] != SEP:
            out.append(sym[j])
            j = nxt[j]
        symbols.append(out)
        i += len(piece) + 1
    return symbols


def _replay(inherited, state, token_bytes, shift, step, skip_absent=False):
    """Apply ``inherited`` merges in their order on the state; returns those applied.

    Each makes its token (the next id) even where its pair does not occur;
    under ``skip_absent`` a merge whose tokens were not made or whose pair never
    occurred (or was merged already) is left out instead, with no token.  No
    heap is kept: the caller builds it from the counts afterwards.  Cost: one
    merge step each.
    """
    sym, nxt, prv, freq, counts, where = state
    if not MergeCheck.valid(inherited):
        raise ValueError("inherited merges must each make a new token out of tokens made before")
    id_of = {t: i for i, t in enumerate(token_bytes)}
    applied = []
    for left, right in inherited:
        if skip_absent and (left not in id_of or right not in id_of):
            continue
        a, b, z = id_of[left], id_of[right], len(token_bytes)
        p = (a << shift) | b
        if skip_absent and p not in counts:
            continue
        applied.append((left, right))
        token_bytes.append(left + right)
        id_of[left + right] = z
        slots = where.pop(p, None)
        if slots is None or counts.get(p, 0) <= 0:
            continue
        _apply_merge(sym, nxt, prv, freq, slots, a, b, z, step)
        step.collect_pushing(counts, where, a, b, z, shift, None, _NO_HEAP, None)
        del counts[p]
    return applied


class MergeCheck(object):
    """Another trainer's merges applied in their order on the engine's state, with
    the rule's choice read before each (``verify.certify``'s fast path).

    ``merges`` must make a new token each and use only tokens made before
    (``valid``); ``tie`` is the engine's (``"bytes"``, ``"ids"`` or a rank
    list over every id the merges make).  ``choice()`` is the pair the rule
    takes now, ``apply(k)`` merges their k-th pair, whatever it is.

    Their order is given, so no heap of every pair is kept: pairs wait in
    buckets by count (``levels``, a heap of the counts that have a bucket, plain
    ints), each under an upper bound of its current count, as in the engine's
    lazy deletion (counts only fall after the step that made a pair).  A new
    pair costs a dict lookup and an append; only the buckets above the pair
    being checked are ever read, stale entries there move down to their current
    count, and a bucket holding two live pairs of the top count is ordered by
    the tie rule (a heap of entries) the first time it is read.  Slot lists are
    kept only for the pairs their list merges later (the rest are never
    applied).  The merge phase is the engine's (``_apply_merge``).
    """

    def __init__(self, word_counts, merges, tie="bytes"):
        self.token_bytes = [bytes([i]) for i in range(256)]
        self.shift = shift = max(16, (256 + len(merges)).bit_length())
        self.mask = (1 << shift) - 1
        self.sym, self.nxt, self.prv, self.freq = _link_words(word_counts.items(), 256 + len(merges))
        self.counts, self.where = _count_pairs(self.sym, self.freq, shift)
        self.make_entry = _entry_maker(tie, self.token_bytes, shift, self.mask)
        self.merges = merges
        self.packed = _packed_merges(merges, shift)
        self.step = _CheckTables(256 + len(merges), self.sym.typecode, set(self.packed))
        self.plain, self.ordered, self.levels = {}, {}, []
        for p, c in self.counts.items():
            self._add(c, p)

    @staticmethod
    def valid(merges):
        """True when every merge makes a new token out of tokens made before."""
        made = set(bytes([i]) for i in range(256))
        for a, b in merges:
            if a not in made or b not in made or a + b in made:
                return False
            made.add(a + b)
        return True

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
        _apply_merge(self.sym, self.nxt, self.prv, self.freq, slots, x, y, z, self.step)
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


def merges_possible(word_counts):
    """An upper bound on the merges ``word_counts`` allows: each merge removes one
    symbol from every word it touches, and a word of n bytes has n - 1 to lose.

    >>> merges_possible({b"abab": 2, b"ab": 1, b"a": 5})
    4
    """
    return sum(len(w) - 1 for w, n in word_counts.items() if len(w) > 1 and n > 0)


def _index_type(largest):
    """The array typecode for ints up to ``largest``, or None (a list: Python ints)."""
    for code in ("i", "l", "q"):
        if largest < 1 << (8 * array(code).itemsize - 1):
            return code
    return None


def _zeros(code, n):
    return array(code, bytes(n * array(code).itemsize))


def _link_words(word_counts, ids):
    """(sym, nxt, prv, freq) for the words of length 2 or more, SEP-separated.

    ``word_counts`` is pairs ``(word, count)``, a word bytes or a list of ids.
    Words that cannot hold a pair (length 0 or 1, count 0) are left out; ``ids``
    bounds the token ids that will be stored in ``sym``.  The arrays are
    ``array('i')`` where the values fit: half the memory of lists under PyPy,
    and appends to them (the slot lists) were 3.5x faster in a micro-benchmark
    (20 million appends: 0.24 s against 0.85 s for a list).  ``freq`` is a list
    when a count needs more than 64 bits.
    """
    words = [(w, n) for w, n in word_counts if len(w) > 1 and n > 0]
    size = 1 + sum(len(w) + 1 for w, _ in words)
    sym, nxt, prv, freq = _empty_table(size, ids, max([n for _, n in words] or [0]))
    i = 1
    for w, n in words:  # filled in place: 1.7x as fast, cold (perf/micro.py merge-link-fill)
        for byte in w:
            sym[i] = byte
            freq[i] = n
            i += 1
        sym[i] = SEP
        i += 1
    return sym, nxt, prv, freq


def _link_pieces(word_pieces, symbols, ids):
    """``_link_words`` of the words ``[(piece places, count)]``, each its pieces'
    ``symbols`` end to end, written straight from the pieces: no list of
    symbols per word (SuperBPE's stage-2 words are most of the text).  Words of
    one symbol are left out, as there."""
    lengths = [len(s) for s in symbols]
    words, size, largest = [], 1, 0
    for places, n in word_pieces:
        length = 0
        for k in places:
            length += lengths[k]
        if length > 1:
            words.append((places, n))
            size += length + 1
            if n > largest:
                largest = n
    sym, nxt, prv, freq = _empty_table(size, ids, largest)
    i = 1
    for places, n in words:
        for k in places:
            for s in symbols[k]:
                sym[i] = s
                freq[i] = n
                i += 1
        sym[i] = SEP
        i += 1
    return sym, nxt, prv, freq


def _empty_table(size, ids, largest_count):
    """(sym, nxt, prv, freq) of ``size`` slots: ``sym`` all 0 but a SEP first, every
    slot linked to its neighbours; typecodes fit ``ids`` and ``largest_count``."""
    code = _index_type(max(size, ids) + 1)
    freq_code = _index_type(largest_count)
    sym, nxt, prv = _zeros(code, size), _zeros(code, size), _zeros(code, size)
    freq = _zeros(freq_code, size) if freq_code else [0] * size
    sym[0] = SEP
    for i in range(size):  # a fill loop: array(code, range(...)) took 4x as long under PyPy
        nxt[i] = i + 1
        prv[i] = i - 1
    nxt[size - 1] = size - 1  # never followed: the last slot is a SEP
    prv[0] = 0
    return sym, nxt, prv, freq


def _count_pairs(sym, freq, shift):
    """({pair: count}, {pair: array of slots, increasing}) of the initial words.

    Initial pairs are byte pairs, so they are tallied in flat lists indexed by
    ``left << 8 | right`` and packed into dicts at the end (one word of 20
    million bytes under PyPy: 2.6 s with dict lookups per slot, under 1 s so;
    perf/merge_engine.py --long times the whole phase).
    """
    tally, at = [0] * 65536, [None] * 65536
    code = sym.typecode
    left = SEP
    for i in range(len(sym)):
        right = sym[i]
        if left >= 0 and right >= 0:
            k = (left << 8) | right
            slots = at[k]
            if slots is None:
                slots = at[k] = array(code)
            slots.append(i - 1)
            tally[k] += freq[i]
        left = right
    counts, where = {}, {}
    for k in range(65536):
        if at[k] is not None:
            p = ((k >> 8) << shift) | (k & 255)
            counts[p] = tally[k]
            where[p] = at[k]
    return counts, where


_CANDIDATES = 4096  # pairs tabled at least, beyond ``_CANDIDATES_PER_MERGE`` per merge wanted
_CANDIDATES_PER_MERGE = 8
_SKETCH_BITS = 22  # at most 4 million buckets


def _count_candidate_pairs(sym, freq, shift, wanted):
    """(counts, where, below) of a freshly linked table of any ids (neighbours
    are neighbouring slots; ``_count_pairs`` is for bytes): {pair: count} and
    {pair: array of slots, increasing} of only the pairs that may be chosen in
    the next ``wanted`` merges, and the count under which a pair may have been
    left out.

    A first pass adds each pair's count into a bucket of a sketch (a hash of
    the pair picks it; pairs sharing a bucket add up, so a bucket bounds its
    pairs' counts from above); ``below`` is the least power of two that at
    most ``_CANDIDATES_PER_MERGE * wanted + _CANDIDATES`` buckets reach, and a
    second pass tables every pair whose bucket reaches it.  So every pair left
    out counts fewer than ``below``: its count only falls afterwards (a merge
    makes pairs with its new token only), and ``_refill_all`` tables the rest
    before the merges go under ``below``.  SuperBPE's stage-2 words repeat
    little: english_medium's hold 18 million symbols and millions of distinct
    pairs, of which a few thousand are merged.
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


def _refill_all(heap, counts, where, make_entry, below, table):
    """``_refill``, then, if its floor fell under ``below`` (pairs under it may be
    missing from ``counts``), the missing pairs tabled from ``table`` (sym, nxt,
    freq, shift) and ``_refill`` again; returns (floor, below: 0 once all are in)."""
    floor = _refill(heap, counts, where, make_entry)
    if floor >= below:
        return floor, below
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
    return _refill(heap, counts, where, make_entry), 0


def _pop_best(heap, counts, where, floor=0):
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


def _refill(heap, counts, where, make_entry, floor=None):
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


def _push_fresh(heap, fresh, floor, make_entry):
    """Push the new pairs ``[(pair, count)]`` that reach ``floor``; the others wait for a refill."""
    for p, c in fresh:
        if c >= floor:
            heapq.heappush(heap, make_entry(c, p))


class _StepTables(object):
    """What one merge (a, b) -> z changes, indexed by the other token of each new pair.

    ``left_count[x]``, ``left_at[x]``: occurrences of the new pair (x, z) (old
    (x, a), or (b, a) when x is z) and their slots; ``right_count[y]``,
    ``right_at[y]``: of (z, y) (old (b, y)).  Every new pair contains z, so a
    flat table over token ids replaces five dict operations per occurrence
    (one word of 20 million ``a`` under PyPy: the first merge took 1.4 s with
    dicts; the whole phase is now under 2 s, perf/merge_engine.py --long);
    ``collect`` turns the entries touched into counts and slot lists and
    clears them.
    """

    def __init__(self, vocab_size, code):
        self.code = code
        self.left_count, self.right_count = [0] * vocab_size, [0] * vocab_size
        self.left_at, self.right_at = [None] * vocab_size, [None] * vocab_size
        self.left_touched, self.right_touched = [], []
        self.level = 0  # the count whose pairs ``collect`` tallies in ``change`` (0: none has it)
        self.change = 0

    def collect(self, counts, where, a, b, z, shift):
        """[(new pair, count)] of this step, also entered in ``counts`` and ``where``;
        the pairs they replace lose the same counts.  ``change``: how many pairs
        reach ``level`` less how many leave it, the merged pair left out (the
        trace's; two comparisons per entry, the same code traced or not)."""
        fresh = []
        level, merged, change = self.level, (a << shift) | b, 0
        for x in self.left_touched:
            c = self.left_count[x]
            q = ((b if x == z else x) << shift) | a
            old = counts[q]
            if old == level and q != merged:
                change -= 1
            counts[q] = old - c
            p = (x << shift) | z
            counts[p] = c
            if c == level:
                change += 1
            where[p] = self.left_at[x]
            fresh.append((p, c))
            self.left_at[x] = None
        for y in self.right_touched:
            c = self.right_count[y]
            q = (b << shift) | y
            old = counts[q]
            if old == level and q != merged:
                change -= 1
            counts[q] = old - c
            p = (z << shift) | y
            counts[p] = c
            if c == level:
                change += 1
            where[p] = self.right_at[y]
            fresh.append((p, c))
            self.right_at[y] = None
        del self.left_touched[:], self.right_touched[:]
        self.change = change
        return fresh

    def collect_pushing(self, counts, where, a, b, z, shift, heap, floor, make_entry):
        """``collect``, each new pair that reaches ``floor`` pushed on ``heap`` as it is made
        (``_push_fresh``'s rule) and no ``change``: the untraced loop's.  No list of new
        pairs, no second pass over them: the merge phase of english_medium at 32,000 took
        5% less CPU (perf/compare.py --before main merge --vocab 32000)."""
        left_count, left_at = self.left_count, self.left_at
        for x in self.left_touched:
            c = left_count[x]
            q = ((b if x == z else x) << shift) | a
            counts[q] = (
                counts.get(q, 0) - c
            )  # a pair left untabled goes negative (``_count_candidate_pairs``)
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


class _CheckTables(_StepTables):
    """``_StepTables`` for ``MergeCheck``: the new pairs go straight into its
    buckets, and only the slot lists of ``later`` pairs (their merges) are kept."""

    def __init__(self, vocab_size, code, later):
        _StepTables.__init__(self, vocab_size, code)
        self.later = later

    def collect_into(self, check, a, b, z):
        counts, where, shift, plain, later = check.counts, check.where, check.shift, check.plain, self.later
        left_count, left_at = self.left_count, self.left_at
        for x in self.left_touched:
            c = left_count[x]
            q = ((b if x == z else x) << shift) | a
            counts[q] = (
                counts.get(q, 0) - c
            )  # a pair left untabled goes negative (``_count_candidate_pairs``)
            p = (x << shift) | z
            counts[p] = c
            if p in later:
                where[p] = left_at[x]
            left_at[x] = None
            bucket = plain.get(c)
            if bucket is None:
                check._add(c, p)
            else:
                bucket.append(p)
        right_count, right_at = self.right_count, self.right_at
        for y in self.right_touched:
            c = right_count[y]
            q = (b << shift) | y
            counts[q] = counts.get(q, 0) - c
            p = (z << shift) | y
            counts[p] = c
            if p in later:
                where[p] = right_at[y]
            right_at[y] = None
            bucket = plain.get(c)
            if bucket is None:
                check._add(c, p)
            else:
                bucket.append(p)
        del self.left_touched[:], self.right_touched[:]


def _peek_best(heap, counts, where, floor):
    """The greatest current count on the heap without taking it, or 0 when the heap
    has no pair at ``floor`` or above left (``_pop_best``'s, the pair left on)."""
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


class _TracedTables(_StepTables):
    """``_StepTables`` that also record the trace: per merge its count, the
    runner-up (read before the merge, ``observe``) and ``change``
    (pairs reaching the merged count less those leaving it, ``collect``'s).

    ``ties``, how many pairs had the merged count (it included), is worked out
    backwards once the merges are done: the count of merge k is the greatest,
    so no pair is above it, and a run of merges at one count ends with no pair
    left at it (the next merge's count is lower) or with the training (a scan
    of the counts then); before merge k there were the pairs after it, plus
    the merged one, less ``change``.  The histogram of every count this replaces
    cost dict updates for every changed pair.
    """

    def __init__(self, vocab_size, code):
        _StepTables.__init__(self, vocab_size, code)
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
                floor = _refill(heap, counts, where, make_entry)
                runner_up = heap[0].count if heap else 0
            where[best] = slots
        self.runner_ups.append(runner_up)
        return floor

    def collect(self, counts, where, a, b, z, shift):
        fresh = _StepTables.collect(self, counts, where, a, b, z, shift)
        self.changes.append(self.change)
        return fresh

    def collect_pushing(self, counts, where, a, b, z, shift, heap, floor, make_entry):
        _push_fresh(heap, self.collect(counts, where, a, b, z, shift), floor, make_entry)

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


def _apply_merge(sym, nxt, prv, freq, slots, a, b, z, step):
    """Merge (a, b) -> z at every live occurrence in ``slots``, noting the changes in ``step``.

    The old pairs' losses equal the new pairs' gains, side by side, so one
    table entry per side carries both (``_StepTables.collect``).
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
