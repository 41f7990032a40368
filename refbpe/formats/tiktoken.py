"""tiktoken ranks files: write them, read them, and rebuild merges from ranks.

The file ``tiktoken.load.load_tiktoken_bpe`` reads: one ``base64(token) rank``
line per token, rank = id.  It holds no merges and no special tokens: the
merges are rebuilt from the ranks as tiktoken applies them (the token of rank
r splits into the two parts that byte-pair merging with ranks < r leaves),
and special tokens are given by the caller (or a refbpe manifest beside the
file) and take the ids after the largest rank.

Rebuilding costs O(L^2) per token of L bytes (``_byte_pair_merge`` rescans
the parts after each join); tokens are short (cl100k's longest is 128 bytes).
"""

import base64
import binascii

from ..atomic import chunked
from .model import FormatError, Model, special_ids, with_specials

__all__ = [
    "tiktoken_ranks_chunks",
    "tiktoken_special_tokens",
    "merges_from_ranks",
    "read_tiktoken",
]


def _check_ranks_follow_merges(vocab, merges):
    """tiktoken merges by the rank (id) of the merged bytes: the ids must grow
    with the merge order, and exceed the ids of both parts, or the file would
    mean other merges."""
    id_of = {}
    for i in sorted(vocab):
        id_of.setdefault(vocab[i], i)
    last = -1
    for k, (a, b) in enumerate(merges):
        r = id_of.get(a + b)
        if r is None or r <= last or id_of.get(a, r) >= r or id_of.get(b, r) >= r:
            raise FormatError(
                "merge %d (%r, %r): the vocab ids do not follow the merge order, so tiktoken ranks "
                "(= ids) cannot express these merges" % (k, a, b)
            )
        last = r


def tiktoken_ranks_text(vocab, merges, special_tokens):
    """The ranks file: ``base64(token) rank`` per token, rank = refbpe id.

    Special tokens are left out (tiktoken takes them separately: see
    ``tiktoken_special_tokens``); a byte string held by several ids is written
    once, with its smallest id.
    """
    return b"".join(tiktoken_ranks_chunks(vocab, merges, special_tokens)).decode("ascii")


def tiktoken_ranks_chunks(vocab, merges, special_tokens):
    """``tiktoken_ranks_text`` as ASCII chunks (base64 in C, no text formatting per token).
    The merges are checked first (FormatError), before anything is written."""
    special_bytes = {t.encode("utf-8") for t in special_tokens}
    vocab = with_specials(vocab, special_tokens)
    _check_ranks_follow_merges(vocab, merges)
    specials = set(special_ids(vocab, special_tokens).values())
    return chunked(_rank_lines(vocab, specials, special_bytes))


def _rank_lines(vocab, specials, special_bytes):
    seen = set()
    for i in sorted(vocab):
        b = vocab[i]
        if (i in specials and b in special_bytes) or b in seen:
            continue
        seen.add(b)
        yield base64.b64encode(b)
        yield b" %d\n" % i


def tiktoken_special_tokens(vocab, special_tokens):
    """{special token: id} for ``tiktoken.Encoding(special_tokens=...)``."""
    return special_ids(with_specials(vocab, special_tokens), special_tokens)


def _byte_pair_merge(ranks, piece, max_rank):
    """tiktoken's merging: join the adjacent parts whose bytes have the lowest
    rank below ``max_rank``, leftmost first, until none is left."""
    parts = [piece[i : i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best, best_at = None, -1
        for k in range(len(parts) - 1):
            r = ranks.get(parts[k] + parts[k + 1])
            if r is not None and r < max_rank and (best is None or r < best):
                best, best_at = r, k
        if best is None:
            break
        parts[best_at : best_at + 2] = [parts[best_at] + parts[best_at + 1]]
    return parts


def merges_from_ranks(ranks):
    """The merges [(bytes, bytes)] that tiktoken's ranks {bytes: rank} imply, in rank order."""
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) < 2:
            continue
        parts = _byte_pair_merge(ranks, token, rank)
        if len(parts) != 2:
            raise FormatError(
                "token %r (rank %d) is not the merge of two lower-ranked tokens (%d parts)"
                % (token, rank, len(parts))
            )
        if any(ranks.get(p, rank) >= rank for p in parts):
            raise FormatError(
                "token %r (rank %d) splits into %r, not two tokens of lower rank" % (token, rank, parts)
            )
        merges.append((parts[0], parts[1]))
    return merges


def read_tiktoken(path, special_tokens=()):
    """A ``Model`` from a tiktoken ranks file; ``special_tokens`` take the ids after the largest rank."""
    ranks = {}
    with open(path, "rb") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            parts = line.split()
            try:
                if len(parts) != 2:
                    raise ValueError("expected two fields")
                token = base64.b64decode(parts[0], validate=True)
                rank = int(parts[1])
            except (ValueError, binascii.Error) as e:
                raise FormatError("%s:%d: not a 'base64-token rank' line (%s)" % (path, lineno, e))
            ranks[token] = rank
    if not ranks:
        raise FormatError("%s: empty tiktoken ranks file" % path)
    vocab = {r: t for t, r in ranks.items()}
    if len(vocab) != len(ranks):
        raise FormatError("%s: two tokens share a rank" % path)
    try:
        merges = merges_from_ranks(ranks)
    except FormatError as e:
        raise FormatError("%s: %s" % (path, e))
    vocab = with_specials(vocab, special_tokens)
    return Model(vocab, merges, special_tokens, "tiktoken", True, path)
