import os
import tempfile

import pytest

# Tests use their own kernel cache so they never read a developer's stale entries.
os.environ.setdefault("EINC_CACHE_DIR", tempfile.mkdtemp(prefix="einc-test-cache-"))


def _has_gpu() -> bool:
    try:
        from cuda.bindings import driver
        err, = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return False
        err, n = driver.cuDeviceGetCount()
        return err == driver.CUresult.CUDA_SUCCESS and n > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
