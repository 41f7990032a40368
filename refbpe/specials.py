"""Special tokens: split text on them before pre-tokenization.

Special tokens are matched leftmost first and, among those starting at the
same position, longest first (a regex alternation sorted by length, longest
first, gives exactly that).  Matching is literal, so it works the same on
``str`` and on UTF-8 ``bytes``: an encoded token can only match at a character
boundary, because UTF-8 is self-synchronising.

``allowed_specials`` reads tiktoken's ``allowed_special`` choice (``all``,
``none`` or some of the model's tokens), as the fuzzer, verify and the
conformance pack take it.
"""

import re

__all__ = ["allowed_specials", "special_pattern", "split_specials"]


def special_pattern(special_tokens, as_bytes=False):
    """A compiled alternation of ``special_tokens``, longest first, or None."""
    tokens = sorted(set(special_tokens or ()), key=lambda t: (-len(t.encode("utf-8")), t))
    tokens = [t for t in tokens if t]
    if not tokens:
        return None
    if as_bytes:
        return re.compile(b"|".join(re.escape(t.encode("utf-8")) for t in tokens))
    return re.compile("|".join(re.escape(t) for t in tokens))


def split_specials(text, pattern):
    """Yield ``(segment, is_special)`` pairs covering ``text`` in order.

    Empty text segments are skipped.  ``pattern`` comes from ``special_pattern``
    (bytes or str to match ``text``) or is None for "no special tokens".
    """
    if pattern is None:
        if text:
            yield text, False
        return
    pos = 0
    for m in pattern.finditer(text):
        start, end = m.span()
        if start > pos:
            yield text[pos:start], False
        yield text[start:end], True
        pos = end
    if pos < len(text):
        yield text[pos:], False


def allowed_specials(choice, model_tokens):
    """The special tokens matched as such under ``choice`` (tiktoken's ``allowed_special``):
    None for ``None`` or ``["all"]`` (every one of ``model_tokens``), ``[]`` for ``["none"]``
    (special-token text is ordinary text, as ``encode_ordinary``), else the tokens of
    ``choice`` in the model's order.  Raises ValueError for a token the model does not have.

    >>> allowed_specials(["<|a|>"], ["<|b|>", "<|a|>"]), allowed_specials(["none"], ["<|a|>"])
    (['<|a|>'], [])
    """
    if choice is None or list(choice) == ["all"]:
        return None
    if list(choice) == ["none"]:
        return []
    if "all" in choice or "none" in choice:
        raise ValueError("--special-tokens: 'all' and 'none' stand alone, not in a list of tokens")
    unknown = [t for t in choice if t not in model_tokens]
    if unknown:
        raise ValueError(
            "--special-tokens: %r is not a special token of the model (its special tokens: %s)"
            % (unknown[0], ", ".join(model_tokens) or "none")
        )
    return [t for t in model_tokens if t in choice]
