"""Verify's variants, replayed as overlays: other trainers' semantics as differences.

A variant is named as the cause only if it reproduces every one of their
merges.  Each is replayed *alongside* the reference replay of their merges
(``replay.PairReplay``) as a difference ``delta[p]`` from the reference pair
counts, so a variant costs what its difference touches, not a second replay:

Reading (cause "pre-tokenization"): other word counts.
    specials-as-text, lines, lines+specials-as-text, chunk-boundaries (every N
    characters, for a few plausible N).  The word-count difference
    (``readings.reading_delta``) is a few extra words with signed counts,
    merged alongside the replay.
Reading by another Unicode version (cause "unicode-version"): a trainer
    whose tables are older (or newer) than the reference's classes some code
    points differently (``readings.unicode_delta``), one variant per known
    version other than the reference's (``unicode_tables``), the newest
    first.  Tried under every named pattern (gpt2, cl100k_base, llama3,
    o200k_base) on any version; the other reading variants only under
    GPT-2's on the latest table.
Counting (cause "counts"): the same words and merges, other pair counts.
    once-per-pretoken (a pair counted once per pre-token occurrence);
    double-counted-equal-pairs (an incremental update that, when merging
    (a, b) -> z makes two z adjacent, adds (z, z) twice and removes (b, a)
    twice).
Merging (cause "merge-application"): another segmentation of some words.
    right-to-left (occurrences replaced from the right: ``a a a`` -> ``a aa``);
    overlapping-merges (both overlapping occurrences: ``a a a`` -> ``aa aa``).
    Only words whose segmentation differs are tracked, as overrides.

Every overlay answers the replay's questions (``best``, ``tied``,
``count``) from ``reference + delta``: its own lazy heap over the pairs whose
delta is nonzero, and the reference heap for all others.  Invariant: an
overlay's count of a pair is the count a replay of the variant's own word
counts would give (tests/test_verify_causes.py).
"""

import heapq

from ..pretokenize.patterns import get_pattern
from ..pretokenize.unicode_tables import UNICODE_VERSIONS
from .readings import GPT2, Readings, unicode_delta, versioned
from .replay import SHIFT, index_pairs, merge_ids

__all__ = [
    "VARIANTS",
    "VARIANT_TEXT",
    "VARIANT_CAUSE",
    "Overlay",
    "WordsOverlay",
    "make_overlays",
]

# (name, cause, description)
VARIANTS = [
    ("specials-as-text", "pre-tokenization", "special tokens counted as ordinary text"),
    ("lines", "pre-tokenization", "lines read separately (each line, newline included, pre-tokenized alone)"),
    (
        "lines+specials-as-text",
        "pre-tokenization",
        "lines read separately and special tokens counted as text (as HF tokenizers' trainer)",
    ),
    (
        "chunk-boundaries",
        "pre-tokenization",
        "the text read in fixed-size chunks, each pre-tokenized alone (pre-tokens split at chunk ends)",
    ),
    (
        "unicode-version",
        "unicode-version",
        "code points classified by another Unicode version's tables (its letters, numbers and marks)",
    ),
    ("once-per-pretoken", "counts", "each pair counted once per pre-token, however often it occurs in it"),
    (
        "double-counted-equal-pairs",
        "counts",
        "an incremental count update that counts (z, z) twice (and removes the pair between twice) "
        "when merged tokens z become adjacent",
    ),
    ("right-to-left", "merge-application", "merges applied right to left (a a a -> a aa)"),
    ("overlapping-merges", "merge-application", "overlapping occurrences both merged (a a a -> aa aa)"),
]
VARIANT_TEXT = {n: d for n, _, d in VARIANTS}
VARIANT_CAUSE = {n: c for n, c, _ in VARIANTS}
CHUNK_SIZES = (16, 32, 64, 100, 128, 256, 500, 512, 1000, 1024, 2048, 4000, 4096, 8192, 10000, 16384)
CHUNK_SIZES += (32768, 65536, 100000, 131072, 1 << 20)

# -- merging variants ---------------------------------------------------------------


def merge_right_to_left(ids, a, b, z):
    """(a, b) -> z scanning from the right, without overlap."""
    out, i = [], len(ids) - 1
    while i >= 0:
        if i > 0 and ids[i - 1] == a and ids[i] == b:
            out.append(z)
            i -= 2
        else:
            out.append(ids[i])
            i -= 1
    out.reverse()
    return out


def merge_overlapping(ids, a, b, z):
    """(a, b) -> z at every occurrence, overlapping ones too (``a a a`` -> ``aa aa``)."""
    out, i, n = [], 0, len(ids)
    while i < n:
        if i + 1 < n and ids[i] == a and ids[i + 1] == b:
            out.append(z)
            if not (i + 2 < n and ids[i + 1] == a and ids[i + 2] == b):
                i += 1  # no overlapping occurrence next: skip b too
        else:
            out.append(ids[i])
        i += 1
    return out


def _pair_keys(ids):
    return [(ids[j] << SHIFT) | ids[j + 1] for j in range(len(ids) - 1)]


# -- overlays ---------------------------------------------------------------------


class Overlay(object):
    """A variant as ``delta`` over a reference ``PairReplay``: count = reference + delta."""

    observes = False

    def __init__(self, name, ref, detail=None):
        self.name = name
        self.ref = ref
        self.detail = detail
        self.aliases = []  # other variants with the same word counts on this corpus
        self.delta = {}
        self.heap = []
        self._touched = set()
        self.parked = None  # keys whose reference heap entries are left out (``read_alone``)

    def add(self, key, n):
        if n:
            v = self.delta.get(key, 0) + n
            if v:
                self.delta[key] = v
            else:
                del self.delta[key]
                if self.parked is not None and self.parked.pop(key, False):
                    self.ref.unpark(key)  # counted by the reference heap again
            self._touched.add(key)

    def read_alone(self):
        """From now on this overlay is the reference heap's only reader: the entries of its
        difference's pairs, which it skips at every step, leave that heap when met instead
        of being popped and pushed back at each ``top``.  (The one variant left after the
        others failed, for 1,500 of english_small's hf model's 1,743 merges: entries
        popped per check 7.6 -> 2.9, checks 0.18-0.20 -> 0.14 CPU s in a cold PyPy
        process, 3 alternating runs; perf/verify_stages.py, checks.)"""
        if self.parked is None:
            self.parked = {}

    def count_key(self, key):
        if key is None:
            return 0
        return self.ref.counts.get(key, 0) + self.delta.get(key, 0)

    def refresh(self, changed):
        """Push the current count of every pair whose count or delta changed."""
        delta, counts, heap = self.delta, self.ref.counts, self.heap
        keys = self._touched
        if len(delta) < len(changed):
            keys.update(k for k in delta if k in changed)
        else:
            keys.update(k for k in changed if k in delta)
        for k in keys:
            if k in delta:
                c = counts.get(k, 0) + delta[k]
                if c > 0:
                    heapq.heappush(heap, (-c, k))
        self._touched = set()

    def _own_best(self):
        heap, delta, counts = self.heap, self.delta, self.ref.counts
        while heap:
            c, k = heap[0]
            if k in delta and counts.get(k, 0) + delta[k] == -c:
                return -c
            heapq.heappop(heap)
        return 0

    def best(self):
        return max(self._own_best(), self.ref.best_excluding(self.delta))

    def top(self):
        """(the best count, the keys at it): ``best()``, then ``tied_keys`` of it,
        from one scan of the reference heap (``PairReplay.top_excluding``)."""
        own = self._own_best()
        best, found = self.ref.top_excluding(self.delta, own, self.parked)
        m = max(own, best)
        if m <= 0:
            return m, []
        return m, self._own_tied(m, found)

    def tied_keys(self, m):
        return self._own_tied(m, self.ref.tied_keys(m, skip=self.delta))

    def _own_tied(self, m, found):
        """``found`` and the pairs of the own heap at count ``m``."""
        heap, delta, counts = self.heap, self.delta, self.ref.counts
        keep = {}
        while heap and -heap[0][0] >= m:
            e = heapq.heappop(heap)
            k = e[1]
            if k in delta and counts.get(k, 0) + delta[k] == -e[0] and e not in keep:
                keep[e] = True
                if -e[0] == m:
                    found.append(k)
        for e in keep:
            heapq.heappush(heap, e)
        return found

    def before_apply(self, a, b, z):
        pass


class WordsOverlay(Overlay):
    """Extra words (signed counts) and overridden reference words, merged by
    ``merge``; each contributes ``count * (its pairs)`` to delta, an override
    minus the reference word's own pairs."""

    def __init__(self, name, ref, merge=merge_ids, extra=None, detail=None):
        Overlay.__init__(self, name, ref, detail)
        self.merge = merge
        self.observes = merge is not merge_ids
        self.own, self.own_freq, self.where = [], [], {}
        self.override = {}  # reference word -> own entry
        self._enter_extra(extra or {})

    def _enter_extra(self, extra):
        """The extra words as own entries, their pairs' counts summed into delta in one pass
        (not ``_new_entry`` per word, an ``add`` per pair: english_small's hf model, its 16
        overlays 0.075-0.086 -> 0.019-0.025 CPU s in cold PyPy processes, 4 alternating;
        perf/verify_stages.py, WordsOverlay init)."""
        own, own_freq, delta = self.own, self.own_freq, self.delta
        first = len(own)
        for w, f in extra.items():
            if len(w) > 1:
                own.append(list(w))
                own_freq.append(f)
        index_pairs(own, own_freq, first, delta, self.where)
        for k in [k for k, v in delta.items() if not v]:
            del delta[k]
        self._touched.update(delta)

    def _new_entry(self, ids, f):
        e = len(self.own)
        self.own.append(ids)
        self.own_freq.append(f)
        for k in _pair_keys(ids):
            self.add(k, f)
            self._index(k, e)
        return e

    def _index(self, k, e):
        s = self.where.get(k)
        if s is None:
            self.where[k] = [e]
        elif s[-1] != e:
            s.append(e)

    def before_apply(self, a, b, z):
        """Merge (a, b) -> z in the own words that hold it.  Their pairs' changes are summed
        over the words first and only the nonzero sums added: a word's pairs away from its
        merges cancel.  Only pairs holding z are indexed: ``where`` keeps the others from
        before.  (A remove-and-add per pair of each word: english_small's hf model, before_apply
        0.178-0.193 -> 0.098-0.115 CPU s, replay 1.54-1.61 -> 1.44-1.50 s, 4 cold PyPy processes
        alternating; perf/verify_stages.py, overlay before_apply.)"""
        found = self.where.pop((a << SHIFT) | b, None)
        if not found:
            return
        own, own_freq, merge, where = self.own, self.own_freq, self.merge, self.where
        d = {}
        for e in found:
            old = own[e]
            new = merge(old, a, b, z)
            if len(new) == len(old):
                continue  # a stale index entry: every merge of an occurrence shortens the word
            f = own_freq[e]
            for j in range(len(old) - 1):
                k = (old[j] << SHIFT) | old[j + 1]
                d[k] = d.get(k, 0) - f
            for j in range(len(new) - 1):
                x, y = new[j], new[j + 1]
                k = (x << SHIFT) | y
                d[k] = d.get(k, 0) + f
                if x == z or y == z:
                    s = where.get(k)
                    if s is None:
                        where[k] = [e]
                    elif s[-1] != e:
                        s.append(e)
            own[e] = new
        add = self.add
        for k, n in d.items():
            if n:
                add(k, n)

    def merged_words(self, changes, a, b, z):
        """Reference words changed (``PairReplay.apply``'s observers).  Occurrences of
        (a, b), a != b, cannot overlap: every order merges them alike, so only the
        overrides' differences change."""
        override = self.override
        if a != b and not override:
            return
        for w, old, new, f in changes:
            if a == b or w in override:
                self.merged(w, old, new, f, a, b, z)

    def merged(self, w, old, new, f, a, b, z):
        """A reference word changed: keep its override's difference right, or start one."""
        e = self.override.get(w)
        if e is not None:
            for k in _pair_keys(old):
                self.add(k, f)
            for k in _pair_keys(new):
                self.add(k, -f)
            return
        if a != b:
            return  # occurrences of (a, b), a != b, cannot overlap: every order merges them alike
        mine = self.merge(old, a, b, z)
        if mine != new:
            for k in _pair_keys(new):
                self.add(k, -f)
            self.override[w] = self._new_entry(mine, f)


class OncePerPretoken(Overlay):
    """delta = -(occurrences - 1) * count for every pair repeated inside a word."""

    observes = True

    def __init__(self, ref):
        """The reference words' repeats summed into delta directly, not an ``add`` per pair
        (english_small's hf model: this init 0.047-0.051 -> 0.029-0.033 CPU s, make_overlays
        0.39-0.42 -> 0.36-0.38 s, 4 cold PyPy processes alternating; perf/verify_stages.py,
        overlays)."""
        Overlay.__init__(self, "once-per-pretoken", ref)
        delta = self.delta
        for ids, f in zip(ref.words, ref.freqs):
            for k in _repeated_pairs(ids):
                delta[k] = delta.get(k, 0) - f
        self._touched.update(delta)

    def _repeats(self, ids, f):
        for k in _repeated_pairs(ids):
            self.add(k, f)

    def merged_words(self, changes, a, b, z):
        repeats = self._repeats
        for _w, old, new, f in changes:
            repeats(old, f)
            repeats(new, -f)


def _repeated_pairs(ids):
    """The pair keys of ``ids``, each occurrence after a pair's first (``OncePerPretoken``'s
    excess)."""
    if len(set(ids)) == len(ids):
        return ()  # no token twice, so no pair twice
    seen, repeats = set(), []
    for j in range(len(ids) - 1):
        k = (ids[j] << SHIFT) | ids[j + 1]
        if k in seen:
            repeats.append(k)
        else:
            seen.add(k)
    return repeats


class DoubleCountedEqualPairs(Overlay):
    """When merging (a, b) -> z makes z adjacent to z, (z, z) gains the count
    once more and (b, a) loses it once more than it should; the merged pair's
    count is dropped, as an incremental trainer deletes it."""

    observes = True

    def __init__(self, ref):
        Overlay.__init__(self, "double-counted-equal-pairs", ref)

    def before_apply(self, a, b, z):
        key = (a << SHIFT) | b
        if key in self.delta:
            self.add(key, -self.delta[key])

    def merged_words(self, changes, a, b, z):
        for _w, old, new, f in changes:
            if new.count(z) < 2:
                continue
            n = _adjacent(new, z) - _adjacent(old, z)
            if n > 0:
                self.add((z << SHIFT) | z, f * n)
                if (b, a) != (a, b):
                    self.add((b << SHIFT) | a, -f * n)


def _adjacent(ids, z):
    return sum(1 for j in range(len(ids) - 1) if ids[j] == z and ids[j + 1] == z)


def make_overlays(ref, texts, special_tokens, max_cuts=None, readings=None, pattern=None):
    """Every variant that differs from the reference on this input, as overlays of ``ref``.

    Reading variants need ``texts``; one whose difference is empty is left out,
    and so is a chunk size whose difference equals a smaller one's.  ``pattern``
    (None: GPT-2's on the latest table) is the split the reference counted
    with: the lines, chunks and specials-as-text readings are GPT-2's (latest),
    so they are tried only under it; the Unicode versions, under any named
    pattern on any version (``versioned``).  ``readings`` (a ``Readings`` of the
    same texts) keeps the differences for later users.
    """
    overlays = [
        OncePerPretoken(ref),
        DoubleCountedEqualPairs(ref),
        WordsOverlay("right-to-left", ref, merge=merge_right_to_left),
        WordsOverlay("overlapping-merges", ref, merge=merge_overlapping),
    ]
    if texts is None:
        for o in overlays:
            o.refresh(())
        return overlays
    split = get_pattern(pattern)
    chars = sum(len(t) for t in texts)
    if readings is None or not readings.serves(texts, special_tokens):
        readings = Readings(texts, special_tokens)
    if max_cuts is None:
        max_cuts = max(256, chars // 2048)
    seen = []
    options = [
        ("specials-as-text", dict(specials_as_text=True), None),
        ("lines", dict(lines=True), None),
        ("lines+specials-as-text", dict(lines=True, specials_as_text=True), None),
    ]
    options += [("chunk-boundaries", dict(chunk=n), {"chunk_size": n}) for n in CHUNK_SIZES if n < chars]
    for name, option, detail in options if split.key == GPT2.key else ():
        if name.endswith("specials-as-text") and not special_tokens:
            continue
        delta = readings.delta(max_cuts=max_cuts if detail else None, **option)
        if not delta:
            continue
        same = next((o for d, o in seen if d == delta), None)
        if same is not None:  # the same word counts as an earlier variant: an alias of it
            same.aliases.append(dict(detail or {}, name=name))
            continue
        o = WordsOverlay(name, ref, extra=delta, detail=detail)
        seen.append((delta, o))
        overlays.append(o)
    for version in reversed(UNICODE_VERSIONS) if versioned(split) else ():
        if version == split.unicode:
            continue
        delta, code_points = unicode_delta(
            texts, special_tokens, version, readings.encoded(), split, readings.non_ascii_code_points()
        )
        if not delta:
            continue
        detail = {"unicode": version, "code_points": ["U+%04X" % cp for cp in code_points[:20]]}
        detail["code_points_total"] = len(code_points)
        same = next((o for d, o in seen if d == delta), None)
        if same is not None:
            same.aliases.append(dict(detail, name="unicode-version"))
            continue
        o = WordsOverlay("unicode-version", ref, extra=delta, detail=detail)
        seen.append((delta, o))
        overlays.append(o)
    for o in overlays:
        o.refresh(())  # the initial differences into the overlay's heap
    return overlays
