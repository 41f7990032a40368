"""``refbpe verify``: compare another implementation's output with the reference,
and explain the first divergence.

Merges (``refbpe verify CORPUS... --vocab-size N --against PATH``)
    The reference merges come from ``count.count_words`` + ``merge.learn_merges``
    (or from a word-count file, see below).  At the first index k where the
    merge lists differ, both pairs' counts after the first k merges (which the
    two lists share) are computed under the reference semantics:

    * their pair has the maximum count too: a tie, broken differently.  Their
      choice is checked against the known tie rules (``TIE_RULES``):
      refbpe/CS336 take the greatest (left bytes, right bytes); HF tokenizers,
      rustbpe and bpeasy the smallest (left id, right id); minbpe and tiktoken's
      ``_educational`` the pair counted first (scanning the text in order).
    * its count is lower (or zero): the counts differ.  When the corpus is
      given (and small enough), their whole merge list is replayed under
      counting variants (special tokens counted as text, line-by-line reading,
      a prefix space) to say which one their merges are consistent with.

Word-count files (``*.counts.tsv[.gz]``, or ``--counts``)
    The format of ``refbpe.countfile`` (its names are re-exported here):
    ``count<TAB>escaped bytes`` lines.  ``refbpe count CORPUS... -o FILE``
    writes one; it lets another implementation's merge phase be verified
    alone.  Several files are added up.

Encodings (``refbpe verify --encode TEXT --ids IDS --against MODEL``)
    Their ids for TEXT (a ``.npy`` array or a JSON list) against refbpe's
    encoding of TEXT with the model at MODEL (any format), reporting the first
    differing position with its pre-token.

Exit status: 0 identical, 1 different, 2 bad input.
"""

import heapq
import json
import os
import struct
import sys

from .countfile import (
    counts_tsv,
    escape_word,
    is_counts_path,
    read_counts,
    sum_counts,
    unescape_word,
    write_counts,
)
from .naive import merge_word
from .pretokenize import pretokenize
from .specials import special_pattern, split_specials

__all__ = [
    "escape_word",
    "unescape_word",
    "counts_tsv",
    "write_counts",
    "read_counts",
    "PairReplay",
    "verify_merges",
    "verify_encoding",
    "read_ids",
    "TIE_RULES",
]

EXIT_IDENTICAL, EXIT_DIFFERENT, EXIT_BAD_INPUT = 0, 1, 2

# -- readable bytes -------------------------------------------------------------


def show(b):
    """Bytes shown readably: the str repr when valid UTF-8, else the bytes repr."""
    try:
        return repr(b.decode("utf-8"))
    except UnicodeDecodeError:
        return repr(b)


def show_pair(pair):
    return "(%s, %s)" % (show(pair[0]), show(pair[1]))


def _pair_json(pair):
    return {"left": pair[0].hex(), "right": pair[1].hex(), "text": show_pair(pair)}


# -- replaying merges over word counts ---------------------------------------------


class PairReplay(object):
    """Word counts with merges applied one at a time, and the pair counts kept exact.

    ``apply(pair)`` merges any pair (theirs may not be ours); ``max_count()`` and
    ``tied(count)`` read the current counts through a lazily cleaned max-heap.
    """

    def __init__(self, word_counts):
        self.words, self.freqs = [], []
        for w, n in word_counts.items():
            if n > 0 and len(w) > 1:
                self.words.append([w[i : i + 1] for i in range(len(w))])
                self.freqs.append(n)
        self.counts, self.where = {}, {}
        for k, (toks, n) in enumerate(zip(self.words, self.freqs)):
            for p in zip(toks, toks[1:]):
                self.counts[p] = self.counts.get(p, 0) + n
                s = self.where.get(p)
                if s is None:
                    self.where[p] = s = set()
                s.add(k)
        self.heap = [(-c, p) for p, c in self.counts.items()]
        heapq.heapify(self.heap)

    def count(self, pair):
        return self.counts.get(pair, 0)

    def max_count(self):
        heap, counts = self.heap, self.counts
        while heap:
            c, p = heap[0]
            if counts.get(p, 0) == -c:
                return -c
            heapq.heappop(heap)
        return 0

    def tied(self, count):
        """All pairs whose count is ``count`` (the maximum), sorted."""
        heap, counts = self.heap, self.counts
        found, popped = set(), []
        while heap and -heap[0][0] >= count:
            c, p = heapq.heappop(heap)
            if counts.get(p, 0) == -c:
                popped.append((c, p))
                if -c == count:
                    found.add(p)
        for e in popped:
            heapq.heappush(heap, e)
        return sorted(found)

    def apply(self, pair):
        a, b = pair
        merged = a + b
        counts, where, heap = self.counts, self.where, self.heap
        changed = set()
        for k in where.pop(pair, ()):
            toks = self.words[k]
            if not any(x == a and y == b for x, y in zip(toks, toks[1:])):
                continue
            n = self.freqs[k]
            for p in zip(toks, toks[1:]):
                counts[p] -= n
                changed.add(p)
            out = merge_word(toks, pair, merged)
            self.words[k] = out
            for p in zip(out, out[1:]):
                counts[p] = counts.get(p, 0) + n
                changed.add(p)
                s = where.get(p)
                if s is None:
                    where[p] = s = set()
                s.add(k)
        for p in changed:
            c = counts.get(p, 0)
            if c > 0:
                heapq.heappush(heap, (-c, p))
            else:
                counts.pop(p, None)


# -- tie rules --------------------------------------------------------------------

# (name, who uses it).  Each rule picks one pair out of the tied set.
TIE_RULES = [
    ("greatest-bytes", "greatest (left bytes, right bytes), as the CS336 reference and refbpe"),
    ("smallest-ids", "smallest (left id, right id) in their id layout, as HF tokenizers, rustbpe and bpeasy"),
    (
        "smallest-ids-refbpe-layout",
        "smallest (left id, right id) with bytes as ids 0-255 and merge k as 256+k, as rustbpe and bpeasy",
    ),
    ("smallest-bytes", "smallest (left bytes, right bytes)"),
    ("greatest-ids", "greatest (left id, right id) in their id layout"),
    (
        "first-counted",
        "the pair counted first scanning the text in order, as minbpe and tiktoken's _educational trainer",
    ),
]
_RULE_TEXT = dict(TIE_RULES)


def _rule_choices(tied, their_ids, ref_ids):
    """{rule name: chosen pair} for the order-free rules."""
    big = float("inf")

    def ids(table, p):
        return (table.get(p[0], big), table.get(p[1], big))

    out = {
        "greatest-bytes": max(tied),
        "smallest-bytes": min(tied),
        "smallest-ids-refbpe-layout": min(tied, key=lambda p: ids(ref_ids, p)),
    }
    if their_ids is not None:
        out["smallest-ids"] = min(tied, key=lambda p: ids(their_ids, p))
        out["greatest-ids"] = max(
            tied, key=lambda p: (-1, -1) if big in ids(their_ids, p) else ids(their_ids, p)
        )
    return out


def _first_counted(texts, special_tokens, merges, tied):
    """The pair of ``tied`` met first scanning ``texts`` pre-token by pre-token
    with ``merges`` applied; None when none is met."""
    tied = set(tied)
    ranks = {m: r for r, m in enumerate(merges)}
    pattern = special_pattern(special_tokens)
    cache = {}
    for text in texts:
        for segment, is_special in split_specials(text, pattern):
            if is_special:
                continue
            for piece in pretokenize(segment.encode("utf-8", "surrogatepass")):
                toks = cache.get(piece)
                if toks is None:
                    toks = cache[piece] = _bpe(piece, ranks)
                for p in zip(toks, toks[1:]):
                    if p in tied:
                        return p
    return None


def _bpe(piece, ranks):
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


# -- counting variants (hypotheses for count differences) ---------------------------

# (name, description, specials counted as text, line mode, prefix space)
VARIANTS = [
    ("reference", "the reference: whole text, special tokens removed, no prefix space", False, None, False),
    ("specials-as-text", "special tokens counted as ordinary text", True, None, False),
    (
        "lines",
        "reading line by line (each line, newline included, pre-tokenized on its own)",
        False,
        "keep",
        False,
    ),
    (
        "lines+specials-as-text",
        "reading line by line and counting special tokens as text (as HF tokenizers' trainer does)",
        True,
        "keep",
        False,
    ),
    ("lines-stripped", "reading line by line with the newline removed", False, "strip", False),
    (
        "lines-stripped+specials-as-text",
        "line by line without newlines, special tokens counted as text",
        True,
        "strip",
        False,
    ),
    ("prefix-space", "a space added before each text segment (add_prefix_space)", False, None, True),
    ("prefix-space+specials-as-text", "a prefix space and special tokens counted as text", True, None, True),
    ("lines+prefix-space", "line by line with a prefix space on each line", False, "keep", True),
    (
        "lines+prefix-space+specials-as-text",
        "line by line, prefix space, special tokens counted as text",
        True,
        "keep",
        True,
    ),
]


def count_variant(texts, special_tokens, specials_as_text, lines, prefix_space):
    """{bytes: count} of ``texts`` under a counting variant."""
    pattern = None if specials_as_text else special_pattern(special_tokens)
    counts = {}

    def add(segment):
        if prefix_space and not segment.startswith(" "):
            segment = " " + segment
        for piece in pretokenize(segment.encode("utf-8", "surrogatepass")):
            counts[piece] = counts.get(piece, 0) + 1

    for text in texts:
        units = [text]
        if lines:
            units = (
                text.splitlines(True)
                if lines == "keep"
                else [u.rstrip("\r\n") for u in text.splitlines(True)]
            )
        for unit in units:
            for segment, is_special in split_specials(unit, pattern):
                if not is_special and segment:
                    add(segment)
    return counts


def replay_consistency(word_counts, merges, their_ids, ref_ids, limit=None):
    """How far ``merges`` are consistent with maximum counts under ``word_counts``.

    Returns (steps consistent, tie rules consistent at every tie so far, ties seen).
    """
    replay = PairReplay(word_counts)
    rules = None
    ties = 0
    n = len(merges) if limit is None else min(limit, len(merges))
    for j in range(n):
        pair = merges[j]
        m = replay.max_count()
        c = replay.count(pair)
        if c == 0 or c != m:
            return j, sorted(rules) if rules is not None else None, ties
        tied = replay.tied(m)
        if len(tied) > 1:
            ties += 1
            agree = {r for r, p in _rule_choices(tied, their_ids, ref_ids).items() if p == pair}
            rules = agree if rules is None else rules & agree
        replay.apply(pair)
    return n, sorted(rules) if rules is not None else None, ties


# -- the merge verification -------------------------------------------------------


def _ref_ids(merges, count):
    ids = {bytes([i]): i for i in range(256)}
    for k, (a, b) in enumerate(merges[:count]):
        ids.setdefault(a + b, 256 + k)
    return ids


def verify_merges(
    word_counts, vocab_size, special_tokens, theirs, texts=None, hypotheses=True, ignore_ids=False
):
    """The report (a dict) comparing ``theirs`` (an ``exports.Model``) with the
    reference trained on ``word_counts``.  ``texts`` (the corpus, when
    available) enables the first-counted tie rule and the counting variants."""
    from .merge import learn_merges
    from .train import build_vocab, check_training_args

    vocab_size, special_tokens = check_training_args(vocab_size, special_tokens)
    wanted = vocab_size - 256 - len(special_tokens)
    ours = learn_merges(word_counts, wanted)
    our_vocab = build_vocab(ours, special_tokens)
    their_merges = [(bytes(a), bytes(b)) for a, b in theirs.merges]

    k = None
    for i in range(min(len(ours), len(their_merges))):
        if ours[i] != their_merges[i]:
            k = i
            break
    if k is None and len(ours) != len(their_merges):
        k = min(len(ours), len(their_merges))

    report = {
        "identical": False,
        "first_divergence": k,
        "merges_identical": k is None,
        "ours": {"num_merges": len(ours), "vocab_size": len(our_vocab), "special_tokens": special_tokens},
        "theirs": {
            "path": theirs.path,
            "format": theirs.format,
            "num_merges": len(their_merges),
            "vocab_size": len(theirs.vocab),
            "special_tokens": theirs.special_tokens,
        },
    }
    lines = []

    # Vocab: as a set of byte strings, then ids where the format has them.
    our_set, their_set = set(our_vocab.values()), set(theirs.vocab.values())
    missing = sorted(our_set - their_set)
    extra = sorted(their_set - our_set)
    ids_same = None
    id_mismatches = []
    if theirs.carries_ids:
        ids_same = our_vocab == theirs.vocab
        if not ids_same:
            for i in sorted(set(our_vocab) | set(theirs.vocab)):
                if our_vocab.get(i) != theirs.vocab.get(i):
                    id_mismatches.append(
                        {
                            "id": i,
                            "ours": show(our_vocab[i]) if i in our_vocab else None,
                            "theirs": show(theirs.vocab[i]) if i in theirs.vocab else None,
                        }
                    )
                    if len(id_mismatches) >= 10:
                        break
    report["vocab"] = {
        "identical_as_set": not missing and not extra,
        "ids_identical": ids_same,
        "ids_compared": bool(theirs.carries_ids and not ignore_ids),
        "missing_in_theirs": [show(b) for b in missing[:20]],
        "num_missing_in_theirs": len(missing),
        "extra_in_theirs": [show(b) for b in extra[:20]],
        "num_extra_in_theirs": len(extra),
        "first_id_mismatches": id_mismatches,
    }
    ids_ok = ids_same is None or ignore_ids or ids_same
    report["identical"] = k is None and not missing and not extra and ids_ok

    if k is None:
        lines.append("merges identical (%d merges)" % len(ours))
        if missing or extra:
            lines.append(
                "vocab differs as a set: %d of ours missing in theirs (e.g. %s), %d extra in theirs (e.g. %s)"
                % (
                    len(missing),
                    ", ".join(show(b) for b in missing[:3]) or "-",
                    len(extra),
                    ", ".join(show(b) for b in extra[:3]) or "-",
                )
            )
        elif not ids_ok:
            lines.append(
                "vocab is the same set of byte strings but the ids differ (first: id %d is %s in ours, %s in theirs); "
                "pass --ignore-ids to compare the set only"
                % (id_mismatches[0]["id"], id_mismatches[0]["ours"], id_mismatches[0]["theirs"])
            )
        else:
            lines.append("vocab identical (%d tokens)" % len(our_vocab))
        report["explanation"] = "; ".join(lines)
        report["divergence"] = None
        return report

    their_ids = theirs.id_of()
    ref_ids = _ref_ids(ours, k)
    replay = PairReplay(word_counts)
    for pair in ours[:k]:
        replay.apply(pair)
    m = replay.max_count()
    div = {"index": k, "max_count": m}
    report["divergence"] = div
    our_pair = ours[k] if k < len(ours) else None
    their_pair = their_merges[k] if k < len(their_merges) else None
    div["ours"] = dict(_pair_json(our_pair), count=replay.count(our_pair)) if our_pair else None
    div["theirs"] = dict(_pair_json(their_pair), count=replay.count(their_pair)) if their_pair else None
    div["tie"] = False
    div["tie_rules"] = []
    div["hints"] = []
    head = "first divergence at merge %d (0-based)" % k

    if their_pair is None or our_pair is None:
        div["kind"] = "length"
        if their_pair is None:
            lines.append(
                "%s: theirs stops after %d merges, ours continues with %s (count %d)"
                % (head, len(their_merges), show_pair(our_pair), replay.count(our_pair))
            )
            div["hints"].append(
                "a different number of merges: check how vocab_size counts special tokens and the 256 bytes"
            )
        else:
            lines.append(
                "%s: ours stops after %d merges (%s), theirs continues with %s (count %d under the reference)"
                % (
                    head,
                    len(ours),
                    "no pair left" if m == 0 else "vocab size reached",
                    show_pair(their_pair),
                    replay.count(their_pair),
                )
            )
            div["hints"].append(
                "they learn more merges: check --vocab-size and how special tokens are counted in it"
            )
    else:
        c_ours, c_theirs = replay.count(our_pair), replay.count(their_pair)
        lines.append("%s: theirs %s, ours %s" % (head, show_pair(their_pair), show_pair(our_pair)))
        if c_theirs == m:
            tied = replay.tied(m)
            div["kind"] = "tie"
            div["tie"] = True
            div["tied_pairs"] = len(tied)
            div["tied_examples"] = [show_pair(p) for p in tied[:10]]
            choices = _rule_choices(tied, their_ids, ref_ids)
            if texts is not None:
                first = _first_counted(texts, special_tokens, ours[:k], tied)
                if first is not None:
                    choices["first-counted"] = first
            agree = [r for r, _ in TIE_RULES if choices.get(r) == their_pair]
            div["tie_rules"] = agree
            div["rule_choices"] = {r: show_pair(p) for r, p in choices.items()}
            lines.append("a tie: both pairs occur %d times (%d pairs share the maximum)" % (m, len(tied)))
            if agree:
                lines.append(
                    "their choice agrees with: " + "; ".join("%s (%s)" % (r, _RULE_TEXT[r]) for r in agree)
                )
            else:
                lines.append(
                    "their choice agrees with none of the known tie rules (%s)"
                    % ", ".join(r for r, _ in TIE_RULES)
                )
        else:
            div["kind"] = "count_difference" if c_theirs > 0 else "missing_pair"
            if c_theirs > 0:
                lines.append(
                    "counts differ: under the reference semantics their pair occurs %d times, ours %d (the maximum)"
                    % (c_theirs, c_ours)
                )
            else:
                lines.append(
                    "counts differ: their pair does not occur at all under the reference semantics (ours occurs %d times)"
                    % c_ours
                )
            div["hints"] = [
                "different pre-tokenization (another regex, or another Unicode version for \\p{L}/\\p{N}/\\s)",
                "reading line by line (whitespace runs and newlines are then counted differently)",
                "special tokens counted as text (or documents not split at them)",
                "a prefix space added to each text (add_prefix_space)",
                "counts kept in 32-bit integers (overflow)"
                if m >= 1 << 31
                else "a bug in their incremental count updates",
            ]
    if hypotheses and texts is not None and their_merges:
        hyp = []
        for name, desc, as_text, line_mode, prefix in VARIANTS:
            wc = (
                word_counts
                if name == "reference"
                else count_variant(texts, special_tokens, as_text, line_mode, prefix)
            )
            steps, rules, ties = replay_consistency(
                wc, their_merges, their_ids, _ref_ids(their_merges, len(their_merges))
            )
            hyp.append(
                {
                    "variant": name,
                    "description": desc,
                    "consistent_merges": steps,
                    "of": len(their_merges),
                    "tie_rules_consistent": rules,
                    "ties": ties,
                }
            )
        hyp.sort(key=lambda h: -h["consistent_merges"])
        div["hypotheses"] = hyp
        best = hyp[0]
        ref = [h for h in hyp if h["variant"] == "reference"][0]
        if best["consistent_merges"] > ref["consistent_merges"]:
            full = best["consistent_merges"] == best["of"]
            msg = (
                "their merges are consistent with maximum counts under '%s' (%s) for %s merges (vs %d under the reference)"
                % (
                    best["variant"],
                    best["description"],
                    "all %d" % best["of"]
                    if full
                    else "the first %d of %d" % (best["consistent_merges"], best["of"]),
                    ref["consistent_merges"],
                )
            )
            if best["tie_rules_consistent"]:
                msg += ", breaking every tie by: %s" % ", ".join(best["tie_rules_consistent"])
            lines.append(msg)
            div["hints"].insert(0, "counting as '%s': %s" % (best["variant"], best["description"]))
        elif ref["consistent_merges"] == ref["of"]:
            msg = "every one of their merges has the maximum count under the reference semantics: only tie-breaking differs"
            if ref["tie_rules_consistent"]:
                msg += " (their ties all agree with: %s)" % ", ".join(ref["tie_rules_consistent"])
            lines.append(msg)
    if div["hints"] and div["kind"] != "tie":
        lines.append("possible causes: " + "; ".join(div["hints"]))
    report["explanation"] = "\n".join(lines)
    return report


# -- token-id verification ----------------------------------------------------------


def read_ids(path):
    """A list of ints from a ``.npy`` file (1-D integer array) or a JSON list (or whitespace-separated ints)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] == b"\x93NUMPY":
        return _read_npy(path, data)
    text = data.decode("utf-8").strip()
    try:
        ids = json.loads(text) if text.startswith("[") else [int(x) for x in text.split()]
    except ValueError:
        raise ValueError("%s: expected a .npy array, a JSON list or whitespace-separated integers" % path)
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise ValueError("%s: expected a flat list of integers" % path)
    return ids


_NPY_TYPES = {"i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "i8": "q", "u8": "Q"}


def _read_npy(path, data):
    """A 1-D integer ``.npy`` without numpy (format versions 1-3)."""
    import ast

    major = data[6]
    if major == 1:
        hlen = struct.unpack("<H", data[8:10])[0]
        start = 10
    elif major in (2, 3):
        hlen = struct.unpack("<I", data[8:12])[0]
        start = 12
    else:
        raise ValueError("%s: unsupported .npy version %d" % (path, major))
    try:
        header = ast.literal_eval(data[start : start + hlen].decode("latin-1"))
        descr, shape = header["descr"], tuple(header["shape"])  # 1-D: fortran_order is moot
    except (ValueError, SyntaxError, KeyError, TypeError):
        raise ValueError("%s: malformed .npy header" % path)
    if len(shape) > 1 and sum(1 for s in shape if s != 1) > 1:
        raise ValueError("%s: expected a 1-D array, shape %r" % (path, shape))
    order, kind = descr[0], descr[1:]
    if kind not in _NPY_TYPES or order not in "<>|=":
        raise ValueError("%s: expected an integer array, dtype %r" % (path, descr))
    n = 1
    for s in shape:
        n *= s
    fmt = (">" if order == ">" else "<") + _NPY_TYPES[kind] * n
    body = data[start + hlen :]
    try:
        return list(struct.unpack(fmt, body[: struct.calcsize(fmt)]))
    except struct.error:
        raise ValueError("%s: truncated .npy data" % path)


def verify_encoding(model, text, their_ids):
    """Report comparing ``their_ids`` with refbpe's encoding of ``text`` under ``model``."""
    tok = model.tokenizer()
    ours = tok.encode(text)
    n = min(len(ours), len(their_ids))
    pos = next((i for i in range(n) if ours[i] != their_ids[i]), None)
    if pos is None and len(ours) != len(their_ids):
        pos = n
    report = {
        "identical": pos is None,
        "first_divergence": pos,
        "ours_length": len(ours),
        "theirs_length": len(their_ids),
    }
    if pos is None:
        report["explanation"] = "token ids identical (%d ids)" % len(ours)
        return report

    def tok_json(i):
        if i is None:
            return None
        b = tok.vocab.get(i)
        return {"id": i, "text": show(b) if b is not None else None}

    # Walk the pre-tokens to find the one holding position ``pos``.
    offset = 0
    char_pos = 0
    found = None
    for segment, is_special in split_specials(text, special_pattern(tok.special_tokens)):
        pieces = (
            [segment]
            if is_special
            else [
                p.decode("utf-8", "surrogatepass")
                for p in pretokenize(segment.encode("utf-8", "surrogatepass"))
            ]
        )
        for piece in pieces:
            ids = tok.encode(piece)  # a special token alone encodes to its id
            if offset + len(ids) > pos or (pos == len(ours) and offset + len(ids) == pos):
                found = (piece, is_special, ids, offset, char_pos)
                break
            offset += len(ids)
            char_pos += len(piece)
        if found:
            break
    div = {
        "position": pos,
        "ours": tok_json(ours[pos] if pos < len(ours) else None),
        "theirs": tok_json(their_ids[pos] if pos < len(their_ids) else None),
    }
    lines = [
        "first difference at token position %d: theirs %s, ours %s"
        % (
            pos,
            "%d %s" % (their_ids[pos], div["theirs"]["text"])
            if pos < len(their_ids)
            else "(end: theirs is shorter)",
            "%d %s" % (ours[pos], div["ours"]["text"]) if pos < len(ours) else "(end: ours is shorter)",
        )
    ]
    if found:
        piece, is_special, ids, start, cpos = found
        line_no = text.count("\n", 0, cpos) + 1
        div["pretoken"] = {
            "text": repr(piece),
            "special": is_special,
            "char_offset": cpos,
            "line": line_no,
            "ours_ids": ids,
            "theirs_ids": list(their_ids[start : start + max(len(ids), pos - start + 1)]),
            "first_id_position": start,
        }
        div["context"] = text[max(0, cpos - 40) : cpos + len(piece) + 40]
        lines.append(
            "in pre-token %r (%s) at character %d, line %d: ours %s, theirs %s"
            % (
                piece,
                "special token" if is_special else "text",
                cpos,
                line_no,
                ids,
                div["pretoken"]["theirs_ids"],
            )
        )
        their_tok = tok.vocab.get(their_ids[pos]) if pos < len(their_ids) else None
        piece_bytes = piece.encode("utf-8", "surrogatepass")
        text_bytes = text.encode("utf-8", "surrogatepass")
        at = len(b"".join(tok.vocab[i] for i in ours[:pos]))  # the ids before agree
        inside = at - len(b"".join(tok.vocab[i] for i in ours[start:pos]))  # start of the pre-token
        div["byte_offset"] = at
        if pos >= len(their_ids):
            div["kind"] = "length"
            lines.append("their ids end here; the text goes on")
        elif their_tok is None:
            div["kind"] = "unknown_id"
            lines.append("their id %d is not in the vocab" % their_ids[pos])
        elif text_bytes[at : at + len(their_tok)] != their_tok:
            div["kind"] = "text_mismatch"
            lines.append(
                "their token does not spell the text at byte %d (%s there): a token dropped or added, "
                "or their ids use another vocab/id layout" % (at, show(text_bytes[at : at + len(their_tok)]))
            )
        elif at + len(their_tok) > inside + len(piece_bytes):
            div["kind"] = "pretokenization"
            lines.append(
                "their token crosses the end of this pre-token: the pre-tokenization (or special-token matching) differs"
            )
        else:
            div["kind"] = "merge_application"
            lines.append(
                "their token lies inside the same pre-token: the merges are applied differently (merge order or rank rule)"
            )
    report["divergence"] = div
    report["explanation"] = "\n".join(lines)
    return report


# -- CLI ------------------------------------------------------------------------------


def _is_counts_file(path, forced):
    return forced or is_counts_path(path)


def _emit(args, report):
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, sort_keys=True) + "\n")
    else:
        status = "identical" if report["identical"] else "DIFFERENT"
        sys.stdout.write("%s\n%s\n" % (status, report["explanation"]))
    return EXIT_IDENTICAL if report["identical"] else EXIT_DIFFERENT


def cmd_verify(args):
    from .cli import CliError
    from .exports import FormatError, read_model

    if not args.against:
        raise CliError("--against PATH is required")
    if not os.path.exists(args.against):
        raise CliError("%s: no such file or directory" % args.against)
    try:
        theirs = read_model(args.against, args.format, args.special_token, strict=False)
    except FormatError as e:
        raise CliError(str(e))

    if args.encode:
        if not args.ids:
            raise CliError("--encode needs --ids FILE (their token ids: .npy or a JSON list)")
        for p in (args.encode, args.ids):
            if not os.path.isfile(p):
                raise CliError("%s: no such file" % p)
        try:
            text = open(args.encode, "rb").read().decode("utf-8")
        except UnicodeDecodeError as e:
            raise CliError("%s: invalid UTF-8 at byte offset %d" % (args.encode, e.start))
        try:
            ids = read_ids(args.ids)
            report = verify_encoding(theirs, text, ids)
        except ValueError as e:
            raise CliError(str(e))
        return _emit(args, report)

    if not args.corpus:
        raise CliError("no input: give CORPUS files (or a word-count file) and --vocab-size")
    if args.vocab_size is None:
        raise CliError("--vocab-size is required")
    for s in args.corpus:
        if s != "-" and not os.path.isfile(s):
            raise CliError("%s: no such file" % s)
    texts = None
    if all(_is_counts_file(s, args.counts) for s in args.corpus):
        try:
            word_counts = sum_counts(args.corpus)
        except ValueError as e:
            raise CliError(str(e))
    elif any(_is_counts_file(s, args.counts) for s in args.corpus):
        raise CliError("give either text corpora or word-count files, not both")
    else:
        from .count import InputError, count_words

        sizes = [os.path.getsize(s) for s in args.corpus if s != "-"]
        total = sum(sizes)
        workers = args.workers or (1 if total < (16 << 20) else None)
        try:
            word_counts = count_words(args.corpus, args.special_token, workers=workers)
        except InputError as e:
            raise CliError(str(e))
        if not args.no_hypotheses and "-" not in args.corpus and total <= args.max_hypothesis_bytes:
            try:
                texts = [open(s, "rb").read().decode("utf-8") for s in args.corpus]
            except UnicodeDecodeError:
                texts = None
    try:
        report = verify_merges(
            word_counts,
            args.vocab_size,
            args.special_token,
            theirs,
            texts=texts,
            hypotheses=not args.no_hypotheses,
            ignore_ids=args.ignore_ids,
        )
    except ValueError as e:
        raise CliError(str(e))
    return _emit(args, report)


def register(sub):
    from .exports import FORMATS

    v = sub.add_parser(
        "verify",
        help="compare another implementation's merges (or token ids) with the reference and explain the first divergence",
        description="Train the reference on CORPUS (or read a word-count file) and compare with the tokenizer at "
        "--against; or, with --encode, compare their token ids for a text. Exit 0 identical, 1 different, 2 bad input.",
    )
    v.add_argument(
        "corpus",
        nargs="*",
        metavar="CORPUS",
        help="UTF-8 text files, or word-count files (*.counts.tsv[.gz] or --counts)",
    )
    v.add_argument("--vocab-size", type=int, default=None, help="256 bytes + merges + special tokens")
    v.add_argument(
        "--special-token", action="append", default=[], metavar="TOKEN", help="a special token (repeatable)"
    )
    v.add_argument(
        "--against",
        metavar="PATH",
        help="their output: GPT-2 directory, tokenizer.json, tiktoken ranks file or hex JSON",
    )
    v.add_argument(
        "--format", choices=("auto",) + FORMATS, default="auto", help="format of PATH (default: detect)"
    )
    v.add_argument("--json", action="store_true", help="print one JSON object")
    v.add_argument("--counts", action="store_true", help="CORPUS files are word-count files")
    v.add_argument(
        "--ignore-ids", action="store_true", help="compare the vocab as a set of byte strings only"
    )
    v.add_argument(
        "--encode",
        metavar="TEXT",
        help="verify token ids instead: refbpe's encoding of TEXT with the model at --against ...",
    )
    v.add_argument(
        "--ids",
        metavar="FILE",
        help="... against their ids (.npy, a JSON list or whitespace-separated integers)",
    )
    v.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes for counting (default: 1 below 16 MB, else CPU count)",
    )
    v.add_argument(
        "--no-hypotheses",
        action="store_true",
        help="do not replay their merges under other counting variants",
    )
    v.add_argument(
        "--max-hypothesis-bytes",
        type=int,
        default=16 << 20,
        help="replay counting variants only for corpora up to this size (default 16 MiB)",
    )
    v.set_defaults(func=cmd_verify)
