"""The merge engine's candidate pair table (``merge._count_candidate_pairs``): the pairs it
leaves out count less than its bound, the rest are tabled exactly, and training from it
equals training from the whole table, whether or not the merges reach under the bound."""

from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

from refbpe.learn import merge
from refbpe.learn.merge import SEP, _count_candidate_pairs, _link_words, learn_merges
from refbpe.naive import naive_train_bpe_from_counts

words = st.dictionaries(
    st.binary(min_size=2, max_size=12).map(lambda w: bytes(b % 6 for b in w)), st.integers(1, 40), max_size=40
)


@settings(max_examples=examples(100), deadline=None)
@given(words, st.integers(0, 50), st.integers(0, 8))
def test_left_out_pairs_count_less_than_the_bound(table, wanted, least):
    sym, _, _, freq = _link_words(table.items(), 300)
    full_counts, full_where = _every_pair(sym, freq)
    old = merge._CANDIDATES
    merge._CANDIDATES = least
    try:
        counts, where, below = _count_candidate_pairs(sym, freq, 16, wanted)
    finally:
        merge._CANDIDATES = old
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
def test_training_from_candidates_equals_the_oracle(table, n, candidates):
    """Inherited merges (any prefix of the oracle's own) replayed on pieces, then the
    candidates: with none kept beyond the bound, the merges soon reach under it and
    the rest is tabled then."""
    oracle = naive_train_bpe_from_counts(table, 256 + n)[1]
    k = len(oracle) // 2
    old = merge._LONG_WORD, merge._CANDIDATES, merge._CANDIDATES_PER_MERGE
    merge._LONG_WORD = 0
    merge._CANDIDATES, merge._CANDIDATES_PER_MERGE = candidates
    try:
        ours = learn_merges(table, n, inherited=oracle[:k])
    finally:
        merge._LONG_WORD, merge._CANDIDATES, merge._CANDIDATES_PER_MERGE = old
    assert ours == oracle
