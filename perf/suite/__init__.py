"""The benchmark suite that ``perf/run.py`` drives: every system in its own process, side by side.

Modules: ``systems`` (the systems under test and the command that runs each on one input),
``sections`` (the jobs of each table and the result rows they add), ``targets`` (the issue's
targets as data, and their verdict) and ``report`` (the tables, the targets block and the
plot).  Paths, interpreters and the measuring of a process are ``perf/harness.py``'s.
"""
