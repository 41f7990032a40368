"""The findings directory of ``refbpe fuzz``: the minimal failing case, written to be replayed.

``DIR`` receives (older findings there are replaced; the example database stays):

    input.txt | input.counts.tsv   the minimal input (text, or word counts in --counts mode)
    theirs/ (or theirs.*)          what their command wrote for it (``{out}``)
    expected/                      the reference's answer in the same form: the model in their
                                   format (hex JSON when theirs was unreadable), ids.json, or
                                   pieces.jsonl
    report.txt                     what was found, by which class, and verify's report
    repro.sh                       their command on the input, then ``refbpe verify``: exit 1
                                   (or their failing status) while the bug is there
    finding.json                   the same as ``--json`` prints

Their command is run once more on the minimal input, into ``DIR``, so the
files there are its output; four more runs tell whether the output is stable
(a tie broken by hash order is not: the report then says NOT DETERMINISTIC).
Cost: five runs of theirs and one reference training of the minimal case.
"""

import json
import os
import shlex
import shutil
import sys
import tempfile

from .._util.atomic import atomic_write
from ..formats import write_model
from ..learn.profiles import get_profile
from ..pretokenize.patterns import get_pattern
from ..verify.setting_search import OPTIONS, as_options, option_argv, setting_text
from .target import REFBPE_ROOT
from .trial import INPUT_NAMES, OUTPUT_NAMES, reference_output

__all__ = ["write_findings"]

RERUNS = 4  # more runs of the minimal case: a tie broken by hash order shows as a change
_OLD = ("input.txt", "input.counts.tsv", "expected", "report.txt", "repro.sh") + tuple(
    name + suffix for name in OUTPUT_NAMES.values() for suffix in ("", ".args.json")
)


def _clear(directory):
    for name in _OLD + ("finding.json",):
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)


def _show_input(case):
    if "counts" in case:
        return "%d words: %s" % (
            len(case["counts"]),
            ", ".join("%r: %d" % (w, n) for w, n in sorted(case["counts"].items())),
        )
    data = case["text"].encode("utf-8", "surrogatepass")
    return "%d bytes: %r" % (len(data), case["text"])


def render_finding(finding, trial, settings):
    """report.txt: a head naming the class, the input, then the verdict's report."""
    case, v = finding.case, finding.verdict
    what = "a difference" if v.kind == "difference" else "a fault (%s)" % v.kind
    lines = [
        "refbpe fuzz found %s with class %s after %d examples (found in %.1f s, shrunk in %.1f s)"
        % (what, finding.bug_class, finding.examples, finding.find_seconds, finding.shrink_seconds),
        "their %s: %s"
        % (
            {"train": "trainer", "encode": "encoder", "split": "pre-tokenizer"}[trial.mode],
            trial.target.describe(),
        ),
        "minimal input (%s): %s" % (INPUT_NAMES["counts" if "counts" in case else "text"], _show_input(case)),
    ]
    if trial.mode == "train":
        tokens = case.get("special_tokens") or []
        lines.append(
            "vocab size %d, special tokens %s, profile %s, pattern %s%s"
            % (
                trial.vocab_size(case),
                json.dumps(tokens, ensure_ascii=False) if tokens else "none",
                trial.profile or "cs336",
                get_pattern(trial.pattern).name,
                "".join(", " + setting_text(o, v) for o, v in _options_shown(trial)),
            )
        )
        if trial.base_path:
            lines.append("extending %s (%d merges)" % (trial.base_path, len(trial.extend.merges)))
    if finding.flaky:
        lines.append(
            "NOT DETERMINISTIC: the same input gave another result on another run (ties broken by hash "
            "or thread order?); this is the smallest failing input seen"
        )
    lines += ["", v.text]
    return "\n".join(lines) + "\n"


def finding_json(finding, trial, runs, out_dir, settings):
    """The object ``--json`` prints (also ``DIR/finding.json``)."""
    result = {
        "found": finding is not None,
        "mode": trial.mode,
        "target": trial.target.describe(),
        "seed": settings.get("seed"),
        "workers": settings.get("workers", 1),
        "classes": runs,
        "finding": None,
    }
    if finding is not None:
        case, v = finding.case, finding.verdict
        item = {
            "class": finding.bug_class,
            "kind": v.kind,
            "examples": finding.examples,
            "find_seconds": round(finding.find_seconds, 3),
            "shrink_seconds": round(finding.shrink_seconds, 3),
            "flaky": finding.flaky,
            "directory": out_dir,
            "report": v.text,
            "cause": (v.report or {}).get("cause"),
        }
        if "counts" in case:
            item["counts"] = {w.hex(): n for w, n in sorted(case["counts"].items())}
        else:
            item["input"] = case["text"]
            item["input_bytes"] = len(case["text"].encode("utf-8", "surrogatepass"))
        if trial.mode == "train":
            item["vocab_size"] = trial.vocab_size(case)
            item["special_tokens"] = case["special_tokens"]
            item["base"] = trial.base_path
            item["setting"] = (v.report or {}).get("setting")
        result["finding"] = item
    if trial.mode == "train":
        result["settings"] = trial.recorded()
    return result


def _write_expected(trial, case, input_path, directory, theirs_format):
    expected = os.path.join(directory, "expected")
    os.makedirs(expected, exist_ok=True)
    answer = reference_output(trial, case, input_path)
    if trial.mode == "train":
        vocab, merges = answer
        fmt = theirs_format or "json"
        name = {
            "gpt2": "model",
            "hf": "tokenizer.json",
            "tiktoken": "model.tiktoken",
            "json": "model.hex.json",
        }
        write_model(
            os.path.join(expected, name[fmt]),
            fmt,
            vocab,
            merges,
            trial.special_tokens(case),
            pattern=trial.pattern,
        )
    elif trial.mode == "encode":
        atomic_write(os.path.join(expected, "ids.json"), (json.dumps(answer) + "\n").encode("ascii"))
    else:
        text = "".join(json.dumps(p.decode("utf-8", "surrogatepass")) + "\n" for p in answer)
        atomic_write(os.path.join(expected, "pieces.jsonl"), text.encode("utf-8"))


def _verify_command(trial, case, values, settings):
    py = [sys.executable, "-m", "refbpe", "verify"]
    if trial.mode == "encode":
        return (
            py
            + ["--encode", values["input"], "--ids", values["out"], "--against", settings["model"]]
            + (["--pattern", trial.pattern] if trial.pattern else [])
            + (["--special-tokens"] + settings["special_tokens"] if settings.get("special_tokens") else [])
        )
    if trial.mode == "split":
        return (
            py
            + [values["input"], "--split", values["out"]]
            + (["--pattern", trial.pattern] if trial.pattern else [])
        )
    cmd = py + (["--counts", values["input"]] if "counts" in case else [values["input"]])
    cmd += ["--vocab-size", str(trial.vocab_size(case)), "--against", values["out"]]
    if trial.base_path:
        cmd += ["--extend", trial.base_path]
    for t in case["special_tokens"]:
        cmd += ["--special-token", t]
    if trial.target.fmt != "auto":
        cmd += ["--format", trial.target.fmt]
    if trial.profile not in (None, "cs336"):  # verify's own default: its report then names the tie rule
        cmd += ["--profile", trial.profile]
    if trial.pattern:
        cmd += ["--pattern", trial.pattern]
    return cmd + _setting_options(trial)


def _options_shown(trial):
    """(option, value) of the settings the reference trains with that are not the profile's
    defaults: the ones the report's head names."""
    defaults = as_options(get_profile(trial.profile).settings(pattern=trial.pattern))
    ours = as_options(trial.recorded())
    return [(o, ours[o]) for o, _ in OPTIONS if o in ours and ours[o] != defaults.get(o)]


def _setting_options(trial):
    """verify's options for every setting the reference trained with: all of them under a
    profile whose settings verify otherwise reads from their files or tries (so that it
    holds them to these, as fuzz did); under cs336, those given."""
    ours = as_options(trial.recorded())
    if trial.profile in (None, "cs336"):
        shown = [o for o, _ in _options_shown(trial)]
        ours = {o: v for o, v in ours.items() if o in shown}
    else:
        ours.setdefault("tie_rule", get_profile(trial.profile).tie_rule)
    out = []
    for option, _ in OPTIONS:
        if option in ours:
            out += option_argv(option, ours[option])
    return out


def _sh(args):
    """A command line for sh."""
    return " ".join(shlex.quote(a) for a in args)


def _repro(trial, case, values, settings, kind):
    theirs = trial.target.argv(values)
    lines = [
        "#!/bin/sh",
        "# Replays a finding of refbpe fuzz: their %s on the minimal input, then refbpe verify." % trial.mode,
        "# Exit status 1 (or theirs, when their command fails) while the bug is there, 0 once fixed.",
        "cd %s || exit 2" % shlex.quote(os.getcwd()),
        "export PYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH}" % shlex.quote(REFBPE_ROOT),
        "rm -rf %s" % shlex.quote(values["out"]),
    ]
    if kind == "timeout":
        lines.append("timeout %g %s" % (trial.timeout, _sh(theirs)))
    else:
        lines.append(_sh(theirs))
    lines += [
        "status=$?",
        'if [ "$status" -ne 0 ]; then',
        '  echo "their command failed with status $status" >&2; exit "$status"',
        "fi",
        "exec " + _sh(_verify_command(trial, case, values, settings)),
    ]
    return "\n".join(lines) + "\n"


def _unstable(trial, case, verdict, reruns=RERUNS):
    """True when one of ``reruns`` more runs of ``case`` passes or reports otherwise."""
    for _ in range(reruns):
        with tempfile.TemporaryDirectory(prefix="refbpe-fuzz-rerun-") as d:
            other = trial.run(case, d)
        if (
            other is None
            or other.kind != verdict.kind
            or other.text.replace(d, "") != verdict.text.replace(os.path.dirname(verdict.theirs or ""), "")
        ):
            return True
    return False


def write_findings(out_dir, finding, trial, runs, settings):
    """Write ``out_dir`` for ``finding``; runs their command twice more on the minimal
    case (marking the finding flaky when a run passes).  Returns the JSON object."""
    os.makedirs(out_dir, exist_ok=True)
    out_dir = os.path.abspath(out_dir)
    _clear(out_dir)
    case = finding.case
    values = trial.values(case, out_dir)
    again = trial.run(case, out_dir)
    if again is None or _unstable(trial, case, again):
        finding.flaky = True
    if again is not None and again.kind == finding.verdict.kind:
        finding.verdict = again
    theirs_format = None
    report = finding.verdict.report
    if trial.mode == "train" and report:
        theirs_format = report.get("theirs", {}).get("format")
    _write_expected(trial, case, values["input"], out_dir, theirs_format)
    atomic_write(
        os.path.join(out_dir, "report.txt"), render_finding(finding, trial, settings).encode("utf-8")
    )
    repro = os.path.join(out_dir, "repro.sh")
    atomic_write(repro, _repro(trial, case, values, settings, finding.verdict.kind).encode("utf-8"))
    os.chmod(repro, 0o755)
    result = finding_json(finding, trial, runs, out_dir, settings)
    atomic_write(
        os.path.join(out_dir, "finding.json"),
        (json.dumps(result, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode("utf-8"),
    )
    return result
