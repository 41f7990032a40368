"""The training conventions from the command line: their options, and the one place that
turns them into a ``TrainSettings`` (``refbpe.learn.settings``).

``add_settings_arguments`` adds ``--profile`` and its options (``--min-frequency``,
``--add-prefix-space``, ``--sequences``, ``--initial-alphabet``, ``--tie-rule``,
``--transition``);
the split pattern and ``--unicode`` come with the counting options
(``common.add_counting_arguments``).  ``settings_from_args`` checks them in a
fixed order, so the first error names what the user typed, as one line
(``CliError``):

    1. the profile and ``--transition`` (SuperBPE's, and only with CORPUS files);
    2. the profile's options as given (``Profile.settings``), then what word-count
       files allow (they were counted already: no ``--sequences`` or
       ``--add-prefix-space``; their recorded pattern);
    3. the parent model (``--extend``, read by the caller's ``load_parent``);
    4. ``--vocab-size`` against the special tokens (``settings.resolve``).

Every command that trains, checks or replays takes the same group and honours
it (train, verify, certify, fuzz, conformance); a mode where an option cannot
apply (one that compares no training) refuses it by name (``refuse_settings``),
so that a setting is never silently ignored, and ``check_text_order`` says where
the tie rule ``first-counted`` cannot be held.  ``given_options`` gives the
options typed, which verify and certify fix (the others come from their files);
``profile_counting`` gives the options that count a corpus as the settings'
trainer does (verify, certify).

Cost: O(options), plus reading the parent model and a count file's first line.
"""

import argparse

from ..corpus.countfile import read_counts_pattern
from ..learn.profiles import SuperBPEProfile, get_profile
from ..learn.settings import resolve
from ..learn.tie_rules import TEXT_ORDER, TIE_RULE_NAMES
from ..pretokenize.patterns import get_pattern, pattern_key
from .common import CliError, add_profile_argument

__all__ = [
    "add_settings_arguments",
    "settings_from_args",
    "given_options",
    "check_text_order",
    "refuse_settings",
    "profile_counting",
]

# The profile's options as ``add_settings_arguments`` adds them: (dest, option, value when not given).
PROFILE_OPTIONS = (
    ("min_frequency", "--min-frequency", None),
    ("add_prefix_space", "--add-prefix-space", None),
    ("sequences", "--sequences", None),
    ("initial_alphabet", "--initial-alphabet", None),
    ("transition", "--transition", None),
    ("tie_rule", "--tie-rule", None),
)


def add_settings_arguments(p):
    """``--profile`` and the options of the profiles (see the module docstring)."""
    add_profile_argument(p)
    p.add_argument(
        "--min-frequency",
        type=int,
        default=None,
        metavar="N",
        help="stop before the first merge whose pair occurs fewer than N times (HF's min_frequency; "
        "default 0)",
    )
    p.add_argument(
        "--add-prefix-space",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="--profile hf: a space before each sequence that lacks one (ByteLevel's add_prefix_space; "
        "default: yes, as HF)",
    )
    p.add_argument(
        "--sequences",
        choices=("documents", "lines"),
        default=None,
        help="--profile hf: documents (each file cut at the special tokens: HF's train_from_iterator "
        "over the documents; the default) or lines (each line with its newline, special tokens kept "
        "as text: HF's train([files]))",
    )
    p.add_argument(
        "--initial-alphabet",
        default=None,
        metavar="CHARS",
        help="--profile hf: characters always in the vocab (byte-level mapped, as HF's initial_alphabet); "
        "'bytelevel' for all 256 (ByteLevel.alphabet()), '' for none",
    )
    p.add_argument(
        "--tie-rule",
        choices=TIE_RULE_NAMES,
        default=None,
        metavar="RULE",
        help="the tie rule among pairs of the maximum count, by verify's names (default: the --profile's: "
        "cs336 greatest-bytes, rustbpe smallest-ids-refbpe-layout, hf smallest-ids; ids in the profile's "
        "layout): %s; first-counted needs the text, so train does not take it" % ", ".join(TIE_RULE_NAMES),
    )
    p.add_argument(
        "--transition",
        type=int,
        default=None,
        metavar="T",
        help="--profile superbpe: the number of stage-1 merges kept before superwords are learned "
        "(docs/superbpe.md)",
    )


def settings_from_args(args, load_parent=None):
    """The ``TrainSettings`` of the command line ``args`` (``--vocab-size``,
    ``--special-token``, ``--pattern``, ``--counts`` and the options of
    ``add_settings_arguments``), checked in the module docstring's order;
    ``load_parent(args)`` gives the ``extend.Parent`` of ``--extend``, or None."""
    profile = _profile(args)
    options = _profile_options(args, profile)
    parent = load_parent(args) if load_parent is not None else None
    try:
        return resolve(
            profile,
            vocab_size=getattr(args, "vocab_size", None),
            special_tokens=getattr(args, "special_token", None) or (),
            extend=parent,
            **options,
        )
    except ValueError as e:
        raise CliError(str(e))


def given_options(args):
    """The profile options typed on the command line, as ``Profile.settings``' keywords:
    the ones verify and certify fix, leaving the others to their files or the likely
    ones (``verify.setting_search``)."""
    given = {}
    for dest, _, unset in PROFILE_OPTIONS:
        value = getattr(args, dest, unset)
        if value != unset and dest != "transition":
            given["cut" if dest == "sequences" else dest] = value
    alphabet = given.get("initial_alphabet")
    if alphabet and alphabet != "bytelevel":
        given["initial_alphabet"] = list(alphabet)
    return given


def check_text_order(settings, command, text=True):
    """A one-line CliError when ``command`` cannot hold ``settings``' tie rule
    ``first-counted``: ``train`` never (the engine has no text order), the others
    only under cs336's counting (GPT-2's pieces of the documents) and with the text
    at hand (``text``: not word counts)."""
    if settings.tie_rule != TEXT_ORDER:
        return
    if command == "train":
        raise CliError(
            "train does not take --tie-rule first-counted: the merge engine counts pre-tokens without "
            "their order in the text (verify, certify and fuzz replay it over the text)"
        )
    if settings.profile.name != "cs336" or settings.pattern_key != "gpt2":
        raise CliError(
            "--tie-rule first-counted is replayed on GPT-2's pieces of the text in order: --profile cs336 "
            "and --pattern gpt2 only"
        )
    if not text:
        raise CliError("--tie-rule first-counted reads the text in order: give CORPUS files, not word counts")


def refuse_settings(args, command, why, dests=None):
    """A one-line CliError for the first profile option (of ``dests``; default all of
    ``PROFILE_OPTIONS``) given to ``command``, whose machinery cannot honour it yet (``why``)."""
    for dest, option, unset in PROFILE_OPTIONS:
        if (dests is None or dest in dests) and getattr(args, dest, unset) != unset:
            if dest == "add_prefix_space" and not args.add_prefix_space:
                option = "--no-add-prefix-space"
            raise CliError("%s does not take %s yet: %s" % (command, option, why))


def profile_counting(settings):
    """``train.count_with_profile``'s options that count a corpus as ``settings``' trainer does."""
    return {
        "profile": settings.profile,
        "pattern": settings.pattern_key,
        "cut": settings.sequences,
        "add_prefix_space": settings.add_prefix_space,
    }


def _profile(args):
    """The ``Profile`` of ``--profile`` (SuperBPE's with ``--transition``)."""
    if args.profile != "superbpe":
        if args.transition is not None:
            raise CliError("--transition is an option of --profile superbpe")
        return get_profile(args.profile)
    if args.transition is None:
        raise CliError("--profile superbpe needs --transition T (the number of stage-1 merges kept)")
    if getattr(args, "counts", None) or getattr(args, "extend", None):
        raise CliError("--profile superbpe counts the corpus once per stage: give CORPUS files, not "
                       "--counts, and no --extend")  # fmt: skip
    try:
        return SuperBPEProfile(args.transition)
    except ValueError as e:
        raise CliError(str(e))


def _profile_options(args, profile):
    """``resolve``'s profile options from the command line (unset ones left to the profile),
    checked as given, then as word-count files (``--counts``) allow."""
    options = {"min_frequency": args.min_frequency or 0}
    for key, value in (
        ("pattern", args.pattern),
        ("cut", args.sequences),
        ("add_prefix_space", args.add_prefix_space),
        ("initial_alphabet", args.initial_alphabet),
        ("tie_rule", args.tie_rule),
    ):
        if value is not None:
            options[key] = value
    if args.initial_alphabet and args.initial_alphabet != "bytelevel":
        options["initial_alphabet"] = list(args.initial_alphabet)
    try:
        profile.settings(**options)
    except ValueError as e:
        raise CliError(str(e))
    counts = getattr(args, "counts", None)
    if isinstance(counts, list) and counts:  # word-count files (fuzz's --counts is a mode, not files)
        if args.sequences or args.add_prefix_space:
            raise CliError(
                "--sequences and --add-prefix-space shape counting; word-count files are counted already"
            )
        # What 'refbpe count' did: documents, no prefix space, its pattern (the file's first line names it).
        counted = get_pattern(pattern_key(args.pattern, None, read_counts_pattern(counts[0])))
        versioned = "%s@%s" % (counted.name, counted.unicode)
        custom = counted.name.startswith("regex:")  # reads the latest tables: no version to pin
        options.update(add_prefix_space=False, pattern=counted.key if custom else versioned)
        if profile.name == "hf":
            options["cut"] = "documents"
    return options
