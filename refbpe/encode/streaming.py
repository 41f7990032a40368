"""Streaming: ``encode_iterable``, the ids of a text given in chunks, in bounded memory.

It keeps back the text that more input could still change (the last two
pre-tokens, and any tail that may be the start of a special token) and
encodes the rest, so its memory is bounded by one chunk plus the longest
pre-token (plus a 64K-character batch, gathered so that a stream of short
lines is not scanned once per line).  Invariant: the ids are ``encode``'s of
the joined text, wherever the chunks cut.  Why two pre-tokens: a piece's
extent is decided by at most the two characters after it (a contraction
reads two ahead, a whitespace run checks the character after the next), and
every piece is at least one character long.  The GPT-4-family patterns look
further only inside what the last two pieces hold: a whitespace run still
open at the end forms at most two pieces (cl100k_base's ``\\s++$`` makes it
one), an o200k word still followed by nothing may yet join an L character
(with a mark piece before it: two pieces), and a contraction or
``[\\r\\n/]*`` only extends the last piece (``tests/test_pattern_api.py``
streams every pattern in chunks of 1-7 characters).  A final high surrogate
is held back for the next chunk to pair (``utf16_repaired``: tiktoken's
repair of a ``str`` that UTF-8 cannot encode).
"""

from __future__ import annotations

from typing import Iterable, Iterator

__all__ = ["Streaming", "utf16_repaired"]

_BATCH = 1 << 16  # characters gathered before a scan: bounds memory, amortises per-call work


class Streaming(object):
    """``encode_iterable`` of a ``Tokenizer`` (its base; it calls the tokenizer's encoders)."""

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        """Yield the ids of ``"".join(iterable)`` lazily, in bounded memory.

        The chunks may cut anywhere, even inside a special token: the ids are
        ``encode``'s of the joined text.  Cost: ``encode``'s, and memory for one
        chunk plus the longest pre-token (module docstring).

        >>> from refbpe import Tokenizer
        >>> vocab = {i: bytes([i]) for i in range(256)}
        >>> vocab[256] = b"ow"
        >>> tok = Tokenizer(vocab, [(b"o", b"w")], ["<|eot|>"])
        >>> list(tok.encode_iterable(["lo", "w<|e", "ot|>o", "w"]))
        [108, 256, 257, 256]
        """
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
        text = _repaired_but_last(text)
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
        if not self._context_bounded:
            return out, text[cut:]  # any piece may depend on what follows: wait for a special token
        # No special token starts in text[cut:hold]; keep back its last two
        # pre-tokens, whose extent may depend on what follows.
        body = text[cut:hold].encode("utf-8", "surrogatepass")
        ends = self._piece_ends(body)
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


def utf16_repaired(text):
    """``text`` as tiktoken repairs a ``str`` that UTF-8 cannot encode: each surrogate pair
    joined into its character, each lone surrogate replaced by U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _repaired_but_last(text):
    """``utf16_repaired`` for all of ``text`` but a final high surrogate, which the next
    chunk of a stream may pair (``encode_iterable``)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        if "\ud800" <= text[-1] <= "\udbff":
            return utf16_repaired(text[:-1]) + text[-1]
        return utf16_repaired(text)
