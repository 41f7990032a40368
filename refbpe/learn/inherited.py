"""Inherited merges replayed: a given merge list applied first, in its order, on the word table.

``refbpe.learn.extend`` continues a model from its merges, and SuperBPE's
stage 2 starts from stage 1's: ``merge.learn_merges`` applies those merges
whatever its rule would choose (``replay``), then its loop goes on from the
table they leave.  Each merge makes its token (the next id) even where its
pair does not occur, and is applied left to right, without overlap, as any
merge is (``step``).

Long words (``words_are_long``) are replayed on their pieces instead
(``replay_in_pieces``): cut wherever no inherited token spans two
neighbouring bytes, equal pieces counted together, the result the same.

Invariant: the list is well formed (``well_formed``: each merge makes a new
token out of tokens made before), so replaying it on any words makes the
same tokens with the same ids.

Cost: one merge step per inherited merge (no heap: the caller builds it from
the counts afterwards); on pieces, one pass over the words' bytes first and
the words' table laid out from the pieces' symbols after.
"""

from .step import StepTables, apply_merge
from .table import SEP, count_byte_pairs, link_pieces, link_words

__all__ = ["well_formed", "words_are_long", "replay_in_pieces", "replay"]

_NO_HEAP = float("inf")  # a floor no count reaches: ``collect_pushing`` pushes nothing
_LONG_WORD = 16


def well_formed(merges):
    """True when every merge makes a new token out of tokens made before.

    >>> well_formed([(b"a", b"b"), (b"ab", b"c")]), well_formed([(b"ab", b"c")])
    (True, False)
    """
    made = set(bytes([i]) for i in range(256))
    for a, b in merges:
        if a not in made or b not in made or a + b in made:
            return False
        made.add(a + b)
    return True


def words_are_long(word_counts):
    """True when the words average more than ``_LONG_WORD`` bytes: replaying on their
    pieces (``replay_in_pieces``) then pays; ordinary words are replayed where they are,
    the loop going on from that table (extending english_medium from 10,000 to 20,000:
    1.00 s -> 0.57-0.69 s, the replay alone 0.83 s -> 0.45-0.53 s, perf/extend.py).
    SuperBPE's stage-2 words average 45 bytes on english_small, pre-tokens 5-8."""
    total = 0
    for w in word_counts:
        total += len(w)
    return total > _LONG_WORD * len(word_counts)


def replay_in_pieces(word_counts, inherited, ids, token_bytes, shift, skip_absent):
    """(merges applied, the words' table after them): ``inherited`` replayed.

    An inherited merge only ever joins two symbols into one of the inherited
    tokens, so it never joins across a place in a word whose two bytes no
    inherited token holds side by side (``_spanned_bigrams``).  The words are
    cut at those places, equal pieces are counted together (``_pieces``) and
    the merges are replayed on the pieces (``replay``); each word is then its
    pieces' symbols end to end.  The result is what replaying on the whole
    words gives: every pair an inherited merge asks for lies inside a piece,
    so the pieces see the same pairs, counts and left-to-right order, and so
    the same merges are applied or left out.  SuperBPE's stage-2 words are
    whole stretches of a line that repeat little, while their pieces are
    about stage 1's words: perf/superbpe.py's merge phase (english_small,
    8,000 merges replayed) went from 4.8x the plain profile's to 3.0x.

    Cost: one pass over the words' bytes, then one merge step per inherited
    merge on the pieces, then the words' table laid out from the pieces'
    symbols (``table.link_pieces``).
    """
    spanned = _spanned_bigrams(inherited)
    piece_counts, word_pieces = _pieces(word_counts, spanned)
    sym, nxt, prv, freq = link_words(piece_counts.items(), ids)
    counts, where = count_byte_pairs(sym, freq, shift)
    step = StepTables(ids, sym.typecode)
    merges = replay(inherited, (sym, nxt, prv, freq, counts, where), token_bytes, shift, step, skip_absent)
    return merges, link_pieces(word_pieces, _symbols_of_pieces(piece_counts, sym, nxt), ids)


def _spanned_bigrams(inherited):
    """A table over ``left << 8 | right``: True where an inherited token holds byte
    ``left`` followed by byte ``right``."""
    spanned = [False] * 65536
    for left, right in inherited:
        token = left + right
        for i in range(1, len(token)):
            spanned[(token[i - 1] << 8) | token[i]] = True
    return spanned


def _pieces(word_counts, spanned):
    """({piece: summed count}, [(word's pieces, count)]): the words that can hold a
    pair cut wherever two neighbouring bytes are not ``spanned``; a word's pieces
    are their places in the table's order (ints: the rebuild looks them up by place)."""
    place, totals, word_pieces = {}, [], []
    for w, n in word_counts.items():
        if len(w) < 2 or n <= 0:
            continue
        pieces, start, left = [], 0, w[0]
        for i in range(1, len(w)):
            right = w[i]
            if not spanned[(left << 8) | right]:
                pieces.append(w[start:i])
                start = i
            left = right
        pieces.append(w[start:] if start else w)
        places = []
        for piece in pieces:
            k = place.get(piece)
            if k is None:
                k = place[piece] = len(totals)
                totals.append(n)
            else:
                totals[k] += n
            places.append(k)
        word_pieces.append((places, n))
    return dict(zip(place, totals)), word_pieces


def _symbols_of_pieces(piece_counts, sym, nxt):
    """[each piece's symbols] in the order of ``piece_counts``, read off the table
    ``table.link_words`` laid out for it (same order; a one-byte piece is not in the table)."""
    symbols, i = [], 1
    for piece, n in piece_counts.items():
        if len(piece) < 2 or n <= 0:
            symbols.append([piece[0]] if piece else [])
            continue
        out, j = [], i
        while sym[j] != SEP:
            out.append(sym[j])
            j = nxt[j]
        symbols.append(out)
        i += len(piece) + 1
    return symbols


def replay(inherited, state, token_bytes, shift, step, skip_absent=False):
    """Apply ``inherited`` merges in their order on the state; returns those applied.

    Each makes its token (the next id) even where its pair does not occur;
    under ``skip_absent`` a merge whose tokens were not made or whose pair never
    occurred (or was merged already) is left out instead, with no token.  No
    heap is kept: the caller builds it from the counts afterwards.  Cost: one
    merge step each.
    """
    sym, nxt, prv, freq, counts, where = state
    if not well_formed(inherited):
        raise ValueError("inherited merges must each make a new token out of tokens made before")
    id_of = {t: i for i, t in enumerate(token_bytes)}
    applied = []
    for left, right in inherited:
        if skip_absent and (left not in id_of or right not in id_of):
            continue
        a, b, z = id_of[left], id_of[right], len(token_bytes)
        p = (a << shift) | b
        if skip_absent and p not in counts:
            continue
        applied.append((left, right))
        token_bytes.append(left + right)
        id_of[left + right] = z
        slots = where.pop(p, None)
        if slots is None or counts.get(p, 0) <= 0:
            continue
        apply_merge(sym, nxt, prv, freq, slots, a, b, z, step)
        step.collect_pushing(counts, where, a, b, z, shift, None, _NO_HEAP, None)
        del counts[p]
    return applied
