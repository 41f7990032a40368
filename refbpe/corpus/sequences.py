"""Input cut into sequences, and the pre-tokens of the sequences counted, in one process.

A trainer pre-tokenizes each *sequence* on its own, so where the input is cut
changes the word table.  refbpe's own reading (``count``) cuts each file at
its special tokens; HF's ``tokenizer.train([files])`` reads each line (with its
newline) as a sequence and leaves special tokens in the text, and HF's
``ByteLevel(add_prefix_space=True)`` puts a space before every sequence that
does not start with one.  The cuts:

    documents   each text cut at the special tokens, which are dropped; every
                piece is a sequence, empty ones included (as ``text.split(T)``)
    lines       each text cut after every ``\\n``; a last line without one is a
                sequence too; special tokens stay in the text
    items       each text is one sequence as it is (an iterator's items)

Texts are ``str`` or UTF-8 ``bytes`` (the cuts are ASCII, so bytes are cut
without decoding: under PyPy decoding and re-encoding a 75 MB text cost more
than the cuts, measured by perf/profiles.py).  Cost: one pass over the text
per step (cut, then scan); the text of one file is in memory at a time.
``count_texts_parallel`` cuts each text (as UTF-8 bytes) at sequence
boundaries into about three pieces per worker (a cut between two sequences
changes nothing: each is counted on its own) and counts the pieces as work
units on refbpe's process pool (``pool.run_units``), as counting does;
refbpe's streaming reader (``count.count_words``) is used instead wherever it
gives the same table (documents, no prefix space).  Texts under 8 MiB are
counted in this process (``_too_small_for_a_pool``).  Lines are scanned one by
one, but their pieces are counted in one pass (``count_text``).
``count_texts_per_pattern`` counts several patterns' tables in the same pass
(SuperBPE's two stages): the text is read, cut and sent to the workers once,
and each sequence is scanned once per pattern.  ``counting_pattern_by_pattern``
counts them one pattern after another on one pool instead, and hands over
the first pattern's table while the pool counts the others: the caller
trains SuperBPE's first stage meanwhile.
"""

import contextlib

from ..pretokenize.gpt2 import add_small_counts, count_pieces
from ..pretokenize.patterns import get_pattern
from ..specials import special_pattern
from .count import pack_counts, unpack_counts, warm_up_scanner
from .pool import pool_passes, run_units
from .units import run_chunk

__all__ = [
    "cut_sequences",
    "count_texts",
    "count_texts_parallel",
    "count_texts_per_pattern",
    "counting_pattern_by_pattern",
    "pieces_at_sequence_boundaries",
]

SEQUENCE_CUTS = ("documents", "lines", "items")


def cut_sequences(text, cut, special_tokens=()):
    """The sequences of ``text`` (a str, or UTF-8 bytes) under ``cut`` (see the module docstring)."""
    if cut == "items":
        return [text]
    as_bytes = isinstance(text, bytes)
    if cut == "lines":
        newline = b"\n" if as_bytes else "\n"
        lines = text.split(newline)
        last = lines.pop()
        return [line + newline for line in lines] + ([last] if last else [])
    if cut == "documents":
        pattern = special_pattern(special_tokens, as_bytes=as_bytes)
        return [text] if pattern is None else pattern.split(text)
    raise ValueError("unknown sequence cut %r (known: %s)" % (cut, ", ".join(SEQUENCE_CUTS)))


def count_sequences(sequences, pattern=None, add_prefix_space=False, counts=None, small=None):
    """Add the pre-token counts of every sequence (a str, or valid UTF-8 bytes) to
    ``counts`` (bytes -> int).

    ``add_prefix_space``: a space is put before a sequence that does not start
    with one (HF's ``ByteLevel``); an empty sequence stays empty, as in HF.
    Given ``small``, short pieces stay there under int keys
    (``Pattern.count_pretokens``).
    """
    count = get_pattern(pattern).count_pretokens
    if counts is None:
        counts = {}
    keep_small = small is not None
    if not keep_small:
        small = {}
    for seq in sequences:
        if not isinstance(seq, bytes):
            seq = seq.encode("utf-8", "surrogatepass")
        if add_prefix_space and seq and seq[0] != 0x20:
            seq = b" " + seq
        if seq:
            count(seq, counts, small)
    return counts if keep_small else add_small_counts(small, counts)


def count_texts(texts, cut, special_tokens=(), pattern=None, add_prefix_space=False):
    """``{pre-token bytes: count}`` of ``texts`` (strs or UTF-8 bytes), each cut into sequences by ``cut``."""
    counts = {}
    small = {}
    for text in texts:
        if not isinstance(text, bytes):
            text = text.encode("utf-8", "surrogatepass")
        count_text(text, cut, special_tokens, pattern, add_prefix_space, counts, small)
    return add_small_counts(small, counts)


def pieces_at_sequence_boundaries(text, cut, special_tokens, parts):
    """``text`` cut into up to ``parts`` pieces between sequences (for ``documents``, a
    special token between two pieces is dropped), so that the pieces' sequences are
    the text's."""
    if parts <= 1 or cut == "items" or not text:
        return [text]
    if cut == "documents":
        pattern = special_pattern(special_tokens, as_bytes=isinstance(text, bytes))
        if pattern is None:
            return [text]
        gaps = [m.span() for m in pattern.finditer(text)]  # the whole text's matches, in order
    else:
        gaps = None
    pieces, start, k = [], 0, 0
    for i in range(1, parts):
        target = max(start, len(text) * i // parts)
        if gaps is None:
            end = text.find(b"\n" if isinstance(text, bytes) else "\n", target)
            if end == -1:
                break
            pieces.append(text[start : end + 1])
            start = end + 1
        else:
            while k < len(gaps) and gaps[k][0] < target:
                k += 1
            if k == len(gaps):
                break
            pieces.append(text[start : gaps[k][0]])
            start = gaps[k][1]
            k += 1
    pieces.append(text[start:])
    return pieces


def count_piece(piece, cut, special_tokens, pattern, add_prefix_space):
    """In a worker: the packed counts (``count.pack_counts``) of one piece's sequences."""
    small, counts = {}, {}
    count_text(piece, cut, special_tokens, pattern, add_prefix_space, counts, small)
    return pack_counts(small, counts)


def count_text(data, cut, special_tokens, pattern, add_prefix_space, counts, small):
    """``count_sequences(cut_sequences(data, cut, special_tokens), ...)`` for UTF-8 ``data``.

    Lines without a prefix space are scanned line by line but counted in one
    pass over ``data`` (``_line_piece_ends``): counting each line on its own
    cost 0.3-0.5 microseconds more per line under PyPy (the first 12 MiB of
    english_medium, 259,013 lines: superbpe-stage2 0.40 s against 0.27 s,
    superbpe-stage1 0.70 against 0.60, gpt2 0.67 against 0.59; perf/micro.py
    count-lines).
    """
    if cut == "lines" and not add_prefix_space and isinstance(data, bytes):
        count_pieces(data, _line_piece_ends(data, get_pattern(pattern).piece_ends), counts, small)
    else:
        count_sequences(cut_sequences(data, cut, special_tokens), pattern, add_prefix_space, counts, small)


def _line_piece_ends(data, piece_ends):
    """The end offsets in ``data`` of the pre-tokens of its lines, each scanned on its own."""
    ends, start, n = [], 0, len(data)
    while start < n:
        stop = data.find(b"\n", start) + 1 or n
        line = data if start == 0 and stop == n else data[start:stop]
        for end in piece_ends(line):
            ends.append(start + end)
        start = stop
    return ends


def count_texts_parallel(texts, cut, special_tokens=(), pattern=None, add_prefix_space=False, workers=1):
    """``count_texts`` with ``workers`` processes (each text cut into about three pieces per worker)."""
    texts = list(texts)
    if workers <= 1 or _too_small_for_a_pool(texts):
        return count_texts(texts, cut, special_tokens, pattern, add_prefix_space)
    small, counts = {}, {}
    params = (cut, tuple(special_tokens), pattern, add_prefix_space)
    run_units(
        _piece_units(texts, params, 3 * workers),
        workers,
        lambda packed, covered: unpack_counts(packed, small, counts),
        what="a counting",
        warm_up=lambda: warm_up_scanner(pattern),
        preload=(__name__,),
    )
    return add_small_counts(small, counts)


POOL_FROM = 8 << 20  # texts of fewer bytes (characters for strs) are counted in this process


def _too_small_for_a_pool(texts):
    """True below ``POOL_FROM``: a pool's start-up and its workers' JIT warm-up cost
    more than they save, as for ``count.count_words`` (english_small, 4 MB, ``train
    --profile hf --sequences lines``, PyPy: 1.27-1.37 s with one worker, 1.58-1.64 s
    with two; the plain row of perf/superbpe.py with ``--workers 1`` and ``2``)."""
    return sum(len(t) for t in texts) < POOL_FROM


def _piece_units(texts, params, parts):
    """The work units (``units.run_chunk``) of ``count_piece`` over each text's pieces."""
    return _piece_units_of(count_piece, texts, params, parts)


def count_texts_per_pattern(
    texts, cut, special_tokens=(), patterns=(None,), add_prefix_space=False, workers=1
):
    """``[count_texts_parallel(texts, ..., pattern, ...) for pattern in patterns]`` in one pass:
    each piece is cut into sequences once and every pattern counts them."""
    texts = list(texts)
    if _too_small_for_a_pool(texts):
        workers = 1
    tables = [({}, {}) for _ in patterns]
    params = (cut, tuple(special_tokens), tuple(patterns), add_prefix_space)
    parts = 3 * workers if workers > 1 else 1

    def add(packed, covered):
        size = len(packed) // len(tables)
        for k, (small, counts) in enumerate(tables):
            unpack_counts(packed[k * size : (k + 1) * size], small, counts)

    run_units(
        _piece_units_of(count_piece_per_pattern, texts, params, parts),
        workers,
        add,
        what="a counting",
        warm_up=lambda: [warm_up_scanner(pattern) for pattern in patterns],
        preload=(__name__,),
    )
    return [add_small_counts(small, counts) for small, counts in tables]


@contextlib.contextmanager
def counting_pattern_by_pattern(
    texts, cut, special_tokens=(), patterns=(None,), add_prefix_space=False, workers=2
):
    """Yield ``(first, rest)``: the table of ``patterns[0]``, counted, and
    ``rest()``, the tables of the others (``count_texts_per_pattern``'s), which
    the pool counts while the caller works on ``first`` (one pass of the texts
    per pattern; ``rest()`` waits for what is left, and must be called inside
    the block: leaving it ends the pool).

    ``workers`` processes count the first pattern, and then the others; texts
    too small for a pool (``_too_small_for_a_pool``) are counted under the
    first pattern here instead, while a pool of ``workers - 1`` processes
    counts the others from the start: SuperBPE on english_small (4 MB), PyPy, 2
    workers, whole ``train`` processes: count phase 0.63 s -> 0.51 s, wall
    2.58 s -> 2.32 s (perf/superbpe.py, medians of 3).
    """
    texts = list(texts)
    tables = [({}, {}) for _ in patterns]
    here = _too_small_for_a_pool(texts)
    pool_size = max(1, workers - 1) if here else workers
    # Only the first pattern is warmed up before the fork (and none when it is counted
    # here): the others are counted while this process trains, off the path it waits on.
    warm_up = None if here else (lambda: warm_up_scanner(patterns[0]))
    with pool_passes(pool_size, "a counting", warm_up, (__name__,)) as passes:
        for k, (pattern, (small, counts)) in enumerate(zip(patterns, tables)):
            if k > 0 or not here:
                params = (cut, tuple(special_tokens), pattern, add_prefix_space)
                units = _piece_units_of(count_piece, texts, params, 3 * pool_size)
                passes.queue(units, _adder(small, counts))
        if here:
            passes.hand_over()
            first = count_texts(texts, cut, special_tokens, patterns[0], add_prefix_space)
        else:
            passes.finish(0)
            first = add_small_counts(*tables[0])
        done = []

        def rest():
            if not done:
                passes.finish(passes.last())
                done.extend(add_small_counts(small, counts) for small, counts in tables[1:])
            return list(done)

        yield first, rest


def _adder(small, counts):
    return lambda packed, covered: unpack_counts(packed, small, counts)


def count_piece_per_pattern(piece, cut, special_tokens, patterns, add_prefix_space):
    """In a worker: the packed counts (``count.pack_counts``) of one piece's sequences (cut
    once) under each pattern, end to end in one tuple (the spool carries a flat tuple of parts)."""
    out = ()
    for pattern in patterns:
        small, counts = {}, {}
        count_text(piece, cut, special_tokens, pattern, add_prefix_space, counts, small)
        out += tuple(pack_counts(small, counts))
    return out


def _piece_units_of(work, texts, params, parts):
    """The work units (``units.run_chunk``) of ``work`` over each text's pieces."""
    cut, special_tokens = params[:2]
    for text in texts:
        data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        for piece in pieces_at_sequence_boundaries(data, cut, special_tokens, parts):
            yield run_chunk, (work, piece) + params, len(piece)
