"""``refbpe conformance write DIR`` / ``refbpe conformance check DIR --train CMD``: the conformance pack.

``write`` puts the fixed cases (``refbpe.fuzz.pack``; layout in
docs/ci.md) in a new directory; ``check`` replays the cases of one
kind against their command and prints PASS or FAIL per case, with verify's
report for each failure.  A trainer reads text, or word counts with
``--counts`` (or ``{counts}`` in its command): only the cases of its input
run, and the summary says how many others were skipped and why.  The training
settings (``--profile`` and its options, ``train``'s) are given to ``write``,
which trains the answers with them and records them in the pack; ``check``
holds their trainer to the pack's (an option given to ``check`` must agree).  Exit status:
0 every case passes, 1 a case fails, 2 bad options, a pack altered or
incomplete, or a command that cannot start.
"""

import sys
import tempfile

from ..fuzz import Target, TargetError
from ..fuzz.pack import PackError, check_pack, pack_settings, write_pack
from ..fuzz.persistent import PersistentTarget
from ..verify.setting_search import as_options
from .common import (
    CliError,
    add_allowed_special_argument,
    add_option,
    add_pattern_argument,
    check_output_dir,
)
from .train_settings import add_settings_arguments, given_options, settings_from_args

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]

_TARGETS = (
    ("--train", "train", "CMD"),
    ("--train-py", "train", "MODULE:FUNC"),
    ("--encode", "encode", "CMD"),
    ("--encode-py", "encode", "MODULE:FUNC"),
    ("--split", "split", "CMD"),
    ("--split-py", "split", "MODULE:FUNC"),
)


HELP = "write the conformance pack, or check an implementation against it"
DESCRIPTION = (
    "'write DIR' writes a fixed, versioned set of cases (training, word counts, encoding, "
    "splitting) with the reference's answers and a manifest of sha256s; 'check DIR --train CMD' (or "
    "--encode, --split) runs their command on each case of that kind and prints PASS or FAIL with "
    "verify's report. The placeholders are refbpe fuzz's. Exit 0 all pass, 1 a failure, 2 bad input."
)


def add_arguments(c):
    c.add_argument("action", choices=("write", "check"), help="write a pack, or check against one")
    c.add_argument("directory", metavar="DIR", help="the pack's directory")
    add_settings_arguments(c)
    add_pattern_argument(c)
    add_option(c, "--seed", "write: the cases' seed (default 0)")
    c.add_argument(
        "--cs336", metavar="FIXTURES", help="write: add cases of CS336's fixture files in this directory"
    )
    group = c.add_mutually_exclusive_group()
    for option, mode, metavar in _TARGETS:
        group.add_argument(option, metavar=metavar, help="check: their %s (as in refbpe fuzz)" % mode)
    c.add_argument("--format", default="auto", help="check --train: the format they write (default: detect)")
    c.add_argument(
        "--counts",
        action="store_true",
        help="check --train: their trainer reads word-count files (as refbpe fuzz --counts; implied by "
        "{counts} in the command): run the word-count cases, skip the text ones",
    )
    add_allowed_special_argument(c, "check --encode")
    add_option(c, "--timeout", "check: per run of theirs (default 30)", default=30.0)
    c.add_argument(
        "--cases",
        default="*",
        metavar="GLOB",
        help="check: only the cases whose name matches one of these globs ('train-ties-*,train-random-*')",
    )
    add_option(c, "--quiet", "check: print failures and the summary only")
    add_option(
        c, "--persistent", "check: start their program once and send it one case per line (as in refbpe fuzz)"
    )


def _target(args):
    kind = PersistentTarget if args.persistent else Target
    for option, mode, _ in _TARGETS:
        value = getattr(args, option[2:].replace("-", "_"))
        if value is not None:
            fmt = args.format if mode == "train" else "auto"
            if option.endswith("-py"):
                return kind(mode, function=value, fmt=fmt)
            return kind(mode, command=value, fmt=fmt)
    raise CliError("check needs one of --train, --train-py, --encode, --encode-py, --split, --split-py")


def _write(args):
    check_output_dir(args.directory, "conformance write")
    settings = _settings(args)
    try:
        manifest = write_pack(args.directory, args.profile, args.pattern, args.seed, args.cs336, settings)
    except PackError as e:
        raise CliError(str(e))
    except OSError as e:
        raise CliError("%s: cannot write (%s)" % (e.filename or args.directory, e.strerror or e))
    kinds = {}
    for case in manifest["cases"]:
        kinds[case["kind"]] = kinds.get(case["kind"], 0) + 1
    sys.stdout.write(
        "wrote %d cases to %s (%s; profile %s, pattern %s, Unicode %s)\n"
        % (
            len(manifest["cases"]),
            args.directory,
            ", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items())),
            manifest["profile"],
            manifest["pattern"],
            manifest["unicode_version"],
        )
    )
    return 0


def _settings(args):
    """The recorded settings of the command line, checked as ``train`` checks them (SuperBPE's
    two stages are not a pack's: its cases are judged as verify judges, one stage)."""
    if args.profile == "superbpe":
        raise CliError("conformance packs hold single-stage trainers, as verify does; --profile superbpe "
                       "trains two")  # fmt: skip
    settings = settings_from_args(args)
    if settings.tie_rule == "first-counted":
        raise CliError("conformance packs do not take --tie-rule first-counted: their word-count cases have "
                       "no text order, and the answers are trained by the merge engine")  # fmt: skip
    return settings.recorded()


def _same_settings(args):
    """The pack's settings are the ones it was written with: options given to check must agree."""
    given = dict(given_options(args))
    if args.profile is not None:
        given["profile"] = args.profile
    if not given:
        return
    try:
        recorded = pack_settings(args.directory)
    except PackError as e:
        raise CliError(str(e))
    ours = dict(as_options(recorded), profile=recorded["profile"])
    mine = dict(as_options(_settings(args)), profile=args.profile or "cs336")
    for key in given:
        if mine.get(key) != ours.get(key):
            raise CliError(
                "%s holds answers trained with %s=%s (the settings are the pack's, given to 'conformance "
                "write'); check takes no other" % (args.directory, key, ours.get(key))
            )


def _check(args):
    _same_settings(args)
    try:
        target = _target(args)
        target.check_starts()
    except TargetError as e:
        raise CliError(str(e))
    counts = _reads_counts(args, target)
    if args.special_tokens is not None and target.mode != "encode":
        raise CliError("--special-tokens is for --encode and --encode-py")
    passed = failed = 0
    skipped = {}
    with tempfile.TemporaryDirectory(prefix="refbpe-conformance-") as workdir:
        try:
            only = {"cases": args.cases, "counts": counts, "special_tokens": args.special_tokens}
            results = check_pack(args.directory, target, args.timeout, workdir, skipped=skipped, **only)
            for entry, verdict in results:
                if verdict is None:
                    passed += 1
                    if not args.quiet:
                        sys.stdout.write("PASS %s\n" % entry["name"])
                    continue
                failed += 1
                sys.stdout.write("FAIL %s (class %s): %s\n" % (entry["name"], entry["class"], verdict.kind))
                sys.stdout.write("".join("    " + line + "\n" for line in verdict.text.splitlines()))
        except (PackError, TargetError) as e:
            raise CliError(str(e))
        finally:
            target.close()
    if passed + failed == 0:
        raise CliError(
            "%s holds no %s cases matching %r%s"
            % (args.directory, target.mode, args.cases, "".join("; " + n for n in _skip_notes(skipped)))
        )
    sys.stdout.write(
        "%d passed, %d failed of %d %s cases%s\n"
        % (passed, failed, passed + failed, target.mode, "".join("; " + n for n in _skip_notes(skipped)))
    )
    return 1 if failed else 0


def _reads_counts(args, target):
    """True when their trainer reads word-count files: --counts, or {counts} in the command."""
    in_command = target.command is not None and any("{counts}" in a for a in target.template)
    if (args.counts or in_command) and target.mode != "train":
        raise CliError("--counts is for --train and --train-py")
    return args.counts or in_command


def _skip_notes(skipped):
    """Why the cases of the other input did not run (``check_pack``'s ``skipped``)."""
    notes = []
    if skipped.get("counts"):
        notes.append(
            "%d word-count cases skipped: the trainer reads text; give --counts (or {counts} in the "
            "command) for a trainer that reads word-count files" % skipped["counts"]
        )
    if skipped.get("text"):
        notes.append(
            "%d text cases skipped: the trainer reads word counts (--counts); check again without it "
            "for a trainer that reads text" % skipped["text"]
        )
    return notes


def run(args):
    if args.action == "write":
        return _write(args)
    return _check(args)
