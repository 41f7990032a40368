"""The merge engine's candidate pair table (``candidates.count_candidate_pairs``): the pairs it
leaves out count less than its bound, the rest are tabled exactly, and training from it
equals training from the whole table, whether or not the merges reach under the bound."""

from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

from refbpe.learn import candidates, inherited
from refbpe.learn.candidates import count_candidate_pairs
from refbpe.learn.merge import learn_merges
from refbpe.learn.table import SEP, link_words
from refbpe.naive import naive_train_bpe_from_counts

words = st.dictionaries(
    st.binary(min_size=2, max_size=12).map(lambda w: bytes(b % 6 for b in w)), st.integers(1, 40), max_size=40
)


@settings(max_examples=examples(100), deadline=None)
@given(words, st.integers(0, 50), st.integers(0, 8))
def test_left_out_pairs_count_less_than_the_bound(table, wanted, least):
    sym, _, _, freq = link_words(table.items(), 300)
    full_counts, full_where = _every_pair(sym, freq)
    old = candidates._CANDIDATES
    candidates._CANDIDATES = least
    try:
        counts, where, below = count_candidate_pairs(sym, freq, 16, wanted)
    finally:
        candidates._CANDIDATES = old
    assert set(counts) == set(where) <= set(full_counts)
    for p, c in full_counts.items():
        if p in counts:
            assert counts[p] == c and list(where[p]) == list(full_where[p])
        else:
            assert c < below
    assert below & (below - 1) == 0  # a power of two


def _every_pair(sym, freq):
    """({pair: count}, {pair: [slots]}) of every pair of neighbouring slots, packed as the engine does."""
    counts, where = {}, {}
    for i in range(len(sym) - 1):
        if sym[i] != SEP and sym[i + 1] != SEP:
            p = (sym[i] << 16) | sym[i + 1]
            counts[p] = counts.get(p, 0) + freq[i]
            where.setdefault(p, []).append(i)
    return counts, where


@settings(max_examples=examples(100), deadline=None)
@given(words, st.integers(0, 60), st.sampled_from([(0, 0), (0, 1), (1, 0), (4096, 8)]))
def test_training_from_candidates_equals_the_oracle(table, n, kept):
    """Inherited merges (any prefix of the oracle's own) replayed on pieces, then the
    candidates: with none kept beyond the bound, the merges soon reach under it and
    the rest is tabled then."""
    oracle = naive_train_bpe_from_counts(table, 256 + n)[1]
    k = len(oracle) // 2
    old = inherited._LONG_WORD, candidates._CANDIDATES, candidates._CANDIDATES_PER_MERGE
    inherited._LONG_WORD = 0
    candidates._CANDIDATES, candidates._CANDIDATES_PER_MERGE = kept
    try:
        ours = learn_merges(table, n, inherited=oracle[:k])
    finally:
        inherited._LONG_WORD, candidates._CANDIDATES, candidates._CANDIDATES_PER_MERGE = old
    assert ours == oracle
