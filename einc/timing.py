"""Wall-clock medians for CPU benchmarks (the anchors are timed the same way)."""
from __future__ import annotations

import statistics
import time


def median_time(fn, repeat=5, budget=2.0, warmup=1) -> float:
    """Median seconds of ``fn()`` over up to ``repeat`` runs, stopping after ``budget`` s."""
    for _ in range(warmup):
        fn()
    times, start = [], time.perf_counter()
    while len(times) < repeat:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget and len(times) >= 1:
            break
    return statistics.median(times)
