"""Targets for ``tests/test_persistent.py``: pre-tokenizers served over the persistent protocol.

``python persistent_targets.py serve BEHAVIOUR`` is a command that speaks the protocol
itself (docs/ci.md): one JSON request per line on stdin, ``{"ok": true}`` per line on stdout
once the pieces are written.  BEHAVIOUR ``good`` answers as refbpe does; ``garbage``
answers ``hello``; ``quits`` exits 0 before answering; ``chatty`` writes two lines per
answer.  The ``split_*`` functions are ``--split-py`` targets: correct, except on one trigger
character (``crash_on_x``: SIGSEGV on ``x``; ``hang_on_x``: sleeps on ``x``; ``raise_on_x``:
an exception on ``x``) and ``noisy`` (prints on stdout, which must not break the protocol).
"""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from refbpe.pretokenize.patterns import get_pattern  # noqa: E402


def split_good(text):
    return get_pattern("gpt2").pretokenize_str(text)


def split_crash_on_x(text):
    if "x" in text:
        os.kill(os.getpid(), signal.SIGSEGV)
    return split_good(text)


def split_hang_on_x(text):
    if "x" in text:
        time.sleep(60)
    return split_good(text)


def split_raise_on_x(text):
    if "x" in text:
        raise RuntimeError("no x here")
    return split_good(text)


def split_noisy(text):
    print("a print of theirs on stdout")
    return split_good(text)


def serve(behaviour):
    """The protocol loop of a command (a minimal adapter: read a request, write {out}, answer)."""
    for line in sys.stdin:
        request = json.loads(line)
        if behaviour == "quits":
            return 0
        with open(request["input"], encoding="utf-8", newline="") as f:
            pieces = split_good(f.read())
        with open(request["out"], "w", encoding="utf-8") as f:
            f.writelines(json.dumps(p) + "\n" for p in pieces)
        answer = "hello" if behaviour == "garbage" else json.dumps({"ok": True})
        sys.stdout.write(answer + "\n" + (answer + "\n" if behaviour == "chatty" else ""))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve(sys.argv[2]))
