"""Encoding and decoding with a trained (or GPT-2) vocabulary.

``encode`` splits on special tokens (longest first), pre-tokenizes each
stretch between them with the split pattern's scanner (GPT-2's by default;
``pattern=`` names another, ``refbpe.patterns``), and turns each pre-token into
ids by applying the merges in creation order.  Merging the lowest-ranked adjacent
pair, one occurrence at a time from the left, is the same as applying each
merge to the whole pre-token in turn: a merge only creates pairs with the new
token, and those rank later than the merge that made it.

Ids: an ordinary token's bytes map to the smallest id holding them; a special
token maps to the largest id holding its bytes, and is appended at the next
free id when no id does (the CS336 rule).  The two differ only when a special
token's bytes equal a learned token's: the learned one is used inside text,
the special one where the special token is matched.

Pre-tokens repeat heavily, so their ids are cached (bounded).  A long CJK pre-token rarely
repeats, but its parts do: where no token of the vocab spans a place, the ids of the two
sides are the ids of the whole (``piece_cuts``), so such a piece is cut there and its parts
are encoded once each.

A tiktoken encoding (``load("cl100k_base")``, ``from_ranks``) encodes as tiktoken does
(``naive.naive_rank_encode`` is that rule written plainly): a pre-token that
is itself a token is that token, and otherwise the adjacent parts whose
concatenation has the lowest rank are joined first, leftmost on a tie.  That
can differ from applying the merge list: a token may be formed from two parts
that are not the merge defining it, and a piece may be a token that no merge
sequence reaches.  So the pair table then holds every split of every token
into two tokens (``_rank_pairs``), and the merging loop is the same.  Passing
``allowed_special`` or ``disallowed_special`` to ``encode`` gives tiktoken's
special-token rules (only allowed ones are matched; disallowed text raises
ValueError); without them ``encode`` is the CS336 one: every special token
is matched.

Every ``str`` and every byte string is encoded, as tiktoken encodes it
(``Encoding`` in ``tiktoken_api.py`` is tiktoken's API on this engine, built by
``from_ranks``).  A ``str`` holding surrogates, which UTF-8 cannot encode, is
first repaired by tiktoken's UTF-16 round trip: a pair becomes its character,
a lone surrogate U+FFFD (``encode_iterable`` holds back a final high surrogate
that the next chunk may pair).  Bytes that are not UTF-8 (``encode_utf8``):
the valid prefix is encoded, the tokens of its last pre-token (with the
whitespace tokens before it when it starts with whitespace) are taken back,
and their bytes with everything from the first invalid byte on are encoded
as one piece (``_encode_invalid_tail``).

The tokenizer is this façade over three bases, one module each: ``ranks``
(the pair tables), ``piece_ids`` (the piece encoders and their caches: the hot
loops) and ``streaming`` (``encode_iterable``, in bounded memory).  Its
constructors: ``load`` (any source ``refbpe.read_model`` takes: an encoding
name, a directory, a model file), ``from_model``, ``from_ranks``, and
``from_dir`` / ``from_tiktoken`` / ``from_files``, which call them.
"""

from __future__ import annotations

import os
from typing import (
    AbstractSet,
    Any,
    Collection,
    Dict,
    Iterable,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from .._util.lists import list_with_room
from ..formats.gpt2_files import read_gpt2
from ..formats.model import Model
from ..formats.tiktoken import merges_from_ranks
from ..loader import read_model
from ..pretokenize.patterns import Pattern, get_pattern, pattern_key
from ..specials import special_pattern, split_specials
from .piece_ids import PieceEncoder
from .ranks import RankTables
from .streaming import Streaming, utf16_repaired

__all__ = ["Tokenizer"]

# Texts of _ROOM_ALL_FROM bytes or more get room for one id per byte, at most _ROOM_MOST ids
# (512 MB of address space); shorter ones a quarter of their length (_ids_room says why).
_ROOM_ALL_FROM = 1 << 20
_ROOM_MOST = 1 << 26


def _ids_room(nbytes):
    """The room to reserve for the ids of ``nbytes`` bytes of text (``list_with_room``).

    A list that outgrows its room is copied into a block an eighth larger.  A quarter of the
    length is room enough for English (4.2-4.6 bytes per token), but GPT-2's mixed text runs 2.0
    bytes per token and its Russian 1.7, and their ids passed many times their size through the
    allocator.  From 1 MB on the room is one id per byte, the most a text can have (a token is a
    byte or more), so the list is never copied; under PyPy the room is address space until the
    ids are written.  Against a quarter's room: ``refbpe encode`` of mixed_multilingual 1.94-2.00
    -> 1.76-1.79 s, its peak RSS 673 -> 536 MB, the other corpora level (perf/encode_corpus.py
    whole); first 8 MB calls of GPT-2's code, Chinese and mixed text 7-24% faster, cl100k_base's
    Chinese and mixed text 5-8%, with a fifth to a half of the minor page faults; warm calls
    within 6% either way but GPT-2's Chinese and mixed text, 3-11% and 5% slower
    (perf/encode_first.py --trees, six runs; the CHANGELOG has each).  A shorter text keeps
    the quarter: a small list is made in the nursery with all its room, which a kept list
    would hold on to."""
    if nbytes < _ROOM_ALL_FROM:
        return nbytes >> 2
    return min(nbytes, _ROOM_MOST)


class Tokenizer(RankTables, PieceEncoder, Streaming):
    """Byte-level BPE tokenizer with the CS336 ``Tokenizer`` interface.

    ``vocab`` {id: bytes} and ``merges`` [(bytes, bytes)] as the trainers
    return them; ``special_tokens`` are matched before pre-tokenizing (one
    missing from the vocab is appended at the next free id); ``pattern`` names
    the split pattern (``get_pattern``; GPT-2's by default) and ``unicode`` the
    Unicode version its classes are read from (``unicode_tables``; the latest
    by default, or the version a pattern key names).

    Cost: building it, O(vocab + merges) plus a 65,536-entry table of byte
    pairs; ``encode``, one pass over the text plus, per distinct pre-token of
    L bytes, O(L^2) (O(L log L) from 192 bytes on), repeated pre-tokens being
    cached (and of a CJK pre-token, O(L) plus that per distinct part between
    places no token spans); ``decode``, O(output bytes).

    >>> from refbpe import train_from_texts
    >>> vocab, merges = train_from_texts(["low low lower<|endoftext|>lowest"], 260, ["<|endoftext|>"])
    >>> tok = Tokenizer(vocab, merges, ["<|endoftext|>"])
    >>> ids = tok.encode("lower low<|endoftext|>")
    >>> ids, [tok.vocab[i] for i in ids], tok.decode(ids)
    ([258, 114, 32, 257, 259], [b'lowe', b'r', b' ', b'low', b'<|endoftext|>'], 'lower low<|endoftext|>')
    """

    def __init__(
        self,
        vocab: Dict[int, bytes],
        merges: Iterable[Tuple[bytes, bytes]],
        special_tokens: Optional[Iterable[str]] = None,
        *,
        pattern: Union[str, Pattern, None] = None,
        unicode: Optional[str] = None,
    ) -> None:
        split = get_pattern(pattern, unicode)
        self.pattern = split.name
        self.unicode = split.unicode  # the Unicode version the split reads (``unicode_tables``)
        self._piece_ends = split.piece_ends
        self._context_bounded = split.context_bounded
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
        self._index_pairs()
        self._pattern = special_pattern(self.special_tokens)
        self._empty_caches()  # the piece caches (``piece_ids``)
        self._parts = {}  # parts of pieces (``_encode_in_parts``) -> ids
        self._cuts = None  # ``PieceCuts`` of the vocab, built when first needed
        self._chars = None  # ids of one-character parts by code point (``_extend_in_parts``)
        self._backtracker = None  # ``backtrack.Backtracker`` of the tables, built when first needed
        self._rank_of = None  # tiktoken's {token bytes: rank}, set by from_tiktoken

    @classmethod
    def load(
        cls,
        source: Union[str, os.PathLike],
        *,
        special_tokens: Union[Iterable[str], Dict[str, int], None] = None,
        pattern: Optional[str] = None,
        unicode: Optional[str] = None,
    ) -> Tokenizer:
        """The tokenizer of any model source ``refbpe.read_model`` takes: an encoding name
        (``cl100k_base``, ``gpt2``, ...), a directory, a model file.

        ``special_tokens``: a list adds special tokens the source lacks (at the next
        free id); a dict {token: id} replaces a tiktoken encoding's own.  ``pattern`` and
        ``unicode`` replace the split pattern and its Unicode version the source records
        (else GPT-2's, latest).  An encoding or ranks file encodes as tiktoken does, with
        tiktoken's ids (module docstring).  Cost: reading the source, O(file size).
        """
        given = () if special_tokens is None else special_tokens
        model = read_model(source, special_tokens=given, merges=False)
        return cls.from_model(model, pattern=pattern, unicode=unicode)

    @classmethod
    def from_model(
        cls, model: Model, *, pattern: Optional[str] = None, unicode: Optional[str] = None
    ) -> Tokenizer:
        """The tokenizer of a ``Model`` (``refbpe.read_model``): by its ranks when it is a
        tiktoken encoding (``model.by_rank``), else by its merges; ``pattern`` and
        ``unicode`` as in ``load``."""
        key = pattern_key(pattern, None, model.pattern)
        if not model.by_rank:
            return cls(model.vocab, model.merges, model.special_tokens, pattern=key, unicode=unicode)
        specials = model.special_ids
        special_ids = set(specials.values())
        ranks = {t: i for i, t in model.vocab.items() if i not in special_ids}
        tok = cls.from_ranks(ranks, specials, pattern=key, unicode=unicode)
        tok._merges = model.merges  # None: rebuilt from the ranks when first asked for (``merges``)
        return tok

    @classmethod
    def from_tiktoken(
        cls,
        path_or_name: Union[str, os.PathLike],
        special_tokens: Optional[Dict[str, int]] = None,
        *,
        pattern: Optional[str] = None,
        unicode: Optional[str] = None,
    ) -> Tokenizer:
        """A tiktoken encoding: ``cl100k_base``, ``o200k_base`` (by name, found as
        ``encodings.registry`` says) or a ranks file's path (``load`` of it).

        ``special_tokens`` ({token: id}) and ``pattern`` (a name) replace the
        known encoding's; ``unicode`` the Unicode version of its split (default
        tiktoken's, ``registry.TIKTOKEN_UNICODE``, for a known encoding).
        Ids equal tiktoken's (see the module docstring)."""
        given = () if special_tokens is None else dict(special_tokens)
        model = read_model(path_or_name, "tiktoken", given, merges=False)
        return cls.from_model(model, pattern=pattern, unicode=unicode)

    @property
    def merges(self) -> List[Tuple[bytes, bytes]]:
        """The merge list [(bytes, bytes)] in rank order.

        Of a ranks file (``from_tiktoken``) it is rebuilt from the ranks when
        first asked for (``formats.tiktoken.merges_from_ranks``; FormatError if a
        token is not the merge of two lower-ranked ones): encoding by ranks does
        not use it, and rebuilding it was half of o200k_base's load time
        (perf/encode_profile.py, its merges column: 1.36 of 2.64 CPU seconds).
        """
        if self._merges is None:
            self._merges = merges_from_ranks(self._rank_of)
        return self._merges

    @merges.setter
    def merges(self, merges: List[Tuple[bytes, bytes]]) -> None:
        self._merges = merges

    @classmethod
    def from_ranks(
        cls,
        mergeable_ranks: Dict[bytes, int],
        special_tokens: Optional[Dict[str, int]] = None,
        *,
        pattern: Union[str, Pattern, None] = None,
        unicode: Optional[str] = None,
    ) -> Tokenizer:
        """The engine of tiktoken's ``Encoding``: ranks {token bytes: rank} (a rank is an id)
        and {special token: id}; ids equal tiktoken's (see the module docstring).

        ``pattern``: a name or a ``Pattern``, ``unicode`` the Unicode version of its split
        (``Tokenizer``'s arguments).  No merge list is rebuilt (``merges``
        is empty; ``from_tiktoken``'s is rebuilt when first asked for).  O(total token length) to build."""
        specials = dict(special_tokens or {})
        vocab = {r: t for t, r in mergeable_ranks.items()}
        if len(vocab) != len(mergeable_ranks):
            raise ValueError("two mergeable tokens share a rank")
        for token, i in specials.items():
            if i in vocab and mergeable_ranks.get(vocab[i]) == i:
                raise ValueError("special token %r: id %d is already the token %r" % (token, i, vocab[i]))
            vocab.setdefault(i, token.encode("utf-8"))  # two specials may share an id; the first decodes
        tok = cls(vocab, [], None, pattern=pattern, unicode=unicode)
        tok.special_tokens = sorted(specials, key=specials.get)
        tok._special_id = specials
        tok._pattern = special_pattern(tok.special_tokens)
        tok._rank_of = dict(mergeable_ranks)
        tok._byte_id = [tok._rank_of.get(bytes([b])) for b in range(256)]
        tok._ranks = tok._rank_pairs()
        tok._index_pairs()
        return tok

    @classmethod
    def from_files(
        cls,
        vocab_path: Union[str, os.PathLike],
        merges_path: Union[str, os.PathLike],
        special_tokens: Optional[Iterable[str]] = None,
    ) -> Tokenizer:
        """Load GPT-2 format ``vocab.json`` and ``merges.txt``."""
        vocab, merges = read_gpt2(vocab_path, merges_path)
        return cls(vocab, merges, special_tokens)

    @classmethod
    def from_dir(
        cls,
        directory: Union[str, os.PathLike],
        *,
        pattern: Optional[str] = None,
        unicode: Optional[str] = None,
    ) -> Tokenizer:
        """Load a directory written by ``refbpe train`` (special tokens included);
        the split pattern is ``pattern``, else the one its manifest names, else
        GPT-2's; its Unicode version ``unicode``, else the manifest's, else the latest
        (``load`` of the directory)."""
        return cls.load(directory, pattern=pattern, unicode=unicode)

    def encode(
        self,
        text: str,
        *,
        allowed_special: Union[str, AbstractSet[str], None] = None,
        disallowed_special: Union[str, Collection[str], None] = None,
    ) -> List[int]:
        """Token ids of ``text``.

        Without keywords every special token in ``text`` is matched (CS336).
        With either keyword, tiktoken's rules: only ``allowed_special`` tokens
        (a set, or ``"all"``; default none) are matched, and text equal to a
        ``disallowed_special`` token (a collection, or ``"all"``, the default:
        every special token not allowed) raises ValueError.
        """
        pattern = self._pattern
        if allowed_special is not None or disallowed_special is not None:
            pattern = self._tiktoken_specials(text, allowed_special, disallowed_special)
        return self.encode_matching(text, pattern)

    def encode_matching(self, text: str, specials: Any) -> List[int]:
        """Ids of ``text`` where only what ``specials`` matches is a special token.

        ``specials``: ``specials.special_pattern`` of some of the special
        tokens, or None.  A ``str`` that UTF-8 cannot encode (surrogates) is
        repaired as tiktoken repairs it, then encoded (``streaming.utf16_repaired``).
        """
        try:
            return self._encode_text(text, specials)
        except UnicodeEncodeError:
            return self._encode_text(utf16_repaired(text), specials)

    def _encode_text(self, text, pattern):
        segments = [
            (s if special else s.encode("utf-8"), special) for s, special in split_specials(text, pattern)
        ]
        out = list_with_room(_ids_room(sum(len(s) for s, special in segments)))  # a special: 1 id, 1+ chars
        for segment, is_special in segments:
            if is_special:
                out.append(self._special_id[segment])
            else:
                self._encode_bytes(segment, out)
        return out

    def encode_utf8(self, data: bytes, segments: Optional[List[Tuple[int, int]]] = None) -> List[int]:
        """Token ids of UTF-8 ``data``: ``encode(data.decode("utf-8"))`` without the round trip.

        ``segments``, a list, gets ``(bytes, tokens)`` of each stretch of text
        between special tokens (one more entry than there are special tokens;
        ``encode_corpus`` adds them up into documents).  Bytes that are not
        UTF-8 are encoded as tiktoken's ``_encode_bytes`` does
        (``_encode_invalid_tail``), never an error.
        """
        pattern = self.__dict__.get("_bytes_pattern", False)
        if pattern is False:
            pattern = self._bytes_pattern = special_pattern(self.special_tokens, as_bytes=True)
        return self._encode_utf8(data, pattern, segments)

    def encode_utf8_ordinary(self, data: bytes) -> List[int]:
        """Token ids of any bytes, special tokens taken as text: tiktoken's ``Encoding._encode_bytes``."""
        return self._encode_utf8(data, None, None)

    def _encode_utf8(self, data, pattern, segments):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            return self._encode_invalid_tail(data, e.start, pattern, segments)
        return self._encode_valid_utf8(data, pattern, segments)

    def _encode_invalid_tail(self, data, valid, pattern, segments):
        """Ids of ``data`` whose first ``valid`` bytes are UTF-8 and the rest not: tiktoken's rule.

        The valid prefix is encoded as usual; then the tokens of its last
        pre-token (and, when that one is whitespace, of the whitespace tokens
        before it) are taken back, and their bytes with everything from the
        first invalid byte on are encoded as one piece (a piece that is a token
        is that token).  Pieces are cut in Unicode space, so bytes that are not
        UTF-8 cannot be; tiktoken treats them as a truncated last piece.
        """
        out = self._encode_valid_utf8(data[:valid], pattern, segments)
        taken = self._last_piece_length(data[:valid], pattern)
        if taken and self._is_space_token(out[-taken]):
            while taken < len(out) and self._is_space_token(out[-taken - 1]):
                taken += 1
        unstable = b"".join([self.vocab[i] for i in out[len(out) - taken :]]) + data[valid:]
        del out[len(out) - taken :]
        ids = self._encode_one(unstable)
        out.extend(ids)
        if segments is not None:
            nbytes, ntokens = segments[-1]
            segments[-1] = (nbytes + len(data) - valid, ntokens - taken + len(ids))
        return out

    def _last_piece_length(self, data, pattern):
        """How many tokens the last pre-token of valid UTF-8 ``data`` encodes to (0 after a special token)."""
        start = 0
        for m in pattern.finditer(data) if pattern is not None else ():
            start = m.end()
        ends = self._piece_ends(data[start:])
        if not ends:
            return 0
        first = start + (ends[-2] if len(ends) > 1 else 0)
        ids = self._encode_one(data[first:])
        return len(ids)

    def _is_space_token(self, i):
        special = self.__dict__.get("_special_ids")
        if special is None:
            special = self._special_ids = set(self._special_id.values())
        return i not in special and all(b in b" \n\t" for b in self.vocab[i])

    def _encode_valid_utf8(self, data, pattern, segments):
        out = list_with_room(_ids_room(len(data)))
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

    def encode_with_offsets(self, text: str) -> Tuple[List[int], List[int]]:
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

    def encode_ordinary(self, text: str) -> List[int]:
        """Token ids of ``text`` with special tokens treated as plain text (tiktoken's name)."""
        return self.encode(text, allowed_special=(), disallowed_special=())

    def _tiktoken_specials(self, text, allowed_special, disallowed_special):
        """The special-token pattern for tiktoken's rules; raise if a disallowed one is in ``text``."""
        known = set(self.special_tokens)
        if allowed_special == "all":
            allowed = known
        else:
            allowed = set(allowed_special or ())
        if disallowed_special is None or disallowed_special == "all":
            disallowed = known - allowed
        else:
            disallowed = set(disallowed_special)
        if disallowed:
            m = special_pattern(sorted(disallowed)).search(text)
            if m:
                raise ValueError(
                    "text contains the disallowed special token %r; pass allowed_special to encode it "
                    "as a special token, or disallowed_special=() to encode it as text" % m.group()
                )
        if allowed == known:
            return self._pattern
        return special_pattern(sorted(allowed & known))

    # -- decoding ---------------------------------------------------------

    def decode(self, ids: Sequence[int]) -> str:
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
