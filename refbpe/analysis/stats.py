"""Corpus statistics of a tokenizer: compression, vocab use, frequent tokens, throughput.

``stats_of`` encodes the corpus with an ``corpus.encode.EncodeRun`` (so in
parallel, in bounded memory; ``corpus_stats`` builds one) and keeps only: a
count per id, and each document's bytes-per-token ratio (one float per
document).  Documents are the non-empty stretches between special tokens and
input boundaries (``corpus.encode.DocumentTally``).

Figures: input bytes, documents, tokens; bytes per token overall (total
bytes / total tokens) and per document (mean, median and p99 of each
document's ratio; p99 is the nearest-rank percentile, the smallest ratio
with at least 99 % of the documents at or below it); the share of the
vocab's ids that occur; the most frequent tokens; MB/s of encoding.
``format_table`` prints several models' figures side by side.

Cost: the encoding, plus O(tokens) counting in this process, O(vocab)
memory for the counts, O(documents) floats and one sort of them.
"""

import time
from array import array

from ..corpus.encode import EncodeRun
from ..encode.ranks import ZeroDefault, dense

__all__ = ["corpus_stats", "stats_of", "format_table", "format_top_tokens", "percentile"]


def percentile(sorted_values, p):
    """Nearest-rank percentile of an ascending sequence: ``percentile([1, 2, 3, 4], 50) == 2``."""
    if not sorted_values:
        return None
    rank = -(-p * len(sorted_values) // 100)  # ceil(p * n / 100)
    return sorted_values[max(1, int(rank)) - 1]


def _median(sorted_values):
    n = len(sorted_values)
    if not n:
        return None
    mid = n // 2
    return sorted_values[mid] if n % 2 else (sorted_values[mid - 1] + sorted_values[mid]) / 2.0


def corpus_stats(tokenizer, sources, *, top=10, **options):
    """A dict of figures for ``tokenizer`` on ``sources``: ``stats_of`` an ``EncodeRun``
    (``options``: its keyword-only options, workers to read_size)."""
    return stats_of(EncodeRun(tokenizer, sources, **options), top=top)


def stats_of(run, *, top=10):
    """A dict of figures for ``run`` (an ``encode.EncodeRun``), encoding it."""
    t0 = time.time()
    vocab = run.tokenizer.vocab
    size = max(vocab) + 1 if vocab else 0
    counts = [0] * size if dense(size, len(vocab)) else ZeroDefault()
    ratios = array("d")

    def count(unit):
        for i in unit.ids:
            counts[i] += 1

    run.feed(count, lambda b, t: ratios.append(b / float(t)))
    seconds = time.time() - t0
    ordered = sorted(ratios)
    used = sum(1 for i in vocab if counts[i])
    frequent = sorted((i for i in vocab if counts[i]), key=lambda i: (-counts[i], i))[:top]
    total_bytes, tokens = run.bytes, run.tokens
    return {
        "vocab_size": len(vocab),
        "bytes": total_bytes,
        "documents": run.documents,
        "tokens": tokens,
        "bytes_per_token": total_bytes / float(tokens) if tokens else None,
        "per_document_bytes_per_token": {
            "mean": sum(ordered) / len(ordered) if ordered else None,
            "median": _median(ordered),
            "p99": percentile(ordered, 99),
        },
        "vocab_used": used,
        "vocab_used_share": used / float(len(vocab)) if vocab else None,
        "top_tokens": [
            {"id": i, "token": vocab[i].decode("utf-8", "backslashreplace"), "count": counts[i]}
            for i in frequent
        ],
        "seconds": round(seconds, 3),
        "mb_per_second": total_bytes / 1e6 / max(seconds, 1e-9),
    }


_COLUMNS = [
    ("model", lambda name, s: name),
    ("vocab", lambda name, s: "{:,}".format(s["vocab_size"])),
    ("MB", lambda name, s: "%.1f" % (s["bytes"] / 1e6)),
    ("docs", lambda name, s: "{:,}".format(s["documents"])),
    ("tokens", lambda name, s: "{:,}".format(s["tokens"])),
    ("bytes/token", lambda name, s: _num(s["bytes_per_token"])),
    ("doc mean", lambda name, s: _num(s["per_document_bytes_per_token"]["mean"])),
    ("doc median", lambda name, s: _num(s["per_document_bytes_per_token"]["median"])),
    ("doc p99", lambda name, s: _num(s["per_document_bytes_per_token"]["p99"])),
    (
        "vocab used",
        lambda name, s: "%.1f%%" % (100 * s["vocab_used_share"]) if s["vocab_used_share"] else "-",
    ),
    ("MB/s", lambda name, s: "%.2f" % s["mb_per_second"]),
]


def _num(x):
    return "-" if x is None else "%.3f" % x


def format_table(rows):
    """A Markdown table of ``[(model name, corpus_stats dict), ...]``, one row per model;
    with several models, a last column: each one's tokens against the first's (SuperBPE
    against plain BPE at the same vocab size, say)."""
    cells = [[title for title, _ in _COLUMNS]]
    cells += [[f(name, s) for _, f in _COLUMNS] for name, s in rows]
    if len(rows) > 1:  # models compared on the same text: the token count against the first's
        cells[0].append("tokens vs first")
        first = rows[0][1]["tokens"]
        for row, (_, s) in zip(cells[1:], rows):
            row.append("%+.1f%%" % (100.0 * (s["tokens"] - first) / first) if first else "-")
    widths = [max(len(row[k]) for row in cells) for k in range(len(cells[0]))]

    def line(row):
        return (
            "| "
            + " | ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(row, widths)))
            + " |"
        )

    rule = (
        "|"
        + "|".join(("-" * (w + 2)) if k == 0 else ("-" * (w + 1) + ":") for k, w in enumerate(widths))
        + "|"
    )
    return "\n".join([line(cells[0]), rule] + [line(r) for r in cells[1:]])


def format_top_tokens(name, stats):
    """One line: the most frequent tokens of a model with their share of all tokens."""
    total = stats["tokens"] or 1
    parts = ["%r %.1f%%" % (t["token"], 100.0 * t["count"] / total) for t in stats["top_tokens"]]
    return "%s most frequent: %s" % (name, ", ".join(parts) or "-")
