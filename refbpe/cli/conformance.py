"""``refbpe conformance write DIR`` / ``refbpe conformance check DIR --train CMD``: the conformance pack.

``write`` puts the fixed cases (``refbpe.fuzz.pack``; layout in
docs/ci.md) in a new directory; ``check`` replays the cases of one
kind against their command and prints PASS or FAIL per case, with verify's
report for each failure.  Exit status: 0 every case passes, 1 a case fails,
2 bad options, a pack altered or incomplete, or a command that cannot start.
"""

import sys
import tempfile

from ..fuzz import Target, TargetError
from ..fuzz.pack import PackError, check_pack, write_pack
from ..fuzz.persistent import PersistentTarget
from .common import CliError, add_pattern_argument, add_profile_argument, check_output_dir, positive_float

__all__ = ["register", "run"]

_TARGETS = (
    ("--train", "train", "CMD"),
    ("--train-py", "train", "MODULE:FUNC"),
    ("--encode", "encode", "CMD"),
    ("--encode-py", "encode", "MODULE:FUNC"),
    ("--split", "split", "CMD"),
    ("--split-py", "split", "MODULE:FUNC"),
)


def register(sub):
    c = sub.add_parser(
        "conformance",
        help="write the conformance pack, or check an implementation against it",
        description="'write DIR' writes a fixed, versioned set of cases (training, word counts, encoding, "
        "splitting) with the reference's answers and a manifest of sha256s; 'check DIR --train CMD' (or "
        "--encode, --split) runs their command on each case of that kind and prints PASS or FAIL with "
        "verify's report. The placeholders are refbpe fuzz's. Exit 0 all pass, 1 a failure, 2 bad input.",
    )
    c.add_argument("action", choices=("write", "check"), help="write a pack, or check against one")
    c.add_argument("directory", metavar="DIR", help="the pack's directory")
    add_profile_argument(c)
    add_pattern_argument(c)
    c.add_argument("--seed", type=int, default=0, help="write: the cases' seed (default 0)")
    c.add_argument(
        "--cs336", metavar="FIXTURES", help="write: add cases of CS336's fixture files in this directory"
    )
    group = c.add_mutually_exclusive_group()
    for option, mode, metavar in _TARGETS:
        group.add_argument(option, metavar=metavar, help="check: their %s (as in refbpe fuzz)" % mode)
    c.add_argument("--format", default="auto", help="check --train: the format they write (default: detect)")
    c.add_argument(
        "--timeout",
        type=positive_float,
        default=30.0,
        metavar="SECONDS",
        help="check: per run of theirs (default 30)",
    )
    c.add_argument(
        "--cases",
        default="*",
        metavar="GLOB",
        help="check: only the cases whose name matches one of these globs ('train-ties-*,train-random-*')",
    )
    c.add_argument("--quiet", action="store_true", help="check: print failures and the summary only")
    c.add_argument(
        "--persistent",
        action="store_true",
        help="check: start their program once and send it one case per line (as in refbpe fuzz)",
    )
    return c


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
    try:
        manifest = write_pack(args.directory, args.profile, args.pattern, args.seed, args.cs336)
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


def _check(args):
    try:
        target = _target(args)
        target.check_starts()
    except TargetError as e:
        raise CliError(str(e))
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="refbpe-conformance-") as workdir:
        try:
            for entry, verdict in check_pack(args.directory, target, args.timeout, workdir, args.cases):
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
        raise CliError("%s holds no %s cases matching %r" % (args.directory, target.mode, args.cases))
    sys.stdout.write("%d passed, %d failed of %d %s cases\n" % (passed, failed, passed + failed, target.mode))
    return 1 if failed else 0


def run(args):
    if args.action == "write":
        return _write(args)
    return _check(args)
