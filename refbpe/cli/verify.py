"""``refbpe verify``: compare another implementation's merges (or token ids) with the reference.

Exit status: 0 identical (the merge list and the vocab as a set; ids too
under ``--exact-ids``), 1 different, 2 bad input.  The text is the report's
rendering (``refbpe.verify.render``); ``--json`` prints the report itself.
"""

import json
import os
import stat
import sys

from .._util.reading import bounded_lines, open_binary
from ..corpus.countfile import is_counts_path
from ..corpus.idfile import read_ids
from ..corpus.io import InputError, can_reread
from ..corpus.pretokens import iter_segments
from ..encode.tokenizer import Tokenizer
from ..formats import FORMATS, FormatError
from ..formats.trace import read_trace
from ..learn.extend import load_parent
from ..learn.train import train_counts
from ..loader import read_model
from ..specials import allowed_specials
from ..verify import verify_encoding, verify_merges
from ..verify.pieces import compare_split, name_other_version, render_split_comparison
from ..verify.profile_rules import profile_verdict
from ..verify.readings import Readings
from ..verify.traces import compare_traces, render_trace_comparison
from .common import (
    CliError,
    add_allowed_special_argument,
    add_counting_arguments,
    add_option,
    add_special_token_argument,
    check_inputs,
    check_output_file,
    check_special_tokens,
    positive_int,
    read_text_arg,
    write_report,
)
from .reference import SMALL_CORPUS, their_model
from .reference import word_counts as reference_counts
from .train_settings import (
    add_settings_arguments,
    check_text_order,
    given_options,
    profile_counting,
    refuse_settings,
    settings_from_args,
)

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]

EXIT_IDENTICAL, EXIT_DIFFERENT = 0, 1


HELP = (
    "compare another implementation's merges (or token ids) with the reference and explain the "
    "first divergence"
)
DESCRIPTION = (
    "Train the reference on CORPUS (or read word-count files) and compare with the tokenizer "
    "at --against; or, with --encode, compare their token ids for a text. Exit 0 identical, 1 different, "
    "2 bad input."
)


def add_arguments(v):
    add_option(v, "corpus", "UTF-8 text files, or word-count files (*.counts.tsv[.gz])", nargs="*")
    add_option(v, "--vocab-size", "256 bytes + merges + special tokens")
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
    add_option(v, "--json", "print one JSON object")
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
    add_allowed_special_argument(v, "with --encode")
    add_option(
        v,
        "--extend",
        "their model extends MODEL: the reference replays MODEL's merges first, then trains "
        "(as 'train --extend'; docs/extend.md)",
    )
    add_option(v, "--inherit-merges", "with --extend: only the first K merges of MODEL are inherited")
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
    add_option(
        v,
        "--trace",
        "compare their training trace (the format of 'train --trace') with the reference's, step by "
        "step: the first step whose count or pair differs, and the words that hold the pair",
    )
    v.add_argument(
        "--split",
        metavar="PIECES",
        help="compare their pre-tokenizer's pieces of CORPUS (the format of 'refbpe split': one JSON string "
        "per line) with the pattern's: the first differing piece, the alternative and the code point",
    )
    add_option(v, "--hex", "with --split: their pieces are hex (as 'split --hex')")
    add_settings_arguments(v)
    add_counting_arguments(v, workers_help="processes for counting (default: 1 below 16 MB, else CPU count)")


def _parent(args):
    """The ``extend.Parent`` of ``--extend MODEL`` (``--inherit-merges K``), or None."""
    if args.extend is None:
        if args.inherit_merges is not None:
            raise CliError("--inherit-merges needs --extend MODEL")
        return None
    if args.profile not in (None, "cs336"):
        raise CliError("--extend is verified under the cs336 profile; --profile %s is not" % args.profile)
    try:
        return load_parent(read_model(args.extend), args.inherit_merges)
    except (FormatError, ValueError) as e:
        raise CliError("--extend: %s" % e)


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


def _read_texts(sources):
    """The corpus text (``--tie-rule first-counted`` trains over it in order), or a CliError."""
    texts = []
    try:
        for source in sources:
            with open(source, "rb") as f:
                texts.append(f.read().decode("utf-8"))
        return texts
    except UnicodeDecodeError as e:
        raise CliError("--tie-rule first-counted reads the corpus as UTF-8 text: %s" % e)


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


def _their_encoding(args):
    """Their model as its files have it (no special tokens added; merges of an encoding unbuilt)."""
    if not args.against:
        raise CliError("--against PATH is required")
    try:
        return read_model(args.against, args.format, (), strict=False, merges=False)
    except (OSError, ValueError) as e:
        raise CliError(str(e))


def _run_encode(args, theirs, encoding=None):
    if not args.ids:
        raise CliError("--encode needs --ids FILE (their token ids: .npy or a JSON list)")
    text = read_text_arg(args.encode)
    check_inputs([args.ids])
    try:
        tokenizer = rebuild = None
        if theirs is None:
            # tiktoken's rule (the whole piece first, then ranks), with the encoding's own pattern.
            tokenizer = Tokenizer.from_model(encoding, pattern=args.pattern)

            def rebuild(version):
                return Tokenizer.from_model(encoding, pattern=tokenizer.pattern, unicode=version)

        model_tokens = (tokenizer or theirs).special_tokens
        allowed = allowed_specials(args.special_tokens, model_tokens)
        return verify_encoding(theirs, text, read_ids(args.ids), args.pattern, tokenizer, rebuild, allowed)
    except (ValueError, OSError) as e:
        raise CliError(str(e))


def _their_pieces(path, as_hex, longest):
    """Their pieces, read lazily: JSON strings (or ``[offset, piece]``), one per line.  A line that
    does not start as one (``/dev/zero``) is refused at its first bytes, and one over ``longest``
    bytes, longer than any piece of the corpus can be, is not read on (``reading.bounded_lines``)."""
    with open_binary(path) as f:
        try:
            for n, line in enumerate(bounded_lines(f, path, _starts_a_piece, longest), 1):
                try:
                    item = json.loads(line)
                    piece = item[1] if isinstance(item, list) else item
                    yield bytes.fromhex(piece) if as_hex else piece.encode("utf-8", "surrogatepass")
                except (ValueError, TypeError, IndexError, AttributeError) as e:
                    raise CliError("%s:%d: not a piece (%s)" % (path, n, e))
        except CliError:
            raise
        except ValueError as e:  # a line past ``longest``
            raise CliError(str(e))


def _starts_a_piece(start):
    return start.lstrip()[:1] in (b'"', b"[")


def _longest_line(corpus):
    """The longest line a pieces file of ``corpus`` can have: every byte of it escaped (``\\u00XX``,
    6 bytes; hex, 2), with an offset; 1 GiB when a corpus is a stream of unknown size."""
    sizes = []
    for path in corpus:
        try:
            st = os.stat(path)
        except OSError:
            st = None
        sizes.append(st.st_size if st is not None and stat.S_ISREG(st.st_mode) else None)
    if None in sizes:
        return 1 << 30
    return 6 * sum(sizes) + 64


def _run_split(args):
    """``verify --split``: their pieces of CORPUS against the pattern's."""
    check_inputs(args.corpus + [args.split])

    def segments():
        return (
            (at, data)
            for _, at, data in iter_segments(
                args.corpus, args.special_token, args.pattern, errors=args.errors
            )
        )

    longest = _longest_line(args.corpus)

    def theirs():
        return _their_pieces(args.split, args.hex, longest)

    try:
        report = compare_split(segments(), theirs(), args.pattern)
        if all(can_reread(s) for s in args.corpus + [args.split]):  # read again under other Unicode versions
            report = name_other_version(report, segments, theirs, args.pattern)
    except InputError as e:
        raise CliError(str(e))
    if args.json:
        sys.stdout.write(json.dumps(report, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_split_comparison(report) + "\n")
    return EXIT_IDENTICAL if report["identical"] else EXIT_DIFFERENT


def _run_trace(args):
    """``verify --trace``: their trace against the reference's, trained on the same counts."""
    if args.extend is not None:
        raise CliError("--trace records the rule's choices; with --extend the inherited merges are not")
    if args.vocab_size is None:
        raise CliError("--vocab-size is required")
    try:
        theirs = read_trace(args.trace)
    except OSError as e:
        raise CliError("%s: cannot read (%s)" % (args.trace, e.strerror or e))
    except ValueError as e:
        raise CliError(str(e))
    settings = settings_from_args(args)
    if settings.tie_rule == "first-counted":
        raise CliError("verify --trace trains the reference with the merge engine: not under first-counted")
    counts, _, _ = reference_counts(args, {}, profile_counting(settings))
    engine = []
    try:
        _, merges = train_counts(settings, counts, trace=engine)
    except ValueError as e:
        raise CliError(str(e))
    ours = [{"step": k, "pair": m, "count": t[0]} for k, (m, t) in enumerate(zip(merges, engine))]
    report = compare_traces(ours, theirs, counts)
    if args.json:
        sys.stdout.write(json.dumps(report, sort_keys=True) + "\n")
    else:
        sys.stdout.write(render_trace_comparison(report) + "\n")
    return EXIT_IDENTICAL if report["identical"] else EXIT_DIFFERENT


def run(args):
    if args.profile == "superbpe":
        raise CliError(
            "verify holds single-stage trainers; train with --profile superbpe and compare the files"
        )
    check_special_tokens(args.special_token)
    if args.encode or args.split:
        refuse_settings(
            args, "verify --encode" if args.encode else "verify --split", "no training is compared, only "
            "their %s" % ("token ids" if args.encode else "pieces"),
        )  # fmt: skip
    if args.report:
        check_output_file(args.report, "--report")
    if args.ids and not args.encode:
        raise CliError("--ids compares token ids: give --encode FILE, the text they encoded")
    if args.special_tokens is not None and not args.encode:
        raise CliError("--special-tokens is for --encode: the special tokens matched in the text")
    if args.encode:
        theirs = _their_encoding(args)
        if theirs.by_rank:  # a tiktoken encoding: encoded by its own rule
            return _emit(args, _run_encode(args, None, theirs))
        return _emit(args, _run_encode(args, their_model(args) if args.special_token else theirs))
    if args.trace:
        return _run_trace(args)
    if args.split:
        return _run_split(args)
    theirs = their_model(args)
    if args.vocab_size is None:
        raise CliError("--vocab-size is required")
    settings = settings_from_args(args)
    text = args.counts is None and all(can_reread(s) and not is_counts_path(s) for s in args.corpus)
    check_text_order(settings, "verify", text)
    parent = _parent(args)
    if parent is not None and settings.tie_rule == "first-counted":
        raise CliError("--tie-rule first-counted: with --extend, inherited merges are not the rule's")
    if parent is not None:  # its special tokens cut the corpus too, as in 'train --extend'
        args.special_token = parent.with_specials(args.special_token or ())
    figures = {}
    word_counts, texts, absent = reference_counts(args, figures)
    if texts is None and settings.tie_rule == "first-counted":
        texts = _read_texts(args.corpus)
    setup = _their_setup(args, theirs)
    setup["absent"] = absent
    readings = Readings(texts, args.special_token) if texts is not None else None
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
            extend=parent,
            readings=readings,
            min_frequency=settings.min_frequency,
            tie_rule=settings.tie_rule,
        )
        if parent is None:  # the profiles' hypotheses assume training from scratch
            report = profile_verdict(
                report,
                theirs,
                args.vocab_size,
                args.special_token,
                word_counts,
                args.corpus,
                args.profile,
                args.pattern,
                texts,
                readings,
                given_options(args),
            )
    except ValueError as e:
        raise CliError(str(e))
    if args.report:
        write_report(args.report, figures)
    return _emit(args, report, rendered=True)
