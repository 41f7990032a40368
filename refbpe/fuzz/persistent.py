"""A target that stays up and answers many cases over a line protocol: ``PersistentTarget``.

One-shot targets (``target.Target``) start a process per case, and an
encoder reloads its encoding each time.  A persistent target starts once and
then, for each case, is sent one request line on its stdin and answers one
line on its stdout once it has written its output:

    request:  {"input": PATH, "counts": PATH, "out": PATH, "vocab_size": N,
               "special_tokens": [...], "model": PATH}      (one JSON object, one line)
    answer:   {"ok": true}   or   {"error": "what went wrong"}

The request holds the values of the one-shot placeholders (``model`` in
encode mode only); the command itself takes none.  End of input means stop.
A Python function (``--encode-py`` ...) is served by ``python -m
refbpe.fuzz.child serve MODE MODULE:FUNC``; a command speaks the protocol
itself (docs/ci.md has a minimal adapter).

Invariants:

- every request has the per-run timeout, counted from the request (the first
  one includes the start);
- a fault is a finding of the case whose request was pending, as in one-shot
  mode: a timeout (``timeout``), an end of its stdout or a write to a closed
  stdin (``crash`` or ``exit-status`` from its exit status), an answer that is
  not one of the two above or output between requests (``unreadable-output``);
  an ``{"error"}`` answer is ``exit-status``, as an exception in one-shot mode;
- after any fault but an ``{"error"}`` answer the process group is killed, so
  the next case starts a fresh process in a known state;
- their stderr is drained while a request is pending and only its last
  ``STDERR_TAIL`` bytes are kept; after their process ended it is read for at
  most ``DRAIN_AFTER_EXIT`` seconds (a grandchild holding it cannot block us);
- a process belongs to the process that started it: a fuzz worker forked with
  a started target starts its own.

Cost: one process start per target and per fault, then a pipe round trip per
case.  Measured against an ``--encode-py`` adapter around tiktoken's
cl100k_base (CPython 3.11, one worker, budget 60 s): 2,313 examples against
30 one-shot, 77 times as many (``perf/fuzz_persistent.py``; docs/ci.md).
"""

import json
import os
import select
import subprocess
import time

from .target import (
    DRAIN_AFTER_EXIT,
    STDERR_KEPT,
    STDERR_TAIL,
    Fault,
    Run,
    Tail,
    Target,
    TargetError,
    drain_until,
    forget,
    kill_group,
    spawn,
)

__all__ = ["PersistentTarget"]

_READ = 65536
_ANSWER_MAX = 1 << 20  # bytes of one answer line at most: more is a broken protocol
_REQUEST_KEYS = ("input", "counts", "out", "vocab_size", "special_tokens", "model", "base")


def request_line(values):
    """The request for one case: its placeholder values as one JSON line.

    >>> request_line({"input": "a.txt", "out": "o", "vocab_size": 0, "special_tokens": []})
    '{"input": "a.txt", "out": "o", "vocab_size": 0, "special_tokens": []}\\n'
    """
    request = {k: values[k] for k in _REQUEST_KEYS if k in values}
    return json.dumps(request, ensure_ascii=False) + "\n"


class PersistentTarget(Target):
    """A ``target.Target`` whose process answers case after case (the module docstring)."""

    def __init__(self, mode, command=None, function=None, fmt="auto", python=None):
        Target.__init__(self, mode, command, function, fmt, python)
        if function is not None:
            self.serve_argv = [self.python, "-m", "refbpe.fuzz.child", "serve", mode, function]
        else:
            self.serve_argv = list(self.template)
        self._proc, self._owner, self._pending = None, None, bytearray()

    def __getstate__(self):  # a worker started without fork starts its own process
        return dict(self.__dict__, _proc=None, _owner=None, _pending=bytearray())

    def check_placeholders(self):
        """A persistent command takes no placeholders: each case's values come in its request."""
        if self.command is not None and any("{" in arg and "}" in arg for arg in self.template):
            used = [arg for arg in self.template if "{" in arg and "}" in arg]
            raise TargetError(
                "a --persistent command takes no placeholders (%s): each case's values come in its "
                "request line on stdin" % " ".join(used)
            )

    def describe(self):
        return Target.describe(self) + " [persistent]"

    def argv(self, values):
        """The command that replays one case (``repro.sh``): the one-shot child for a function,
        the command fed that case's request for a command."""
        if self.function is not None:
            return Target.argv(self, values)
        return ["sh", "-c", 'printf "%s" "$0" | "$@"', request_line(values)] + self.serve_argv

    def run(self, values, timeout):
        """Send the case ``values`` and wait for the answer; a ``Run`` (its ``fault`` set by us)."""
        if self.function is not None:  # for repro.sh, which replays the one-shot child
            with open(values["out"] + ".args.json", "w", encoding="utf-8") as f:
                json.dump(values, f, ensure_ascii=False)
        t0 = time.time()
        p = self._process()
        tail = Tail(STDERR_TAIL)
        _drain_ready(p.stderr, tail)
        stray = self._stray_output()
        if stray:
            return self._fail(p, t0, tail, "unreadable-output", "wrote %r on stdout between requests" % stray)
        try:
            sent = _send(p, request_line(values).encode("utf-8", "surrogatepass"), tail, t0 + timeout)
        except OSError:  # it has closed its stdin or died: its exit status says which
            return self._ended(p, t0, tail, t0 + timeout)
        line, how = self._read_answer(p, tail, t0 + timeout) if sent else (None, "timeout")
        if how == "timeout":
            self._end(p, tail)
            return Run(p.returncode, tail.text()[-STDERR_KEPT:], time.time() - t0, True)
        if how == "eof":
            return self._ended(p, t0, tail, t0 + timeout)
        return self._judge_answer(p, t0, tail, line)

    def close(self):
        """End the process (end of input, then its group killed); the next run starts another."""
        p, self._proc = self._proc, None
        if p is None or self._owner != os.getpid():
            return
        try:
            p.stdin.close()
            p.wait(timeout=1.0)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self._end(p)

    def _process(self):
        if self._proc is None or self._owner != os.getpid():
            self._proc = spawn(self.serve_argv, interactive=True)
            os.set_blocking(self._proc.stdin.fileno(), False)  # a request never blocks past its timeout
            self._owner, self._pending = os.getpid(), bytearray()
        return self._proc

    def _stray_output(self):
        """Bytes on their stdout before a request was sent (their answers are out of step)."""
        fd = self._proc.stdout.fileno()
        while select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, _READ)
            if not chunk:
                break
            self._pending += chunk
        stray, self._pending = bytes(self._pending[:200]), bytearray()
        return stray

    def _read_answer(self, p, tail, deadline):
        """(answer line, "line"), (None, "eof") or (None, "timeout"); their stderr read meanwhile."""
        out, err = p.stdout.fileno(), p.stderr.fileno()
        watched = [out, err]
        while b"\n" not in self._pending and len(self._pending) <= _ANSWER_MAX:
            left = deadline - time.time()
            if left <= 0:
                return None, "timeout"
            ready, _, _ = select.select(watched, [], [], left)
            for fd in ready:
                if fd == err:
                    if not tail.read_from(err):
                        watched.remove(err)
                    continue
                chunk = os.read(fd, _READ)
                if not chunk:
                    return None, "eof"
                self._pending += chunk
        line, _, rest = bytes(self._pending).partition(b"\n")
        self._pending = bytearray(rest)
        return line, "line"

    def _judge_answer(self, p, t0, tail, line):
        _drain_ready(p.stderr, tail)  # what they wrote before answering (a traceback)
        try:
            answer = json.loads(line.decode("utf-8"))
        except ValueError:
            answer = None
        if answer == {"ok": True}:
            return Run(0, tail.text()[-STDERR_KEPT:], time.time() - t0, False)
        if isinstance(answer, dict) and set(answer) == {"error"} and isinstance(answer["error"], str):
            stderr = tail.text()[-STDERR_KEPT:]
            fault = Fault("exit-status", "answered with an error: %s" % answer["error"], stderr)
            return Run(1, stderr, time.time() - t0, False, fault)
        said = 'broke the protocol: answered %r, expected {"ok": true} or {"error": "..."} on one line'
        return self._fail(p, t0, tail, "unreadable-output", said % line[:200])

    def _ended(self, p, t0, tail, deadline):
        """Their stdout or stdin closed: wait for the exit (until ``deadline``) and report it."""
        try:
            p.wait(timeout=max(0.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            self._end(p, tail)
            return Run(p.returncode, tail.text()[-STDERR_KEPT:], time.time() - t0, True)
        self._end(p, tail)
        if p.returncode == 0:
            return self._fail(p, t0, tail, "exit-status", "exited with status 0 before answering")
        return Run(p.returncode, tail.text()[-STDERR_KEPT:], time.time() - t0, False)

    def _fail(self, p, t0, tail, kind, message):
        self._end(p, tail)
        stderr = tail.text()[-STDERR_KEPT:]
        return Run(p.returncode, stderr, time.time() - t0, False, Fault(kind, message, stderr))

    def _end(self, p, tail=None):
        """Kill their group, read what stays of their stderr into ``tail`` (briefly), close the pipes."""
        kill_group(p)
        p.wait()
        forget(p)
        if tail is not None and not p.stderr.closed:
            drain_until(p.stderr, tail, time.time() + DRAIN_AFTER_EXIT)
        for pipe in (p.stdin, p.stdout, p.stderr):
            try:
                pipe.close()
            except OSError:
                pass
        if self._proc is p:
            self._proc, self._pending = None, bytearray()


def _send(p, data, tail, deadline):
    """Write ``data`` to ``p``'s stdin (non-blocking) by ``deadline``, their stderr drained
    meanwhile; False when they would not take it in time (they do not read their stdin)."""
    fd = p.stdin.fileno()
    while data:
        left = deadline - time.time()
        if left <= 0:
            return False
        writable = select.select([], [fd], [], min(left, 0.05))[1]
        _drain_ready(p.stderr, tail)
        if writable:
            data = data[os.write(fd, data) :]
    return True


def _drain_ready(pipe, tail):
    """Read what ``pipe`` holds now into ``tail``, without waiting."""
    fd = pipe.fileno()
    while select.select([fd], [], [], 0)[0]:
        if not tail.read_from(fd):
            return
