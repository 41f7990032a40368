"""Under PyPy, ``refbpe encode``, ``train``, ``verify`` and ``certify`` restart with their own nursery.

PyPy allocates new objects in a nursery whose size, unless ``PYPY_GC_NURSERY``
sets it, is half the cache size that ``/proc/cpuinfo`` reports, and it leaves
the old generation alone until the heap reaches 8 nurseries (the default of
``PYPY_GC_MIN``).  Some virtual machines report the host's whole last-level
cache: 480 MiB on the machine behind the figures below, hence a 240 MB
nursery, and every process of an encoding grew past 500 MB although it keeps
about 50 MB alive.  The nursery is fixed when the interpreter starts, so the
command executes itself again (``os.execve``: the same process id, arguments
and standard streams; nothing has been read or written yet) with
``PYPY_GC_NURSERY=4MB`` and ``PYPY_GC_MAJOR_COLLECT=1.3`` (a major collection
once the heap is 1.3 times what the previous one kept, instead of 1.82: a
unit's text and ids are large objects that only a major collection frees).
The pool's workers are forked from it and keep both settings.

Measured by ``perf/encode_corpus.py whole --workers 2`` (english_medium,
GPT-2 vocab, PyPy 3.9): the process tree's peak summed RSS went from 1,088 MB
to about 290 MB, CPU seconds the same within the noise of a shared machine
(docs/performance.md has the table).

``train`` restarts with ``TRAIN_GC_SETTINGS`` (a 16 MB nursery; its tables
live long, and 4 MB was slower): english_medium, vocab 32,000, 2 workers,
the process tree's peak went from 1,016 MB to 441 MB and the wall time
stayed level (3.31 s before, 3.32 s after, ``perf/run.py --only train``,
medians of 5, load 1: counting gained 0.4 s, the merge phase lost 0.07 s
and the second start-up cost 0.19 s, which ``restart_train_early`` below
now saves; with the nursery set before the first start, /usr/bin/time gave
2.95 s against 3.34 s).  On english_small (4 MB)
the hf profile went from 1.56 s to 1.32 s, but a one-piece input's merge phase
is slower with the small nursery, so ``train`` restarts only from
``TRAIN_RESTART_FROM`` (16 MiB; the figures are beside it).

Some machines report a small cache instead: 1 MiB, hence a 512 KB nursery, under which the
old generation was left to grow to 1.82 times what the previous major collection kept.  There
the command restarts too, so that the settings are the same on every machine:
``perf/encode_corpus.py whole --workers 2`` (english_medium, GPT-2 vocab, 3 runs) gave a tree
peak of 324 MB (PSS 276 MB) and 1.50-1.55x tiktoken's speed without the restart, and with
``--pypy-gc-env PYPY_GC_NURSERY=4MB,PYPY_GC_MAJOR_COLLECT=1.3`` 279 MB (PSS 231 MB) and 1.46x;
``train`` of english_medium (vocab 10,000, 2 workers, 3 alternating runs, ``/usr/bin/time``)
took 3.77-3.91 s with ``TRAIN_GC_SETTINGS`` against 4.03-4.18 s with the 512 KB nursery
(the tree's peak 414 MB against 293-316 MB: its tables live long).

Only when it pays: PyPy with a nursery other than the one asked for, neither variable set (a
user's setting wins; the restarted process sees them set, so it never loops),
the process's own command line (``sys.argv``, not ``main([...])`` called from
Python), and inputs of at least ``RESTART_FROM`` bytes (encode) or
``TRAIN_RESTART_FROM`` (train), or of unknown size:
the second start-up (an interpreter's start when the command line decides; when
``run`` decides, importing refbpe again, about 0.2 CPU seconds) would cost a small
run more than the memory is worth.

``train`` decides before anything of refbpe is imported (``restart_train_early``,
called by ``refbpe.cli.main``): its CORPUS arguments are read off the command
line with the table of its options (``TRAIN_VALUE_OPTIONS``, ``TRAIN_FLAGS``,
held to the parser by tests/test_pypy_gc.py) and sized as ``corpus/io.py``'s
``input_size`` does, so the first process pays only for the interpreter's start:
under PyPy ``import refbpe.cli`` costs what a bare interpreter does, 0.06 CPU
seconds, against 0.25 s for ``refbpe.cli.commands`` (every subcommand and the
library; ``perf/startup.py --interpreters pypy``, load average 5).
Where the command line cannot be read that way (an option the table lacks,
``--stdlib``, ``--counts``, a missing file), ``train``'s ``run`` decides as
before, after parsing.  ``encode`` decides the same way (``restart_encode_early``:
its INPUT arguments, MODEL left out, read with ``ENCODE_VALUE_OPTIONS`` and
``ENCODE_FLAGS``); its ``run`` decides where the command line cannot be read.  On 17 MB
(one line repeated, GPT-2 vocab, ``--workers 1``, ``/usr/bin/time``, medians of 5
alternating runs, load average 3.8-3.9): 1.39 CPU seconds and a 186 MB peak when ``run``
decided, 1.21 s and 141 MB now (docs/performance.md).

``verify`` decides the same way (``restart_verify_early``: its CORPUS arguments, read
with ``VERIFY_VALUE_OPTIONS`` and ``VERIFY_FLAGS``; ``--counts`` gives up) with
``VERIFY_GC_SETTINGS`` from ``VERIFY_RESTART_FROM`` (1 MiB): its replays and overlays
allocate many short-lived tuples and lists, so a 240 MB nursery is touched page by
page for nothing.  With ``TRAIN_GC_SETTINGS`` the restart bought memory, not time:
``refbpe verify`` of english_small against the hf model of ``perf/verify_cost.py
--build``, vocab 2,000 (PyPy, ``/usr/bin/time``, 7 alternating pairs, load average 0.9)
took 2.31 CPU seconds with it and 2.25 s without (paired differences -0.14 to +0.11 s:
level within the noise), with a peak of 227 MB against 459 MB.  A 64 MB nursery collects
a quarter as often as a 16 MB one: the same run, the nursery given (so no restart), 8
alternating rounds, load average 0.7-0.9: 16 MB 2.12-2.44 CPU s (median 2.25, 208 MB),
32 MB 2.06-2.31 s (2.19, 242 MB), 64 MB 2.05-2.31 s (2.15, 256 MB); 128 MB 2.17-2.27 s
(2.21, 311 MB) against 64 MB's 2.11-2.18 s (2.17) in 6 more.

``train --counts`` and ``certify --counts`` decide the same way (``restart_counts_early``: the
files of ``--counts``, read with ``TRAIN_VALUE_OPTIONS`` and ``CERTIFY_VALUE_OPTIONS``) with
``TRAIN_GC_SETTINGS`` from ``COUNTS_RESTART_FROM`` (2 MiB of counts): both build the words'
table and run the merge engine over it, as ``train`` does after counting, so its settings pay
there too, once the engine's phase outweighs the second start.  Measured with
``/usr/bin/time refbpe train --counts C --vocab-size V --special-token '<|endoftext|>' -o M``
and ``refbpe certify M --counts C ...`` (PyPy, this machine's 1 MB nursery, CPU seconds, the
tree before and after alternating, medians): C english_medium's counts (2.5 MB), ``train`` at
V 10,000 1.75 -> 1.60 s (7 rounds), at 32,000 2.41 -> 2.31 s (5; peak 237 -> 258 MB),
``certify`` 1.55 -> 1.51 s (7); C the counts of its first 16 MB (1.1 MB), restarted or not,
level: 1.22 s and 1.21 s (7).
"""

import gc
import os
import platform
import re
import subprocess
import sys

__all__ = [
    "RESTART_FROM",
    "GC_SETTINGS",
    "TRAIN_GC_SETTINGS",
    "VERIFY_GC_SETTINGS",
    "TRAIN_RESTART_FROM",
    "restart_command",
    "parse_size_text",
    "restart_with_small_nursery",
    "restart_early",
    "restart_train_early",
    "restart_encode_early",
    "restart_verify_early",
    "verify_corpus",
    "VERIFY_RESTART_FROM",
    "CERTIFY_VALUE_OPTIONS",
    "CERTIFY_FLAGS",
    "COUNTS_RESTART_FROM",
    "counts_files",
    "VERIFY_VALUE_OPTIONS",
    "VERIFY_FLAGS",
    "train_corpus",
    "encode_inputs",
    "TRAIN_VALUE_OPTIONS",
    "TRAIN_FLAGS",
    "ENCODE_VALUE_OPTIONS",
    "ENCODE_FLAGS",
]

RESTART_FROM = 16 << 20  # input bytes; as ``corpus/encode.py``'s _POOL_FROM, where a second process starts
# 1.3, not 1.5: the tree's peak 284 MB instead of 297-302 MB, the same CPU seconds
# (perf/encode_corpus.py whole --workers 2 --pypy-gc-env PYPY_GC_NURSERY=4MB,PYPY_GC_MAJOR_COLLECT=1.3).
GC_SETTINGS = {"PYPY_GC_NURSERY": "4MB", "PYPY_GC_MAJOR_COLLECT": "1.3"}
# ``train``'s: its word and pair tables live long, so fewer, larger minor collections pay.
TRAIN_GC_SETTINGS = {"PYPY_GC_NURSERY": "16MB", "PYPY_GC_MAJOR_COLLECT": "1.82"}
# ``verify``'s: short-lived objects by the million (replays, overlays, windows), tables as train's.
VERIFY_GC_SETTINGS = {"PYPY_GC_NURSERY": "64MB", "PYPY_GC_MAJOR_COLLECT": "1.82"}
# ``train`` restarts from this many input bytes.  Its second start-up cost 0.19 s then (now the
# interpreter's start, ``restart_train_early``; the threshold is not measured again); the small
# nursery saves the first touch of a 240 MB one in each process, which pays on ordinary text
# (hf profile, vocab 10,000, 2 workers, /usr/bin/time: english_small's 4 MB 1.56 -> 1.32 s),
# but one huge pre-token's merge phase runs slower with it (perf/adversarial.py --only train:
# 10 MB of one letter 1.63 -> 1.93 s, 2 MB of random Han 0.76 -> 0.93 s).  From 16 MiB
# both are level or better in wall time and the process tree's memory halves.
TRAIN_RESTART_FROM = 16 << 20
# ``refbpe train``'s options that take one value, and those that take none.  Left out, so that
# ``train_corpus`` gives up on them: ``--counts`` and ``--stdlib`` (inputs that are not CORPUS
# arguments) and ``-h``/``--help``.
TRAIN_VALUE_OPTIONS = frozenset(
    "--vocab-size --special-token -o --out --format --profile --min-frequency --sequences "
    "--initial-alphabet --tie-rule --transition --extend --inherit-merges --trace --pattern-regex --pattern "
    "--unicode --workers --chunk-size --errors --executor --executor-data --report".split()
)
TRAIN_FLAGS = frozenset("--add-prefix-space --no-add-prefix-space --progress --quiet".split())
# ``refbpe encode``'s, as ``train``'s above (``-h``/``--help`` left out).
ENCODE_VALUE_OPTIONS = frozenset(
    "--format --special-token --pattern-regex --pattern --unicode -o --out --dtype --separator "
    "--workers --chunk-size --errors --report".split()
)
ENCODE_FLAGS = frozenset("--json --progress --quiet".split())
# ``refbpe verify``'s, as ``train``'s above (``--counts``, which takes any number of values, and
# ``-h``/``--help`` left out), and the input size from which it restarts.
VERIFY_VALUE_OPTIONS = frozenset(
    "--against --chunk-size --encode --errors --executor --executor-data --extend --format --ids "
    "--inherit-merges --initial-alphabet --max-hypothesis-bytes --min-frequency --pattern --pattern-regex "
    "--profile --report --sequences --special-token --split --tie-rule --trace --transition --unicode "
    "--vocab-size --workers".split()
)
VERIFY_FLAGS = frozenset(
    "--add-prefix-space --exact-ids --hex --ignore-ids --json --no-add-prefix-space --no-hypotheses "
    "--progress --quiet".split()
)
VERIFY_RESTART_FROM = 1 << 20
# ``refbpe certify``'s, as ``train``'s above (``--counts`` and ``-h``/``--help`` left out).
CERTIFY_VALUE_OPTIONS = frozenset(
    "--chunk-size --errors --executor --executor-data --format --initial-alphabet --limit --min-frequency "
    "--pattern --pattern-regex --profile --report --sequences --special-token --tie-rule --transition "
    "--unicode --vocab-size --workers".split()
)
CERTIFY_FLAGS = frozenset("--add-prefix-space --json --no-add-prefix-space --progress --quiet".split())
# ``train --counts`` and ``certify --counts`` restart with ``TRAIN_GC_SETTINGS`` from this many
# bytes of word-count files (``restart_counts_early``; the figures are in the module docstring:
# level at 1.1 MB, a gain at 2.5 MB).
COUNTS_RESTART_FROM = 2 << 20
_UNITS = {"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}


def parse_size_text(text):
    """Bytes of a size as PyPy's ``gc.get_stats()`` prints it (``'240.0MB'``); None if unreadable.

    >>> parse_size_text("240.0MB") == 240 << 20, parse_size_text("?")
    (True, None)
    """
    m = re.match(r"^\s*([0-9.]+)\s*(B|kB|MB|GB)\s*$", text)
    return int(float(m.group(1)) * _UNITS[m.group(2)]) if m else None


def _nursery_bytes():
    """This PyPy's nursery size in bytes (None under CPython, outside POSIX, or if PyPy does not say)."""
    if platform.python_implementation() != "PyPy" or os.name != "posix":  # execve replaces the process
        return None
    return parse_size_text(str(getattr(gc.get_stats(), "nursery_size", "")))


def restart_command(argv, executable, flags, main_path):
    """The command that runs ``argv`` (a ``sys.argv``) again, or None when it cannot be rebuilt.

    ``flags``: the interpreter's options (``subprocess._args_from_interpreter_flags()``);
    ``main_path``: ``refbpe/__main__.py``, which ``argv[0]`` is under ``python -m refbpe``.

    >>> main = "/r/refbpe/__main__.py"
    >>> restart_command([main, "encode", "m"], "/bin/pypy3", ["-B"], main)
    ['/bin/pypy3', '-B', '-m', 'refbpe', 'encode', 'm']
    >>> restart_command(["-c", "encode", "m"], "/bin/pypy3", [], main) is None
    True
    """
    if not argv or not executable:
        return None
    if os.path.abspath(argv[0]) == os.path.abspath(main_path):
        return [executable] + list(flags) + ["-m", "refbpe"] + list(argv[1:])
    if os.path.isfile(argv[0]):  # a console script or another Python file
        return [executable] + list(flags) + list(argv)
    return None  # ``-c``, an embedded interpreter: no way back to the same entry point


def restart_with_small_nursery(argv, input_bytes, settings=GC_SETTINGS, restart_from=RESTART_FROM):
    """Execute this command again with ``settings`` (``GC_SETTINGS`` or
    ``TRAIN_GC_SETTINGS``) when the module docstring's conditions hold (``argv``:
    ``sys.argv``, or None when ``main`` was given its arguments; ``input_bytes``:
    the inputs' total, None when one is a stream).  Returns only when it does not restart."""
    if argv is None or any(name in os.environ for name in settings):
        return
    if input_bytes is not None and input_bytes < restart_from:
        return
    nursery = _nursery_bytes()
    if nursery is None or nursery == parse_size_text(settings["PYPY_GC_NURSERY"]):
        return
    main_path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "__main__.py")
    command = restart_command(argv, sys.executable, subprocess._args_from_interpreter_flags(), main_path)
    if command is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(command[0], command, dict(os.environ, **settings))


def train_corpus(args):
    """The CORPUS arguments of ``refbpe train ARGS``, or None when telling them needs the parser.

    >>> train_corpus(["a.txt", "--vocab-size", "32000", "--special-token=<|e|>", "--quiet", "-", "b.gz"])
    ['a.txt', '-', 'b.gz']
    >>> train_corpus(["--stdlib", "--vocab-size", "500", "-o", "m"]) is None
    True
    """
    return _operands(args, TRAIN_VALUE_OPTIONS, TRAIN_FLAGS)


def encode_inputs(args):
    """The INPUT arguments of ``refbpe encode ARGS`` (MODEL, the first operand, left out), or None
    when telling them needs the parser.

    >>> encode_inputs(["cl100k_base", "a.txt", "-o", "ids.npy", "--workers", "2", "-", "--quiet"])
    ['a.txt', '-']
    >>> encode_inputs(["m", "a.txt", "-oids.npy"]) is None
    True
    """
    operands = _operands(args, ENCODE_VALUE_OPTIONS, ENCODE_FLAGS)
    return operands[1:] if operands else None


def counts_files(argv):
    """The files of ``--counts`` in ``refbpe train ARGS`` or ``refbpe certify ARGS`` (``argv``:
    ``sys.argv``), or None when there are none or telling them needs the parser.

    >>> counts_files(["refbpe", "certify", "m", "--counts", "a.tsv", "b.tsv", "--vocab-size", "500"])
    ['a.tsv', 'b.tsv']
    >>> counts_files(["refbpe", "train", "--counts", "a.tsv", "-om"]) is None
    True
    """
    tables = {"train": (TRAIN_VALUE_OPTIONS, TRAIN_FLAGS), "certify": (CERTIFY_VALUE_OPTIONS, CERTIFY_FLAGS)}
    if len(argv) < 2 or argv[1] not in tables:
        return None
    counts = []
    if _operands(argv[2:], *tables[argv[1]], counts=counts) is None:
        return None
    return counts or None


def verify_corpus(args):
    """The CORPUS arguments of ``refbpe verify ARGS``, or None when telling them needs the parser.

    >>> verify_corpus(["a.txt", "--against", "tokenizer.json", "--vocab-size", "2000", "--json"])
    ['a.txt']
    >>> verify_corpus(["--counts", "a.counts.tsv", "--against", "m"]) is None
    True
    """
    return _operands(args, VERIFY_VALUE_OPTIONS, VERIFY_FLAGS)


def _operands(args, value_options, flags, counts=None):
    """The operands of a subcommand's ``args`` (options from the tables skipped), or None.
    ``counts``, a list: the values of ``--counts`` are appended to it (every argument up to
    the next option, as the parser takes them); without it ``--counts`` gives up."""
    operands = []
    k = 0
    while k < len(args):
        arg = args[k]
        k += 1
        if arg == "--":
            operands.extend(args[k:])
            break
        elif arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg in value_options:
            if k >= len(args):
                return None
            k += 1
        elif arg == "--counts" and counts is not None:
            while k < len(args) and (args[k] == "-" or not args[k].startswith("-")):
                counts.append(args[k])
                k += 1
        elif arg in flags or (arg.startswith("--") and arg.split("=", 1)[0] in value_options):
            continue
        else:  # ``--counts``, ``--stdlib``, ``--help``, ``-oDIR``, an option the table lacks
            return None
    return operands


def _input_bytes(paths):
    """The inputs' total as ``total_bytes(input_spans(paths))`` counts it: None when one is
    stdin or gzip, whose size is unknown."""
    if any(p == "-" or p.endswith(".gz") for p in paths):
        return None
    return sum(os.path.getsize(p) for p in paths)


def restart_early(argv):
    """``restart_train_early``, ``restart_encode_early``, ``restart_verify_early`` or
    ``restart_counts_early``, by ``argv``'s subcommand."""
    restart_train_early(argv)
    restart_encode_early(argv)
    restart_verify_early(argv)
    restart_counts_early(argv)


def restart_train_early(argv):
    """``restart_with_small_nursery`` for ``refbpe train`` from ``argv`` (``sys.argv``) alone,
    before refbpe's modules are imported; returns when it does not restart, or when the
    command line cannot be read without the parser (``train``'s ``run`` then decides)."""
    if len(argv) < 2 or argv[1] != "train" or _nursery_bytes() is None:
        return
    _restart_for(argv, train_corpus(argv[2:]), TRAIN_GC_SETTINGS, TRAIN_RESTART_FROM)


def restart_encode_early(argv):
    """``restart_train_early`` for ``refbpe encode`` (its ``run`` decides when this returns)."""
    if len(argv) < 2 or argv[1] != "encode" or _nursery_bytes() is None:
        return
    _restart_for(argv, encode_inputs(argv[2:]), GC_SETTINGS, RESTART_FROM)


def restart_verify_early(argv):
    """``restart_train_early`` for ``refbpe verify``, with ``VERIFY_GC_SETTINGS`` from
    ``VERIFY_RESTART_FROM`` bytes (it does not restart when this returns)."""
    if len(argv) < 2 or argv[1] != "verify" or _nursery_bytes() is None:
        return
    _restart_for(argv, verify_corpus(argv[2:]), VERIFY_GC_SETTINGS, VERIFY_RESTART_FROM)


def restart_counts_early(argv):
    """``restart_train_early`` for ``refbpe train --counts`` and ``refbpe certify --counts``,
    with ``TRAIN_GC_SETTINGS`` from ``COUNTS_RESTART_FROM`` bytes of word-count files: both
    run the merge engine over the words' table, which lives long (it does not restart when
    this returns)."""
    files = counts_files(argv)
    if files and _nursery_bytes() is not None:
        _restart_for(argv, files, TRAIN_GC_SETTINGS, COUNTS_RESTART_FROM)


def _restart_for(argv, inputs, settings, restart_from):
    if not inputs or not all(p == "-" or os.path.isfile(p) for p in inputs):
        return  # the parser or the command reports the error
    restart_with_small_nursery(argv, _input_bytes(inputs), settings, restart_from)
