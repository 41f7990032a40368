"""Progress lines on stderr and peak-memory readings for the summary.

An ETA is the work left over the rate so far.  For bytes the rate is
taken from the first report that counted anything, and no ETA is shown
until that rate spans ``_RATE_SPAN`` seconds: the first results of a pool
arrive after its start-up and come in bursts, so an early estimate was off
by orders of magnitude (976 s shown for a phase of 4 s).  For merges, the rate
is merges/s since the phase began (the early merges are the costly ones, so
the ETA errs long).
"""

import resource
import sys
import time

__all__ = ["Progress", "peak_memory_mb", "peak_memory_figures", "clear_status_line"]

_visible = []  # the Progress whose status line is on screen, if any
_RATE_SPAN = 1.0  # seconds of counted work before a byte rate is trusted for an ETA


def clear_status_line():
    """Erase a status line still on screen (before an error message, say)."""
    for progress in list(_visible):
        progress.finish()


def _mb(n):
    return n / 1e6


def peak_memory_mb():
    """(this process, largest child) peak resident set size, in MB."""
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is KiB on Linux
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale
    return _mb(own), _mb(children)


def peak_memory_figures():
    """A report's whole-run ``peak_memory_mb``: ``{"main": MB, "largest_worker": MB}``."""
    own, children = peak_memory_mb()
    return {"main": round(own, 1), "largest_worker": round(children, 1)}


class Progress(object):
    """Throttled, overwritten status lines (only when ``enabled``)."""

    def __init__(self, enabled, stream=None, interval=0.5):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.interval = interval
        self._last = 0.0
        self._start = time.time()
        self._shown = False
        self._first = None  # (time, bytes done) of the first report that counted anything

    def start(self):
        self._start = time.time()
        self._last = 0.0
        self._first = None

    def _eta(self, done, total):
        """Seconds left by the byte rate since the first counted report, or None until known."""
        now = time.time()
        if self._first is None:
            if done > 0:
                self._first = (now, done)
            return None
        t0, done0 = self._first
        if now - t0 < _RATE_SPAN or done <= done0:
            return None
        return (total - done) * (now - t0) / (done - done0)

    def _emit(self, text, force=False):
        if not self.enabled:
            return
        now = time.time()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        self.stream.write("\r\x1b[K" + text)
        self.stream.flush()
        if not self._shown:
            _visible.append(self)
        self._shown = True

    def bytes(self, done, total, label="counting"):
        elapsed = max(time.time() - self._start, 1e-9)
        rate = done / elapsed
        if total:
            left = self._eta(done, total)
            eta = "ETA -" if left is None else "ETA %.0fs" % left
            text = "%s: %.1f of %.1f MB (%.0f%%), %.1f MB/s, %s" % (
                label,
                _mb(done),
                _mb(total),
                100.0 * done / total,
                _mb(rate),
                eta,
            )
        else:
            text = "%s: %.1f MB, %.1f MB/s" % (label, _mb(done), _mb(rate))
        self._emit(text, force=bool(total) and done >= total)

    def merges(self, done, total):
        elapsed = max(time.time() - self._start, 1e-9)
        rate = done / elapsed
        eta = "ETA %.0fs" % ((total - done) / rate) if done > 0 else "ETA -"
        self._emit(
            "merging: %d of %d merges (%.0f%%), %.0f merges/s, %s"
            % (done, total, 100.0 * done / total if total else 100.0, rate, eta),
            force=done >= total,
        )

    def finish(self):
        if self.enabled and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False
            _visible.remove(self)

    def line(self, text):
        """A permanent line (summary); printed unless quiet."""
        self.finish()
        self.stream.write(text + "\n")
        self.stream.flush()
