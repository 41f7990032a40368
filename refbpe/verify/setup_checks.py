"""Setup checks: mismatches in how the two trainings were set up, found before any replay.

Each check gives warnings ``{"code", "message"}``; a setup mismatch is the
verdict's cause (``SETUP_CODES``), never a tie rule.  The codes:

    vocab-size                  their vocab size is not --vocab-size (unless
                                they ran out of pairs, as the reference may)
    special-token-not-given     their model declares a special token not given
    special-token-not-in-model  a given special token their model lacks
    special-token-absent        a given special token never occurs in the corpus,
                                so their handling of it is untested
    missing-bytes               single-byte tokens missing from their vocab
    ids-differ                  the same merges and vocab set under other ids
                                (a note; a mismatch only under --exact-ids)

Cost: O(vocab) set operations.
"""

from .display import show

__all__ = ["SETUP_CODES", "setup_warnings", "warning"]

SETUP_CODES = ("vocab-size", "special-token-not-given", "special-token-not-in-model", "missing-bytes")


def warning(code, message):
    return {"code": code, "message": message}


def _tokens(ts):
    return ", ".join(repr(t) for t in ts)


def _special_tokens(ts):
    """``special token 'a'`` or ``special tokens 'a', 'b'``."""
    return "special token%s %s" % ("s" if len(ts) > 1 else "", _tokens(ts))


def setup_warnings(
    vocab_size, special_tokens, their_vocab, declared, their_size, absent, ran_out, given=False
):
    """Warnings for the setup of their training.

    ``their_vocab`` is the set of byte strings their file holds, ``declared``
    the special tokens it declares itself, ``their_size`` its vocab size,
    ``absent`` the given special tokens that never occur in the corpus (None:
    not known), ``ran_out`` whether no pair was left after their last merge
    (or a convention explains their stopping there).  ``given``: their trainer
    was given ``vocab_size`` too (fuzz), so a size mismatch is not a setting
    to change but their result.
    """
    out = []
    if their_size != vocab_size and not (their_size < vocab_size and ran_out):
        advice = "they were given that size" if given else "train both with the same size"
        out.append(
            warning(
                "vocab-size",
                "their vocab has %d tokens, but --vocab-size is %d: %s" % (their_size, vocab_size, advice),
            )
        )
    not_given = [t for t in declared if t not in special_tokens]
    if not_given:
        phrase = "their model declares %s, not given with --special-token" % _special_tokens(not_given)
        out.append(warning("special-token-not-given", phrase))
    missing = [t for t in special_tokens if t not in declared and t.encode("utf-8") not in their_vocab]
    if missing:
        phrase = "%s given with --special-token but absent from their model" % _special_tokens(missing)
        out.append(warning("special-token-not-in-model", phrase))
    if absent:
        out.append(
            warning(
                "special-token-absent",
                "special token%s %s never occur%s in the corpus, so their handling of %s is untested"
                % (
                    "s" if len(absent) > 1 else "",
                    _tokens(absent),
                    "" if len(absent) > 1 else "s",
                    "them" if len(absent) > 1 else "it",
                ),
            )
        )
    no_bytes = [bytes([i]) for i in range(256) if bytes([i]) not in their_vocab]
    if no_bytes:
        out.append(
            warning(
                "missing-bytes",
                "%d of the 256 single-byte tokens are missing from their vocab (e.g. %s): "
                "train with the full byte alphabet (HF: initial_alphabet=ByteLevel.alphabet())"
                % (len(no_bytes), ", ".join(show(b) for b in no_bytes[:4])),
            )
        )
    return out
