"""``refbpe fuzz``: search for an input on which their trainer, encoder or pre-tokenizer differs
from the reference, and shrink it to a minimal one.

Exit status: 0 no difference within the budget (one line per class with the
examples run), 1 a finding (written to ``--out DIR``: see
``refbpe.fuzz.findings``), 2 bad options, a command that cannot start, or
Hypothesis missing.
"""

import json
import os
import sys
import tempfile

from ..encode.tokenizer import Tokenizer
from ..encodings.registry import KNOWN_ENCODINGS, ranks_path
from ..formats import FORMATS, write_model
from ..fuzz import Target, TargetError, Trial, search_for_failure, write_findings
from ..fuzz.persistent import PersistentTarget
from ..learn.extend import load_parent
from ..loader import read_model
from ..specials import allowed_specials
from ..testing.strategies import CLASSES, COUNT_CLASSES, ENCODE_CLASSES, MISSING, available
from .common import (
    CliError,
    add_allowed_special_argument,
    add_option,
    add_pattern_argument,
    check_output_dir,
    positive_float,
    positive_int,
)
from .train_settings import add_settings_arguments, check_text_order, refuse_settings, settings_from_args

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]

EXIT_CLEAN, EXIT_FOUND = 0, 1
_TARGETS = (
    (
        "--train",
        "train",
        "CMD",
        "their trainer, a command template ({input} {vocab_size} {special_tokens} "
        "{special_token} {out}; {counts} with --counts)",
    ),
    (
        "--train-py",
        "train",
        "MODULE:FUNC",
        "their trainer, a Python function with CS336's signature "
        "(input_path, vocab_size, special_tokens) -> (vocab, merges), called in a child process",
    ),
    (
        "--encode",
        "encode",
        "CMD",
        "their encoder, a command template ({model} {encoding} {input} {out}: ids as .npy, "
        "a JSON list or whitespace-separated integers)",
    ),
    ("--encode-py", "encode", "MODULE:FUNC", "their encoder, a Python function (model_path, text) -> ids"),
    (
        "--split",
        "split",
        "CMD",
        "their pre-tokenizer, a command template ({input} {out}: one JSON string per line)",
    ),
    ("--split-py", "split", "MODULE:FUNC", "their pre-tokenizer, a Python function (text) -> [str]"),
)


HELP = "generate inputs, compare their implementation with the reference, shrink a failure"
DESCRIPTION = (
    "Generate inputs class by class (ties, overlapping runs, long pieces, special tokens, "
    "whitespace, Unicode, contractions, digits, multi-document, random; word counts near 2^31/2^32/2^63 "
    "with --counts), run their trainer, encoder or pre-tokenizer on each, and compare with the "
    "reference. On a difference, shrink to a minimal input and write it, both answers, the report and "
    "repro.sh to --out. Exit 0 no difference, 1 a finding, 2 bad options."
)


def add_arguments(f):
    group = f.add_mutually_exclusive_group(required=True)
    for option, _, metavar, help in _TARGETS:
        group.add_argument(option, metavar=metavar, help=help)
    f.add_argument(
        "--counts",
        action="store_true",
        help="train mode: give them word-count files ({counts}) "
        "with counts near 2^31, 2^32 and 2^63 instead of text",
    )
    f.add_argument(
        "--extend",
        metavar="MODEL",
        help="train mode: their trainer extends MODEL ({base} in the command; a --train-py function gets "
        "its path fourth): the reference is 'train --extend MODEL' (docs/extend.md)",
    )
    f.add_argument(
        "--format",
        choices=("auto",) + FORMATS,
        default="auto",
        help="train: the format they write (default: detect); encode: the format of {model}",
    )
    f.add_argument(
        "--encoding",
        metavar="NAME|MODEL",
        help="encode mode: cl100k_base, o200k_base, or a model refbpe reads (GPT-2 files, ...)",
    )
    add_allowed_special_argument(f, "encode mode")
    add_settings_arguments(f)
    add_pattern_argument(f)
    f.add_argument(
        "--classes",
        metavar="A,B",
        help="only these classes (default: all of the mode): "
        + ", ".join(CLASSES + COUNT_CLASSES + ENCODE_CLASSES),
    )
    f.add_argument(
        "--budget",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="time for generating examples (default 60); shrinking a finding comes on top",
    )
    f.add_argument(
        "--max-examples", type=positive_int, default=None, metavar="N", help="at most N examples per class"
    )
    add_option(f, "--seed", "the same seed gives the same examples (default 0)")
    add_option(
        f,
        "--workers",
        "processes searching at once (default 1: this one); the classes are shared among them, each "
        "with the whole --budget, and the first finding in class order is reported",
        default=1,
    )
    add_option(f, "--timeout", "per run of theirs (default 10); a run past it is a finding", default=10.0)
    f.add_argument(
        "--out",
        default="refbpe-fuzz",
        metavar="DIR",
        help="the findings directory, and Hypothesis's example database (default refbpe-fuzz)",
    )
    f.add_argument("--db", metavar="DIR", help="the example database elsewhere ('none': no database)")
    add_option(f, "--json", "print one JSON object")
    add_option(
        f,
        "--persistent",
        "start their program once and send it one case per line on stdin (the protocol of docs/ci.md; "
        "a --*-py function is served for you); each worker owns one such process",
    )


def _target(args):
    kind = PersistentTarget if args.persistent else Target
    for option, mode, _, _ in _TARGETS:
        value = getattr(args, option[2:].replace("-", "_"))
        if value is not None:
            if option.endswith("-py"):
                return kind(mode, function=value, fmt=args.format if mode == "train" else "auto")
            return kind(mode, command=value, fmt=args.format if mode == "train" else "auto")
    raise CliError("give one of --train, --train-py, --encode, --encode-py, --split, --split-py")


def _classes(args, mode):
    if args.counts and mode != "train":
        raise CliError("--counts is for --train and --train-py")
    default = COUNT_CLASSES if args.counts else ENCODE_CLASSES + CLASSES if mode == "encode" else CLASSES
    if not args.classes:
        return list(default)
    chosen = [c.strip() for c in args.classes.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in default]
    if unknown:
        raise CliError(
            "unknown class %s for this mode (expected: %s)" % (", ".join(unknown), ", ".join(default))
        )
    return chosen


def _encoding_files(name):
    return KNOWN_ENCODINGS[name]["files"]


_NEEDS_ENCODING = "--encode needs --encoding cl100k_base|o200k_base|gpt2|MODEL"


def _encode_setup(args, workdir):
    """(model, model path for them, tokenizer) of --encoding."""
    if not args.encoding:
        raise CliError(_NEEDS_ENCODING)
    try:
        model = read_model(args.encoding)
        if model.by_rank:  # tiktoken's rule (the whole piece first, then ranks), its own pattern
            tok = Tokenizer.from_model(model, pattern=args.pattern)
            if model.encoding is None:
                path = args.encoding
            elif "ranks" in _encoding_files(model.encoding):
                path = ranks_path(model.encoding)
            else:  # gpt2: GPT-2's own files, written for them as vocab.json + merges.txt
                path = write_model(
                    os.path.join(workdir, "model"), "gpt2", tok.vocab, tok.merges, tok.special_tokens
                )
        else:
            tok = Tokenizer(model.vocab, model.merges, model.special_tokens, pattern=args.pattern)
            path = args.encoding
    except (OSError, ValueError) as e:
        raise CliError(str(e))
    return model, path, tok


def _allowed(args, tok):
    """The special tokens matched under --special-tokens (None: all of the model's)."""
    try:
        return allowed_specials(args.special_tokens, tok.special_tokens)
    except ValueError as e:
        raise CliError(str(e))


def _settings(args, mode):
    """The recorded settings the reference trains with (train mode), checked as ``train`` checks them."""
    if mode != "train":
        if args.profile:
            raise CliError("--profile is for --train and --train-py")
        refuse_settings(args, "fuzz --%s" % mode, "no training is compared")
        return None
    if args.profile == "superbpe":
        raise CliError("fuzz judges single-stage trainers, as verify does; --profile superbpe trains two")
    settings = settings_from_args(args)
    check_text_order(settings, "fuzz", not args.counts)
    return settings.recorded()


def _base(args, target, recorded):
    """(the ``extend.Parent`` of ``--extend MODEL``, MODEL's absolute path), or None."""
    if args.extend is None:
        return None
    if target.mode != "train":
        raise CliError("--extend is for --train and --train-py")
    if recorded["profile"] != "cs336" or recorded.get("tie_rule") == "first-counted":
        raise CliError("--extend is judged as 'verify --extend' judges it: under cs336's own rules only")
    if target.command is not None and not isinstance(target, PersistentTarget):
        if not any("{base}" in a for a in target.template):
            raise CliError(
                "--extend: put {base} in the command, where their trainer reads the model it extends"
            )
    try:
        return load_parent(read_model(args.extend)), os.path.abspath(args.extend)
    except (OSError, ValueError) as e:
        raise CliError("--extend: %s" % e)


def run(args):
    if not available():
        raise CliError(MISSING)
    try:
        target = _target(args)
        target.check_starts()
    except TargetError as e:
        raise CliError(str(e))
    classes = _classes(args, target.mode)
    recorded = _settings(args, target.mode)
    base = _base(args, target, recorded)
    if target.mode == "encode" and not args.encoding:
        raise CliError(_NEEDS_ENCODING)
    if args.special_tokens is not None and target.mode != "encode":
        raise CliError("--special-tokens is for --encode and --encode-py")
    try:
        target.check_placeholders()
    except TargetError as e:
        raise CliError(str(e))
    check_output_dir(args.out, "--out")
    os.makedirs(args.out, exist_ok=True)
    database = None if args.db == "none" else (args.db or os.path.join(args.out, ".hypothesis"))
    settings = {"seed": args.seed, "profile": args.profile, "model": args.encoding, "workers": args.workers}
    with tempfile.TemporaryDirectory(prefix="refbpe-fuzz-") as workdir:
        model = path = tok = allowed = None
        if target.mode == "encode":
            model, path, tok = _encode_setup(args, workdir)
            allowed = _allowed(args, tok)
            settings["special_tokens"] = args.special_tokens
        trial = Trial(target, args.profile, args.pattern, args.timeout, model, path, tok, settings=recorded)
        trial.allowed_special, trial.encoding = allowed, args.encoding
        if base is not None:
            trial.extend, trial.base_path = base
        try:
            finding, runs = search_for_failure(
                trial,
                classes,
                args.budget,
                args.max_examples,
                args.seed,
                database,
                workdir,
                args.pattern,
                special_tokens=(tok.special_tokens if allowed is None else allowed) if tok else None,
                workers=args.workers,
            )
        except TargetError as e:
            raise CliError(str(e))
        finally:
            target.close()
        if finding is None:
            return _clean(args, trial, runs)
        result = write_findings(args.out, finding, trial, runs, settings)
    if args.json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False, sort_keys=True) + "\n")
    else:
        with open(os.path.join(args.out, "report.txt"), encoding="utf-8") as f:
            sys.stdout.write(f.read())
        sys.stdout.write("\nwritten to %s (input, theirs/, expected/, report.txt, repro.sh)\n" % args.out)
    return EXIT_FOUND


def _clean(args, trial, runs):
    if args.json:
        result = {
            "found": False,
            "mode": trial.mode,
            "target": trial.target.describe(),
            "seed": args.seed,
            "workers": args.workers,
            "classes": runs,
            "finding": None,
        }
        sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
    else:
        for c, n in runs.items():
            sys.stdout.write("%-17s %6d examples, no difference\n" % (c, n))
    return EXIT_CLEAN
