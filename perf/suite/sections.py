"""The benchmark's sections: which jobs each one runs, and the rows it adds to the results.

Each ``section_*`` function builds the jobs of one table (``systems`` gives the commands),
runs them through a ``measure.Runner`` (round-robin repeats, medians) and returns a list of
summaries, each tagged with its input and system: the rows that ``report`` prints and
``targets`` judges, and that the driver writes to the results JSON.

- train: every system x corpus x vocab; the naive oracle only on the smallest corpus at the
  smallest vocab (and only if it is <= 1 MB: it is quadratic); refbpe's ``--report`` phases and
  the digest of its merges (and the oracle's) are kept to compare them.
- train_inprocess: ``train_bpe(corpus.en, 500)`` timed inside the process, both interpreters.
- encode: one ``encode`` call on the first ``--encode-max-mb`` of each text, MB/s derived.
- count: in-process ``count_words`` time against a plain regex count on CPython.
- memory: counting a corpus and ``copies`` concatenated copies of it (a temp file, deleted).
- pickle: ``bench_pickle.py --json`` (it runs both interpreters itself).
"""

import json
import os
import shutil
import subprocess
import tempfile

from harness import CORPUS_FILES, ROOT, SPECIAL

from suite.systems import (
    NAIVE_MAX_BYTES,
    count_cmd,
    encode_cmd,
    merges_digest,
    pickle_cmd,
    train_cmd,
    train_inprocess_cmd,
)


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
                after = _train_after(runner.work, system)
                jobs.append(("train %s %s@%d" % (system, corpus, vocab), cmd, env, req, after))
                metas.append(dict(corpus=corpus, mb=mb, vocab=vocab, system=system))
            for s, meta in zip(runner.run_many(jobs), metas):
                s.update(meta)
                results.append(s)
    return results


def _train_after(work, system):
    """What to keep of a successful training run: refbpe's report and merges digest, the oracle's."""

    def after(r):
        if system.startswith("refbpe-"):
            with open(os.path.join(work, "report.json")) as f:
                r["report"] = json.load(f)
            r["merges_digest"] = merges_digest(os.path.join(work, "model"))
        elif system == "naive-pypy":
            r["merges_digest"] = r["result"].get("merges_digest")

    return after


def section_train_inprocess(runner):
    """The CPython in-process target: corpus.en at 500 (median of the repeats)."""
    out = []
    for interp in ("cpython", "pypy"):
        cmd, env, req = train_inprocess_cmd(interp)
        s = runner.run("train in-process refbpe-%s corpus.en@500" % interp, cmd, env, req)
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
        pickle_cmd(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        cwd=ROOT,
    )
    if p.returncode:
        return {"failed": p.stderr[-500:]}
    return json.loads(p.stdout)
