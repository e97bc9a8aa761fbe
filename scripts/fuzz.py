"""Fuzz einc's front end with fresh randomness: python3 scripts/fuzz.py [N] (default 100000).

Runs the strategies of tests/fuzz_frontend.py (arbitrary subscripts, sublists, operands,
keywords, CLI argv) through the contract of tests/fuzz_check.py and prints how many inputs
were tried, how many answers were checked correct against numpy, the EincErrors by class,
and every failure; exits 1 if there was any.
"""
import faulthandler
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402

from fuzz_check import outcome  # noqa: E402
from fuzz_frontend import TIME_LIMIT_S, ContractBroken, cases  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
counts: Counter = Counter()
failures: list = []
start = time.perf_counter()


@settings(max_examples=N, deadline=None, database=None, phases=[Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(cases())
def fuzz(case):
    # A hang inside native code is out of reach of the per-input alarm: dump and die.
    faulthandler.dump_traceback_later(TIME_LIMIT_S * 3, exit=True)
    try:
        counts[outcome(case)] += 1
    except Exception as e:  # ContractBroken, or a bug in the harness itself: report, go on
        what = str(e) if isinstance(e, ContractBroken) else f"harness error {type(e).__name__}: {e}"
        counts["FAILED"] += 1
        failures.append((case, what))
        print(f"FAILED: {what}\n  case: {case!r}"[:20000], flush=True)
    finally:
        faulthandler.cancel_dump_traceback_later()
    tried = sum(counts.values())
    if tried % 5000 == 0:
        print(f"... {tried} inputs, {counts['FAILED']} failures, {time.perf_counter() - start:.0f} s", flush=True)


faulthandler.enable()
fuzz()
tried = sum(counts.values())
errors = {k[6:]: v for k, v in counts.items() if k.startswith("error:")}
refused = {k[8:]: v for k, v in counts.items() if k.startswith("refused:")}
cli = {k[4:]: v for k, v in counts.items() if k.startswith("cli:")}
print(f"inputs tried: {tried} in {time.perf_counter() - start:.0f} s")
print(f"results checked correct against numpy: {counts['correct']}")
print(f"answers past numpy's 52 letters / 64 dimensions (einc's extension, unchecked): "
      f"{counts['beyond-numpy']}")
print(f"EincErrors where numpy also rejects: {sum(errors.values())} {dict(sorted(errors.items()))}")
print(f"EincErrors where numpy answers (documented differences): {sum(refused.values())} "
      f"{dict(sorted(refused.items()))}")
print(f"CLI runs by exit status: {dict(sorted(cli.items()))}")
print(f"failures: {len(failures)}")
sys.exit(1 if failures else 0)
