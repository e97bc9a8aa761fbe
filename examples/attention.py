"""Attention-style batched contractions: scores, then the weighted sum of values."""
import numpy as np

import einc

rng = np.random.default_rng(0)
batch, heads, seq, dim = 2, 4, 128, 32
q = rng.standard_normal((batch, heads, seq, dim)).astype(np.float32)
k = rng.standard_normal((batch, heads, seq, dim)).astype(np.float32)
v = rng.standard_normal((batch, heads, seq, dim)).astype(np.float32)

scores = einc.einsum("b h q d, b h k d -> b h q k", q, k) / np.sqrt(dim)
weights = np.exp(scores - scores.max(-1, keepdims=True))
weights /= weights.sum(-1, keepdims=True)
out = einc.einsum("bhqk,bhkd->bhqd", weights, v)

ref = np.einsum("bhqk,bhkd->bhqd", weights, v)
assert np.allclose(out, ref, rtol=1e-4, atol=1e-5)
print("attention output", out.shape, out.dtype)
print(einc.explain.describe(einc.api.plan_for("bhqd,bhkd->bhqk", [q.shape, k.shape], "float32")))
