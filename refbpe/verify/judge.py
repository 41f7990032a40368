"""One verdict per input for the fuzzer, the conformance pack and ``refbpe.testing``: ``judge_*``.

Each judge takes what their implementation produced for one small input and
returns a report dict with ``identical`` and ``explanation`` (verify's text):

- ``judge_training``: their model against the reference trained on the same
  word counts (``merges.verify_merges``; under a trainer profile, settled by
  ``profile_rules.profile_verdict``); the vocab size and special tokens
  were given to them too, so a mismatch there is never "setup: fix that
  first" (``verify_merges``' ``given``).  When they differ under the CS336 rule,
  the report also carries ``certify``'s certificate of their merge list over
  the same counts, with exact integers: a counter that wrapped at 2^31 or 2^32
  or a stale heap shows as the step that fails.
- ``judge_encoding``: their ids against the reference's (``encoding``).
- ``judge_split``: their pieces against the pattern's (``pieces``).

Cost: one reference training (or encoding, or scan) of the input, and for a
difference the replay of verify's hypotheses: meant for small inputs.
"""

from ..learn.profiles import get_profile
from ..pretokenize.patterns import get_pattern
from ..specials import special_pattern, split_specials
from .certify import PROFILE_TIE_RULES, certify, render_certificate
from .encoding import verify_encoding
from .merges import verify_merges
from .pieces import compare_split, render_split_comparison
from .profile_rules import profile_verdict
from .readings import Readings
from .setting_search import given_from

__all__ = ["judge_encoding", "judge_split", "judge_training", "split_segments"]


def judge_training(
    word_counts,
    vocab_size,
    special_tokens,
    theirs,
    texts=None,
    sources=(),
    profile=None,
    pattern=None,
    settings=None,
    extend=None,
):
    """The report comparing ``theirs`` (a ``formats.Model``) with the reference
    trained on ``word_counts`` (counted with ``pattern``) under ``profile``, with
    exactly the recorded ``settings`` (``Profile.settings``; None: the profile's
    defaults) as ``train`` takes them: their trainer is held to every one (a
    setting that reproduces them otherwise is named, ``setting_search``).  ``extend``
    (an ``extend.Parent``, cs336 only): the reference extends it, as ``train --extend``."""
    special_tokens = list(special_tokens)
    if settings is None:
        settings = get_profile(profile).settings(pattern=pattern)
    readings = Readings(texts, special_tokens) if texts is not None else None
    report = verify_merges(
        word_counts,
        vocab_size,
        special_tokens,
        theirs,
        texts=texts,
        pattern=pattern,
        readings=readings,
        given=True,
        min_frequency=settings["min_frequency"],
        tie_rule=settings.get("tie_rule"),
        extend=extend,
    )
    if profile not in (None, "cs336"):
        report = profile_verdict(
            report,
            theirs,
            vocab_size,
            special_tokens,
            word_counts,
            list(sources),
            profile,
            pattern,
            texts,
            readings,
            given_from(settings),
        )
        return report
    if extend is not None:  # certify replays from the bytes: inherited merges are no rule's choice
        return report
    if not report["identical"] and report["cause"] not in ("min-count", "newline-translation"):
        wanted = vocab_size - 256 - len(special_tokens)
        cert = certify(
            word_counts,
            [(bytes(a), bytes(b)) for a, b in theirs.merges],
            settings.get("tie_rule") or PROFILE_TIE_RULES["cs336"],
            merges_wanted=wanted,
            min_count=settings["min_frequency"],
            texts=texts,
            special_tokens=special_tokens,
        )
        report["certificate"] = cert
        report["explanation"] += "\n\nStep by step over the word counts (refbpe certify):\n" + (
            render_certificate(cert)
        )
    return report


def judge_encoding(model, text, their_ids, pattern=None, tokenizer=None, allowed_special=None):
    """``verify_encoding``'s report, with a status line first in ``explanation``
    (``allowed_special``: the special tokens matched; None, all of the model's)."""
    report = verify_encoding(model, text, their_ids, pattern, tokenizer, allowed_special=allowed_special)
    status = "identical" if report["identical"] else "DIFFERENT"
    report["explanation"] = "%s\n%s" % (status, report["explanation"])
    return report


def split_segments(text, special_tokens=()):
    """``(byte offset, bytes)`` of the texts between special tokens, as ``compare_split`` takes them."""
    out, at = [], 0
    for segment, is_special in split_specials(text, special_pattern(list(special_tokens))):
        data = segment.encode("utf-8", "surrogatepass")
        if not is_special:
            out.append((at, data))
        at += len(data)
    return out


def judge_split(text, their_pieces, pattern=None, special_tokens=()):
    """Their pieces (bytes) of ``text`` against the pattern's, with the report's text."""
    name = get_pattern(pattern).name
    report = compare_split(split_segments(text, special_tokens), their_pieces, name)
    report["explanation"] = render_split_comparison(report)
    return report
