"""The harness every script in perf/ (and ``tests/support.py``) stands on: where the data and the
interpreters are, how a process is measured from outside, and the memory readers.

- **Paths**: ``ROOT`` (the repository), ``PERF``, ``PEERS`` (the peer runners), ``RESULTS``
  (git-ignored output); the shared data from ``tests/shared_data.py``, which the tests read
  too (imported as ``tests.shared_data``, a namespace package once the repository is on
  ``sys.path``): ``SHARED`` (``REFBPE_SHARED``, else ``ROOT/../shared``) and ``DATA``
  (``REFBPE_DATA``, else ``SHARED/data``) with ``CORPORA``, ``CS336``, ``GPT2_FILES`` and
  ``TIKTOKEN_CACHE`` (gpt2, cl100k_base, o200k_base offline).  Nothing is read at import, so a
  missing data directory costs nothing until a script asks for a file.
- **Corpora**: ``CORPUS_NAMES`` (the seven shared corpora), ``CORPUS_FILES`` (those plus the
  CS336 ``corpus.en``), ``corpus(name)``, ``read_corpus(name, limit)`` (bytes) and
  ``read_text(path, start, size)``.
- **Interpreters**: ``interpreter("cpython" | "pypy")``: ``REFBPE_CPYTHON`` / ``REFBPE_PYPY``,
  else the repository's ``.venv`` / ``.venv-pypy``, else (PyPy) ``pypy3`` on the PATH;
  ``INTERPRETERS`` holds both; ``interpreter_candidates`` lists where each is looked for;
  ``tree_env(tree)`` is the environment of a child that imports refbpe from ``tree``, whose
  bytecode ``compile_tree`` writes first, for both interpreters (as an install does).
- **Processes and memory**: ``processes(where)`` and ``session_processes(session)`` read
  ``/proc/PID/stat``; ``tree_rss`` / ``tree_pss`` sum RSS / PSS over a session (PSS counts a
  page that forked workers share once, split between them); ``status_kib`` (``VmRSS``,
  ``VmHWM`` of this process), ``reset_peak`` (``/proc/self/clear_refs``), ``maxrss_kib`` and
  ``peak_kib`` (``VmHWM``, else ``ru_maxrss``: after fork + exec ``ru_maxrss`` starts at the
  forked copy's size, so a large driver's children would report the driver's pages).
- **Measuring**: ``measure(cmd)`` runs one command in a new session and returns its whole-process
  wall time, peak tree RSS (sampled every 50 ms; with ``pss=True`` the peak tree PSS too),
  ``wait4`` rusage, the CPU the rest of the machine used meanwhile, and the last
  ``RESULT {json}`` line of its stdout (the peer runners' protocol, ``peers/_common.py``);
  ``run_result`` is the same for a command that must succeed.  ``Runner`` repeats jobs
  round-robin (run 1 of every job, then run 2, ...) so that a burst of load elsewhere does not
  hit one system only, and ``summarise`` takes the medians; ``timed`` is the in-process
  counterpart (best or median of repeats), ``race`` runs in-process variants against each
  other (warm-up rounds, results checked equal), and ``Cases`` is the command line of named
  micro-benchmark cases built on it (``perf/micro.py``, ``perf/experiments/``).
- **Clocks**: the only place in perf/ that reads one (``tests/test_perf_layout.py``):
  ``stopwatch()`` (wall and CPU seconds of a ``with`` block, or read while it runs),
  ``cpu_seconds()`` and ``rusage()`` (this process, or its waited-for children).

Importing it puts this tree on ``sys.path`` before site-packages, so that a script measures
this tree's refbpe whatever is installed, unless ``PYTHONPATH`` names another tree (as
``tree_env`` and ``perf/compare.py`` do).  Cost: a sample reads ``/proc/PID/stat`` of every
process on the machine (and ``smaps_rollup`` of the session's, for PSS).  Python 3.9 syntax,
standard library only: PyPy and the tests import it.
"""

import argparse
import gc
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

# -- paths --------------------------------------------------------------------------------

PERF = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(PERF)
PEERS = os.path.join(PERF, "peers")
RESULTS = os.path.join(PERF, "results")
SPECIAL = "<|endoftext|>"


def _after_pythonpath():
    """The index in ``sys.path`` after the script's directory and the ``PYTHONPATH`` entries."""
    named = {os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    found = [i for i, p in enumerate(sys.path) if p and os.path.abspath(p) in named]
    return max(found) + 1 if found else 1


if ROOT not in sys.path:
    sys.path.insert(_after_pythonpath(), ROOT)


import tests.shared_data as shared_data  # noqa: E402 (after the repository is on sys.path)
from tests.processes import proc_stat, processes, session_processes  # noqa: E402, F401

shared_root = shared_data.shared_root
SHARED, DATA, CORPORA, CS336 = shared_data.SHARED, shared_data.DATA, shared_data.CORPORA, shared_data.CS336
GPT2_FILES, TIKTOKEN_CACHE = shared_data.GPT2_FILES, shared_data.TIKTOKEN_CACHE

# -- corpora ------------------------------------------------------------------------------

CORPUS_NAMES = [
    "english_small",
    "english_medium",
    "python_code",
    "russian",
    "chinese",
    "mixed_multilingual",
    "tinystories_ru",
]


def corpus(name):
    """Path of a shared corpus by name (``english_medium``), or of the CS336 ``corpus.en``."""
    if name == "corpus.en":
        return os.path.join(CS336, "corpus.en")
    return os.path.join(CORPORA, name + ".txt")


CORPUS_FILES = {name: corpus(name) for name in ["corpus.en"] + CORPUS_NAMES}


def load_tokenizer(name):
    """A refbpe ``Tokenizer`` by encoding name: ``gpt2`` from the CS336 GPT-2 files, any other
    from tiktoken's rank file in the shared cache (offline)."""
    from refbpe import Tokenizer

    os.environ.setdefault("TIKTOKEN_CACHE_DIR", TIKTOKEN_CACHE)
    return Tokenizer.from_files(*GPT2_FILES) if name == "gpt2" else Tokenizer.from_tiktoken(name)


def read_text(path, start=0, size=-1):
    """Bytes [start, start + size) of ``path`` as text (partial characters at the ends dropped)."""
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(size).decode("utf-8", "ignore")


def read_corpus(name, limit=None):
    """A shared corpus as bytes, or its first ``limit`` bytes cut after a newline (valid UTF-8)."""
    with open(corpus(name), "rb") as f:
        data = f.read(limit or -1)
    return data[: data.rindex(b"\n") + 1] if limit else data


# -- interpreters -------------------------------------------------------------------------

_VENVS = {"cpython": ".venv", "pypy": ".venv-pypy"}


def interpreter_candidates(name):
    """Where the ``name`` interpreter ("cpython" or "pypy") is looked for, in order."""
    found = [os.environ.get("REFBPE_" + name.upper())]
    found.append(os.path.join(ROOT, _VENVS[name], "bin", "python"))
    if name == "pypy":
        found.append(shutil.which("pypy3"))
    return [exe for exe in found if exe]


def interpreter(name):
    """The first candidate that exists, else the repository's venv path (named in errors)."""
    candidates = interpreter_candidates(name)
    return next((exe for exe in candidates if os.path.exists(exe)), candidates[0])


INTERPRETERS = {"cpython": interpreter("cpython"), "pypy": interpreter("pypy")}


def implementation():
    """ "pypy" or "cpython": the interpreter running this code."""
    return "pypy" if hasattr(sys, "pypy_version_info") else "cpython"


def tree_env(tree=ROOT, **extra):
    """The environment of a child that imports refbpe from the source tree ``tree``, whose
    bytecode is compiled first (``compile_tree``)."""
    compile_tree(tree)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), TIKTOKEN_CACHE_DIR=TIKTOKEN_CACHE)
    env.update(extra)
    return env


_COMPILED = set()


def compile_tree(tree=ROOT):
    """Write the ``.pyc`` files of ``tree``'s package for both interpreters, once per tree.

    An installed refbpe starts from bytecode (pip compiles it); a source tree run where
    ``PYTHONDONTWRITEBYTECODE`` is set would compile every module on every start instead,
    0.23 s of CPU and 140 MB more under PyPy (perf/startup.py), which is not what a user
    pays.  ``compileall`` writes the files whatever that variable says.
    """
    tree = os.path.abspath(tree)
    if tree in _COMPILED:
        return
    _COMPILED.add(tree)
    for exe in set(INTERPRETERS.values()):
        if os.path.exists(exe):
            cmd = [exe, "-m", "compileall", "-q", os.path.join(tree, "refbpe")]
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# -- processes and memory -----------------------------------------------------------------

PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_rss(session):
    """Sum of RSS (bytes) over the processes of ``session``: shared pages counted once per process."""
    return sum(int(fields[21]) * PAGE for _, fields in session_processes(session))


def tree_pss(session):
    """Sum of PSS (bytes) over the processes of ``session``: a page shared by forked workers is
    counted once, split between the processes that map it."""
    total = 0
    for pid, _ in session_processes(session):
        try:
            with open("/proc/%d/smaps_rollup" % pid, "rb") as f:
                for line in f:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1]) * 1024
        except (OSError, ValueError):
            continue
    return total


def status_kib(field="VmRSS"):
    """A field of /proc/self/status in KiB (``VmRSS`` now, ``VmHWM`` the peak); None where absent."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak():
    """Reset this process's peak-RSS high-water mark (Linux >= 4.0); False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def maxrss_kib(who=resource.RUSAGE_SELF):
    """``ru_maxrss`` in KiB (bytes on macOS)."""
    scale = 1.0 / 1024 if sys.platform == "darwin" else 1
    return int(resource.getrusage(who).ru_maxrss * scale)


def peak_kib():
    """Peak RSS of this process image in KiB: ``VmHWM``, else ``ru_maxrss``."""
    hwm = status_kib("VmHWM")
    return maxrss_kib() if hwm is None else hwm


def _busy_seconds():
    """CPU seconds spent busy by all CPUs since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / float(os.sysconf("SC_CLK_TCK"))


# -- measuring a process from outside -----------------------------------------------------


class _Sampler(object):
    """A thread that keeps the peak tree RSS (and PSS) of a session until stopped."""

    def __init__(self, session, interval, pss):
        self.session, self.interval, self.pss = session, interval, pss
        self.peak_rss = self.peak_pss = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.done.is_set():
            try:
                self.peak_rss = max(self.peak_rss, tree_rss(self.session))
                if self.pss:
                    self.peak_pss = max(self.peak_pss, tree_pss(self.session))
            except Exception:
                pass
            self.done.wait(self.interval)

    def stop(self):
        self.done.set()
        self.thread.join()


def _last_result(stdout):
    result = {}
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[7:])
    return result


def measure(cmd, env=None, timeout=None, interval=0.05, pss=False, cwd=ROOT):
    """Run ``cmd`` in a new session (``env`` added to this environment); a dict of figures:
    ``wall``, ``rc``, ``timeout``, ``peak_tree_mb`` (and ``peak_tree_pss_mb`` with ``pss``),
    ``max_process_mb`` (``ru_maxrss``), ``cpu_seconds``, ``foreign_cpu`` (the share of all
    cores that other processes used meanwhile), ``result`` (its last RESULT line), ``stdout``
    and the tail of ``stderr`` when it failed."""
    out, err = tempfile.TemporaryFile(mode="w+"), tempfile.TemporaryFile(mode="w+")
    full_env = dict(os.environ)
    full_env.update(env or {})
    busy0 = _busy_seconds()
    clock = stopwatch()
    p = subprocess.Popen(cmd, stdout=out, stderr=err, env=full_env, cwd=cwd, start_new_session=True)
    sampler = _Sampler(p.pid, interval, pss)
    timed_out = [False]

    def kill():
        timed_out[0] = True
        try:
            os.killpg(p.pid, 9)
        except OSError:
            pass

    timer = threading.Timer(timeout, kill) if timeout else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        _, status, usage = os.wait4(p.pid, 0)
    except BaseException:  # interrupted: take the whole run down with us
        kill()
        sampler.stop()
        if timer:
            timer.cancel()
        p.wait()
        raise
    wall = clock.elapsed()
    foreign = _busy_seconds() - busy0 - usage.ru_utime - usage.ru_stime
    p.returncode = os.waitstatus_to_exitcode(status)
    sampler.stop()
    if timer:
        timer.cancel()
    out.seek(0)
    err.seek(0)
    stdout, stderr = out.read(), err.read()
    r = {
        "wall": wall,
        "rc": p.returncode,
        "timeout": timed_out[0],
        "peak_tree_mb": sampler.peak_rss / 1e6,
        "max_process_mb": usage.ru_maxrss * 1024 / 1e6,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "foreign_cpu": max(0.0, foreign) / (wall * (os.cpu_count() or 1)) if wall > 0 else 0.0,
        "result": _last_result(stdout),
        "stdout": stdout,
        "stderr": stderr[-2000:] if p.returncode else "",
    }
    if pss:
        r["peak_tree_pss_mb"] = sampler.peak_pss / 1e6
    return r


def run_result(cmd, env=None, **kwargs):
    """``measure`` for a command that must succeed: exits with its stderr when it does not."""
    r = measure(cmd, env, **kwargs)
    if r["rc"]:
        raise SystemExit("failed (%s): %s\n%s" % (r["rc"], " ".join(cmd), r["stderr"]))
    return r


# -- clocks: the only place in perf/ that reads one ---------------------------------------


def cpu_seconds(children=False):
    """User + system CPU seconds of this process; with ``children``, plus those of its children
    that have been waited for (a pool's workers once it has shut down)."""
    seconds = time.process_time()
    if children:
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds += kids.ru_utime + kids.ru_stime
    return seconds


def rusage(children=False):
    """``getrusage`` of this process (or of its waited-for children): CPU, page faults, ``ru_maxrss``."""
    return resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)


class Stopwatch(object):
    """Wall and CPU seconds of a stretch of this process, started when made.

    ``elapsed()`` and ``cpu_elapsed()`` read it while it runs (a deadline, a lap); ``stop()``
    freezes both into ``wall`` and ``cpu``.  As a ``with`` block it restarts on entry and stops
    on exit: ``with stopwatch() as sw: work()`` then ``sw.wall``, ``sw.cpu``.  ``children``
    adds the CPU of waited-for child processes (``cpu_seconds``)."""

    def __init__(self, children=False):
        self.children = children
        self.restart()

    def restart(self):
        self.wall = self.cpu = None
        self._cpu0 = cpu_seconds(self.children)
        self._wall0 = time.perf_counter()  # read last, so that the wall time holds no CPU reading
        return self

    def elapsed(self):
        return time.perf_counter() - self._wall0

    def cpu_elapsed(self):
        return cpu_seconds(self.children) - self._cpu0

    def stop(self):
        self.wall, self.cpu = self.elapsed(), self.cpu_elapsed()
        return self

    def __enter__(self):
        return self.restart()

    def __exit__(self, *exc):
        self.stop()
        return False


def stopwatch(children=False):
    """A started ``Stopwatch`` (wall and CPU seconds; see there)."""
    return Stopwatch(children)


def timed(fn, repeats, pick=min, clock="wall"):
    """(``pick`` of the seconds of ``repeats`` calls of ``fn``, the last call's result); ``pick``
    is ``min`` (best of) or ``statistics.median``, ``clock`` "wall" or "cpu" (this process)."""
    times, out = [], None
    for _ in range(repeats):
        with stopwatch() as sw:
            out = fn()
        times.append(sw.wall if clock == "wall" else sw.cpu)
    return pick(times), out


def race(variants, repeats, warmup=0, clock="cpu"):
    """In-process variants of one computation against each other: ``warmup`` untimed rounds (PyPy's
    JIT), then ``repeats`` timed ones, every variant once per round in turn, their results
    checked equal in every round; ``({label: [seconds]}, {label: [CPU seconds]})``.

    ``variants`` is ``[(label, fn)]``.  ``clock``: "cpu" (CPU seconds of this process and its
    waited-for children: steadier than wall time on a busy machine), "wall", or "self"/"given"
    (``fn`` returns ``(result, seconds)`` and times itself).  The CPU seconds are kept for every
    clock."""
    times, cpu = {label: [] for label, _ in variants}, {label: [] for label, _ in variants}
    for rnd in range(warmup + repeats):
        results = []
        for label, fn in variants:
            gc.collect()
            with stopwatch(children=True) as sw:
                out = fn()
            took = sw.wall
            if clock in ("self", "given"):
                out, took = out
            results.append(out)
            if rnd >= warmup:
                times[label].append(sw.cpu if clock == "cpu" else took)
                cpu[label].append(sw.cpu)
        for (label, _), out in zip(variants[1:], results[1:]):
            if out != results[0]:
                raise AssertionError("%s: %s and %s disagree" % (label, variants[0][0], label))
    return times, cpu


# -- micro-benchmark cases: variants of one computation, raced in-process -----------------


def fmt_seconds(seconds):
    return "%.2f s" % seconds if seconds >= 1 else "%.1f ms" % (seconds * 1e3)


class Cases(object):
    """Named micro-benchmark cases and their command line (``perf/micro.py``,
    ``perf/experiments/*.py``): ``@cases.case(name, claim)`` registers a generator of
    ``(variants, note)``, variants ``[(label, fn)]`` with the trick first; ``cases.main(doc)``
    runs the ones named (or all) through ``race`` and prints one line per case and input."""

    def __init__(self):
        self.registered = {}

    def case(self, name, claim, repeats=15, warmup=3, clock="cpu"):
        """Register a case.  ``clock``: "cpu" (CPU time: steadier than wall time on a busy
        machine, for single-process cases), "wall", "self" (a variant returns (result, seconds)
        itself), "given" ("self", with no CPU times).  Cases timed by a wall clock also show the
        CPU time of all their processes."""

        def register(fn):
            self.registered[name] = (fn, claim, repeats, warmup, clock)
            return fn

        return register

    def include(self, other):
        """Add the cases of ``other`` (another file's), in their order."""
        self.registered.update(other.registered)

    def main(self, doc, argv=None, options=None):
        """The command line: NAME... (default all), ``--list``, ``--repeats``, and what
        ``options(parser)`` adds; the parsed arguments are passed to every case."""
        p = argparse.ArgumentParser(description=doc.split("\n")[0])
        p.add_argument("cases", nargs="*", metavar="NAME", help="cases to run (default: all)")
        p.add_argument("--list", action="store_true", help="list the cases and exit")
        p.add_argument("--repeats", type=int, help="timed rounds (default: per case)")
        if options:
            options(p)
        args = p.parse_args(argv)
        if args.list:
            for name, (_, claim, _, _, _) in self.registered.items():
                print("%-20s %s" % (name, claim))
            return 0
        unknown = [name for name in args.cases if name not in self.registered]
        if unknown:
            p.error("unknown case %s (see --list)" % ", ".join(unknown))
        for name in args.cases or list(self.registered):
            fn, _, repeats, warmup, clock = self.registered[name]
            repeats = repeats if clock == "given" else args.repeats or repeats
            for runs, note in fn(args):
                print_race(name, race(runs, repeats, warmup, clock), note, clock)
        return 0


def print_race(name, measured, note, clock):
    """One line: the trick's best time, each alternative's best and its ratio to the trick (and
    the ratio of medians), the clock, the interpreter and load average, and ``note``."""
    times, cpu = measured
    labels = list(times)
    base, base_median = min(times[labels[0]]), statistics.median(times[labels[0]])
    parts = ["%s %s" % (labels[0], fmt_seconds(base))]
    for label in labels[1:]:
        t = times[label]
        ratios = (min(t) / base, statistics.median(t) / base_median)
        parts.append("%s %s = %.2fx (median %.2fx)" % ((label, fmt_seconds(min(t))) + ratios))
    interp = (platform.python_implementation(), platform.python_version(), os.getloadavg()[0])
    where = "%s %s, load %.1f" % interp
    rounds = "best of %d, %s time" % (len(times[labels[0]]), "cpu" if clock == "cpu" else "wall")
    if clock == "given":
        rounds = "as perf/bench_pickle.py reports them (best of 7, wall time)"
    if clock in ("wall", "self"):
        c = [fmt_seconds(min(cpu[label])) for label in labels]
        rounds += "; CPU of all processes: " + ", ".join("%s %s" % pair for pair in zip(labels, c))
    print("%-20s %s" % (name, " | ".join(parts + [rounds, where, note() if callable(note) else note])))
    sys.stdout.flush()


def progress(label, i, repeats, r):
    """One stderr line per measured run, and the tail of stderr of a failed one."""
    status = "timeout" if r["timeout"] else ("rc=%d" % r["rc"] if r["rc"] else "ok")
    sys.stderr.write(
        "  %-58s run %d/%d %7.2fs %7.0f MB  other load %3.0f%% %s\n"
        % (label, i + 1, repeats, r["wall"], r["peak_tree_mb"], 100 * r["foreign_cpu"], status)
    )
    if r["rc"] and not r["timeout"]:
        sys.stderr.write("    " + r["stderr"].strip().replace("\n", "\n    ")[-800:] + "\n")


class Runner(object):
    """Runs jobs ``(label, cmd, env, requirement, after)`` ``repeats`` times each, round-robin, in
    a scratch directory (``work``); ``requirement`` is ``(interpreter, module)`` checked against
    ``avail`` (``suite.systems.probe``), or None; ``after(run)`` reads what a successful run left
    in ``work``; a job that fails is not run again."""

    def __init__(self, repeats, timeout, avail=None):
        self.repeats = repeats
        self.timeout = timeout
        self.avail = avail
        self.work = tempfile.mkdtemp(prefix="refbpe-perf-")

    def available(self, req):
        if req is None or self.avail is None:
            return True
        interp, module = req
        return bool(self.avail.get(interp, {}).get("_interpreter")) and bool(self.avail[interp].get(module))

    def run(self, label, cmd, env, req, after=None):
        """Repeat one job; its summary (or {'absent': ...})."""
        return self.run_many([(label, cmd, env, req, after)])[0]

    def run_many(self, jobs):
        """Repeat several jobs round-robin (repeat 1 of each, then repeat 2, ...), so that load
        from elsewhere spreads over all systems; one summary per job."""
        runs = [[] for _ in jobs]
        out = [None] * len(jobs)
        for k, job in enumerate(jobs):
            if not self.available(job[3]):
                out[k] = {"absent": "%s not installed for %s" % (job[3][1], job[3][0])}
        for i in range(self.repeats):
            for k, (label, cmd, env, _req, after) in enumerate(jobs):
                if out[k] is not None:
                    continue
                shutil.rmtree(os.path.join(self.work, "model"), ignore_errors=True)
                r = measure(cmd, env, timeout=self.timeout)
                if r["rc"] == 0 and after:
                    after(r)
                runs[k].append(r)
                progress(label, i, self.repeats, r)
                if r["rc"]:
                    out[k] = summarise(runs[k])
        return [summarise(runs[k]) if out[k] is None else out[k] for k in range(len(jobs))]

    def cleanup(self):
        shutil.rmtree(self.work, ignore_errors=True)


def summarise(runs):
    """Medians over the successful runs of one job (or why none succeeded): wall, peak tree and
    largest process MB, every numeric in-process figure of ``result``, refbpe's report phases."""
    ok = [r for r in runs if r["rc"] == 0]
    if not ok:
        last = runs[-1]
        return {"failed": "timeout" if last["timeout"] else "exit %d" % last["rc"], "stderr": last["stderr"]}
    s = {
        "runs": len(ok),
        "wall": statistics.median(r["wall"] for r in ok),
        "wall_all": [round(r["wall"], 3) for r in ok],
        "cpu": statistics.median(r["cpu_seconds"] for r in ok),
        "peak_tree_mb": statistics.median(r["peak_tree_mb"] for r in ok),
        "max_process_mb": statistics.median(r["max_process_mb"] for r in ok),
        "foreign_cpu_max": max(r["foreign_cpu"] for r in ok),
        "result": ok[len(ok) // 2]["result"],
    }
    for key in ok[0]["result"]:
        vals = [r["result"].get(key) for r in ok]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            s["result"][key] = statistics.median(vals)
    if "report" in ok[0]:
        s["report"] = ok[len(ok) // 2]["report"]
        s["phases"] = _phases(ok, s["wall"])
    if "merges_digest" in ok[0]:
        s["merges_digest"] = ok[0]["merges_digest"]
    return s


def _phases(ok, wall):
    """Median seconds per phase of refbpe's ``--report``; startup = wall - in-process total."""
    phases = {}
    for phase in ("count", "merge", "write", "read"):  # "read": if the report ever splits it out
        vals = [r["report"][phase].get("seconds") for r in ok if isinstance(r["report"].get(phase), dict)]
        if vals and all(v is not None for v in vals) and (phase == "read" or len(vals) == len(ok)):
            phases[phase] = statistics.median(vals)
    phases["total_in_process"] = statistics.median(r["report"].get("total_seconds", 0) for r in ok)
    phases["startup"] = max(0.0, wall - phases["total_in_process"])
    return phases


def save_json(name, data):
    """Write ``data`` to ``RESULTS/name`` (created if need be); the path."""
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, name)
    with open(path, "w") as f:
        json.dump(data, f, indent=1, default=str)
    return path


def save_results(prefix, data):
    """``save_json`` under ``PREFIX-YYYYmmdd-HHMMSS.json``, named by the local time; the path."""
    return save_json("%s-%s.json" % (prefix, time.strftime("%Y%m%d-%H%M%S")), data)
