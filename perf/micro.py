"""Micro-benchmarks behind the "measured" comments in refbpe's modules: one named case per claim.

    PYTHONPATH=. .venv-pypy/bin/python perf/micro.py --list           # the cases, their claims and inputs
    PYTHONPATH=. .venv-pypy/bin/python perf/micro.py merge-in-place    # one case (or several)
    PYTHONPATH=. .venv-pypy/bin/python perf/micro.py                   # all (~5 minutes, quiet 2 cores)
    PYTHONPATH=. .venv/bin/python perf/micro.py --merges 2000 encode-neighbours   # CPython works too

Each case times a trick against the alternative its comment compares it with, on the comment's
input from the shared corpora (found by ``perf/harness.py``).  The trick is the library's own
code where the comment sits on a function (``Tokenizer._merge_piece``, ``_encode_bytes``,
``count_pretokens``); the alternative is written out here, small.
``merge-link-fill`` and ``merge-new-slots`` time the engine's fill and slot arrays against the
alternatives (the variants of the whole engine are ``perf/experiments/merge_variants.py``, which
registers its cases here and runs them with this runner); ``pretokenize-inline`` compiles the
source of ``piece_ends`` as it is and edited to call a helper; ``count-chunk-size`` runs
``python -m refbpe count`` in fresh processes (the count time of its ``--report``);
``pack-counts`` runs ``perf/bench_pickle.py``.  The pre-tokenizers' cases are defined in
``perf/micro_pretokenize.py`` and run from here.

Every variant is warmed up (PyPy's JIT), then all run in turn for ``--repeats`` rounds, and
their results are checked equal (``harness.Cases``, ``harness.race``).  Single-process cases
are timed in CPU time, which a busy machine disturbs far less than wall time; cases with
worker processes in wall time.  One line per case and input: the trick's best time, each
alternative's best time and the ratio alternative / trick (> 1: the trick wins), the ratio of
medians, the interpreter and the load average.  Compare ratios from one run, not absolute
times.  Python 3.9 syntax (PyPy runs it).
"""

import json
import os
import subprocess
import sys
import tempfile

import micro_pretokenize
from harness import GPT2_FILES, PERF, TIKTOKEN_CACHE, Cases, stopwatch, tree_env
from harness import corpus as corpus_path
from harness import read_corpus as corpus

MB = 1 << 20
CASES = Cases()
case = CASES.case


# --- encode/piece_ids.py: the trick is Tokenizer's own method, the alternative is written out here ------

_GPT2 = {}


def gpt2():
    """A Tokenizer with the GPT-2 vocab and merges (shared data)."""
    if not _GPT2:
        from refbpe.encode.tokenizer import Tokenizer

        _GPT2["t"] = Tokenizer.from_files(*GPT2_FILES)
    return _GPT2["t"]


def encode_rescan(tok, piece):
    """The alternative to _merge_piece's ranks list: look every adjacent pair up after each merge."""
    table, shift, none = tok._ranks, tok._shift, 1 << 62
    ids = [tok._byte_id[b] for b in piece]
    while len(ids) > 1:
        best, at = none, -1
        for k in range(len(ids) - 1):
            r = table.get((ids[k] << shift) | ids[k + 1], none)
            if r < best:
                best, at = r, k
        if at < 0:
            break
        ids[at] = best & ((1 << shift) - 1)
        del ids[at + 1]
    return ids


@case("encode-neighbours", "piece_ids.py _merge_piece, 'half the time': unique pre-tokens, GPT-2 vocab")
def bench_encode_neighbours(args):
    from refbpe.pretokenize.patterns import get_pattern

    tok = gpt2()
    for name in ("english_small", "python_code"):
        pieces = sorted(set(get_pattern("gpt2").pretokenize(corpus(name, 4 * MB))))
        trick = ("neighbours", lambda ps=pieces: [tok._merge_piece(p) for p in ps])
        rescan = ("rescan", lambda ps=pieces: [encode_rescan(tok, p) for p in ps])
        yield [trick, rescan], "%s 4 MB, its %d unique pieces" % (name, len(pieces))


def encode_two_lists(tok, piece):
    """The alternative to _merge_piece's interleaved list: the ids and the ranks between them in
    two lists, an item of each deleted per merge (the loop as it was)."""
    table, shift, none = tok._ranks, tok._shift, 1 << 62
    can_left, can_right, mask = tok._left, tok._right, (1 << shift) - 1
    ids = [tok._byte_id[b] for b in piece]
    pairs = tok._byte_pairs
    ranks = [pairs[(piece[k] << 8) | piece[k + 1]] for k in range(len(piece) - 1)]
    while ranks:
        best, at = none, -1
        for k in range(len(ranks)):
            if ranks[k] < best:
                best, at = ranks[k], k
        if at < 0:
            break
        ids[at] = new = best & mask
        del ids[at + 1]
        del ranks[at]
        if at > 0:
            a = ids[at - 1]
            ranks[at - 1] = table.get((a << shift) | new, none) if can_left[a] and can_right[new] else none
        if at < len(ranks):
            b = ids[at + 1]
            ranks[at] = table.get((new << shift) | b, none) if can_left[new] and can_right[b] else none
    return ids


@case("encode-interleaved", "piece_ids.py _merge_piece, interleaved ids and ranks: pieces that are no token")
def bench_encode_interleaved(args):
    from refbpe.encode.tokenizer import Tokenizer

    os.environ.setdefault("TIKTOKEN_CACHE_DIR", TIKTOKEN_CACHE)
    for vocab in ("gpt2", "cl100k_base", "o200k_base"):
        tok = gpt2() if vocab == "gpt2" else Tokenizer.from_tiktoken(vocab)
        whole = tok._rank_of if tok._rank_of is not None else {}
        for name in ("english_small", "russian"):
            data = corpus(name, 4 * MB)
            ends = tok._piece_ends(data)
            pieces = sorted(
                {data[s:e] for s, e in zip([0] + ends, ends) if 1 < e - s < 192 and data[s:e] not in whole}
            )
            trick = ("interleaved", lambda ps=pieces, t=tok: [t._merge_piece(p) for p in ps])
            lists = ("two lists", lambda ps=pieces, t=tok: [encode_two_lists(t, p) for p in ps])
            yield [trick, lists], "%s, %s 4 MB: its %d pieces that are no token" % (vocab, name, len(pieces))


def encode_sliced_keys(data, ends, cache):
    """The alternative to _encode_bytes' packed-int keys: slice every piece, look its bytes up."""
    out = []
    append = out.append
    start = 0
    for end in ends:
        ids = cache.get(data[start:end])
        if type(ids) is int:
            append(ids)
        else:
            out.extend(ids)
        start = end
    return out


def encode_lists_only(data, ends, small, cache):
    """The alternative to caching a one-token piece as an int: every cached value is a list."""
    out = []
    extend = out.extend
    start = 0
    for end in ends:
        if end - start < 8:
            key = 1
            for p in range(start, end):
                key = (key << 8) | data[p]
            ids = small.get(key)
        else:
            ids = cache.get(data[start:end])
        extend(ids)
        start = end
    return out


def warm_encode():
    """english_small, its piece ends, the Tokenizer with its caches warm, and the trick's run."""
    from refbpe.pretokenize.gpt2 import piece_ends

    tok, data = gpt2(), corpus("english_small")
    ends = piece_ends(data)
    tok._encode_bytes(data, [], ends)

    def trick():
        out = []
        tok._encode_bytes(data, out, ends)
        return out

    return tok, data, ends, trick


@case("encode-small-key", "piece_ids.py _encode_bytes, '~1.4x': int keys vs bytes slices, english_small")
def bench_encode_small_key(args):
    tok, data, ends, trick = warm_encode()
    pieces = set(data[s:e] for s, e in zip([0] + ends, ends))
    cache = {p: tok._cached_form(tok._encode_piece(p)) for p in pieces}  # every piece under bytes
    slices = ("bytes slices", lambda: encode_sliced_keys(data, ends, cache))
    yield [("int keys", trick), slices], "4 MB, cache warm"


@case("encode-int-cache", "piece_ids.py _encode_bytes, '~10%': one-token pieces cached as int vs list")
def bench_encode_int_cache(args):
    tok, data, ends, trick = warm_encode()
    small, cache = (
        {k: [v] if type(v) is int else v for k, v in c.items()} for c in (tok._small_cache, tok._cache)
    )
    yield (
        [("int or list", trick), ("always list", lambda: encode_lists_only(data, ends, small, cache))],
        "4 MB, warm",
    )


def encode_child(script, *args):
    """(digest, CPU seconds) a child process running ``script`` with ``args`` prints (this tree's
    refbpe, the shared offline tiktoken cache)."""
    env = dict(tree_env(), TIKTOKEN_CACHE_DIR=TIKTOKEN_CACHE)
    done = subprocess.run(
        [sys.executable, "-c", script] + list(args), env=env, check=True, capture_output=True, text=True
    )
    digest, seconds = done.stdout.split()
    return digest, float(seconds)


_ENCODE_CHILD = """
import hashlib, sys, time
import refbpe.encode.piece_ids
from refbpe.encode.tokenizer import Tokenizer
name, path, mb, off, caches = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
for threshold in filter(None, off.split(",")):  # the alternative: a threshold of piece_ids out of reach
    setattr(refbpe.encode.piece_ids, threshold, 1 << 62)
tok = Tokenizer.from_tiktoken(name)
size = int(mb * 1e6)
with open(path, "rb") as f:
    warm, data = f.read(size), f.read(size)
warm, data = (t.decode("utf-8", "ignore").encode("utf-8") for t in (warm, data))
tok._encode_bytes(warm, [])  # the JIT warmed up on other text
if caches == "emptied":
    tok._cache, tok._small_cache, tok._old, tok._small_old, tok._parts = {}, {}, {}, {}, {}
ends = tok._piece_ends(data)
out = []
t0 = time.process_time()
tok._encode_bytes(data, out, ends)
print(hashlib.sha256(repr(out).encode()).hexdigest(), time.process_time() - t0)
"""


def encode_variants(name, text, caches, hows):
    """(label, run) of each ``(label, thresholds set out of reach)``: ``_ENCODE_CHILD`` on 8 MB
    of ``text`` after 8 MB of warm-up, a process each."""
    path = corpus_path(text)
    return [
        (label, lambda off=off: encode_child(_ENCODE_CHILD, name, path, "8", off or "", caches))
        for label, off in hows
    ]


@case(
    "encode-parts",
    "piece_ids.py _encode_in_parts, _CUT_FROM: pieces cut where no token spans them",
    5,
    1,
    "self",
)
def bench_encode_parts(args):
    hows = [("parts", None), ("whole", "_CUT_FROM,_UNCACHED_FROM")]  # whole: through the piece cache
    for name in ("o200k_base", "cl100k_base"):
        for text in ("chinese", "mixed_multilingual", "russian", "python_code", "english_medium"):
            yield (
                encode_variants(name, text, "emptied", hows),
                "%s, %s: 8 MB after 8 MB of warm-up, caches emptied (own processes)" % (name, text),
            )


@case("encode-cjk", "piece_ids.py _UNCACHED_FROM: CJK pieces that are cut skip the piece cache", 5, 1, "self")
def bench_encode_cjk(args):
    hows = [("as is", None), ("piece cache", "_UNCACHED_FROM")]
    for name in ("o200k_base", "cl100k_base"):
        for text in ("chinese", "mixed_multilingual"):
            yield (
                encode_variants(name, text, "warm", hows),
                "%s, %s: 8 MB after 8 MB (warm JIT and caches; own processes)" % (name, text),
            )


_LONG_HAN_CHILD = """
import hashlib, random, sys, time
import refbpe.encode.piece_ids
from refbpe.encode.tokenizer import Tokenizer
path, which, cut = sys.argv[1], sys.argv[2], sys.argv[3] == "parts"
if not cut:
    refbpe.encode.piece_ids._CUT_FROM = 1 << 62
tok = Tokenizer.from_tiktoken("o200k_base")
if which == "real":  # the chinese corpus's Han characters, all else dropped: one piece
    with open(path, encoding="utf-8") as f:
        text = "".join(c for c in f.read(3000000) if 0x4E00 <= ord(c) <= 0x9FFF)[:400000]
else:
    rnd = random.Random(1)
    text = "".join(chr(rnd.randint(0x4E00, 0x9FFF)) for _ in range(400000))
t0 = time.process_time()
ids = tok.encode_ordinary(text)
print(hashlib.sha256(repr(ids).encode()).hexdigest(), time.process_time() - t0)
"""


@case("encode-parts-long", "piece_ids.py _encode_in_parts: one piece of 400,000 Han characters", 3, 0, "self")
def bench_encode_parts_long(args):
    def run(which, how):
        return encode_child(_LONG_HAN_CHILD, corpus_path("chinese"), which, how)

    for which in ("real", "random"):
        variants = [(how, lambda w=which, h=how: run(w, h)) for how in ("parts", "whole")]
        yield variants, "o200k_base, %s Han, 1.2 MB: a first call, own processes" % which


_CUT_TABLE_CHILD = """
import hashlib, sys, time
from refbpe.encode import piece_cuts
from refbpe.encode.tokenizer import Tokenizer
name, how = sys.argv[1], sys.argv[2]
tok = Tokenizer.from_tiktoken(name)
tokens = list(tok._id_of)
t0 = time.process_time()
if how == "decode":
    cutter = piece_cuts.PieceCuts(tokens)
    joined, partial = cutter._joined, cutter._partial
else:  # the alternative: every token cut into runs (the table's build before decoding)
    joined, partial = set(), bytearray(1 << 16)
    for token in tokens:
        if len(token) >= 2 and max(token) >= 0x80:
            piece_cuts._enter_runs(token, joined, partial)
    partial = bytes(partial)
seconds = time.process_time() - t0
print(hashlib.sha256(repr(sorted(joined)).encode() + partial).hexdigest(), seconds)
"""


@case("cut-table", "piece_cuts.py PieceCuts: the table built in a fresh process (cold)", 5, 0, "self")
def bench_cut_table(args):
    for name in ("o200k_base", "cl100k_base"):
        build = [(h, lambda n=name, h=h: encode_child(_CUT_TABLE_CHILD, n, h)) for h in ("decode", "runs")]
        yield build, "%s: PieceCuts of every token, a fresh process each" % name


# --- count.py, spool.py -------------------------------------------------------------------------------


@case("count-chunk-size", "count.py _unit_size: english_medium, 2 workers, 4/12/16 MiB", 5, 1, "self")
def bench_count_chunk_size(args):
    path = corpus_path("english_medium")
    tmp = tempfile.mkdtemp(prefix="refbpe-micro-")
    out, rep = os.path.join(tmp, "counts.tsv"), os.path.join(tmp, "report.json")

    def run(size):
        command = [sys.executable, "-m", "refbpe", "count", path, "-o", out, "--report", rep]
        extra = ["--workers", "2"] + (["--chunk-size", size] if size else [])
        subprocess.run(command + extra, check=True, env=tree_env())
        with open(rep) as f, open(out, "rb") as g:
            return g.read(), json.load(f)["count"]["seconds"]

    try:
        sizes = [("12M", "12M"), ("4M", "4M"), ("16M", "16M"), ("default", None)]
        yield [(label, lambda s=s: run(s)) for label, s in sizes], "count seconds of refbpe count --report"
    finally:
        for name in os.listdir(tmp):
            os.remove(os.path.join(tmp, name))
        os.rmdir(tmp)


def read_buffered(path, start, end):
    """The alternative to units.read_range: the buffered file's ``read``."""
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start)


@case(
    "read-range", "units.py read_range: a unit's 12.5 MB read with os.pread or a buffered read", 7, 2, "wall"
)
def bench_read_range(args):
    from refbpe.corpus.units import read_range

    path = corpus_path("english_medium")
    size = 12_500_000
    ranges = [(i * size, (i + 1) * size) for i in range(os.path.getsize(path) // size)]

    def read_all(read):
        return sum(len(read(path, start, end)) for start, end in ranges)

    yield (
        [("os.pread", lambda: read_all(read_range)), ("buffered read", lambda: read_all(read_buffered))],
        "english_medium in 12.5 MB ranges, each read from a fresh open",
    )


@case("count-here", "count.py count_words: a unit counted here, into the large tables or fresh ones", 3, 1)
def bench_count_here(args):
    from refbpe.corpus.count import add_chunk_counts, add_tables
    from refbpe.pretokenize.gpt2 import add_small_counts

    data = corpus("english_medium", 6 * (12 << 20))
    size = len(data) // 6
    units = []
    for i in range(6):
        start = 0 if i == 0 else data.index(b"\n", i * size) + 1
        end = len(data) if i == 5 else data.index(b"\n", (i + 1) * size) + 1
        units.append(data[start:end])

    def count(fresh, keep_first=False):
        small, counts = {}, {}
        for unit in units:
            if fresh:
                unit_small, unit_counts = {}, {}
                add_chunk_counts(unit, 0, "-", ("<|endoftext|>",), "strict", None, unit_small, unit_counts)
                if keep_first and not small and not counts:
                    small, counts = unit_small, unit_counts
                else:
                    add_tables(unit_small, unit_counts, small, counts)
            else:
                add_chunk_counts(unit, 0, "-", ("<|endoftext|>",), "strict", None, small, counts)
        return add_small_counts(small, counts)

    yield (
        [
            ("fresh tables, the first kept", lambda: count(True, True)),
            ("fresh tables, all added", lambda: count(True)),
            ("large tables", lambda: count(False)),
        ],
        ("six units of english_medium (72 MiB)"),
    )


def small_pairs_to_bytes(pairs, counts):
    """The alternative to gpt2.add_small_pairs' struct: ``int.to_bytes`` of the key less its leading bit."""
    for key, n in pairs:
        size = (key.bit_length() - 1) >> 3
        piece = (key ^ (1 << (size << 3))).to_bytes(size, "big")
        counts[piece] = counts.get(piece, 0) + n
    return counts


@case("count-settle", "gpt2.py add_small_pairs: a small key's bytes by struct or by int.to_bytes", 7, 2)
def bench_count_settle(args):
    from refbpe.corpus.count import add_chunk_counts
    from refbpe.pretokenize.gpt2 import add_small_pairs

    small, counts = {}, {}
    data = corpus("english_medium", 36 << 20)
    add_chunk_counts(data, 0, "-", ("<|endoftext|>",), "strict", None, small, counts)

    def settle(add):
        return lambda: add(small.items(), dict(counts))

    yield (
        [("struct", settle(add_small_pairs)), ("int.to_bytes", settle(small_pairs_to_bytes))],
        "the small keys of 36 MiB of english_medium (%d) into its table of longer pieces (%d)"
        % (len(small), len(counts)),
    )


def pack_counts_by_lookup(small, counts):
    """The alternative to count.pack_counts' values read in order: each key's count looked up again."""
    from array import array

    keys = list(counts)
    small_keys = list(small)
    return (
        array("q", small_keys),
        array("q", [small[k] for k in small_keys]),
        b"".join(keys),
        array("l", [len(k) for k in keys]),
        array("q", [counts[k] for k in keys]),
    )


@case("count-pack", "count.py pack_counts: counts read with the keys' order, or looked up by key", 7, 2)
def bench_count_pack(args):
    from refbpe.corpus.count import add_chunk_counts, pack_counts

    small, counts = {}, {}
    data = corpus("english_medium", 12 << 20)
    add_chunk_counts(data, 0, "-", ("<|endoftext|>",), "strict", None, small, counts)
    yield (
        [
            ("values in order", lambda: pack_counts(small, counts)),
            ("looked up", lambda: pack_counts_by_lookup(small, counts)),
        ],
        "the tables of a 12 MiB unit of english_medium (%d small keys, %d longer)"
        % (len(small), len(counts)),
    )


@case("count-lines", "sequences.py count_text: lines counted in one pass, or line by line", 5, 2)
def bench_count_lines(args):
    from refbpe.corpus.sequences import count_sequences, count_text, cut_sequences
    from refbpe.pretokenize.gpt2 import add_small_counts

    data = corpus("english_medium", 12 << 20)

    def one_pass(pattern):
        small, counts = {}, {}
        count_text(data, "lines", (), pattern, False, counts, small)
        return add_small_counts(small, counts)

    def line_by_line(pattern):
        small, counts = {}, {}
        count_sequences(cut_sequences(data, "lines"), pattern, False, counts, small)
        return add_small_counts(small, counts)

    for pattern in ("superbpe-stage1", "superbpe-stage2", "gpt2"):
        yield (
            [
                ("one counting pass", lambda p=pattern: one_pass(p)),
                ("each line counted", lambda p=pattern: line_by_line(p)),
            ],
            "%s, the first 12 MiB of english_medium" % pattern,
        )


def pieces_int_keys(word_counts, spanned):
    """The alternative to inherited._pieces: pieces under 8 bytes under packed int keys (no slice),
    the words' pieces in one flat array; (places of short pieces, of long ones, totals, flat, ends)."""
    from array import array

    small_place, place, totals = {}, {}, []
    flat, ends = array("i"), array("l")
    for w, n in word_counts.items():
        m = len(w)
        if m < 2 or n <= 0:
            continue
        start, left = 0, w[0]
        key = 256 | left
        for i in range(1, m + 1):
            right = 0
            if i < m:
                right = w[i]
                if spanned[(left << 8) | right]:
                    if i - start < 7:
                        key = (key << 8) | right
                    left = right
                    continue
            table, k = (small_place, key) if i - start < 8 else (place, w[start:i])
            j = table.get(k, -1)
            if j < 0:
                j = table[k] = len(totals)
                totals.append(n)
            else:
                totals[j] += n
            flat.append(j)
            start, key, left = i, 256 | right, right
        ends.append(len(flat))
    return small_place, place, totals, flat, ends


@case(
    "superbpe-cut", "inherited.py _pieces: SuperBPE's stage-2 words of english_medium cut into pieces", 3, 1
)
def bench_superbpe_cut(args):
    from refbpe.corpus.sequences import count_texts
    from refbpe.learn.inherited import _pieces, _spanned_bigrams
    from refbpe.learn.merge import learn_merges

    data = corpus("english_medium")
    stage2 = count_texts([data], "lines", (), "superbpe-stage2")
    spanned = _spanned_bigrams(learn_merges(count_texts([data], "lines", (), "superbpe-stage1"), 8000))

    def ours():
        piece_counts, _ = _pieces(stage2, spanned)
        return sorted(piece_counts.values())

    def int_keys():
        return sorted(pieces_int_keys(stage2, spanned)[2])

    yield (
        [("bytes keys, a list per word", ours), ("int keys, one flat array", int_keys)],
        "%d stage-2 words, 8,000 merges learnt on stage 1's words" % len(stage2),
    )


@case("spool-vs-pipe", "spool.py: count_words(english_medium, 2 workers), files vs the pipe", 5, 1, "wall")
def bench_spool_vs_pipe(args):
    from refbpe.corpus.count import count_words, warm_up_scanner
    from refbpe.corpus.pool import make_executor

    path = corpus_path("english_medium")

    def through_pipe():  # a pool that count_words is given is used as is: results come back pickled
        executor = make_executor(2, warm_up=warm_up_scanner)
        try:
            return count_words([path], workers=2, executor=executor)
        finally:
            executor.shutdown(wait=True)

    spool = ("spool", lambda: count_words([path], workers=2))
    yield [spool, ("pipe", through_pipe)], "pool start-up included"


@case("pack-counts", "count.py pack_counts: perf/bench_pickle.py --here (4 MB English chunk)", 1, 0, "given")
def bench_pack_counts(args):
    command = [sys.executable, os.path.join(PERF, "bench_pickle.py"), "--here", "--json", "--repeats", "7"]
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, env=tree_env())
    out = json.loads(done.stdout.splitlines()[-1])
    runs = [(kind, lambda k=kind: (None, out[k]["total_ms"] / 1e3)) for kind in ("packed", "dict")]
    yield runs, "pickle + unpickle + adding up"


# --- merge.py ------------------------------------------------------------------------------------


def link_by_extend(word_counts, ids):
    """The alternative to table.link_words' fill: extend the arrays word by word."""
    from array import array

    from refbpe.learn.table import SEP, _index_type, _zeros

    words = [(w, n) for w, n in word_counts.items() if len(w) > 1 and n > 0]
    size = 1 + sum(len(w) + 1 for w, _ in words)
    code = _index_type(max(size, ids) + 1)
    freq_code = _index_type(max([n for _, n in words] or [0]))
    sym = array(code, [SEP])
    freq = array(freq_code, [0])
    for w, n in words:
        sym.extend(w)
        sym.append(SEP)
        freq.extend(array(freq_code, [n]) * len(w))
        freq.append(0)
    nxt, prv = _zeros(code, size), _zeros(code, size)
    for i in range(size):
        nxt[i] = i + 1
        prv[i] = i - 1
    nxt[size - 1] = size - 1
    prv[0] = 0
    return sym, nxt, prv, freq


@case("merge-link-fill", "table.py link_words, '2x' cold: arrays filled in place vs extended per word", 1, 0)
def bench_merge_link_fill(args):
    from refbpe.corpus.count import count_words
    from refbpe.learn.merge import _link_words

    words = count_words([corpus_path("english_medium")], special_tokens=["<|endoftext|>"], workers=2)
    runs = [
        ("fill", lambda: _link_words(words, 32000)),
        ("extend", lambda: link_by_extend(words, 32000)),
    ]
    yield runs, "english_medium's word table, first call of each (called once per run: the JIT is cold)"


def new_slot_lists(code, n, make):
    """``n`` one-slot arrays made by ``make(code, i)``, kept 1,000 at a time (as the engine keeps them)."""
    out = [None] * 1000
    for i in range(n):
        out[i % 1000] = make(code, i)
    return out


def slots_from_list(code, i):
    from array import array

    return array(code, [i])


def slots_appended(code, i):
    from array import array

    slots = array(code)
    slots.append(i)
    return slots


@case("merge-new-slots", "merge.py slot lists, '1.3x': array(code) then append vs array(code, [i])", 9, 2)
def bench_merge_new_slots(args):
    runs = [
        ("append", lambda: new_slot_lists("i", 2000000, slots_appended)),
        ("from list", lambda: new_slot_lists("i", 2000000, slots_from_list)),
    ]
    yield runs, "2 million one-slot arrays (a new pair's first occurrence each)"


# --- atomic.py -----------------------------------------------------------------------------------------


def write_pieces(pieces, write):
    """Write ``pieces`` to a fresh temporary file with ``write(f, piece)``; the bytes written."""
    with tempfile.TemporaryFile() as f:
        for piece in pieces:
            write(f, piece)
        f.flush()
        return f.tell()


@case("write-large", "atomic.py _write_piece: 20 MB pieces written raw vs through the buffered file", 5, 1)
def bench_write_large(args):
    from refbpe._util.atomic import _write_piece

    pieces = [bytes([97 + k]) * (20 * MB) for k in range(8)]
    runs = [
        ("raw", lambda: write_pieces(pieces, _write_piece)),
        ("buffered", lambda: write_pieces(pieces, lambda f, piece: f.write(piece))),
    ]
    yield runs, "160 MB in 8 pieces (a one-letter run's model holds tokens this long); CPU counts system time"


# --- pretokenize.py: perf/micro_pretokenize.py ---------------------------------------------------

CASES.include(micro_pretokenize.CASES)


# --- formats/trace.py ----------------------------------------------------------------------------------


def written(write, *args):
    """The bytes ``write(path, *args)`` leaves in a scratch file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.jsonl")
        write(path, *args)
        with open(path, "rb") as f:
            return f.read()


@case("trace-write", "trace.py write_training_trace, '13 ms instead of 34' cold: template vs records", 1, 0)
def bench_trace_write(args):
    from refbpe.corpus.count import count_words
    from refbpe.formats.trace import trace_records, write_trace, write_training_trace
    from refbpe.learn.train import train_from_counts

    words = count_words([corpus_path("english_small")], special_tokens=["<|endoftext|>"], workers=2)
    trace = []
    vocab, merges = train_from_counts(words, 257 + args.merges, ["<|endoftext|>"], trace=trace)
    runs = [
        ("template", lambda: written(write_training_trace, merges, trace, vocab)),
        ("records", lambda: written(lambda path: write_trace(path, trace_records(merges, trace, vocab)))),
    ]
    note = "english_small's %d-merge trace, first call of each (once per run: the JIT is cold)"
    yield runs, note % len(merges)


# --- verify/replay.py ----------------------------------------------------------------------------------


def overlay_checks(counts, delta, merges, one_scan):
    """(answers, CPU seconds of the checks alone): an overlay's best count and tied pairs at
    each of ``merges``, asked as ``Overlay.top`` does (one scan) or as best() then tied_keys()."""
    from refbpe.verify.overlays import WordsOverlay
    from refbpe.verify.replay import PairReplay

    ref = PairReplay(counts)
    overlay = WordsOverlay("v", ref, extra=delta)
    overlay.refresh(())
    answers, took = [], 0.0
    for pair in merges:
        with stopwatch() as checks:
            if one_scan:
                answers.append(overlay.top())
            else:
                m = overlay.best()
                answers.append((m, overlay.tied_keys(m) if m > 0 else []))
        took += checks.cpu
        a, b = ref.token_id(pair[0], True), ref.token_id(pair[1], True)
        overlay.before_apply(a, b, ref.token_id(pair[0] + pair[1], True))
        overlay.refresh(ref.apply(pair, track=True))
    return answers, took


@case("overlay-top", "replay.py top_excluding: overlay checks, one scan vs best() + tied_keys", 5, 1, "self")
def bench_overlay_top(args):
    from refbpe.learn.train import train_from_counts
    from refbpe.verify.readings import Readings, count_variant

    text = corpus("english_small").decode("utf-8")
    eot = ["<|endoftext|>"]
    counts = count_variant([text], eot)
    delta = Readings([text], eot).delta(lines=True, specials_as_text=True)
    hf_like = count_variant([text], eot, specials_as_text=True, lines="keep")
    merges = train_from_counts(hf_like, 2000, eot)[1]
    runs = [
        ("one scan", lambda: overlay_checks(counts, delta, merges, True)),
        ("best + tied_keys", lambda: overlay_checks(counts, delta, merges, False)),
    ]
    yield runs, "english_small, the lines+specials-as-text overlay over its own %d merges" % len(merges)


def options(parser):
    help = "merges of trace-write and of perf/experiments/merge_variants.py (default 9743: vocab 10,000)"
    parser.add_argument("--merges", type=int, default=9743, help=help)


def main(argv=None):
    return CASES.main(__doc__, argv, options)


if __name__ == "__main__":
    sys.exit(main())
