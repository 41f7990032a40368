"""The issue's speed and memory targets, as data, and their verdict on one run's results.

A target reads one figure (``FIGURES``) of one system in one section of the results
(``perf/run.py``'s JSON rows) and compares it with a bound: its ratio to the same figure of a
peer measured in the same run, or (peer None) the figure itself: the in-process training time
and counting MB/s per worker.  Where several systems are named, the best of them counts (e.g.
refbpe on CPython with 1 or 2 workers; ties: the first named).

Every target is set on one input (``TARGET_INPUTS``: english_medium, vocab 10,000 for
training; the ``train_32k`` targets at vocab 32,000, from the same train rows).  A full run on
other inputs still judges it, with the input named after the target; a ``--quick`` run judges
only the targets whose own input it measured and shows the rest as "n/a (quick run)": its
inputs are small and its figures are not the targets.

Cost: one pass over the result rows per section and input.
"""

import collections

# same_ids: the ids must also equal the peer's (default False); inputs: the inputs it is
# judged on (default None: every input of its section)
Target = collections.namedtuple(
    "Target", "name section systems figure peer op bound show same_ids inputs", defaults=(False, None)
)
ENGLISH = ("english_medium", "english_small")

TRAIN_VOCAB = 10000
TRAIN_VOCABS = {"train": TRAIN_VOCAB, "train_32k": 32000}  # the train rows each training section reads
TRAIN_STAND_IN = "english_small"  # judged in its place, marked "not the target input"
TARGET_INPUTS = {
    "train": "english_medium",  # at TRAIN_VOCAB
    "train_32k": "english_medium",  # at 32,000
    "train_inprocess": "corpus.en@500",
    "encode": "english_medium",
    "count": "english_medium",
    "memory": "english_medium",
}

TARGETS = [
    Target(
        "train PyPy 2w <= 1.0x rustbpe", "train", ("refbpe-pypy-w2",), "wall", "rustbpe", "<=", 1.0, "ratio s"
    ),
    Target("train PyPy 2w <= 0.4x HF", "train", ("refbpe-pypy-w2",), "wall", "hf", "<=", 0.4, "ratio s"),
    Target(
        "train PyPy 2w <= 0.8x rustbpe", "train", ("refbpe-pypy-w2",), "wall", "rustbpe", "<=", 0.8, "ratio s"
    ),
    Target(
        "train PyPy 2w <= 0.8x rustbpe @32K",
        "train_32k",
        ("refbpe-pypy-w2",),
        "wall",
        "rustbpe",
        "<=",
        0.8,
        "ratio s",
    ),
    Target(
        "train CPython <= 1.5x HF",
        "train",
        ("refbpe-cpython-w2", "refbpe-cpython-w1"),
        "wall",
        "hf",
        "<=",
        1.5,
        "ratio s, system",
    ),
    Target(
        "CPython corpus.en@500 in-process <= 0.2 s",
        "train_inprocess",
        ("refbpe-cpython",),
        "in-process s",
        None,
        "<=",
        0.2,
        "s",
    ),
    Target(
        "encode PyPy >= 1.0x tiktoken, identical ids",
        "encode",
        ("refbpe-pypy",),
        "encode MB/s",
        "tiktoken",
        ">=",
        1.0,
        "ratio MB/s",
        same_ids=True,
    ),
    Target(
        "encode PyPy >= 1.0x tiktoken, warm call",
        "encode",
        ("refbpe-pypy",),
        "warm encode MB/s",
        "tiktoken",
        ">=",
        1.0,
        "ratio MB/s",
    ),
    Target(
        "encode PyPy >= 1.2x tiktoken on English, identical ids",
        "encode",
        ("refbpe-pypy",),
        "encode MB/s",
        "tiktoken",
        ">=",
        1.2,
        "ratio MB/s",
        same_ids=True,
        inputs=ENGLISH,
    ),
    Target(
        "encode PyPy >= 1.2x tiktoken on English, warm call",
        "encode",
        ("refbpe-pypy",),
        "warm encode MB/s",
        "tiktoken",
        ">=",
        1.2,
        "ratio MB/s",
        inputs=ENGLISH,
    ),
    Target(
        "count PyPy >= 25 MB/s per worker (w1)",
        "count",
        ("refbpe-pypy-w1",),
        "count MB/s per worker",
        None,
        ">=",
        25,
        "MB/s/worker",
    ),
    Target(
        "count PyPy >= 25 MB/s per worker (w2)",
        "count",
        ("refbpe-pypy-w2",),
        "count MB/s per worker",
        None,
        ">=",
        25,
        "MB/s/worker",
    ),
    Target(
        "count PyPy 2w >= 8x CPython regex baseline",
        "count",
        ("refbpe-pypy-w2",),
        "count MB/s",
        "regex-cpython",
        ">=",
        8,
        "ratio",
    ),
    Target(
        "count PyPy speed-up 1->2 workers >= 1.8x",
        "count",
        ("refbpe-pypy-w2",),
        "count MB/s",
        "refbpe-pypy-w1",
        ">=",
        1.8,
        "ratio",
    ),
    # the memory section's two rows are named "copies" (the corpus N times) and "one copy"
    Target(
        "memory flat with corpus size ({input}, x{copies:.0f}: peak <= 1.25x)",
        "memory",
        ("copies",),
        "peak tree MB",
        "one copy",
        "<=",
        1.25,
        "MB",
    ),
]


def _count_per_worker(r):
    mbs = r["result"].get("mb_per_s")
    return mbs / r["workers"] if mbs else None


FIGURES = {
    "wall": lambda r: r.get("wall"),
    "in-process s": lambda r: r["result"].get("train_seconds"),
    "encode MB/s": lambda r: r.get("mb_per_s"),
    "warm encode MB/s": lambda r: r.get("warm_mb_per_s"),
    "count MB/s": lambda r: r["result"].get("mb_per_s"),
    "count MB/s per worker": _count_per_worker,
    "peak tree MB": lambda r: r.get("peak_tree_mb"),
}


# -- the measured rows a section offers, per input: [(input, is the target input, {system: row})]


def _rows(rows, keep):
    by = {}
    for r in rows:
        if keep(r):
            by.setdefault(r["system"], r)
    return by


def _train_inputs(res, section="train"):
    vocab = TRAIN_VOCABS[section]
    for corpus in (TARGET_INPUTS[section], TRAIN_STAND_IN):
        by = _rows(
            res.get("train", []),
            lambda r, c=corpus: r.get("corpus") == c and r.get("vocab") == vocab and "wall" in r,
        )
        if "refbpe-pypy-w2" in by:
            return [(corpus, corpus == TARGET_INPUTS[section], by)]
    return []


def _train_32k_inputs(res):
    return _train_inputs(res, "train_32k")


def _inprocess_inputs(res):
    by = _rows(res.get("train_inprocess", []), lambda r: "result" in r)
    return [(TARGET_INPUTS["train_inprocess"], True, by)]


def _encode_inputs(res):
    rows = res.get("encode", [])
    return [
        (
            text,
            text == TARGET_INPUTS["encode"],
            _rows(rows, lambda r, t=text: r["text"] == t and "mb_per_s" in r),
        )
        for text in sorted({r["text"] for r in rows})
    ]


def _count_inputs(res):
    rows = res.get("count", [])
    if not rows:
        return []
    corpus = rows[0]["corpus"]
    return [(corpus, corpus == TARGET_INPUTS["count"], _rows(rows, lambda r: "result" in r))]


def _memory_inputs(res):
    m = [r for r in res.get("memory", []) if "peak_tree_mb" in r]
    if len(m) != 2:
        return []
    return [(m[0]["input"], m[0]["input"] == TARGET_INPUTS["memory"], {"one copy": m[0], "copies": m[1]})]


SECTION_INPUTS = [
    ("train", _train_inputs),
    ("train_32k", _train_32k_inputs),
    ("train_inprocess", _inprocess_inputs),
    ("encode", _encode_inputs),
    ("count", _count_inputs),
    ("memory", _memory_inputs),
]


# -- the verdict -----------------------------------------------------------------------------------


def _show(t, value, best, figure, peer_figure, same):
    if t.show == "ratio s":
        return "%.2fx (%.2fs vs %.2fs)" % (value, figure, peer_figure)
    if t.show == "ratio s, system":
        return "%.2fx (%s %.2fs vs %.2fs)" % (value, best, figure, peer_figure)
    if t.show == "ratio MB/s":
        text = "%.2fx (%.2f vs %.2f MB/s)" % (value, figure, peer_figure)
        return text + (", ids %s" % ("identical" if same else "DIFFER") if t.same_ids else "")
    if t.show == "ratio":
        return "%.2fx" % value
    if t.show == "s":
        return "%.3fs" % value
    if t.show == "MB/s/worker":
        return "%.2f MB/s/worker" % value
    if t.show == "MB":
        return "%.0f MB -> %.0f MB (%.2fx)" % (peer_figure, figure, value)
    raise ValueError(t.show)


def _name(t, section, label, on_target, copies, quick):
    """The target's name; the input it was measured on where that is not the target's own."""
    if section == "memory":
        return t.name.format(input=TARGET_INPUTS["memory"] if quick else label, copies=copies)
    if quick:
        wanted = TARGET_INPUTS[section] + ("@%d" % TRAIN_VOCABS[section] if section in TRAIN_VOCABS else "")
        return t.name + ("" if on_target else " [%s]" % wanted)
    if section in TRAIN_VOCABS:
        return t.name + ("" if on_target else " [%s, not the target input]" % label)
    if section in ("encode", "count"):
        return t.name + " [%s]" % label
    return t.name


def judge(t, by):
    """(value, best system, its figure, the peer's figure, ids equal) or None if not measured."""
    fig = FIGURES[t.figure]
    have = [(fig(by[s]), s) for s in t.systems if s in by and fig(by[s])]
    if not have or (t.peer and not (t.peer in by and fig(by[t.peer]))):
        return None
    pick = min if t.op == "<=" else max  # the best of several systems; ties: the first named
    figure, best = pick(have, key=lambda x: x[0])
    peer_figure = fig(by[t.peer]) if t.peer else None
    value = figure / peer_figure if t.peer else figure
    same = None
    if t.same_ids:
        same = by[best]["result"].get("ids_digest") == by[t.peer]["result"].get("ids_digest")
    return value, best, figure, peer_figure, same


def evaluate(res, quick=False):
    """[(verdict 'met' | 'MISS' | 'n/a', name, measured)] for the targets this run measured,
    in the order of ``TARGETS`` per section and input."""
    out = []
    for section, inputs in SECTION_INPUTS:
        for label, on_target, by in inputs(res):
            copies = by["copies"]["mb"] / by["one copy"]["mb"] if section == "memory" else None
            for t in TARGETS:
                if t.section != section or (t.inputs is not None and label not in t.inputs):
                    continue
                j = judge(t, by)
                if j is None:
                    continue
                value, best, figure, peer_figure, same = j
                measured = _show(t, value, best, figure, peer_figure, same)
                if quick and not on_target:
                    verdict, measured = "n/a", "%s: %s" % (label, measured)
                else:
                    ok = value <= t.bound if t.op == "<=" else value >= t.bound
                    verdict = "met" if ok and same is not False else "MISS"
                out.append((verdict, _name(t, section, label, on_target, copies, quick), measured))
    return out
