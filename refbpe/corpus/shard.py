"""Shards: the I-th of N byte ranges of the inputs, cut where cutting is safe.

The inputs (regular files, in the order given) are seen as one run of
``T`` bytes.  Shard ``I`` of ``N`` (0-based: ``0 <= I < N``) covers
``[B(I), B(I + 1))`` where ``B(k)`` is ``k * T // N`` moved forward to the
first safe cut (``io.find_cut_in_file``) at or after it in the file it
falls in.  The start and end of a file are always safe: files are separate
texts.  So:

* the shards partition the inputs: ``B(0) = 0``, ``B(N) = T``, and ``B`` is
  non-decreasing (the first safe cut at or after an offset only moves
  forward with it); a shard may be empty;
* no shard splits a pre-token or a special token, so the word counts of all
  N shards add up to the counts of the whole input (``count_words``);
* a shard is a list of ``(path, start, end)`` spans, at most one per file,
  computed from the file sizes and a few small reads: every machine that
  is given the same files (the same bytes, in the same order) and the same
  special tokens computes the same shards without talking to the others.

Streams (stdin, ``*.gz``) cannot be cut at an offset without reading all
that comes before it, so sharding needs regular files.
"""

from .io import cut_points, find_cut_in_file, input_size

__all__ = ["parse_shard", "shard_spans", "ShardError"]


class ShardError(ValueError):
    """A bad shard spec or an input that cannot be sharded."""


def parse_shard(text):
    """``"I/N"`` -> ``(I, N)`` with ``0 <= I < N``; ShardError otherwise."""
    index, sep, count = str(text).partition("/")
    try:
        if not sep:
            raise ValueError
        index, count = int(index), int(count)
    except ValueError:
        raise ShardError("--shard expects I/N (0-based shard I of N, e.g. 0/4), got %r" % (text,))
    if count < 1:
        raise ShardError("--shard %s: the number of shards must be at least 1" % text)
    if not 0 <= index < count:
        raise ShardError("--shard %s: I must be 0 to %d (shards are numbered from 0)" % (text, count - 1))
    return index, count


def shard_spans(sources, index, count, special_tokens=(), pattern=None):
    """The ``(path, start, end)`` spans of shard ``index`` of ``count`` (cut by
    ``pattern``'s rule, ``io.cut_points``)."""
    sizes = []
    for s in sources:
        size = input_size(s)
        if size is None:
            raise ShardError(
                "%s: cannot shard %s; give regular files (decompress .gz inputs first)"
                % (s, "stdin" if s == "-" else "a compressed stream")
            )
        sizes.append(size)
    specials = [t.encode("utf-8") for t in special_tokens]
    cuts = cut_points(pattern)
    lo = _boundary(sources, sizes, index, count, specials, cuts)
    hi = _boundary(sources, sizes, index + 1, count, specials, cuts)
    spans, base = [], 0
    for path, size in zip(sources, sizes):
        start, end = max(lo - base, 0), min(hi - base, size)
        if start < end:
            spans.append((path, start, end))
        base += size
    return spans


def _boundary(sources, sizes, k, count, specials, cuts):
    """``B(k)``: the global offset ``k * T // count`` moved to a safe cut."""
    target = k * sum(sizes) // count
    base = 0
    for path, size in zip(sources, sizes):
        if target < base + size:
            if target == base:
                return target
            with open(path, "rb") as f:
                return base + find_cut_in_file(f, target - base, size, specials, cuts=cuts)
        base += size
    return target  # the end of the last file
