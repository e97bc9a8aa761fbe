import os
import tempfile

import pytest

# Tests use their own kernel cache so they never read a developer's stale entries.
os.environ.setdefault("EINC_CACHE_DIR", tempfile.mkdtemp(prefix="einc-test-cache-"))


def pytest_collection_modifyitems(config, items):
    from einc.runtime.cuda import available
    if available():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
