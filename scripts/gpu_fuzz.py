"""More random einsums on the GPU than the test suite runs (on a GPU machine):
python3 scripts/gpu_fuzz.py N"""
import sys

sys.path.insert(0, "tests")
from hypothesis import HealthCheck, given, settings  # noqa: E402

from test_differential import check_random_case, einsums  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 500


@settings(max_examples=N, deadline=None, suppress_health_check=list(HealthCheck))
@given(einsums())
def run(case):
    check_random_case(case, "cuda")


run()
print(f"{N} random einsums on the GPU agree with numpy")
