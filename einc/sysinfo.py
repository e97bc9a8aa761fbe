"""`einc sysinfo`: what einc finds on this machine, for bug reports and benchmark notes.

The GPU (or "no GPU" and why), the NVIDIA driver, NVRTC and cuda-python versions where
they are importable, llvmlite's host CPU and the features it compiles for, and the kernel
cache directory with its size. Every probe is allowed to fail: a missing or broken CUDA
stack is reported as such, never raised.

>>> from einc.sysinfo import collect
>>> sorted(collect())[:3]
['cache', 'cpu', 'cuda_python']
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import textwrap
from pathlib import Path


def _dist_version(name: str):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def driver_release():
    """The NVIDIA kernel driver's release (e.g. "570.124.06"), or None where none is loaded."""
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
    except OSError:
        return None
    for word in text.split():  # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  ..."
        parts = word.split(".")
        if len(parts) >= 2 and all(p.isdigit() for p in parts):
            return word
    return None


def gpu_info() -> dict:
    """Device 0 through cuda.bindings' driver API: {"gpu": None, "why": ...} without one."""
    try:
        from .runtime.cuda import _driver, check
        cu = _driver()
    except ImportError:
        return {"gpu": None, "why": "cuda-python is not installed (pip install -e '.[cuda]')"}
    except Exception as e:  # a broken install is reported, not raised
        return {"gpu": None, "why": f"cuda-python failed to load: {e}"}
    try:
        (err,) = cu.cuInit(0)
    except Exception as e:  # cuda-python raises when libcuda itself is missing
        return {"gpu": None, "why": f"no CUDA driver: {str(e).splitlines()[0]}"}
    if err != cu.CUresult.CUDA_SUCCESS:
        return {"gpu": None, "why": f"no usable CUDA driver ({getattr(err, 'name', err)})"}
    try:
        n = check(cu.cuDeviceGetCount(), "cuDeviceGetCount")
        if not n:
            return {"gpu": None, "why": "the CUDA driver sees no device"}
        dev = check(cu.cuDeviceGet(0), "cuDeviceGet")
        name = check(cu.cuDeviceGetName(256, dev), "cuDeviceGetName")
        name = (name.decode(errors="replace") if isinstance(name, (bytes, bytearray)) else str(name))
        attr = cu.CUdevice_attribute
        major = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cc")
        minor = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cc")
        sms = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "SMs")
        mem = check(cu.cuDeviceTotalMem(dev), "cuDeviceTotalMem")
        api = check(cu.cuDriverGetVersion(), "cuDriverGetVersion")
    except Exception as e:
        return {"gpu": None, "why": f"the CUDA driver failed: {str(e).splitlines()[0]}"}
    return {"gpu": name.split("\0")[0].strip(), "devices": int(n), "arch": f"sm_{major}{minor}",
            "sms": int(sms), "memory_bytes": int(mem),
            "cuda_driver_api": f"{int(api) // 1000}.{int(api) % 1000 // 10}"}


def nvrtc_info():
    try:
        from .runtime.cuda import nvrtc_version
        return nvrtc_version()
    except Exception:  # not installed, or its library does not load
        return None


def cpu_info() -> dict:
    import llvmlite
    import llvmlite.binding as llvm
    try:
        features = llvm.get_host_cpu_features().flatten()
        enabled = [f[1:] for f in features.split(",") if f.startswith("+")]
    except RuntimeError:  # llvmlite cannot read them on some hosts
        enabled = []
    return {"name": llvm.get_host_cpu_name(), "triple": llvm.get_process_triple(),
            "features": enabled, "cores": os.cpu_count(), "llvmlite": llvmlite.__version__,
            "llvm": ".".join(map(str, llvm.llvm_version_info))}


def cache_info() -> dict:
    """The cache directory and what it holds (regular files, their bytes)."""
    from .runtime.cache import cache_dir
    root = cache_dir()
    files = size = 0
    if root.is_dir():
        for dirpath, _, names in os.walk(root):
            for n in names:
                try:
                    st = os.lstat(os.path.join(dirpath, n))
                except OSError:  # removed while we walk (another process evicting)
                    continue
                if not os.path.islink(os.path.join(dirpath, n)):
                    files += 1
                    size += st.st_size
    return {"dir": str(root), "exists": root.is_dir(), "files": files, "bytes": size,
            "disk_cache": os.environ.get("EINC_DISK_CACHE", "1") != "0"}


def collect() -> dict:
    import numpy as np
    import opt_einsum

    import einc
    return {"einc": einc.__version__, "python": platform.python_version(), "numpy": np.__version__,
            "opt_einsum": opt_einsum.__version__, "gpu": gpu_info(), "driver": driver_release(),
            "nvrtc": nvrtc_info(), "cuda_python": _dist_version("cuda-python"),
            "cuda_bindings": _dist_version("cuda-bindings"), "cpu": cpu_info(), "cache": cache_info()}


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def describe(info: dict) -> str:
    """The report ``einc sysinfo`` prints."""
    g, c, k = info["gpu"], info["cpu"], info["cache"]
    missing = "not installed"
    if g["gpu"]:
        more = "" if g["devices"] == 1 else f"; {g['devices']} devices"
        gpu = f"{g['gpu']} ({g['arch']}, {g['sms']} SMs, {_bytes(g['memory_bytes'])}{more})"
        driver = f"{info['driver'] or 'release unknown'} (CUDA {g['cuda_driver_api']})"
    else:
        gpu = f"no GPU ({g['why']})"
        driver = info["driver"] or "none loaded"
    cache = (f"{k['dir']} ({k['files']} files, {k['bytes']} bytes = {_bytes(k['bytes'])})" if k["exists"]
             else f"{k['dir']} (not created yet)")
    if not k["disk_cache"]:
        cache += "; EINC_DISK_CACHE=0: kernels are kept in memory only"
    lines = [
        f"einc         {info['einc']} (python {info['python']}, numpy {info['numpy']}, "
        f"opt_einsum {info['opt_einsum']})",
        f"GPU          {gpu}",
        f"driver       {driver}",
        f"NVRTC        {info['nvrtc'] or missing}",
        f"cuda-python  {info['cuda_python'] or missing}"
        + (f" (cuda-bindings {info['cuda_bindings']})" if info["cuda_bindings"] else ""),
        f"CPU          {c['name']} ({c['triple']}, {c['cores']} cores; llvmlite {c['llvmlite']}, "
        f"LLVM {c['llvm']})",
        textwrap.fill(' '.join(c['features']) or 'unknown', 100, initial_indent="features     ",
                      subsequent_indent=" " * 13, break_on_hyphens=False),
        f"cache        {cache}",
    ]
    return "\n".join(lines)
