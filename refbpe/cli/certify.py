"""``refbpe certify``: check another trainer's merges step by step against the word counts.

No reference training: their merges are replayed over the reference counts
(``refbpe.verify.certify``).  Exit status: 0 certified, 1 not, 2 bad input.
"""

import json
import sys

from ..verify.certify import certify, render_certificate
from ..verify.ties import ORDER_FREE
from .common import (
    CliError,
    add_counting_arguments,
    add_option,
    add_special_token_argument,
    check_special_tokens,
    positive_int,
)
from .reference import their_model, word_counts
from .train_settings import add_settings_arguments, profile_counting, refuse_settings, settings_from_args

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
    c.add_argument(
        "--tie-rule",
        choices=ORDER_FREE,
        default=None,
        help="the tie rule to hold them to (default: the --profile's: cs336 greatest-bytes, rustbpe "
        "smallest-ids-refbpe-layout, hf smallest-ids)",
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
    refuse_settings(args, "certify", "its steps are held to the maximum count only", ["min_frequency"])
    settings = settings_from_args(args)
    counts, _, _ = word_counts(args, {}, profile_counting(settings))
    wanted = None
    if args.vocab_size is not None:
        wanted = settings.profile.merges_wanted(
            counts, args.vocab_size, list(settings.special_tokens), settings.recorded()
        )
    rule = args.tie_rule or settings.tie_rule
    their_ids = theirs.id_of() if theirs.carries_ids else None
    try:
        report = certify(counts, theirs.merges, rule, their_ids, wanted, args.limit)
    except ValueError as e:
        raise CliError(str(e))
    if args.json:
        sys.stdout.write(json.dumps(report, sort_keys=True) + "\n")
    else:
        sys.stdout.write(render_certificate(report) + "\n")
    return EXIT_CERTIFIED if report["certified"] else EXIT_NOT_CERTIFIED
