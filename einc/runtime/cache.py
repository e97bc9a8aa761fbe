"""The on-disk cache shared by both backends: verified, atomically written blobs.

Entries are ``MAGIC + sha256(payload) + payload``; a truncated, corrupted or foreign file
fails the check and reads as a miss, so it is recompiled and rewritten, never trusted.
A directory that cannot be written degrades to memory-only caching with one warning.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from pathlib import Path

MAGIC = b"EINC1\0"


def cache_dir() -> Path:
    """The cache root: ``$EINC_CACHE_DIR`` or ``~/.cache/einc``."""
    return Path(os.environ.get("EINC_CACHE_DIR") or Path.home() / ".cache" / "einc")


def digest(*parts) -> str:
    """A stable hex key over strings/bytes (the cache key of a compiled kernel)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()


class DiskCache:
    """Blobs under ``root/kind/<key>``, verified on read, replaced atomically on write."""

    def __init__(self, kind: str, root: Path | None = None):
        self.root = (root or cache_dir()) / kind
        self.enabled = os.environ.get("EINC_DISK_CACHE", "1") != "0"
        self._warned = False

    def read(self, key: str) -> bytes | None:
        if not self.enabled:
            return None
        try:
            blob = (self.root / key).read_bytes()
        except OSError:
            return None
        head = len(MAGIC) + 32
        if len(blob) < head or not blob.startswith(MAGIC):
            return None
        payload = blob[head:]
        if hashlib.sha256(payload).digest() != blob[len(MAGIC):head]:
            return None
        return payload

    def write(self, key: str, payload: bytes) -> None:
        if not self.enabled:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, self.root / key)
        except OSError as e:
            self.enabled = False
            if not self._warned:
                self._warned = True
                warnings.warn(f"einc: cache directory {self.root} is not writable ({e}); "
                              "caching compiled kernels in memory only", RuntimeWarning, stacklevel=3)
