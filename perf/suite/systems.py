"""The systems under test: where the interpreters, peers and corpora are, and the command
that runs each system on one input.

Every system runs as its own process so that the driver measures it from outside: refbpe
through its command line (``python -m refbpe train``) or a runner in ``perf/peers/``, each
peer through its runner in ``perf/peers/`` (one system per file, ``RESULT {json}`` on stdout,
see ``peers/_common.py``).  A command builder returns ``(cmd, env, requirement)``: the argv,
the extra environment (thread settings, the offline tiktoken cache) and the
``(interpreter, module)`` that must be installed for the system to run; ``probe`` finds which
are, on every interpreter, so that absent peers are reported, never silently dropped.

Where the interpreters and the corpora are is ``perf/harness.py``'s (``INTERPRETERS``,
``CORPUS_FILES``): ``REFBPE_CPYTHON``, ``REFBPE_PYPY``, ``REFBPE_SHARED`` or ``REFBPE_DATA``.
"""

import json
import os
import subprocess
import sys

from harness import CORPUS_FILES, GPT2_FILES, INTERPRETERS, PEERS, PERF, ROOT, SPECIAL, TIKTOKEN_CACHE

FULL_CORPORA = list(CORPUS_FILES)
FULL_TEXTS = ["english_small", "english_medium", "russian", "chinese", "mixed_multilingual", "python_code"]

# Peer modules, probed on every interpreter.
PEER_MODULES = {
    "hf": "tokenizers",
    "rustbpe": "rustbpe",
    "bpeasy": "bpeasy",
    "tiktoken": "tiktoken",
    "regex": "regex",
    "refbpe": "refbpe",
}

TRAIN_SYSTEMS = [
    "refbpe-pypy-w1",
    "refbpe-pypy-w2",
    "refbpe-cpython-w1",
    "refbpe-cpython-w2",
    "hf",
    "rustbpe",
    "bpeasy",
    "naive-pypy",
]
NAIVE_MAX_BYTES = 1 << 20  # the oracle recounts every pair per merge: quadratic
TRAIN_PEERS = ["hf", "rustbpe", "bpeasy"]
ENCODE_SYSTEMS = ["refbpe-pypy", "refbpe-cpython", "tiktoken", "hf"]
COUNT_SYSTEMS = [
    "refbpe-pypy-w1",
    "refbpe-pypy-w2",
    "refbpe-cpython-w1",
    "refbpe-cpython-w2",
    "regex-cpython",
]


def probe():
    """{interpreter: {peer: version or None}} (None: absent / not installable)."""
    code = (
        "import importlib, json\nout = {}\n"
        "for k, m in %r.items():\n"
        "    try:\n        mod = importlib.import_module(m)\n"
        "        out[k] = str(getattr(mod, '__version__', 'present'))\n"
        "    except Exception:\n        out[k] = None\n"
        "print(json.dumps(out))\n"
    ) % (PEER_MODULES,)
    found = {}
    for name, exe in INTERPRETERS.items():
        if not os.path.exists(exe):
            found[name] = {k: None for k in PEER_MODULES}
            found[name]["_interpreter"] = None
            continue
        p = subprocess.run(
            [exe, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            universal_newlines=True,
            cwd=ROOT,
        )
        found[name] = json.loads(p.stdout) if p.returncode == 0 else {k: None for k in PEER_MODULES}
        found[name]["_interpreter"] = exe
    return found


def peer(script):
    return os.path.join(PEERS, script)


def train_cmd(system, corpus, vocab, work):
    """(cmd, env, requirement (interpreter, module)) for a training system; refbpe writes its
    model to WORK/model and its ``--report`` to WORK/report.json."""
    path = CORPUS_FILES[corpus]
    if system.startswith("refbpe-"):
        _, interp, w = system.split("-")
        out = os.path.join(work, "model")
        cmd = [
            INTERPRETERS[interp],
            "-m",
            "refbpe",
            "train",
            path,
            "--vocab-size",
            str(vocab),
            "--special-token",
            SPECIAL,
            "--out",
            out,
            "--workers",
            w[1:],
            "--report",
            os.path.join(work, "report.json"),
            "--quiet",
        ]
        return cmd, {}, (interp, "refbpe")
    if system == "naive-pypy":
        return [INTERPRETERS["pypy"], peer("train_naive.py"), path, str(vocab)], {}, ("pypy", "refbpe")
    if system == "hf":
        return (
            [INTERPRETERS["cpython"], peer("train_hf.py"), path, str(vocab), os.path.join(work, "hf")],
            {"TOKENIZERS_PARALLELISM": "true"},
            ("cpython", "hf"),
        )
    if system in ("rustbpe", "bpeasy"):
        return (
            [INTERPRETERS["cpython"], peer("train_%s.py" % system), path, str(vocab)],
            {},
            ("cpython", system),
        )
    raise ValueError(system)


def train_inprocess_cmd(interp):
    """(cmd, env, requirement): ``train_bpe(corpus.en, 500)`` timed inside the process."""
    code = (
        "import time, refbpe\nt=time.perf_counter()\n"
        "refbpe.train_bpe(%r, 500, [%r], workers=1)\n"
        "print('RESULT {\"train_seconds\": %%.4f}' %% (time.perf_counter()-t))\n"
    ) % (CORPUS_FILES["corpus.en"], SPECIAL)
    return [INTERPRETERS[interp], "-c", code], {}, (interp, "refbpe")


def encode_cmd(system, text, max_bytes):
    """(cmd, env, requirement) for encoding the first MAX_BYTES of TEXT with the GPT-2 vocab."""
    path = CORPUS_FILES[text]
    gpt2 = list(GPT2_FILES)
    tail = ["--max-bytes", str(max_bytes)]
    if system.startswith("refbpe-"):
        interp = system.split("-")[1]
        return [INTERPRETERS[interp], peer("encode_refbpe.py"), path] + gpt2 + tail, {}, (interp, "refbpe")
    if system == "tiktoken":
        return (
            [INTERPRETERS["cpython"], peer("encode_tiktoken.py"), path] + tail,
            {"TIKTOKEN_CACHE_DIR": TIKTOKEN_CACHE},
            ("cpython", "tiktoken"),
        )
    if system == "hf":
        return (
            [INTERPRETERS["cpython"], peer("encode_hf.py"), path] + gpt2 + tail,
            {"TOKENIZERS_PARALLELISM": "false", "RAYON_NUM_THREADS": "1"},
            ("cpython", "hf"),
        )
    raise ValueError(system)


def count_cmd(system, path):
    """(cmd, env, requirement) for pre-tokenizing and counting the file PATH."""
    if system == "regex-cpython":
        return [INTERPRETERS["cpython"], peer("count_regex.py"), path], {}, ("cpython", "regex")
    _, interp, w = system.split("-")
    return [INTERPRETERS[interp], peer("count_refbpe.py"), path, w[1:]], {}, (interp, "refbpe")


def pickle_cmd():
    """The pickling micro-benchmark (it runs both interpreters itself), JSON on stdout."""
    return [INTERPRETERS["cpython"], os.path.join(PERF, "bench_pickle.py"), "--json"]


def merges_digest(model_dir):
    """Digest of the merges of a GPT-2 model directory (as ``peers/_common.merges_digest``)."""
    if PEERS not in sys.path:
        sys.path.insert(0, PEERS)
    from _common import merges_digest as digest

    from refbpe import Tokenizer

    tok = Tokenizer.from_files(os.path.join(model_dir, "vocab.json"), os.path.join(model_dir, "merges.txt"))
    return digest(tok.merges)
