"""Tuned choices: `einc tune`'s measured winners, stored on disk and applied by plan().

A winner is a `Choice` (strategy, gett tile, K split) per contraction of the path, keyed
by everything the plan depends on: the canonical expression (labels renamed in order of
appearance, so ``ij,jk->ik`` and ``ab,bc->ac`` share an entry), the bound shapes and
element strides, the dtypes, the output's dtype and strides, ``optimize``, the device
name and the CUDA kernels' VERSION (a kernel change invalidates every measurement).

The store is one JSON file, ``$EINC_CACHE_DIR/tuned.json``, replaced atomically (temporary
file + os.replace). It is read once per process and kept in memory: plan() asks it on
every plan it builds, and an empty store answers without computing a key. A file that
does not parse is ignored with one warning (and replaced by the next `einc tune`).
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import tempfile
import threading
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

FORMAT = 1


@dataclass(frozen=True)
class Choice:
    """What plan() does with one contraction; None leaves that part to the cost model."""

    strategy: str | None = None  # "gett" or "reduce"
    tile: str | None = None  # a SIMT gett tile (emit.GETT_TILES)
    split: int | None = None  # K slices (1: none)

    def text(self) -> str:
        parts = [self.strategy or "model"]
        if self.strategy != "reduce" and self.tile:
            parts.append(self.tile)
        if self.split and self.split > 1:
            parts.append(f"split {self.split}")
        return " ".join(parts)


class Tuned:
    """The choices of one plan: ``picks`` (path index -> Choice), or none (the model's).

    plan() asks it at three points of each contraction (strategy, split, tile); it also
    records what was used, which is how `einc tune` learns the model's own choices.
    """

    def __init__(self, picks=None, source: str = "model"):
        self.picks = dict(picks or {})
        self.source = source  # "model", "store" or "override"
        self.key: str | None = None
        self.parts: dict | None = None  # the key's readable parts
        self.seen: dict = {}  # path index -> (step before any split, operand dtypes)
        self.used: dict = {}  # path index -> Choice actually applied

    def strategy(self, k: int, default):
        c = self.picks.get(k)
        return c.strategy if c is not None and c.strategy in ("gett", "reduce") else default

    def split(self, k: int, step, in_dtypes, model) -> int:
        """The K split for contraction k's step: the pick's when it fits, else ``model``'s."""
        self.seen[k] = (step, tuple(in_dtypes))
        c = self.picks.get(k)
        if c is not None and c.split and _cuts_exactly(step, c.split):
            s = c.split
        else:
            s = model(step, in_dtypes)
        self.used[k] = Choice(step.strategy, None, s)
        return s

    def tiled(self, k: int, step):
        """``step`` with the pick's tile in its config (gett steps only)."""
        from .codegen.cuda.emit import GETT_TILES
        from .cost import config_tile
        c = self.picks.get(k)
        if step.strategy == "gett" and c is not None and (c.tile in GETT_TILES or c.tile in ("skinny", "smallmn", "stream")):
            rest = tuple(x for x in step.config if not (isinstance(x, tuple) and x[:1] == ("tile",)))
            step = replace(step, config=rest + (("tile", c.tile),))
        if k in self.used and step.strategy == "gett":
            self.used[k] = replace(self.used[k], tile=config_tile(step))
        return step

    @property
    def notes(self) -> tuple:
        if self.source != "store" or not self.picks:
            return ()
        return tuple(f"tuned: contraction {k} uses {c.text()} (measured by `einc tune`)"
                     for k, c in sorted(self.picks.items()))


# --------------------------------------------------------------------------------------
# the key

def plan_key(bound, out_strides, out_dtype, result_dtype, optimize, device: str, memory_limit=None,
             precision: str = "highest") -> tuple:
    """(hex key, readable parts) of a CUDA plan's tuned entry."""
    from .codegen.cuda.emit import VERSION
    names: dict = {}
    canon = lambda labels: " ".join(str(names.setdefault(l, len(names))) for l in labels)
    expr = ",".join(canon(lay.labels) for lay in bound.inputs) + "->" + canon(bound.output)
    parts = {
        "expr": expr,
        "shapes": [list(map(int, lay.extents)) for lay in bound.inputs],
        "strides": [list(map(int, lay.strides)) for lay in bound.inputs],
        "dtypes": [np.dtype(d).name for d in bound.dtypes],
        "out": [np.dtype(out_dtype).name, list(map(int, out_strides)), np.dtype(result_dtype).name],
        "optimize": optimize if isinstance(optimize, (str, bool)) or optimize is None else repr(optimize),
        "device": device,
        "version": VERSION,
    }
    if memory_limit is not None:  # it changes the path
        parts["memory_limit"] = repr(memory_limit)
    if precision != "highest":  # tf32 runs other kernels
        parts["precision"] = precision
    text = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32], parts


# --------------------------------------------------------------------------------------
# the store

def store_path() -> Path:
    from .runtime.cache import cache_dir
    return cache_dir() / "tuned.json"


class TunedStore:
    """The JSON file's entries, read once; ``put`` rewrites the file atomically."""

    def __init__(self, path: Path):
        self.path = path
        self.enabled = os.environ.get("EINC_DISK_CACHE", "1") != "0"
        self.entries = self._read() if self.enabled else {}

    def _read(self, warn: bool = True) -> dict:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return {}
        except OSError as e:
            if warn:
                warnings.warn(f"einc: cannot read the tuned-choice store {self.path} ({e}); ignoring it",
                              RuntimeWarning, stacklevel=4)
            return {}
        try:
            data = json.loads(text)
            entries = data["entries"]
            if data.get("format") != FORMAT or not isinstance(entries, dict):
                raise ValueError(f"format {data.get('format')!r}")
            for e in entries.values():  # every entry must decode, or the file is not trusted
                _choices(e)
            return entries
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            if warn:
                warnings.warn(f"einc: ignoring the tuned-choice store {self.path}: it does not parse ({e}); "
                              f"`einc tune` rewrites it", RuntimeWarning, stacklevel=4)
            return {}

    def choices(self, key: str) -> dict | None:
        e = self.entries.get(key)
        return None if e is None else _choices(e)

    def put(self, key: str, entry: dict) -> None:
        """Record ``entry`` under ``key``, merged with what the file holds now."""
        self.entries = {**(self._read(warn=False) if self.enabled else {}), **self.entries, key: entry}
        if not self.enabled:
            return
        tmp = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tuned-")
            with os.fdopen(fd, "w") as f:
                json.dump({"format": FORMAT, "entries": self.entries}, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError as e:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            self.enabled = False
            warnings.warn(f"einc: cannot write the tuned-choice store {self.path} ({e}); "
                          "tuned choices are kept for this process only", RuntimeWarning, stacklevel=3)


def _choices(entry: dict) -> dict:
    out = {}
    for k, c in entry["choices"].items():
        split = c.get("split")
        if c.get("strategy") not in (None, "gett", "reduce") or not (split is None or int(split) >= 1):
            raise ValueError(f"bad choice {c!r}")
        out[int(k)] = Choice(c.get("strategy"), c.get("tile"), None if split is None else int(split))
    return out


def entry(parts: dict, picks: dict, **extra) -> dict:
    """A store entry: the readable key parts, the choices, and whatever the tuner measured."""
    return {**parts, "choices": {str(k): asdict(c) for k, c in sorted(picks.items())}, **extra}


_STORE: TunedStore | None = None
_LOCK = threading.Lock()
_OVERRIDE: contextvars.ContextVar = contextvars.ContextVar("einc_tuned_override", default=None)


def store() -> TunedStore:
    """The process's store (read on first use, again when $EINC_CACHE_DIR changes)."""
    global _STORE
    path = store_path()
    s = _STORE
    if s is None or s.path != path:
        with _LOCK:
            if _STORE is None or _STORE.path != path:
                _STORE = TunedStore(path)
            s = _STORE
    return s


def reset() -> None:
    """Forget the in-memory store (the next lookup reads the file again)."""
    global _STORE
    _STORE = None


@contextlib.contextmanager
def override(tuned: Tuned):
    """Plans built inside use ``tuned`` instead of the store (how `einc tune` tries candidates)."""
    token = _OVERRIDE.set(tuned)
    try:
        yield tuned
    finally:
        _OVERRIDE.reset(token)


def lookup(bound, out_strides, out_dtype, result_dtype, optimize, memory_limit, backend, strategy,
           precision: str = "highest") -> Tuned:
    """The Tuned for a plan about to be built (the model's alone unless a winner is stored)."""
    if backend != "cuda" or strategy is not None:
        return Tuned()
    forced = _OVERRIDE.get()
    s = store() if forced is None else None
    if forced is None and not s.entries:  # the common case: nothing tuned, no key computed
        return Tuned()
    from .cost import device_name
    key, parts = plan_key(bound, out_strides, out_dtype, result_dtype, optimize, device_name(), memory_limit,
                          precision)
    if forced is not None:
        forced.key, forced.parts = key, parts
        return forced
    picks = s.choices(key)
    if not picks:
        return Tuned()
    t = Tuned(picks, "store")
    t.key = key
    return t


def _cuts_exactly(step, split: int) -> bool:
    """Whether the plan's cuts of ``step``'s summed modes make exactly ``split`` slices (a
    tuned split across two modes, l by 3 and k by 47, is one; 3 of a 2048 mode is not)."""
    from .plan import _split_cuts, _summed_outer_first
    modes = [(m.label, m.extent) for m in _summed_outer_first(step)]
    if not modes:
        return False
    return split == 1 or int(np.prod([d for _, d in _split_cuts(modes, split, exact=True)], dtype=np.int64)) == split
