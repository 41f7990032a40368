"""Which training settings to hold their model to, and which other one reproduces it.

A run's settings (``learn.profiles.Profile.settings``: sequences, prefix space,
``min_frequency``, initial alphabet, tie rule) come from three places, in this
order: the options given (on the command line, or every one of them for
``refbpe fuzz``, whose reference is ``train`` with the same options), the
settings their files name (a refbpe manifest, HF's ``add_prefix_space``), and
the likely ones for an option neither fixes (``profile_rules.candidate_settings``).

When no setting so found reproduces their model, ``variations`` gives the
settings that differ from it in one given option, most telling first: the
minimum count whose stop their merges show (``conventions.min_count_stop``
over the setting's word table), the other initial alphabet, prefix space and
sequences.  ``profile_rules`` trains each; the one that reproduces them is
named as the cause (``"min-count"`` for ``min_frequency``, else ``"setting"``)
with its ``setting`` (``"initial_alphabet=bytelevel"``) and the option that
gives it (``--initial-alphabet bytelevel``).

Cost: O(settings); ``variations`` adds one replay of their merges for the
minimum count.
"""

from ..formats.bytemap import bytes_to_unicode
from .conventions import min_count_stop

__all__ = ["OPTIONS", "as_options", "given_from", "setting_text", "option_text", "option_argv", "variations"]

# Profile.settings' keywords that a user sets, and the recorded key of each.
OPTIONS = (
    ("min_frequency", "min_frequency"),
    ("initial_alphabet", "initial_alphabet"),
    ("add_prefix_space", "add_prefix_space"),
    ("cut", "sequences"),
    ("tie_rule", "tie_rule"),
)
_BYTE_TO_CHAR = bytes_to_unicode()
_FLAGS = {
    "min_frequency": "--min-frequency",
    "initial_alphabet": "--initial-alphabet",
    "cut": "--sequences",
    "tie_rule": "--tie-rule",
}


def as_options(recorded):
    """``Profile.settings``' keywords that give the recorded settings ``recorded`` again."""
    options = {"pattern": recorded["pattern"], "unicode": recorded.get("unicode")}
    for key, field in OPTIONS:
        if field in recorded:
            options[key] = recorded[field]
    return options


def given_from(recorded):
    """Every option of ``recorded`` as given (its pattern and Unicode version too, and the
    tie rule: None, the profile's own, when it records none): the settings a ``fuzz`` run
    holds them to."""
    return dict(as_options(recorded), tie_rule=recorded.get("tie_rule"))


def _alphabet_text(value):
    if value == "bytelevel":
        return value
    value = sorted(set(value or ()))
    if not value:
        return "none"
    if len(value) == 256:
        return "bytelevel"
    return "%d bytes" % len(value)


def setting_text(option, value):
    """``"initial_alphabet=bytelevel"``: one setting as a report names it."""
    if option == "initial_alphabet":
        return "initial_alphabet=%s" % _alphabet_text(value)
    if option == "cut":
        return "sequences=%s" % value
    return "%s=%s" % (option, value)


def option_text(option, value):
    """The command-line option that gives it: ``--initial-alphabet bytelevel``."""
    if option == "add_prefix_space":
        return "--add-prefix-space" if value else "--no-add-prefix-space"
    if option == "initial_alphabet":
        text = _alphabet_text(value)
        if text not in ("none", "bytelevel"):
            text = "CHARS"
        return "--initial-alphabet %s" % ("''" if text == "none" else text)
    return "%s %s" % (_FLAGS[option], value)


def option_argv(option, value):
    """The command-line arguments that give one setting exactly (``train``'s, ``verify``'s):
    ``["--initial-alphabet", ""]`` for no initial alphabet, its characters for some bytes."""
    if option == "add_prefix_space":
        return ["--add-prefix-space" if value else "--no-add-prefix-space"]
    if option == "initial_alphabet":
        value = sorted(set(value or ()))
        text = "bytelevel" if len(value) == 256 else "".join(_BYTE_TO_CHAR[b] for b in value)
        return ["--initial-alphabet", text]
    return [_FLAGS[option], str(value)]


def variations(profile, settings, given, table, their_merges, wanted):
    """``[(option, value, options)]``: ``settings`` (recorded) with one option of
    ``given`` changed, as ``Profile.settings`` keywords, most telling first.

    ``table`` is the word table of ``settings`` (None: not at hand); ``wanted``
    the merges its vocab size asks for."""
    base = as_options(settings)
    out = []
    for option, _ in OPTIONS:
        if option not in given:
            continue
        for value in _others(profile, option, base.get(option), table, their_merges, wanted):
            options = dict(base)
            options[option] = value
            try:
                profile.settings(**options)
            except ValueError:
                continue  # not an option of this profile
            out.append((option, value, options))
    return out


def _others(profile, option, value, table, their_merges, wanted):
    if option == "min_frequency":
        if table is None:
            return []
        stop = min_count_stop(table, their_merges, wanted, value or 0)
        return [] if stop is None else [stop["min_count"] if stop["min_count"] > 1 else 0]
    if profile.name != "hf":
        return []  # the other options are HF's
    if option == "initial_alphabet":
        return ["bytelevel"] if len(set(value or ())) < 256 else [[]]
    if option == "add_prefix_space":
        return [not value]
    if option == "cut":
        return [c for c in ("documents", "lines") if c != value]
    return []
