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

from .formats.gpt2 import read_gpt2, read_model_dir
from .pretokenize import piece_ends
from .specials import special_pattern, split_specials

__all__ = ["Tokenizer"]

_CACHE_LIMIT = 1 << 15  # entries per cache generation (see _encode_bytes)
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
        self._old, self._small_old = {}, {}  # the previous generation of each

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
        time of rescanning every pair after each merge).
        """
        byte_id = self._byte_id
        ids = [byte_id[b] for b in piece]
        if None in ids:
            raise ValueError("the vocab lacks a single-byte token needed for %r" % piece)
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

        Each cache has two generations of at most ``_CACHE_LIMIT`` entries: a
        miss looks in the previous one before encoding, and a full cache
        becomes the previous one, so frequent pieces survive and memory stays
        bounded.  Measured under PyPy (CPU seconds of a second ``encode`` of
        the same 8 MB of english_medium, after a first): one generation of
        1 << 15, cleared when full, 0.59 s; two generations of 1 << 15, 0.40 s;
        one of 1 << 18, 0.36 s but 55 MB more per process.
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
                    ids = self._small_miss(key, data, start, end)
                    small = self._small_cache
            else:
                piece = data[start:end]
                ids = cache.get(piece)
                if ids is None:
                    ids = self._miss(piece)
                    cache = self._cache
            if type(ids) is int:
                append(ids)
            else:
                out.extend(ids)
            start = end

    def _small_miss(self, key, data, start, end):
        ids = self._small_old.get(key)
        if ids is None:
            ids = self._cached_form(self._encode_piece(data[start:end]))
        if len(self._small_cache) >= _CACHE_LIMIT:
            self._small_old, self._small_cache = self._small_cache, {}
        self._small_cache[key] = ids
        return ids

    def _miss(self, piece):
        ids = self._old.get(piece)
        if ids is None:
            ids = self._cached_form(self._encode_piece(piece))
        if len(self._cache) >= _CACHE_LIMIT:
            self._old, self._cache = self._cache, {}
        self._cache[piece] = ids
        return ids

    def encode(self, text):
        """Token ids of ``text``."""
        out = []
        for segment, is_special in split_specials(text, self._pattern):
            if is_special:
                out.append(self._special_id[segment])
            else:
                self._encode_bytes(segment.encode("utf-8", "surrogatepass"), out)
        return out

    def encode_utf8(self, data, segments=None):
        """Token ids of valid UTF-8 ``data``: ``encode(data.decode("utf-8"))`` without the round trip.

        ``segments``, a list, gets ``(bytes, tokens)`` of each stretch of text
        between special tokens (one more entry than there are special tokens;
        ``encode_corpus`` adds them up into documents).
        """
        out = []
        pattern = self.__dict__.get("_bytes_pattern", False)
        if pattern is False:
            pattern = self._bytes_pattern = special_pattern(self.special_tokens, as_bytes=True)
        pos = 0
        for m in pattern.finditer(data) if pattern is not None else ():
            before = len(out)
            if m.start() > pos:
                self._encode_bytes(data[pos : m.start()], out)
            if segments is not None:
                segments.append((m.start() - pos, len(out) - before))
            out.append(self._special_id[m.group().decode("utf-8")])
            pos = m.end()
        before = len(out)
        if pos < len(data):
            self._encode_bytes(data[pos:] if pos else data, out)
        if segments is not None:
            segments.append((len(data) - pos, len(out) - before))
        return out

    def encode_with_offsets(self, text):
        """``(ids, offsets)``: ``offsets[k]`` is the index in ``text`` of the character token k starts in.

        Byte-level tokens can split a character; one that starts inside a
        character gets that character's index (tiktoken's
        ``decode_with_offsets`` convention), so offsets never decrease.
        ``encode_with_offsets("héllo")`` with a token ``"\\xa9llo"`` after
        ``"h\\xc3"`` gives offsets ``[0, 1]``.  O(len(ids)) after a per-id table.
        """
        ids = self.encode(text)
        table = self.__dict__.get("_offset_table")
        if table is None:
            # id -> (characters started in the token, 1 if it starts inside one)
            table = self._offset_table = {
                i: (sum(1 for c in t if not 0x80 <= c < 0xC0), 1 if t and 0x80 <= t[0] < 0xC0 else 0)
                for i, t in self.vocab.items()
            }
        offsets = []
        chars = 0
        for i in ids:
            starts, inside = table[i]
            offsets.append(chars - inside if chars else 0)
            chars += starts
        return ids, offsets

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
