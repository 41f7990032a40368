"""``refbpe verify``: compare another implementation's merges (or token ids) with the reference.

Exit status: 0 identical (the merge list and the vocab as a set; ids too
under ``--exact-ids``), 1 different, 2 bad input.  The text is the report's
rendering (``refbpe.verify.render``); ``--json`` prints the report itself.
"""

import gzip
import json
import os
import sys

from ..corpus.count import InputError
from ..corpus.countfile import is_counts_path, sum_counts
from ..corpus.idfile import read_ids
from ..formats import FORMATS, FormatError, Model, read_model
from ..formats.registry import is_encoding_name, load_tiktoken
from ..tokenizer import Tokenizer
from ..train import count_corpus
from ..verify import verify_encoding, verify_merges
from ..verify.profile_rules import profile_verdict
from .common import (
    CliError,
    add_counting_arguments,
    add_profile_argument,
    add_special_token_argument,
    check_inputs,
    check_output_file,
    check_special_tokens,
    counting_error,
    counting_options,
    executor_context,
    make_progress,
    positive_int,
    read_text_arg,
    write_report,
)

__all__ = ["register", "run"]

EXIT_IDENTICAL, EXIT_DIFFERENT = 0, 1
SMALL_CORPUS = 16 << 20  # below this, counting in-process beats starting workers


def register(sub):
    v = sub.add_parser(
        "verify",
        help="compare another implementation's merges (or token ids) with the reference and explain the "
        "first divergence",
        description="Train the reference on CORPUS (or read word-count files) and compare with the tokenizer "
        "at --against; or, with --encode, compare their token ids for a text. Exit 0 identical, 1 different, "
        "2 bad input.",
    )
    v.add_argument(
        "corpus",
        nargs="*",
        metavar="CORPUS",
        help="UTF-8 text files, or word-count files (*.counts.tsv[.gz])",
    )
    v.add_argument(
        "--vocab-size", type=positive_int, default=None, help="256 bytes + merges + special tokens"
    )
    add_special_token_argument(v)
    v.add_argument(
        "--against",
        metavar="PATH",
        help="their output: GPT-2 directory, tokenizer.json, tiktoken ranks file or hex JSON",
    )
    v.add_argument(
        "--format",
        choices=("auto",) + FORMATS,
        default="auto",
        help="the format of the model at --against (default: detect)",
    )
    v.add_argument("--json", action="store_true", help="print one JSON object")
    v.add_argument(
        "--counts",
        nargs="*",
        metavar="FILE",
        help="verify against the reference trained on these word-count files (as 'train --counts'); "
        "given without files, the CORPUS files are word-count files",
    )
    v.add_argument(
        "--ignore-ids",
        action="store_true",
        help="compare the vocab as a set of byte strings only, without even a note on ids",
    )
    v.add_argument(
        "--exact-ids",
        action="store_true",
        help="also require identical ids (by default the merges and the vocab as a set are compared, "
        "as CS336's tests do, and differing ids are a note)",
    )
    v.add_argument(
        "--encode",
        metavar="FILE",
        help="verify token ids instead: refbpe's encoding of the text in FILE with the model at "
        "--against ...",
    )
    v.add_argument(
        "--ids",
        metavar="FILE",
        help="... against their ids (.npy, a JSON list or whitespace-separated integers)",
    )
    v.add_argument(
        "--no-hypotheses",
        action="store_true",
        help="do not replay their merges under the counting, reading and merging variants",
    )
    v.add_argument(
        "--max-hypothesis-bytes",
        type=positive_int,
        default=SMALL_CORPUS,
        metavar="BYTES",
        help="hold the corpus text for the reading variants and the first-counted tie rule only up to "
        "this size (default 16 MiB)",
    )
    add_profile_argument(v)
    add_counting_arguments(v, workers_help="processes for counting (default: 1 below 16 MB, else CPU count)")
    return v


def _emit(args, report, rendered=False):
    """Print the report: JSON, or its text (a merges report is rendered whole,
    warnings and verdict first; an encoding report gets a status line)."""
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, sort_keys=True) + "\n")
    elif rendered:
        sys.stdout.write(report["explanation"] + "\n")
    else:
        status = "identical" if report["identical"] else "DIFFERENT"
        sys.stdout.write("%s\n%s\n" % (status, report["explanation"]))
    return EXIT_IDENTICAL if report["identical"] else EXIT_DIFFERENT


def _is_tiktoken_encoding(path):
    """A tiktoken encoding by name, or a ranks file (read with its tiktoken rule)."""
    return is_encoding_name(path) or (path.endswith(".tiktoken") and os.path.isfile(path))


def _their_model(args):
    if not args.against:
        raise CliError("--against PATH is required")
    if is_encoding_name(args.against):  # gpt2, cl100k_base, ...: tiktoken's own encodings
        try:
            vocab, merges, specials, _ = load_tiktoken(args.against)
        except (OSError, ValueError) as e:
            raise CliError(str(e))
        return Model(vocab, merges, sorted(specials, key=specials.get), "tiktoken", True, args.against)
    if not os.path.exists(args.against):
        raise CliError("%s: no such file or directory" % args.against)
    try:
        return read_model(args.against, args.format, args.special_token, strict=False)
    except FormatError as e:
        raise CliError(str(e))


def _their_setup(args, theirs):
    """What their file holds before the given special tokens are added to it."""
    try:
        raw = read_model(args.against, theirs.format, (), strict=False)
    except FormatError:
        return {}
    tokens = set(raw.vocab.values())
    declared = list(raw.special_tokens)
    size = len(raw.vocab)
    if theirs.format == "tiktoken":  # a ranks file holds no special tokens: take the given ones as theirs
        extra = [t for t in args.special_token if t.encode("utf-8") not in tokens]
        tokens.update(t.encode("utf-8") for t in extra)
        declared += [t for t in args.special_token if t not in declared]
        size += len(extra)
    return {"their_vocab": tokens, "declared": declared, "their_size": size}


def _absent_specials(sources, special_tokens, texts):
    """The given special tokens that occur in none of the text sources (None: not known)."""
    if not special_tokens or "-" in sources:
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


def _run_encode(args, theirs):
    if not args.ids:
        raise CliError("--encode needs --ids FILE (their token ids: .npy or a JSON list)")
    text = read_text_arg(args.encode)
    check_inputs([args.ids])
    try:
        tokenizer = None
        if theirs is None:
            # tiktoken's rule (the whole piece first, then ranks), with the encoding's own pattern.
            tokenizer = Tokenizer.from_tiktoken(args.against, pattern=args.pattern)
        return verify_encoding(theirs, text, read_ids(args.ids), args.pattern, tokenizer)
    except (ValueError, OSError) as e:
        raise CliError(str(e))


def _word_counts(args, report):
    """(word counts, the texts when small enough to replay reading variants, or None,
    the given special tokens absent from the corpus, or None when not known)."""
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
    total = sum(os.path.getsize(s) for s in sources if s != "-")
    with executor_context(args) as (executor, threads):
        try:
            word_counts = count_corpus(
                sources,
                args.special_token,
                progress=make_progress(args),
                report=report,
                **counting_options(args, executor, threads, workers=1 if total < SMALL_CORPUS else None),
            )
        except (InputError, OSError) as e:
            raise counting_error(args, e)
    texts = None
    if not args.no_hypotheses and "-" not in sources and total <= args.max_hypothesis_bytes:
        try:
            texts = [open(s, "rb").read().decode("utf-8") for s in sources]
        except UnicodeDecodeError:
            texts = None
    return word_counts, texts, _absent_specials(sources, args.special_token, texts)


def run(args):
    check_special_tokens(args.special_token)
    if args.report:
        check_output_file(args.report, "--report")
    if args.encode:
        if _is_tiktoken_encoding(args.against or ""):
            return _emit(args, _run_encode(args, None))  # read once, as a tiktoken encoding
        return _emit(args, _run_encode(args, _their_model(args)))
    theirs = _their_model(args)
    if args.vocab_size is None:
        raise CliError("--vocab-size is required")
    figures = {}
    word_counts, texts, absent = _word_counts(args, figures)
    setup = _their_setup(args, theirs)
    setup["absent"] = absent
    try:
        report = verify_merges(
            word_counts,
            args.vocab_size,
            args.special_token,
            theirs,
            texts=texts,
            hypotheses=not args.no_hypotheses,
            ignore_ids=args.ignore_ids,
            exact_ids=args.exact_ids,
            setup=setup,
            pattern=args.pattern,
        )
        report = profile_verdict(
            report,
            theirs,
            args.vocab_size,
            args.special_token,
            word_counts,
            args.corpus,
            args.profile,
            args.pattern,
        )
    except ValueError as e:
        raise CliError(str(e))
    if args.report:
        write_report(args.report, figures)
    return _emit(args, report, rendered=True)
