"""``refbpe train``: train byte-level BPE on text files (or word-count files) and write the model."""

import glob
import os
import re
import sysconfig
import time

from .._util.atomic import outputs_together
from ..corpus.count import InputError
from ..corpus.countfile import read_counts_pattern
from ..corpus.progress import peak_memory_figures
from ..corpus.units import input_spans, total_bytes
from ..formats import (
    FORMATS,
    FormatError,
    pattern_fields,
    write_model_dir,
    write_model_file_in_dir,
)
from ..formats.gpt2_files import write_gpt2_dir_any_ids
from ..formats.model import special_ids
from ..formats.peers import PEER_FORMATS, write_peer_model
from ..formats.trace import write_training_trace
from ..learn.extend import load_parent
from ..learn.profiles import settings_pattern
from ..learn.train import train_corpus, train_count_files
from ..loader import read_model
from .common import (
    CliError,
    add_counting_arguments,
    add_option,
    add_special_token_argument,
    check_inputs,
    check_output_dir,
    check_output_file,
    check_report_output,
    check_special_tokens,
    counting_error,
    counting_options,
    executor_context,
    make_progress,
    write_report,
)
from .pypy_gc import TRAIN_GC_SETTINGS, TRAIN_RESTART_FROM, restart_with_small_nursery
from .train_settings import add_settings_arguments, check_text_order, settings_from_args

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run", "stdlib_sources"]

# What each --format writes into the output directory.
WRITTEN = {
    "gpt2": "vocab.json, merges.txt, refbpe.json",
    "hf": "tokenizer.json",
    "tiktoken": "tokenizer.tiktoken, refbpe.json",
    "json": "tokenizer.hex.json",
}


HELP = "train a BPE tokenizer on text files (or on word-count files)"
DESCRIPTION = (
    "Train byte-level BPE and write DIR/vocab.json, DIR/merges.txt (GPT-2 format) "
    "and DIR/refbpe.json (special tokens). The input is CORPUS files, or with --counts the "
    "word-count files written by 'refbpe count' (added up; the same output as training on the corpus)."
)


def add_arguments(t):
    add_option(t, "corpus", "UTF-8 text files; '-' is stdin, *.gz is decompressed", nargs="*")
    t.add_argument(
        "--counts",
        nargs="+",
        metavar="FILE",
        help="train on these word-count files (from 'refbpe count', "
        "e.g. one per shard; *.gz allowed) instead of CORPUS",
    )
    t.add_argument(
        "--stdlib",
        action="store_true",
        help="train on this interpreter's standard-library sources (a sample that needs no download)",
    )
    add_option(t, "--vocab-size", "256 bytes + merges + special tokens", required=True)
    add_special_token_argument(t)
    add_option(t, "--out", "output directory (created if missing)", required=True, metavar="DIR")
    t.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="the model's format (default gpt2; with --profile rustbpe tiktoken, with --profile hf hf, "
        "each in its peer's own shape): gpt2 writes DIR/vocab.json, merges.txt, refbpe.json; "
        "hf DIR/tokenizer.json; tiktoken DIR/tokenizer.tiktoken (ranks; special tokens in DIR/refbpe.json); "
        "json DIR/tokenizer.hex.json",
    )
    add_settings_arguments(t)
    add_option(
        t,
        "--extend",
        "continue training MODEL (any format refbpe reads): its merges are applied to this corpus "
        "in their order, then training goes on to --vocab-size; its tokens and special tokens keep "
        "their ids (docs/extend.md)",
    )
    add_option(t, "--inherit-merges", "with --extend: keep only the first K merges of MODEL (default: all)")
    add_option(
        t,
        "--trace",
        "write one JSON object per merge (step, pair as hex, id, count, ties, runner-up count): "
        "the format 'verify --trace' compares",
    )
    add_counting_arguments(t)


def _parent(args):
    """The ``extend.Parent`` of ``--extend MODEL`` (``--inherit-merges K``), or None
    (``train_settings.settings_from_args``' ``load_parent``)."""
    if args.extend is None:
        if args.inherit_merges is not None:
            raise CliError("--inherit-merges needs --extend MODEL")
        return None
    if args.trace:
        raise CliError("--trace records the rule's choices; with --extend the inherited merges are not")
    try:
        return load_parent(read_model(args.extend), args.inherit_merges)
    except (FormatError, ValueError) as e:
        raise CliError("--extend: %s" % e)


def _parent_extra(report):
    """What the manifest records of the parent (``refbpe.learn.extend``), if any."""
    return {"parent": report["parent"]} if "parent" in report else {}


def _written(report):
    settings = report.get("profile")
    if settings and PEER_FORMATS.get(settings["profile"], (None,))[0] == report["format"]:
        return PEER_FORMATS[settings["profile"]][1] + ", refbpe.json"
    return WRITTEN[report["format"]]


def stdlib_sources():
    """The running interpreter's standard-library ``.py`` files, sorted, leaving out those
    that declare another coding than UTF-8 (PyPy 3.9's ``_md5.py`` is Latin-1)."""
    root = sysconfig.get_paths()["stdlib"]
    files = sorted(glob.glob(os.path.join(root, "*.py")) + glob.glob(os.path.join(root, "*", "*.py")))
    return [
        f
        for f in files
        if "site-packages" not in f
        and "test" not in os.path.relpath(f, root).split(os.sep)[0]
        and _declared_coding(f) in ("utf-8", "utf8")
    ]


_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def _declared_coding(path):
    """The source coding a Python file declares in its first two lines (PEP 263), lowercased;
    'utf-8' when it declares none.  Two lines are read, not the file."""
    with open(path, "rb") as f:
        for line in (f.readline(), f.readline()):
            m = _CODING.match(line)
            if m:
                return m.group(1).decode("ascii").lower().replace("_", "-")
    return "utf-8"


def _recorded_pattern(paths):
    """The split pattern the word-count files record (None: GPT-2's); they must agree."""
    found = {p: read_counts_pattern(p) for p in paths}
    names = sorted(set(found.values()), key=str)
    if len(names) > 1:
        raise CliError(
            "the count files were counted with different split patterns (%s); give --pattern to choose"
            % "; ".join("%s: %s" % (p, n or "gpt2") for p, n in found.items())
        )
    return names[0]


def run(args):
    sources = list(args.corpus)
    if args.stdlib:
        sources += stdlib_sources()
    if args.counts and sources:
        raise CliError("give either CORPUS files (or --stdlib) or --counts FILE..., not both")
    if not sources and not args.counts:
        raise CliError("no input: give CORPUS files, --counts FILE... or --stdlib")
    if args.counts and args.executor:
        raise CliError("--executor counts a corpus; with --counts there is nothing to count")
    check_inputs(args.counts or sources)
    if sources:
        restart_with_small_nursery(
            getattr(args, "command_line", None),
            total_bytes(input_spans(sources)),
            TRAIN_GC_SETTINGS,
            TRAIN_RESTART_FROM,
        )
    check_special_tokens(args.special_token)
    if args.counts and args.pattern is None:
        args.pattern = _recorded_pattern(args.counts)
    settings = settings_from_args(args, _parent)
    check_text_order(settings, "train")
    profile, parent, specials = settings.profile, settings.parent, list(settings.special_tokens)
    fmt = args.format or PEER_FORMATS.get(profile.name, ("gpt2",))[0]
    check_output_dir(args.out)
    check_report_output(args)
    trace = None
    if args.trace:
        if parent is not None:
            raise CliError("--trace records the rule's choices; with --extend the inherited merges are not")
        check_output_file(args.trace, "--trace")
        trace = []

    # 1. Count and merge.
    progress = make_progress(args)
    report = {}
    t0 = time.time()
    if args.counts:
        try:
            vocab, merges = train_count_files(
                settings, args.counts, progress=progress, report=report, trace=trace
            )
        except ValueError as e:
            raise CliError(str(e))
    else:
        with executor_context(args) as (executor, threads):
            try:
                options = counting_options(args, executor, threads)
                del options["pattern"]  # the settings' (the profile's default when not given)
                vocab, merges = train_corpus(
                    settings, sources, progress=progress, report=report, trace=trace, **options
                )
            except (InputError, OSError) as e:
                raise counting_error(args, e)
            except ValueError as e:  # a profile's limit (ProfileLimit) or a bad profile option
                raise CliError(str(e))

    # 2. Write the model, the trace and the report: all of them or none (``outputs_together``).
    with outputs_together(directories=(args.out,)):
        t1 = time.time()
        settings = report.get("profile")
        pattern = settings_pattern(settings) if settings else report.get("pattern", "gpt2")
        if settings and PEER_FORMATS.get(profile.name, (None,))[0] == fmt:
            write_peer_model(args.out, settings, vocab, merges, specials, _parent_extra(report))
        elif fmt == "gpt2" and parent is not None:  # the parent's ids: special tokens anywhere
            extra = pattern_fields(pattern)
            extra.update({"profile": settings} if settings else {}, **_parent_extra(report))
            write_gpt2_dir_any_ids(args.out, vocab, merges, specials, special_ids(vocab, specials), extra)
        elif fmt == "gpt2" and profile.name not in ("hf", "superbpe"):
            extra = pattern_fields(pattern)
            if settings:
                extra["profile"] = settings
            write_model_dir(args.out, vocab, merges, specials, extra or None)
        else:  # HF's ids in another format: the generic writers keep any id layout
            write_model_file_in_dir(args.out, fmt, vocab, merges, specials, pattern)
        if args.trace:
            write_training_trace(args.trace, merges, trace, vocab)
        if pattern != "gpt2":
            report["pattern"] = pattern
        report["write"] = {"seconds": round(time.time() - t1, 3), "directory": args.out}
        report["total_seconds"] = round(time.time() - t0, 3)
        report["peak_memory_mb"] = peak_memory_figures()
        report["inputs"] = len(args.counts or sources)
        report["executor"] = args.executor or "local"
        report["vocab_size"] = len(vocab)
        report["format"] = fmt
        if args.report:
            write_report(args.report, report)
    if not args.quiet:
        _summary(args, report, progress)
    return 0


def _summary(args, report, progress):
    c, m = report["count"], report["merge"]
    if "count_files" in c:
        progress.line(
            "count: read %d count files in %.2fs, %d unique words, peak %.0f MB"
            % (c["count_files"], c["seconds"], c["unique_words"], c["peak_memory_mb"])
        )
    else:
        rate = " %.1f MB/s," % c["mb_per_s"] if c.get("mb_per_s") else ""
        if args.executor:  # the cluster's workers are not this process's children: no figure for them
            progress.line(
                "count on %s: %.2fs,%s %d unique words, peak %.0f MB"
                % (args.executor, c["seconds"], rate, c["unique_words"], c["peak_memory_mb"])
            )
        else:
            progress.line(
                "count: %.2fs,%s %d unique words, peak %.0f MB (largest worker %.0f MB)"
                % (c["seconds"], rate, c["unique_words"], c["peak_memory_mb"], c["peak_worker_memory_mb"])
            )
    progress.line(
        "merge: %.2fs, %d merges, %d unique words, peak %.0f MB"
        % (m["seconds"], m["merges"], m["unique_words"], m["peak_memory_mb"])
    )
    if report.get("stopped_early"):
        progress.line(
            "note: stopped early after %d of %d merges: no pair left to merge"
            % (m["merges"], m["merges_requested"])
        )
    progress.line(
        "write: %.2fs, %s (%d tokens)"
        % (report["write"]["seconds"], os.path.join(args.out, _written(report)), report["vocab_size"])
    )
