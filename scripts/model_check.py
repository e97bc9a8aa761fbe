"""The cost model against measured suites: each case's measured time beside the model's
prediction for its plan (`einc explain`'s "predicted total"), and the error over the suite.

    python scripts/model_check.py benchmarks/results/tccg24-cuda-bf16-*.json

Runs without a GPU. A result saved with its predictions (run_tccg24 records them) is read as
it is; an older one is priced by today's model on the result's device (einc.report.model_rows).
"""
import sys

from einc.report import load, model_rows, model_summary


def main(paths) -> None:
    for path in paths:
        result = load(path)
        what, rows = model_rows(result)
        print(f"{path}: {result.get('device', '?')}, {result.get('dtype', '?')} ({what})")
        print(f"  {'einsum':<22}{'measured':>10}{'predicted':>11}{'ratio':>7}  plan")
        for r, m, p in rows:
            print(f"  {r['einsum']:<22}{m * 1e3:>8.3f}ms{p * 1e3:>9.3f}ms{m / p:>7.2f}  {r.get('strategies') or ''}")
        line = model_summary(result)
        print(f"  {line}" if line else "  (no case to price)")


if __name__ == "__main__":
    main(sys.argv[1:])
