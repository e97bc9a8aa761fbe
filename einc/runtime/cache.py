"""The on-disk cache shared by both backends: verified, atomically written blobs.

An entry is ``MAGIC + sha256(key + payload) + payload`` in ``root/kind/<key>``. Reading
checks all of it, so a truncated, corrupted, empty or foreign file (another format,
another key's entry copied in, a directory where a file should be) reads as a miss: the
kernel is recompiled and the entry rewritten, never trusted. Writing goes to a private
temporary file renamed over the entry (``os.replace`` is atomic), so processes filling
one cache at once leave exactly one whole entry per key; a failed write removes its
temporary. A cache that cannot be written (read-only, full, not a directory) is still
read, and later kernels stay in memory, with one warning per cache.
"""
from __future__ import annotations

import errno
import hashlib
import os
import tempfile
import threading
import warnings
from pathlib import Path

MAGIC = b"EINC2\0"  # EINC1 entries (sha256 of the payload alone) read as misses
TMP_PREFIX = ".tmp-"


def cache_dir() -> Path:
    """The cache root: ``$EINC_CACHE_DIR`` or ``~/.cache/einc``."""
    return Path(os.environ.get("EINC_CACHE_DIR") or Path.home() / ".cache" / "einc")


def digest(*parts) -> str:
    """A stable hex key over strings/bytes (the cache key of a compiled kernel).

    >>> digest("a", b"b") == digest("a", "b")
    True
    """
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()


def _seal(key: str, payload: bytes) -> bytes:
    return hashlib.sha256(key.encode() + b"\0" + payload).digest()


def _write_file(fd: int, data: bytes) -> None:
    """Write ``data`` to the new file ``fd`` and close it (tests make this fail: a full disk)."""
    with os.fdopen(fd, "wb") as f:
        f.write(data)


class DiskCache:
    """Blobs under ``root/kind/<key>``, verified on read, replaced atomically on write.

    >>> import tempfile; c = DiskCache("doc", root=Path(tempfile.mkdtemp()))
    >>> c.write("k", b"code"); c.read("k"), c.read("other")
    (b'code', None)
    """

    def __init__(self, kind: str, root: Path | None = None):
        self.root = (root or cache_dir()) / kind
        self.enabled = os.environ.get("EINC_DISK_CACHE", "1") != "0"
        self.writable = True
        self.warnings = 0  # how many times this cache warned (at most once)
        self._lock = threading.Lock()

    def read(self, key: str) -> bytes | None:
        """The payload stored under ``key``, or None (missing, unreadable or not valid)."""
        if not self.enabled:
            return None
        try:
            blob = (self.root / key).read_bytes()
        except OSError:  # missing, a directory, unreadable
            return None
        head = len(MAGIC) + 32
        if len(blob) < head or not blob.startswith(MAGIC):
            return None
        payload = blob[head:]
        if _seal(key, payload) != blob[len(MAGIC):head]:
            return None
        return payload

    def write(self, key: str, payload: bytes) -> None:
        """Store ``payload`` under ``key``; on a cache that cannot be written, warn once."""
        if not (self.enabled and self.writable):
            return
        tmp = None
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=TMP_PREFIX)
            _write_file(fd, MAGIC + _seal(key, payload) + payload)
            self._replace(tmp, self.root / key)
            tmp = None
        except IsADirectoryError:
            pass  # a directory squats on this one entry: leave it, keep the rest of the cache
        except OSError as e:
            self._disable(e)
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    @staticmethod
    def _replace(tmp: str, path: Path) -> None:
        try:
            os.replace(tmp, path)
        except OSError as e:
            if e.errno not in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST) or not path.is_dir():
                raise
            try:
                path.rmdir()  # an empty directory in the way is ours to remove
            except OSError:
                raise IsADirectoryError(e.errno, e.strerror, str(path)) from e
            os.replace(tmp, path)

    def _disable(self, e: OSError) -> None:
        with self._lock:
            if not self.writable:
                return
            self.writable = False
            self.warnings += 1
        reason = "full" if e.errno in (errno.ENOSPC, errno.EDQUOT) else "not writable"
        warnings.warn(f"einc: cache directory {self.root} is {reason} ({e}); caching newly "
                      "compiled kernels in memory only", RuntimeWarning, stacklevel=4)
