"""einc in one minute: numpy's einsum answers from generated kernels."""
import numpy as np

import einc

rng = np.random.default_rng(0)
a = rng.standard_normal((64, 32, 16))
b = rng.standard_normal((32, 16, 8))

c = einc.einsum("ijk,jkl->il", a, b)  # same call as numpy.einsum
assert np.allclose(c, np.einsum("ijk,jkl->il", a, b))
print("ijk,jkl->il ->", c.shape)

# What einc will do, and the kernel it generated for it.
print(einc.api.plan_for("ijk,jkl->il", [a.shape, b.shape]).steps[0].strategy)

# Diagonals, traces and broadcasting are just strides: no copies.
m = rng.standard_normal((5, 5))
print("trace:", einc.einsum("ii", m), "diag:", einc.einsum("ii->i", m)[:2])

# Named axes read better in real code.
q, k = rng.standard_normal((2, 10, 4)), rng.standard_normal((2, 12, 4))
scores = einc.einsum("batch query d, batch key d -> batch query key", q, k)
print("scores:", scores.shape)

# Plan and compile once, call many times.
expr = einc.contract_expression("ij,jk->ik", (8, 8), (8, 8))
x = np.eye(8)
print("expression:", expr, float(expr(x, x).sum()))
