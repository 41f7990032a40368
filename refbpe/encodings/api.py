"""``Encoding``: tiktoken's ``Encoding`` (0.14) on refbpe's engine, and its encodings by name.

    enc = refbpe.get_encoding("cl100k_base")
    enc.encode("hello world")                        # [15339, 1917]
    enc.encode("<|endoftext|>")                      # ValueError: a special token in user text
    enc.encode("<|endoftext|>", allowed_special="all")  # [100257]

Built in memory (a rank is an id; the split pattern here is GPT-2's)::

>>> ranks = {bytes([b]): b for b in range(256)}
>>> ranks.update({b"lo": 256, b"low": 257, b" low": 258})
>>> enc = Encoding("tiny", pat_str=R50K_PAT_STR, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 259})
>>> enc.encode("low low<|endoftext|>", allowed_special="all"), enc.n_vocab
([257, 258, 259], 260)
>>> enc.decode([257, 258]), enc.decode_tokens_bytes([257, 258])
('low low', [b'low', b' low'])

The constructor, attributes, methods, defaults, exceptions and pickling are
tiktoken's; the ids are tiktoken's on every ``str`` (surrogates repaired as
tiktoken repairs them: pairs joined, lone ones U+FFFD) and, through
``_encode_bytes``, on every byte string.  The engine is ``Tokenizer`` in its
rank mode (``Tokenizer.from_ranks``), the one the CS336 ``Tokenizer`` and
``Tokenizer.from_tiktoken`` use.

Defaults, as tiktoken's: ``encode`` raises ValueError when the text holds a
special token that is not allowed (``allowed_special`` = none,
``disallowed_special`` = every special token not allowed); decoding an
unknown id raises KeyError, an id that is not a non-negative int below 2**32
TypeError or OverflowError.  ``*_batch`` methods run in forked processes
(``batch``), not threads.  ``encode_with_unstable`` returns its completions
sorted (tiktoken's come in the order of a hash set).  What still differs is
listed in docs/tiktoken.md ("Switching from tiktoken").

Encodings by name (``get_encoding``): the names of ``list_encoding_names()``,
defined in ``formats.registry``, their files found or fetched and checked by
``registry.encoding_files`` (``r50k_base``, whose ranks are GPT-2's, falls back
on ``gpt2``'s files).  Their split reads tiktoken's Unicode version
(``registry.TIKTOKEN_UNICODE``), as does an ``Encoding`` built with the
``pat_str`` of a named encoding.  A loaded encoding is kept and shared, and
pickles by its name, as tiktoken's do.

Cost: building an encoding is O(total token length) (the engine's pair table
holds every split of every token into two tokens: seconds for cl100k_base
under CPython, see docs/tiktoken.md for the figure and its command); encoding
is the engine's.
"""

from __future__ import annotations

import bisect
import functools
import operator
import threading
from typing import AbstractSet, Any, Collection, Dict, List, Literal, Optional, Sequence, Set, Tuple, Union

import regex

from ..encode.batch import check_num_threads, map_texts
from ..encode.tokenizer import Tokenizer
from ..loader import read_encoding
from ..pretokenize.patterns import Pattern, get_pattern, pattern_names
from ..specials import special_pattern
from .registry import KNOWN_ENCODINGS, TIKTOKEN_UNICODE

__all__ = ["Encoding", "get_encoding", "list_encoding_names", "encoding_definition"]

# tiktoken's text of GPT-2's pattern (equivalent to refbpe's ``gpt2``, written for speed)
R50K_PAT_STR = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

AllowedSpecial = Union[Literal["all"], AbstractSet[str]]
DisallowedSpecial = Union[Literal["all"], Collection[str]]

_NAMES = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]
_EXPLICIT_N_VOCAB = {"gpt2": 50257, "r50k_base": 50257, "p50k_base": 50281}
_RANK_END = 1 << 32  # tiktoken's ids are u32


_LARGEST_RANK = (1 << 32) - 1  # tiktoken's ranks are Rust u32
_COMPLETIONS_KEPT = 16  # distinct unstable endings whose completions an Encoding keeps


def _check_ids(what, table):
    """A ``ValueError`` naming the first entry of ``table`` {token: id} whose id is outside
    0..2**32-1 (tiktoken refuses those too; an id of -1 would come back as -1)."""
    if not table or 0 <= min(table.values()) and max(table.values()) <= _LARGEST_RANK:
        return
    for token, r in table.items():
        if not 0 <= r <= _LARGEST_RANK:
            raise ValueError("%s: %r has id %r; ids are integers 0..%d" % (what, token, r, _LARGEST_RANK))


class Encoding(object):
    """tiktoken's ``Encoding``: a name, a split pattern, mergeable ranks and special tokens.

    >>> ranks = {bytes([b]): b for b in range(256)}
    >>> ranks.update({b"lo": 256, b"low": 257, b" low": 258})
    >>> enc = Encoding("tiny", pat_str=R50K_PAT_STR, mergeable_ranks=ranks, special_tokens={"<|eot|>": 259})
    >>> enc.encode("low low<|eot|>", allowed_special="all"), enc.decode([257, 258])
    ([257, 258, 259], 'low low')

    Building it is O(total length of the tokens); encoding costs the engine's
    (``Tokenizer``: O(n log n) per pre-token of n bytes at worst).
    """

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: Dict[bytes, int],
        special_tokens: Dict[str, int],
        explicit_n_vocab: Optional[int] = None,
    ) -> None:
        """``mergeable_ranks`` {token bytes: rank}, the rank being the id; ``special_tokens``
        {str: id}; ``explicit_n_vocab``, when given, is checked against both (AssertionError)."""
        _check_ids("mergeable_ranks", mergeable_ranks)
        _check_ids("special_tokens", special_tokens)
        self.name = name
        self._pat_str = pat_str
        self._mergeable_ranks = mergeable_ranks
        self._special_tokens = special_tokens
        self.max_token_value = max(max(mergeable_ranks.values()), max(special_tokens.values(), default=0))
        if explicit_n_vocab:
            assert len(mergeable_ranks) + len(special_tokens) == explicit_n_vocab
            assert self.max_token_value == explicit_n_vocab - 1
        self._special_token_values = set(special_tokens.values())
        self._core = Tokenizer.from_ranks(mergeable_ranks, special_tokens, pattern=split_pattern(pat_str))
        self._decoder = _decoder_list(mergeable_ranks, special_tokens, self.max_token_value)
        self._sorted_token_bytes = sorted(mergeable_ranks)
        self._allowed_patterns = {}
        self._completion_cache = {}  # unstable bytes -> completions: a text often ends as the last did

    def __repr__(self) -> str:
        return "<Encoding %r>" % (self.name,)

    # -- encoding ----------------------------------------------------------------

    def encode_ordinary(self, text: str) -> List[int]:
        """Ids of ``text``, special tokens taken as text.

        gpt2: ``enc.encode_ordinary("hello world")`` is ``[31373, 995]``
        """
        return self._core.encode_matching(text, None)

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> List[int]:
        """Ids of ``text``.  A special token in ``text`` is one id when allowed, raises
        ValueError when disallowed (the default for every one not allowed), and is
        text otherwise.

        gpt2: ``enc.encode("hello world")`` is ``[31373, 995]``
        gpt2: ``enc.encode("<|endoftext|>", allowed_special={"<|endoftext|>"})`` is ``[50256]``
        gpt2: ``enc.encode("<|endoftext|>", disallowed_special=())`` is ``[27, 91, 437, 1659, 5239, 91, 29]``
        """
        allowed_special = self._check_specials(text, allowed_special, disallowed_special)
        return self._core.encode_matching(text, self._allowed_pattern(allowed_special))

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> Any:
        """``encode`` as a read-only ``numpy`` array of ``uint32`` (numpy needed here only).

        Like tiktoken's, it raises UnicodeEncodeError on a ``str`` with surrogates."""
        import numpy as np

        allowed_special = self._check_specials(text, allowed_special, disallowed_special)
        text.encode("utf-8")
        ids = np.array(self._core.encode_matching(text, self._allowed_pattern(allowed_special)), np.uint32)
        ids.setflags(write=False)
        return ids

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> List[List[int]]:
        """``[encode_ordinary(t) for t in text]`` on up to ``num_threads`` processes (``batch``).

        gpt2: ``enc.encode_ordinary_batch(["hello world"])`` is ``[[31373, 995]]``
        """
        return map_texts(self.encode_ordinary, text, num_threads)

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> List[List[int]]:
        """``[encode(t, ...) for t in text]`` on up to ``num_threads`` processes (``batch``).

        gpt2: ``enc.encode_batch(["hello world"])`` is ``[[31373, 995]]``
        """
        if allowed_special == "all":
            allowed_special = self.special_tokens_set
        if disallowed_special == "all":
            disallowed_special = self.special_tokens_set - allowed_special
        if not isinstance(disallowed_special, frozenset):
            disallowed_special = frozenset(disallowed_special)
        encoder = functools.partial(
            self.encode, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        return map_texts(encoder, text, num_threads)

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> Tuple[List[int], List[List[int]]]:
        """``(stable ids, completions)``: the ids of ``text`` but its last pre-token (with the
        whitespace tokens before it when it starts with one), and every id sequence that a
        longer text starting with ``text`` may end with (tiktoken's own caveats apply: this
        API is unstable).  The completions are sorted.

        gpt2: ``enc.encode_with_unstable("hello fanta")[0]`` is ``[31373]``
        """
        allowed_special = self._check_specials(text, allowed_special, disallowed_special)
        data = text.encode("utf-8")
        ids = self._core.encode_matching(text, self._allowed_pattern(allowed_special))
        taken = self._core._last_piece_length(data, self._allowed_pattern(allowed_special, as_bytes=True))
        if not taken:
            return ids, []
        if self._core._is_space_token(ids[-taken]):
            while taken < len(ids) and self._core._is_space_token(ids[-taken - 1]):
                taken += 1
        unstable = self.decode_bytes(ids[len(ids) - taken :])
        stable = ids[: len(ids) - taken]
        return stable, sorted(list(c) for c in self._cached_completions(unstable))

    def _cached_completions(self, unstable):
        """``_completions(unstable)``, kept for the last ``_COMPLETIONS_KEPT`` distinct values: one
        call can encode 100,000 texts (a trailing space has as many completions as the tokens
        starting with one), and the next text usually ends with the same bytes."""
        cache = self._completion_cache
        found = cache.get(unstable)
        if found is None:
            if len(cache) >= _COMPLETIONS_KEPT:
                cache.clear()
            found = cache[unstable] = frozenset(self._completions(unstable))
        return found

    def _completions(self, unstable):
        """tiktoken's completions of the bytes ``unstable``, as a set of tuples."""
        completions = set()
        for token in self._tokens_starting_with(unstable):
            completions.add((self._mergeable_ranks[token],))
        for i in range(1, len(unstable)):
            prefix = unstable[:i]
            for token in self._tokens_starting_with(unstable[i:]):
                possibility = prefix + token
                try:
                    encoded = self.encode_ordinary(possibility.decode("utf-8"))
                except UnicodeDecodeError:
                    encoded = self._core._encode_piece(possibility)
                seq, size = [], 0
                for t in encoded:
                    seq.append(t)
                    size += len(self._decoder[t])
                    if size >= len(unstable):
                        break
                completions.add(tuple(seq))
        last = _last_char_length(unstable)
        if len(unstable) > 1 and last and len(unstable) > last:
            char = unstable[-last:].decode("utf-8")
            if char.isspace() and char not in "\x1c\x1d\x1e\x1f":  # Unicode White_Space
                head = self._core._encode_piece(unstable[:-last])
                completions.add(tuple(head + self._core._encode_piece(unstable[-last:])))
        return completions

    def _tokens_starting_with(self, prefix):
        tokens = self._sorted_token_bytes
        k = bisect.bisect_left(tokens, prefix)
        while k < len(tokens) and tokens[k].startswith(prefix):
            yield tokens[k]
            k += 1

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of a text or bytes that is one token (special tokens included); KeyError if none.

        gpt2: ``enc.encode_single_token("hello")`` is ``31373``
        """
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        token = self._mergeable_ranks.get(text_or_bytes)
        if token is not None:
            return token
        try:
            token = self._special_tokens.get(text_or_bytes.decode("utf-8"))
        except UnicodeDecodeError:
            token = None
        if token is None:
            raise KeyError(bytes(text_or_bytes))
        return token

    # -- decoding ----------------------------------------------------------------

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of ``tokens``.

        gpt2: ``enc.decode_bytes([31373, 995])`` is ``b'hello world'``
        """
        decoder = self._decoder
        if not isinstance(tokens, (list, tuple)):
            tokens = list(tokens)
        try:
            data = b"".join([decoder[t] for t in tokens])
            if data and min(tokens) < 0:
                raise IndexError
            return data
        except (IndexError, TypeError):
            for t in _token_ids(tokens):
                if t >= len(decoder) or decoder[t] is None:
                    raise KeyError("Invalid token for decoding: %d" % t)
            raise

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text of ``tokens``; bytes that are not UTF-8 as ``errors`` says (U+FFFD by default).

        gpt2: ``enc.decode([31373, 995])`` is ``'hello world'``
        """
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (special tokens included); KeyError if the id is unknown.

        gpt2: ``enc.decode_single_token_bytes(31373)`` is ``b'hello'``
        """
        token = _token_id(token)
        data = self._decoder[token] if token < len(self._decoder) else None
        if data is None:
            raise KeyError(str(token))
        return data

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]:
        """The bytes of each token.

        gpt2: ``enc.decode_tokens_bytes([31373, 995])`` is ``[b'hello', b' world']``
        """
        return [self.decode_single_token_bytes(token) for token in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> Tuple[str, List[int]]:
        """``(text, offsets)``: ``offsets[k]`` is the index in ``text`` of the first character
        holding bytes of token k.  Raises UnicodeDecodeError when the bytes are not UTF-8.

        gpt2: ``enc.decode_with_offsets([31373, 995])`` is ``('hello world', [0, 5])``
        """
        token_bytes = self.decode_tokens_bytes(tokens)
        chars = 0
        offsets = []
        for token in token_bytes:
            offsets.append(max(0, chars - (0x80 <= token[0] < 0xC0)))
            chars += sum(1 for c in token if not 0x80 <= c < 0xC0)
        return b"".join(token_bytes).decode("utf-8", errors="strict"), offsets

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> List[str]:
        """``[decode(t, errors) for t in batch]``.  Decoding is a join of bytes, cheaper than
        sending the ids to another process, so it runs here; ``num_threads`` is checked only."""
        check_num_threads(num_threads)
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> List[bytes]:
        """``[decode_bytes(t) for t in batch]``, in this process (see ``decode_batch``)."""
        check_num_threads(num_threads)
        return [self.decode_bytes(tokens) for tokens in batch]

    # -- the rest ----------------------------------------------------------------

    def token_byte_values(self) -> List[bytes]:
        """The bytes of every mergeable token, sorted."""
        return list(self._sorted_token_bytes)

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self) -> Set[str]:
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        assert isinstance(token, int)
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        """``max_token_value + 1`` (tiktoken keeps it for backwards compatibility)."""
        return self.max_token_value + 1

    def _encode_single_piece(self, text_or_bytes):
        """Ids of one piece, no split and no special tokens."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return list(self._core._encode_one(text_or_bytes))

    def _encode_only_native_bpe(self, text):
        """Ids of ``text`` split by ``regex`` with ``pat_str`` (no scanner)."""
        out = []
        for piece in regex.findall(self._pat_str, text):
            out.extend(self._encode_single_piece(piece))
        return out

    def _encode_bytes(self, text):
        """Ids of any bytes, special tokens taken as text; bytes that are not UTF-8 as tiktoken
        encodes them (``Tokenizer._encode_invalid_tail``)."""
        if not isinstance(text, bytes):
            raise TypeError("%r object is not an instance of 'bytes'" % type(text).__name__)
        return self._core.encode_utf8_ordinary(text)

    def _check_specials(self, text, allowed_special, disallowed_special):
        """The allowed set; raise ValueError if ``text`` holds a disallowed special token."""
        if allowed_special == "all":
            allowed_special = self.special_tokens_set
        if disallowed_special == "all":
            disallowed_special = self.special_tokens_set - allowed_special
        if disallowed_special:
            if not isinstance(disallowed_special, frozenset):
                disallowed_special = frozenset(disallowed_special)
            match = _special_token_regex(disallowed_special).search(text)
            if match:
                _raise_disallowed_special_token(match.group())
        return allowed_special

    def _allowed_pattern(self, allowed_special, as_bytes=False):
        """The engine's pattern for the allowed special tokens (cached per set)."""
        key = (frozenset(allowed_special), as_bytes)
        pattern = self._allowed_patterns.get(key, False)
        if pattern is False:
            if len(self._allowed_patterns) >= 128:
                self._allowed_patterns.clear()
            known = [t for t in key[0] if t in self._special_tokens]
            pattern = self._allowed_patterns[key] = special_pattern(known, as_bytes=as_bytes)
        return pattern

    # -- pickling: a loaded encoding by its name, any other by its definition ----

    def __getstate__(self):
        if self is _LOADED.get(self.name):
            return self.name
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }

    def __setstate__(self, value):
        if isinstance(value, str):
            self.__dict__ = get_encoding(value).__dict__
            return
        self.__init__(**value)


def _decoder_list(mergeable_ranks, special_tokens, max_token_value):
    """[bytes or None] indexed by id: a mergeable token first, then the first special token of an id."""
    decoder = [None] * (max_token_value + 1)
    for token, rank in mergeable_ranks.items():
        decoder[rank] = token
    for token, i in special_tokens.items():
        if decoder[i] is None:
            decoder[i] = token.encode("utf-8")
    return decoder


def _token_id(token):
    """``token`` as an id the way tiktoken takes one: TypeError if not an int, OverflowError if out of u32."""
    token = operator.index(token)
    if not 0 <= token < _RANK_END:
        raise OverflowError("out of range integral type conversion attempted")
    return token


def _token_ids(tokens):
    if isinstance(tokens, str):
        raise TypeError("Can't extract `str` to `Vec`")
    return [_token_id(t) for t in tokens]


def _last_char_length(data):
    """Byte length of the UTF-8 character ``data`` ends with, or 0 when it ends with no whole one."""
    for n in range(1, min(4, len(data)) + 1):
        if not 0x80 <= data[-n] < 0xC0:
            try:
                data[-n:].decode("utf-8")
                return n
            except UnicodeDecodeError:
                return 0
    return 0


@functools.lru_cache(maxsize=128)
def _special_token_regex(tokens):
    return regex.compile("(%s)" % "|".join(regex.escape(token) for token in tokens))


def _raise_disallowed_special_token(token):
    raise ValueError(
        "Encountered text corresponding to disallowed special token %r.\n"
        "If you want this text to be encoded as a special token, "
        "pass it to `allowed_special`, e.g. `allowed_special={%r, ...}`.\n"
        "If you want this text to be encoded as normal text, disable the check for this token "
        "by passing `disallowed_special=(enc.special_tokens_set - {%r})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
        % (token, token, token)
    )


# -- split patterns ---------------------------------------------------------------


def split_pattern(pat_str: str) -> Pattern:
    """The engine's ``Pattern`` for a tiktoken ``pat_str``: a named scanner when the text is
    one refbpe knows, else the ``regex`` module on ``pat_str`` (which must then match every
    character: tiktoken drops what it does not match, refbpe raises ValueError)."""
    known = {get_pattern(name).regex: name for name in pattern_names()}
    known[R50K_PAT_STR] = "gpt2"
    if pat_str in known:
        return get_pattern(known[pat_str], TIKTOKEN_UNICODE)
    compiled = regex.compile(pat_str)

    def piece_ends(data):
        text = data.decode("utf-8")
        ends, at, pos = [], 0, 0
        for m in compiled.finditer(text):
            if m.start() != pos:
                raise ValueError("pat_str %r does not match %r" % (pat_str, text[pos : m.start()]))
            at += len(m.group().encode("utf-8"))
            pos = m.end()
            ends.append(at)
        if pos != len(text):
            raise ValueError("pat_str %r does not match %r" % (pat_str, text[pos:]))
        return ends

    return Pattern("pat_str", pat_str, piece_ends)


# -- encodings by name ------------------------------------------------------------

_LOADED = {}
_LOCK = threading.RLock()


def list_encoding_names() -> List[str]:
    """The names ``get_encoding`` knows (tiktoken's, in its order); O(1).

    >>> list_encoding_names()[:2], "cl100k_base" in list_encoding_names()
    (['gpt2', 'r50k_base'], True)
    """
    return list(_NAMES)


def get_encoding(encoding_name: str) -> Encoding:
    """The encoding called ``encoding_name``, loaded once and shared; ValueError for an unknown
    name, an OSError (``FileUnavailable``) when its files cannot be had.  O(1) once loaded; loading is
    O(total length of the tokens).

    >>> get_encoding("cl100k")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: Unknown encoding cl100k...
    """
    if not isinstance(encoding_name, str):
        raise ValueError("Expected a string in get_encoding, got %s" % type(encoding_name))
    with _LOCK:
        if encoding_name not in _LOADED:
            _LOADED[encoding_name] = Encoding(**encoding_definition(encoding_name))
        return _LOADED[encoding_name]


def encoding_definition(name: str) -> Dict[str, Any]:
    """``Encoding``'s keyword arguments for the known encoding ``name``."""
    if name not in _NAMES:
        raise ValueError("Unknown encoding %s.\nKnown encodings: %s" % (name, ", ".join(_NAMES)))
    known = KNOWN_ENCODINGS[name]
    definition = {
        "name": name,
        "pat_str": R50K_PAT_STR if known["pattern"] == "gpt2" else get_pattern(known["pattern"]).regex,
        "mergeable_ranks": _mergeable_ranks(name),
        "special_tokens": dict(known["special_tokens"]),
    }
    if name in _EXPLICIT_N_VOCAB:
        definition["explicit_n_vocab"] = _EXPLICIT_N_VOCAB[name]
    return definition


def _mergeable_ranks(name):
    """{token bytes: rank} of a known encoding, from its files (``loader.read_encoding``)."""
    try:
        model = read_encoding(name, merges=False)
    except OSError:
        if name != "r50k_base":
            raise
        model = read_encoding("gpt2", merges=False)  # r50k_base's ranks are GPT-2's, in its files too
    special_ids = set(model.special_ids.values())
    return {token: i for i, token in model.vocab.items() if i not in special_ids}
