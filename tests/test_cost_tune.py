"""The GPU cost model (einc/cost.py), the choices plan() makes with it, the tuned store
(einc/tuned.py) and `einc tune` / `einc explain --backend cuda`.

Everything but the last test runs without a GPU: plans are built for the CUDA backend
and, where their arithmetic matters, run on the CPU executor (which takes any plan).
"""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

from einc import tuned
from einc.api import plan_for
from einc.cli import main
from einc.cost import (H200, predict_gemm, predict_plan, predict_step, profile_for, tile_efficiency,
                       wave_efficiency)
from einc.execute import Executable
from einc.plan import KSlice
from einc.tuned import Choice
from einc.tune import plan_with
from oracle import assert_matches


@pytest.fixture
def store_dir(tmp_path, monkeypatch):
    """A private tuned store for one test."""
    monkeypatch.setenv("EINC_CACHE_DIR", str(tmp_path))
    tuned.reset()
    yield tmp_path
    tuned.reset()


def cuda_plan(subs, shapes, dtype="float32"):
    return plan_for(subs, shapes, dtype, backend="cuda")


def split_of(plan) -> int:
    """The K split of a plan's gett step (1: none)."""
    return next((m.extent for s in plan.steps if s.strategy == "gett" for m in s.modes
                 if isinstance(m.label, KSlice)), 1)


def tile_of(plan):
    return next(dict(x for x in s.config if isinstance(x, tuple) and len(x) == 2).get("tile")
                for s in plan.steps if s.strategy == "gett")


# ----------------------------------------------------------------------------------------
# the model

def test_bigger_gemms_are_predicted_slower():
    times = [predict_gemm(n, n, n, 1, 3 * 4 * n * n, "gett/float32", "128x128x8").seconds
             for n in (256, 512, 1024, 2048, 4096, 8192)]
    assert times == sorted(times) and len(set(times)) == len(times)
    # more K at the same output costs proportionally more once compute-bound
    a, b = (predict_gemm(4096, 4096, k, 1, 0, "gett/float32", "128x128x8") for k in (4096, 8192))
    assert b.compute == pytest.approx(2 * a.compute)


def test_the_h200_profile_reproduces_the_measured_sgemm():
    p = predict_gemm(4096, 4096, 4096, 1, 3 * 4 * 4096 ** 2, "gett/float32", "128x128x8", H200)
    assert 2 * 4096 ** 3 / (p.seconds - p.launch) / 1e12 == pytest.approx(38.0, rel=0.02)  # NOTES.md
    assert p.bound == "compute" and profile_for("NVIDIA H200") is H200 and profile_for("") is H200


def test_a_memory_bound_step_is_predicted_by_its_bytes():
    plan = cuda_plan("ij,ij->i", [(16384, 4096), (16384, 4096)])
    (p,) = predict_plan(plan)[1]
    step = plan.steps[0]
    assert p.bound == "memory" and p.family == "reduce rows"
    assert p.seconds == pytest.approx(step.bytes / H200.bandwidth + H200.launch)  # 133 us measured
    # a Hadamard product of the same bytes is a coalesced column kernel: slower per byte
    h = predict_step(cuda_plan("ij,ij->ij", [(16384, 4096), (16384, 4096)]),
                     cuda_plan("ij,ij->ij", [(16384, 4096), (16384, 4096)]).steps[0])
    assert h.family == "reduce columns" and h.bound == "memory"


def test_ragged_tiles_and_part_empty_waves_lower_efficiency():
    assert tile_efficiency(128, 128, 64, 128, 128, 8) == 1.0
    assert tile_efficiency(129, 128, 64, 128, 128, 8) == pytest.approx(129 / 256)
    assert tile_efficiency(64, 64, 5, 64, 64, 8) == pytest.approx(5 / 8)
    assert wave_efficiency(264, 132) == 1.0 and wave_efficiency(133, 132) == pytest.approx(133 / 264)
    full = predict_gemm(1024, 1024, 1024, 1, 0, "gett/float32", "64x64x8")
    ragged = predict_gemm(1025, 1024, 1024, 1, 0, "gett/float32", "64x64x8")
    assert ragged.tile_eff < full.tile_eff and ragged.seconds > full.seconds


# ----------------------------------------------------------------------------------------
# choices plan() makes with it

@pytest.mark.parametrize("shapes", [
    [(384, 376, 384), (376, 376, 384)],   # TCCG ccsd ij-ikl-ljk: 9 output tiles, K = 144384
    [(312, 24, 312), (24, 312, 312)],     # the same shape of problem, smaller
])
def test_split_k_for_the_ccsd_case(shapes):
    plan = cuda_plan("lki,kjl->ji", shapes)
    assert split_of(plan) > 1 and [s.strategy for s in plan.steps] == ["gett", "reduce"]


def test_no_split_for_a_square_gemm_and_the_big_tile():
    plan = cuda_plan("ij,jk->ik", [(4096, 4096), (4096, 4096)])
    assert len(plan.steps) == 1 and split_of(plan) == 1 and tile_of(plan) == "128x128x8"
    assert tile_of(cuda_plan("ij,jk->ik", [(1024, 1024), (1024, 1024)])) == "64x64x8"  # 64 big tiles


def test_gett_or_reduce_follows_the_predictions():
    assert [s.strategy for s in cuda_plan("ij,jk->ik", [(100000, 64), (64, 2)]).steps] == ["reduce"]
    assert [s.strategy for s in cuda_plan("ij,jk->ik", [(2048, 2048), (2048, 2048)]).steps] == ["gett"]
    # a launch-bound 8x8x8: both predictions within the model's error, the size rule decides
    assert [s.strategy for s in cuda_plan("ij,jk->ik", [(8, 8), (8, 8)]).steps] == ["reduce"]
    # the CPU plan is untouched by the GPU model
    assert plan_for("ij,jk->ik", [(2048, 2048), (2048, 2048)], "float32").steps[0].config == ()


def test_the_emitted_kernel_uses_the_planned_tile():
    from einc.codegen.cuda.emit import DM_DEFAULT, emit_step
    # the 128x128 tile takes 16-k slices at K >= 128 (emit.big_tile), planned or tuned; fp32
    # on sm_90 the fp64-tensor-core tile there (EINC_GETT_DM=0: the SIMT one)
    for n, tile in ((4096, DM_DEFAULT), (1024, "64x64x8")):
        p = cuda_plan("ij,jk->ik", [(n, n), (n, n)])
        assert emit_step(p, p.steps[0]).key[2] == tile
    p, _ = plan_with("ij,jk->ik", [(1024, 1024), (1024, 1024)], "float32", {0: Choice("gett", "128x128x8", 1)})
    assert emit_step(p, p.steps[0]).key[2] == DM_DEFAULT
    assert emit_step(p, p.steps[0], "sm_80").key[2] == "128x128x16"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EINC_GETT_DM", "0")
        assert emit_step(p, p.steps[0]).key[2] == "128x128x16"
    p, _ = plan_with("ij,jk->ik", [(1024, 64), (64, 1024)], "float32", {0: Choice("gett", "128x128x8", 1)})
    assert emit_step(p, p.steps[0]).key[2] == "128x128x8"  # K = 64: 8-k slices, SIMT
    p, _ = plan_with("ij,jk->ik", [(1024, 1024), (1024, 1024)], "float64", {0: Choice("gett", "128x128x8", 1)})
    assert emit_step(p, p.steps[0]).key[2] == "128x128x8"  # fp64: no DM tile


def test_the_dm_tile_follows_the_operands_unit_strides():
    """fp32 on sm_90: 128 of M a DM tile where A alone is M-fast (its copies' runs along M),
    the default 64x128 where B is N-fast (session 31's A/B on the H100)."""
    from einc.codegen.cuda.emit import DM_A_MFAST, DM_DEFAULT, emit_step
    for subs, want in (("ji,kj->ik", DM_A_MFAST), ("ji,jk->ik", DM_DEFAULT), ("ij,jk->ik", DM_DEFAULT),
                       ("ij,kj->ik", DM_DEFAULT)):
        p = cuda_plan(subs, [(2048, 2048), (2048, 2048)])
        assert emit_step(p, p.steps[0]).key[2] == want, subs
    p = cuda_plan("njmi,kmln->lkji", [(96, 84, 84, 96), (84, 84, 84, 96)])
    assert emit_step(p, p.steps[-1]).key[2] == DM_A_MFAST  # TCCG ccsd: 17.39 against 18.06 ms


# ----------------------------------------------------------------------------------------
# the tuned store

def test_the_key_is_canonical_and_covers_shapes_dtypes_and_device(monkeypatch):
    key = lambda subs, shapes, dt="float32": plan_with(subs, shapes, dt)[1].key
    a = key("ij,jk->ik", [(64, 8192), (8192, 64)])
    assert a == key("ab,bc->ac", [(64, 8192), (8192, 64)])
    assert a != key("ij,jk->ik", [(64, 4096), (4096, 64)])
    assert a != key("ij,jk->ik", [(64, 8192), (8192, 64)], "float64")
    assert a != key("ij,kj->ik", [(64, 8192), (64, 8192)])  # other strides of B
    monkeypatch.setattr("einc.cost._device_name", lambda: "NVIDIA H100")
    assert a != key("ij,jk->ik", [(64, 8192), (8192, 64)])


def test_a_stored_winner_is_used_by_later_plans(store_dir):
    subs, shapes = "ij,jk->ik", [(64, 8192), (8192, 64)]
    model = cuda_plan(subs, shapes)
    _, t = plan_with(subs, shapes, "float32")
    winner = Choice("gett", "128x128x8", 4)
    assert (split_of(model), tile_of(model)) != (4, "128x128x8")
    tuned.store().put(t.key, tuned.entry(t.parts, {0: winner}, seconds=1e-5))
    tuned.reset()  # a new process: read back from disk
    plan = cuda_plan(subs, shapes)
    assert split_of(plan) == 4 and tile_of(plan) == "128x128x8"
    assert any(n.startswith("tuned:") and "gett 128x128x8 split 4" in n for n in plan.notes)
    assert not cuda_plan(subs, [(64, 4096), (4096, 64)]).notes  # other shapes: the model's choices
    data = json.loads((store_dir / "tuned.json").read_text())
    (entry,) = data["entries"].values()
    assert entry["expr"] == "0 1,1 2->0 2" and entry["shapes"] == [[64, 8192], [8192, 64]]
    # the tuned plan computes the right answer (CPU executor)
    rng = np.random.default_rng(0)
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    out = np.full(plan.out_shape, np.nan, dtype=np.float32)
    Executable(plan)(ops, out)
    assert_matches(out, subs, *ops, terms=8192)


def test_a_stored_reduce_choice_and_a_split_that_does_not_fit(store_dir):
    subs, shapes = "ij,jk->ik", [(256, 2048), (2048, 256)]
    _, t = plan_with(subs, shapes, "float32")
    tuned.store().put(t.key, tuned.entry(t.parts, {0: Choice("reduce")}))
    assert [s.strategy for s in cuda_plan(subs, shapes).steps][0] == "reduce"
    tuned.store().put(t.key, tuned.entry(t.parts, {0: Choice("gett", "64x64x8", 3)}))  # 3 does not divide 2048
    plan = cuda_plan(subs, shapes)
    assert split_of(plan) != 3 and plan.steps[0].strategy == "gett"
    rng = np.random.default_rng(1)
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    out = np.full(plan.out_shape, np.nan, dtype=np.float32)
    Executable(plan)(ops, out)
    assert_matches(out, subs, *ops, terms=2048)


def test_a_tuned_split_across_two_modes_is_used_and_correct(store_dir):
    """einc tune offers splits that cut two summed modes (141 = l by 3 x k by 47: lki,kjl's
    waves fill where the model's 128 leaves them at 0.87); a stored one is the plan's split
    (it used to be replaced by the model's unless one mode divided by it), and the plan sums
    right on the CPU executor."""
    from einc.plan import _split_candidates
    from einc.tune import candidates
    subs, shapes = "lki,kjl->ji", [(384, 94, 8), (94, 8, 384)]  # K = 141 slices of 256
    _, t = plan_with(subs, shapes, "float32")
    assert 141 in {c.split for c in candidates(t, 0) if c.split}
    assert 141 not in _split_candidates(94 * 384, [94, 384])  # the model's own list: greedy cuts only
    tuned.store().put(t.key, tuned.entry(t.parts, {0: Choice("gett", "64x64x8", 141)}))
    plan = cuda_plan(subs, shapes)
    cut = [m.extent for s in plan.steps if s.strategy == "gett" for m in s.modes if isinstance(m.label, KSlice)]
    assert sorted(cut) == [3, 47]
    rng = np.random.default_rng(2)
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    out = np.full(plan.out_shape, np.nan, dtype=np.float32)
    Executable(plan)(ops, out)
    # the plan's order bounds the error: 256 products per slice, then 141 slices (the classical
    # bound over all 36096 terms would let a lost slice pass)
    assert_matches(out, subs, *ops, terms=256 + 141)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gpu_a_tuned_split_across_two_modes_matches_numpy(store_dir, dtype):
    """The same stored 141-slice split run by the CUDA kernels (gett / tensor cores and the
    reduce over the two slice modes), poisoned output, against numpy."""
    import einc
    from test_differential import make_array
    subs, shapes = "lki,kjl->ji", [(384, 94, 40), (94, 36, 384)]
    _, t = plan_with(subs, shapes, dtype)
    tuned.store().put(t.key, tuned.entry(t.parts, {0: Choice("gett", None, 141)}))
    plan = plan_for(subs, shapes, dtype, backend="cuda")
    cut = [m.extent for s in plan.steps if s.strategy == "gett" for m in s.modes if isinstance(m.label, KSlice)]
    assert sorted(cut) == [3, 47]
    rng = np.random.default_rng(5)
    ops = [make_array(rng, s, dtype, 0) for s in shapes]
    got = np.asarray(einc.einsum(subs, *ops, backend="cuda"))
    assert got.dtype == ops[0].dtype
    # the plan's order: 256 products per slice, then 141 slices, in fp32; one rounding to the
    # dtype (relative to |ref|, so a lost or doubled slice, ~16 here, is far outside it)
    wide = [o.astype(np.float64) for o in ops]
    ref = np.einsum(subs, *wide)
    absref = np.einsum(subs, *[np.abs(w) for w in wide])
    rnd = 2.0 ** -8 if dtype == "bfloat16" else 2.0 ** -23
    tol = 2.0 ** -23 * (256 + 141) * 4 * absref + rnd * np.abs(ref) + 1e-30
    err = np.abs(got.astype(np.float64) - ref)
    assert (err <= tol).all(), (err.max(), tol[err > tol].min())


def test_a_corrupted_store_is_ignored_with_a_warning(store_dir):
    subs, shapes = "ij,jk->ik", [(64, 8192), (8192, 64)]
    model = cuda_plan(subs, shapes)
    (store_dir / "tuned.json").write_text('{"format": 1, "entries": {"k": {"choices": {"0": {"strat')
    tuned.reset()
    with pytest.warns(RuntimeWarning, match="ignoring the tuned-choice store"):
        plan = cuda_plan(subs, shapes)
    assert plan.steps == model.steps and not plan.notes
    (store_dir / "tuned.json").write_text(json.dumps({"format": 1, "entries": {"k": {"choices": {"0": {"split": -2}}}}}))
    tuned.reset()
    with pytest.warns(RuntimeWarning, match="does not parse"):
        assert cuda_plan(subs, shapes).steps == model.steps
    # the next winner replaces the bad file
    _, t = plan_with(subs, shapes, "float32")
    tuned.store().put(t.key, tuned.entry(t.parts, {0: Choice("gett", "64x64x8", 8)}))
    tuned.reset()
    assert split_of(cuda_plan(subs, shapes)) == 8


def test_puts_merge_and_leave_no_temporary_files(store_dir):
    for n in (4096, 8192):
        _, t = plan_with("ij,jk->ik", [(64, n), (n, 64)], "float32")
        tuned.store().put(t.key, tuned.entry(t.parts, {0: Choice("gett", "64x64x8", 2)}))
    tuned.reset()
    assert len(tuned.store().entries) == 2
    assert [p.name for p in store_dir.iterdir()] == ["tuned.json"]


# ----------------------------------------------------------------------------------------
# the commands

def test_explain_cuda_shows_choices_and_predicted_times(capsys, store_dir):
    assert main(["explain", "lki,kjl->ji", "--shapes", "384x376x384,376x376x384", "--dtype", "float32",
                 "--backend", "cuda"]) == 0
    text = capsys.readouterr().out
    assert "kernel=gett 128x64x16d split=" in text and "predicted" in text and "compute-bound" in text  # (tabled K)
    assert "predicted total:" in text and "the cost model's" in text
    subs, shapes = "ij,jk->ik", [(64, 8192), (8192, 64)]
    _, t = plan_with(subs, shapes, "float32")
    tuned.store().put(t.key, tuned.entry(t.parts, {0: Choice("gett", "64x64x8", 16)}))
    assert main(["explain", subs, "--shapes", "64x8192,8192x64", "--dtype", "float32", "--backend", "cuda"]) == 0
    text = capsys.readouterr().out
    assert "split=16" in text and "tuned: contraction 0 uses gett 64x64x8 split 16" in text
    assert main(["explain", subs, "--shapes", "64x8192,8192x64"]) == 0  # CPU: no GPU prediction
    assert "predicted" not in capsys.readouterr().out


def test_tune_without_a_gpu_is_a_clear_error(capsys):
    from einc.runtime.cuda import available
    if available():
        pytest.skip("a GPU is present: test_tune_on_the_gpu covers the command")
    assert main(["tune", "ij,jk->ik", "--shapes", "64x32,32x16", "--dtype", "float32"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("einc: error: einc tune times kernels on an NVIDIA GPU and none is usable here")


@pytest.mark.gpu
def test_tune_on_the_gpu_stores_a_winner_that_einsum_uses(store_dir, capsys):
    import einc
    from einc import api
    subs, shapes = "lki,kjl->ji", [(64, 64, 200), (64, 150, 64)]
    assert main(["tune", subs, "--shapes", "64x64x200,64x150x64", "--dtype", "float32", "--repeat", "3"]) == 0
    text = capsys.readouterr().out
    assert "predicted" in text and "measured" in text and "winner:" in text and "MISMATCH" not in text
    tuned.reset()
    (entry,) = tuned.store().entries.values()
    choice = Choice(**entry["choices"]["0"])
    plan = cuda_plan(subs, shapes)
    assert any(n.startswith("tuned:") for n in plan.notes)
    if choice.strategy == "gett":
        assert split_of(plan) == (choice.split or 1) and tile_of(plan) == choice.tile
    else:
        assert plan.steps[0].strategy == "reduce"
    rng = np.random.default_rng(3)
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got = einc.einsum(subs, *ops, backend="cuda")
    assert_matches(got, subs, *ops, terms=4096)
    used = [ex.plan for ex in api._EXECUTABLES.data.values()
            if getattr(ex, "plan", None) is not None and ex.plan.bound.spec.text == subs]
    assert used and all(any(n.startswith("tuned:") for n in p.notes) for p in used)


class _FakeDevice:
    """Just enough of CudaRuntime for `einc tune` on the CPU: memory is a dict of numpy
    arrays, events read the host clock, and executables run on the CPU executor."""

    def __init__(self):
        from cuda.bindings import driver
        ok = driver.CUresult.CUDA_SUCCESS
        self.mem, self.next = {}, 256
        clock = {}

        class Cu:
            CUdeviceptr = int
            cuEventCreate = staticmethod(lambda flags: (ok, object()))
            cuEventRecord = staticmethod(lambda ev, stream: (clock.__setitem__(id(ev), time.perf_counter()), (ok,))[1])
            cuEventSynchronize = staticmethod(lambda ev: (ok,))
            cuEventElapsedTime = staticmethod(lambda a, b: (ok, (clock[id(b)] - clock[id(a)]) * 1e3))
            cuEventDestroy = staticmethod(lambda ev: (ok,))
            cuMemFree = staticmethod(lambda p: (ok,))
        self.cu = Cu

    def make_current(self):
        pass

    def stream(self, handle):
        return handle

    def synchronize(self, stream, what=""):
        pass

    def alloc_persistent(self, nbytes):
        self.next += 256 * (1 + nbytes // 256)
        self.mem[self.next] = np.zeros(nbytes, dtype=np.uint8)
        return self.next

    def upload(self, ptr, host, stream):
        self.mem[ptr] = np.array(host, copy=True)

    def download(self, host, ptr, stream):
        host[...] = self.mem[ptr].reshape(host.shape)


def _fake_executable(plan, rt):
    cpu = Executable(plan)

    def run(input_ptrs, out_ptr, stream):
        out = np.empty(plan.out_shape, dtype=plan.out_dtype)
        cpu([rt.mem[p] for p in input_ptrs], out)
        rt.mem[out_ptr] = out
    return run


def test_tune_runs_end_to_end_on_a_fake_device(store_dir, monkeypatch, capsys):
    import einc.execute_cuda
    import einc.runtime.cuda
    fake = _FakeDevice()
    monkeypatch.setattr(einc.runtime.cuda, "available", lambda: True)
    monkeypatch.setattr(einc.runtime.cuda, "runtime", lambda ordinal=0: fake)
    monkeypatch.setattr(einc.execute_cuda, "CudaExecutable", _fake_executable)
    subs, shapes = "ij,jk->ik", [(64, 8192), (8192, 64)]
    assert main(["tune", subs, "--shapes", "64x8192,8192x64", "--dtype", "float32", "--repeat", "2"]) == 0
    text = capsys.readouterr().out
    assert "contraction 0:" in text and "predicted" in text and "measured" in text and "model" in text
    assert "winner:" in text and "MISMATCH" not in text and str(store_dir / "tuned.json") in text
    # every candidate was listed: reduce, and both tiles x (no split + 5 splits)
    assert text.count("gett 128x128x8") >= 6 and text.count("gett 64x64x8") >= 6 and "reduce" in text
    tuned.reset()
    (entry,) = tuned.store().entries.values()
    choice = Choice(**entry["choices"]["0"])
    plan = cuda_plan(subs, shapes)
    assert any(n.startswith("tuned:") and choice.text() in n for n in plan.notes)
    assert entry["seconds"] > 0 and entry["expr"] == "0 1,1 2->0 2"


def test_tune_says_when_there_is_nothing_to_tune(store_dir, monkeypatch, capsys):
    import einc.runtime.cuda
    monkeypatch.setattr(einc.runtime.cuda, "available", lambda: True)
    assert main(["tune", "ij,ij->i", "--shapes", "64x32,64x32"]) == 0
    assert "nothing to tune" in capsys.readouterr().out
    assert not (store_dir / "tuned.json").exists()


def test_the_tuner_offers_skinny_for_a_small_group_and_a_stored_pick_of_it_is_used(store_dir):
    from einc.tune import candidates
    subs, shapes = "akb,jk->jba", [(96, 64, 96), (24, 64)]
    _, t = plan_with(subs, shapes, "float32")
    assert Choice("gett", "skinny", 1) in candidates(t, 0)
    assert Choice("gett", "skinny", 1) not in candidates(plan_with("ij,jk->ik", [(256, 256)] * 2, "float32")[1], 0)
    p, _ = plan_with(subs, shapes, "float32", {0: Choice("gett", "64x64x8", 1)})
    assert tile_of(p) == "64x64x8"  # the pick overrides the model's skinny
    tuned.store().put(t.key, tuned.entry(t.parts, {0: Choice("gett", "skinny", 1)}))
    tuned.reset()
    assert tile_of(cuda_plan(subs, shapes)) == "skinny"


def test_the_96_wide_tile_where_a_group_of_84_to_96_would_waste_a_128_tile():
    ao2mo = [(84, 96), (84, 84, 96, 96)]  # bq,srqa->srba: M = b = 84 (a 128 tile: 66% used)
    assert tile_of(cuda_plan("bq,srqa->srba", ao2mo)) == "96x96x8"
    assert tile_of(cuda_plan("bq,srqa->srba", ao2mo, "int32")) == "96x96x8"
    assert tile_of(cuda_plan("bq,srqa->srba", ao2mo, "float64")) != "96x96x8"  # 4-byte types only
    # both operands K-fast (B would go element by element; A too big for narrow_copy) and tabled K measured slower
    assert tile_of(cuda_plan("ap,srqp->srqa", [(96, 1024), (40, 40, 40, 1024)])) == "128x128x8"
    assert tile_of(cuda_plan("kmli,ljm->kji", [(84, 96, 84, 96), (84, 84, 96)])) != "96x96x8"
    assert tile_of(cuda_plan("ij,jk->ik", [(4096, 4096), (4096, 4096)])) == "128x128x8"  # no waste: the big tile (x16 at emit)
    p = cuda_plan("bq,srqa->srba", ao2mo)
    assert predict_step(p, p.steps[0]).family == "gett 96x96x8"  # what explain shows


def test_the_tuner_offers_the_96_wide_tile_only_where_it_would_run(store_dir):
    from einc.tune import candidates
    narrow = Choice("gett", "96x96x8", 1)
    _, t = plan_with("bq,srqa->srba", [(84, 96), (84, 84, 96, 96)], "float32")
    got = candidates(t, 0)
    assert narrow in got and not any(c.tile == "96x96x8" and (c.split or 1) > 1 for c in got)
    for subs, shapes, dt in [("ap,srqp->srqa", [(96, 1024), (40, 40, 40, 1024)], "float32"),   # both K-fast
                             ("bq,srqa->srba", [(84, 96), (84, 84, 96, 96)], "float64")]:  # 8-byte
        assert narrow not in candidates(plan_with(subs, shapes, dt)[1], 0)


def test_the_tuner_offers_the_fp64_tensor_core_tiles_for_fp32_only_and_they_are_emitted(store_dir):
    """The DM tiles (fp32 products on the fp64 tensor cores) are measured by `einc tune`, never
    assumed by the model; a tuned one is the kernel the step gets, 16-k slices or not."""
    from einc.codegen.cuda.emit import DM_TILES, emit_step
    from einc.cost import simt_tiles
    from einc.tune import candidates
    assert not set(DM_TILES) & set(simt_tiles())
    shapes = [(384, 376, 384), (376, 384)]
    got = {c.tile for c in candidates(plan_with("lki,jl->kji", shapes, "float32")[1], 0)}
    assert set(DM_TILES) <= got
    split = candidates(plan_with("lki,kjl->ji", [(384, 376, 384), (376, 376, 384)], "float32")[1], 0)
    assert any((c.split or 1) > 1 for c in split)  # (a long K: splits are offered, the DM tiles unsplit)
    assert {c.tile for c in split if c.tile in DM_TILES and (c.split or 1) == 1} == set(DM_TILES)
    assert not any(c.tile in DM_TILES and (c.split or 1) > 1 for c in split)
    for dt in ("float64", "int32"):
        assert not set(DM_TILES) & {c.tile for c in candidates(plan_with("lki,jl->kji", shapes, dt)[1], 0)}
    for tile in DM_TILES:
        p, _ = plan_with("lki,jl->kji", shapes, "float32", {0: Choice("gett", tile, 1)})
        k = emit_step(p, p.steps[0])
        assert k.key[2] == tile and k.key[-1] == "dm" and "einc_dmma<8>" in k.source
    p = cuda_plan("lki,jl->kji", shapes)
    assert emit_step(p, p.steps[0]).key[-1] == "dm"  # (fp32, K = 384 strided, sm_90: the DM default)
    assert emit_step(p, p.steps[0], "sm_80").key[-1] != "dm"
    # a stored DM pick on a GPU without full-rate fp64 mma: the SIMT tile of the K rule
    p, _ = plan_with("lki,jl->kji", shapes, "float32", {0: Choice("gett", "64x128x16d", 1)})
    k = emit_step(p, p.steps[0], "sm_80")
    assert k.key[2] == "128x128x16" and k.key[-1] != "dm"


def test_a_tiny_k_fast_operand_is_copied_free_group_last_so_the_96_wide_tile_applies(monkeypatch):
    from einc import plan as planmod
    ap = [(96, 96), (84, 84, 84, 96)]  # TCCG ao2mo ap,srqp->srqa: both operands K-fast, a = 96
    p = cuda_plan("ap,srqp->srqa", ap)
    assert [s.strategy for s in p.steps] == ["reduce", "gett"] and p.steps[0].text == "ap->pa"
    assert tile_of(p) == "96x96x8"
    assert len(cuda_plan("ap,srqp->srqa", ap, "float64").steps) == 1  # 4-byte types only
    assert len(plan_for("ap,srqp->srqa", ap, "float32").steps) == 1  # the CPU plan is untouched
    assert len(cuda_plan("ap,srqp->srqa", [(128, 96), (84, 84, 84, 96)]).steps) == 1  # a = 128 fills the tile
    assert len(cuda_plan("ap,srqp->srqa", [(96, 96), (8, 8, 8, 96)]).steps) == 1  # too little work for a copy
    assert len(cuda_plan("apt,srqpt->srqa", [(96, 8, 12), (84, 84, 84, 8, 12)]).steps) == 1  # two K modes
    monkeypatch.setattr(planmod, "NARROW_COPY_MAX", 1000)  # the small operand is no longer tiny
    assert len(cuda_plan("ap,srqp->srqa", ap).steps) == 1


@pytest.mark.skipif(not __import__('test_cuda_codegen')._emulator_available(), reason="needs g++ with C++20")
def test_emulated_narrow_copy_plan_matches_numpy(monkeypatch):
    from einc import plan as planmod
    from oracle import assert_matches, summed_terms
    from test_cuda_codegen import emulate, make
    monkeypatch.setattr(planmod, "NARROW_COPY_MIN_FLOPS", 0)
    subs, shapes = "ap,srqp->srqa", [(90, 13), (3, 4, 35, 13)]
    p = cuda_plan(subs, shapes)
    assert [s.strategy for s in p.steps] == ["reduce", "gett"]  # (the tile: too few tiles here for 96)
    ops = [make(np.random.default_rng(2), s, "float32") for s in shapes]
    for tile in (None, "96x96x8"):  # the plan's tile, and the one the copy is for
        assert_matches(emulate(p, ops, gett_tile=tile), subs, *ops, terms=summed_terms(subs, shapes))
