"""Which trainer profile reproduces their model exactly: ``profile_verdict``.

``refbpe verify --profile P`` trains the reference under profile P
(``refbpe.learn.profiles``) and compares: "identical to profile P", or the first
differing merge with both pairs and their counts at that step (replayed over
the word table P counts, ``replay.PairReplay``) and whether it was a tie.
Without ``--profile``, when the CS336 reference differs, the rustbpe and hf
profiles are tried and the report says which one reproduces their model
exactly, if one does (``reproduced_by_profile``; the exit status stays 1:
their model is still not the CS336 reference's).

The settings tried per profile (each a training run): the one their files
name (HF's ``tokenizer.json`` names ``add_prefix_space``; a refbpe manifest
names its profile settings), otherwise rustbpe with the llama3 (its own) and
gpt2 patterns, and hf with and without the prefix space, over documents and
over lines.  Their model matches when the merge lists are equal and, where
their format has ids, every id outside the special tokens holds the same bytes.

Shortcuts, each exact (``tests/test_profile_rules.py``):

* Word tables (``WordTables``) are built once per distinct (pattern, cut,
  prefix space); with the corpus text at hand, those that equal the
  reference's or differ from it by the lines reading are derived from it
  (``derived_table``) instead of counted again.
* Without ``--profile`` only a setting that reproduces them matters: one the
  cheap checks rule out (``SettingChecks``: their ids against the layout of
  the setting, or their merges against the reference counts' replay) is not
  trained, and a differing setting's divergence is not replayed.  Nor is one
  that verify's replay already proves to reproduce them: a complete
  hypothesis over the setting's word table whose ties follow the profile's
  rule, with their ids the setting's and the same stopping point.

Cost: one training run per setting tried and not ruled out (at most 2 for
rustbpe, 4 for hf), and reading the corpus again for each word table not
derived.
"""

import json
import os

from ..corpus.countfile import is_counts_path
from ..corpus.io import can_reread
from ..corpus.pool import default_workers
from ..corpus.sequences import count_texts_parallel
from ..formats.gpt2_files import MANIFEST
from ..learn.merge import merges_possible
from ..learn.profiles import ProfileLimit, get_profile, settings_pattern
from ..pretokenize.patterns import get_pattern
from ..pretokenize.unicode_tables import LATEST, UNICODE_VERSIONS, changed_code_points
from .conventions import id_layout
from .display import pair_json, show, show_pair
from .readings import Readings, versioned
from .replay import PairReplay
from .setting_search import OPTIONS, option_text, setting_text, variations
from .setup_checks import SETUP_CODES

__all__ = [
    "profile_verdict",
    "derived_table",
    "SettingChecks",
    "WordTables",
    "compare_with_profile",
    "candidate_settings",
    "id_mismatch",
]

SMALL_CORPUS = 16 << 20  # below this, counting in-process beats starting workers (as cli.verify)


def profile_verdict(
    report,
    theirs,
    vocab_size,
    special_tokens,
    word_counts,
    sources,
    profile=None,
    pattern=None,
    texts=None,
    readings=None,
    given=None,
):
    """``report`` (from ``verify_merges``) settled by profiles: with ``profile``,
    replaced by the comparison under that profile; without, extended with the
    profile that reproduces ``theirs`` when the CS336 reference does not.
    ``word_counts`` were counted with ``pattern`` (None: gpt2) over documents;
    ``texts`` (the corpus, when at hand) spare reading ``sources`` again, and
    ``readings`` (their ``readings.Readings``, verify's) recounting their lines.
    ``given`` ({``Profile.settings`` keyword: value}) fixes those options
    (``candidate_settings``); with ``profile``, when no setting reproduces them,
    one that differs in a given option and does is named (``setting_search``).

    Without ``profile`` only a setting that reproduces them matters, so the
    settings the cheap checks rule out (``SettingChecks``) are not trained."""
    if profile is None and report.get("identical"):
        return report
    names = [profile] if profile else ["rustbpe", "hf"]
    tables = WordTables(word_counts, sources, special_tokens, pattern or "gpt2", texts, readings)
    checks = None if profile else SettingChecks(report, theirs, special_tokens, tables)
    first, tried = None, []
    for name in names:
        for settings in candidate_settings(name, theirs, pattern, given):
            if checks is not None and checks.ruled_out(name, settings):
                continue
            if checks is not None and checks.proven(name, settings, vocab_size):
                n = len(theirs.merges)
                result = {"profile": name, "settings": settings, "identical": True, "first_divergence": None}
                result["explanation"] = "merges and ids identical (%d merges)" % n
                return _identical(report, result, True)
            tried.append(settings)
            explain = profile is not None and first is None  # only that result's divergence is shown
            result = compare_with_profile(
                name, settings, theirs, vocab_size, special_tokens, tables, explain=explain
            )
            if result["identical"]:
                return _identical(report, result, profile is None)
            if first is None:
                first = result
    if profile is None:
        report["reproduced_by_profile"] = None
        return report
    if first is None:
        raise ValueError("profile %s takes none of the settings given" % profile)
    out = dict(report)
    out.update(first)
    if profile != "cs336":  # the CS336 reference's cause is not P's: P's divergence is the evidence
        setup = any(w["code"] in SETUP_CODES for w in out.get("warnings", ()))
        layout = first.get("convention")  # the same merges under other ids: a setup, as --exact-ids says
        out["cause"], out["variant"] = "setup" if setup or layout else "unknown", None
        out["convention"], out["setting"] = layout, layout["setting"] if layout else None
        out.pop("unicode", None)
    out["explanation"] = "different from profile %s (%s): %s" % (
        profile,
        _describe(first["settings"]),
        first["explanation"],
    )
    other = _other_setting(profile, first["settings"], theirs, vocab_size, special_tokens, tables, given)
    if other is not None:
        return _reproduced_by_setting(out, other)
    for settings in tried:
        version = _other_version(profile, settings, theirs, vocab_size, special_tokens, tables)
        if version is not None:
            return _reproduced_on(out, version)
    return out


def _other_setting(name, settings, theirs, vocab_size, special_tokens, tables, given):
    """The comparison under profile ``name`` with one given option of ``settings``
    changed that reproduces ``theirs`` exactly (``setting_search.variations``), with
    ``option`` and ``value``; or None."""
    if not given:
        return None
    profile = get_profile(name)
    table = tables.get(settings)
    wanted = None
    if table is not None:
        wanted = profile.merges_wanted(table, vocab_size, list(special_tokens), settings)
    merges = [(bytes(a), bytes(b)) for a, b in theirs.merges]
    for option, value, options in variations(profile, settings, given, table, merges, wanted):
        other = profile.settings(**options)
        result = compare_with_profile(name, other, theirs, vocab_size, special_tokens, tables, explain=False)
        if result["identical"]:
            result["option"], result["value"] = option, value
            return result
    return None


def _reproduced_by_setting(out, result):
    """``out`` (their model against profile P) concluded by ``result``: P with one
    option changed reproduces it; cause ``min-count`` (``min_frequency``) or ``setting``."""
    option, value, settings = result["option"], result["value"], result["settings"]
    setting = setting_text(option, settings[dict(OPTIONS)[option]] if option != "min_frequency" else value)
    out["cause"] = "min-count" if option == "min_frequency" else "setting"
    out["variant"] = None
    out["setting"] = setting
    out["convention"] = {"name": out["cause"], "option": option_text(option, value), "setting": setting}
    if option == "min_frequency":
        out["convention"]["min_count"] = max(1, value)
    out["reproduced_by_settings"] = settings
    out["explanation"] = "%s: DIFFERENT - profile %s with %s reproduces their model exactly (%s): %s\n%s" % (
        out["cause"],
        result["profile"],
        setting,
        _describe(settings),
        "train and verify with " + out["convention"]["option"],
        out["explanation"],
    )
    return out


class SettingChecks(object):
    """Cheap proofs that a setting cannot reproduce their model exactly (``ruled_out``),
    or that it does (``proven``: from verify's complete hypotheses).

    * Ids: where their format has ids, the vocab a training that made exactly
      their merges returns (``Profile.vocab_of``) must hold their ids
      (``_id_mismatch``), else no training under the setting matches them.
    * Counts: under a setting whose word table is the reference's, a training
      that made their first ``fit`` merges is in the state the reference
      replay of those merges was in (``report["fit"]``); every profile then
      takes a pair of the maximum count, and their next pair's count is below
      it (or no pair is left): no training under the setting matches them.
      This needs each of their merges to make a token of its own bytes (the
      replay identifies tokens by their bytes, the engine by their merge).
    * Ties: under a setting whose word table is the reference's and whose tie
      rule orders pairs by their bytes or by the refbpe layout of their merges
      (``_REPLAYED_RULES``: the same order in the replay and the engine), when
      the reference counts explain all their merges but that rule broke one of
      their ties otherwise (the report's reference hypothesis), a training
      under the setting makes their merges up to that tie and then another
      pair (or stops earlier): it does not match them.  (Training rustbpe's
      gpt2 setting to find so was 0.15 of the 3.0 CPU seconds of a swapped-tie
      verify, PyPy; perf/verify_stages.py, profile training.)
    """

    def __init__(self, report, theirs, special_tokens, tables):
        self.theirs, self.special_tokens, self.tables = theirs, special_tokens, tables
        self.merges = [(bytes(a), bytes(b)) for a, b in theirs.merges]
        fit = report.get("fit")
        made = set(a + b for a, b in self.merges)
        self.distinct = len(made) == len(self.merges)
        specials = set(t.encode("utf-8") for t in list(special_tokens) + list(theirs.special_tokens))
        # A special token spelling a token: their ids by bytes would not be the tie rule's.
        self.plain = self.distinct and not any(t in made or len(t) == 1 for t in specials)
        self.counts_fail = fit is not None and fit < len(self.merges) and self.distinct
        self.rules_missed = _rules_missed(report) if self.plain else set()
        self.explanations = report.get("explanations") or []
        self.n_specials = len((report.get("ours") or {}).get("special_tokens", special_tokens))

    def ruled_out(self, name, settings):
        profile = get_profile(name)
        if self._ids_differ(profile, settings, None):
            return True
        table = self.tables.get(settings)
        if table is None:
            return False
        if table is self.tables.reference:
            rule = settings.get("tie_rule") or PROFILE_RULE.get(name)
            if self.counts_fail or (rule in _REPLAYED_RULES and rule in self.rules_missed):
                return True
        return self._ids_differ(profile, settings, table)

    def proven(self, name, settings, vocab_size):
        """Whether a hypothesis verify replayed proves that training under ``settings``
        makes exactly their model, so that it need not be trained.

        It does when the setting's word table is the one a complete hypothesis
        counted (the reference's, or the lines reading's), the profile's tie
        rule is one the hypothesis found their ties to follow (hf: their ids;
        rustbpe: the refbpe layout's), their ids are the setting's, and the
        training stops where they stop: at the merges it is asked for, or, with
        fewer, where the hypothesis ran out of pairs.  Then at every step the
        training takes the pair they took, by induction on the steps."""
        rule = settings.get("tie_rule") or PROFILE_RULE.get(name)  # the rule the setting trains by
        if rule is None or not self.plain or settings["min_frequency"] > 1 or not self.theirs.carries_ids:
            return False
        table = self.tables.get(settings)
        origin = self.tables.origins.get(id(table)) if table is not None else None
        if origin is None or not any(_explains(e, origin, rule) for e in self.explanations):
            return False
        profile = get_profile(name)
        n = len(self.merges)
        cap = min(
            profile.merges_wanted(table, vocab_size, list(self.special_tokens), settings),
            merges_possible(table),
        )
        if n > cap or (n < cap and n >= vocab_size - 256 - self.n_specials):
            return False  # the training would make more merges than theirs
        return not self._ids_differ(profile, settings, table)

    def _ids_differ(self, profile, settings, table):
        if not self.theirs.carries_ids:
            return False
        try:
            vocab = profile.vocab_of(self.merges, list(self.special_tokens), settings, table)
        except ProfileLimit:
            return True  # training to their merges stops at the same limit
        return vocab is not None and _id_mismatch(vocab, self.theirs, self.special_tokens) is not None


# Tie rules that order pairs alike in verify's replay and in the engine: by bytes, or by the
# refbpe layout of the merges made (bytes 0-255, merge k = 256 + k), whoever made them.
_REPLAYED_RULES = (
    "greatest-bytes",
    "smallest-bytes",
    "greatest-concat",
    "smallest-concat",
    "smallest-ids-refbpe-layout",
    "greatest-ids-refbpe-layout",
)


def _rules_missed(report):
    """The tie rules that took another pair than theirs at one of their ties, when the
    reference counts explain every one of their merges (the report's reference
    hypothesis); else none."""
    for h in (report.get("divergence") or {}).get("hypotheses") or ():
        if h["variant"] == "reference" and h["consistent_merges"] == h["of"] and h["ties"]:
            return set(_REPLAYED_RULES) - set(h["tie_rules_consistent"] or ())
    return set()


PROFILE_RULE = {
    "hf": "smallest-ids",
    "rustbpe": "smallest-ids-refbpe-layout",
}  # the engine's ties as verify's rules


def _explains(e, origin, rule):
    """Whether explanation ``e`` (every merge of theirs, at the maximum count, their
    ties following ``rule``) is the hypothesis that counted the table ``origin``."""
    if origin == "reference":
        return e["kind"] == "tie-rule" and e["name"] == rule
    names = [e["name"]] + [a["name"] for a in e.get("same_counts_as") or ()]
    return e["kind"] == "variant" and origin in names and (e["tie_rules"] is None or rule in e["tie_rules"])


def _identical(report, result, detected):
    """The report for a profile that reproduces their model: with ``--profile``,
    identical; detected, still different from the reference (exit 1), and says so."""
    name = result["profile"]
    text = "identical to profile %s (%s)" % (name, _describe(result["settings"]))
    out = dict(report)
    if detected:
        out["reproduced_by_profile"] = name
        out["profile_settings"] = result["settings"]
        out["explanation"] = "%s: verify (or train) with --profile %s\nagainst the cs336 reference: %s" % (
            text,
            name,
            report["explanation"],
        )
        return out
    out.update(result)
    out["explanation"] = text
    out["cause"] = out["variant"] = None  # the CS336 reference's cause does not hold for profile P
    out.pop("unicode", None)
    return out


def _other_version(name, settings, theirs, vocab_size, special_tokens, tables):
    """The comparison under profile ``name`` with ``settings`` read by another Unicode
    version that reproduces ``theirs`` exactly (newest first), with ``code_points``:
    the corpus's code points the two versions class differently; or None.

    A version is tried only when the corpus holds such a code point (otherwise
    it counts alike): one word table and one training run each."""
    ours = settings_pattern(settings)
    split = get_pattern(ours)
    if not versioned(split) or not tables.sources:
        return None
    present = tables.code_points()
    for version in reversed(UNICODE_VERSIONS):
        if version == split.unicode:
            continue
        changed = sorted(present.intersection(changed_code_points(version, split.unicode)))
        if not changed:
            continue
        other = dict(settings, unicode=version)
        result = compare_with_profile(name, other, theirs, vocab_size, special_tokens, tables)
        if result["identical"]:
            result["code_points"] = changed
            return result
    return None


def _reproduced_on(out, result):
    """``out`` (their model against profile P) concluded by ``result``: P reading another
    Unicode version reproduces it; cause ``unicode-version``, still different (exit 1)."""
    settings, changed = result["settings"], result["code_points"]
    out["cause"] = out["variant"] = "unicode-version"
    out["unicode"] = settings["unicode"]
    out["code_points"] = ["U+%04X" % cp for cp in changed[:20]]
    out["code_points_total"] = len(changed)
    out["reproduced_by_settings"] = settings
    out["explanation"] = (
        "unicode-version: DIFFERENT - profile %s reading Unicode %s instead of %s reproduces their model "
        "exactly (%s), at %s%s\n%s"
        % (
            result["profile"],
            settings["unicode"],
            out["settings"].get("unicode"),
            _describe(settings),
            " ".join(out["code_points"]),
            " and %d more" % (len(changed) - 20) if len(changed) > 20 else "",
            out["explanation"],
        )
    )
    return out


def _describe(settings):
    parts = ["peer %s" % settings["peer"]] if settings.get("peer") else []
    parts.append("pattern %s, Unicode %s" % (settings["pattern"], settings.get("unicode")))
    if settings["profile"] == "hf":
        parts.append("%s, add_prefix_space=%s" % (settings["sequences"], settings["add_prefix_space"]))
    if settings.get("initial_alphabet"):
        parts.append(setting_text("initial_alphabet", settings["initial_alphabet"]))
    if settings["min_frequency"]:
        parts.append("min_frequency %d" % settings["min_frequency"])
    if settings.get("tie_rule"):
        parts.append("tie rule %s" % settings["tie_rule"])
    return ", ".join(parts)


def candidate_settings(name, theirs, pattern=None, given=None):
    """The settings of profile ``name`` to try against ``theirs``, most likely first
    (rustbpe: only ``pattern`` when one is given; hf: its version only, as HF
    splits with GPT-2's pattern; ``pattern`` may name only a Unicode version,
    ``"@17.0.0"``, for the profile's own pattern).  ``given`` ({``Profile.settings``
    keyword: value}, ``setting_search``) fixes those options over what their files
    name and the likely ones; none when the profile cannot take them."""
    profile = get_profile(name)
    given = dict(given or {})
    named = _their_manifest_settings(theirs)
    if named and named.get("profile") == name:
        keys = ("pattern", "add_prefix_space", "min_frequency", "initial_alphabet", "tie_rule")
        options = {k: named[k] for k in keys if k in named}
        options["cut"] = named.get("sequences")
        return _settled(profile, [dict(options, **given)])
    if name == "rustbpe":
        tried = [{"pattern": p} for p in ([pattern] if pattern else ["llama3", "gpt2"])]
    elif name == "hf":
        prefixes = [_their_prefix_space(theirs)]
        if prefixes[0] is None:
            prefixes = [True, False]
        alphabet = "bytelevel" if _has_every_byte(theirs) else None
        if pattern and get_pattern(pattern).name != "gpt2":
            pattern = None  # HF splits with ByteLevel's regex whatever pattern the reference counts with
        tried = [
            {"pattern": pattern, "cut": cut, "add_prefix_space": prefix, "initial_alphabet": alphabet}
            for prefix in prefixes
            for cut in ("documents", "lines")
        ]
    else:
        tried = [{"pattern": pattern}]
    return _settled(profile, [dict(options, **given) for options in tried])


def _settled(profile, tried):
    """``profile.settings`` of each of ``tried`` that it takes, without repeats, in order."""
    out = []
    for options in tried:
        try:
            settings = profile.settings(**options)
        except ValueError:
            continue
        if settings not in out:
            out.append(settings)
    return out


def compare_with_profile(name, settings, theirs, vocab_size, special_tokens, tables, explain=True):
    """{identical, profile, settings, first_divergence, explanation, ...} for one setting
    (without ``explain``, a differing one without its ``divergence`` and ``explanation``)."""
    profile = get_profile(name)
    word_counts = tables.get(settings)
    result = {"profile": name, "settings": settings, "identical": False}
    if word_counts is None:
        result["explanation"] = "the corpus is needed to count it as %s does (word-count files given)" % name
        result["first_divergence"] = None
        return result
    try:
        vocab, merges = profile.train_counted(word_counts, vocab_size, list(special_tokens), settings)
    except ProfileLimit as e:
        result["explanation"] = str(e)
        result["first_divergence"] = None
        return result
    their_merges = [(bytes(a), bytes(b)) for a, b in theirs.merges]
    k = next((i for i, (m, t) in enumerate(zip(merges, their_merges)) if m != t), None)
    if k is None and len(merges) != len(their_merges):
        k = min(len(merges), len(their_merges))
    result["first_divergence"] = k
    if k is None:
        bad = _id_mismatch(vocab, theirs, special_tokens)
        if bad is None:
            result["identical"] = True
            result["explanation"] = "merges and ids identical (%d merges)" % len(merges)
        else:
            result["explanation"] = "merges identical; id %d is %s in ours, %s in theirs" % bad
            layout = id_layout(theirs.vocab, their_merges, special_tokens) if theirs.carries_ids else None
            result["convention"] = layout or {"name": "id-layout", "layout": None, "setting": None}
            if layout:
                result["explanation"] += "; theirs: %s" % layout["setting"]
        return result
    if explain:
        result["explanation"] = _divergence(word_counts, merges, their_merges, k, result)
    return result


def _divergence(word_counts, ours, theirs, k, result):
    replay = PairReplay(word_counts)
    for pair in ours[:k]:
        replay.apply(pair)
    mine = ours[k] if k < len(ours) else None
    other = theirs[k] if k < len(theirs) else None
    if mine is None or other is None:
        result["divergence"] = {"index": k, "kind": "length"}
        return "first divergence at merge %d (0-based): %s stop there" % (k, "we" if mine is None else "they")
    a, b = replay.count(mine), replay.count(other)
    kind = "tie" if a == b else "count"
    result["divergence"] = {
        "index": k,
        "kind": kind,
        "ours": dict(pair_json(mine), count=a),
        "theirs": dict(pair_json(other), count=b),
    }
    return "first divergence at merge %d (0-based): ours %s (count %d), theirs %s (count %d)%s" % (
        k,
        show_pair(mine),
        a,
        show_pair(other),
        b,
        ", a tie broken differently" if kind == "tie" else "",
    )


def id_mismatch(vocab, theirs, special_tokens):
    """(id, ours, theirs) of the first id outside the special tokens that differs, or None."""
    if not theirs.carries_ids:
        return None
    specials = {t.encode("utf-8") for t in special_tokens} | {
        t.encode("utf-8") for t in theirs.special_tokens
    }
    mine = {i: b for i, b in vocab.items() if b not in specials}
    other = {i: b for i, b in theirs.vocab.items() if b not in specials}
    for i in sorted(set(mine) | set(other)):
        if mine.get(i) != other.get(i):
            return i, _shown(vocab.get(i)), _shown(theirs.vocab.get(i))
    return None


_id_mismatch = id_mismatch


def _shown(token):
    return "none" if token is None else show(token)


class WordTables(object):
    """Word tables by (pattern, cut, prefix space), counted from ``sources`` on first use,
    or derived from the reference's (``derived_table``) when ``texts`` are at hand."""

    def __init__(self, word_counts, sources, special_tokens, pattern, texts=None, readings=None):
        self.sources = [s for s in sources or () if can_reread(s) and not is_counts_path(s)]
        self.special_tokens = list(special_tokens)
        self.reference = word_counts
        self.tables = {(get_pattern(pattern).key, "documents", False): word_counts}
        self.origins = {id(word_counts): "reference"}  # the verify hypothesis each derived table counts
        self.texts = texts
        self.readings = None
        if texts is not None and get_pattern(pattern).key == get_pattern("gpt2").key:
            self.readings = readings if readings and readings.serves(texts, special_tokens) else None
            self.readings = self.readings or Readings(texts, special_tokens)
        self.chars = None

    def get(self, settings):
        key = (settings_pattern(settings), settings["sequences"], settings["add_prefix_space"])
        if key not in self.tables:
            if self.readings is not None:
                table = derived_table(self.reference, self.readings, settings)
                if table is not None:
                    self.tables[key] = table
                    if table is not self.reference:
                        self.origins[id(table)] = "lines+specials-as-text"
                    return table
            if not self.sources:
                return None
            self._read()
            cuts = self.special_tokens if key[1] == "documents" else ()
            big = sum(len(t) for t in self.texts) > SMALL_CORPUS
            workers = default_workers() if big else 1
            self.tables[key] = count_texts_parallel(self.texts, key[1], cuts, key[0], key[2], workers)
        return self.tables[key]

    def code_points(self):
        """The set of code points of the corpus text (read on first use)."""
        if self.chars is None:
            self._read()
            self.chars = set(map(ord, set().union(*map(set, self.texts))))
        return self.chars

    def _read(self):
        if self.texts is None:
            self.texts = [open(s, "rb").read().decode("utf-8", "replace") for s in self.sources]


def derived_table(reference, readings, settings):
    """The word table of ``settings`` from the reference's (``reference``: GPT-2's
    pattern, the latest Unicode, the texts of ``readings`` (a ``readings.Readings``)
    cut at the special tokens), or None when it cannot be derived.

    Under GPT-2's pattern of another Unicode version that classes no code point
    of the texts otherwise, without prefix space: over documents it is the
    reference table itself; over lines, the reference plus the difference of
    reading lines with special tokens as text (``readings.reading_delta``,
    which recounts only the windows around the cuts that matter)."""
    if settings["pattern"] != "gpt2" or settings["add_prefix_space"]:
        return None
    if settings["sequences"] not in ("documents", "lines"):
        return None
    changed = changed_code_points(settings.get("unicode") or LATEST, LATEST)
    if readings.non_ascii_code_points().intersection(changed):
        return None
    if settings["sequences"] == "documents":
        return reference
    table = dict(reference)
    for w, n in readings.delta(lines=True, specials_as_text=True).items():
        n += table.get(w, 0)
        if n:
            table[w] = n
        else:
            del table[w]
    return table


def _their_manifest_settings(theirs):
    path = theirs.path
    if not path:
        return None
    manifest = os.path.join(path if os.path.isdir(path) else os.path.dirname(path), MANIFEST)
    try:
        with open(manifest, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    settings = data.get("profile") if isinstance(data, dict) else None
    return settings if isinstance(settings, dict) else None


def _their_prefix_space(theirs):
    """HF's ``pre_tokenizer.add_prefix_space`` in their ``tokenizer.json``, or None."""
    if theirs.format != "hf" or not theirs.path:
        return None
    path = theirs.path
    if os.path.isdir(path):
        path = os.path.join(path, "tokenizer.json")
    try:
        with open(path, encoding="utf-8") as f:
            pre = json.load(f).get("pre_tokenizer") or {}
    except (OSError, ValueError, AttributeError):
        return None
    value = pre.get("add_prefix_space") if isinstance(pre, dict) else None
    return value if isinstance(value, bool) else None


def _has_every_byte(theirs):
    tokens = set(theirs.vocab.values())
    return all(bytes([b]) in tokens for b in range(256))
