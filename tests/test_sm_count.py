"""Grids are sized for the card's SM count (cost.device_sms), not the H200's 132.

A persistent grid of 132 blocks on a 114-SM card runs its last 18 blocks as a second
wave, each with a whole block's share of the tiles: up to twice the time. These run without a
GPU: the device's name and count are faked.
"""
from __future__ import annotations

import pytest

import einc
from einc import cost
from einc.codegen.cuda import emit, emit_stream
from einc.codegen.cuda.emit import emit_step


@pytest.fixture
def card(monkeypatch):
    """card(sms): device 0 is a Hopper card no profile names (the H20) with ``sms`` SMs (0: no GPU)."""
    def use(sms: int) -> None:
        monkeypatch.setattr(cost, "device_sms", lambda: sms)
        monkeypatch.setattr(cost, "device_name", lambda: "NVIDIA H20" if sms else "")
    return use


def test_profile_and_grids_follow_the_device_count(card, monkeypatch):
    card(114)
    prof = cost.profile_for()
    assert (prof.sms, prof.name, emit.sm_count()) == (114, "H200 at 114 SMs", 114)
    assert prof.peak("mma/bf16") == pytest.approx(cost.H200.peak("mma/bf16") * 114 / 132)
    assert prof.bandwidth == cost.H200.bandwidth
    card(0)  # no GPU: the H200 as it is
    assert cost.profile_for() is cost.H200 and emit.sm_count() == 132
    monkeypatch.setattr(emit, "SM_COUNT", 7)  # an experiment's count wins over the device's
    card(114)
    assert emit.sm_count() == 7


def _wgmma_grid(monkeypatch, mode: str) -> tuple:
    from einc.codegen.cuda import emit_wgmma
    monkeypatch.setattr(emit_wgmma, "CLUSTER", mode)
    p = einc.api.plan_for("ki,jk->ji", [(7248, 7248), (7240, 7248)], "bfloat16", backend="cuda")
    k = emit_step(p, p.steps[0], "sm_90", gett_tile="wgmma192x192wsp")
    return k.grid[0], k.source


@pytest.mark.parametrize("sms", [132, 114, 78, 67])
@pytest.mark.parametrize("mode", ["", "a"])
def test_persistent_wgmma_grid_is_one_wave(card, monkeypatch, sms, mode):
    """The persistent 192x192 tile (1444 tiles here) runs one block per SM: its grid is the
    card's count, clusters of two rounding it down to even."""
    card(sms)
    grid, source = _wgmma_grid(monkeypatch, mode)
    assert grid == (sms - sms % 2 if mode else sms)
    assert ("__cluster_dims__(2, 1, 1)" in source) == bool(mode)


@pytest.mark.parametrize("sms", [132, 114])
def test_stream_grid_is_the_resident_blocks(card, sms):
    """The fp32 stream kernel (ccsd_t's shape) launches the blocks resident at once."""
    card(sms)
    shapes = [(24, 24, 20, 24), (20, 20, 20, 24)]
    p = einc.api.plan_for("amji,cbkm->kjicba", shapes, "float32", backend="cuda", strategy="gett")
    assert p.steps[-1].config == (("tile", "stream"),)
    k = emit_step(p, p.steps[-1])
    assert k.grid[0] == emit_stream.BLOCKS_PER_SM * sms


def test_explain_names_the_sized_profile(card):
    card(114)
    plan = einc.api.plan_for("ij,jk->ik", [(4096, 4096)] * 2, "float32", backend="cuda")
    text = repr(cost.explain_lines(plan))
    assert "on the H200 at 114 SMs profile" in text


def test_h100_profiles_keep_the_h200s_rates_but_not_its_bandwidth():
    """The H100 SXM is the H200's chip with slower HBM; the PCIe card is matched before the
    SXM's shorter name and sized to its SMs."""
    sxm = cost.profile_for("NVIDIA H100 80GB HBM3", 132)
    assert sxm.name == "H100" and sxm.peaks == cost.H200.peaks
    assert sxm.bandwidth == pytest.approx(2.95e12) and cost.H200.bandwidth > 4e12
    pcie = cost.profile_for("NVIDIA H100 PCIe", 114)
    assert pcie.name == "H100 PCIe at 114 SMs" and pcie.bandwidth < sxm.bandwidth
    assert pcie.peak("mma/bf16") < cost.H200.peak("mma/bf16") * 114 / 132
    assert cost.profile_for("NVIDIA H200", 132) is cost.H200
    assert cost.profile_for("NVIDIA H100 NVL", 132).name == "H100 NVL"
    assert cost.profile_for("NVIDIA H200 NVL", 132) is cost.H200


def test_skinny_kernels_stream_at_the_sms_rate_on_either_card():
    """The skinny kernels' memory time follows the SMs (cost.SKINNY_RATE), not the HBM: the
    same on the H100 as on the H200, and a card with fewer SMs slower; fp64 (no measured
    rate) follows the bandwidth."""
    args = (24 * 4096, 24, 384, 1, 120e6)
    h200, h100 = cost.H200, cost.profile_for("NVIDIA H100 80GB HBM3", 132)
    small = cost.profile_for("NVIDIA H100 80GB HBM3", 66)
    for dt, fam in (("bfloat16", "skinny/mma"), ("float32", "skinny/4")):
        t = [cost.predict_skinny(*args, [dt] * 2, "float32", p).memory for p in (h200, h100, small)]
        assert t[0] == t[1] == pytest.approx(120e6 / cost.SKINNY_RATE[fam] / 132)
        assert t[2] == pytest.approx(2 * t[0])
        nvl = cost.profile_for("NVIDIA H100 NVL", 132)  # the H200's count at a lower clock
        slow = cost.predict_skinny(*args, [dt] * 2, "float32", nvl).memory
        assert slow == pytest.approx(t[0] * 1980 / 1785)
    fp64 = [cost.predict_skinny(*args, ["float64"] * 2, "float64", p).memory for p in (h200, h100)]
    assert fp64[1] / fp64[0] == pytest.approx(h200.bandwidth / h100.bandwidth)
