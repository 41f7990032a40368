"""The child process that calls their Python function: ``python -m refbpe.fuzz.child MODE MODULE:FUNC ARGS``,
or answers many cases: ``python -m refbpe.fuzz.child serve MODE MODULE:FUNC``.

MODE is ``train`` (``FUNC(input_path, vocab_size, special_tokens) -> (vocab, merges)``,
CS336's signature, and ``base_path`` fourth under ``--extend``; written as hex JSON),
``encode`` (``FUNC(model_path, text) -> ids``, written as a JSON list), ``split``
(``FUNC(text) -> [str]``, written one JSON string per line) or ``check`` (import only).
ARGS is the JSON file of the placeholders (``input``, ``vocab_size``, ``special_tokens``,
``out``, ``model``, ``base``).
The current directory is on ``sys.path``, as for ``python -m``.  An exception
of theirs ends the child with a traceback on stderr and status 1, which the
fuzzer reports as a finding.

``serve`` speaks the persistent protocol (``refbpe.fuzz.persistent``): one
JSON object of placeholders per line on stdin, one answer per line on the
original stdout once the output is written, ``{"ok": true}`` or
``{"error": "..."}`` (their exception; its traceback goes to stderr), until
end of input.  Their own prints go to stderr, so they cannot break the
protocol.  The function is imported once: what it caches (a loaded
encoding) serves every case.
"""

import importlib
import json
import os
import sys
import traceback

from ..formats import write_model

__all__ = ["answer", "load_function"]  # and run as ``python -m refbpe.fuzz.child``


def load_function(spec):
    """The function named ``MODULE:FUNC`` (the module found from the current directory too)."""
    module_name, _, func_name = spec.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    obj = importlib.import_module(module_name)
    for part in func_name.split("."):
        obj = getattr(obj, part)
    return obj


def _read_text(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def answer(mode, func, args):
    """Call ``func`` on the case ``args`` (the placeholders) and write its output at ``args["out"]``."""
    out = args["out"]
    if mode == "train":
        specials = list(args.get("special_tokens", []))
        given = [args.get("input") or args.get("counts"), int(args["vocab_size"]), specials]
        vocab, merges = func(*given + ([args["base"]] if args.get("base") else []))
        write_model(out, "json", dict(vocab), [(bytes(a), bytes(b)) for a, b in merges], specials)
    elif mode == "encode":
        ids = [int(i) for i in func(args["model"], _read_text(args["input"]))]
        with open(out, "w", encoding="utf-8") as f:
            json.dump(ids, f)
    else:
        pieces = list(func(_read_text(args["input"])))
        with open(out, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(p) + "\n" for p in pieces)


def _protocol_stream():
    """The original stdout, for answers; fd 1 and ``sys.stdout`` then point at stderr."""
    stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return stream


def serve(mode, spec):
    """Answer one request line after another until end of input (the module docstring)."""
    func = load_function(spec)
    answers = _protocol_stream()
    for line in iter(sys.stdin.readline, ""):
        try:
            answer(mode, func, json.loads(line))
            reply = {"ok": True}
        except Exception as e:
            traceback.print_exc()
            sys.stderr.flush()
            reply = {"error": "%s: %s" % (type(e).__name__, e)}
        answers.write(json.dumps(reply) + "\n")
        answers.flush()
    return 0


def main(argv):
    if argv[0] == "serve":
        return serve(argv[1], argv[2])
    mode, spec = argv[0], argv[1]
    func = load_function(spec)
    if mode == "check":
        return 0
    with open(argv[2], encoding="utf-8") as f:
        answer(mode, func, json.load(f))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
