"""Training traces: one JSON object per merge, one per line (``train --trace``).

The format is language-neutral, so another trainer can write the same file
and ``refbpe verify --trace`` can compare the two step by step::

    {"step": 0, "left": "74", "right": "68", "id": 256, "count": 42, "ties": 1, "runner_up": 40}

``step`` counts merges from 0; ``left`` and ``right`` are the pair's bytes in
hex; ``id`` is the new token's id in the model; ``count`` the pair's count
when it was merged; ``ties`` how many pairs had that count (it included);
``runner_up`` the greatest count among the other pairs (0 when none).  Keys
are written in this order; a reader needs only ``step``, ``left``, ``right``
and ``count``.
"""

import json

from .._util.atomic import atomic_write
from .._util.reading import bounded_lines, open_binary

__all__ = ["trace_records", "write_trace", "write_training_trace", "read_trace"]

TRACE_KEYS = ("step", "left", "right", "id", "count", "ties", "runner_up")


def trace_records(merges, trace, vocab):
    """The records of a training: ``merges``, the engine's ``trace`` tuples
    ``(count, ties, runner_up)`` and the model's ``vocab`` {id: bytes}."""
    id_of = {b: i for i, b in vocab.items()}
    out = []
    for step, ((a, b), (count, ties, runner_up)) in enumerate(zip(merges, trace)):
        out.append(
            {
                "step": step,
                "left": a.hex(),
                "right": b.hex(),
                "id": id_of.get(a + b),
                "count": count,
                "ties": ties,
                "runner_up": runner_up,
            }
        )
    return out


def write_trace(path, records):
    """``records`` as JSON lines at ``path``, written atomically."""
    lines = [_line(r) for r in records]
    atomic_write(path, ("\n".join(lines) + "\n" if lines else "").encode("utf-8"))


def write_training_trace(path, merges, trace, vocab):
    """``write_trace(path, trace_records(merges, trace, vocab))``, the lines made by
    the template straight from the tuples: every such record is plain (``_plain``;
    an empty part's ``""`` is JSON text too).  Cold under PyPy, 9,743 merges: 13 ms
    instead of 34 ms (perf/micro.py trace-write), of a ``train --trace`` of 1.4 s."""
    id_of = {b: i for i, b in vocab.items()}
    lines = []
    for step in range(len(trace)):
        a, b = merges[step]
        count, ties, runner_up = trace[step]
        ident = id_of.get(a + b)
        ident = "null" if ident is None else "%d" % ident
        lines.append(_LINE % (step, a.hex(), b.hex(), ident, count, ties, runner_up))
    atomic_write(path, ("\n".join(lines) + "\n" if lines else "").encode("utf-8"))


_LINE = '{"step": %d, "left": "%s", "right": "%s", "id": %s, "count": %d, "ties": %d, "runner_up": %d}'


def _line(r):
    """One record as ``json.dumps`` writes it; a record as ``trace_records`` makes them
    (ints, hex) by a template instead: a sixth of the time under PyPy (10,000 records)."""
    if _plain(r):
        ident = "null" if r["id"] is None else "%d" % r["id"]
        return _LINE % (r["step"], r["left"], r["right"], ident, r["count"], r["ties"], r["runner_up"])
    return json.dumps({k: r[k] for k in TRACE_KEYS if k in r}, separators=(", ", ": "))


def _plain(r):
    """True when ``r`` has exactly the trace's keys, ints (``id`` also None) and ASCII
    letters and digits for the bytes: text the template writes as JSON does."""
    if len(r) != len(TRACE_KEYS) or "id" not in r or (r["id"] is not None and type(r["id"]) is not int):
        return False
    if any(type(r.get(k)) is not int for k in ("step", "count", "ties", "runner_up")):
        return False
    return all(type(r.get(k)) is str and r[k].isascii() and r[k].isalnum() for k in ("left", "right"))


def read_trace(path):
    """The records of a trace file; a ``ValueError`` naming the line on a bad one."""
    records = []
    with open_binary(path) as f:
        for n, line in enumerate(bounded_lines(f, path, lambda start: start.lstrip()[:1] in (b"{", b"")), 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                r["pair"] = (bytes.fromhex(r["left"]), bytes.fromhex(r["right"]))
                r["count"] = int(r["count"])
                r["step"] = int(r.get("step", len(records)))
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError("%s:%d: not a trace record (%s)" % (path, n, e))
            records.append(r)
    return records
