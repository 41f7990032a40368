"""``Model``: what every tokenizer format holds, and the special-token id rules.

A ``Model`` is ``vocab`` {id: bytes}, ``merges`` [(bytes, bytes)] in rank order,
``special_tokens`` [str], the ``format`` it was read as, and ``carries_ids``
(False when the file has no ids of its own and the refbpe layout was assumed),
and ``pattern``, the split pattern's name when the file itself records one.

Special tokens follow the CS336 rule: a special token's id is the largest id
holding its bytes, and one that no id holds is appended at the next free id.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple

__all__ = ["FORMATS", "FormatError", "Model", "build_vocab", "special_ids", "with_specials"]

FORMATS = ("gpt2", "hf", "tiktoken", "json")


def build_vocab(merges: Iterable[Tuple[bytes, bytes]], special_tokens: Iterable[str]) -> Dict[int, bytes]:
    """{id: bytes} in the refbpe id layout: the 256 bytes, then one id per merge, then the special tokens.

    Defined here, below ``train`` (which exports it too), so that a format can assume the layout.
    """
    vocab = {i: bytes([i]) for i in range(256)}
    for a, b in merges:
        vocab[len(vocab)] = a + b
    for t in special_tokens:
        vocab[len(vocab)] = t.encode("utf-8")
    return vocab


class FormatError(ValueError):
    """A file that is not (valid) in the format it was read as."""


class Model(object):
    """What any format holds: vocab {id: bytes}, merges, special tokens (``read_model`` returns one).

    Attributes: ``vocab``, ``merges`` in rank order, ``special_tokens``,
    ``format`` (one of ``FORMATS``), ``carries_ids`` (False when the file had
    no ids and the refbpe layout was assumed), ``path``, ``pattern`` (the split
    pattern's name when the file itself records one: hf, a ``Split``), and, set by
    ``refbpe.loader`` for a tiktoken encoding, ``by_rank`` (encode by its ranks),
    ``special_ids`` ({special token: id}) and ``encoding`` (its name, when read by one).  Cost: holding the
    given objects, O(1); ``id_of`` O(V log V) for V ids.

    >>> m = Model({i: bytes([i]) for i in range(256)}, [], ["<|endoftext|>"], "json")
    >>> m.special_tokens, m.format, m.id_of()[b"A"]
    (['<|endoftext|>'], 'json', 65)
    """

    def __init__(
        self,
        vocab: Dict[int, bytes],
        merges: List[Tuple[bytes, bytes]],
        special_tokens: Iterable[str],
        fmt: str,
        carries_ids: bool = True,
        path: Optional[str] = None,
        pattern: Optional[str] = None,
    ) -> None:
        self.vocab = vocab
        self.pattern = pattern  # the split pattern's name when the file records one (hf: a Split)
        self.merges = merges
        self.special_tokens = list(special_tokens)
        self.format = fmt
        self.carries_ids = carries_ids
        self.path = path
        self.by_rank = False  # encoded by tiktoken's rule (an encoding or ranks file: ``loader``)
        self.special_ids = None  # {special token: id} when the source gives ids of its own
        self.encoding = None  # the encoding's name when read by name (``loader``)

    def id_of(self) -> Dict[bytes, int]:
        """{bytes: smallest id}: the id an ordinary token's bytes get."""
        out = {}
        for i in sorted(self.vocab):
            out.setdefault(self.vocab[i], i)
        return out


def special_ids(vocab, special_tokens):
    """{special token: id}: the largest id holding its bytes (the CS336 rule)."""
    largest = {}
    for i in sorted(vocab):
        largest[vocab[i]] = i
    out = {}
    for t in special_tokens:
        if t.encode("utf-8") not in largest:
            raise FormatError("special token %r is not in the vocab" % (t,))
        out[t] = largest[t.encode("utf-8")]
    return out


def with_specials(vocab, special_tokens):
    """A copy of ``vocab`` with each missing special token appended (as Tokenizer does)."""
    vocab = dict(vocab)
    have = set(vocab.values())
    for t in special_tokens:
        b = t.encode("utf-8")
        if b not in have:
            vocab[max(vocab, default=-1) + 1] = b
            have.add(b)
    return vocab
