"""Replaying any merge list over word counts, with exact pair counts: ``PairReplay``.

Their merges are applied one at a time in their order (they need not be the
reference's choices), and the maximum count and the tied pairs are read
through a lazily cleaned max-heap.  Tokens are ids (bytes 0-255, then one id
per distinct byte string made), a pair is packed into one int
``left << SHIFT | right``, and tokens are identified by their bytes, as in the
naive oracle: two merges that spell the same bytes make the same token.

State
    words[w], freqs[w]   the current token ids of unique word w, and its count
    counts[p]            occurrences of pair p, weighted by freqs (exact ints)
    where[p]             words that have held p (a superset, checked on use)
    heap                 entries (-count, p), each packed into one int
                         ``-count << QSHIFT | q`` (q: p's number in ``pair_of``,
                         given when p is first pushed); an entry is valid while
                         ``counts[p] == count``.  New pairs are pushed when made;
                         a lowered count is re-sifted when its entry is met (the
                         lazy deletion that ``merge`` argues for: a pair's count only
                         falls after the step that made it).  Equal counts come off
                         in their pairs' numbering; the tied keys are returned sorted

Cost per merge: O(length) for each word that holds the pair (the word is
re-merged whole), plus O(log P) per changed pair.  ``observers`` (objects with
``merged_words(changes, a, b, z)``, ``changes`` a list of ``(w, old, new, freq)``)
see every word change of a merge, after its words: the counting and merging
variants of ``overlays`` ride on this replay instead of replaying from scratch.

``bpe`` encodes one pre-token with ranked merges, naively (O(n^2) per piece).
"""

import heapq

from ..naive import merge_word

__all__ = ["PairReplay", "SHIFT", "index_pairs", "merge_ids"]

SHIFT = 32  # pair key: left << SHIFT | right (ids stay far below 2**32)
_MASK = (1 << SHIFT) - 1
# A heap entry is one int, -count << QSHIFT | the pair's number: PyPy keeps a list of machine ints
# unboxed, and compares them faster than (-count, pair) tuples (english_small's hf model: verify's
# checks 0.229-0.245 -> 0.194-0.208 CPU s, 4 cold PyPy processes alternating; perf/verify_stages.py,
# checks).  A count past 2**31 makes a long: slower, still exact.
QSHIFT = 32
_QMASK = (1 << QSHIFT) - 1


def merge_ids(ids, a, b, z):
    """``ids`` with each (a, b) replaced by z, left to right, without overlap."""
    out, i, n = [], 0, len(ids)
    while i < n:
        if i + 1 < n and ids[i] == a and ids[i + 1] == b:
            out.append(z)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def index_pairs(words, freqs, first, counts, where):
    """Add the pairs of ``words[first:]`` (weighted by ``freqs``) to ``counts``, and each word's
    number to its pairs' lists in ``where`` (once per word).  One loop over all the words, not a
    call per word: PyPy's JIT does not inline a function that holds a loop."""
    for k in range(first, len(words)):
        ids, n = words[k], freqs[k]
        for i in range(len(ids) - 1):
            p = (ids[i] << SHIFT) | ids[i + 1]
            counts[p] = counts.get(p, 0) + n
            s = where.get(p)
            if s is None:
                where[p] = [k]
            elif s[-1] != k:
                s.append(k)


def _gather(changes, token, f, w):
    """Add an occurrence (count ``f``, in word ``w``) to ``changes[token]``, ``[count, word,
    word...]`` (``PairReplay.apply``'s gathering per neighbour token; no loop, so PyPy's JIT
    inlines it)."""
    e = changes.get(token)
    if e is None:
        changes[token] = [f, w]
    else:
        e[0] += f
        if e[-1] != w:
            e.append(w)


class PairReplay(object):
    """Word counts with merges applied one at a time, and the pair counts kept exact.

    ``apply(pair)`` merges any pair of byte strings; ``max_count()`` and
    ``tied(count)`` read the current counts.
    """

    def __init__(self, word_counts):
        self.tokens = [bytes([i]) for i in range(256)]
        self.id_of = {t: i for i, t in enumerate(self.tokens)}
        self.words, self.freqs, self.index = [], [], {}
        for w, n in word_counts.items():
            if n > 0 and len(w) > 1:
                self.index[w] = len(self.words)
                self.words.append(list(w))
                self.freqs.append(n)
        counts, where = {}, {}
        index_pairs(self.words, self.freqs, 0, counts, where)
        self.counts, self.where = counts, where
        self.pair_of = list(counts)  # q -> pair key
        self.number = {p: q for q, p in enumerate(self.pair_of)}  # pair key -> q
        self.heap = [(-c << QSHIFT) | q for q, c in enumerate(counts.values())]
        heapq.heapify(self.heap)
        self.observers = []

    def copy(self):
        """An independent replay in this one's state (cheaper than counting the words again)."""
        other = PairReplay.__new__(PairReplay)
        other.tokens, other.id_of = list(self.tokens), dict(self.id_of)
        other.words, other.freqs, other.index = (
            list(self.words),
            self.freqs,
            self.index,
        )  # words are replaced, not changed
        other.counts, other.heap = dict(self.counts), list(self.heap)
        other.pair_of, other.number = list(self.pair_of), dict(self.number)
        other.where = {p: list(s) for p, s in self.where.items()}
        other.observers = []
        return other

    # -- ids and keys ------------------------------------------------------------

    def token_id(self, b, make=False):
        i = self.id_of.get(b)
        if i is None and make:
            i = self.id_of[b] = len(self.tokens)
            self.tokens.append(b)
        return i

    def key(self, pair):
        """The packed key of a pair of byte strings, or None if a side is no token yet."""
        a, b = self.id_of.get(pair[0]), self.id_of.get(pair[1])
        if a is None or b is None:
            return None
        return (a << SHIFT) | b

    def pair(self, key):
        return (self.tokens[key >> SHIFT], self.tokens[key & _MASK])

    def entry(self, count, key):
        """The heap entry of ``key`` at ``count`` (the key numbered on first use)."""
        q = self.number.get(key)
        if q is None:
            q = self.number[key] = len(self.pair_of)
            self.pair_of.append(key)
        return (-count << QSHIFT) | q

    def entries(self):
        """The heap's entries as (-count, pair key), in its order."""
        return [(e >> QSHIFT, self.pair_of[e & _QMASK]) for e in self.heap]

    # -- reading -----------------------------------------------------------------

    def count(self, pair):
        k = self.key(pair)
        return 0 if k is None else self.counts.get(k, 0)

    def count_key(self, key):
        return 0 if key is None else self.counts.get(key, 0)

    def best(self):
        return self.max_count()

    def max_count(self):
        heap, counts, pair_of = self.heap, self.counts, self.pair_of
        while heap:
            e = heap[0]
            q = e & _QMASK
            current = counts.get(pair_of[q], 0)
            if current == -(e >> QSHIFT):
                return current
            if current > 0:  # lowered since pushed: re-sift with the current count
                heapq.heapreplace(heap, (-current << QSHIFT) | q)
            else:
                heapq.heappop(heap)
        return 0

    def tied_keys(self, count, skip=None):
        """Keys of the pairs whose count is ``count`` (at least the maximum's
        heap prefix is scanned: entries above ``count`` are kept)."""
        found, keep = {}, {}
        self._pop_tied(count, skip, keep, found)
        for e in keep:
            heapq.heappush(self.heap, e)
        return sorted(found)

    def _pop_tied(self, count, skip, keep, found):
        """Pop the heap's entries at ``count`` or above into ``keep`` (stale ones
        dropped, equal ones kept once), and the keys at ``count`` not in ``skip``
        (None: none skipped) into ``found``."""
        heap, counts, pair_of = self.heap, self.counts, self.pair_of
        while heap and -(heap[0] >> QSHIFT) >= count:
            q = heapq.heappop(heap) & _QMASK
            p = pair_of[q]
            current = counts.get(p, 0)
            if current <= 0:
                continue
            e = (-current << QSHIFT) | q
            if e not in keep:  # equal entries: keep one
                keep[e] = True
                if current == count and (skip is None or p not in skip):
                    found[p] = True

    def best_excluding(self, skip):
        """The largest count of a pair not in ``skip`` (0 if none)."""
        keep, best = self._pop_to_best(skip)
        for e in keep:
            heapq.heappush(self.heap, e)
        return best

    def _pop_to_best(self, skip, pop_best=True):
        """({entry: True} popped, count): the heap's stale entries cleaned and its
        valid ones popped down to the best pair not in ``skip``, whose count is
        returned (0 if none), that pair's entry popped too unless ``pop_best`` is
        false; the caller pushes the popped entries back."""
        heap, counts, pair_of = self.heap, self.counts, self.pair_of
        keep, best = {}, 0
        while heap:
            e = heap[0]
            q = e & _QMASK
            p = pair_of[q]
            current = counts.get(p, 0)
            if current != -(e >> QSHIFT):
                if current > 0:
                    heapq.heapreplace(heap, (-current << QSHIFT) | q)
                else:
                    heapq.heappop(heap)
                continue
            if p not in skip:
                if pop_best:
                    keep[heapq.heappop(heap)] = True
                best = current
                break
            keep[heapq.heappop(heap)] = True
        return keep, best

    def top(self):
        """(the maximum count, the keys of the pairs at it; none when it is 0)."""
        m = self.max_count()
        return m, (self._walk_tied(m, ()) if m > 0 else [])

    def _walk_tied(self, m, skip):
        """The keys at count ``m``, not in ``skip``, in increasing order, read without
        popping: the heap's entries whose stored count is ``m`` or more are a
        subtree at its root, walked.  Exact, and in the order ``_pop_tied`` finds
        them, when no entry is above ``m`` (its root is current, at ``m`` or
        below): every pair at ``m`` has an entry at ``m`` (stored counts bound the
        current ones from above), and a stale entry met there is below ``m`` now
        (it is left for the pops that clean the root).  (Popping every tied entry
        and pushing it back at each check cost PyPy a pure-Python sift per entry:
        verify's checks on english_small's hf model 0.35 -> 0.30 CPU s, least of 6
        cold processes alternating; perf/verify_stages.py, checks.)"""
        heap, counts, pair_of = self.heap, self.counts, self.pair_of
        found = []
        n = len(heap)
        stack = [0] if n else []
        while stack:
            i = stack.pop()
            e = heap[i]
            if -(e >> QSHIFT) < m:
                continue
            p = pair_of[e & _QMASK]
            if counts.get(p, 0) == m and p not in skip:
                found.append(p)
            i = 2 * i + 1
            if i < n:
                stack.append(i)
                if i + 1 < n:
                    stack.append(i + 1)
        found = sorted(set(found)) if len(found) > 1 else found
        return found

    def top_excluding(self, skip, floor, parked=None):
        """``best_excluding(skip)``, M, and the keys ``tied_keys(max(M, floor), skip)``
        gives, in its order, from one scan of the heap instead of two.

        The scan first cleans the heap's root and pops the entries of pairs in
        ``skip`` there, as ``best_excluding``, down to the best pair not in
        ``skip``, whose entry it leaves; then it reads the keys at M without
        popping (``_walk_tied``), in ``tied_keys``' order.  (An overlay asks both
        at every step, and its difference's pairs often lead the heap, popped
        twice: its checks 1.1-1.3x faster under PyPy, 1.25x under CPython;
        perf/micro.py overlay-top.)

        ``parked`` (a dict, when the caller is the heap's only reader): the
        popped entries of pairs in ``skip`` are left out of the heap and their
        keys put in ``parked``; the caller puts a key back (``unpark``) when it
        leaves ``skip``.  Only entries that every later scan would skip are
        left out, and a heap pops in the order of its entries whatever its
        layout, so the answers stay the same.
        """
        heap = self.heap
        keep, best = self._pop_to_best(skip, pop_best=False)
        m = max(best, floor)
        found = self._walk_tied(m, skip) if m > 0 else []
        if parked is None:
            for e in keep:
                heapq.heappush(heap, e)
        else:
            pair_of = self.pair_of
            for e in keep:
                parked[pair_of[e & _QMASK]] = True
        return best, found

    def unpark(self, key):
        """Put pair ``key``, whose entries ``top_excluding`` parked, back on the heap."""
        c = self.counts.get(key, 0)
        if c > 0:
            heapq.heappush(self.heap, self.entry(c, key))

    def tied(self, count):
        """All pairs (of byte strings) whose count is ``count``, sorted."""
        return sorted(self.pair(k) for k in self.tied_keys(count))

    # -- merging -----------------------------------------------------------------

    def apply(self, pair, track=False):
        """Merge ``pair`` in every word; with ``track``, returns the keys whose count changed.

        Only the pairs touching a merged occurrence change, as in
        ``step.apply_merge``: (x, a) becomes (x, z), (b, y) becomes (z, y),
        and between two adjacent occurrences (b, a) becomes (z, z) once.
        (Updating only these instead of recounting each word's pairs: about
        2x less replay time, measured by perf/verify_cost.py under PyPy.)
        The changes are gathered per neighbour token, as ``step.StepTables`` does, and
        each pair's entered once: english_small's hf model's 1,743 merges replayed in a
        cold process, 0.46-0.56 -> 0.43-0.48 CPU s under PyPy, 0.80-0.91 -> 0.65 s under
        CPython (5 and 2 alternating; verify_stages.py's PairReplay.apply times the same).
        """
        a, b = self.token_id(pair[0], True), self.token_id(pair[1], True)
        # A token made before (their merges may spell the same bytes twice) can
        # raise old pairs' counts: then every changed pair is pushed, not only new ones.
        reused = pair[0] + pair[1] in self.id_of
        z = self.token_id(pair[0] + pair[1], True)
        key = (a << SHIFT) | b
        counts, where, words, freqs = self.counts, self.where, self.words, self.freqs
        observers = self.observers
        # One call per observer and merge, not per word changed: the four counting and merging
        # variants over english_small's hf model's first 80 merges, 0.414 -> 0.382 CPU s (PyPy,
        # medians of 5 cold processes alternating; perf/verify_stages.py --observers 80).
        changes = [] if observers else None
        # The new pairs' counts and words gathered per neighbour first, entered once per pair:
        # left[x] for (x, a) -> (x, z), right[y] for (b, y) -> (z, y), zz for (b, a) -> (z, z)
        # between adjacent occurrences; each [count, word, word...].
        left, right, zz = {}, {}, [0]
        total = 0
        for w in where.pop(key, ()):
            old = words[w]
            n = len(old)
            i = 0
            while i < n - 1 and not (old[i] == a and old[i + 1] == b):
                i += 1
            if i >= n - 1:
                continue  # a stale index entry
            f = freqs[w]
            new = old[:i]
            merged_last = False
            while i < n:
                if i + 1 < n and old[i] == a and old[i + 1] == b:
                    total += f
                    if merged_last:
                        e = zz
                        e[0] += f
                        if len(e) == 1 or e[-1] != w:
                            e.append(w)
                    elif new:
                        _gather(left, new[-1], f, w)
                    if i + 2 < n:
                        y = old[i + 2]
                        if not (y == a and i + 3 < n and old[i + 3] == b):
                            _gather(right, y, f, w)
                    new.append(z)
                    merged_last = True
                    i += 2
                else:
                    new.append(old[i])
                    merged_last = False
                    i += 1
            words[w] = new
            if changes is not None:
                changes.append((w, old, new, f))
        if total:
            counts[key] -= total
        changed = {key}
        moves = [((x << SHIFT) | a, (x << SHIFT) | z, e) for x, e in left.items()]
        moves += [((b << SHIFT) | y, (z << SHIFT) | y, e) for y, e in right.items()]
        if zz[0]:
            moves.append(((b << SHIFT) | a, (z << SHIFT) | z, zz))
        for q, p, e in moves:
            c = e[0]
            counts[q] -= c
            counts[p] = counts.get(p, 0) + c
            changed.add(q)
            changed.add(p)
            s = where.get(p)
            if s is None:
                where[p] = e[1:]
            else:
                s.extend(e[2:] if s[-1] == e[1] else e[1:])
        for o in observers:
            o.merged_words(changes, a, b, z)
        heap, number, pair_of = self.heap, self.number, self.pair_of
        for p in changed:
            c = counts.get(p, 0)
            if c <= 0:
                counts.pop(p, None)
            elif reused or (p >> SHIFT) == z or (p & _MASK) == z:  # a new pair: its count is final now
                q = number.get(p)
                if q is None:
                    q = number[p] = len(pair_of)
                    pair_of.append(p)
                heapq.heappush(heap, (-c << QSHIFT) | q)
        return changed if track else None


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
