"""Measuring one process from outside: whole-process wall time, peak memory of its process
tree, the CPU the rest of the machine used meanwhile; repeats and medians.

- **Wall time**: ``perf_counter`` around the process, from ``Popen`` to ``wait4``
  (interpreter start, imports, reading and writing included).
- **Peak tree memory**: the process is started in a new session; a thread reads
  ``/proc/*/stat`` every 50 ms and adds up the RSS of every process of that session.
  Forked workers share copy-on-write pages, which this sum counts once per process.
  Cost per sample: one read per process on the machine.
- **Largest single process**: ``ru_maxrss`` from ``wait4`` (the largest of the tree).
- **Load**: CPU seconds of the whole machine (``/proc/stat``) during the run minus the run's
  own (rusage), as a share of all cores: how much of the machine others used (noise).
- **Result**: the last ``RESULT {json}`` line of the process's stdout (the in-process
  figures of a runner in ``perf/peers/``).

``Runner`` repeats jobs round-robin (run 1 of every job, then run 2, ...) so that a burst of
load elsewhere does not hit one system only, and ``summarise`` reports medians.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from systems import ROOT

PAGE = os.sysconf("SC_PAGE_SIZE")


def session_processes(session):
    """``[(pid, stat fields after the command name)]`` of the live processes of ``session``
    (from /proc/PID/stat: field 0 is the state, 3 the session, 21 the RSS in pages)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rindex(b")") + 2 :].split()
        if int(rest[3]) == session and rest[0] != b"Z":
            found.append((int(name), rest))
    return found


def _tree_rss(session):
    """Sum of RSS (bytes) of every process in ``session`` (the run's process tree)."""
    return sum(int(rest[21]) * PAGE for _, rest in session_processes(session))


def _busy_seconds():
    """CPU seconds spent busy by all CPUs since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / float(os.sysconf("SC_CLK_TCK"))


def measure(cmd, env=None, timeout=None, interval=0.05):
    """Run ``cmd`` in a new session; wall seconds, peak tree RSS, stdout RESULT."""
    out = tempfile.TemporaryFile(mode="w+")
    err = tempfile.TemporaryFile(mode="w+")
    full_env = dict(os.environ)
    full_env.update(env or {})
    busy0 = _busy_seconds()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=out, stderr=err, env=full_env, cwd=ROOT, start_new_session=True)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            try:
                peak[0] = max(peak[0], _tree_rss(p.pid))
            except Exception:
                pass
            done.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
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
        done.set()
        if timer:
            timer.cancel()
        p.wait()
        raise
    wall = time.perf_counter() - t0
    foreign = _busy_seconds() - busy0 - usage.ru_utime - usage.ru_stime
    p.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    if timer:
        timer.cancel()
    sampler.join()
    out.seek(0)
    err.seek(0)
    stdout, stderr = out.read(), err.read()
    result = {}
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[7:])
    return {
        "wall": wall,
        "rc": p.returncode,
        "timeout": timed_out[0],
        "peak_tree_mb": peak[0] / 1e6,
        "max_process_mb": usage.ru_maxrss * 1024 / 1e6,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        # CPU used by everything else on the machine during the run, as a share of all cores
        "foreign_cpu": max(0.0, foreign) / (wall * (os.cpu_count() or 1)) if wall > 0 else 0.0,
        "result": result,
        "stderr": stderr[-2000:] if p.returncode else "",
    }


class Runner(object):
    """Runs jobs ``(label, cmd, env, requirement, after)`` ``repeats`` times each in a scratch
    directory (``work``); ``after(run)`` reads what a successful run left there."""

    def __init__(self, repeats, timeout, avail):
        self.repeats = repeats
        self.timeout = timeout
        self.avail = avail
        self.work = tempfile.mkdtemp(prefix="refbpe-perf-")

    def available(self, req):
        interp, module = req
        return bool(self.avail.get(interp, {}).get("_interpreter")) and bool(self.avail[interp].get(module))

    def run(self, label, cmd, env, req, after=None):
        """Repeat one job; its summary (or {'absent': ...})."""
        return self.run_many([(label, cmd, env, req, after)])[0]

    def run_many(self, jobs):
        """Repeat several jobs round-robin (repeat 1 of each, then repeat 2, ...), so
        that load from elsewhere spreads over all systems; one summary per job."""
        runs = [[] for _ in jobs]
        out = [None] * len(jobs)
        for k, job in enumerate(jobs):
            req = job[3]
            if not self.available(req):
                out[k] = {"absent": "%s not installed for %s" % (req[1], req[0])}
        for i in range(self.repeats):
            for k, (label, cmd, env, _req, after) in enumerate(jobs):
                if out[k] is not None:
                    continue
                shutil.rmtree(os.path.join(self.work, "model"), ignore_errors=True)
                r = measure(cmd, env, timeout=self.timeout)
                if r["rc"] == 0 and after:
                    after(r)
                runs[k].append(r)
                self._progress(label, i, r)
                if r["rc"]:
                    out[k] = summarise(runs[k])
        for k in range(len(jobs)):
            if out[k] is None:
                out[k] = summarise(runs[k])
        return out

    def _progress(self, label, i, r):
        status = "timeout" if r["timeout"] else ("rc=%d" % r["rc"] if r["rc"] else "ok")
        sys.stderr.write(
            "  %-58s run %d/%d %7.2fs %7.0f MB  other load %3.0f%% %s\n"
            % (label, i + 1, self.repeats, r["wall"], r["peak_tree_mb"], 100 * r["foreign_cpu"], status)
        )
        if r["rc"]:
            sys.stderr.write("    " + r["stderr"].strip().replace("\n", "\n    ")[-800:] + "\n")

    def cleanup(self):
        shutil.rmtree(self.work, ignore_errors=True)


def summarise(runs):
    """Medians over the successful runs of one job (or why none succeeded)."""
    ok = [r for r in runs if r["rc"] == 0]
    if not ok:
        last = runs[-1]
        return {"failed": "timeout" if last["timeout"] else "exit %d" % last["rc"], "stderr": last["stderr"]}
    s = {
        "runs": len(ok),
        "wall": statistics.median(r["wall"] for r in ok),
        "wall_all": [round(r["wall"], 3) for r in ok],
        "peak_tree_mb": statistics.median(r["peak_tree_mb"] for r in ok),
        "max_process_mb": statistics.median(r["max_process_mb"] for r in ok),
        "foreign_cpu_max": max(r["foreign_cpu"] for r in ok),
        "result": ok[len(ok) // 2]["result"],
    }
    # median of every numeric in-process figure
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
    for phase in ("count", "merge", "write"):
        vals = [r["report"].get(phase, {}).get("seconds") for r in ok]
        if all(v is not None for v in vals):
            phases[phase] = statistics.median(vals)
    for phase in ("read",):  # if the report ever splits reading out
        vals = [
            r["report"].get(phase, {}).get("seconds") for r in ok if isinstance(r["report"].get(phase), dict)
        ]
        if vals:
            phases[phase] = statistics.median(vals)
    phases["total_in_process"] = statistics.median(r["report"].get("total_seconds", 0) for r in ok)
    phases["startup"] = max(0.0, wall - phases["total_in_process"])
    return phases
