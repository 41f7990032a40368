"""Which Unicode version does each peer's pre-tokenizer behave like?  Probe every code point.

    python tests/unicode_probe.py [--step N]     (CPython, peers installed)

Every Unicode scalar value (U+0000..U+10FFFF without the 2,048 surrogates,
which no peer accepts in a ``str``) is put in each position whose class a
pattern reads: after a letter (lower and upper case), a digit, a symbol run,
a space, a newline and an apostrophe, before a letter (both cases), a digit
and a contraction, and doubled (``CONTEXTS``; each tells the classes of
every pattern apart: letter case, mark, number, space, other).  The probe texts, one per block of
code points, go to the peer, whose split is compared with refbpe's under
every Unicode version refbpe knows; the peer "is" the versions that give the
same split on every block.

How each peer's split is read:

* HF ``pre_tokenizers.ByteLevel`` returns the pieces' offsets: exact.
* rustbpe is trained on the probe text with room for every merge, so each
  piece becomes one token; encoding the text again then gives its pieces.
* tiktoken has no split API.  It is given a vocabulary of exactly the pieces
  refbpe makes under every candidate version, and of each two neighbouring
  pieces joined; a piece of tiktoken's that is in the vocabulary comes back as
  one token (tiktoken's whole-piece lookup), so a split equal to a
  candidate's comes back as that candidate's pieces, and a piece spanning two
  of a candidate's comes back whole.  (Not a proof for splits that match no
  candidate; the ids tests in tests/test_unicode_versions.py close that.)

Cost: refbpe's scanner over about 40 MB of probe text per pattern and
version, the peers' time, about a minute per peer on CPython with ``--step 1``.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from refbpe.pretokenize.patterns import get_pattern  # noqa: E402
from refbpe.pretokenize.unicode_tables import UNICODE_VERSIONS  # noqa: E402

CONTEXTS = (
    "a{c}1",  # after a lower-case letter, before a digit
    "A{c}a",  # after an upper-case letter (o200k's U*), before a lower-case one (cl100k's prefix)
    "!!{c}A",  # after a symbol run (marks join it under o200k), before an upper-case letter
    " {c}'s",  # after a space, before a contraction
    "1{c}",  # after a digit (\p{N}{1,3})
    "'{c}",  # after an apostrophe (contraction letters)
    "\n{c}{c}",  # after a newline, doubled (whitespace runs)
)
SEPARATOR = "\n"
# Code points per probe text.  Smaller texts cost tiktoken and HF less per code point (tiktoken's
# vocabulary of each text's pieces is sorted and hashed): with 2048 rather than 8192, the three
# tiktoken encodings take about 25% less CPU time, HF's ByteLevel 15% less, rustbpe the same
# (``time python tests/unicode_probe.py --peer tiktoken:gpt2 --block 2048``, then ``--block 8192``).
BLOCK = 2048

# The peers and the refbpe pattern each one implements.
PEERS = ("tiktoken:gpt2", "tiktoken:cl100k_base", "tiktoken:o200k_base", "hf:ByteLevel", "rustbpe")
PATTERN_OF_PEER = {
    "tiktoken:gpt2": "gpt2",
    "tiktoken:cl100k_base": "cl100k_base",
    "tiktoken:o200k_base": "o200k_base",
    "hf:ByteLevel": "gpt2",
    "rustbpe": "llama3",
}


def scalar_values(start=0, stop=0x110000, step=1):
    return [cp for cp in range(start, stop, step) if not 0xD800 <= cp <= 0xDFFF]


def probe_text(code_points):
    """The probe text of ``code_points``: each code point in every context, one per line."""
    lines = "".join(context + SEPARATOR for context in CONTEXTS)
    return "".join([lines.format(c=chr(cp)) for cp in code_points])


def probe_owner(code_points):
    """Per character of ``probe_text(code_points)``, the code point it probes: made only when a
    split differs (made for every block with the text, it took 0.10 s per 20,000 code points on
    CPython, the text alone 0.02 s)."""
    owner = []
    for cp in code_points:
        owner.extend([cp] * len(probe_text([cp])))
    return owner


def refbpe_pieces(pattern, version, text):
    return get_pattern(pattern, unicode=version).pretokenize_str(text)


# -- the peers' splits ---------------------------------------------------------------


def _tiktoken_pieces(encoding, text, candidates):
    import tiktoken

    vocab = {}  # the tokens in first-seen order: any order of ranks serves
    for pieces in candidates:
        encoded = [p.encode("utf-8") for p in pieces]
        vocab.update(dict.fromkeys(encoded))
        vocab.update(dict.fromkeys([a + b for a, b in zip(encoded, encoded[1:])]))
    tokens = list(vocab)
    ranks = {piece: rank for rank, piece in enumerate(tokens)}
    enc = tiktoken.Encoding(
        "probe", pat_str=_tiktoken_pattern(encoding), mergeable_ranks=ranks, special_tokens={}
    )
    try:
        ids = enc.encode_ordinary(text)
    except BaseException:  # a piece neither candidate makes: tiktoken's BPE finds no token for a byte
        return None
    return [tokens[i].decode("utf-8") for i in ids]  # an id is its token's rank


_PAT = {}


def _tiktoken_pattern(encoding):
    if encoding not in _PAT:
        import tiktoken

        _PAT[encoding] = tiktoken.get_encoding(encoding)._pat_str
    return _PAT[encoding]


def _hf_pieces(text):
    from tokenizers import pre_tokenizers

    pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    return [text[a:b] for _, (a, b) in pre.pre_tokenize_str(text)]


def _rustbpe_pieces(text):
    import rustbpe

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter([text]), 256 + len(text.encode("utf-8")))
    vocab = {rank: token for token, rank in tok.get_mergeable_ranks()}
    return [bytes(vocab[i]).decode("utf-8") for i in tok.encode(text)]


def peer_pieces(peer, text, candidates):
    """The peer's pieces of ``text`` (None: a split no candidate makes, tiktoken only)."""
    if peer.startswith("tiktoken:"):
        return _tiktoken_pieces(peer.split(":", 1)[1], text, candidates)
    if peer == "hf:ByteLevel":
        return _hf_pieces(text)
    return _rustbpe_pieces(text)


# -- the comparison ------------------------------------------------------------------


def _ends(pieces):
    out, at = [], 0
    for p in pieces:
        at += len(p)
        out.append(at)
    return out


def differing_code_points(pieces, expected, owner):
    """The code points whose probes split differently in ``pieces`` and ``expected``."""
    a, b = set(_ends(pieces)), set(_ends(expected))
    return sorted({owner[end - 1] for end in a ^ b})


def probe(peer, code_points, versions=UNICODE_VERSIONS, block=BLOCK):
    """{version: sorted code points where the peer's split differs from refbpe's under that version}."""
    return probe_peers([peer], code_points, versions, block)[peer]


def probe_peers(peers, code_points, versions=UNICODE_VERSIONS, block=BLOCK):
    """``probe`` of each of ``peers``, which implement one pattern: {peer: {version: code points}}.
    refbpe's splits of each probe text are made once for all of them (tiktoken's gpt2 and HF's
    ByteLevel share one: refbpe's split is about a third of a probe's time on CPython)."""
    (pattern,) = {PATTERN_OF_PEER[peer] for peer in peers}
    differ = {peer: {v: set() for v in versions} for peer in peers}
    for k in range(0, len(code_points), block):
        text = probe_text(code_points[k : k + block])
        splits = {v: refbpe_pieces(pattern, v, text) for v in versions}
        distinct = {tuple(s) for s in splits.values()}
        for peer in peers:
            pieces = peer_pieces(peer, text, distinct)
            for v in versions:
                if pieces is None:
                    differ[peer][v].update(code_points[k : k + block])
                elif pieces != splits[v]:
                    owner = probe_owner(code_points[k : k + block])
                    differ[peer][v].update(differing_code_points(pieces, splits[v], owner))
    return {peer: {v: sorted(cps) for v, cps in d.items()} for peer, d in differ.items()}


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description="which Unicode version each peer's split matches")
    p.add_argument("--step", type=int, default=1, help="probe every STEP-th code point (default 1: all)")
    p.add_argument("--peer", action="append", choices=PEERS, help="default: all")
    p.add_argument("--block", type=int, default=BLOCK, help="code points per probe text")
    args = p.parse_args(argv)
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", "/work/shared/data/tiktoken/cache")
    cps = scalar_values(step=args.step)
    for peer in args.peer or PEERS:
        result = probe(peer, cps, block=args.block)
        exact = [v for v, d in result.items() if not d]
        print(
            "%-22s %s   (%s)"
            % (
                peer,
                ", ".join(exact) or "no version",
                "; ".join(
                    "%s: %d differ%s"
                    % (v, len(d), " e.g. " + " ".join("U+%04X" % c for c in d[:6]) if d else "")
                    for v, d in result.items()
                ),
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
