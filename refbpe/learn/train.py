"""Training: count pre-tokens, learn merges, lay out the vocabulary.

Id layout: byte b is id b; merge k makes id 256 + k; special tokens follow,
in the order given (duplicates dropped).  ``vocab_size`` counts all three, so
``vocab_size - 256 - len(special_tokens)`` merges are learned, or fewer when no
pair is left (the result then says so in ``report["stopped_early"]``).

``profile=`` (``refbpe.learn.profiles``: ``cs336``, the default, ``rustbpe``, ``hf``)
changes the tie rule, the id layout and how input is cut into sequences, to
reproduce another trainer exactly; its options (``pattern``, ``cut``,
``add_prefix_space``, ``min_frequency``, ``initial_alphabet``; ``SuperBPEProfile(transition=T)``
counts the input once per stage) are keyword-only
parameters of every trainer here, as are the counting options, and ``extend``
with ``inherit_merges`` (``refbpe.learn.extend``: replay a model's first merges, then
go on; its tokens keep their ids, its special tokens come first).

Each public trainer resolves those keywords into one ``TrainSettings``
(``refbpe.learn.settings.resolve``, where every check lives) and calls its
settings form: ``train_corpus``, ``train_texts``, ``train_counts``,
``train_count_files`` take the resolved value, for a caller (the CLI, a tool)
that builds it once.

Cost: counting is linear in the input (``corpus.count``: split over
``workers`` processes, memory bounded by the chunk size and the word table),
merging is the engine's (``merge``: O(total symbols + changed occurrences +
heap pushes * log H)), and the vocab is O(vocab_size).
"""

from __future__ import annotations

import contextlib
import os
import time
from concurrent.futures import Executor
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ..corpus.count import DEFAULT_CHUNK_SIZE, count_words
from ..corpus.countfile import sum_counts
from ..corpus.io import input_size, open_input
from ..corpus.pool import default_workers
from ..corpus.progress import Progress, peak_memory_mb
from ..corpus.sequences import (
    count_texts,
    count_texts_parallel,
    count_texts_per_pattern,
    counting_pattern_by_pattern,
)
from ..corpus.units import checked_utf8
from ..formats.model import Model, build_vocab
from ..pretokenize.patterns import pattern_key
from .extend import Parent
from .profiles import Profile, get_profile, settings_pattern, settled
from .settings import TrainSettings, check_training_args, resolve

__all__ = [
    "train_bpe",
    "train_from_counts",
    "train_from_count_files",
    "count_corpus",
    "build_vocab",
    "check_training_args",
    "train_from_texts",
    "count_with_profile",
    "train_corpus",
    "train_counts",
    "train_count_files",
    "train_texts",
]


def train_from_counts(
    word_counts: Dict[bytes, int],
    vocab_size: int,
    special_tokens: Iterable[str] = (),
    *,
    profile: Union[str, Profile, None] = None,
    pattern: Optional[str] = None,
    unicode: Optional[str] = None,
    cut: Optional[str] = None,
    add_prefix_space: Optional[bool] = None,
    min_frequency: int = 0,
    initial_alphabet: Union[str, Iterable[str], None] = None,
    progress: Optional[Progress] = None,
    report: Optional[Dict[str, Any]] = None,
    trace: Optional[List[Tuple[int, int, int]]] = None,
    extend: Union[Model, Parent, None] = None,
    inherit_merges: Optional[int] = None,
    tie_rule: Optional[str] = None,
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]]]:
    """(vocab, merges) from ``{pre-token bytes: count}``.

    ``profile`` and its merge options (``min_frequency``, ``initial_alphabet``)
    as in ``train_bpe``; ``pattern``, ``cut`` and ``add_prefix_space`` say how
    the counts were made (checked against the profile, recorded in
    ``report["profile"]``).  ``trace``, a list, receives ``(count, ties,
    runner-up count)`` per merge (``merge.learn_merges``; ``formats.trace``
    writes it).  Cost: the merge engine's (``merge``), O(total
    symbols + changed occurrences + heap pushes * log H), H the heap's size.

    The word counts of the CS336 handout's example, six merges:

    >>> vocab, merges = train_from_counts({b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6}, 262)
    >>> merges
    [(b's', b't'), (b'e', b'st'), (b'o', b'w'), (b'l', b'ow'), (b'w', b'est'), (b'n', b'e')]
    """
    settings = _resolved(locals())
    return train_counts(settings, word_counts, progress=progress, report=report, trace=trace)


def train_counts(
    settings: TrainSettings,
    word_counts: Dict[bytes, int],
    *,
    progress: Optional[Progress] = None,
    report: Optional[Dict[str, Any]] = None,
    trace: Optional[List[Tuple[int, int, int]]] = None,
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]]]:
    """``train_from_counts`` under resolved ``settings`` (``refbpe.learn.settings``,
    with a vocab size): the form a tool that builds the settings once calls."""
    return _train_counted(word_counts, _with_vocab_size(settings), progress, report, trace)


# The trainers' keywords that make their ``TrainSettings``: ``settings.resolve``'s, by name.
_SETTINGS_KEYWORDS = (
    "profile", "vocab_size", "special_tokens", "pattern", "unicode", "cut", "add_prefix_space",
    "min_frequency", "initial_alphabet", "extend", "inherit_merges", "tie_rule",
)  # fmt: skip


def _resolved(keywords):
    """A public trainer's keywords (its ``locals()``) as one ``TrainSettings``
    (``settings.resolve``, which checks them)."""
    return resolve(**{name: keywords[name] for name in _SETTINGS_KEYWORDS})


def _with_vocab_size(settings):
    if settings.vocab_size is None:
        raise ValueError("training needs settings with a vocab_size (resolve(vocab_size=...))")
    return settings


def _learn(word_counts, settings, progress, report, trace=None):
    t0 = time.time()
    profile, parent, recorded = settings.profile, settings.parent, settings.recorded()
    vocab_size, special_tokens = settings.vocab_size, list(settings.special_tokens)
    vocab, merges = profile.train_counted(
        word_counts, vocab_size, special_tokens, recorded, progress, trace, extend=parent
    )
    if parent is not None and report is not None:
        report["parent"] = parent.record
    word_counts = settled(word_counts)
    if report is not None:
        wanted = profile.merges_wanted(word_counts, vocab_size, special_tokens, recorded)
        report["merge"] = {
            "seconds": round(time.time() - t0, 3),
            "merges": len(merges),
            "merges_requested": wanted,
            "unique_words": len(word_counts[-1] if profile.stage_patterns else word_counts),
            "peak_memory_mb": round(peak_memory_mb()[0], 1),
        }
        report["stopped_early"] = len(merges) < wanted
        if profile.name != "cs336" or settings.min_frequency:
            report["profile"] = settings.recorded()
        if settings.pattern_key != "gpt2":
            report["pattern"] = settings.pattern_key
    return vocab, merges


def train_bpe(
    input_path: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
    vocab_size: int,
    special_tokens: Iterable[str],
    *,
    workers: Optional[int] = None,
    chunk_size: Optional[int] = DEFAULT_CHUNK_SIZE,
    errors: str = "strict",
    executor: Optional[Executor] = None,
    executor_data: str = "path",
    read_size: Optional[int] = None,
    pattern: Optional[str] = None,
    unicode: Optional[str] = None,
    profile: Union[str, Profile, None] = None,
    cut: Optional[str] = None,
    add_prefix_space: Optional[bool] = None,
    min_frequency: int = 0,
    initial_alphabet: Union[str, Iterable[str], None] = None,
    progress: Optional[Progress] = None,
    report: Optional[Dict[str, Any]] = None,
    trace: Optional[List[Tuple[int, int, int]]] = None,
    extend: Union[Model, Parent, None] = None,
    inherit_merges: Optional[int] = None,
    tie_rule: Optional[str] = None,
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]]]:
    """The CS336 adapter: ``(vocab {id: bytes}, merges [(bytes, bytes)])``.

    ``input_path`` is a path (or a list of paths; ``-`` is stdin, ``*.gz`` is
    read decompressed).  Options: ``workers`` (default: CPU count; 1 runs in
    this process), ``chunk_size`` (bytes), ``errors`` (``strict``, ``replace``
    or ``ignore``), ``executor`` (any ``concurrent.futures.Executor``),
    ``executor_data`` (``path`` or ``chunk``: see ``count.count_words``),
    ``read_size`` (bytes read around a cut), ``progress`` (a
    ``progress.Progress``), ``report`` (a dict filled with per-phase figures),
    ``pattern`` (the split pattern's name, ``refbpe.patterns``: ``gpt2``, the
    default, ``cl100k_base``, ``o200k_base`` or ``llama3``), ``unicode`` (the
    Unicode version its scanner reads: ``unicode_tables``; default the
    profile's, docs/unicode.md).  ``profile``
    (``cs336``, ``rustbpe`` or ``hf``) and its options (``cut``,
    ``add_prefix_space``, ``min_frequency``, ``initial_alphabet``, and
    ``pattern``; ``refbpe.learn.profiles``) reproduce another trainer, and ``tie_rule`` (a name of
    ``refbpe.learn.tie_rules``) replaces its tie rule;
    ``report["profile"]`` then records the settings.

    Cost: counting O(input bytes), split over ``workers`` processes, in memory
    bounded by the chunk size and the word table; then ``train_from_counts``'s.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "corpus.txt")
    ...     with open(path, "w") as f:
    ...         _ = f.write("low low lower<|endoftext|>lowest")
    ...     vocab, merges = train_bpe(path, 260, ["<|endoftext|>"], workers=1)
    >>> merges, vocab[259]
    ([(b'o', b'w'), (b'l', b'ow'), (b'low', b'e')], b'<|endoftext|>')
    """
    settings = _resolved(locals())
    sources = input_path if isinstance(input_path, (list, tuple)) else [input_path]
    return train_corpus(
        settings, sources, workers=workers, chunk_size=chunk_size, errors=errors, executor=executor,
        executor_data=executor_data, read_size=read_size, progress=progress, report=report, trace=trace,
    )  # fmt: skip


def train_corpus(
    settings: TrainSettings,
    sources: Sequence[Union[str, os.PathLike]],
    *,
    workers: Optional[int] = None,
    chunk_size: Optional[int] = DEFAULT_CHUNK_SIZE,
    errors: str = "strict",
    executor: Optional[Executor] = None,
    executor_data: str = "path",
    read_size: Optional[int] = None,
    progress: Optional[Progress] = None,
    report: Optional[Dict[str, Any]] = None,
    trace: Optional[List[Tuple[int, int, int]]] = None,
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]]]:
    """``train_bpe`` on the files ``sources`` under resolved ``settings``
    (``refbpe.learn.settings``, with a vocab size); the counting options are ``train_bpe``'s."""
    profile, recorded = _with_vocab_size(settings).profile, settings.recorded()
    special_tokens = list(settings.special_tokens)
    if profile.stage_patterns and not _streamed(recorded):
        patterns = settings.stage_pattern_keys
        if executor is None and (workers or default_workers()) > 1:  # stage 2 counted while stage 1 trains
            counting = _counting_stage_by_stage(
                sources, special_tokens, recorded, workers, errors, report, patterns
            )
            with counting as counts:
                return _train_counted(counts, settings, progress, report, trace)
        # every stage's table in one pass
        word_counts = _count_in_process(sources, special_tokens, recorded, workers, errors, report, patterns)
    else:
        word_counts = _per_stage(profile, recorded, lambda stage_settings: _count_as(
            sources, special_tokens, stage_settings, workers, chunk_size, errors, executor, executor_data,
            read_size, progress, report,
        ), report)  # fmt: skip
    return _train_counted(word_counts, settings, progress, report, trace)


def count_with_profile(
    sources: Sequence[Union[str, os.PathLike]],
    special_tokens: Iterable[str],
    *,
    profile: Union[str, Profile, None] = None,
    pattern: Optional[str] = None,
    unicode: Optional[str] = None,
    cut: Optional[str] = None,
    add_prefix_space: Optional[bool] = None,
    workers: Optional[int] = None,
    chunk_size: Optional[int] = DEFAULT_CHUNK_SIZE,
    errors: str = "strict",
    executor: Optional[Executor] = None,
    executor_data: str = "path",
    read_size: Optional[int] = None,
    progress: Optional[Progress] = None,
    report: Optional[Dict[str, Any]] = None,
) -> Dict[bytes, int]:
    """The word counts ``train_bpe`` trains on: ``sources`` counted as ``profile``'s
    trainer counts them (its pattern, sequences and prefix space).  Cost: as
    ``train_bpe``'s counting phase."""
    settings = resolve(profile, pattern=pattern, unicode=unicode, cut=cut, add_prefix_space=add_prefix_space)
    return _count_as(
        list(sources), list(special_tokens), settings.recorded(), workers, chunk_size, errors, executor,
        executor_data, read_size, progress, report,
    )  # fmt: skip


def _count_as(
    sources, special_tokens, settings, workers, chunk_size, errors, executor, executor_data, read_size,
    progress, report,
):  # fmt: skip
    if _streamed(settings):
        return count_corpus(
            sources,
            special_tokens,
            workers=workers,
            chunk_size=chunk_size,
            errors=errors,
            executor=executor,
            executor_data=executor_data,
            read_size=read_size,
            pattern=settings_pattern(settings),
            progress=progress,
            report=report,
        )
    return _count_in_process(sources, special_tokens, settings, workers, errors, report)


def _streamed(settings):
    """True: refbpe's streaming reader (``count_corpus``) gives the table ``settings`` ask for."""
    return settings["sequences"] == "documents" and not settings["add_prefix_space"]


def train_from_texts(
    texts: Iterable[str],
    vocab_size: int,
    special_tokens: Iterable[str] = (),
    *,
    profile: Union[str, Profile, None] = None,
    pattern: Optional[str] = None,
    unicode: Optional[str] = None,
    cut: Optional[str] = None,
    add_prefix_space: Optional[bool] = None,
    min_frequency: int = 0,
    initial_alphabet: Union[str, Iterable[str], None] = None,
    progress: Optional[Progress] = None,
    report: Optional[Dict[str, Any]] = None,
    trace: Optional[List[Tuple[int, int, int]]] = None,
    extend: Union[Model, Parent, None] = None,
    inherit_merges: Optional[int] = None,
    tie_rule: Optional[str] = None,
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]]]:
    """(vocab, merges) for ``texts`` (strs), each one sequence, as a peer's
    ``train_from_iterator`` takes them: the default cut is ``items`` (the
    ``hf`` profile keeps special tokens in the text there, as HF does); the
    ``cut`` option cuts each text further (``sequences``).  The other options
    are ``train_bpe``'s.  Cost: counting O(text length), in this process, then
    ``train_from_counts``'s.

    >>> vocab, merges = train_from_texts(["low low lower<|endoftext|>lowest"], 260, ["<|endoftext|>"])
    >>> merges, vocab[259]
    ([(b'o', b'w'), (b'l', b'ow'), (b'low', b'e')], b'<|endoftext|>')
    """
    if cut is None:
        cut = "items" if get_profile(profile).name == "hf" else "documents"
    settings = _resolved(locals())
    return train_texts(settings, texts, progress=progress, report=report, trace=trace)


def train_texts(
    settings: TrainSettings,
    texts: Iterable[str],
    *,
    progress: Optional[Progress] = None,
    report: Optional[Dict[str, Any]] = None,
    trace: Optional[List[Tuple[int, int, int]]] = None,
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]]]:
    """``train_from_texts`` under resolved ``settings`` (``refbpe.learn.settings``,
    with a vocab size; their ``sequences`` is the cut, ``documents`` unless chosen)."""
    cut, add_prefix_space = _with_vocab_size(settings).sequences, settings.add_prefix_space
    cuts = list(settings.special_tokens) if cut == "documents" else ()
    if settings.profile.stage_patterns:  # every stage's table in one pass
        patterns = settings.stage_pattern_keys
        word_counts = tuple(count_texts_per_pattern(texts, cut, cuts, patterns, add_prefix_space))
    else:
        word_counts = count_texts(texts, cut, cuts, settings.pattern_key, add_prefix_space)
    return _train_counted(word_counts, settings, progress, report, trace)


def _per_stage(profile, settings, count, report=None):
    """``count(settings)``; for a profile with one pattern per stage (SuperBPE), a
    tuple of counts, one per stage, each counted with its stage's pattern
    (``report["count"]`` then sums the stages and lists them under ``stages``)."""
    if not profile.stage_patterns:
        return count(settings)
    counts, stages = [], []
    for pattern in profile.stage_patterns:
        counts.append(count(dict(settings, pattern=pattern)))
        if report is not None and "count" in report:
            stages.append(dict(report["count"], pattern=pattern))
    if stages:
        seconds = sum(s["seconds"] for s in stages)
        size = stages[-1].get("bytes")
        rate = round(size / seconds / 1e6, 2) if size and seconds > 0 else None
        report["count"] = dict(stages[-1], seconds=round(seconds, 3), mb_per_s=rate, stages=stages)
    return tuple(counts)


def _count_in_process(sources, special_tokens, settings, workers, errors, report, stage_patterns=None):
    """The word table of ``sources``, each read whole and cut by ``settings``
    (``sequences.count_texts_parallel``, ``workers`` processes).  Given
    ``stage_patterns``, a tuple of tables instead, one per pattern, all counted
    in the same pass (``sequences.count_texts_per_pattern``); ``report["count"]``
    then lists each stage's pattern and unique words under ``stages``."""
    t0 = time.time()
    cut = settings["sequences"]
    cuts = special_tokens if cut == "documents" else ()
    texts, total = _read_whole(sources, errors)
    workers = workers or default_workers()
    if stage_patterns is None:
        counts = count_texts_parallel(
            texts, cut, cuts, settings_pattern(settings), settings["add_prefix_space"], workers
        )
        if report is not None:
            report["count"] = _count_report(time.time() - t0, total, len(counts))
        return counts
    tables = tuple(
        count_texts_per_pattern(texts, cut, cuts, stage_patterns, settings["add_prefix_space"], workers)
    )
    if report is not None:
        report["count"] = _count_report(time.time() - t0, total, len(tables[-1]))
        report["count"]["stages"] = [
            {"pattern": p, "unique_words": len(t)} for p, t in zip(stage_patterns, tables)
        ]
    return tables


@contextlib.contextmanager
def _counting_stage_by_stage(sources, special_tokens, settings, workers, errors, report, patterns):
    """Yield the stage tables of ``sources`` (as ``_count_in_process`` with
    ``patterns``), the first counted and the later ones callables that wait
    for them: a pool counts stage 2 while this process trains stage 1
    (``sequences.counting_pattern_by_pattern``; ``profiles.settled``), at a
    lower priority than it (``pool.Passes``).  perf/superbpe.py's SuperBPE run
    (english_small, vocab 10,000, T = 8,000, 2 workers): 3.16 s -> 2.82 s wall."""
    t0 = time.time()
    cut = settings["sequences"]
    cuts = special_tokens if cut == "documents" else ()
    texts, total = _read_whole(sources, errors)
    workers = workers or default_workers()
    counting = counting_pattern_by_pattern(texts, cut, cuts, patterns, settings["add_prefix_space"], workers)
    with counting as (first, rest):
        del texts
        if report is not None:
            report["count"] = _count_report(time.time() - t0, total, len(first))
            report["count"]["stages"] = [{"pattern": patterns[0], "unique_words": len(first)}]

        def later(k):
            def table():
                tables = rest()
                if report is not None and len(report["count"]["stages"]) < len(patterns):
                    for pattern, t in zip(patterns[1:], tables):
                        report["count"]["stages"].append(
                            {"pattern": pattern, "unique_words": len(t), "counted": "during stage 1"}
                        )
                    report["count"]["unique_words"] = len(tables[-1])
                return tables[k]

            return table

        yield (first,) + tuple(later(k) for k in range(len(patterns) - 1))


def _read_whole(sources, errors):
    """([each source's bytes, checked as UTF-8], total bytes)."""
    texts = []
    total = 0
    for source in sources:
        with open_input(source) as f:
            data = f.read()
        total += len(data)
        texts.append(checked_utf8(data, 0, source, errors))  # the cuts and the scanners work on the bytes
        del data
    return texts, total


def count_corpus(
    sources: Sequence[Union[str, os.PathLike]],
    special_tokens: Iterable[str],
    *,
    workers: Optional[int] = None,
    chunk_size: Optional[int] = DEFAULT_CHUNK_SIZE,
    errors: str = "strict",
    executor: Optional[Executor] = None,
    executor_data: str = "path",
    read_size: Optional[int] = None,
    shard: Optional[Tuple[int, int]] = None,
    pattern: Optional[str] = None,
    unicode: Optional[str] = None,
    progress: Optional[Progress] = None,
    report: Optional[Dict[str, Any]] = None,
) -> Dict[bytes, int]:
    """Phase 1 of training: ``count.count_words`` over ``sources``, with progress
    and ``report["count"]`` (seconds, bytes, MB/s, unique words, peak memory).
    The options are ``train_bpe``'s counting options (and ``shard``)."""
    t0 = time.time()
    if progress is not None:
        progress.start()
    word_counts = count_words(
        sources,
        special_tokens,
        workers=workers,
        chunk_size=chunk_size or DEFAULT_CHUNK_SIZE,
        errors=errors,
        progress=progress.bytes if progress is not None else None,
        executor=executor,
        read_size=read_size,
        executor_data=executor_data,
        shard=shard,
        pattern=pattern_key(pattern, unicode),
    )
    elapsed = time.time() - t0
    if report is not None:
        sizes = [input_size(s) if os.path.exists(s) else None for s in sources]
        total = None if None in sizes else sum(sizes)
        report["count"] = _count_report(elapsed, total, len(word_counts))
    return word_counts


def _count_report(seconds, total, unique_words, count_files=None):
    """``report["count"]``, the counting phase's figures (every way of counting builds them here).

    ``seconds``; ``bytes`` read (``total``, None when not known) and ``mb_per_s``
    (None when not known or nothing was read); ``count_files`` when word-count
    files were read instead of a corpus; ``unique_words``; the peak resident
    memory so far of this process and of its largest worker (0 for count
    files: no worker ran), in MB::

        {"seconds": 1.2, "bytes": 4000000, "mb_per_s": 3.33, "unique_words": 41871,
         "peak_memory_mb": 210.3, "peak_worker_memory_mb": 0.0}
    """
    own, children = peak_memory_mb()
    figures = {
        "seconds": round(seconds, 3),
        "bytes": total,
        "mb_per_s": round(total / seconds / 1e6, 2) if total and seconds > 0 else None,
    }
    if count_files is not None:
        figures["count_files"] = count_files
        children = 0.0
    figures["unique_words"] = unique_words
    figures["peak_memory_mb"] = round(own, 1)
    figures["peak_worker_memory_mb"] = round(children, 1)
    return figures


def train_from_count_files(
    paths: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]],
    vocab_size: int,
    special_tokens: Iterable[str] = (),
    *,
    profile: Union[str, Profile, None] = None,
    pattern: Optional[str] = None,
    unicode: Optional[str] = None,
    cut: Optional[str] = None,
    add_prefix_space: Optional[bool] = None,
    min_frequency: int = 0,
    initial_alphabet: Union[str, Iterable[str], None] = None,
    progress: Optional[Progress] = None,
    report: Optional[Dict[str, Any]] = None,
    trace: Optional[List[Tuple[int, int, int]]] = None,
    extend: Union[Model, Parent, None] = None,
    inherit_merges: Optional[int] = None,
    tie_rule: Optional[str] = None,
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]]]:
    """``(vocab, merges)`` from word-count files (``corpus.countfile``), added up.

    The same result as ``train_bpe`` on the corpus the files were counted
    from (with the same special tokens).  The options are ``train_from_counts``'s.
    Cost: reading O(total file size), then ``train_from_counts``'s.

    >>> import os, tempfile
    >>> from refbpe import write_counts
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = [os.path.join(d, "a.counts.tsv"), os.path.join(d, "b.counts.tsv")]
    ...     write_counts(paths[0], {b"low": 3, b"lower": 2})
    ...     write_counts(paths[1], {b"low": 2, b"widest": 3, b"newest": 6})
    ...     vocab, merges = train_from_count_files(paths, 262)
    >>> merges
    [(b's', b't'), (b'e', b'st'), (b'o', b'w'), (b'l', b'ow'), (b'w', b'est'), (b'n', b'e')]
    """
    settings = _resolved(locals())
    return train_count_files(settings, paths, progress=progress, report=report, trace=trace)


def train_count_files(
    settings: TrainSettings,
    paths: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]],
    *,
    progress: Optional[Progress] = None,
    report: Optional[Dict[str, Any]] = None,
    trace: Optional[List[Tuple[int, int, int]]] = None,
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]]]:
    """``train_from_count_files`` under resolved ``settings`` (``refbpe.learn.settings``,
    with a vocab size)."""
    _with_vocab_size(settings)
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    t0 = time.time()
    word_counts = sum_counts(paths)
    if report is not None:
        report["count"] = _count_report(time.time() - t0, None, len(word_counts), count_files=len(paths))
    return _train_counted(word_counts, settings, progress, report, trace)


def _train_counted(word_counts, settings, progress, report, trace=None):
    if progress is not None:
        progress.finish()
        progress.start()
    merge_progress = progress.merges if progress is not None else None
    result = _learn(word_counts, settings, merge_progress, report, trace)
    if progress is not None:
        progress.finish()
    return result
