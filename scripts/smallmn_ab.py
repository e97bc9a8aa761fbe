"""72^5 `abcd,dbea->ec` fp32 as the main bench times it (medians of 20 samples of 5 calls,
inputs rotated past L2), beside torch.einsum in the same process; the smallmn split comes
from EINC_SMALLMN_FLAT in the environment (1: flat, the default; 0: the cut).

    EINC_SMALLMN_FLAT=0 python3 scripts/smallmn_ab.py
"""
import os

import torch

import einc
from einc.bench_cuda import _events_median, _rotations

ext = (72,) * 4
X = _rotations(torch, lambda: (torch.randn(ext, device="cuda"), torch.randn(ext, device="cuda")), 2 * 4 * 72 ** 4)
r = einc.einsum("abcd,dbea->ec", *X[0])
ref = torch.einsum("abcd,dbea->ec", *X[0])
err = float((r.double() - torch.einsum("abcd,dbea->ec", *[x.double() for x in X[0]])).abs().max())
t, _ = _events_median(torch, lambda i: einc.einsum("abcd,dbea->ec", *X[i % len(X)]), 20)
te, _ = _events_median(torch, lambda i: torch.einsum("abcd,dbea->ec", *X[i % len(X)]), 20)
print(f"72^5 flat={os.environ.get('EINC_SMALLMN_FLAT', '1')}: einc {t * 1e6:.1f} us, torch.einsum {te * 1e6:.1f} us, "
      f"{te / t:.2f}x; max |err| vs fp64 {err:.2e} (torch {float((ref.double() - torch.einsum('abcd,dbea->ec', *[x.double() for x in X[0]])).abs().max()):.2e})")
