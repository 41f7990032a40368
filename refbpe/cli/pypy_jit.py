"""Under PyPy, ``refbpe verify`` compiles fewer, hotter loops: ``tune_jit_early``.

PyPy's JIT traces a loop once it has run ``threshold`` iterations (1039 by
default; a function after ``function_threshold`` calls, 1619), then compiles
the trace, and a bridge for each guard that fails often.  ``verify`` explains
a divergence in many short phases: one replay of their merges, a dozen
reading differences (each a few thousand windows), a check per hypothesis and
step, overlays that start and stop.  Each phase's loops pass the default
thresholds and are traced, most for a few thousand iterations more: in a cold
process about 0.8 of 1.9 CPU seconds went to warming up, against 1.1 s for the
same run warm (``perf/verify_stages.py --repeats 4``), and tracing and the
backend alone took 0.45-0.6 s (``PYPYLOG=jit-summary``).  With
``VERIFY_JIT_PARAMS`` the short loops run in the interpreter, and the long ones
(counting, the reference's training, the replay of thousands of merges) are
compiled a few thousand iterations later, a delay that a corpus big enough to
matter does not notice.

``main`` sets them in the process that runs the subcommand (after
``pypy_gc``'s restart, before the subcommands are imported: compiling their
regexes loops too), for ``verify`` only: ``train``'s loops are long, and
it was level either way.  Output does not depend on them; nothing is done
under CPython (no ``pypyjit``).
"""

try:
    import pypyjit
except ImportError:  # CPython
    pypyjit = None

__all__ = ["tune_jit_early", "tune_verify_jit"]

# ``refbpe verify`` of english_small against perf/verify_cost.py's hf model, vocab 2,000, PyPy,
# /usr/bin/time user+system, medians of 3 alternating runs: the default 2.02 CPU s, thresholds
# (loop/function) 4000/6000, 6000/9000 and 8000/12000 each 1.92 s (load average 1.1-1.6); with
# the nursery preset (no restart), set before the imports, load 2.4-3.1: the default 2.26 s,
# 4000/6000 2.12 s, 8000/12000 2.05 s, 16000/24000 2.19 s, and lower ones slower (500/800
# 2.44 s against 2.31 s); the chunks-4096 model 2.68 -> 2.40 s at 8000/12000, ``train`` and the
# identical model level (0.85 and 0.78 s either way).
VERIFY_JIT_PARAMS = "threshold=6000,function_threshold=9000"


def tune_verify_jit(params=VERIFY_JIT_PARAMS):
    """Set PyPy's JIT ``params`` for this process (nothing under CPython)."""
    if pypyjit is not None:
        pypyjit.set_param(params)


def tune_jit_early(argv):
    """``tune_verify_jit`` when ``argv`` (the process's command line) runs ``verify``."""
    if argv[1:2] == ["verify"]:
        tune_verify_jit()
