"""tiktoken ranks files: write them, read them, and rebuild merges from ranks.

The file ``tiktoken.load.load_tiktoken_bpe`` reads: one ``base64(token) rank``
line per token, rank = id.  It holds no merges and no special tokens: the
merges are rebuilt from the ranks as tiktoken applies them (the token of rank
r splits into the two parts that byte-pair merging with ranks < r leaves),
and special tokens are given by the caller (or a refbpe manifest beside the
file) and take the ids after the largest rank.

A token of up to ``SHORT_TOKEN`` bytes is split by tiktoken's own merging,
O(L^2) for L bytes (``_byte_pair_merge`` rescans the parts after each join;
cl100k's longest token has 128 bytes).  A longer one (a model trained on a run
of one byte has megabyte tokens) tries its prefix tokens of lower rank, longest
first, with the rest (``_split_long``), and checks each candidate pair by
walking the two parts' merge trees along the boundary (``_ends_as_pair``: the
check of the ``bpe`` crate's dictionary builder); the first accepted pair is
the split, as tiktoken's merging is deterministic.  Both ways give the same
merges on every token of cl100k_base and o200k_base and on random rank files,
accepted or refused (tests/test_writers.py).  Cost per long token, for each
token length tried: a comparison in place with the few tokens of that length
(or a slice and a lookup when many share it), then the depth of the two merge
trees, each step a join of two boundary parts; a 3 MB run model's ranks file
reads at 170-200 MB/s under PyPy (perf/writers.py ws, run1), where tiktoken's
own merging did not finish in 120 s.  Reading the lines is one base64 decode
per line in C.
"""

import base64
import binascii

from .._util.atomic import chunked
from .model import FormatError, Model, special_ids, with_specials

__all__ = [
    "tiktoken_ranks_chunks",
    "tiktoken_special_tokens",
    "merges_from_ranks",
    "read_tiktoken",
    "read_ranks",
    "ranks_vocab",
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


SHORT_TOKEN = 32  # longer tokens: ``_split_long``


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


def merges_from_ranks(ranks, *, short_token=SHORT_TOKEN):
    """The merges [(bytes, bytes)] that tiktoken's ranks {bytes: rank} imply, in rank order;
    tokens of up to ``short_token`` bytes are split by tiktoken's own merging, longer ones
    by ``_split_long`` (the same split, found in about O(L))."""
    merges = []
    parts_of = {}  # rank -> (left rank, right rank): the merge that made the token
    token_of = {r: t for t, r in ranks.items()}
    by_length = {}  # length -> [(token, rank)]
    for t, r in ranks.items():
        by_length.setdefault(len(t), []).append((t, r))
    lengths = sorted(by_length, reverse=True)
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) < 2:
            continue
        if len(token) <= short_token:
            left, right = _split_short(ranks, token, rank)
            parts_of[rank] = (ranks[left], ranks[right])
        else:
            left, right, parts_of[rank] = _split_long(
                ranks, token_of, parts_of, by_length, lengths, token, rank
            )
        merges.append((left, right))
    return merges


def _split_short(ranks, token, rank):
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
    return parts[0], parts[1]


_FEW = 8  # a length held by more tokens is looked up by slicing, not compared token by token


def _tokens_at(ranks, by_length, token, k, end):
    """[(t, rank)] of the tokens of ``k`` bytes that ``token`` starts (``end``: ends) with:
    compared in place (no copy of a long token) when few tokens have that length."""
    group = by_length.get(k, ())
    if len(group) <= _FEW:
        found = token.endswith if end else token.startswith
        return [(t, r) for t, r in group if found(t)]
    t = token[len(token) - k :] if end else token[:k]
    return [(t, ranks[t])] if t in ranks else []


def _split_long(ranks, token_of, parts_of, by_length, lengths, token, rank):
    """(left, right, (left rank, right rank)): the two parts tiktoken's merging of ``token``
    ends with.  Its prefix tokens of lower rank are tried longest first, each with the
    rest, until ``_ends_as_pair`` accepts one."""
    for k in lengths:
        if k >= len(token):
            continue
        for left, r_left in _tokens_at(ranks, by_length, token, k, False):
            if r_left >= rank:
                continue
            for right, r_right in _tokens_at(ranks, by_length, token, len(token) - k, True):
                if r_right < rank and _ends_as_pair(ranks, token_of, parts_of, r_left, r_right, rank):
                    return left, right, (r_left, r_right)
    raise FormatError(
        "token %s... of %d bytes (rank %d) is not the merge of two lower-ranked tokens"
        % (repr(token[:32]), len(token), rank)
    )


def _ends_as_pair(ranks, token_of, parts_of, x, y, max_rank):
    """Does tiktoken's merging of the tokens of ranks ``x`` and ``y`` joined (each a token
    that its own merging leaves whole) end with exactly these two parts?

    Both sides merge as they do alone unless a pair across the boundary merges first:
    at any moment the part ending the left token is on its right spine (the token, its
    right part, that part's right part, ...) and the part starting the right token on its
    left spine.  Walking both spines down from the top, latest merge first, a boundary
    pair of rank below ``limit`` (the rank of the merge that consumes one of its parts;
    a tie goes to the leftmost pair) would merge before the sides complete."""
    limit = max_rank
    while True:
        x_whole, y_whole = x not in parts_of, y not in parts_of
        if not x_whole and (y_whole or x > y):
            limit = x
            x = parts_of[x][1]
        elif not y_whole:
            limit = y + 1
            y = parts_of[y][0]
        else:
            return True
        r = ranks.get(token_of[x] + token_of[y])
        if r is not None and r < limit:
            return False


def ranks_vocab(path, ranks):
    """{rank: token} of ``ranks`` read from ``path``; a ``FormatError`` when two tokens share
    a rank or a rank is negative (tiktoken's loader reads one, and its encoder then overflows)."""
    lowest = min(ranks.values())
    if lowest < 0:
        token = next(t for t, r in ranks.items() if r == lowest)
        raise FormatError(
            "%s: token %r has the negative rank %d (ranks are ids, 0 or more)" % (path, token, lowest)
        )
    vocab = {r: t for t, r in ranks.items()}
    if len(vocab) != len(ranks):
        raise FormatError("%s: two tokens share a rank" % path)
    return vocab


def read_tiktoken(path, special_tokens=()):
    """A ``Model`` from a tiktoken ranks file; ``special_tokens`` take the ids after the largest rank."""
    ranks = read_ranks(path)
    vocab = ranks_vocab(path, ranks)
    try:
        merges = merges_from_ranks(ranks)
    except FormatError as e:
        raise FormatError("%s: %s" % (path, e))
    vocab = with_specials(vocab, special_tokens)
    return Model(vocab, merges, special_tokens, "tiktoken", True, path)


_BASE64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _rank_line(data, start, end):
    """(token, rank) of ``base64 rank`` in data[start:end], or None when the line is not
    in that exact shape (one space, no padding fault): the caller reads it field by field.
    Three passes in C over the base64 text: the slice, the check, the decode."""
    space = data.rfind(b" ", start, end)
    number = data[space + 1 : end]
    if space <= start or not number.isdigit():
        return None
    text = data[start:space]
    odd = text.translate(None, _BASE64_ALPHABET)
    if odd and not (odd in (b"=", b"==") and text.endswith(odd)):
        return None
    try:
        return binascii.a2b_base64(text), int(number)
    except binascii.Error:
        return None


def read_ranks(path):
    """{token bytes: rank} of a tiktoken ranks file, as ``tiktoken.load.load_tiktoken_bpe`` reads it."""
    with open(path, "rb") as f:
        data = f.read()
    ranks = {}
    pos, lineno, size = 0, 0, len(data)
    while pos < size:
        lineno += 1
        end = data.find(b"\n", pos)
        end = size if end < 0 else end
        entry = _rank_line(data, pos, end)
        if entry is None:
            entry = _rank_fields(path, lineno, data[pos:end])
        pos = end + 1
        if entry is not None:
            ranks[entry[0]] = entry[1]
    if not ranks:
        raise FormatError("%s: empty tiktoken ranks file" % path)
    return ranks


def _rank_fields(path, lineno, line):
    """(token, rank) of a line with other spacing (None for a blank line); FormatError
    naming the line for one that is not ``base64 rank``."""
    line = line.strip()
    if not line:
        return None
    parts = line.split()
    try:
        if len(parts) != 2:
            raise ValueError("expected two fields")
        return base64.b64decode(parts[0], validate=True), int(parts[1])
    except (ValueError, binascii.Error) as e:
        raise FormatError("%s:%d: not a 'base64-token rank' line (%s)" % (path, lineno, e))
