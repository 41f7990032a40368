"""Training: count pre-tokens, learn merges, lay out the vocabulary.

Id layout: byte b is id b; merge k makes id 256 + k; special tokens follow,
in the order given (duplicates dropped).  ``vocab_size`` counts all three, so
``vocab_size - 256 - len(special_tokens)`` merges are learned, or fewer when no
pair is left (the result then says so in ``report["stopped_early"]``).

``profile=`` (``refbpe.profiles``: ``cs336``, the default, ``rustbpe``, ``hf``)
changes the tie rule, the id layout and how input is cut into sequences, to
reproduce another trainer exactly; the options it adds are listed in
``PROFILE_OPTIONS``.
"""

import os
import time

from .corpus.count import DEFAULT_CHUNK_SIZE, InputError, count_words, default_workers
from .corpus.countfile import sum_counts
from .corpus.io import open_input
from .corpus.progress import peak_memory_mb
from .corpus.sequences import count_texts, count_texts_parallel
from .profiles import get_profile, settings_pattern

__all__ = [
    "train_bpe",
    "train_from_counts",
    "train_from_count_files",
    "count_corpus",
    "build_vocab",
    "check_training_args",
    "train_from_texts",
    "PROFILE_OPTIONS",
]

# train_bpe's options that belong to the profile (``Profile.settings``), by keyword.
PROFILE_OPTIONS = ("pattern", "unicode", "cut", "add_prefix_space", "min_frequency", "initial_alphabet")


def check_training_args(vocab_size, special_tokens, minimum=None):
    """Validated (vocab_size, special tokens without duplicates); ValueError if bad.

    ``minimum``: the smallest vocab size allowed (default: 256 bytes + special tokens)."""
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise ValueError("vocab_size must be an integer, got %r" % (vocab_size,))
    specials = []
    for t in special_tokens or ():
        if not isinstance(t, str) or not t:
            raise ValueError("special tokens must be non-empty strings, got %r" % (t,))
        if t not in specials:
            specials.append(t)
    if minimum is None:
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


def train_from_counts(word_counts, vocab_size, special_tokens=(), progress=None, report=None, **options):
    """(vocab, merges) from ``{pre-token bytes: count}``; ``options``: ``profile``
    and its merge options (``min_frequency``, ``initial_alphabet``)."""
    profile, settings = _profile_settings(options)
    if options:
        raise TypeError("unexpected options: %s" % ", ".join(sorted(options)))
    vocab_size, special_tokens = check_training_args(
        vocab_size, special_tokens, profile.minimum_vocab_size(special_tokens)
    )
    return _learn(word_counts, vocab_size, special_tokens, progress, report, profile, settings)


def _learn(word_counts, vocab_size, special_tokens, progress, report, profile, settings):
    t0 = time.time()
    vocab, merges = profile.train_counted(word_counts, vocab_size, special_tokens, settings, progress)
    if report is not None:
        wanted = profile.merges_wanted(word_counts, vocab_size, special_tokens, settings)
        report["merge"] = {
            "seconds": round(time.time() - t0, 3),
            "merges": len(merges),
            "merges_requested": wanted,
            "unique_words": len(word_counts),
            "peak_memory_mb": round(peak_memory_mb()[0], 1),
        }
        report["stopped_early"] = len(merges) < wanted
        if profile.name != "cs336" or settings["min_frequency"]:
            report["profile"] = dict(settings)
        if settings_pattern(settings) != "gpt2":
            report["pattern"] = settings_pattern(settings)
    return vocab, merges


def train_bpe(input_path, vocab_size, special_tokens, **options):
    """The CS336 adapter: ``(vocab {id: bytes}, merges [(bytes, bytes)])``.

    ``input_path`` is a path (or a list of paths; ``-`` is stdin, ``*.gz`` is
    read decompressed).  Options: ``workers`` (default: CPU count; 1 runs in
    this process), ``chunk_size`` (bytes), ``errors`` (``strict``, ``replace``
    or ``ignore``), ``executor`` (any ``concurrent.futures.Executor``),
    ``executor_data`` (``path`` or ``chunk``: see ``count.count_words``),
    ``progress`` (a ``progress.Progress``), ``report`` (a dict filled with
    per-phase figures), ``pattern`` (the split pattern's name, ``refbpe.patterns``:
    ``gpt2``, the default, ``cl100k_base``, ``o200k_base`` or ``llama3``),
    ``unicode`` (the Unicode version its scanner reads: ``unicode_tables``;
    default the profile's, docs/unicode.md).
    ``profile`` (``cs336``, ``rustbpe`` or ``hf``) and its options
    (``PROFILE_OPTIONS``, ``pattern`` among them; ``refbpe.profiles``) reproduce
    another trainer; ``report["profile"]`` then records the settings.
    """
    profile, settings = _profile_settings(options)
    vocab_size, special_tokens = check_training_args(
        vocab_size, special_tokens, profile.minimum_vocab_size(special_tokens)
    )
    progress = options.pop("progress", None)
    report = options.pop("report", None)
    sources = input_path if isinstance(input_path, (list, tuple)) else [input_path]
    if settings["sequences"] == "documents" and not settings["add_prefix_space"]:
        word_counts = count_corpus(
            sources,
            special_tokens,
            progress=progress,
            report=report,
            pattern=settings_pattern(settings),
            **options,
        )
    else:
        word_counts = _count_in_process(sources, special_tokens, settings, options, report)
    return _train_counted(word_counts, vocab_size, special_tokens, progress, report, profile, settings)


def train_from_texts(texts, vocab_size, special_tokens=(), progress=None, report=None, **options):
    """(vocab, merges) for ``texts`` (strs), each one sequence, as a peer's
    ``train_from_iterator`` takes them: the default cut is ``items`` (the
    ``hf`` profile keeps special tokens in the text there, as HF does); the
    ``cut`` option cuts each text further (``sequences``)."""
    options.setdefault("cut", "items" if options.get("profile") == "hf" else "documents")
    profile, settings = _profile_settings(options)
    if options:
        raise TypeError("unexpected options: %s" % ", ".join(sorted(options)))
    vocab_size, special_tokens = check_training_args(
        vocab_size, special_tokens, profile.minimum_vocab_size(special_tokens)
    )
    cuts = special_tokens if settings["sequences"] == "documents" else ()
    word_counts = count_texts(
        texts, settings["sequences"], cuts, settings_pattern(settings), settings["add_prefix_space"]
    )
    return _train_counted(word_counts, vocab_size, special_tokens, progress, report, profile, settings)


def _profile_settings(options):
    """(profile, settings), the profile's options taken out of ``options``."""
    profile = get_profile(options.pop("profile", None))
    given = dict((k, options.pop(k)) for k in PROFILE_OPTIONS if k in options)
    return profile, profile.settings(**given)


def _count_in_process(sources, special_tokens, settings, options, report):
    """The word table of ``sources``, each read whole and cut by ``settings``
    (``sequences.count_texts_parallel``, ``workers`` processes)."""
    t0 = time.time()
    cut = settings["sequences"]
    cuts = special_tokens if cut == "documents" else ()
    errors = options.get("errors", "strict")
    texts = []
    total = 0
    for source in sources:
        with open_input(source) as f:
            data = f.read()
        total += len(data)
        try:
            if errors == "strict":
                data.decode("utf-8")  # checked only: the cuts and the scanners work on the bytes
            else:
                data = data.decode("utf-8", errors).encode("utf-8", "surrogatepass")
        except UnicodeDecodeError as e:
            raise InputError("%s: invalid UTF-8 at byte offset %d" % (source, e.start))
        texts.append(data)
        del data
    workers = options.get("workers") or default_workers()
    counts = count_texts_parallel(
        texts, cut, cuts, settings_pattern(settings), settings["add_prefix_space"], workers
    )
    if report is not None:
        elapsed = time.time() - t0
        report["count"] = {
            "seconds": round(elapsed, 3),
            "bytes": total,
            "mb_per_s": round(total / elapsed / 1e6, 2) if elapsed > 0 else None,
            "unique_words": len(counts),
            "peak_memory_mb": round(peak_memory_mb()[0], 1),
            "peak_worker_memory_mb": round(peak_memory_mb()[1], 1),
        }
    return counts


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


def train_from_count_files(paths, vocab_size, special_tokens=(), progress=None, report=None, **options):
    """``(vocab, merges)`` from word-count files (``refbpe.countfile``), added up.

    The same result as ``train_bpe`` on the corpus the files were counted
    from (with the same special tokens).  ``options``: as ``train_from_counts``."""

    profile, settings = _profile_settings(options)
    vocab_size, special_tokens = check_training_args(
        vocab_size, special_tokens, profile.minimum_vocab_size(special_tokens)
    )
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
    return _train_counted(word_counts, vocab_size, special_tokens, progress, report, profile, settings)


def _train_counted(word_counts, vocab_size, special_tokens, progress, report, profile, settings):
    if progress is not None:
        progress.finish()
        progress.start()
    merge_progress = progress.merges if progress is not None else None
    result = _learn(word_counts, vocab_size, special_tokens, merge_progress, report, profile, settings)
    if progress is not None:
        progress.finish()
    return result
