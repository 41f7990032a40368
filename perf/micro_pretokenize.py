"""``perf/micro.py``'s cases for the pre-tokenizers, run by it (``perf/micro.py pretokenize-inline``):

- ``pretokenize-table``: ``gpt2.py``'s ``CLASS_OF`` (a class per code point) as a bytes table,
  against a dict and a bisect over the Unicode runs;
- ``pretokenize-inline``: ``piece_ends`` as it is (the run loop inlined) against the same
  source edited to call a helper, both compiled here;
- ``pretokenize-int-keys``: ``count_pieces``' packed int keys against ``bytes`` slices.

Python 3.9 syntax (PyPy runs it).
"""

import bisect

from harness import Cases
from harness import read_corpus as corpus

MB = 1 << 20
CASES = Cases()
case = CASES.case


@case("pretokenize-table", "pretokenize.py CLASS_OF: class per code point, bytes table vs dict vs bisect")
def bench_pretokenize_table(args):
    from refbpe.pretokenize._unicode_table import RUNS
    from refbpe.pretokenize.gpt2 import CLASS_OF

    as_dict = {cp: CLASS_OF[cp] for cp in range(0x110000) if CLASS_OF[cp]}
    starts, classes = [s for s, _ in RUNS], [c for _, c in RUNS]

    def by_table(cps):
        n, table = [0, 0, 0, 0], CLASS_OF
        for cp in cps:
            n[table[cp]] += 1
        return n

    def by_dict(cps):
        n, get = [0, 0, 0, 0], as_dict.get
        for cp in cps:
            n[get(cp, 0)] += 1
        return n

    def by_bisect(cps):
        n, find = [0, 0, 0, 0], bisect.bisect_right
        for cp in cps:
            n[classes[find(starts, cp) - 1]] += 1
        return n

    for name in ("english_small", "mixed_multilingual"):
        cps = [ord(c) for c in corpus(name, 4 * MB).decode("utf-8")]
        runs = [(f.__name__[3:], lambda f=f, cps=cps: f(cps)) for f in (by_table, by_dict, by_bisect)]
        yield runs, "%s 4 MB, %d code points" % (name, len(cps))


RUN_LOOP = """\
            while j < n:
                b = data[j]
                if b < 0x80:
                    if table[b] != cls:
                        break
                    j += 1
                else:
                    cp, w = _decode_at(data, j, b)
                    if table[cp] != cls:
                        break
                    j += w
"""


def run_end(data, j, n, cls, table, decode_at):
    """The helper: the end of the maximal run of class ``cls`` from ``j`` (the same loop)."""
    while j < n:
        b = data[j]
        if b < 0x80:
            if table[b] != cls:
                break
            j += 1
        else:
            cp, w = decode_at(data, j, b)
            if table[cp] != cls:
                break
            j += w
    return j


def piece_ends_variants():
    """pretokenize.piece_ends as it is and with its inlined letter/number/other loop
    (``RUN_LOOP``) replaced by a call of ``run_end``: the library's source, edited, each compiled
    into a module of its own (so that both look their globals up the same way)."""
    import inspect
    import types

    from refbpe.pretokenize import gpt2 as pretokenize

    source = inspect.getsource(pretokenize.piece_ends)
    if source.count(RUN_LOOP) != 1:
        raise AssertionError("piece_ends no longer has the inlined loop this case replaces: update RUN_LOOP")
    call = "            j = run_end(data, j, n, cls, table, _decode_at)\n"
    variants = []
    for text in (source, source.replace(RUN_LOOP, call)):
        module = types.ModuleType("micro_piece_ends")
        module.__dict__.update(vars(pretokenize), run_end=run_end)
        exec(text, module.__dict__)
        variants.append(module.piece_ends)
    return variants


@case("pretokenize-inline", "pretokenize.py piece_ends, '~1.5x': the run loop inlined vs a helper")
def bench_pretokenize_inline(args):
    inlined, with_helper = piece_ends_variants()
    for name in ("english_small", "mixed_multilingual"):
        data = corpus(name, 4 * MB)
        helper = ("helper", lambda d=data: with_helper(d))
        yield [("inlined", lambda d=data: inlined(d)), helper], "%s 4 MB" % name


def count_slices(data):
    """The alternative to count_pieces' int keys: count every piece as a ``bytes`` slice."""
    from refbpe.pretokenize.gpt2 import piece_ends

    counts = {}
    start = 0
    for end in piece_ends(data):
        piece = data[start:end]
        counts[piece] = counts.get(piece, 0) + 1
        start = end
    return counts


@case("pretokenize-int-keys", "gpt2.py count_pieces, '1.5x on English': int keys vs bytes slices")
def bench_pretokenize_int_keys(args):
    from refbpe.pretokenize.patterns import get_pattern

    count_pretokens = get_pattern("gpt2").count_pretokens

    for name in ("english_small", "mixed_multilingual"):
        data = corpus(name, 4 * MB)
        slices = ("bytes slices", lambda d=data: count_slices(d))
        yield (
            [("int keys", lambda d=data: count_pretokens(d)), slices],
            "%s 4 MB, the scan (piece_ends) included in both" % name,
        )
