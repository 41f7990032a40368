"""The processes of this machine, read from ``/proc``: what the tests and ``perf/harness.py`` (as
``tests.processes``) use to find a command's processes and to measure them.  Standard library
only, Python 3.9: PyPy runs it too."""

import os

__all__ = ["proc_stat", "processes", "session_processes"]


def proc_stat(pid):
    """Fields of /proc/PID/stat after the command name: 0 state, 1 ppid, 3 session, 21 RSS pages."""
    with open("/proc/%d/stat" % pid, "rb") as f:
        stat = f.read()
    return stat[stat.rindex(b")") + 2 :].decode("ascii").split()


def processes(where):
    """``[(pid, stat fields)]`` of the live (not zombie) processes whose fields satisfy ``where``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = proc_stat(int(name))
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and where(fields):
            found.append((int(name), fields))
    return found


def session_processes(session):
    """The live processes of ``session`` (a process started with ``start_new_session``: its pid)."""
    return processes(lambda fields: int(fields[3]) == session)
