"""Encoding and decoding with a trained (or GPT-2) vocabulary.

``encode`` splits on special tokens (longest first), pre-tokenizes each
stretch between them with the GPT-2 scanner, and turns each pre-token into ids
by applying the merges in creation order.  Merging the lowest-ranked adjacent
pair, one occurrence at a time from the left, is the same as applying each
merge to the whole pre-token in turn: a merge only creates pairs with the new
token, and those rank later than the merge that made it.

Ids: an ordinary token's bytes map to the smallest id holding them; a special
token maps to the largest id holding its bytes, and is appended at the next
free id when no id does (the CS336 rule).  The two differ only when a special
token's bytes equal a learned token's: the learned one is used inside text,
the special one where the special token is matched.

Pre-tokens repeat heavily, so their ids are cached (bounded).

``encode_iterable`` streams: it keeps back the text that more input could
still change (the last two pre-tokens, and any tail that may be the start of a
special token) and encodes the rest, so its memory is bounded by one chunk
plus the longest pre-token (plus a 64K-character batch, gathered so that a
stream of short lines is not scanned once per line).  Why two pre-tokens: a
piece's extent is decided by at most the two characters after it (a
contraction reads two ahead, a whitespace run checks the character after the
next), and every piece is at least one character long.
"""

import heapq

from .formats.gpt2 import read_gpt2, read_model_dir
from .pretokenize import piece_ends
from .specials import special_pattern, split_specials

__all__ = ["Tokenizer"]

# Pieces this long (bytes) or longer take the O(n log n) path: the crossover measured by
# perf/piece_lengths.py under PyPy is 96-128 bytes for English and random letters, 32-48 for Han.
_LONG_PIECE = 96

_CACHE_LIMIT = 1 << 18
_NO_MERGE = 1 << 62  # above every packed rank
_BATCH = 1 << 16  # characters gathered before a scan: bounds memory, amortises per-call work


class Tokenizer(object):
    """Byte-level BPE tokenizer with the CS336 ``Tokenizer`` interface."""

    def __init__(self, vocab, merges, special_tokens=None):
        self.vocab = dict(vocab)
        self.merges = [(bytes(a), bytes(b)) for a, b in merges]
        self.special_tokens = list(special_tokens or [])
        present = set(self.vocab.values())
        for token in self.special_tokens:
            if token.encode("utf-8") not in present:
                self.vocab[max(self.vocab, default=-1) + 1] = token.encode("utf-8")
                present.add(token.encode("utf-8"))
        self._id_of = {}
        largest = {}
        for i in sorted(self.vocab):
            self._id_of.setdefault(self.vocab[i], i)
            largest[self.vocab[i]] = i
        self._special_id = {t: largest[t.encode("utf-8")] for t in self.special_tokens}
        self._byte_id = [self._id_of.get(bytes([b])) for b in range(256)]
        self._ranks = self._merge_ranks()
        self._pattern = special_pattern(self.special_tokens)
        self._cache = {}  # pieces of 8 bytes or more -> ids
        self._small_cache = {}  # shorter pieces, under packed-int keys -> ids

    @classmethod
    def from_files(cls, vocab_path, merges_path, special_tokens=None):
        """Load GPT-2 format ``vocab.json`` and ``merges.txt``."""
        vocab, merges = read_gpt2(vocab_path, merges_path)
        return cls(vocab, merges, special_tokens)

    @classmethod
    def from_dir(cls, directory):
        """Load a directory written by ``refbpe train`` (special tokens included)."""
        vocab, merges, special_tokens = read_model_dir(directory)
        return cls(vocab, merges, special_tokens)

    def _merge_ranks(self):
        """{packed (left id, right id): rank << shift | merged id}.

        One int per pair: the smallest value is the lowest rank, and no tuple
        is built or unpacked per lookup.
        """
        self._shift = shift = max(16, (max(self.vocab, default=0) + 1).bit_length())
        ranks = {}
        for rank, (a, b) in enumerate(self.merges):
            try:
                left, right, merged = self._id_of[a], self._id_of[b], self._id_of[a + b]
            except KeyError:
                raise ValueError("merge %d (%r, %r) uses a token missing from the vocab" % (rank, a, b))
            ranks.setdefault((left << shift) | right, (rank << shift) | merged)
        return ranks

    def _encode_piece(self, piece):
        """Ids of one pre-token: lowest-ranked adjacent pair first.

        ``ranks[k]`` holds the merge of pair (k, k + 1); after a merge only
        its two neighbours are looked up again (measured under PyPy: half the
        time of rescanning every pair after each merge).  That is O(n) per
        merge, O(n^2) per piece; pieces of ``_LONG_PIECE`` bytes or more go to
        ``_encode_long_piece``, O(n log n).
        """
        byte_id = self._byte_id
        ids = [byte_id[b] for b in piece]
        if None in ids:
            raise ValueError("the vocab lacks a single-byte token needed for %r" % piece)
        if len(ids) >= _LONG_PIECE:
            return self._encode_long_piece(ids)
        table, shift = self._ranks, self._shift
        mask = (1 << shift) - 1
        none = _NO_MERGE
        ranks = [table.get((ids[k] << shift) | ids[k + 1], none) for k in range(len(ids) - 1)]
        while ranks:
            best, at = none, -1
            for k in range(len(ranks)):
                if ranks[k] < best:
                    best, at = ranks[k], k
            if at < 0:
                break
            ids[at] = best & mask
            del ids[at + 1]
            del ranks[at]
            if at > 0:
                ranks[at - 1] = table.get((ids[at - 1] << shift) | ids[at], none)
            if at < len(ranks):
                ranks[at] = table.get((ids[at] << shift) | ids[at + 1], none)
        return ids

    def _encode_long_piece(self, ids):
        """``_encode_piece`` for long pieces: merges by rank over a linked list, O(n log n).

        ``slots[v]`` lists the slots where the pair of packed rank ``v`` starts,
        and a heap holds the ranks that have slots.  Merges are done rank by
        rank, lowest first: a merge only makes pairs that contain its new token,
        which rank later, so no slot is ever added to the rank being done, and
        doing a whole rank at once is doing its pair's occurrences one at a
        time.  Its slots are sorted first, so overlapping occurrences
        (``a a a``) are merged leftmost first, as the loop of ``_encode_piece``
        does.  A merge kills the right slot (id -1), relinks, and lists the new
        pairs on its two sides.  Listed slots are not removed but checked when
        their rank comes: a slot is current when it is live and the pair there
        still has that rank (a slot's pair never comes back once it changed: a
        merge only lengthens the tokens on either side).

        Cost for n bytes: at most n - 1 merges, each O(1) plus two listings;
        sorting the lists and the heap of ranks, O(n log n).  Measured under
        PyPy (perf/adversarial.py's encode table): one heap entry per slot
        instead of per rank took twice the time.
        """
        table, shift = self._ranks, self._shift
        mask = (1 << shift) - 1
        n = len(ids)
        slots = {}
        for k in range(n - 1):
            v = table.get((ids[k] << shift) | ids[k + 1])
            if v is not None:
                _list_slot(slots, None, v, k)
        pending = list(slots)
        heapq.heapify(pending)
        nxt = list(range(1, n + 1))  # n: past the end
        prv = list(range(-1, n - 1))
        while pending:
            v = heapq.heappop(pending)
            at = slots.pop(v)
            at.sort()
            z = v & mask
            for i in at:
                left = ids[i]
                j = nxt[i]
                if left < 0 or j >= n or table.get((left << shift) | ids[j]) != v:
                    continue  # stale: this slot was merged, or its pair changed
                ids[i] = z
                ids[j] = -1
                r = nxt[j]
                nxt[i] = r
                if r < n:
                    prv[r] = i
                    w = table.get((z << shift) | ids[r])
                    if w is not None:
                        _list_slot(slots, pending, w, i)
                k = prv[i]
                if k >= 0:
                    w = table.get((ids[k] << shift) | z)
                    if w is not None:
                        _list_slot(slots, pending, w, k)
        return [t for t in ids if t >= 0]

    @staticmethod
    def _cached_form(ids):
        return ids[0] if len(ids) == 1 else ids

    def _encode_bytes(self, data, out, ends=None):
        """Append the ids of UTF-8 ``data`` (pieces ending at ``ends``) to ``out``.

        Short pieces are looked up in the cache under the packed-int key of
        ``pretokenize.count_pretokens``, built without slicing (measured under
        PyPy: ~1.4x faster than slicing and hashing ``bytes`` per piece).  A
        piece that is one token is cached as that int, not a list: one memory
        access fewer per lookup (~10%).
        """
        if ends is None:
            ends = piece_ends(data)
        small, cache = self._small_cache, self._cache
        append = out.append
        start = 0
        for end in ends:
            if end - start < 8:
                key = 1
                for p in range(start, end):
                    key = (key << 8) | data[p]
                ids = small.get(key)
                if ids is None:
                    ids = self._cached_form(self._encode_piece(data[start:end]))
                    if len(small) >= _CACHE_LIMIT:
                        small.clear()
                    small[key] = ids
            else:
                piece = data[start:end]
                ids = cache.get(piece)
                if ids is None:
                    ids = self._cached_form(self._encode_piece(piece))
                    if len(cache) >= _CACHE_LIMIT:
                        cache.clear()
                    cache[piece] = ids
            if type(ids) is int:
                append(ids)
            else:
                out.extend(ids)
            start = end

    def encode(self, text):
        """Token ids of ``text``."""
        out = []
        for segment, is_special in split_specials(text, self._pattern):
            if is_special:
                out.append(self._special_id[segment])
            else:
                self._encode_bytes(segment.encode("utf-8", "surrogatepass"), out)
        return out

    def encode_iterable(self, iterable):
        """Yield the ids of ``"".join(iterable)`` lazily, in bounded memory."""
        pending = []
        size = 0
        for chunk in iterable:
            pending.append(chunk)
            size += len(chunk)
            if size < _BATCH:
                continue  # many small chunks (lines): one scan per batch
            ids, rest = self._encode_final_part("".join(pending))
            pending, size = [rest], len(rest)
            for i in ids:
                yield i
        for i in self.encode("".join(pending)):
            yield i

    def _encode_final_part(self, text):
        """(ids of the longest prefix no continuation can change, the rest).

        The ids come from the pieces as scanned in context: re-scanning the
        prefix alone could end it differently (``"\n\n"`` at the end of a
        text is one piece, before a letter it is two).
        """
        out = []
        hold = self._special_prefix_start(text)
        cut = 0
        if self._pattern is not None:
            for m in self._pattern.finditer(text):
                if m.start() >= hold:
                    break
                if m.start() > cut:
                    self._encode_bytes(text[cut : m.start()].encode("utf-8", "surrogatepass"), out)
                out.append(self._special_id[m.group()])
                cut = m.end()
        if cut >= hold:
            return out, text[cut:]
        # No special token starts in text[cut:hold]; keep back its last two
        # pre-tokens, whose extent may depend on what follows.
        body = text[cut:hold].encode("utf-8", "surrogatepass")
        ends = piece_ends(body)
        if len(ends) <= 2:
            return out, text[cut:]
        final = ends[-3]
        self._encode_bytes(body, out, ends[:-2])
        done = len(body[:final].decode("utf-8", "surrogatepass"))
        return out, text[cut + done :]

    def _special_prefix_start(self, text):
        """Earliest index whose suffix is a proper prefix of a special token."""
        longest = max((len(t) for t in self.special_tokens), default=0)
        for start in range(max(0, len(text) - longest + 1), len(text)):
            tail = text[start:]
            if any(t.startswith(tail) and t != tail for t in self.special_tokens):
                return start
        return len(text)

    # -- decoding ---------------------------------------------------------

    def decode(self, ids):
        """Text of ``ids``; invalid UTF-8 becomes U+FFFD."""
        vocab = self.vocab
        try:
            data = b"".join([vocab[i] for i in ids])
        except KeyError as e:
            raise ValueError("unknown token id %r" % (e.args[0],))
        except TypeError:
            bad = next(i for i in ids if not isinstance(i, int) or i not in vocab)
            raise ValueError("unknown token id %r" % (bad,))
        return data.decode("utf-8", "replace")


def _list_slot(slots, pending, v, k):
    """List slot ``k`` under rank ``v``; a rank listed for the first time joins ``pending``."""
    at = slots.get(v)
    if at is None:
        slots[v] = [k]
        if pending is not None:
            heapq.heappush(pending, v)
    else:
        at.append(k)
