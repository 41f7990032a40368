"""What ``verify`` and ``certify`` read: their model (``--against`` or MODEL) and the
reference word counts of the corpus (text files counted, or word-count files added up)."""

import gzip

from ..corpus.count import InputError
from ..corpus.countfile import is_counts_path, sum_counts
from ..corpus.io import can_reread, input_size
from ..learn.train import count_corpus, count_with_profile
from ..loader import read_model
from .common import CliError, check_inputs, counting_error, counting_options, executor_context, make_progress

__all__ = ["their_model", "word_counts", "SMALL_CORPUS"]

SMALL_CORPUS = 16 << 20  # below this, counting in-process beats starting workers


def their_model(args, *, merges=True):
    """Their model (``--against``: a path or an encoding name, ``refbpe.read_model``), or a
    one-line CliError.  ``merges=False``: a tiktoken encoding's merges are left unbuilt."""
    if not args.against:
        raise CliError("--against PATH is required")
    try:
        return read_model(args.against, args.format, args.special_token, strict=False, merges=merges)
    except (OSError, ValueError) as e:  # FormatError is a ValueError
        raise CliError(str(e))


def word_counts(args, report, profile_options=None):
    """(word counts, the texts when small enough to replay reading variants, or None,
    the given special tokens absent from the corpus, or None when not known).
    ``profile_options`` (a trainer profile's): counted as that trainer counts."""
    count_files = list(args.counts or [])
    bare_counts_flag = args.counts is not None and not count_files
    if count_files and args.corpus:
        raise CliError("give either CORPUS files or --counts FILE..., not both")
    sources = count_files or args.corpus
    if not sources:
        raise CliError("no input: give CORPUS files (or word-count files) and --vocab-size")
    check_inputs(sources)
    as_counts = [bool(count_files or bare_counts_flag or is_counts_path(s)) for s in sources]
    if all(as_counts):
        if args.executor:
            raise CliError("--executor counts a corpus; with word-count files there is nothing to count")
        try:
            return sum_counts(sources), None, None
        except ValueError as e:
            raise CliError(str(e))
    if any(as_counts):
        raise CliError("give either text corpora or word-count files, not both")
    total = sum(input_size(s) or 0 for s in sources)
    with executor_context(args) as (executor, threads):
        try:
            options = counting_options(args, executor, threads, workers=1 if total < SMALL_CORPUS else None)
            count = count_corpus
            if profile_options:
                count = count_with_profile
                options.update(profile_options)
            counts = count(
                sources, args.special_token, progress=make_progress(args), report=report, **options
            )
        except (InputError, OSError) as e:
            raise counting_error(args, e)
    texts = None
    keep = getattr(args, "max_hypothesis_bytes", 0) if not getattr(args, "no_hypotheses", True) else 0
    if all(can_reread(s) for s in sources) and total <= keep:
        try:
            texts = [open(s, "rb").read().decode("utf-8") for s in sources]
        except UnicodeDecodeError:
            texts = None
    return counts, texts, _absent_specials(sources, args.special_token, texts)


def _absent_specials(sources, special_tokens, texts):
    """The given special tokens that occur in none of the text sources (None: not known)."""
    if not special_tokens or not all(can_reread(s) for s in sources):
        return None
    if texts is not None:
        return [t for t in special_tokens if not any(t in text for text in texts)]
    absent = []
    for t in special_tokens:
        needle = t.encode("utf-8")
        if not any(_file_contains(s, needle) for s in sources):
            absent.append(t)
    return absent


def _file_contains(path, needle, block=1 << 22):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        tail = b""
        while True:
            data = f.read(block)
            if not data:
                return False
            if needle in tail + data[: len(needle)] or needle in data:
                return True
            tail = data[-len(needle) :]
