"""A tensor-network contraction: the norm <psi|psi> of a matrix product state.

Many operands and many labels: einc plans the pairwise order with opt_einsum and runs a
kernel per step. Labels are given as sublists, so there is no 52-letter limit.
"""
import numpy as np

import einc

rng = np.random.default_rng(0)
sites, phys, bond = 30, 2, 8
tensors = []
for i in range(sites):
    left = 1 if i == 0 else bond
    right = 1 if i == sites - 1 else bond
    tensors.append(rng.standard_normal((left, phys, right)) / np.sqrt(bond * phys))

args = []
for i, t in enumerate(tensors):  # ket: bonds ("k", i), physical ("p", i)
    args += [t, [("k", i), ("p", i), ("k", i + 1)]]
for i, t in enumerate(tensors):  # bra shares the physical labels, has its own bonds
    args += [t.conj(), [("b", i), ("p", i), ("b", i + 1)]]
args.append([("k", 0), ("b", 0), ("k", sites), ("b", sites)])

norm = einc.einsum(*args, optimize="greedy")
path, info = einc.contract_path(*args, optimize="greedy")

# check against sweeping the transfer matrices by hand with numpy
env = np.ones((1, 1))
for t in tensors:
    env = np.einsum("ab,apc,bpd->cd", env, t, t.conj())
assert np.allclose(norm.reshape(()), env.reshape(())), (norm, env)
print(f"{2 * sites} tensors, {len(path)} pairwise steps, <psi|psi> = {float(norm.reshape(())):.6g}")
