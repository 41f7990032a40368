"""One case against their implementation: write the inputs, run them, judge: ``Trial``.

A case is a dict: ``text`` (or ``counts``, {pre-token bytes: count}, in
``--counts`` mode), ``vocab_size`` and ``special_tokens`` for training.  The
inputs go to a directory (``input.txt`` or ``input.counts.tsv``), their
command or function runs with the placeholders pointing there, and the
verdict is one of:

- ``None``: the same result as the reference (or a case the profile does not
  model, ``profiles.ProfileLimit``, which is skipped);
- a ``Verdict`` of kind ``difference`` with verify's report (``verify.judge``);
- a ``Verdict`` of a fault's kind (``crash``, ``exit-status``, ``timeout``,
  ``unreadable-output``) with their stderr.

``reference_output`` gives what the reference produces for a case (the
model, ids or pieces), for the findings directory.  Cost: one run of theirs
plus one reference training of the small case.
"""

import os

from .._util.atomic import atomic_write
from ..corpus.countfile import write_counts
from ..corpus.sequences import count_texts
from ..formats.model import build_vocab
from ..learn.profiles import ProfileLimit, get_profile
from ..learn.tie_rules import TEXT_ORDER
from ..learn.train import train_bpe, train_from_counts
from ..pretokenize.patterns import get_pattern
from ..verify.encoding import encode_allowing
from ..verify.judge import judge_encoding, judge_split, judge_training, split_segments
from ..verify.setting_search import as_options
from ..verify.ties import train_first_counted
from .target import fault_of, read_output

__all__ = [
    "INPUT_NAMES",
    "OUTPUT_NAMES",
    "Trial",
    "case_bytes",
    "reference_output",
]

INPUT_NAMES = {"text": "input.txt", "counts": "input.counts.tsv"}
# {out}: a model (a directory or a file, any format), ids (.npy, JSON or integers), pieces (JSON lines)
OUTPUT_NAMES = {"train": "theirs", "encode": "theirs.txt", "split": "theirs.jsonl"}


class Verdict(object):
    """A finding for one case: ``kind`` (``difference`` or a fault's kind), ``text``
    (the report), ``report`` (verify's dict, for a difference), ``theirs`` (path)."""

    def __init__(self, kind, text, report=None, theirs=None):
        self.kind, self.text, self.report, self.theirs = kind, text, report, theirs


def case_bytes(case):
    """The size that shrinking minimises and reports: the input's bytes."""
    if "counts" in case:
        return sum(len(w) for w in case["counts"])
    return len(case["text"].encode("utf-8", "surrogatepass"))


def write_case_input(case, directory):
    """Write the case's input in ``directory``; its path."""
    if "counts" in case:
        path = os.path.join(directory, INPUT_NAMES["counts"])
        write_counts(path, case["counts"])
    else:
        path = os.path.join(directory, INPUT_NAMES["text"])
        atomic_write(path, case["text"].encode("utf-8", "surrogatepass"))
    return path


class Trial(object):
    """Runs cases against ``target`` (a ``target.Target``) in ``mode`` with the shared
    settings: ``profile``, ``pattern``, ``timeout``; for encode, ``model`` (a
    ``formats.Model``), ``model_path`` (written for them), ``tokenizer``,
    ``allowed_special`` (the special tokens matched, tiktoken's sense; None: all of
    the model's) and ``encoding`` ({encoding}: a named encoding, else the model's path);
    for training, ``settings`` (the recorded settings, ``Profile.settings``, of
    ``profile``; None: its defaults): the reference is ``train`` under exactly them;
    ``extend`` (an ``extend.Parent``) and ``base_path`` ({base}): their trainer extends
    that model, as ``train --extend`` does (each case's vocab size then counts the
    parent's tokens too, ``vocab_size``)."""

    def __init__(
        self,
        target,
        profile=None,
        pattern=None,
        timeout=10.0,
        model=None,
        model_path=None,
        tokenizer=None,
        allowed_special=None,
        encoding=None,
        settings=None,
    ):
        self.target, self.mode = target, target.mode
        self.profile, self.pattern, self.timeout = profile, pattern, timeout
        self.model, self.model_path, self.tokenizer = model, model_path, tokenizer
        self.allowed_special, self.encoding = allowed_special, encoding
        self.settings = settings
        self.extend = self.base_path = None

    def special_tokens(self, case):
        """The special tokens of the result: the parent's first when extending."""
        given = list(case.get("special_tokens", []))
        return given if self.extend is None else self.extend.with_specials(given)

    def vocab_size(self, case):
        """The vocab size their trainer is asked for: the case's, plus the parent's merges
        and special tokens when extending (the case's counts the merges it learns itself)."""
        size = case.get("vocab_size", 0)
        if self.extend is None or self.mode != "train":
            return size
        return size + len(self.extend.merges) + len(self.special_tokens(case)) - len(case["special_tokens"])

    def recorded(self):
        """The recorded settings the reference trains with (``settings``, else the profile's defaults)."""
        if self.settings is not None:
            return self.settings
        return get_profile(self.profile).settings(pattern=self.pattern)

    def values(self, case, directory):
        path = write_case_input(case, directory)
        values = {
            "input": path,
            "counts": path,
            "out": os.path.join(directory, OUTPUT_NAMES[self.mode]),
            "vocab_size": self.vocab_size(case),
            "special_tokens": list(case.get("special_tokens", [])),
        }
        if self.base_path:
            values["base"] = self.base_path
        if self.model_path:
            values["model"] = self.model_path
            values["encoding"] = self.encoding or self.model_path
        return values

    def run(self, case, directory):
        """The verdict for ``case``, run in ``directory`` (a fresh one per case)."""
        values = self.values(case, directory)
        run = self.target.run(values, self.timeout)
        fault = fault_of(run, self.timeout)
        if fault is not None:
            return Verdict(fault.kind, fault.text(), theirs=values["out"])
        try:
            theirs = read_output(self.mode, values["out"], values["special_tokens"], self.target.fmt)
        except (ValueError, OSError) as e:
            text = "unreadable-output: %s" % e
            if run.stderr.strip():
                text += "\ntheir stderr:\n" + run.stderr.strip()
            return Verdict("unreadable-output", text, theirs=values["out"])
        try:
            report = self.judge(case, theirs, values["input"])
        except ProfileLimit:
            return None
        if report["identical"]:
            return None
        return Verdict("difference", report["explanation"], report, values["out"])

    def judge(self, case, theirs, path):
        if self.mode == "encode":
            return judge_encoding(
                self.model, case["text"], theirs, self.pattern, self.tokenizer, self.allowed_special
            )
        if self.mode == "split":
            return judge_split(case["text"], theirs, self.pattern, case.get("special_tokens", ()))
        if "counts" in case:
            counts, texts = case["counts"], None
        else:
            counts = count_texts([case["text"]], "documents", self.special_tokens(case), self.pattern)
            texts = [case["text"]]
        return judge_training(
            counts,
            self.vocab_size(case),
            case["special_tokens"],
            theirs,
            texts=texts,
            sources=[path],
            profile=self.profile,
            pattern=self.pattern,
            settings=self.settings,
            extend=self.extend,
        )


def reference_output(trial, case, path):
    """The reference's answer for ``case`` (its input at ``path``): (vocab, merges) for
    training, ids for encoding, piece bytes for splitting."""
    if trial.mode == "encode":
        return encode_allowing(trial.tokenizer, case["text"], trial.allowed_special)
    if trial.mode == "split":
        from_pattern = []
        for _, data in split_segments(case["text"], case.get("special_tokens", ())):
            from_pattern.extend(get_pattern(trial.pattern).pretokenize(data))
        return from_pattern
    options = dict(as_options(trial.recorded()), profile=trial.profile, extend=trial.extend)
    vocab_size = trial.vocab_size(case)
    if options.get("tie_rule") == TEXT_ORDER:  # the engine has no text order: a replay over the text
        counts = count_texts([case["text"]], "documents", case["special_tokens"], trial.pattern)
        wanted = case["vocab_size"] - 256 - len(case["special_tokens"])
        merges = train_first_counted(
            counts, [case["text"]], case["special_tokens"], wanted, options["min_frequency"]
        )
        return build_vocab(merges, case["special_tokens"]), merges
    if "counts" in case:
        return train_from_counts(case["counts"], vocab_size, case["special_tokens"], **options)
    return train_bpe(path, vocab_size, case["special_tokens"], **options)
