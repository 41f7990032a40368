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
merge whose pair occurs fewer times.

Why the tie rules are one engine: rustbpe's ids are refbpe's own, so its rule is
"smallest packed pair"; HF's ids differ from refbpe's only by a fixed renumbering
(``_hf_ranks``: a byte's HF id is its place in the layout, merge k's is the
layout size + k), so its rule is the smallest pair under that renumbering.  The
merge engine compares one precomputed int per heap entry (``merge._IdEntry``).

One HF rule is not modelled: when a merge makes a string already in the vocab
(two merges spelling the same token, or a special token's text), HF reuses the
old id and its later counts depart from textbook BPE.  ``HFProfile.layout``
raises ``ProfileLimit`` at that merge instead of guessing.

Cost: the layout and checks are linear in the vocab; training cost is the
engine's (``merge``).
"""

from .formats.bytemap import bytes_to_unicode
from .merge import learn_merges, merges_possible
from .pretokenize.patterns import get_pattern, pattern_key

__all__ = [
    "Profile",
    "ProfileLimit",
    "get_profile",
    "profile_names",
    "settings_pattern",
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

    name = None
    peer = None  # (distribution name, version proven against), or None
    tie = "bytes"  # the merge engine's tie rule (``merge._entry_maker``)
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
    ):
        """The full settings of a run (a dict; defaults filled in), checked."""
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
        return {
            "profile": self.name,
            "peer": self.peer_label(),
            "pattern": pattern,
            "unicode": split.unicode,
            "sequences": cut,
            "add_prefix_space": bool(add_prefix_space),
            "min_frequency": min_frequency,
            "initial_alphabet": _alphabet_bytes(initial_alphabet),
        }

    def train_counted(self, word_counts, vocab_size, special_tokens, settings, progress=None, trace=None):
        """(vocab {id: bytes}, merges) in this profile's id layout; ``trace``: as ``learn_merges``'s."""
        wanted = vocab_size - 256 - len(special_tokens)
        merges = learn_merges(
            word_counts, wanted, progress, self.tie, max(1, settings["min_frequency"]), trace
        )
        vocab = {i: bytes([i]) for i in range(256)}
        for a, b in merges:
            vocab[len(vocab)] = a + b
        for t in special_tokens:
            vocab[len(vocab)] = t.encode("utf-8")
        return vocab, merges

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
    default_pattern = "llama3"
    default_unicode = "16.0.0"  # its regex crate's, probed: tests/unicode_probe.py


class HFProfile(Profile):
    name = "hf"
    peer = ("tokenizers", "0.23.3")
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
        for word, n in word_counts.items():
            if n > 0:
                present.update(word)
        for c in sorted(_BYTE_TO_CHAR[b] for b in present):
            ids.setdefault(c, len(ids))
        return ids

    def train_counted(self, word_counts, vocab_size, special_tokens, settings, progress=None, trace=None):
        ids = self.layout(word_counts, special_tokens, settings["initial_alphabet"])
        base = len(ids)
        wanted = min(max(0, vocab_size - base), merges_possible(word_counts))
        ranks = [ids.get(_BYTE_TO_CHAR[b], 0) for b in range(256)] + list(range(base, base + wanted))
        merges = learn_merges(word_counts, wanted, progress, ranks, max(1, settings["min_frequency"]), trace)
        vocab = {}
        for text, i in ids.items():
            vocab[i] = text.encode("utf-8") if i < len(special_tokens) else bytes([_CHAR_TO_BYTE[text]])
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
        return vocab, merges

    def merges_wanted(self, word_counts, vocab_size, special_tokens, settings):
        return max(
            0, vocab_size - len(self.layout(word_counts, special_tokens, settings["initial_alphabet"]))
        )


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


PROFILES = {p.name: p for p in (CS336Profile(), RustbpeProfile(), HFProfile())}


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
