"""Their implementation under test: a command template or a Python function, run in a child process.

A command template (``--train 'CMD ...'``) is split as a shell would
(``shlex``) but run without a shell.  Placeholders in its arguments:

    {input}           the UTF-8 text file of the case
    {counts}          the word-count file of the case (``--counts`` mode)
    {vocab_size}      the vocab size asked for
    {special_tokens}  the special tokens as one JSON list
    {special_token}   one argument per special token: an argument holding it is
                      repeated for each token (``--special-token={special_token}``),
                      and an argument that is exactly it repeats the option before
                      it too (``--special-token {special_token}``); none without tokens
    {out}             where they write their output (a model, ids or pieces)
    {model}           the model refbpe wrote for them (``--encode`` mode)
    {encoding}        the encoding's name for a named one (``cl100k_base``, ...), else
                      the model's path (``--encode`` mode)
    {base}            the model their trainer extends (``--extend``: train mode)

A Python function (``--train-py MODULE:FUNC``) is called by ``refbpe.fuzz.child``
in a fresh interpreter (this one, ``sys.executable``), so a crash or a hang of
theirs cannot take the fuzzer down.  Every run has a timeout; the child gets
its own session and the whole group is killed at the timeout, or when the
run is interrupted (Ctrl-C; a fuzz worker being stopped calls ``kill_running``).

What a run produced is read back by mode (``read_output``): a model in any
format refbpe reads, ids (``.npy``, a JSON list or whitespace-separated
integers), or pieces (one JSON string per line).  Anything else is a ``Fault``:
a crash (a signal), a non-zero exit status, a timeout, or unreadable output,
each a finding of the fuzzer, never an error of refbpe.  Cost: one process
start per run (tens of milliseconds for a CPython child); ``persistent``
keeps one process for many runs instead.
"""

import io
import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time

from ..corpus.idfile import read_ids
from ..loader import read_model

__all__ = [
    "REFBPE_ROOT",
    "STDERR_KEPT",
    "STDERR_TAIL",
    "DRAIN_AFTER_EXIT",
    "Fault",
    "Run",
    "Tail",
    "MAX_OUTPUT_BYTES",
    "Target",
    "TargetError",
    "drain_until",
    "expand",
    "fault_of",
    "forget",
    "kill_group",
    "read_output",
    "spawn",
    "stop_and_exit",
]

_PLACEHOLDER = re.compile(r"\{(input|counts|vocab_size|special_tokens|out|model|encoding|base)\}")
_EACH = "{special_token}"
STDERR_KEPT = 4000
REFBPE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class TargetError(ValueError):
    """A command that cannot start, or a function that cannot be imported (exit status 2)."""


class Fault(object):
    """A run that produced no comparable output: ``kind`` is ``crash``, ``exit-status``,
    ``timeout`` or ``unreadable-output``; ``message`` says what, ``stderr`` is theirs."""

    def __init__(self, kind, message, stderr=""):
        self.kind, self.message, self.stderr = kind, message, stderr

    def text(self):
        tail = self.stderr.strip()
        return "%s: %s%s" % (self.kind, self.message, "\ntheir stderr:\n" + tail if tail else "")


class Run(object):
    """One finished run: exit ``status`` (negative: killed by that signal), ``stderr``,
    ``seconds``, ``timed_out``; ``fault``, a ``Fault`` the runner saw itself (a persistent
    target's broken protocol), or None."""

    def __init__(self, status, stderr, seconds, timed_out, fault=None):
        self.status, self.stderr, self.seconds, self.timed_out = status, stderr, seconds, timed_out
        self.fault = fault


def _substitute(arg, values):
    def one(m):
        name = m.group(1)
        if name == "special_tokens":
            return json.dumps(values.get("special_tokens", []), ensure_ascii=False)
        return str(values.get(name, m.group(0)))

    return _PLACEHOLDER.sub(one, arg)


def expand(template, values):
    """The argument list of ``template`` (a list of arguments) with ``values`` put in.

    >>> expand(["t", "{input}", "--special-token", "{special_token}"], {"input": "a.txt",
    ...        "special_tokens": ["<a>", "<b>"]})
    ['t', 'a.txt', '--special-token', '<a>', '--special-token', '<b>']
    """
    out = []
    tokens = values.get("special_tokens", [])
    for arg in template:
        if _EACH not in arg:
            out.append(_substitute(arg, values))
            continue
        option = out.pop() if arg == _EACH and out and out[-1].startswith("-") else None
        for t in tokens:
            if option is not None:
                out.append(option)
            out.append(_substitute(arg, values).replace(_EACH, t))
    return out


_ANY_PLACEHOLDER = re.compile(r"\{(\w+)\}")
KNOWN_PLACEHOLDERS = (
    "input",
    "counts",
    "vocab_size",
    "special_tokens",
    "special_token",
    "out",
    "model",
    "encoding",
    "base",
)


def check_placeholders(mode, template):
    """Raise ``TargetError`` for a placeholder we do not know (a typo such as ``{ouput}``) or a
    command with none at all: such a command would be run and every run blamed on them."""
    used = {m.group(1) for arg in template for m in _ANY_PLACEHOLDER.finditer(arg)}
    unknown = sorted(used - set(KNOWN_PLACEHOLDERS))
    if unknown:
        raise TargetError(
            "unknown placeholder %s in the command (known: %s)"
            % (", ".join("{%s}" % u for u in unknown), ", ".join("{%s}" % k for k in KNOWN_PLACEHOLDERS))
        )
    if not used:
        raise TargetError(
            "the command names no placeholder: put {input} (or {counts}) where it reads the case "
            "and {out} where it writes its result"
        )


class Target(object):
    """Their trainer, encoder or pre-tokenizer (``mode``: train, encode, split), as a
    ``command`` template (a string) or a ``function`` (``MODULE:FUNC``)."""

    def __init__(self, mode, command=None, function=None, fmt="auto", python=None):
        self.mode, self.command, self.function, self.fmt = mode, command, function, fmt
        self.python = python or sys.executable
        if command is not None:
            try:
                self.template = shlex.split(command)
            except ValueError as e:
                raise TargetError("cannot split the command %r: %s" % (command, e))
            if not self.template:
                raise TargetError("the command is empty")
        else:
            if not function or ":" not in function:
                raise TargetError("expected MODULE:FUNC, got %r" % (function,))
            self.template = [self.python, "-m", "refbpe.fuzz.child", mode, function, "{out}.args.json"]

    def check_placeholders(self):
        """``check_placeholders`` of a command (a function needs none): before anything runs."""
        if self.command is not None:
            check_placeholders(self.mode, self.template)

    def describe(self):
        return self.command if self.command is not None else "%s (%s)" % (self.function, self.mode)

    def check_starts(self):
        """Raise ``TargetError`` when the command cannot start or the function cannot be imported."""
        if self.command is not None:
            exe = self.template[0]
            if os.sep in exe:
                if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
                    raise TargetError("cannot run %s: not an executable file" % exe)
            elif shutil.which(exe) is None:
                raise TargetError("cannot run %s: not found on PATH" % exe)
            return
        r = subprocess.run(
            [self.python, "-m", "refbpe.fuzz.child", "check", self.function],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
        )
        if r.returncode != 0:
            lines = r.stderr.decode("utf-8", "replace").strip().splitlines()
            raise TargetError("cannot import %s: %s" % (self.function, lines[-1] if lines else "failed"))

    def argv(self, values):
        return expand(self.template, values)

    def close(self):
        """Nothing of a one-shot target outlives its run (a ``persistent.PersistentTarget``'s does)."""

    def run(self, values, timeout):
        """Run once with ``values`` (placeholders); a ``Run``."""
        if self.function is not None:
            with open(values["out"] + ".args.json", "w", encoding="utf-8") as f:
                json.dump(values, f, ensure_ascii=False)
        return run_with_timeout(self.argv(values), timeout)


def child_env():
    """The environment for a child: ours, with refbpe importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REFBPE_ROOT, env.get("PYTHONPATH", "")) if p)
    return env


def spawn(argv, interactive=False):
    """Start ``argv`` in its own session with its stderr piped, listed for ``kill_running``;
    ``interactive``: its stdin and stdout piped too (else /dev/null).  ``TargetError`` when it
    cannot start."""
    pipe = subprocess.PIPE if interactive else subprocess.DEVNULL
    _STOPPING["starting"] = True
    try:
        p = subprocess.Popen(
            argv, stdin=pipe, stdout=pipe, stderr=subprocess.PIPE, env=child_env(), start_new_session=True
        )
    except OSError as e:
        _started()
        raise TargetError("cannot run %s: %s" % (argv[0], e.strerror or e))
    _RUNNING.add(p)
    _started()
    return p


def forget(p):
    """``p`` has ended: no longer one for ``kill_running``."""
    _RUNNING.discard(p)


def run_with_timeout(argv, timeout):
    """Run ``argv`` in its own session; kill the group after ``timeout`` seconds.

    Their stderr is drained as it comes and only its last ``STDERR_TAIL`` bytes are kept, so a
    flood costs no memory.  Once their process has ended (or been killed) the pipe is read for
    at most ``DRAIN_AFTER_EXIT`` seconds more: a grandchild that left the group (``setsid``)
    and still holds the pipe cannot keep the run waiting."""
    t0 = time.time()
    p = spawn(argv)
    tail = Tail(STDERR_TAIL)
    try:
        timed_out = not _drain_until_exit(p, tail, t0 + timeout)
        if timed_out:
            kill_group(p)
            p.wait()
        drain_until(p.stderr, tail, time.time() + DRAIN_AFTER_EXIT)
    except BaseException:  # Ctrl-C: their process must not outlive us
        kill_group(p)
        p.wait()
        raise
    finally:
        forget(p)
        p.stderr.close()
    stderr = tail.text()[-STDERR_KEPT:]
    return Run(p.returncode, stderr, time.time() - t0, timed_out)


STDERR_TAIL = 64 * 1024  # bytes of their stderr kept; the rest is read and dropped
DRAIN_AFTER_EXIT = 0.5  # seconds: their stderr read after their process ended, at most
_READ = 65536


class Tail(object):
    """The last ``size`` bytes written to it, kept in a ring of that size.

    ``read_from`` reads a pipe into one buffer made once and copies it into the ring, so
    a flood allocates nothing the size of a read: a bytes object per read, with a bytearray
    grown and cut, left garbage that PyPy frees only at a major collection, which its default heap
    limit (8 nurseries; 240 MB ones where the CPU reports a 480 MiB cache) put off until
    a runner reading a 2 s flood peaked at 780 MB (tests/test_runner_bounds.py).
    """

    def __init__(self, size):
        self.size, self.ring, self.written = size, bytearray(size), 0
        self._buffer = None

    def add(self, chunk):
        """Write the bytes-like ``chunk``; only its last ``size`` bytes can stay."""
        size, n = self.size, len(chunk)
        skipped = max(0, n - size)
        chunk = memoryview(chunk)[skipped:]
        at = (self.written + skipped) % size
        first = min(size - at, len(chunk))
        self.ring[at : at + first] = chunk[:first]
        rest = len(chunk) - first
        self.ring[:rest] = chunk[first:]
        self.written += n

    def read_from(self, fd):
        """One ``read`` of ``fd`` (at most ``_READ`` bytes) into the ring; the bytes read, 0 at
        end of file."""
        if self._buffer is None:
            self._buffer = bytearray(_READ)
        n = io.FileIO(fd, closefd=False).readinto(self._buffer)  # PyPy 3.9 has no os.readv
        if n:
            self.add(memoryview(self._buffer)[:n])
        return n

    def text(self):
        if self.written <= self.size:
            kept = self.ring[: self.written]
        else:
            at = self.written % self.size
            kept = self.ring[at:] + self.ring[:at]
        return bytes(kept).decode("utf-8", "replace")


def _drain_until_exit(p, tail, deadline):
    """Read ``p``'s stderr into ``tail`` until ``p`` exits (True) or ``deadline`` passes (False)."""
    while True:
        left = deadline - time.time()
        if left <= 0:
            return p.poll() is not None
        eof = drain_until(p.stderr, tail, time.time() + min(left, 0.05))
        if p.poll() is not None:
            return True
        if eof:  # they closed stderr but still run: wait for the exit alone
            try:
                p.wait(timeout=max(0.0, deadline - time.time()))
                return True
            except subprocess.TimeoutExpired:
                return False


def drain_until(pipe, tail, deadline):
    """Read ``pipe`` into ``tail`` until end of file (True) or ``deadline`` (False); never blocks
    past the deadline."""
    fd = pipe.fileno()
    while True:
        left = deadline - time.time()
        if left <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return False
        if not tail.read_from(fd):
            return True


_RUNNING = set()  # the runs of theirs in progress in this process (``kill_running``)
# a run being started (its process may exist before it is in _RUNNING), and the exit status
# a stop asked for meanwhile (``stop_and_exit``)
_STOPPING = {"starting": False, "exit": None}


def kill_running():
    """Kill the process group of every run of theirs in progress here (a fuzz worker being stopped)."""
    for p in list(_RUNNING):
        kill_group(p)


def stop_and_exit(status):
    """Kill every run of theirs in progress here, then exit with ``status`` at once (a signal
    handler's work).  While a run is being started its process may exist unlisted: the exit
    then waits until the start has listed it (``_started``), so that it is killed too."""
    if _STOPPING["starting"]:
        _STOPPING["exit"] = status
        return
    kill_running()
    os._exit(status)


def _started():
    _STOPPING["starting"] = False
    if _STOPPING["exit"] is not None:
        stop_and_exit(_STOPPING["exit"])


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:
        pass


def fault_of(run, timeout):
    """The ``Fault`` of a run that did not end well, or None."""
    if run.fault is not None:
        return run.fault
    if run.timed_out:
        return Fault("timeout", "no answer within %g s (killed)" % timeout, run.stderr)
    if run.status < 0:
        name = signal.Signals(-run.status).name if -run.status in signal.valid_signals() else str(-run.status)
        return Fault("crash", "killed by signal %s" % name, run.stderr)
    if run.status != 0:
        return Fault("exit-status", "exited with status %d" % run.status, run.stderr)
    return None


MAX_OUTPUT_BYTES = 64 << 20  # a case is a few KB of text: a larger output is read as unreadable


def _output_size(path):
    """Bytes at ``path``: a file, or the files directly inside a directory (a GPT-2 model)."""
    if not os.path.isdir(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(e.path) for e in os.scandir(path) if e.is_file())


def read_output(mode, path, special_tokens=(), fmt="auto"):
    """What they wrote at ``path``: a ``Model`` (train), ids (encode) or piece bytes (split).
    Raises ValueError or OSError when it cannot be read."""
    if not os.path.exists(path):
        raise ValueError("they wrote nothing at %s" % path)
    size = _output_size(path)
    if size > MAX_OUTPUT_BYTES:
        raise ValueError(
            "they wrote %d bytes at %s, over the %d MiB a case's output may take; not read"
            % (size, path, MAX_OUTPUT_BYTES >> 20)
        )
    if mode == "train":
        return read_model(path, fmt, special_tokens, strict=False)
    if mode == "encode":
        return read_ids(path)
    pieces = []
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            try:
                piece = json.loads(line)
                pieces.append(piece.encode("utf-8", "surrogatepass"))
            except (ValueError, AttributeError) as e:
                raise ValueError("%s:%d: not a JSON string (%s)" % (path, n, e))
    return pieces
