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


# CI explores a fixed set of examples (a red CI must mean a regression, not a new random
# draw); developers' runs and `scripts/gpu_fuzz.py` explore fresh ones.
from hypothesis import settings as _settings  # noqa: E402

_settings.register_profile("ci", derandomize=True, print_blob=True)
_settings.register_profile("dev", print_blob=True)
_settings.load_profile("ci" if os.environ.get("CI") else "dev")
