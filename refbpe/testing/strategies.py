"""Hypothesis strategies, one per class of input that has broken real BPE trainers.

Classes (``CLASSES``; the fuzzer names the one that found a failure):

    ties              few short words repeated equally often: many pairs share the top count
                      (a tie rule, or ties broken by hash-map order)
    overlapping-runs  ``aaaa``, ``abab``, ``aab`` runs: merges that overlap themselves
    long-pieces       one piece of 20-200 characters among short ones
    special-tokens    special tokens adjacent, repeated, cut in half, prefixes of one another
    whitespace        runs of every whitespace character (``\\r\\n``, ``\\x85``, U+3000, ...)
    unicode           recently assigned characters, emoji sequences, combining marks, astral planes
    contractions      ``'s 'LL 'Ve`` in every case, and near misses
    digits            digits of many scripts, runs of 1-5
    multi-document    documents joined by ``<|endoftext|>``
    random            atoms of every kind mixed
    model-tokens      (encoders) the model's own tokens joined, so merges meet and compete
    count-overflow    (``--counts``) word counts near 2^31, 2^32 and 2^63

A training case is a ``Corpus`` (text, vocab size, special tokens); the vocab
size asks for 1-30 merges, so each case trains in milliseconds and shrinks
fast.  Hypothesis shrinks lists to fewer atoms and each atom to the first of
its list, so the minimal failing inputs are short and readable.

Hypothesis is an optional dependency (``pip install 'refbpe[fuzz]'``): this
module imports without it, and each strategy raises ``ImportError`` saying so.
"""

from collections import namedtuple

from .atoms import (
    COMBINING,
    CONTRACTIONS,
    CONTRACTIONS_ANY_CASE,
    DIGITS,
    EMOJI,
    MARKS,
    NEWLINE_RUNS,
    NUMBERS,
    PUNCT,
    RECENT,
    SPECIAL_TOKENS,
    WHITESPACE,
    WORDS,
    WORDS_ANY_CASE,
)

st = None  # hypothesis.strategies once ``_load`` has imported it: the CLI starts without Hypothesis

__all__ = [
    "CLASSES",
    "COUNT_CLASSES",
    "Corpus",
    "ENCODE_CLASSES",
    "EOT",
    "available",
    "MISSING",
    "corpora",
    "texts",
    "word_counts",
]

MISSING = "refbpe fuzz needs Hypothesis: pip install 'refbpe[fuzz]'"
EOT = "<|endoftext|>"
CLASSES = (
    "ties",
    "overlapping-runs",
    "long-pieces",
    "special-tokens",
    "whitespace",
    "unicode",
    "contractions",
    "digits",
    "multi-document",
    "random",
)
COUNT_CLASSES = ("count-overflow",)
ENCODE_CLASSES = ("model-tokens",)
NEAR = (2**31, 2**32, 2**63)

Corpus = namedtuple("Corpus", "text vocab_size special_tokens")


def available():
    """True when Hypothesis is installed."""
    return _load()


def require_hypothesis():
    if not _load():
        raise ImportError(MISSING)


def _load():
    """Import Hypothesis's strategies as ``st`` on first use; False when it is not installed."""
    global st
    if st is None:
        try:
            from hypothesis import strategies
        except ImportError:  # the optional extra is not installed
            return False
        st = strategies
    return True


def _joined(atoms, max_size=12):
    return st.lists(atoms, max_size=max_size).map("".join)


def _ties():
    word = st.text(st.sampled_from("ab c\u00e9\u4e2d'"), min_size=1, max_size=4)
    return st.tuples(
        st.lists(word, min_size=1, max_size=5, unique=True),
        st.integers(1, 4),
        st.sampled_from(["", " ", "\n"]),
    ).map(lambda t: t[2].join(t[0] * t[1]))


def _runs():
    run = st.tuples(
        st.sampled_from(["a", "ab", "aab", "aba", "\u00e9", "\u4e2d", " ", "\n", "1"]), st.integers(1, 12)
    )
    return st.lists(run.map(lambda t: t[0] * t[1]), min_size=1, max_size=5).map(" ".join)


def _long():
    unit = st.sampled_from(["a", "ab", "x", "1", "!", " ", "\u4e2d", "\U0001f600", "\r\n"])
    long_piece = st.tuples(unit, st.integers(20, 200)).map(lambda t: t[0] * t[1])
    return st.tuples(_random(4), long_piece, _random(4)).map("".join)


def _specials_text(tokens):
    fragments = [t[: len(t) // 2] for t in tokens] + [t[len(t) // 2 :] for t in tokens]
    atoms = st.one_of(
        st.sampled_from(tokens),
        st.sampled_from(tokens).map(lambda t: t * 2),
        st.sampled_from(fragments),
        st.sampled_from(WORDS[:6] + [" ", "\n", "a"]),
    )
    return _joined(atoms, 16)


def _whitespace():
    return _joined(
        st.one_of(
            st.sampled_from(WHITESPACE),
            st.sampled_from(NEWLINE_RUNS),
            st.sampled_from(["\r\n", "\x85", "\u3000", " ", "  "]),
            st.sampled_from(WORDS[:6]),
        ),
        16,
    )


def _unicode():
    chars = st.characters(blacklist_categories=("Cs",))
    return _joined(
        st.one_of(
            st.sampled_from(RECENT),
            st.sampled_from(EMOJI),
            st.sampled_from(COMBINING + MARKS),
            st.text(chars, min_size=1, max_size=3),
            st.sampled_from(WORDS),
            st.sampled_from([" ", "\n"]),
        )
    )


def _contractions(any_case=True):
    return _joined(
        st.one_of(
            st.sampled_from(CONTRACTIONS_ANY_CASE if any_case else CONTRACTIONS),
            st.sampled_from(WORDS_ANY_CASE[:9]),
            st.sampled_from([" ", "  ", "\n"]),
        ),
        14,
    )


def _digits():
    return _joined(
        st.one_of(
            st.text(st.sampled_from(NUMBERS + list(DIGITS) + RECENT[5::2]), min_size=1, max_size=5),
            st.text(st.sampled_from("0123456789"), min_size=1, max_size=5),
            st.sampled_from([" ", "  ", "\n", "a", " x", ".", ","]),
        ),
        14,
    )


def _random(max_atoms=12):
    chars = st.characters(blacklist_categories=("Cs",))
    return _joined(
        st.one_of(
            st.sampled_from(WORDS),
            st.sampled_from(CONTRACTIONS),
            st.text(st.sampled_from(DIGITS), min_size=1, max_size=4),
            st.sampled_from(EMOJI),
            st.sampled_from(COMBINING),
            st.sampled_from(PUNCT),
            st.text(st.sampled_from(WHITESPACE + [" ", " ", "\n"]), min_size=1, max_size=4),
            st.text(chars, min_size=1, max_size=3),
        ),
        max_atoms,
    )


def texts(bug_class="random", pattern=None, tokens=None):
    """Strings of one class (``CLASSES``; special tokens appear as text in ``special-tokens``
    and ``multi-document``).  ``pattern``: a split pattern other than GPT-2's makes
    ``contractions`` try every case (they are case-insensitive there).  ``model-tokens``
    joins ``tokens`` (strs: a model's tokens, decoded)."""
    require_hypothesis()
    if bug_class == "model-tokens":
        return _joined(st.one_of(st.sampled_from(sorted(tokens or ["a"])), st.sampled_from([" ", "\n"])), 12)
    if bug_class == "special-tokens":
        return st.lists(st.sampled_from(SPECIAL_TOKENS), min_size=1, max_size=3, unique=True).flatmap(
            _specials_text
        )
    if bug_class == "multi-document":
        return st.lists(_random(6), min_size=1, max_size=4).map(EOT.join)
    if bug_class == "contractions":
        return _contractions(any_case=pattern not in (None, "gpt2"))
    makers = {
        "ties": _ties,
        "overlapping-runs": _runs,
        "long-pieces": _long,
        "whitespace": _whitespace,
        "unicode": _unicode,
        "digits": _digits,
        "random": _random,
    }
    if bug_class not in makers:
        raise ValueError("unknown class %r (expected one of %s)" % (bug_class, ", ".join(CLASSES)))
    return makers[bug_class]()


def _with_tokens(tokens, text_strategy, max_merges):
    return st.tuples(text_strategy, st.integers(1, max_merges)).map(
        lambda t: Corpus(t[0], 256 + len(tokens) + t[1], list(tokens))
    )


def corpora(bug_class="random", pattern=None, max_merges=30, special_tokens=None):
    """``Corpus(text, vocab_size, special_tokens)`` of one class.  ``special_tokens``:
    None draws them (none or ``<|endoftext|>``; several for ``special-tokens``)."""
    require_hypothesis()
    if bug_class == "special-tokens" and special_tokens is None:
        return st.lists(st.sampled_from(SPECIAL_TOKENS), min_size=1, max_size=3, unique=True).flatmap(
            lambda tokens: _with_tokens(tokens, _specials_text(tokens), max_merges)
        )
    if special_tokens is not None:
        return _with_tokens(list(special_tokens), texts(bug_class, pattern), max_merges)
    if bug_class == "multi-document":
        return _with_tokens([EOT], texts(bug_class, pattern), max_merges)
    return st.sampled_from([[], [EOT]]).flatmap(
        lambda tokens: _with_tokens(tokens, texts(bug_class, pattern), max_merges)
    )


def _count_near():
    return st.one_of(
        st.integers(1, 1000),
        st.tuples(st.sampled_from(NEAR), st.integers(-3, 3)).map(lambda t: t[0] + t[1]),
    )


def word_counts(max_words=6, max_merges=10):
    """``({pre-token bytes: count}, vocab_size)``: counts near 2^31, 2^32 and 2^63 among small
    ones, over short words of a few letters (so their pairs meet)."""
    require_hypothesis()
    word = st.text(st.sampled_from("abcd \u00e9"), min_size=2, max_size=5).map(lambda w: w.encode("utf-8"))
    counts = st.dictionaries(word, _count_near(), min_size=1, max_size=max_words)
    return st.tuples(counts, st.integers(1, max_merges)).map(lambda t: (t[0], 256 + t[1]))
