"""A public file by address and sha256: found in a cache, or fetched once and cached.

The files of tiktoken's named encodings (``registry``) are public and pinned
by their sha256.  ``cached_file(url, sha256)`` returns the path of a local
copy, looking, in order, in

    1. ``$REFBPE_TIKTOKEN_DIR``: the file under the last part of its address
       (``cl100k_base.tiktoken``, ``vocab.bpe``) or under tiktoken's cache name;
    2. tiktoken's caches, named as tiktoken names them (the sha1 of the
       address, in hex): ``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR``, then
       ``<temporary directory>/data-gym-cache``, so a file tiktoken fetched is found;
    3. refbpe's own cache, laid out like tiktoken's: ``$REFBPE_CACHE_DIR``, else
       ``$XDG_CACHE_HOME/refbpe``, else ``~/.cache/refbpe``.

A copy whose sha256 differs is passed over (and named in the error if nothing
else is found).  When no copy is good the file is downloaded (from
``$REFBPE_TIKTOKEN_MIRROR`` in place of tiktoken's host when set, for machines
that reach a mirror only), checked against the pinned sha256, written to
refbpe's cache atomically, and a line on stderr says so.  When that fails too,
``FileUnavailable`` (an ``OSError``) says in one line where it looked and which
variable to set.

Cost: one sha256 of each copy looked at (about 10 ms for cl100k_base's 1.7 MB
under CPython); the download once per machine.
"""

import hashlib
import importlib
import os
import sys
import tempfile

from .._util.atomic import atomic_write

__all__ = [
    "TIKTOKEN_HOST",
    "FileUnavailable",
    "cached_file",
]

USER_DIR_VARIABLE = "REFBPE_TIKTOKEN_DIR"
MIRROR_VARIABLE = "REFBPE_TIKTOKEN_MIRROR"
TIKTOKEN_HOST = "https://openaipublic.blob.core.windows.net/"
_TIMEOUT = 60  # seconds without a byte before a download is given up


class FileUnavailable(OSError):
    """No good local copy, and the download failed."""


def tiktoken_cache_dirs():
    """The directories tiktoken caches in, as its ``load.read_file_cached`` chooses them
    (an empty ``TIKTOKEN_CACHE_DIR`` turns its cache off)."""
    dirs = []
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            dirs.append(os.environ[var])
    if "TIKTOKEN_CACHE_DIR" not in os.environ and "DATA_GYM_CACHE_DIR" not in os.environ:
        dirs.append(os.path.join(tempfile.gettempdir(), "data-gym-cache"))
    return dirs


def refbpe_cache_dir():
    """``$REFBPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/refbpe``, else ``~/.cache/refbpe``."""
    if os.environ.get("REFBPE_CACHE_DIR"):
        return os.environ["REFBPE_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "refbpe")


def cache_name(url):
    """tiktoken's name for the cached copy of ``url``: the sha1 of the address."""
    return hashlib.sha1(url.encode()).hexdigest()


def _places(url):
    """The paths a copy of ``url`` may have, in search order."""
    name = cache_name(url)
    places = []
    user_dir = os.environ.get(USER_DIR_VARIABLE)
    if user_dir:
        for base in (url.rsplit("/", 1)[-1], name):
            places.append(os.path.join(user_dir, base))
    for d in tiktoken_cache_dirs():
        places.append(os.path.join(d, name))
    places.append(os.path.join(refbpe_cache_dir(), name))
    return places


def _sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(url):
    """The bytes at ``url`` (any scheme urllib opens, ``file:`` included).

    ``urllib.request`` is imported on first use (as ``cli`` imports its commands),
    not with the module: it brings ``http``, ``email`` and ``ssl``, 0.12 CPU s under
    PyPy, which every ``refbpe`` command paid (its subcommands import this module)
    and only a download needs; the subcommands' imports 0.28 -> 0.22 CPU s
    (perf/startup.py)."""
    request = importlib.import_module("urllib.request")
    with request.urlopen(url, timeout=_TIMEOUT) as response:
        return response.read()


def _source(url):
    mirror = os.environ.get(MIRROR_VARIABLE)
    if mirror and url.startswith(TIKTOKEN_HOST):
        return mirror.rstrip("/") + "/" + url[len(TIKTOKEN_HOST) :]
    return url


def cached_file(url, sha256):
    """The path of a local copy of ``url`` whose sha256 is ``sha256`` (see the module docstring)."""
    looked = []
    for path in _places(url):
        if not os.path.isfile(path):
            continue
        try:
            if _sha256_of(path) == sha256:
                return path
            looked.append("%s (sha256 differs)" % path)
        except OSError as e:
            looked.append("%s (%s)" % (path, e.strerror or e))
    return _download(url, sha256, looked)


def _download(url, sha256, looked):
    source = _source(url)
    dest = os.path.join(refbpe_cache_dir(), cache_name(url))
    try:
        data = fetch(source)
    except (OSError, ValueError) as e:  # urllib's URLError is an OSError
        raise FileUnavailable(_unavailable(url, looked, "download from %s failed: %s" % (source, _reason(e))))
    got = hashlib.sha256(data).hexdigest()
    if got != sha256:
        raise FileUnavailable(
            _unavailable(url, looked, "download from %s has sha256 %s, expected %s" % (source, got, sha256))
        )
    try:
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        atomic_write(dest, data)
    except OSError as e:
        raise FileUnavailable(
            "%s: downloaded, but cannot write %s (%s); set REFBPE_CACHE_DIR to a writable directory"
            % (url.rsplit("/", 1)[-1], dest, e.strerror or e)
        )
    sys.stderr.write(
        "refbpe: downloaded %s (%.1f MB, sha256 checked) to %s\n" % (source, len(data) / 1e6, dest)
    )
    sys.stderr.flush()
    return dest


def _reason(error):
    reason = getattr(error, "reason", None) or getattr(error, "strerror", None) or error
    return " ".join(str(reason).split())


def _unavailable(url, looked, failure):
    name = url.rsplit("/", 1)[-1]
    where = [USER_DIR_VARIABLE + (" (unset)" if not os.environ.get(USER_DIR_VARIABLE) else "")]
    where += ["tiktoken's cache (%s)" % ", ".join(tiktoken_cache_dirs() or ["off"])]
    where += ["refbpe's cache (%s)" % refbpe_cache_dir()]
    bad = ("; passed over: %s" % ", ".join(looked)) if looked else ""
    return "%s not found in %s%s; %s; set %s to a directory holding %s" % (
        name,
        ", ".join(where),
        bad,
        failure,
        USER_DIR_VARIABLE,
        name,
    )
