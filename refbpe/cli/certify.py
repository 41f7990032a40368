"""``refbpe certify``: check another trainer's merges step by step against the word counts.

No reference training: their merges are replayed over the reference counts
(``refbpe.verify.certify``).  Exit status: 0 certified, 1 not, 2 bad input.
"""

import json
import sys

from ..corpus.countfile import is_counts_path
from ..corpus.io import can_reread
from ..learn.profiles import settings_pattern
from ..verify.certify import certify_settings, render_certificate
from ..verify.profile_rules import candidate_settings
from .common import (
    CliError,
    add_counting_arguments,
    add_option,
    add_special_token_argument,
    check_special_tokens,
    positive_int,
)
from .reference import their_model, word_counts
from .train_settings import add_settings_arguments, check_text_order, given_options, settings_from_args

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]

EXIT_CERTIFIED, EXIT_NOT_CERTIFIED = 0, 1


HELP = "check another trainer's merges step by step against the word counts"
DESCRIPTION = (
    "Replay the merges of MODEL over the word counts of CORPUS (or --counts FILE...) "
    "and check each step: their pair occurs, has the maximum count, and is the tie rule's choice "
    "among equal counts. Every failing step is listed. Exit 0 certified, 1 not, 2 bad input."
)


def add_arguments(c):
    c.add_argument("model", metavar="MODEL", help="their model, in any format refbpe reads")
    add_option(c, "corpus", "UTF-8 text files, or word-count files", nargs="*")
    c.add_argument("--counts", nargs="*", metavar="FILE", help="word-count files instead of CORPUS")
    add_option(
        c,
        "--vocab-size",
        "the vocab size they were asked for: fewer merges while a pair is left is an early stop",
    )
    add_special_token_argument(c)
    c.add_argument(
        "--format", default="auto", help="the format of MODEL (default: detect; as verify's --format)"
    )
    c.add_argument("--limit", type=positive_int, default=20, help="failing steps listed at most (default 20)")
    add_option(c, "--json", "print one JSON object")
    add_settings_arguments(c)
    add_counting_arguments(c, workers_help="processes for counting (default: 1 below 16 MB, else CPU count)")


def run(args):
    check_special_tokens(args.special_token)
    args.against = args.model
    theirs = their_model(args)
    if args.profile == "superbpe":
        raise CliError("certify replays one stage's counts; --profile superbpe trains two (docs/superbpe.md)")
    settings = settings_from_args(args)
    texts = None
    if settings.tie_rule == "first-counted":
        counted = args.counts or any(is_counts_path(s) or not can_reread(s) for s in args.corpus)
        check_text_order(settings, "certify", not counted)
        texts = _read_texts(args.corpus)
    report = None
    tables = {}
    for recorded in _held_to(args, settings, theirs):
        key = (settings_pattern(recorded), recorded["sequences"], recorded["add_prefix_space"])
        if key not in tables:
            tables[key] = word_counts(args, {}, _counting(recorded))[0]
        specials = settings.special_tokens
        try:
            result = certify_settings(
                tables[key], theirs, recorded, args.vocab_size, specials, args.tie_rule, args.limit, texts
            )
        except ValueError as e:
            raise CliError(str(e))
        if report is None or (result["certified"] and not report["certified"]):
            report = result
        if report["certified"]:
            break
    if args.json:
        sys.stdout.write(json.dumps(report, sort_keys=True) + "\n")
    else:
        sys.stdout.write(render_certificate(report) + "\n")
    return EXIT_CERTIFIED if report["certified"] else EXIT_NOT_CERTIFIED


def _held_to(args, settings, theirs):
    """The settings their merges are held to, as ``verify`` holds them: without ``--profile``,
    the CS336 reference's with the options given; with it, the options given, then what
    their files name or the likely ones (``profile_rules.candidate_settings``); certified
    under one of them is certified."""
    if args.profile is None:
        return [settings.recorded()]
    candidates = candidate_settings(settings.profile.name, theirs, args.pattern, given_options(args))
    return candidates or [settings.recorded()]


def _read_texts(sources):
    """The corpus text, which ``--tie-rule first-counted`` reads in order, or a CliError."""
    texts = []
    for source in sources:
        with open(source, "rb") as f:
            try:
                texts.append(f.read().decode("utf-8"))
            except UnicodeDecodeError as e:
                raise CliError(
                    "%s: --tie-rule first-counted reads the corpus as UTF-8 text (%s)" % (source, e)
                )
    return texts


def _counting(recorded):
    """``train.count_with_profile``'s options for recorded settings (``profile_counting``'s)."""
    return {
        "profile": recorded["profile"],
        "pattern": settings_pattern(recorded),
        "cut": recorded["sequences"],
        "add_prefix_space": recorded["add_prefix_space"],
    }
