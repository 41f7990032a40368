"""The word table: all unique words laid end to end in one linked symbol array.

    sym[i]       the token id in slot i; SEP in the slot before and after every
                 word, DEAD in a slot whose token was merged into its left neighbour
    nxt[i]       the next live slot of the same word (or the SEP after the word)
    prv[i]       the previous live slot (or the SEP before the word)
    freq[i]      the count in the corpus of the word that slot i belongs to
                 (all four are ``array``s; ``freq`` a list when a count needs
                 more than 64 bits)

    Example: words {b"ab": 3, b"abc": 1} (a, b, c for 97, 98, 99)
        slot   0    1  2  3    4  5  6  7
        sym    SEP  a  b  SEP  a  b  c  SEP
        freq   0    3  3  0    1  1  1  0
    Merging (a, b) -> z in slot 4 (``step.apply_merge``) sets sym[4] = z,
    sym[5] = DEAD, nxt[4] = 6, prv[6] = 4.

Invariant: a word's live slots are linked in order between its two SEPs; a
word that cannot hold a pair (length 0 or 1, count 0) is left out.  Here the
table is laid out (``link_words``, or ``link_pieces`` from pieces already
merged) and its byte pairs counted (``count_byte_pairs``: each pair's count
and its slots, increasing; ``candidates`` counts a table of any ids).

Cost: linear in the total length of the words; four ``array('i')`` entries per
symbol (16 B) where the values fit.
"""

from array import array

__all__ = ["SEP", "DEAD", "link_words", "link_pieces", "count_byte_pairs"]

SEP = -1  # the slot between two words
DEAD = -2  # a slot merged into its left neighbour


def _index_type(largest):
    """The array typecode for ints up to ``largest``, or None (a list: Python ints)."""
    for code in ("i", "l", "q"):
        if largest < 1 << (8 * array(code).itemsize - 1):
            return code
    return None


def _zeros(code, n):
    return array(code, bytes(n * array(code).itemsize))


def link_words(word_counts, ids):
    """(sym, nxt, prv, freq) for the words of length 2 or more, SEP-separated.

    ``word_counts`` is pairs ``(word, count)``, a word bytes or a list of ids.
    Words that cannot hold a pair (length 0 or 1, count 0) are left out; ``ids``
    bounds the token ids that will be stored in ``sym``.  The arrays are
    ``array('i')`` where the values fit: half the memory of lists under PyPy,
    and appends to them (the slot lists) were 3.5x faster in a micro-benchmark
    (20 million appends: 0.24 s against 0.85 s for a list).  ``freq`` is a list
    when a count needs more than 64 bits.
    """
    words = [(w, n) for w, n in word_counts if len(w) > 1 and n > 0]
    size = 1 + sum(len(w) + 1 for w, _ in words)
    sym, nxt, prv, freq = _empty_table(size, ids, max([n for _, n in words] or [0]))
    i = 1
    for w, n in words:  # filled in place: 1.7x as fast, cold (perf/micro.py merge-link-fill)
        for byte in w:
            sym[i] = byte
            freq[i] = n
            i += 1
        sym[i] = SEP
        i += 1
    return sym, nxt, prv, freq


def link_pieces(word_pieces, symbols, ids):
    """``link_words`` of the words ``[(piece places, count)]``, each its pieces'
    ``symbols`` end to end, written straight from the pieces: no list of
    symbols per word (SuperBPE's stage-2 words are most of the text).  Words of
    one symbol are left out, as there."""
    lengths = [len(s) for s in symbols]
    words, size, largest = [], 1, 0
    for places, n in word_pieces:
        length = 0
        for k in places:
            length += lengths[k]
        if length > 1:
            words.append((places, n))
            size += length + 1
            if n > largest:
                largest = n
    sym, nxt, prv, freq = _empty_table(size, ids, largest)
    i = 1
    for places, n in words:
        for k in places:
            for s in symbols[k]:
                sym[i] = s
                freq[i] = n
                i += 1
        sym[i] = SEP
        i += 1
    return sym, nxt, prv, freq


def _empty_table(size, ids, largest_count):
    """(sym, nxt, prv, freq) of ``size`` slots: ``sym`` all 0 but a SEP first, every
    slot linked to its neighbours; typecodes fit ``ids`` and ``largest_count``."""
    code = _index_type(max(size, ids) + 1)
    freq_code = _index_type(largest_count)
    sym, nxt, prv = _zeros(code, size), _zeros(code, size), _zeros(code, size)
    freq = _zeros(freq_code, size) if freq_code else [0] * size
    sym[0] = SEP
    for i in range(size):  # a fill loop: array(code, range(...)) took 4x as long under PyPy
        nxt[i] = i + 1
        prv[i] = i - 1
    nxt[size - 1] = size - 1  # never followed: the last slot is a SEP
    prv[0] = 0
    return sym, nxt, prv, freq


def count_byte_pairs(sym, freq, shift):
    """({pair: count}, {pair: array of slots, increasing}) of the initial words.

    Initial pairs are byte pairs, so they are tallied in flat lists indexed by
    ``left << 8 | right`` and packed into dicts at the end (one word of 20
    million bytes under PyPy: 2.6 s with dict lookups per slot, under 1 s so;
    perf/merge_engine.py --long times the whole phase).
    """
    tally, at = [0] * 65536, [None] * 65536
    code = sym.typecode
    left = SEP
    for i in range(len(sym)):
        right = sym[i]
        if left >= 0 and right >= 0:
            k = (left << 8) | right
            slots = at[k]
            if slots is None:
                slots = at[k] = array(code)
            slots.append(i - 1)
            tally[k] += freq[i]
        left = right
    counts, where = {}, {}
    for k in range(65536):
        if at[k] is not None:
            p = ((k >> 8) << shift) | (k & 255)
            counts[p] = tally[k]
            where[p] = at[k]
    return counts, where
