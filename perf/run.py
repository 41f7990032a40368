"""refbpe benchmark suite: every system in its own process, side by side.

    .venv/bin/python perf/run.py --quick       # english_small (+ corpus.en), vocab 1K/10K, 1 repeat
    .venv/bin/python perf/run.py               # full: all corpora, vocab 1K/10K/32K, 3 repeats (hours)
    .venv/bin/python perf/run.py --only train,encode,count --corpora english_medium --vocab 10000

See perf/README.md.  The driver runs under CPython (the .venv); refbpe runs
under both interpreters, peers where they are installed (probed, and reported
as absent where not).  Wall time is whole-process; peak memory is the sum of
the RSS of the whole process tree, sampled from /proc every 50 ms, plus the
largest single-process peak from ``wait4`` rusage.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS = os.path.join(HERE, "peers")
DATA = os.path.abspath(os.environ.get("REFBPE_DATA", os.path.join(ROOT, "..", "shared", "data")))
CORPORA = os.path.join(DATA, "corpora")
CS336 = os.path.join(DATA, "cs336")
SPECIAL = "<|endoftext|>"
PAGE = os.sysconf("SC_PAGE_SIZE")

INTERPRETERS = {
    "cpython": os.environ.get("REFBPE_CPYTHON", os.path.join(ROOT, ".venv", "bin", "python")),
    "pypy": os.environ.get("REFBPE_PYPY", os.path.join(ROOT, ".venv-pypy", "bin", "python")),
}

CORPUS_FILES = {
    "corpus.en": os.path.join(CS336, "corpus.en"),
    "english_small": os.path.join(CORPORA, "english_small.txt"),
    "english_medium": os.path.join(CORPORA, "english_medium.txt"),
    "russian": os.path.join(CORPORA, "russian.txt"),
    "chinese": os.path.join(CORPORA, "chinese.txt"),
    "tinystories_ru": os.path.join(CORPORA, "tinystories_ru.txt"),
    "mixed_multilingual": os.path.join(CORPORA, "mixed_multilingual.txt"),
    "python_code": os.path.join(CORPORA, "python_code.txt"),
}

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
NAIVE_MAX_BYTES = 1 << 20
TRAIN_PEERS = ["hf", "rustbpe", "bpeasy"]
ENCODE_SYSTEMS = ["refbpe-pypy", "refbpe-cpython", "tiktoken", "hf"]
COUNT_SYSTEMS = [
    "refbpe-pypy-w1",
    "refbpe-pypy-w2",
    "refbpe-cpython-w1",
    "refbpe-cpython-w2",
    "regex-cpython",
]


# -- measuring one process ---------------------------------------------------


def _tree_rss(session):
    """Sum of RSS (bytes) of every process in ``session`` (the run's process tree)."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rindex(b")") + 2 :].split()
        if int(rest[3]) == session:
            total += int(rest[21]) * PAGE
    return total


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


# -- availability --------------------------------------------------------------


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


# -- jobs --------------------------------------------------------------------


def peer(script):
    return os.path.join(PEERS, script)


def train_cmd(system, corpus, vocab, work):
    """(cmd, env, requirement (interpreter, module)) for a training system."""
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


def encode_cmd(system, text, max_bytes):
    path = CORPUS_FILES[text]
    gpt2 = [os.path.join(CS336, "gpt2_vocab.json"), os.path.join(CS336, "gpt2_merges.txt")]
    tail = ["--max-bytes", str(max_bytes)]
    if system.startswith("refbpe-"):
        interp = system.split("-")[1]
        return [INTERPRETERS[interp], peer("encode_refbpe.py"), path] + gpt2 + tail, {}, (interp, "refbpe")
    if system == "tiktoken":
        return (
            [INTERPRETERS["cpython"], peer("encode_tiktoken.py"), path] + tail,
            {"TIKTOKEN_CACHE_DIR": os.path.join(CS336, "tiktoken_cache")},
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
    if system == "regex-cpython":
        return [INTERPRETERS["cpython"], peer("count_regex.py"), path], {}, ("cpython", "regex")
    _, interp, w = system.split("-")
    return [INTERPRETERS[interp], peer("count_refbpe.py"), path, w[1:]], {}, (interp, "refbpe")


def merges_digest(model_dir):
    sys.path.insert(0, PEERS)
    from _common import merges_digest as digest

    from refbpe.formats import read_gpt2

    _, merges = read_gpt2(os.path.join(model_dir, "vocab.json"), os.path.join(model_dir, "merges.txt"))
    return digest(merges)


class Runner(object):
    def __init__(self, args, avail):
        self.args = args
        self.avail = avail
        self.work = tempfile.mkdtemp(prefix="refbpe-perf-")
        self.log = []

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
        for k, (label, cmd, env, req, after) in enumerate(jobs):
            if not self.available(req):
                out[k] = {"absent": "%s not installed for %s" % (req[1], req[0])}
        for i in range(self.args.repeats):
            for k, (label, cmd, env, req, after) in enumerate(jobs):
                if out[k] is not None:
                    continue
                shutil.rmtree(os.path.join(self.work, "model"), ignore_errors=True)
                r = measure(cmd, env, timeout=self.args.timeout)
                if r["rc"] == 0 and after:
                    after(r)
                runs[k].append(r)
                status = "timeout" if r["timeout"] else ("rc=%d" % r["rc"] if r["rc"] else "ok")
                sys.stderr.write(
                    "  %-58s run %d/%d %7.2fs %7.0f MB  other load %3.0f%% %s\n"
                    % (
                        label,
                        i + 1,
                        self.args.repeats,
                        r["wall"],
                        r["peak_tree_mb"],
                        100 * r["foreign_cpu"],
                        status,
                    )
                )
                if r["rc"]:
                    sys.stderr.write("    " + r["stderr"].strip().replace("\n", "\n    ")[-800:] + "\n")
                    out[k] = summarise(runs[k])
        for k in range(len(jobs)):
            if out[k] is None:
                out[k] = summarise(runs[k])
        return out

    def cleanup(self):
        shutil.rmtree(self.work, ignore_errors=True)


def summarise(runs):
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
        s["phases"] = {}
        for phase in ("count", "merge", "write"):
            vals = [r["report"].get(phase, {}).get("seconds") for r in ok]
            if all(v is not None for v in vals):
                s["phases"][phase] = statistics.median(vals)
        for phase in ("read",):  # if the report ever splits reading out
            vals = [
                r["report"].get(phase, {}).get("seconds")
                for r in ok
                if isinstance(r["report"].get(phase), dict)
            ]
            if vals:
                s["phases"][phase] = statistics.median(vals)
        s["phases"]["total_in_process"] = statistics.median(r["report"].get("total_seconds", 0) for r in ok)
        s["phases"]["startup"] = max(0.0, s["wall"] - s["phases"]["total_in_process"])
    if "merges_digest" in ok[0]:
        s["merges_digest"] = ok[0]["merges_digest"]
    return s


# -- the sections --------------------------------------------------------------


def section_train(runner, corpora, vocabs, systems):
    results = []
    smallest = min(corpora, key=lambda c: os.path.getsize(CORPUS_FILES[c]))
    for corpus in corpora:
        mb = os.path.getsize(CORPUS_FILES[corpus]) / 1e6
        for vocab in vocabs:
            jobs, metas = [], []
            for system in systems:
                if system == "naive-pypy" and (corpus != smallest or vocab != min(vocabs)):
                    continue  # the oracle is quadratic: smallest input, smallest vocab only
                if system == "naive-pypy" and os.path.getsize(CORPUS_FILES[corpus]) > NAIVE_MAX_BYTES:
                    results.append(
                        {
                            "corpus": corpus,
                            "mb": mb,
                            "vocab": vocab,
                            "system": system,
                            "absent": "skipped: naive oracle only on inputs <= 1 MB",
                        }
                    )
                    continue
                cmd, env, req = train_cmd(system, corpus, vocab, runner.work)

                def after(r, system=system):
                    if system.startswith("refbpe-"):
                        with open(os.path.join(runner.work, "report.json")) as f:
                            r["report"] = json.load(f)
                        r["merges_digest"] = merges_digest(os.path.join(runner.work, "model"))
                    elif system == "naive-pypy":
                        r["merges_digest"] = r["result"].get("merges_digest")

                jobs.append(("train %s %s@%d" % (system, corpus, vocab), cmd, env, req, after))
                metas.append(dict(corpus=corpus, mb=mb, vocab=vocab, system=system))
            for s, meta in zip(runner.run_many(jobs), metas):
                s.update(meta)
                results.append(s)
    return results


def section_train_inprocess(runner):
    """The CPython in-process target: corpus.en at 500 (best of the repeats)."""
    code = (
        "import time, refbpe\nt=time.perf_counter()\n"
        "refbpe.train_bpe(%r, 500, [%r], workers=1)\n"
        "print('RESULT {\"train_seconds\": %%.4f}' %% (time.perf_counter()-t))\n"
    ) % (CORPUS_FILES["corpus.en"], SPECIAL)
    out = []
    for interp in ("cpython", "pypy"):
        s = runner.run(
            "train in-process refbpe-%s corpus.en@500" % interp,
            [INTERPRETERS[interp], "-c", code],
            {},
            (interp, "refbpe"),
        )
        s.update(system="refbpe-%s" % interp)
        out.append(s)
    return out


def section_encode(runner, texts, systems, max_bytes):
    results = []
    for text in texts:
        jobs = []
        for system in systems:
            cmd, env, req = encode_cmd(system, text, max_bytes)
            jobs.append(("encode %s %s" % (system, text), cmd, env, req, None))
        for system, s in zip(systems, runner.run_many(jobs)):
            s.update(text=text, system=system)
            if "result" in s and s["result"].get("encode_seconds"):
                s["mb_per_s"] = s["result"]["bytes"] / s["result"]["encode_seconds"] / 1e6
                if s["result"].get("warm_seconds"):
                    s["warm_mb_per_s"] = s["result"]["warm_bytes"] / s["result"]["warm_seconds"] / 1e6
            results.append(s)
    return results


def section_count(runner, corpus, systems):
    results = []
    path = CORPUS_FILES[corpus]
    jobs = []
    for system in systems:
        cmd, env, req = count_cmd(system, path)
        jobs.append(("count %s %s" % (system, corpus), cmd, env, req, None))
    for system, s in zip(systems, runner.run_many(jobs)):
        s.update(corpus=corpus, system=system, workers=int(system[-1]) if system[-2:-1] == "w" else 1)
        results.append(s)
    return results


def section_memory(runner, corpus, copies, system):
    """Peak tree RSS of counting ``corpus`` vs ``copies`` concatenated copies of it."""
    src = CORPUS_FILES[corpus]
    tmp = tempfile.mkdtemp(prefix="refbpe-perf-big-")
    big = os.path.join(tmp, "%s_x%d.txt" % (corpus, copies))
    try:
        with open(src, "rb") as f:
            data = f.read()
        with open(big, "wb") as f:
            for i in range(copies):
                f.write(data)
                if i + 1 < copies:
                    f.write(SPECIAL.encode())
        del data
        out = []
        for label, path in ((corpus, src), ("%s x%d" % (corpus, copies), big)):
            cmd, env, req = count_cmd(system, path)
            s = runner.run("memory %s %s" % (system, label), cmd, env, req)
            s.update(input=label, mb=os.path.getsize(path) / 1e6, system=system)
            out.append(s)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def section_pickle():
    p = subprocess.run(
        [INTERPRETERS["cpython"], os.path.join(HERE, "bench_pickle.py"), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        cwd=ROOT,
    )
    if p.returncode:
        return {"failed": p.stderr[-500:]}
    return json.loads(p.stdout)


# -- printing ------------------------------------------------------------------


def fmt_ratio(a, b):
    if not a or not b:
        return "-"
    return "%.2fx" % (a / b)


def status(s):
    if "absent" in s:
        return "absent (%s)" % s["absent"]
    if "failed" in s:
        return "FAILED (%s)" % s["failed"]
    return None


def table_train(results):
    lines = [
        "TRAINING: whole-process wall time (median), peak memory; ratio = this system's time / peer's time (<1: faster);",
        "load = worst CPU share used by other processes during a run (noise)",
    ]
    keys = sorted({(r["mb"], r["corpus"], r["vocab"]) for r in results})
    for mb, corpus, vocab in keys:
        group = [r for r in results if r["corpus"] == corpus and r["vocab"] == vocab]
        peers = {r["system"]: r.get("wall") for r in group if r["system"] in TRAIN_PEERS}
        lines.append("")
        lines.append("%s (%.1f MB) @ vocab %d" % (corpus, mb, vocab))
        lines.append(
            "  %-18s %8s %8s %9s %9s  %9s %9s %9s %6s  %s"
            % (
                "system",
                "median s",
                "min s",
                "tree MB",
                "proc MB",
                "vs hf",
                "vs rustbpe",
                "vs bpeasy",
                "load",
                "merges",
            )
        )
        for r in group:
            st = status(r)
            if st:
                lines.append("  %-18s %s" % (r["system"], st))
                continue
            lines.append(
                "  %-18s %8.2f %8.2f %9.0f %9.0f  %9s %9s %9s %5.0f%%  %s"
                % (
                    r["system"],
                    r["wall"],
                    min(r["wall_all"]),
                    r["peak_tree_mb"],
                    r["max_process_mb"],
                    fmt_ratio(r["wall"], peers.get("hf")),
                    fmt_ratio(r["wall"], peers.get("rustbpe")),
                    fmt_ratio(r["wall"], peers.get("bpeasy")),
                    100 * r.get("foreign_cpu_max", 0),
                    r.get("merges_digest", ""),
                )
            )
        digests = {r.get("merges_digest") for r in group if r.get("merges_digest")}
        if len(digests) > 1:
            lines.append("  !! refbpe/naive merges differ between systems: %s" % sorted(digests))
        elif digests:
            lines.append(
                "  refbpe (all interpreters/workers)%s: identical merges"
                % (
                    " and naive"
                    if any(r["system"] == "naive-pypy" and r.get("merges_digest") for r in group)
                    else ""
                )
            )
    return "\n".join(lines)


def table_phases(results):
    lines = [
        "REFBPE PHASES (CLI --report, medians, seconds; read is overlapped with counting, inside 'count';"
        " startup = wall - in-process total)",
        "  %-18s %-26s %8s %8s %8s %8s %8s %9s %9s"
        % ("system", "corpus@vocab", "startup", "count", "merge", "write", "wall", "count MB/s", "words"),
    ]
    for r in results:
        if not r["system"].startswith("refbpe-") or "phases" not in r:
            continue
        ph, rep = r["phases"], r["report"]
        mbs = r["mb"] / ph["count"] if ph.get("count") else 0
        lines.append(
            "  %-18s %-26s %8.2f %8.2f %8.2f %8.2f %8.2f %9.1f %9d"
            % (
                r["system"],
                "%s@%d" % (r["corpus"], r["vocab"]),
                ph["startup"],
                ph.get("count", 0),
                ph.get("merge", 0),
                ph.get("write", 0),
                r["wall"],
                mbs,
                rep.get("count", {}).get("unique_words", 0),
            )
        )
    return "\n".join(lines)


def table_encode(results):
    lines = [
        "ENCODING with the GPT-2 vocab, one thread: MB/s of the encode call (median); ids compared with tiktoken"
    ]
    for text in sorted({r["text"] for r in results}, key=lambda t: [x["text"] for x in results].index(t)):
        group = [r for r in results if r["text"] == text]
        ref = {r["system"]: r for r in group if "mb_per_s" in r}
        tk = ref.get("tiktoken")
        nbytes = next((r["result"]["bytes"] for r in group if "result" in r), 0)
        lines.append("")
        lines.append("%s (first %.1f MB)" % (text, nbytes / 1e6))
        lines.append(
            "  %-16s %8s %8s %8s %8s %9s %11s %11s %9s %9s  %s"
            % (
                "system",
                "MB/s",
                "warm MB/s",
                "load s",
                "wall s",
                "tree MB",
                "vs tiktoken",
                "warm vs tk",
                "vs hf",
                "ids",
                "ids == tiktoken",
            )
        )
        for r in group:
            st = status(r)
            if st:
                lines.append("  %-16s %s" % (r["system"], st))
                continue
            same = (
                "-"
                if not tk
                else (
                    "yes"
                    if r["result"]["ids_digest"] == tk["result"]["ids_digest"]
                    and r["result"]["ids"] == tk["result"]["ids"]
                    else "NO"
                )
            )
            warm = r.get("warm_mb_per_s")
            lines.append(
                "  %-16s %8.2f %8s %8.2f %8.2f %9.0f %11s %11s %9s %9d  %s"
                % (
                    r["system"],
                    r["mb_per_s"],
                    "%.2f" % warm if warm else "-",
                    r["result"]["load_seconds"],
                    r["wall"],
                    r["peak_tree_mb"],
                    fmt_ratio(r["mb_per_s"], tk and tk["mb_per_s"]),
                    fmt_ratio(warm, tk and tk.get("warm_mb_per_s")),
                    fmt_ratio(r["mb_per_s"], ref.get("hf", {}).get("mb_per_s")),
                    r["result"]["ids"],
                    same,
                )
            )
    lines.append("  (MB/s: the first encode call, JIT warm-up and empty caches included; warm MB/s: a second")
    lines.append("   call on the next part of the text; ratios: this system / the peer, >1: faster)")
    return "\n".join(lines)


def table_count(results):
    lines = ["PRE-TOKENIZE + COUNT throughput (in-process count_words time, median)"]
    base = next((r for r in results if r["system"] == "regex-cpython" and "result" in r), None)
    base_mbs = base["result"]["mb_per_s"] if base else None
    by = {r["system"]: r for r in results}
    if results:
        lines.append("  input: %s" % results[0]["corpus"])
    lines.append(
        "  %-18s %8s %8s %12s %12s %10s %9s %9s"
        % ("system", "workers", "MB/s", "MB/s/worker", "vs regex", "1->2 w", "tree MB", "words")
    )
    for r in results:
        st = status(r)
        if st:
            lines.append("  %-18s %s" % (r["system"], st))
            continue
        mbs = r["result"]["mb_per_s"]
        speedup = "-"
        if r["system"].endswith("-w2"):
            one = by.get(r["system"][:-1] + "1")
            if one and "result" in one:
                speedup = "%.2fx" % (mbs / one["result"]["mb_per_s"])
        lines.append(
            "  %-18s %8d %8.2f %12.2f %12s %10s %9.0f %9d"
            % (
                r["system"],
                r["workers"],
                mbs,
                mbs / r["workers"],
                fmt_ratio(mbs, base_mbs),
                speedup,
                r["peak_tree_mb"],
                r["result"]["unique_words"],
            )
        )
    return "\n".join(lines)


def table_memory(results):
    lines = [
        "MEMORY vs corpus size (counting; peak = sum of RSS over the process tree, sampled every 50 ms)",
        "  %-16s %-26s %9s %8s %8s %10s %10s"
        % ("system", "input", "MB", "wall s", "MB/s", "tree MB", "proc MB"),
    ]
    for r in results:
        st = status(r)
        if st:
            lines.append("  %-16s %-26s %s" % (r["system"], r["input"], st))
            continue
        lines.append(
            "  %-16s %-26s %9.0f %8.2f %8.2f %10.0f %10.0f"
            % (
                r["system"],
                r["input"],
                r["mb"],
                r["wall"],
                r["result"]["mb_per_s"],
                r["peak_tree_mb"],
                r["max_process_mb"],
            )
        )
    ok = [r for r in results if "peak_tree_mb" in r]
    if len(ok) == 2:
        lines.append(
            "  input x%.1f -> peak tree memory x%.2f"
            % (ok[1]["mb"] / ok[0]["mb"], ok[1]["peak_tree_mb"] / ok[0]["peak_tree_mb"])
        )
    return "\n".join(lines)


def table_availability(avail):
    lines = ["AVAILABILITY (peer modules per interpreter; absent = not installed / not installable there)"]
    for interp, found in avail.items():
        exe = found.get("_interpreter")
        parts = [
            "%s=%s" % (k, v if v else "absent") for k, v in sorted(found.items()) if not k.startswith("_")
        ]
        lines.append(
            "  %-8s %s" % (interp, ("(%s) " % exe if exe else "(interpreter absent) ") + ", ".join(parts))
        )
    return "\n".join(lines)


def targets(res):
    """[(target, measured, met?)] for the issue's goals that this run measured."""
    out = []

    def get(section, **kw):
        for r in res.get(section, []):
            if all(r.get(k) == v for k, v in kw.items()) and "wall" in r:
                return r
        return None

    for corpus in ("english_medium", "english_small"):
        py2 = get("train", corpus=corpus, vocab=10000, system="refbpe-pypy-w2")
        if not py2:
            continue
        rb, hf = (
            get("train", corpus=corpus, vocab=10000, system="rustbpe"),
            get("train", corpus=corpus, vocab=10000, system="hf"),
        )
        cp = [
            r
            for r in (
                get("train", corpus=corpus, vocab=10000, system="refbpe-cpython-w2"),
                get("train", corpus=corpus, vocab=10000, system="refbpe-cpython-w1"),
            )
            if r
        ]
        tag = "" if corpus == "english_medium" else " [%s, not the target input]" % corpus
        if rb:
            q = py2["wall"] / rb["wall"]
            out.append(
                (
                    "train PyPy 2w <= 1.0x rustbpe" + tag,
                    "%.2fx (%.2fs vs %.2fs)" % (q, py2["wall"], rb["wall"]),
                    q <= 1.0,
                )
            )
        if hf:
            q = py2["wall"] / hf["wall"]
            out.append(
                (
                    "train PyPy 2w <= 0.4x HF" + tag,
                    "%.2fx (%.2fs vs %.2fs)" % (q, py2["wall"], hf["wall"]),
                    q <= 0.4,
                )
            )
            if cp:
                best = min(cp, key=lambda r: r["wall"])
                q = best["wall"] / hf["wall"]
                out.append(
                    (
                        "train CPython <= 1.5x HF" + tag,
                        "%.2fx (%s %.2fs vs %.2fs)" % (q, best["system"], best["wall"], hf["wall"]),
                        q <= 1.5,
                    )
                )
        break
    for r in res.get("train_inprocess", []):
        if r["system"] == "refbpe-cpython" and "result" in r:
            t = min(x for x in [r["result"]["train_seconds"]])
            out.append(("CPython corpus.en@500 in-process <= 0.2 s", "%.3fs" % t, t <= 0.2))
    for text in sorted({r["text"] for r in res.get("encode", [])}):
        g = {r["system"]: r for r in res["encode"] if r["text"] == text and "mb_per_s" in r}
        if "refbpe-pypy" in g and "tiktoken" in g:
            q = g["refbpe-pypy"]["mb_per_s"] / g["tiktoken"]["mb_per_s"]
            same = g["refbpe-pypy"]["result"]["ids_digest"] == g["tiktoken"]["result"]["ids_digest"]
            out.append(
                (
                    "encode PyPy >= 1.0x tiktoken, identical ids [%s]" % text,
                    "%.2fx (%.2f vs %.2f MB/s), ids %s"
                    % (
                        q,
                        g["refbpe-pypy"]["mb_per_s"],
                        g["tiktoken"]["mb_per_s"],
                        "identical" if same else "DIFFER",
                    ),
                    q >= 1.0 and same,
                )
            )
            wp, wt = g["refbpe-pypy"].get("warm_mb_per_s"), g["tiktoken"].get("warm_mb_per_s")
            if wp and wt:
                out.append(
                    (
                        "encode PyPy >= 1.0x tiktoken, warm call [%s]" % text,
                        "%.2fx (%.2f vs %.2f MB/s)" % (wp / wt, wp, wt),
                        wp >= wt,
                    )
                )
    c = {r["system"]: r for r in res.get("count", []) if "result" in r}
    ctag = " [%s]" % res["count"][0]["corpus"] if res.get("count") else ""
    if "refbpe-pypy-w1" in c:
        for w in ("w1", "w2"):
            r = c.get("refbpe-pypy-" + w)
            if r:
                per = r["result"]["mb_per_s"] / r["workers"]
                out.append(
                    (
                        "count PyPy >= 25 MB/s per worker (%s)%s" % (w, ctag),
                        "%.2f MB/s/worker" % per,
                        per >= 25,
                    )
                )
        if "regex-cpython" in c and "refbpe-pypy-w2" in c:
            q = c["refbpe-pypy-w2"]["result"]["mb_per_s"] / c["regex-cpython"]["result"]["mb_per_s"]
            out.append(("count PyPy 2w >= 8x CPython regex baseline" + ctag, "%.2fx" % q, q >= 8))
        if "refbpe-pypy-w2" in c:
            q = c["refbpe-pypy-w2"]["result"]["mb_per_s"] / c["refbpe-pypy-w1"]["result"]["mb_per_s"]
            out.append(("count PyPy speed-up 1->2 workers >= 1.8x" + ctag, "%.2fx" % q, q >= 1.8))
    m = [r for r in res.get("memory", []) if "peak_tree_mb" in r]
    if len(m) == 2:
        q = m[1]["peak_tree_mb"] / m[0]["peak_tree_mb"]
        out.append(
            (
                "memory flat with corpus size (%s, x%.0f: peak <= 1.25x)"
                % (m[0]["input"], m[1]["mb"] / m[0]["mb"]),
                "%.0f MB -> %.0f MB (%.2fx)" % (m[0]["peak_tree_mb"], m[1]["peak_tree_mb"], q),
                q <= 1.25,
            )
        )
    return out


def table_targets(res):
    rows = targets(res)
    lines = ["TARGETS (from the issue; ratios measured in this run)"]
    for name, measured, ok in rows:
        lines.append("  [%s] %-58s %s" % ("met " if ok else "MISS", name, measured))
    return "\n".join(lines)


def plot(res, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib absent: no plot (pip install matplotlib)"
    train = [r for r in res.get("train", []) if "wall" in r]
    vocabs = sorted({r["vocab"] for r in train})
    if not train:
        return "no training results: no plot"
    fig, axes = plt.subplots(1, len(vocabs), figsize=(6 * len(vocabs), 4.5), squeeze=False)
    for ax, vocab in zip(axes[0], vocabs):
        for system in TRAIN_SYSTEMS:
            pts = sorted((r["mb"], r["wall"]) for r in train if r["vocab"] == vocab and r["system"] == system)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=system)
        ax.set_xscale("log")
        ax.set_yscale("log")
        from matplotlib.ticker import FormatStrFormatter, NullFormatter

        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(FormatStrFormatter("%g"))
            axis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("corpus size (MB)")
        ax.set_ylabel("wall time (s, median, whole process)")
        ax.set_title("training, vocab %d" % vocab)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return "plot: %s" % path


# -- main ----------------------------------------------------------------------

FULL_CORPORA = [
    "corpus.en",
    "english_small",
    "english_medium",
    "russian",
    "chinese",
    "tinystories_ru",
    "mixed_multilingual",
    "python_code",
]
FULL_TEXTS = ["english_small", "english_medium", "russian", "chinese", "mixed_multilingual", "python_code"]


def parse(argv):
    p = argparse.ArgumentParser(description="refbpe benchmark suite (see perf/README.md)")
    p.add_argument("--quick", action="store_true", help="english_small (+ corpus.en), vocab 1K/10K, 1 repeat")
    p.add_argument(
        "--only",
        default="train,encode,count,memory,pickle",
        help="comma list of sections: train,encode,count,memory,pickle (default all)",
    )
    p.add_argument("--corpora", help="training corpora (comma list of %s)" % ",".join(FULL_CORPORA))
    p.add_argument("--vocab", help="vocab sizes, comma list (default 1000,10000,32000; quick 1000,10000)")
    p.add_argument("--systems", help="training systems (default all: %s)" % ",".join(TRAIN_SYSTEMS))
    p.add_argument(
        "--encode-texts",
        help="texts to encode (default: quick english_small; full %s)" % ",".join(FULL_TEXTS),
    )
    p.add_argument("--encode-systems", help="default %s" % ",".join(ENCODE_SYSTEMS))
    p.add_argument(
        "--encode-max-mb", type=float, default=8.0, help="encode the first N MB of each text (default 8)"
    )
    p.add_argument(
        "--count-corpus",
        help="input of the counting table (default: quick english_small, full english_medium)",
    )
    p.add_argument("--count-systems", help="default %s" % ",".join(COUNT_SYSTEMS))
    p.add_argument(
        "--memory-corpus",
        help="memory table input, repeated --memory-copies times (default: quick english_small, full english_medium)",
    )
    p.add_argument("--memory-copies", type=int, default=10)
    p.add_argument("--memory-system", default="refbpe-pypy-w2")
    p.add_argument(
        "--repeats", type=int, help="runs per measurement, median reported (default: quick 1, full 3)"
    )
    p.add_argument(
        "--timeout", type=float, default=3600, help="seconds per run before it is killed (default 3600)"
    )
    p.add_argument(
        "--out", default=os.path.join(HERE, "results"), help="results directory (default perf/results)"
    )
    a = p.parse_args(argv)
    quick = a.quick
    a.sections = [s.strip() for s in a.only.split(",") if s.strip()]
    a.corpora = (
        a.corpora.split(",") if a.corpora else (["corpus.en", "english_small"] if quick else FULL_CORPORA)
    )
    a.vocabs = (
        [int(v) for v in a.vocab.split(",")]
        if a.vocab
        else ([1000, 10000] if quick else [1000, 10000, 32000])
    )
    a.systems = a.systems.split(",") if a.systems else TRAIN_SYSTEMS
    a.texts = a.encode_texts.split(",") if a.encode_texts else (["english_small"] if quick else FULL_TEXTS)
    a.encode_systems = a.encode_systems.split(",") if a.encode_systems else ENCODE_SYSTEMS
    a.count_corpus = a.count_corpus or ("english_small" if quick else "english_medium")
    a.count_systems = a.count_systems.split(",") if a.count_systems else COUNT_SYSTEMS
    a.memory_corpus = a.memory_corpus or ("english_small" if quick else "english_medium")
    a.repeats = a.repeats or (1 if quick else 3)
    for c in a.corpora + a.texts + [a.count_corpus, a.memory_corpus]:
        if c not in CORPUS_FILES:
            p.error("unknown corpus %r (known: %s)" % (c, ", ".join(CORPUS_FILES)))
        if not os.path.exists(CORPUS_FILES[c]):
            p.error("%s: missing (set REFBPE_DATA to the shared data directory)" % CORPUS_FILES[c])
    return a


def main(argv=None):
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so temp dirs are removed
    args = parse(argv if argv is not None else sys.argv[1:])
    os.makedirs(args.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    avail = probe()
    res = {
        "started": stamp,
        "argv": sys.argv[1:],
        "repeats": args.repeats,
        "cpus": os.cpu_count(),
        "availability": avail,
    }
    runner = Runner(args, avail)
    t0 = time.time()
    try:
        if "train" in args.sections:
            res["train"] = section_train(runner, args.corpora, args.vocabs, args.systems)
            res["train_inprocess"] = section_train_inprocess(runner)
        if "encode" in args.sections:
            res["encode"] = section_encode(
                runner, args.texts, args.encode_systems, int(args.encode_max_mb * 1e6)
            )
        if "count" in args.sections:
            res["count"] = section_count(runner, args.count_corpus, args.count_systems)
        if "memory" in args.sections:
            res["memory"] = section_memory(runner, args.memory_corpus, args.memory_copies, args.memory_system)
        if "pickle" in args.sections:
            res["pickle"] = section_pickle()
    finally:
        runner.cleanup()
    res["seconds"] = time.time() - t0
    blocks = [table_availability(avail)]
    if res.get("train"):
        blocks += [table_train(res["train"]), table_phases(res["train"])]
    if res.get("train_inprocess"):
        blocks.append(
            "IN-PROCESS train_bpe(corpus.en, 500), median s: "
            + ", ".join(
                "%s %.3f" % (r["system"], r["result"]["train_seconds"])
                if "result" in r
                else "%s %s" % (r["system"], status(r))
                for r in res["train_inprocess"]
            )
        )
    if res.get("encode"):
        blocks.append(table_encode(res["encode"]))
    if res.get("count"):
        blocks.append(table_count(res["count"]))
    if res.get("memory"):
        blocks.append(table_memory(res["memory"]))
    if res.get("pickle") and isinstance(res["pickle"], list):
        sys.path.insert(0, HERE)
        from bench_pickle import format_table

        blocks.append(format_table(res["pickle"]))
    blocks.append(table_targets(res))
    noisy = [
        r
        for sec in ("train", "encode", "count", "memory")
        for r in res.get(sec, [])
        if r.get("foreign_cpu_max", 0) > 0.10
    ]
    if noisy:
        blocks.append(
            "NOISE: %d measurement(s) ran while other processes used > 10%% of the machine's CPU "
            "(worst %.0f%%); see foreign_cpu in the JSON and re-run on a quiet machine."
            % (len(noisy), 100 * max(r["foreign_cpu_max"] for r in noisy))
        )
    if res.get("train"):
        png = os.path.join(args.out, "train-%s.png" % stamp)
        blocks.append(plot(res, png))
    blocks.append(
        "repeats per measurement: %d (medians); %d CPUs; %.0f s in all"
        % (args.repeats, os.cpu_count(), res["seconds"])
    )
    text = "\n\n".join(blocks)
    print(text)
    for name in ("results-%s.json" % stamp, "latest.json"):
        with open(os.path.join(args.out, name), "w") as f:
            json.dump(res, f, indent=1, default=str)
    for name in ("results-%s.txt" % stamp, "latest.txt"):
        with open(os.path.join(args.out, name), "w") as f:
            f.write(text + "\n")
    print("results: %s" % os.path.join(args.out, "results-%s.{json,txt}" % stamp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
