"""The child process that calls their Python function: ``python -m refbpe.fuzz.child MODE MODULE:FUNC ARGS``.

MODE is ``train`` (``FUNC(input_path, vocab_size, special_tokens) -> (vocab, merges)``,
CS336's signature; written as hex JSON), ``encode`` (``FUNC(model_path, text) -> ids``,
written as a JSON list), ``split`` (``FUNC(text) -> [str]``, written one JSON
string per line) or ``check`` (import only).  ARGS is the JSON file of the
placeholders (``input``, ``vocab_size``, ``special_tokens``, ``out``, ``model``).
The current directory is on ``sys.path``, as for ``python -m``.  An exception
of theirs ends the child with a traceback on stderr and status 1, which the
fuzzer reports as a finding.
"""

import importlib
import json
import os
import sys

from ..formats import write_model

__all__ = []  # run as ``python -m refbpe.fuzz.child``


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


def main(argv):
    mode, spec = argv[0], argv[1]
    func = load_function(spec)
    if mode == "check":
        return 0
    with open(argv[2], encoding="utf-8") as f:
        args = json.load(f)
    out = args["out"]
    if mode == "train":
        specials = list(args.get("special_tokens", []))
        vocab, merges = func(args.get("input") or args.get("counts"), int(args["vocab_size"]), specials)
        write_model(out, "json", dict(vocab), [(bytes(a), bytes(b)) for a, b in merges], specials)
    elif mode == "encode":
        ids = [int(i) for i in func(args["model"], _read_text(args["input"]))]
        with open(out, "w", encoding="utf-8") as f:
            json.dump(ids, f)
    else:
        pieces = list(func(_read_text(args["input"])))
        with open(out, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(p) + "\n" for p in pieces)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
