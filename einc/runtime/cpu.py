"""The CPU runtime: LLVM IR -> O3 for the host CPU -> MCJIT -> a callable address.

Compiled kernels are cached in memory by the caller's structural key and on disk as
object code (llvmlite's object cache), keyed by a hash of the IR, the host target and
the llvmlite version, so a second process pays no optimisation or code generation.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Callable

import llvmlite
import llvmlite.binding as llvm

from ..errors import EincCompileError
from .cache import DiskCache, digest

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()


@dataclass
class Stats:
    """Counters tests and `einc explain` read: how much compiling really happened."""

    ir_built: int = 0  # kernels whose IR was generated (memory-cache misses)
    compiled: int = 0  # kernels optimised and compiled to machine code
    disk_hits: int = 0  # kernels whose machine code came from the disk cache


class CpuJit:
    """One MCJIT engine for the process; kernels are added as modules, found by name."""

    def __init__(self):
        self.triple = llvm.get_process_triple()
        self.cpu = llvm.get_host_cpu_name()
        self.features = llvm.get_host_cpu_features().flatten()
        target = llvm.Target.from_triple(self.triple)
        self.tm = target.create_target_machine(cpu=self.cpu, features=self.features,
                                               opt=3, jit=True)
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), self.tm)
        self.disk = DiskCache("cpu")
        self.stats = Stats()
        self._lock = threading.RLock()
        self._by_key: dict = {}
        self._modules: dict[str, str] = {}  # module name -> disk key, for the object cache
        self._loaded: dict[str, bytes] = {}  # module name -> object code read for it, until added
        self._sources: dict = {}  # structural key -> IR text, for `einc compile`
        self.engine.set_object_cache(self._notify, self._getbuffer)

    # --- llvmlite object-cache hooks -------------------------------------------------
    def _notify(self, module, buffer):
        key = self._modules.get(module.name)
        if key:
            self.disk.write(key, bytes(buffer))

    def _getbuffer(self, module):
        # the blob get() read and verified: reading the file again could see another
        # version than the one that decided whether the module was optimised
        blob = self._loaded.pop(module.name, None)
        if blob is not None:
            self.stats.disk_hits += 1
        return blob

    # --- public ------------------------------------------------------------------------
    def host_vector_bits(self) -> int:
        """Widest SIMD register the host has: 512 (AVX-512), 256 (AVX/AVX2) or 128."""
        feats = self.features
        if "+avx512f" in feats:
            return 512
        if "+avx" in feats:
            return 256
        return 128

    def get(self, key, build: Callable[[], tuple[str, str]]) -> int:
        """Address of the kernel for structural ``key``; ``build()`` -> (ir_text, name)."""
        addr = self._by_key.get(key)
        if addr is not None:
            return addr
        with self._lock:
            addr = self._by_key.get(key)
            if addr is not None:
                return addr
            ir_text, name = build()
            self.stats.ir_built += 1
            dkey = digest(ir_text, self.triple, self.cpu, self.features,
                          llvmlite.__version__, "O3")
            modname = f"einc_{dkey[:24]}"
            try:
                mod = llvm.parse_assembly(ir_text)
                mod.verify()
            except RuntimeError as e:
                raise EincCompileError(f"einc generated invalid LLVM IR for {name}",
                                       log=f"{e}\n{ir_text}") from e
            mod.name = modname
            self._modules[modname] = dkey
            blob = self.disk.read(dkey)
            if blob is None:
                self._optimize(mod)
                self.stats.compiled += 1
            else:
                self._loaded[modname] = blob
            try:
                self.engine.add_module(mod)
                self.engine.finalize_object()
            finally:
                self._loaded.pop(modname, None)
            addr = self.engine.get_function_address(name)
            if not addr:
                raise EincCompileError(f"kernel {name} not found after JIT compilation")
            self._by_key[key] = addr
            self._sources[key] = ir_text
            return addr

    def source(self, key) -> str | None:
        """The IR text a compiled key came from."""
        return self._sources.get(key)

    def _optimize(self, mod):
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)


_JIT: CpuJit | None = None
_JIT_LOCK = threading.Lock()


# fork(): a lock another thread holds at that moment stays held in the child forever, and
# an engine forked mid-compile is inconsistent. So a fork waits for a compile in progress
# (it holds the JIT's lock across the fork) and the child starts with fresh locks.
_FORK_HELD = []


def _before_fork():
    j = _JIT
    if j is not None:
        j._lock.acquire()
        _FORK_HELD.append(j)


def _after_fork_in_parent():
    while _FORK_HELD:
        _FORK_HELD.pop()._lock.release()


def _after_fork_in_child():
    global _JIT_LOCK
    _JIT_LOCK = threading.Lock()
    while _FORK_HELD:
        _FORK_HELD.pop()._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


def jit() -> CpuJit:
    """The process-wide CPU JIT (created on first use)."""
    global _JIT
    if _JIT is None:
        with _JIT_LOCK:
            if _JIT is None:
                _JIT = CpuJit()
    return _JIT
