"""Trainer profiles: the conventions of CS336, rustbpe and HF tokenizers, one object each.

The three trainers learn the same BPE (the most frequent pair, merged left to
right without overlap, counts exact) and differ only in these rules:

    rule                cs336                  rustbpe                  hf
    tie (equal counts)  greatest (left bytes,  smallest (left id,       smallest (left id, right id),
                        right bytes)           right id)                ids in HF's layout
    id layout           bytes 0-255, merges,   the same                 special tokens, the alphabet (bytes
                        special tokens                                  that occur, plus initial_alphabet) by
                                                                        the code point of their byte-mapped
                                                                        character, merges
    vocab_size counts   256 + merges +         the same (rustbpe        special tokens + alphabet + merges
                        special tokens         has none; nanochat adds
                                               them after training)
    sequences           each file cut at the   the same                 documents (as cs336), or lines (each
                        special tokens                                  line with its newline, special tokens
                                                                        kept in the text: ``train([files])``)
    special tokens in   removed                removed                  removed in documents, text in lines
    the training text
    default pattern     gpt2                   llama3 (rustbpe's        gpt2 (ByteLevel's regex)
                                               GPT4_PATTERN)
    add_prefix_space    no                     no                       yes by default (ByteLevel's)
    peer proven against -                      rustbpe 0.1.0            tokenizers 0.23.3
    Unicode version     the latest (``regex``'s)  16.0 (probed)          16.0 (probed)

``min_frequency`` (all profiles, HF's meaning) stops training before the first
merge whose pair occurs fewer times; ``tie_rule`` (all but SuperBPE) replaces the
profile's own tie rule by another of ``tie_rules`` (ids in the profile's layout).

Why the tie rules are one engine: rustbpe's ids are refbpe's own, so its rule is
"smallest packed pair"; HF's ids differ from refbpe's only by a fixed renumbering
(``_hf_ranks``: a byte's HF id is its place in the layout, merge k's is the
layout size + k), so its rule is the smallest pair under that renumbering.  The
merge engine compares one precomputed int per heap entry (``heap._IdEntry``).

One HF rule is not modelled: when a merge makes a string already in the vocab
(two merges spelling the same token, or a special token's text), HF reuses the
old id and its later counts depart from textbook BPE.  ``HFProfile.layout``
raises ``ProfileLimit`` at that merge instead of guessing.

Cost: the layout and checks are linear in the vocab; training cost is the
engine's (``merge``).
"""

from ..formats.bytemap import bytes_to_unicode
from ..formats.model import build_vocab
from ..pretokenize.patterns import get_pattern, pattern_key
from ..pretokenize.unicode_tables import LATEST, unicode_version
from .extend import keep_parent_ids, load_parent
from .merge import learn_merges, merges_possible
from .tie_rules import check_tie_rule, engine_tie

__all__ = [
    "Profile",
    "ProfileLimit",
    "SuperBPEProfile",
    "get_profile",
    "profile_names",
    "settings_pattern",
    "settled",
]

DEFAULT_PROFILE = "cs336"

_BYTE_TO_CHAR = bytes_to_unicode()
_CHAR_TO_BYTE = {c: b for b, c in _BYTE_TO_CHAR.items()}


class ProfileLimit(ValueError):
    """The input needs a peer rule that refbpe does not reproduce (the message says which)."""


def settings_pattern(settings):
    """The pattern key (``patterns.pattern_key``) of a run's ``settings``: its pattern and Unicode version."""
    return get_pattern(settings["pattern"], settings.get("unicode")).key


class Profile(object):
    """A trainer's conventions.  Subclasses set the class attributes and ``layout``."""

    stage_patterns = None  # SuperBPE: one split pattern per stage, word counts a pair
    name = None
    peer = None  # (distribution name, version proven against), or None
    tie = "bytes"  # the merge engine's tie rule (``heap.entry_maker``)
    tie_rule = "greatest-bytes"  # the same rule as ``refbpe.verify.ties`` names it
    default_pattern = "gpt2"
    cuts = ("documents",)
    default_cut = "documents"
    default_add_prefix_space = False
    default_unicode = None  # the latest table (``unicode_tables.LATEST``) unless the peer's differs

    def peer_label(self):
        return "%s %s" % self.peer if self.peer else None

    def settings(
        self,
        pattern=None,
        cut=None,
        add_prefix_space=None,
        min_frequency=0,
        initial_alphabet=None,
        unicode=None,
        tie_rule=None,
    ):
        """The full settings of a run (a dict; defaults filled in), checked; ``tie_rule``
        (``tie_rules``' names) is recorded when it is not the profile's own."""
        cut = cut or self.default_cut
        if cut not in self.cuts:
            raise ValueError(
                "profile %s reads its input as %s, not %r" % (self.name, " or ".join(self.cuts), cut)
            )
        if add_prefix_space is None:
            add_prefix_space = self.default_add_prefix_space
        if add_prefix_space and not self.default_add_prefix_space:
            raise ValueError("add_prefix_space is an HF option (profile hf), not of profile %s" % self.name)
        if initial_alphabet and self.name != "hf":
            raise ValueError("initial_alphabet is an HF option (profile hf), not of profile %s" % self.name)
        split = get_pattern(
            pattern_key(pattern, unicode, "%s@%s" % (self.default_pattern, self.default_unicode or ""))
        )
        pattern = split.name
        if self.name == "hf" and pattern != "gpt2":
            raise ValueError(
                "profile hf splits with ByteLevel's regex (the gpt2 pattern); another pattern "
                "(a Split before ByteLevel) is not proven against HF, so not offered: %r" % pattern
            )
        if not isinstance(min_frequency, int) or isinstance(min_frequency, bool) or min_frequency < 0:
            raise ValueError("min_frequency must be a non-negative integer, got %r" % (min_frequency,))
        out = {
            "profile": self.name,
            "peer": self.peer_label(),
            "pattern": pattern,
            "unicode": split.unicode,
            "sequences": cut,
            "add_prefix_space": bool(add_prefix_space),
            "min_frequency": min_frequency,
            "initial_alphabet": _alphabet_bytes(initial_alphabet),
        }
        if tie_rule is not None and check_tie_rule(tie_rule) != self.tie_rule:
            out["tie_rule"] = tie_rule
        return out

    def engine_tie(self, settings, ranks=None):
        """The merge engine's tie for ``settings``' tie rule (``tie_rules.engine_tie``;
        ``ranks``: the ids of this profile's layout when they are not refbpe's)."""
        return engine_tie(settings.get("tie_rule") or self.tie_rule, ranks)

    def train_counted(
        self, word_counts, vocab_size, special_tokens, settings, progress=None, trace=None, *,
        extend=None, inherit_merges=None,
    ):  # fmt: skip
        """(vocab {id: bytes}, merges) in this profile's id layout; ``trace``: as ``learn_merges``'s.

        ``extend`` (a model path, ``Model`` or ``extend.Parent``; its first
        ``inherit_merges`` merges): the parent's merges are replayed first and
        its tokens keep their ids (``refbpe.learn.extend``)."""
        parent, special_tokens = _parent_and_specials(extend, inherit_merges, special_tokens)
        wanted = vocab_size - 256 - len(special_tokens)
        tie = self.engine_tie(settings)
        merges = learn_merges(
            word_counts,
            wanted,
            progress,
            tie,
            max(1, settings["min_frequency"]),
            trace,
            _inherited(parent, wanted),
        )
        vocab = self.vocab_of(merges, special_tokens, settings)
        return _with_parent_ids(vocab, special_tokens, parent), merges

    def vocab_of(self, merges, special_tokens, settings, word_counts=None):
        """{id: bytes}: the vocab a training (without ``extend``) that made ``merges``
        returns; None when it depends on the ``word_counts`` and they are not given."""
        return build_vocab(merges, special_tokens)

    def merges_wanted(self, word_counts, vocab_size, special_tokens, settings):
        return vocab_size - 256 - len(special_tokens)

    def minimum_vocab_size(self, special_tokens):
        return 256 + len(special_tokens)

    def __repr__(self):
        return "Profile(%r)" % self.name


class CS336Profile(Profile):
    name = "cs336"


class RustbpeProfile(Profile):
    name = "rustbpe"
    peer = ("rustbpe", "0.1.0")
    tie = "ids"  # rustbpe's ids are refbpe's: bytes, then merges in order
    tie_rule = "smallest-ids-refbpe-layout"
    default_pattern = "llama3"
    default_unicode = "16.0.0"  # its regex crate's, probed: tests/unicode_probe.py


class HFProfile(Profile):
    name = "hf"
    peer = ("tokenizers", "0.23.3")
    tie_rule = "smallest-ids"  # in HF's own layout (``_hf_ranks``)
    default_unicode = "16.0.0"  # its Oniguruma's, probed: tests/unicode_probe.py
    cuts = ("documents", "lines", "items")
    default_add_prefix_space = True

    def minimum_vocab_size(self, special_tokens):
        return 0

    def layout(self, word_counts, special_tokens, initial_alphabet):
        """{HF string: id} before any merge: special tokens, then the alphabet by code point."""
        ids = {}
        for t in special_tokens:
            ids.setdefault(t, len(ids))
        present = set(initial_alphabet or ())
        for word, n in word_counts.items() if len(present) < 256 else ():  # else no word adds a byte
            if n > 0:
                present.update(word)
        for c in sorted(_BYTE_TO_CHAR[b] for b in present):
            ids.setdefault(c, len(ids))
        return ids

    def train_counted(
        self, word_counts, vocab_size, special_tokens, settings, progress=None, trace=None, *,
        extend=None, inherit_merges=None,
    ):  # fmt: skip
        parent, special_tokens = _parent_and_specials(extend, inherit_merges, special_tokens)
        ids = self.layout(word_counts, special_tokens, settings["initial_alphabet"])
        base = len(ids)
        wanted = min(max(0, vocab_size - base), merges_possible(word_counts) + _parent_merges(parent))
        ranks = self.engine_tie(settings, _hf_ranks(ids, wanted))
        merges = learn_merges(
            word_counts, wanted, progress, ranks, max(1, settings["min_frequency"]), trace,
            _inherited(parent, wanted),
        )  # fmt: skip
        return _with_parent_ids(_hf_vocab(ids, merges, len(special_tokens)), special_tokens, parent), merges

    def vocab_of(self, merges, special_tokens, settings, word_counts=None):
        """As ``Profile.vocab_of``; the alphabet's ids need the word counts unless
        ``initial_alphabet`` holds every byte.  ``ProfileLimit`` as ``train_counted``."""
        alphabet = settings["initial_alphabet"]
        if word_counts is None and len(set(alphabet)) < 256:
            return None
        ids = self.layout(word_counts or {}, special_tokens, alphabet)
        return _hf_vocab(ids, merges, len(special_tokens))

    def merges_wanted(self, word_counts, vocab_size, special_tokens, settings):
        return max(
            0, vocab_size - len(self.layout(word_counts, special_tokens, settings["initial_alphabet"]))
        )


def _hf_vocab(ids, merges, n_specials):
    """{id: bytes} of HF's layout ``ids`` ({HF string: id}) followed by ``merges``;
    ``ProfileLimit`` at a merge that makes a string the vocab holds (HF reuses its id)."""
    vocab = {}
    for text, i in ids.items():
        vocab[i] = text.encode("utf-8") if i < n_specials else bytes([_CHAR_TO_BYTE[text]])
    for k, (a, b) in enumerate(merges):
        text = "".join(_BYTE_TO_CHAR[x] for x in a + b)
        if text in ids:
            raise ProfileLimit(
                "profile hf: merge %d makes %r, which HF's vocab already holds (id %d); HF then "
                "reuses that id and its counts leave textbook BPE, which refbpe does not reproduce"
                % (k, text, ids[text])
            )
        ids[text] = len(ids)
        vocab[ids[text]] = a + b
    return vocab


def _parent_and_specials(extend, inherit_merges, special_tokens):
    """(the ``extend.Parent`` or None, the special tokens: the parent's first)."""
    if extend is None:
        if inherit_merges is not None:
            raise ValueError("inherit_merges needs extend (the model whose merges are inherited)")
        return None, list(special_tokens)
    parent = load_parent(extend, inherit_merges)
    return parent, parent.with_specials(special_tokens)


def _parent_merges(parent):
    return 0 if parent is None else len(parent.merges)


def _inherited(parent, wanted):
    if parent is None:
        return ()
    if len(parent.merges) > wanted:
        raise ValueError(
            "vocab_size leaves room for %d merges, fewer than the %d inherited (see inherit_merges)"
            % (wanted, len(parent.merges))
        )
    return parent.merges


def _with_parent_ids(vocab, special_tokens, parent):
    return vocab if parent is None else keep_parent_ids(vocab, special_tokens, parent)


def _alphabet_bytes(initial_alphabet):
    """HF's ``initial_alphabet`` (characters of the byte-level mapping; each string's
    first character, as HF takes it; ``"bytelevel"``: all 256) as a sorted list of bytes."""
    if not initial_alphabet:
        return []
    if initial_alphabet == "bytelevel":
        return list(range(256))
    if all(isinstance(b, int) for b in initial_alphabet):  # already bytes (a recorded setting)
        return sorted(set(initial_alphabet))
    out = set()
    for s in initial_alphabet:
        if not isinstance(s, str) or not s:
            raise ValueError("initial_alphabet holds non-empty strings, got %r" % (s,))
        if s[0] not in _CHAR_TO_BYTE:
            raise ValueError(
                "initial_alphabet: %r is not a byte-level character (ByteLevel.alphabet())" % (s[0],)
            )
        out.add(_CHAR_TO_BYTE[s[0]])
    return sorted(out)


class _SuperwordRules(object):
    """SuperBPE stage 2's two departures from HF's trainer (``merge.learn_merges``' ``rules``)."""

    skip_absent = True  # an inherited merge of tokens or a pair the corpus never had is left out

    @staticmethod
    def refuse(token):
        """A token with ``": "`` (HF's ``":Ġ"``), or of more than four space-separated words."""
        return b": " in token or sum(1 for w in token.split(b" ") if w) > 4


def settled(word_counts):
    """A staged profile's counts with every table in hand: a stage's table may be
    a callable that waits for it (``train``'s counting while stage 1 trains)."""
    if isinstance(word_counts, tuple) and any(callable(t) for t in word_counts):
        return tuple(t() if callable(t) else t for t in word_counts)
    return word_counts


class SuperBPEProfile(HFProfile):
    """SuperBPE (Liu et al. 2025): ``transition`` stage-1 merges, then superwords.

    Stage 1 is HF's BPE (``HFProfile``'s tie rule and layout) on the counts of
    the stage-1 pre-tokenization; stage 2 lays out HF's ids again for the
    stage-2 counts (special tokens, their alphabet, then merges), replays the
    first ``transition`` stage-1 merges (leaving out those whose tokens or pair
    the stage-2 words never had), and continues under HF's rule, dropping for
    good a pair whose token ``_SuperwordRules.refuse``s.  Word counts are a pair
    (stage 1's, stage 2's), each counted as ``stage_patterns`` say.
    """

    name = "superbpe"
    default_unicode = None  # its own two scanners read the latest tables (``pretokenize.superbpe``)
    peer = None  # rules read from the official trainer's source (docs/superbpe.md); not run here
    cuts = ("lines", "documents", "items")
    default_cut = "lines"  # HF's train([files]): each line with its newline
    default_add_prefix_space = False
    default_pattern = "superbpe-stage1"
    stage_patterns = ("superbpe-stage1", "superbpe-stage2")

    def __init__(self, transition=None):
        if transition is not None and (
            not isinstance(transition, int) or isinstance(transition, bool) or transition < 0
        ):
            raise ValueError("transition must be a non-negative integer, got %r" % (transition,))
        self.transition = transition

    def settings(
        self, pattern=None, cut=None, add_prefix_space=None, min_frequency=0, initial_alphabet=None,
        unicode=None, tie_rule=None,
    ):  # fmt: skip
        if tie_rule not in (None, self.tie_rule):
            raise ValueError(
                "profile superbpe breaks ties as HF does (smallest-ids), not by %r" % (tie_rule,)
            )
        if pattern not in (None, self.default_pattern):
            raise ValueError("profile superbpe splits with its own two patterns, not %r" % (pattern,))
        if unicode is not None and unicode_version(unicode) != LATEST:
            raise ValueError("profile superbpe's patterns read the latest Unicode tables only (%s)" % LATEST)
        out = Profile.settings(self, None, cut, add_prefix_space, min_frequency, initial_alphabet)
        out["transition"] = self.transition
        out["stage2_pattern"] = self.stage_patterns[1]
        return out

    def train_counted(
        self, word_counts, vocab_size, special_tokens, settings, progress=None, trace=None, *,
        extend=None, inherit_merges=None,
    ):  # fmt: skip
        if extend is not None or inherit_merges is not None or trace is not None:
            raise ValueError("profile superbpe trains its own stage 1 (no extend, inherit_merges or trace)")
        stage1_counts = word_counts[0]  # stage 2's may still be being counted (``settled``, below)
        min_count = max(1, settings["min_frequency"])
        # 1. Stage 1: HF's BPE on whitespace-bounded words, the first ``transition`` merges.
        t = min(self._transition(), merges_possible(stage1_counts))
        ids = self.layout(stage1_counts, special_tokens, [])
        stage1 = learn_merges(stage1_counts, t, None, _hf_ranks(ids, t), min_count)
        _hf_vocab(ids, stage1, len(special_tokens))  # HF's id reuse: refused as under hf
        # 2. Stage 2: HF's layout for the superword counts, stage 1 replayed, then superwords.
        stage2_counts = settled(word_counts)[1]
        ids = self.layout(stage2_counts, special_tokens, [])
        wanted = max(0, vocab_size - len(ids))
        if wanted < len(stage1):
            raise ValueError(
                "vocab_size leaves room for %d merges after the stage-2 alphabet, fewer than the "
                "transition's %d" % (wanted, len(stage1))
            )
        wanted = min(wanted, len(stage1) + merges_possible(stage2_counts))  # tables sized by the work
        merges = learn_merges(
            stage2_counts, wanted, progress, _hf_ranks(ids, wanted), min_count, None, stage1, _SuperwordRules
        )
        return _hf_vocab(ids, merges, len(special_tokens)), merges

    def merges_wanted(self, word_counts, vocab_size, special_tokens, settings):
        return max(0, vocab_size - len(self.layout(settled(word_counts)[1], special_tokens, [])))

    def _transition(self):
        if self.transition is None:
            raise ValueError("profile superbpe needs a transition (the number of stage-1 merges kept)")
        return self.transition

    def __repr__(self):
        return "SuperBPEProfile(transition=%r)" % (self.transition,)


def _hf_ranks(ids, n):
    """Each byte's and each of ``n`` merges' place in HF's layout ``ids`` (the engine's tie)."""
    base = len(ids)
    return [ids.get(_BYTE_TO_CHAR[b], 0) for b in range(256)] + list(range(base, base + n))


PROFILES = {p.name: p for p in (CS336Profile(), RustbpeProfile(), HFProfile(), SuperBPEProfile())}


def profile_names():
    """The known names, the default first."""
    return [DEFAULT_PROFILE] + sorted(n for n in PROFILES if n != DEFAULT_PROFILE)


def get_profile(name=None):
    """The ``Profile`` called ``name`` (None: the default); a ``Profile`` is returned as is."""
    if isinstance(name, Profile):
        return name
    if name is None:
        name = DEFAULT_PROFILE
    if name not in PROFILES:
        raise ValueError("unknown profile %r (known: %s)" % (name, ", ".join(profile_names())))
    return PROFILES[name]
