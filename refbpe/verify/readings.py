"""Reading differences: how a reading variant changes the word counts.

A trainer that reads the text otherwise than the reference counts other
words.  The readings (cause "pre-tokenization"): special tokens counted as
text, lines read separately (with and without special tokens as text), the
text read in chunks of N characters; and (cause "unicode-version") the
reference's pattern scanned with another Unicode version's tables.

``count_variant`` is the plain recount under a reading (the oracle).
``reading_delta`` gives the same counts as a difference from the reference's,
``{bytes: signed count}``, counting only the windows between safe cuts
(``cutter``) around each place that reads differently (a line end, a chunk
end, a special token read as text); each distinct window is counted once and
its difference added as often as it occurs.  ``unicode_delta`` recounts the
windows around each code point that two Unicode versions class differently.
Invariant (tests/test_verify_causes.py): every difference equals
``count_variant`` minus the reference counts.  Cost: the windows' lengths, not
the corpus's, plus one scan of the text for its cuts.

The differences of one corpus (``Readings``) are computed once and kept:
verify's overlays (``overlays.make_overlays``) merge them as extra words, and
the profile search derives its HF line-by-line word table from the
reference's and the same difference (``profile_rules.derived_table``).
"""

import bisect
import re

from ..pretokenize.patterns import get_pattern, pattern_names
from ..pretokenize.unicode_tables import changed_code_points
from ..specials import special_pattern, split_specials
from .cutter import ASCII_SPACE, Cutter, is_space

__all__ = [
    "GPT2",
    "count_variant",
    "reading_delta",
    "unicode_delta",
    "Readings",
    "versioned",
]

GPT2 = get_pattern("gpt2")  # the lines, chunks and specials-as-text readings are GPT-2's pieces


def _line_units(text, strip=False):
    units, start = [], 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        units.append(text[start:end].rstrip("\n") if strip else text[start:end])
        start = end
    return units


def count_variant(texts, special_tokens, specials_as_text=False, lines=None, prefix_space=False, chunk=None):
    """{bytes: count} of ``texts`` recounted under a reading variant.

    ``lines``: None, ``"keep"`` (split after each newline) or ``"strip"``
    (newlines dropped); ``chunk``: every ``chunk`` characters of each text
    read alone; ``prefix_space``: a space before each text segment.
    """
    pattern = None if specials_as_text else special_pattern(special_tokens)
    counts = {}
    for text in texts:
        units = [text]
        if chunk:
            units = [text[i : i + chunk] for i in range(0, len(text), chunk)]
        if lines:
            units = [u for t in units for u in _line_units(t, lines == "strip")]
        for unit in units:
            for segment, is_special in split_specials(unit, pattern):
                if is_special or not segment:
                    continue
                if prefix_space and not segment.startswith(" "):
                    segment = " " + segment
                for piece in GPT2.pretokenize(segment.encode("utf-8", "surrogatepass")):
                    counts[piece] = counts.get(piece, 0) + 1
    return counts


def _add_count(counts, data, pattern, sign, pretokenize=GPT2.pretokenize):
    if pattern is None or not pattern.search(data):
        for piece in pretokenize(data):
            counts[piece] = counts.get(piece, 0) + sign
        return
    for segment, is_special in split_specials(data, pattern):
        if not is_special:
            for piece in pretokenize(segment):
                counts[piece] = counts.get(piece, 0) + sign


def _chunk_offsets(text, chunk):
    """Byte offsets of every ``chunk``-th character of ``text``."""
    if text.isascii():
        return list(range(chunk, len(text), chunk))
    out, at = [], 0
    for i in range(0, len(text) - chunk, chunk):
        at += len(text[i : i + chunk].encode("utf-8", "surrogatepass"))
        out.append(at)
    return out


def reading_delta(
    texts,
    special_tokens,
    specials_as_text=False,
    lines=False,
    chunk=None,
    max_cuts=None,
    encoded=None,
    cache=None,
):
    """{bytes: signed count}: ``count_variant`` minus the reference counts.

    Only windows between safe cuts (``cutter``) around each place that reads
    differently (a line end, a chunk end, a special token read as text) are
    counted, a line end's window mostly as its run of whitespace
    (``_tally_runs``), and a window met again (line ends repeat:
    ``".\n\nThe"``) reuses its difference: each distinct window is counted
    once, its difference added as often as it occurs.  With special tokens cut
    out, a cut inside one breaks it: a text where the units read alone might
    then find another special token (``_kept_or_dropped``) is recounted whole.
    Returns None when a text would need more than
    ``max_cuts`` cuts.  ``encoded`` ((UTF-8 bytes, ``cuts.Cutter``) per text)
    and ``cache`` (a dict) may be shared between calls: chunk sizes that
    divide each other share windows.
    """
    pattern = special_pattern(special_tokens, as_bytes=True)
    if encoded is None:
        encoded = encode_texts(texts, pattern)
    tally = {}  # window key -> how often it occurs
    # Line runs stand for their windows only when no special token holds a space (``_tally_runs``).
    runs = bool(lines) and not chunk and not any(is_space(c) for t in special_tokens for c in t)
    tokens = [t.encode("utf-8") for t in special_tokens if t]
    held = any(b"\n" in t[:-1] for t in tokens)  # a line cut can fall inside a special token
    delta = {}
    for text, (data, cutter) in zip(texts, encoded):
        # every cut; those that change nothing on their own; the others; their line runs
        cuts, quiet, events, line_runs = [], (), [], None
        if lines:
            census = cache.get(("lines", data, runs)) if cache is not None else None
            if census is None:
                census = _line_census(data, cutter, runs, held)
                if cache is not None:  # the lines readings with and without special tokens share it
                    cache[("lines", data, runs)] = census
            cuts, quiet, events, line_runs = census
        if chunk:
            if max_cuts is not None and len(text) // chunk > max_cuts:
                return None
            cuts = sorted(cuts + _chunk_offsets(text, chunk))
            # Windows open around the cuts that matter; inside a window every cut is made.
            events = [c for c in cuts if c not in quiet]
        if not specials_as_text and not _kept_or_dropped(data, cutter, cuts, tokens):
            _recount_text(delta, text, special_tokens, lines, chunk)
            continue
        if line_runs is not None:
            events = _tally_runs(data, cutter, events, line_runs, specials_as_text, tally)
        events = [(c, c) for c in events]
        if specials_as_text:
            events.extend(zip(cutter.starts, cutter.ends))
            events.sort()
        windows = []
        for s, e in events:
            a, q = cutter.before(s), cutter.after(e)
            if a == q:
                continue  # a cut at a safe place changes nothing
            if windows and a < windows[-1][1]:
                windows[-1][1] = max(windows[-1][1], q)
            else:
                windows.append([a, q])
        for a, q in windows:
            lo = bisect.bisect_right(cuts, a)
            hi = bisect.bisect_left(cuts, q)
            window = data[a:q]
            # Special tokens read as text change nothing in a window without one.
            as_text = specials_as_text and pattern is not None and pattern.search(window) is not None
            key = (as_text, window, tuple([c - a for c in cuts[lo:hi]]))
            tally[key] = tally.get(key, 0) + 1
    v_pattern = None if specials_as_text else pattern
    for key, m in tally.items():  # each distinct window's difference found once, added m times
        d = cache.get(key) if cache is not None else None
        if d is None:
            d = _window_delta(key[1], key[2], pattern, None if key[0] else v_pattern)
            if cache is not None:
                cache[key] = d
        for w, n in d:
            delta[w] = delta.get(w, 0) + n * m
    return {w: n for w, n in delta.items() if n}


def _window_delta(window, offsets, pattern, v_pattern):
    """[(bytes, signed count)]: the pieces of ``window`` cut at ``offsets`` (each part
    read alone, special tokens split by ``v_pattern``) minus its pieces read whole
    (special tokens split by ``pattern``); ``offsets`` None: after each newline."""
    if offsets is None:
        offsets = tuple(i + 1 for i in range(len(window)) if window[i] == 10)
    d = {}
    _add_count(d, window, pattern, -1)
    bounds = (0,) + offsets + (len(window),)
    for x, y in zip(bounds, bounds[1:]):
        _add_count(d, window[x:y], v_pattern, 1)
    return [(w, n) for w, n in d.items() if n]


def _line_census(data, cutter, runs, held=False):
    """(every line cut, those that change nothing on their own (a set), the others,
    and with ``runs`` their runs of ASCII whitespace ``(a, r, first, end, alone)``:
    bytes [a, r), ``events[first:end]`` its cuts, ``alone`` whether it is its own
    window and holds its only cuts, special tokens cut out (``_stands_alone``)).
    ``held``: some special token holds a newline before its end, so a cut inside
    one matters (it breaks the token)."""
    n = len(data)
    cuts, quiet = [], set()
    starts = set(cutter.starts)
    i = data.find(b"\n")
    while 0 <= i < n - 1:
        cuts.append(i + 1)
        if not _line_cut_matters(data, i + 1, n, starts) and not (held and cutter.inside_special(i + 1)):
            quiet.add(i + 1)
        i = data.find(b"\n", i + 1)
    events = [c for c in cuts if c not in quiet]
    if not runs:
        return cuts, quiet, events, None
    line_runs, j, count = [], 0, len(events)
    while j < count:
        s = events[j]
        a = s - 1
        while a > 0 and data[a - 1] < 0x80 and ASCII_SPACE[data[a - 1]]:
            a -= 1
        r = s
        while r < n and data[r] < 0x80 and ASCII_SPACE[data[r]]:
            r += 1
        k = j + 1
        while k < count and events[k] <= r:
            k += 1  # the run's other cuts that matter
        line_runs.append((a, r, j, k, _stands_alone(cutter, a, r, n)))
        j = k
    return cuts, quiet, events, line_runs


def _kept_or_dropped(data, cutter, cuts, tokens):
    """Whether reading the units between ``cuts`` alone (special tokens cut out)
    keeps every special-token occurrence of the text that no cut falls inside,
    drops the others, and finds no new one; then the windows of ``reading_delta``
    are exact (its safe cuts are safe for that reading too).

    A cut inside an occurrence [s, e) breaks it: its unit ends (or starts)
    inside it.  The reading then finds another occurrence only where some
    special token occurs at s (a shorter one) or inside (s, e): everywhere else
    the reference found none, or found one no cut breaks, and each unit's
    leftmost-longest scan finds the same.  ("a\\nb" and "a": the line "a\\n"
    holds "a".)  Cost: a bisection per occurrence, and a scan of each broken one.
    """
    for s, e in zip(cutter.starts, cutter.ends):
        i = bisect.bisect_right(cuts, s)
        if i < len(cuts) and cuts[i] < e:  # broken
            if any(data.startswith(t, p) for p in range(s + 1, e) for t in tokens):
                return False
            if any(len(t) < e - s and data.startswith(t, s) for t in tokens):
                return False
    return True


def _recount_text(delta, text, special_tokens, lines, chunk):
    """Add to ``delta`` the reading's difference on ``text`` by recounting it whole
    (``count_variant``): the exact path where a window would not be."""
    lines = "keep" if lines else None
    for w, n in count_variant([text], special_tokens, lines=lines, chunk=chunk).items():
        delta[w] = delta.get(w, 0) + n
    for w, n in count_variant([text], special_tokens).items():
        delta[w] = delta.get(w, 0) - n


def _tally_runs(data, cutter, events, line_runs, specials_as_text, tally):
    """The line cuts of ``events`` whose windows are not tallied here: each run of
    ASCII whitespace (``line_runs``, from ``_line_census``) is counted in
    ``tally`` as a stand-in window, and its cuts are left out, when that is exact.

    A run [a, r) stands for its window [a, q) (``q``: the next safe cut) as
    ``(None, run + stand-in, None)``: the stand-in is ``b"a"`` for the non-space
    at r, ``b""`` for the text's end or a special token cut out there.  For the
    reference and the lines reading alike, no piece joins the run to the
    non-space before it, the run's split depends only on whether a non-space
    follows it, and the pieces from that non-space to q are the same (its piece
    takes the run's last character when that is a space, the same in both:
    every line cut follows a newline), so they cancel.  Runs recur
    (``".\\n\\nThe"`` and ``"!\\n\\nA"`` are one window) and a run costs its length,
    not a recount.  Exact when the window holds no other cut and joins no
    other window, which these checks ensure (special tokens hold no space):

    * the characters before a and at r are no spaces (a non-ASCII space goes
      on with the run, and the cut at a is then no safe cut);
    * the next run with a newline starts after a non-space: a safe cut, so q
      comes before it and no cut falls in [r, q);
    * with special tokens read as text, no special token's window starts at a
      (one in the word after the run, or right after it, joins the run's window).

    (The census is kept in ``cache`` for the lines reading with special tokens
    as text.  The windows of every line cut were most of what PyPy's JIT
    warmed up on: verify's reading differences on english_small's hf model,
    medians of 3 cold processes, 0.56 -> 0.30 s under PyPy, 0.45 -> 0.16 s
    under CPython; perf/verify_stages.py, reading deltas.)
    """
    n = len(data)
    cut_out = () if specials_as_text else set(cutter.starts)
    joined = set(cutter.before(s) for s in cutter.starts) if specials_as_text else ()
    rest = []
    for a, r, j, k, alone in line_runs:
        if alone and a not in joined:
            key = (None, data[a:r] + (b"" if r == n or r in cut_out else b"a"), None)
            tally[key] = tally.get(key, 0) + 1
        else:
            rest.extend(events[j:k])
    return rest


def _stands_alone(cutter, a, r, n):
    """Whether the line run [a, r) is its own window and holds its only cuts, special
    tokens cut out (``_tally_runs``)."""
    if (a > 0 and cutter.space_before(a)) or (r < n and cutter.space_at(r)):
        return False
    data = cutter.data
    x = data.find(b"\n", r)  # the next run's newline
    if x < 0:
        return True
    while data[x - 1] < 0x80 and ASCII_SPACE[data[x - 1]]:
        x -= 1  # the next run's start (data[r] is no space: x - 1 >= r)
    return not cutter.space_before(x)


def unicode_delta(texts, special_tokens, version, encoded=None, pattern=None, code_points=None):
    """({bytes: signed count}, code points): the word counts of split ``pattern``
    (None: GPT-2's; a name or key, on the version it names) read by Unicode
    ``version`` instead, minus the reference's, and the code points of ``texts``
    classed differently by the two versions.

    Only the windows between safe cuts around each such code point are
    recounted: GPT-2's whitespace cuts (``cutter``), or for the GPT-4 family
    the pattern's own rule (``Pattern.cut_points``, lone newlines between
    ASCII non-spaces).  Both read only ASCII and whitespace, the same in every
    version, so a cut safe for one version is safe for the other.
    ``code_points`` (the set of the code points in ``texts``, when known; its
    non-ASCII ones suffice, ``Readings.non_ascii_code_points``) skips a
    text-free answer's scan."""
    ours = get_pattern(pattern)
    changed = set(changed_code_points(version, ours.unicode))
    if code_points is not None and not changed.intersection(code_points):
        return {}, []
    theirs = get_pattern(ours, unicode=version)
    specials = special_pattern(special_tokens, as_bytes=True)
    if encoded is None:
        encoded = encode_texts(texts, specials)
    delta, found = {}, set()
    for text, (data, cutter) in zip(texts, encoded):
        here = changed.intersection(map(ord, set(text)))
        if not here:
            continue
        found |= here
        around = GPT2Windows(cutter) if ours.name == "gpt2" else _RuleWindows(data, cutter, ours)
        windows, at = [], 0
        for ch in text:
            width = len(ch.encode("utf-8", "surrogatepass"))
            if ord(ch) in here:
                a, q = around.window(at, at + width)
                if windows and a <= windows[-1][1]:
                    windows[-1][1] = max(windows[-1][1], q)
                else:
                    windows.append([a, q])
            at += width
        for a, q in windows:
            _add_count(delta, data[a:q], specials, -1, ours.pretokenize)
            _add_count(delta, data[a:q], specials, 1, theirs.pretokenize)
    return {w: n for w, n in delta.items() if n}, sorted(found)


class Readings(object):
    """One corpus's reading differences, each computed once: ``reading_delta``'s
    windows and results and the code points of the texts, shared by verify's
    variants (``make_overlays``) and the profiles' word tables
    (``profile_rules.derived_table``)."""

    def __init__(self, texts, special_tokens):
        self.texts, self.special_tokens = texts, list(special_tokens)
        self._encoded = self._code_points = None
        self.cache, self.deltas = {}, {}

    def serves(self, texts, special_tokens):
        return texts is self.texts and list(special_tokens) == self.special_tokens

    def encoded(self):
        if self._encoded is None:
            self._encoded = encode_texts(self.texts, special_pattern(self.special_tokens, as_bytes=True))
        return self._encoded

    def non_ascii_code_points(self):
        """The set of the texts' code points above ASCII: the only ones that Unicode
        versions class differently (``changed_code_points`` never holds ASCII).

        Found by a regex: PyPy walks a non-ASCII ``str`` slowly (english_small under
        PyPy: 0.12 -> 0.05 s, part of perf/verify_stages.py's overlays), and the set
        of the UTF-8 bytes for ASCII cost 0.03 CPU seconds of a cold process more."""
        if self._code_points is None:
            found = set()
            for text in self.texts:
                found.update(map(ord, set(_NON_ASCII.findall(text))))
            self._code_points = found
        return self._code_points

    def delta(self, max_cuts=None, **options):
        """``reading_delta(texts, special_tokens, max_cuts=max_cuts, **options)``, computed once."""
        key = (max_cuts, tuple(sorted(options.items())))
        if key not in self.deltas:
            self.deltas[key] = reading_delta(
                self.texts,
                self.special_tokens,
                max_cuts=max_cuts,
                encoded=self.encoded(),
                cache=self.cache,
                **options,
            )
        return self.deltas[key]


class GPT2Windows(object):
    """The window of safe GPT-2 cuts (``cutter``) around bytes [s, e)."""

    def __init__(self, cutter):
        self.cutter = cutter

    def window(self, s, e):
        return self.cutter.before(s), self.cutter.after(e)


class _RuleWindows(object):
    """The window of safe cuts of ``pattern``'s rule around bytes [s, e): its
    candidates outside special tokens, the special tokens' ends, the text's ends."""

    def __init__(self, data, cutter, pattern):
        cuts = {0, len(data)}
        cuts.update(m.end() for m in pattern.cut_points.finditer(data))
        cuts.update(cutter.starts)
        cuts.update(cutter.ends)
        self.cuts = sorted(c for c in cuts if not cutter.inside_special(c))

    def window(self, s, e):
        cuts = self.cuts
        return cuts[bisect.bisect_right(cuts, s) - 1], cuts[bisect.bisect_left(cuts, e)]


def versioned(pattern):
    """Whether split ``pattern`` (a ``Pattern``) can read another Unicode version: the named ones."""
    return pattern.name in pattern_names()


def _line_cut_matters(data, s, n, special_starts):
    """Whether cutting after the newline at ``s - 1`` can change the pre-tokens.

    It cannot for a lone newline between ASCII non-spaces, nor right before
    the last character of a whitespace run that an ASCII non-space (not a
    special token) follows: the reference splits such a run into all but its
    last character and its last character, exactly where the cut falls.
    """
    nxt = data[s]
    if not _NOT_PLAIN[nxt] and not _NOT_PLAIN[data[s - 2]] if s >= 2 else not _NOT_PLAIN[nxt]:
        return False
    if nxt < 0x80 and _NOT_PLAIN[nxt] and s + 1 < n and not _NOT_PLAIN[data[s + 1]]:
        return (s + 1) in special_starts
    return True


def encode_texts(texts, pattern):
    """(UTF-8 bytes, ``cuts.Cutter``) per text, for ``reading_delta``."""
    out = []
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        out.append((data, Cutter(data, pattern)))
    return out


_NON_ASCII = re.compile("[^\x00-\x7f]")
_NOT_PLAIN = bytes(0 if i < 128 and not is_space(chr(i)) else 1 for i in range(256))  # space or non-ASCII
