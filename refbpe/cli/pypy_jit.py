"""Under PyPy, ``refbpe verify`` compiles fewer, hotter loops: ``tune_verify_jit``.

PyPy's JIT traces a loop once it has run ``threshold`` iterations (1039 by
default; a function after ``function_threshold`` calls, 1619), then compiles
the trace and a bridge for each guard that fails often.  ``verify`` explains
a divergence with many short phases: one replay of their merges, a dozen
reading differences (each a few thousand windows), a check per hypothesis and
step, overlays that start and stop.  Each phase's loops pass the default
thresholds and are traced, most for a few thousand iterations more: in a
cold process about 0.8 of 1.9 CPU seconds went to warming up, against 1.1 s
for the same run warm (``perf/verify_stages.py --repeats 4``).  With
``VERIFY_JIT_PARAMS`` the short loops run in the interpreter and the long
ones (counting, the reference's training, the replay of thousands of merges)
are still compiled after a few thousand iterations, a negligible delay on
a corpus big enough to matter.

The parameters are set in this process (``pypyjit.set_param``) when the
subcommand starts: a restarted process (``pypy_gc``) sets them itself.
Output does not depend on them.  Measured (the reasons beside the table).
Nothing is done under CPython (no ``pypyjit``).
"""

try:
    import pypyjit
except ImportError:  # CPython
    pypyjit = None

__all__ = ["VERIFY_JIT_PARAMS", "tune_verify_jit", "tune_jit_early"]

# english_small against perf/verify_cost.py's hf model, vocab 2,000, the nursery of the restart
# set (PYPY_GC_NURSERY=16MB), /usr/bin/time user+system, medians of 3 alternating runs, load
# average 2.4-3.0: default 2.26 CPU s, threshold 2000 2.25 s, 4000 2.12 s, 8000 2.05 s, 16000
# 2.19 s; lower thresholds were slower (500: 2.43 s); chunks-4096 2.68 -> 2.40 s at 8000;
# ``train`` and the identical model level (0.85 s and 0.78 s either way).
VERIFY_JIT_PARAMS = "threshold=6000,function_threshold=9000"


def tune_verify_jit(params=VERIFY_JIT_PARAMS):
    """Set PyPy's JIT ``params`` for this process (nothing under CPython)."""
    if pypyjit is not None:
        pypyjit.set_param(params)


def tune_jit_early(argv):
    """``tune_verify_jit`` when ``argv`` (the process's command line) runs ``verify``."""
    if argv[1:2] == ["verify"]:
        tune_verify_jit()
