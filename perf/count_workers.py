"""Counting with 1 worker against 2: the speed-up of ``count_words`` (wall and CPU seconds).

    .venv-pypy/bin/python perf/count_workers.py [--corpus english_medium] [--repeats 3]
    .venv-pypy/bin/python perf/count_workers.py --trees OTHER_TREE,.   # before/after, alternated
    .venv-pypy/bin/python perf/count_workers.py --side-by-side         # two one-worker counts at once

Each run is a fresh process (this interpreter) that times ``count_words(CORPUS,
["<|endoftext|>"], workers=W)`` in-process (pool start-up and adding up the
tables included, interpreter start-up not), as perf/peers/count_refbpe.py does
for the count section of perf/run.py.  It reports the wall time, the CPU
seconds of the main process (``getrusage``, from the call on) and of its
workers (their sum, and the busiest one's from ``/proc``), and the load
average.  Runs alternate (tree A w1, tree A w2, tree B w1, ...) and the
medians of ``--repeats`` are printed; ``paired x`` is the median of each round's
w1 wall over its w2 wall (``paired_speedup``).

On a machine shared with other work the wall ratio is what the load left
over; the CPU columns are not.  ``cpu bound`` is the ratio a quiet 2-core
machine could reach at best: the one-worker run's CPU over the larger of the
busiest process's CPU in the two-worker run (the main process or a worker)
and half of that run's CPU (two cores for all its processes).  Python 3.9 syntax (PyPy runs it).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from harness import ROOT, SPECIAL, corpus, proc_stat, rusage, save_results, stopwatch, tree_env


def children(pid):
    """The pids of the children of process ``pid`` (``/proc/PID/task/*/children``)."""
    pids = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return pids
    for task in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                pids += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return pids


def watch_workers(proc):
    """Until ``proc`` ends: every 20 ms, the CPU seconds of each of its children (from
    outside, so that the measured process runs no thread); each child's last reading."""
    tick = float(os.sysconf("SC_CLK_TCK"))
    seconds = {}
    while proc.poll() is None:
        for pid in children(proc.pid):
            try:
                fields = proc_stat(pid)
            except (OSError, IndexError, ValueError):
                continue
            seconds[pid] = (int(fields[11]) + int(fields[12])) / tick
        time.sleep(0.02)
    return seconds


def workers_cpu():
    """CPU seconds of this process's children that have been waited for (the pool's workers)."""
    usage = rusage(children=True)
    return usage.ru_utime + usage.ru_stime


def child(path, workers, chunk_size):
    """In the measured process: one ``count_words`` call, its figures as one JSON line."""
    from refbpe.corpus.count import count_words

    with stopwatch() as sw:
        counts = count_words([path], [SPECIAL], workers=workers, chunk_size=chunk_size)
    wall, main_cpu = sw.wall, sw.cpu
    print(
        json.dumps(
            {
                "wall": wall,
                "main_cpu": main_cpu,
                "workers_cpu": workers_cpu(),
                "unique_words": len(counts),
                "load": os.getloadavg()[0],
            }
        )
    )


def run_once(tree, path, workers, chunk_size):
    command = [sys.executable, os.path.abspath(__file__), "--child", path, str(workers), str(chunk_size)]
    proc = subprocess.Popen(command, env=tree_env(tree), stdout=subprocess.PIPE)
    seconds = watch_workers(proc)
    out = proc.stdout.read()
    if proc.wait() != 0:
        raise SystemExit("perf/count_workers.py: the measured run failed")
    figures = json.loads(out.decode().strip().splitlines()[-1])
    figures.update(busiest_worker_cpu=max(list(seconds.values()) or [0.0]), pool_processes=len(seconds))
    return figures


def summary(runs, workers):
    """Medians of the runs of one tree and worker count."""
    keys = ("wall", "main_cpu", "workers_cpu", "busiest_worker_cpu", "pool_processes", "load")
    row = {k: statistics.median(r[k] for r in runs) for k in keys}
    row["busiest_cpu"] = max(
        row["main_cpu"], row["busiest_worker_cpu"], (row["main_cpu"] + row["workers_cpu"]) / 2
    )
    return row


def paired_speedup(ones, twos):
    """The median over rounds of one round's w1 wall over its w2 wall: the two run back
    to back, so a machine whose speed drifts during the runs (seen: w1 from 4.7 s to
    3.0 s over eleven rounds) moves both alike, where the ratio of the medians mixes
    rounds."""
    return statistics.median(a["wall"] / b["wall"] for a, b in zip(ones, twos))


def side_by_side(tree, path, repeats):
    """One-worker counts alone and two at once (independent processes), alternating rounds:
    how much two busy cores slow each other down.  Two workers can at best beat one by
    2 / (1 + slowdown), before any cost of sharing the work out."""
    command = [sys.executable, os.path.abspath(__file__), "--child", path, "1", "0"]

    def start():
        return subprocess.Popen(command, env=tree_env(tree), stdout=subprocess.PIPE)

    def wall(proc):
        out = proc.communicate()[0]
        if proc.returncode != 0:
            raise SystemExit("perf/count_workers.py: the measured run failed")
        return json.loads(out.decode().strip().splitlines()[-1])["wall"]

    alone, together = [], []
    for i in range(repeats):
        alone.append(wall(start()))
        pair = [start(), start()]
        together += [wall(p) for p in pair]
        figures = (i + 1, alone[-1]) + tuple(together[-2:])
        print("  round %d: alone %.2f s, two at once %.2f s and %.2f s" % figures)
    a, b = statistics.median(alone), statistics.median(together)
    print(
        "\none worker alone %.2f s, each of two at once %.2f s (medians): slowdown %.1f%%, so two workers"
        " at best %.2fx one (load %.1f)" % (a, b, 100 * (b / a - 1), 2 * a / b, os.getloadavg()[0])
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="english_medium")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--trees", default=".", help="source trees to compare, comma list (default: this one)"
    )
    parser.add_argument("--chunk-size", type=int, default=0, help="bytes per unit (default 0: count_words's)")
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="one-worker counts alone and two at once instead: what two busy cores cost each other",
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child[0], int(args.child[1]), int(args.child[2]) or None)
    path = corpus(args.corpus)
    if args.side_by_side:
        return side_by_side(os.path.abspath(args.trees.split(",")[0]), path, args.repeats)
    trees = [
        os.path.abspath(os.path.join(ROOT, t)) if t == "." else os.path.abspath(t)
        for t in args.trees.split(",")
    ]
    runs = {(t, w): [] for t in trees for w in (1, 2)}
    for i in range(args.repeats):
        for tree in trees:
            for workers in (1, 2):
                r = run_once(tree, path, workers, args.chunk_size)
                runs[tree, workers].append(r)
                print(
                    "  run %d %s w%d: wall %.2f s, CPU main %.2f s, %d workers %.2f s (most %.2f), load %.1f"
                    % (
                        i + 1,
                        tree,
                        workers,
                        r["wall"],
                        r["main_cpu"],
                        r["pool_processes"],
                        r["workers_cpu"],
                        r["busiest_worker_cpu"],
                        r["load"],
                    ),
                    flush=True,
                )
    out = {"corpus": args.corpus, "repeats": args.repeats, "interpreter": sys.version.split()[0], "trees": {}}
    print("\n%s, medians of %d (CPU in seconds)" % (args.corpus, args.repeats))
    print(
        "  %-40s %7s %7s %9s %9s %9s %9s %10s %6s"
        % ("tree", "w1 wall", "w2 wall", "wall x", "paired x", "w1 cpu", "w2 cpu", "cpu bound", "load")
    )
    for tree in trees:
        one, two = summary(runs[tree, 1], 1), summary(runs[tree, 2], 2)
        row = {
            "w1": one,
            "w2": two,
            "wall_speedup": one["wall"] / two["wall"],
            "paired_speedup": paired_speedup(runs[tree, 1], runs[tree, 2]),
            "cpu_bound_speedup": one["main_cpu"] / two["busiest_cpu"],
            "runs": {"w1": runs[tree, 1], "w2": runs[tree, 2]},
        }
        out["trees"][tree] = row
        print(
            "  %-40s %7.2f %7.2f %8.2fx %8.2fx %9.2f %9.2f %9.2fx %6.1f"
            % (
                tree[-40:],
                one["wall"],
                two["wall"],
                row["wall_speedup"],
                row["paired_speedup"],
                one["main_cpu"],
                two["main_cpu"] + two["workers_cpu"],
                row["cpu_bound_speedup"],
                (one["load"] + two["load"]) / 2,
            )
        )
    print("\nresults: %s" % save_results("count-workers", out))


if __name__ == "__main__":
    main()
