"""Training: count pre-tokens, learn merges, lay out the vocabulary.

Id layout: byte b is id b; merge k makes id 256 + k; special tokens follow,
in the order given (duplicates dropped).  ``vocab_size`` counts all three, so
``vocab_size - 256 - len(special_tokens)`` merges are learned, or fewer when no
pair is left (the result then says so in ``report["stopped_early"]``).
"""

import os
import time

from .count import DEFAULT_CHUNK_SIZE, count_words
from .countfile import sum_counts
from .merge import learn_merges
from .progress import peak_memory_mb

__all__ = [
    "train_bpe",
    "train_from_counts",
    "train_from_count_files",
    "count_corpus",
    "build_vocab",
    "check_training_args",
]


def check_training_args(vocab_size, special_tokens):
    """Validated (vocab_size, special tokens without duplicates); ValueError if bad."""
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise ValueError("vocab_size must be an integer, got %r" % (vocab_size,))
    specials = []
    for t in special_tokens or ():
        if not isinstance(t, str) or not t:
            raise ValueError("special tokens must be non-empty strings, got %r" % (t,))
        if t not in specials:
            specials.append(t)
    minimum = 256 + len(specials)
    if vocab_size < minimum:
        raise ValueError(
            "vocab_size %d is below the minimum %d (256 bytes + %d special tokens)"
            % (vocab_size, minimum, len(specials))
        )
    return vocab_size, specials


def build_vocab(merges, special_tokens):
    """{id: bytes} in the refbpe id layout."""
    vocab = {i: bytes([i]) for i in range(256)}
    for a, b in merges:
        vocab[len(vocab)] = a + b
    for t in special_tokens:
        vocab[len(vocab)] = t.encode("utf-8")
    return vocab


def train_from_counts(word_counts, vocab_size, special_tokens=(), progress=None, report=None):
    """(vocab, merges) from ``{pre-token bytes: count}``."""
    vocab_size, special_tokens = check_training_args(vocab_size, special_tokens)
    wanted = vocab_size - 256 - len(special_tokens)
    t0 = time.time()
    merges = learn_merges(word_counts, wanted, progress=progress)
    if report is not None:
        report["merge"] = {
            "seconds": round(time.time() - t0, 3),
            "merges": len(merges),
            "merges_requested": wanted,
            "unique_words": len(word_counts),
            "peak_memory_mb": round(peak_memory_mb()[0], 1),
        }
        report["stopped_early"] = len(merges) < wanted
    return build_vocab(merges, special_tokens), merges


def train_bpe(input_path, vocab_size, special_tokens, **options):
    """The CS336 adapter: ``(vocab {id: bytes}, merges [(bytes, bytes)])``.

    ``input_path`` is a path (or a list of paths; ``-`` is stdin, ``*.gz`` is
    read decompressed).  Options: ``workers`` (default: CPU count; 1 runs in
    this process), ``chunk_size`` (bytes), ``errors`` (``strict``, ``replace``
    or ``ignore``), ``executor`` (any ``concurrent.futures.Executor``),
    ``executor_data`` (``path`` or ``chunk``: see ``count.count_words``),
    ``progress`` (a ``progress.Progress``), ``report`` (a dict filled with
    per-phase figures), ``pattern`` (the split pattern's name, ``refbpe.patterns``:
    ``gpt2``, the default, ``cl100k_base``, ``o200k_base`` or ``llama3``).
    """
    vocab_size, special_tokens = check_training_args(vocab_size, special_tokens)
    progress = options.pop("progress", None)
    report = options.pop("report", None)
    sources = input_path if isinstance(input_path, (list, tuple)) else [input_path]
    word_counts = count_corpus(sources, special_tokens, progress=progress, report=report, **options)
    return _train_counted(word_counts, vocab_size, special_tokens, progress, report)


def count_corpus(sources, special_tokens, progress=None, report=None, **options):
    """Phase 1 of training: ``count.count_words`` over ``sources``, with progress
    and ``report["count"]`` (seconds, bytes, MB/s, unique words, peak memory).
    ``options`` are ``train_bpe``'s counting options (and ``shard``)."""
    t0 = time.time()
    if progress is not None:
        progress.start()
    word_counts = count_words(
        sources,
        special_tokens,
        workers=options.get("workers"),
        chunk_size=options.get("chunk_size") or DEFAULT_CHUNK_SIZE,
        errors=options.get("errors", "strict"),
        progress=progress.bytes if progress is not None else None,
        executor=options.get("executor"),
        read_size=options.get("read_size"),
        executor_data=options.get("executor_data", "path"),
        shard=options.get("shard"),
        pattern=options.get("pattern"),
    )
    elapsed = time.time() - t0
    if report is not None:
        sizes = [os.path.getsize(s) for s in sources if s != "-" and os.path.exists(s)]
        total = sum(sizes) if len(sizes) == len(sources) else None
        own, children = peak_memory_mb()
        report["count"] = {
            "seconds": round(elapsed, 3),
            "bytes": total,
            "mb_per_s": round(total / elapsed / 1e6, 2) if total and elapsed > 0 else None,
            "unique_words": len(word_counts),
            "peak_memory_mb": round(own, 1),
            "peak_worker_memory_mb": round(children, 1),
        }
    return word_counts


def train_from_count_files(paths, vocab_size, special_tokens=(), progress=None, report=None):
    """``(vocab, merges)`` from word-count files (``refbpe.countfile``), added up.

    The same result as ``train_bpe`` on the corpus the files were counted
    from (with the same special tokens)."""

    vocab_size, special_tokens = check_training_args(vocab_size, special_tokens)
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    t0 = time.time()
    word_counts = sum_counts(paths)
    if report is not None:
        report["count"] = {
            "seconds": round(time.time() - t0, 3),
            "bytes": None,
            "mb_per_s": None,
            "count_files": len(paths),
            "unique_words": len(word_counts),
            "peak_memory_mb": round(peak_memory_mb()[0], 1),
            "peak_worker_memory_mb": 0.0,
        }
    return _train_counted(word_counts, vocab_size, special_tokens, progress, report)


def _train_counted(word_counts, vocab_size, special_tokens, progress, report):
    if progress is not None:
        progress.finish()
        progress.start()
    result = train_from_counts(
        word_counts,
        vocab_size,
        special_tokens,
        progress=progress.merges if progress is not None else None,
        report=report,
    )
    if progress is not None:
        progress.finish()
    return result
