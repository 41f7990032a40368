"""Whether a piece's BPE may start from its two-byte characters (Cyrillic, Greek, Arabic, ...).

    .venv-pypy/bin/python perf/experiments/char_premerge.py [--vocabs gpt2,cl100k_base,o200k_base]

Starting from characters instead of bytes would spare half the merges of a missed Russian
piece.  It gives the same ids only if, for the piece's characters,

1. no token of two or more bytes ends with a lead byte (0xC2-0xDF) or begins with a
   continuation byte (0x80-0xBF): then every merge but a character's own joins whole
   characters; and
2. every character ranks below every token of two or more whole characters (a space
   allowed): then all characters form before any of those merges.

Counterexample to dropping (2): characters A B C ranking 1, 2, 20 and tokens AB at 10, BC at 5
give A B C -> AB C by bytes, A BC from characters.  This prints, per vocab (tiktoken's rank
files, offline from ``TIKTOKEN_CACHE_DIR``), the tokens breaking (1) and the characters above
the lowest rank of (2).  Python 3.9 syntax.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from refbpe.encode.tokenizer import Tokenizer  # noqa: E402

LEADS = range(0xC2, 0xE0)
CONTINUATIONS = range(0x80, 0xC0)


def two_byte_text(token):
    """The token as text if it is valid UTF-8 of spaces and two-byte characters, else None."""
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if all(c == " " or 0x80 <= ord(c) < 0x800 for c in text) else None


def report(name):
    ranks = Tokenizer.from_tiktoken(name)._rank_of
    long_tokens = [t for t in ranks if len(t) >= 2]
    end_in_lead = [t for t in long_tokens if t[-1] in LEADS]
    start_in_continuation = [t for t in long_tokens if t[0] in CONTINUATIONS]
    characters, joined = {}, []
    for token, rank in ranks.items():
        text = two_byte_text(token)
        if text is None or text.strip() == "":
            continue
        if len(text) == 1:
            characters[text] = rank
        else:
            joined.append((rank, text))
    lowest = min(joined)
    above = sorted((r, c) for c, r in characters.items() if r > lowest[0])
    print("%s:" % name)
    print(
        "  (1) tokens of 2+ bytes ending in a lead byte: %d (e.g. %s); beginning with a continuation byte: %d"
        % (len(end_in_lead), ", ".join(repr(t) for t in end_in_lead[:3]), len(start_in_continuation))
    )
    print(
        "  (2) lowest token of 2+ characters: %r at %d; characters ranked above it: %d of %d (e.g. %s)"
        % (lowest[1], lowest[0], len(above), len(characters), ", ".join("%r %d" % e[::-1] for e in above[:3]))
    )
    print("  holds: %s" % (not end_in_lead and not start_in_continuation and not above))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocabs", default="gpt2,cl100k_base,o200k_base")
    args = ap.parse_args()
    for name in args.vocabs.split(","):
        report(name)


if __name__ == "__main__":
    main()
