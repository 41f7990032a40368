"""The training conventions as one resolved, checked, immutable value: ``TrainSettings``.

A run's conventions are the profile (``refbpe.learn.profiles``: its tie rule and
id layout), the split pattern and the Unicode version its scanner reads, how the
input is cut into sequences, HF's ``add_prefix_space``, ``min_frequency`` and
``initial_alphabet``, the special tokens (their ids follow the profile's layout,
or the parent's with ``extend``), the parent model and its inherited merges, and
the vocab size.  ``resolve`` fills in the profile's defaults and runs every check
once, in a fixed order, so that each trainer, and each tool that trains, checks
or replays (verify, certify, fuzz, conformance), reads the same value:

    1. the profile by name (``get_profile``; unknown names are a ValueError);
    2. the profile's options (``Profile.settings``: cut, prefix space, alphabet,
       pattern, ``min_frequency``, tie rule);
    3. the parent (``extend.load_parent``: ``inherit_merges`` in range), whose
       special tokens come first;
    4. the vocab size (an int, at least the profile's minimum) and the special
       tokens (non-empty strings; duplicates dropped, first kept).

Invariants: a ``TrainSettings`` is never half-checked (only ``resolve`` makes
one); its fields never change; ``recorded()`` is the dict a report and a model's
manifest record (``Profile.settings``' keys and order), a fresh copy each time.

    >>> s = resolve("rustbpe", vocab_size=300, special_tokens=["<|endoftext|>", "<|endoftext|>"])
    >>> s.pattern, s.unicode, s.tie_rule, s.special_tokens
    ('llama3', '16.0.0', 'smallest-ids-refbpe-layout', ('<|endoftext|>',))

Cost: O(special tokens + initial alphabet), plus reading the parent with ``extend``.
"""

from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from ..formats.model import Model
from .extend import Parent, load_parent
from .profiles import Profile, get_profile, settings_pattern

__all__ = ["TrainSettings", "resolve", "check_training_args"]


class TrainSettings(object):
    """A resolved run's conventions (see the module docstring); make one with ``resolve``.

    ``profile`` (a ``Profile``), ``pattern`` (the pattern's name), ``unicode``,
    ``sequences`` (the cut), ``add_prefix_space``, ``min_frequency``,
    ``initial_alphabet`` (a tuple of bytes as ints), ``special_tokens`` (a tuple,
    the parent's first), ``vocab_size`` (None when not fixed: a tool that picks
    its own), ``parent`` (the ``extend.Parent``, or None) and ``tie_rule`` (the
    name ``refbpe.verify.ties`` gives the rule: the profile's, or the one given).
    """

    __slots__ = ("profile", "special_tokens", "vocab_size", "parent", "_record")

    def __init__(self, profile, record, special_tokens, vocab_size, parent):
        set_field = object.__setattr__
        set_field(self, "profile", profile)
        set_field(self, "_record", tuple((k, _frozen(v)) for k, v in record.items()))
        set_field(self, "special_tokens", tuple(special_tokens))
        set_field(self, "vocab_size", vocab_size)
        set_field(self, "parent", parent)

    def __setattr__(self, name, value):
        raise AttributeError("TrainSettings is immutable; resolve() a new one")

    def __reduce__(self):  # pickled for a worker process: rebuilt as made, past ``__setattr__``
        fields = (self.profile, self.recorded(), self.special_tokens, self.vocab_size, self.parent)
        return TrainSettings, fields

    def recorded(self) -> Dict[str, Any]:
        """The settings as a report records them (``report["profile"]``, a manifest's ``profile``)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self._record}

    def _get(self, key):
        return dict(self._record)[key]

    pattern = property(lambda self: self._get("pattern"))
    unicode = property(lambda self: self._get("unicode"))
    sequences = property(lambda self: self._get("sequences"))
    add_prefix_space = property(lambda self: self._get("add_prefix_space"))
    min_frequency = property(lambda self: self._get("min_frequency"))
    initial_alphabet = property(lambda self: self._get("initial_alphabet"))

    @property
    def tie_rule(self) -> str:
        return dict(self._record).get("tie_rule") or self.profile.tie_rule

    @property
    def pattern_key(self) -> str:
        """The split's key (``patterns.pattern_key``: name and Unicode version)."""
        return settings_pattern(self.recorded())

    @property
    def stage_pattern_keys(self) -> Optional[List[str]]:
        """The pattern keys of a staged profile's stages (SuperBPE's two), else None."""
        if not self.profile.stage_patterns:
            return None
        return [settings_pattern(dict(self.recorded(), pattern=p)) for p in self.profile.stage_patterns]

    def __eq__(self, other):
        if not isinstance(other, TrainSettings):
            return NotImplemented
        return self._key() == other._key()

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        parent = self.parent
        if parent is not None:  # what an extension keeps of it (``extend.Parent``)
            parent = (tuple(parent.merges), tuple(parent.special_ids.items()), repr(parent.record))
        return (repr(self.profile), self._record, self.special_tokens, self.vocab_size, parent)

    def __repr__(self):
        fields = ", ".join("%s=%r" % kv for kv in self._record if kv[0] != "peer")
        return "TrainSettings(%s, special_tokens=%r, vocab_size=%r%s)" % (
            fields, self.special_tokens, self.vocab_size, ", parent=..." if self.parent else "",
        )  # fmt: skip


def _frozen(value):
    return tuple(value) if isinstance(value, list) else value


def resolve(
    profile: Union[str, Profile, None] = None,
    *,
    vocab_size: Optional[int] = None,
    special_tokens: Optional[Iterable[str]] = (),
    pattern: Optional[str] = None,
    unicode: Optional[str] = None,
    cut: Optional[str] = None,
    add_prefix_space: Optional[bool] = None,
    min_frequency: int = 0,
    initial_alphabet: Union[str, Iterable[str], None] = None,
    extend: Union[Model, Parent, None] = None,
    inherit_merges: Optional[int] = None,
    tie_rule: Optional[str] = None,
) -> TrainSettings:
    """The checked ``TrainSettings`` of these options (the trainers' keywords, same
    meaning and defaults); ValueError (or ``extend``'s TypeError) at the first bad
    one, in the module docstring's order.  ``inherit_merges`` without ``extend``
    is ignored, as the trainers always have."""
    profile = get_profile(profile)
    record = profile.settings(
        pattern=pattern,
        unicode=unicode,
        cut=cut,
        add_prefix_space=add_prefix_space,
        min_frequency=min_frequency,
        initial_alphabet=initial_alphabet,
        **({"tie_rule": tie_rule} if tie_rule is not None else {}),
    )
    parent = None
    if extend is not None:
        parent = load_parent(extend, inherit_merges)
        special_tokens = parent.with_specials(special_tokens or ())
    if vocab_size is None:
        specials = _checked_specials(special_tokens)
    else:
        vocab_size, specials = check_training_args(
            vocab_size, special_tokens, profile.minimum_vocab_size(special_tokens)
        )
    return TrainSettings(profile, record, specials, vocab_size, parent)


def check_training_args(
    vocab_size: int, special_tokens: Optional[Iterable[str]], minimum: Optional[int] = None
) -> Tuple[int, List[str]]:
    """Validated (vocab_size, special tokens without duplicates); ValueError if bad.

    ``minimum``: the smallest vocab size allowed (default: 256 bytes + special tokens)."""
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise ValueError("vocab_size must be an integer, got %r" % (vocab_size,))
    specials = _checked_specials(special_tokens)
    if minimum is None:
        minimum = 256 + len(specials)
    if vocab_size < minimum:
        raise ValueError(
            "vocab_size %d is below the minimum %d (256 bytes + %d special tokens)"
            % (vocab_size, minimum, len(specials))
        )
    return vocab_size, specials


def _checked_specials(special_tokens):
    """The special tokens in order without duplicates; ValueError for one that is not a non-empty str."""
    specials = []
    for t in special_tokens or ():
        if not isinstance(t, str) or not t:
            raise ValueError("special tokens must be non-empty strings, got %r" % (t,))
        if t not in specials:
            specials.append(t)
    return specials
