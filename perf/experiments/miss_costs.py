"""What a piece-cache miss costs an encode call, and three changes tried to make it cheaper.

    .venv-pypy/bin/python perf/experiments/miss_costs.py --list
    .venv-pypy/bin/python perf/experiments/miss_costs.py miss-share miss-order pair-filter flat-table
    .venv-pypy/bin/python perf/experiments/miss_costs.py cache-size table-order
    .venv-pypy/bin/python perf/experiments/miss_costs.py loop-parts
    .venv-pypy/bin/python perf/experiments/miss_costs.py --fill    # peak RSS with the caches full
    .venv-pypy/bin/python perf/experiments/miss_costs.py --compulsory

Cases (``harness.Cases``, run as ``perf/micro.py``'s are), under PyPy:

- ``miss-share``: a warm 8 MB call (after the first 8 MB of the same text) of a tiktoken
  encoding, a fresh process per run, as it is and with the merging loop
  (``Tokenizer._merge_piece``) replaced by a look-up of ids computed before the call for every
  piece of both texts: the difference is what the misses' BPE costs inside the call, against
  what the same BPE costs in a loop of its own (``pair-filter``'s figures);
- ``pair-filter``: the merging loop as it is (a pair is looked up only when its left id is the
  left part of some pair and its right id the right part of some: two ``bytes`` tables,
  ``RankTables._index_pairs``) against the same loop looking every pair up, over the pieces of
  4 MB that are no token, shuffled (in sorted order neighbours share their table entries);
- ``flat-table``: the merging loop as it is against one whose pair table is an open-addressing
  ``array('q')`` (key and value side by side, linear probing at under half full) instead of a
  dict, same pieces;
- ``miss-order``: the warm call of ``miss-share`` as it is, with the merging loop looked up,
  with every piece of the text in the piece cache (a first call on the same 8 MB, caches that
  drop nothing: the call's floor when nothing misses), and the time of the merging loop alone
  on the pieces it got during the call, in their order, in a loop of its own after the call;
- ``table-order``: the warm call with the pair table's entries in the order ``_rank_pairs``
  makes them (by token bytes) against in rank order (the pairs most pieces use first, side by side);
- ``cache-size``: the warm call of ``miss-share`` with ``piece_ids._CACHE_LIMIT`` (entries per
  cache generation) as it is, 1 << 16 and 1 << 17;
- ``loop-parts``: the merging loop over ``pair-filter``'s pieces against the two things it is
  made of, each alone in a loop of the same pieces: the pair look-ups it makes (their keys
  recorded beforehand, looked up in the same order) and the list it starts from (a piece's
  byte ids and the ranks of its byte pairs, interleaved).  What neither explains is the loop's
  own work.

``--compulsory`` counts, for the second 8 MB of a text after the first (the warm call of
``miss-share``), its pieces, the distinct ones not seen in the first 8 MB (of those: tokens,
and those ``_encode_one`` cuts), and the pieces the merging loop gets during the warm call
(``Tokenizer._merge_piece`` calls), one process per encoding: what no piece cache could have
answered, against what this one did not.

``--fill`` encodes the first 24 MB of russian, chinese, mixed_multilingual, python_code and
english_medium, in calls of 8 MB, with o200k_base in one process per cache setting (generations
of a fixed 1 << 15, 1 << 16 or 1 << 17 entries, or as they are: starting at ``_CACHE_LIMIT`` and
doubling, ``piece_ids._grown_after``), with ``refbpe encode``'s GC settings, and prints the CPU
seconds, the peak RSS, the memory the collector holds at the end beyond the loaded tokenizer's
(after a full collection: the caches, mostly) and the entries the caches hold.  Not part of
the suite (perf/experiments/README.md); what it measured is in the CHANGELOG ("Where the misses'
time goes").  Python 3.9 syntax.
"""

import json
import os
import random
import subprocess
import sys
from array import array

# Run as a script from perf/experiments/: the harness is one level up.
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import GPT2_FILES, TIKTOKEN_CACHE, Cases, tree_env  # noqa: E402
from harness import corpus as corpus_path  # noqa: E402
from harness import read_corpus as corpus  # noqa: E402

from refbpe.cli.pypy_gc import GC_SETTINGS  # noqa: E402  ``refbpe encode``'s collector settings

MB = 1 << 20
CASES = Cases()
case = CASES.case
NO_MERGE = 1 << 62

_WARM_CHILD = """
import hashlib, sys, time
import refbpe.encode.piece_ids as piece_ids
from refbpe.encode.tokenizer import Tokenizer
name, path, how = sys.argv[1], sys.argv[2], sys.argv[3]
if how.startswith("limit="):
    piece_ids._CACHE_LIMIT = int(how[6:])
if how == "all-cached":  # caches that never drop an entry, filled by a first call on the same text
    piece_ids._CACHE_LIMIT = 1 << 30
tok = Tokenizer.from_tiktoken(name)
if how == "by-rank":  # the pair table's entries laid out in rank order: the common pairs together
    tok._ranks = dict(sorted(tok._ranks.items(), key=lambda kv: kv[1]))
with open(path, "rb") as f:
    first, data = f.read(8000000), f.read(8000000)
first, data = (t.decode("utf-8", "ignore").encode("utf-8") for t in (first, data))
if how == "looked-up":  # every piece's ids known beforehand: the merging loop becomes a look-up
    merge, known = tok._merge_piece, {}
    for text in (first, data):
        start = 0
        for end in tok._piece_ends(text):
            piece = text[start:end]
            start = end
            if piece not in known:
                known[piece] = merge(piece)
    tok._merge_piece = lambda piece: known[piece] if piece in known else merge(piece)
missed = []
if how == "misses-alone":  # the pieces the merging loop gets in the call, in their order
    merge = tok._merge_piece
    tok._merge_piece = lambda piece: missed.append(piece) or merge(piece)
tok.encode_utf8_ordinary(first)
if how == "all-cached":
    tok.encode_utf8_ordinary(data)
del missed[:]
t0 = time.process_time()
ids = tok.encode_utf8_ordinary(data)
seconds = time.process_time() - t0
if how == "misses-alone":  # their BPE again, in a loop of its own: the call's time is not printed
    t0 = time.process_time()
    for piece in missed:
        merge(piece)
    seconds = time.process_time() - t0
print(hashlib.sha256(repr(ids).encode()).hexdigest(), seconds)
"""

_FILL_CHILD = """
import gc, json, resource, sys, time
import refbpe.encode.piece_ids as piece_ids
from refbpe.encode.tokenizer import Tokenizer
def used_mb():  # PyPy's figure is text: "240.3MB"
    text = gc.get_stats().memory_used_sum
    for unit, scale in (("kB", 1.0 / 1024), ("MB", 1.0), ("GB", 1024.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float(text) / (1 << 20)
if sys.argv[1] != "grows":  # a fixed generation size: no doubling
    piece_ids._CACHE_LIMIT, piece_ids._CACHE_DOUBLINGS = int(sys.argv[1]), 0
tok = Tokenizer.from_tiktoken("o200k_base")
gc.collect()
loaded = used_mb()
t0 = time.process_time()
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        for _ in range(3):
            data = f.read(8000000)
            tok.encode_utf8_ordinary(data.decode("utf-8", "ignore").encode("utf-8"))
cpu = time.process_time() - t0
del data
gc.collect()
caches = (tok._cache, tok._old, tok._small_cache, tok._small_old)
print(json.dumps({"cpu": cpu, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                  "live_mb": used_mb() - loaded,
                  "entries": sum(map(len, caches))}))
"""


def child(script, *args, env_extra=None):
    env = dict(tree_env(), TIKTOKEN_CACHE_DIR=TIKTOKEN_CACHE, **(env_extra or {}))
    done = subprocess.run(
        [sys.executable, "-c", script] + list(args), env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def warm_call(name, text, how):
    digest, seconds = child(_WARM_CHILD, name, corpus_path(text), how).split()
    return digest, float(seconds)


@case("miss-share", "the misses' BPE in a warm 8 MB call: as is against ids looked up", 5, 0, "self")
def bench_miss_share(args):
    for name in ("o200k_base", "cl100k_base"):
        for text in ("russian", "mixed_multilingual", "english_medium"):
            variants = [
                (how, lambda h=how, n=name, t=text: warm_call(n, t, h)) for how in ("as-is", "looked-up")
            ]
            yield variants, "%s, %s: 8 MB after 8 MB, own processes" % (name, text)


@case(
    "miss-order",
    "a warm 8 MB call as is, with its BPE looked up, with every piece cached, and its misses' BPE alone",
    5,
    0,
    "self",
)
def bench_miss_order(args):
    hows = ("as-is", "looked-up", "all-cached", "misses-alone")
    for name in ("o200k_base", "cl100k_base"):
        for text in ("russian", "english_medium"):
            variants = [(how, lambda h=how, n=name, t=text: warm_call(n, t, h)) for how in hows]
            yield variants, "%s, %s: 8 MB after 8 MB, own processes" % (name, text)


@case("table-order", "the pair table in the order it is built (by token) against rank order", 5, 0, "self")
def bench_table_order(args):
    for name in ("o200k_base", "cl100k_base"):
        for text in ("russian", "english_medium"):
            hows = ("as-is", "by-rank")
            variants = [(how, lambda h=how, n=name, t=text: warm_call(n, t, h)) for how in hows]
            yield variants, "%s, %s: 8 MB after 8 MB, own processes" % (name, text)


@case(
    "cache-size",
    "piece_ids._CACHE_LIMIT: a warm 8 MB call at 1 << 15 (as is), 1 << 16, 1 << 17",
    5,
    0,
    "self",
)
def bench_cache_size(args):
    hows = [("as is", "as-is"), ("1 << 16", "limit=65536"), ("1 << 17", "limit=131072")]
    for name in ("o200k_base", "cl100k_base"):
        for text in ("russian", "mixed_multilingual", "english_medium"):
            variants = [(label, lambda h=how, n=name, t=text: warm_call(n, t, h)) for label, how in hows]
            yield variants, "%s, %s: 8 MB after 8 MB, own processes" % (name, text)


def missed_pieces(tok, name, limit=4 * MB):
    """The distinct pieces of ``limit`` bytes of corpus ``name`` that are no token (2-191
    bytes: the merging loop's), shuffled."""
    data = corpus(name, limit)
    ends = tok._piece_ends(data)
    whole = tok._rank_of.get if tok._rank_of is not None else {}.get
    pieces = sorted(
        {data[s:e] for s, e in zip([0] + ends, ends) if 1 < e - s < 192 and whole(data[s:e]) is None}
    )
    random.Random(1).shuffle(pieces)
    return pieces


def tokenizers():
    from refbpe.encode.tokenizer import Tokenizer

    os.environ.setdefault("TIKTOKEN_CACHE_DIR", TIKTOKEN_CACHE)
    yield "gpt2 (files)", Tokenizer.from_files(*GPT2_FILES)
    for name in ("cl100k_base", "o200k_base"):
        yield name, Tokenizer.from_tiktoken(name)


def merge_by(tok, look_up, piece):
    """The merging loop (``Tokenizer._merge_piece`` without its ``_left`` / ``_right`` test),
    every pair looked up by ``look_up(key)``: its packed rank and id, or ``NO_MERGE``."""
    shift = tok._shift
    mask = (1 << shift) - 1
    ids = [tok._byte_id[b] for b in piece]
    pairs = tok._byte_pairs
    ranks = [pairs[(piece[k] << 8) | piece[k + 1]] for k in range(len(piece) - 1)]
    while ranks:
        best, at = NO_MERGE, -1
        for k in range(len(ranks)):
            if ranks[k] < best:
                best, at = ranks[k], k
        if at < 0:
            break
        ids[at] = best & mask
        del ids[at + 1]
        del ranks[at]
        new = ids[at]
        if at > 0:
            ranks[at - 1] = look_up((ids[at - 1] << shift) | new)
        if at < len(ranks):
            ranks[at] = look_up((new << shift) | ids[at + 1])
    return ids


def dict_look_up(tok):
    """``merge_by``'s look-up in the tokenizer's own pair table (a dict)."""
    get = tok._ranks.get
    return lambda key: get(key, NO_MERGE)


@case("pair-filter", "piece_ids.py _merge_piece: pairs filtered by _left/_right against all looked up")
def bench_pair_filter(args):
    for vocab, tok in tokenizers():
        for name in ("english_small", "russian", "python_code"):
            pieces = missed_pieces(tok, name)
            look_up = dict_look_up(tok)
            variants = [
                ("filtered", lambda ps=pieces, t=tok: [t._merge_piece(p) for p in ps]),
                ("all looked up", lambda ps=pieces, t=tok, f=look_up: [merge_by(t, f, p) for p in ps]),
            ]
            yield variants, "%s, %s 4 MB: %d pieces that are no token" % (vocab, name, len(pieces))


def recorded_look_ups(tok, pieces):
    """The keys ``Tokenizer._merge_piece`` looks up in the pair table over ``pieces``, in order."""
    keys, table = [], tok._ranks

    class Recorder(object):
        def get(self, key, default=None):
            keys.append(key)
            return table.get(key, default)

    tok._ranks = Recorder()
    try:
        for piece in pieces:
            tok._merge_piece(piece)
    finally:
        tok._ranks = table
    return keys


def merged_alone(tok, pieces):
    """The merging loop over ``pieces``; how many (the result the other variants give too)."""
    for piece in pieces:
        tok._merge_piece(piece)
    return len(pieces)


def look_ups_alone(table, keys, pieces):
    """The pair look-ups ``keys`` of ``pieces``, in order; how many pieces."""
    get = table.get
    for key in keys:
        get(key, NO_MERGE)
    return len(pieces)


def list_alone(tok, pieces):
    """The list the merging loop starts from (``chain``), built for every piece as it builds it."""
    byte_id, pairs = tok._byte_id, tok._byte_pairs
    for piece in pieces:
        n = len(piece)
        chain = [0] * (2 * n - 1)
        left = piece[0]
        chain[0] = byte_id[left]
        for k in range(1, n):
            right = piece[k]
            chain[2 * k - 1] = pairs[(left << 8) | right]
            chain[2 * k] = byte_id[right]
            left = right
    return len(pieces)


@case("loop-parts", "piece_ids.py _merge_piece: the loop against its pair look-ups alone and its list alone")
def bench_loop_parts(args):
    for vocab, tok in tokenizers():
        for name in ("english_small", "russian", "python_code"):
            pieces = missed_pieces(tok, name)
            keys = recorded_look_ups(tok, pieces)
            variants = [
                ("merging loop", lambda ps=pieces, t=tok: merged_alone(t, ps)),
                ("look-ups alone", lambda ps=pieces, ks=keys, t=tok: look_ups_alone(t._ranks, ks, ps)),
                ("list alone", lambda ps=pieces, t=tok: list_alone(t, ps)),
            ]
            yield (
                variants,
                "%s, %s 4 MB: %d pieces, %.1f look-ups each"
                % (
                    vocab,
                    name,
                    len(pieces),
                    len(keys) / max(1, len(pieces)),
                ),
            )


class FlatTable(object):
    """A pair table as one ``array('q')``: slot h holds key and value at 2h and 2h + 1, linear
    probing, at most half full; a missing key's value is ``NO_MERGE``."""

    def __init__(self, table, shift):
        self.shift, self.mask = shift, (1 << shift) - 1  # ``slot`` hashes the two ids apart
        size = 1 << (2 * len(table)).bit_length()
        self.slots = size - 1
        self.cells = cells = array("q", [-1]) * (2 * size)
        for key, value in table.items():
            h = self.slot(key)
            while cells[2 * h] != -1:
                h = (h + 1) & self.slots
            cells[2 * h], cells[2 * h + 1] = key, value

    def slot(self, key):
        x = (key >> self.shift) * 0x9E3779B1 ^ (key & self.mask) * 0x85EBCA77  # under 2**63
        return (x ^ (x >> 23)) & self.slots

    def get(self, key):
        cells, h = self.cells, self.slot(key)
        while True:
            k = cells[2 * h]
            if k == key:
                return cells[2 * h + 1]
            if k == -1:
                return NO_MERGE
            h = (h + 1) & self.slots


@case("flat-table", "piece_ids.py _merge_piece: the pair table as a dict against an open-addressing array")
def bench_flat_table(args):
    for vocab, tok in tokenizers():
        flat = FlatTable(tok._ranks, tok._shift)
        for name in ("english_small", "russian", "chinese"):
            pieces = missed_pieces(tok, name)
            variants = [
                ("dict", lambda ps=pieces, t=tok: [t._merge_piece(p) for p in ps]),
                ("array", lambda ps=pieces, t=tok, f=flat.get: [merge_by(t, f, p) for p in ps]),
            ]
            yield variants, "%s, %s 4 MB: %d pieces that are no token" % (vocab, name, len(pieces))


_COMPULSORY_CHILD = """
import json, sys
from refbpe.encode.tokenizer import Tokenizer
name, paths = sys.argv[1], sys.argv[2:]
calls = []
for path in paths:
    tok = Tokenizer.from_tiktoken(name)  # empty caches: the warm call of miss-share below
    merge = tok._merge_piece
    with open(path, "rb") as f:
        first, data = f.read(8000000), f.read(8000000)
    first, data = (t.decode("utf-8", "ignore").encode("utf-8") for t in (first, data))
    def pieces(text):
        ends = tok._piece_ends(text)
        return [text[s:e] for s, e in zip([0] + ends, ends)]
    seen = set(pieces(first))
    second = pieces(data)
    new = set(p for p in second if p not in seen)
    tokens = sum(1 for p in new if p in tok._rank_of)
    cut = sum(1 for p in new if p not in tok._rank_of and len(p) >= 8 and p[-3] >= 0xE0)
    tok._merge_piece = lambda piece: calls.append(piece) or merge(piece)
    tok.encode_utf8_ordinary(first)
    del calls[:]
    tok.encode_utf8_ordinary(data)
    figures = {"text": path.rsplit("/", 1)[-1], "pieces": len(second), "new": len(new), "tokens": tokens}
    figures.update(cut=cut, merged=len(calls), merged_distinct=len(set(calls)))
    print(json.dumps(figures))
"""


def compulsory():
    texts = [corpus_path(n) for n in ("russian", "english_medium", "python_code", "mixed_multilingual")]
    print(
        "%-12s %-24s %9s %9s %8s %8s %9s %9s"
        % ("encoding", "text", "pieces", "new", "tokens", "cut", "merged", "distinct")
    )
    for name in ("o200k_base", "cl100k_base"):
        for line in child(_COMPULSORY_CHILD, name, *texts).splitlines():
            r = json.loads(line)
            print(
                "%-12s %-24s %9d %9d %8d %8d %9d %9d"
                % (
                    name,
                    r["text"],
                    r["pieces"],
                    r["new"],
                    r["tokens"],
                    r["cut"],
                    r["merged"],
                    r["merged_distinct"],
                )
            )


def fill():
    paths = [
        corpus_path(n) for n in ("russian", "chinese", "mixed_multilingual", "python_code", "english_medium")
    ]
    print("%-14s %8s %8s %8s %10s" % ("generations", "CPU s", "peak MB", "live MB", "entries"))
    for limit in ("32768", "65536", "131072", "grows"):
        r = json.loads(child(_FILL_CHILD, limit, *paths, env_extra=GC_SETTINGS))
        label = "grows" if limit == "grows" else "fixed " + limit
        print("%-14s %8.2f %8d %8.1f %10d" % (label, r["cpu"], r["peak_mb"], r["live_mb"], r["entries"]))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--fill"]:
        fill()
        return 0
    if argv == ["--compulsory"]:
        compulsory()
        return 0
    return CASES.main(__doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
