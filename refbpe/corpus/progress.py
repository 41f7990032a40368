"""Progress lines on stderr and peak-memory readings for the summary."""

import resource
import sys
import time

__all__ = ["Progress", "peak_memory_mb", "peak_memory_figures", "clear_status_line"]

_visible = []  # the Progress whose status line is on screen, if any


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

    def start(self):
        self._start = time.time()
        self._last = 0.0

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
            eta = "ETA %.0fs" % ((total - done) / rate) if done > 0 else "ETA -"
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
        self._emit(
            "merging: %d of %d merges, %.0f merges/s" % (done, total, done / elapsed), force=done >= total
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
