"""The TCCG-24 report: markdown table, roofline PNG and `einc bench --report`, from a result dict.

No GPU is needed: the result is synthetic, with numbers chosen so every figure in the
table can be checked by hand.
"""
from __future__ import annotations

import json
import math
import statistics
import sys

import pytest

from einc import EincError
from einc.bench_cuda import case_geometry, load_tccg24
from einc.cli import main
from einc.report import markdown, plot_roofline, summarize, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _row(name, subs, flops, nbytes, einc_s, torch_s, error=None):
    return {"group": name.split()[0], "case": name.split()[1], "name": name, "einsum": subs,
            "flops": flops, "bytes": nbytes, "intensity": flops / nbytes,
            "einc": None if einc_s is None else {"median_s": einc_s, "samples_s": [einc_s] * 3},
            "torch": {"median_s": torch_s, "samples_s": [torch_s] * 3},
            "einc_error": error, "ok": None if einc_s is None else True, "strategies": "gett"}


def synthetic_result():
    """Three cases: einc 20 and 2 TFLOP/s, one case einc could not run (bf16)."""
    return {"schema": 2, "suite": "tccg24", "backend": "cuda", "dtype": "bfloat16",
            "device": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132, "driver": "570.1",
            "nvrtc": "13.0", "cuda_bindings": "13.0.1", "torch": "2.11.0", "numpy": "2.4.0",
            "einc": "0.1.0", "date": "2026-11-29 12:00:00", "timing": {"repeat": 3},
            "roofline": {"bandwidth_bytes_per_s": 4.1e12, "bandwidth_label": "1 GiB device-to-device copy, measured",
                         "peak_flops_per_s": 51e12, "peak_label": "cuBLAS fp32 GEMM, measured"},
            "rows": [_row("ccsd big", "ki,jk->ji", 2e12, 1e9, 0.1, 0.2),           # 20 vs 10 TFLOP/s
                     _row("intensli small", "akb,jk->jba", 1e12, 1e11, 0.5, 0.125),  # 2 vs 8
                     _row("ao2mo gap", "ap,srqp->srqa", 4e12, 2e10, None, 0.1,      # - vs 40
                          error="EincTypeError: bfloat16 is not supported yet\nmore detail")]}


def test_summary_geomeans_skip_missing_einc():
    s = summarize(synthetic_result())
    assert s["cases"] == 3 and s["cases_einc"] == 2
    assert s["geomean_einc_tflops"] == pytest.approx(math.sqrt(20 * 2))
    assert s["geomean_torch_tflops"] == pytest.approx((10 * 8 * 40) ** (1 / 3))
    assert s["geomean_ratio"] == pytest.approx(math.sqrt(2 * 0.25))  # over the cases both ran


def test_markdown_table_numbers():
    text = markdown(synthetic_result())
    assert "| 1 | ccsd big | `ki,jk->ji` | 2000.0 | 2000 | 20.00 | 10.00 | 2.00 |" in text
    assert "| 2 | intensli small | `akb,jk->jba` | 1000.0 | 10.0 | 2.00 | 8.00 | 0.25 |" in text
    assert "| 3 | ao2mo gap | `ap,srqp->srqa` | 4000.0 | 200 | — | 40.00 | — |" in text
    assert "| | **geometric mean** | | | | 6.32 (2 of 3) | 14.74 | 0.71 |" in text
    assert "- #3 ao2mo gap: EincTypeError: bfloat16 is not supported yet" in text
    assert "more detail" not in text
    assert "bandwidth 4.10 TB/s" in text and "peak 51.00 TFLOP/s (cuBLAS fp32 GEMM, measured)" in text
    assert "ridge point 12.4 FLOP/B" in text
    assert text.startswith("# TCCG-24, bfloat16, NVIDIA H200")


def test_markdown_marks_a_mismatch():
    result = synthetic_result()
    result["rows"][0]["ok"] = False
    assert "| 20.00 (mismatch) |" in markdown(result)


def _assert_real_png(path):
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 20_000
    image = pytest.importorskip("matplotlib.image").imread(str(path))
    rgb = image[..., :3]
    assert rgb.std() > 0.05
    assert (rgb.min(axis=-1) < 0.5).mean() > 0.005  # some dark ink: markers, lines, text


def test_png_roofline_is_a_real_chart(tmp_path):
    pytest.importorskip("matplotlib")
    path = plot_roofline(synthetic_result(), tmp_path / "r.png")
    _assert_real_png(path)


def test_markdown_without_matplotlib(tmp_path, monkeypatch, capsys):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)  # makes `import name` fail
    path = tmp_path / "r.json"
    path.write_text(json.dumps(synthetic_result()))
    written = write_report(path, plot=True, plot_required=False)  # as on the GPU machine
    assert written == [tmp_path / "r.md"] and not (tmp_path / "r.png").exists()
    assert "| 2 | intensli small |" in (tmp_path / "r.md").read_text()
    assert "--report" in capsys.readouterr().out
    with pytest.raises(EincError, match="pip install matplotlib"):
        write_report(path, plot=True)


def test_cli_report_plot_writes_md_and_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "tccg24-cuda-bf16-x.json"
    path.write_text(json.dumps(synthetic_result()))
    assert main(["bench", "--report", str(path), "--plot"]) == 0
    md = (tmp_path / "tccg24-cuda-bf16-x.md").read_text()
    assert "6.32 (2 of 3)" in md and "![roofline](tccg24-cuda-bf16-x.png)" in md
    _assert_real_png(tmp_path / "tccg24-cuda-bf16-x.png")
    assert "wrote" in capsys.readouterr().out


def test_cli_report_rejects_other_json(tmp_path, capsys):
    path = tmp_path / "core.json"
    path.write_text(json.dumps({"rows": [{"case": "matmul", "seconds": {}}]}))
    assert main(["bench", "--report", str(path)]) == 2
    assert "not a `einc bench --backend cuda --suite tccg24` result" in capsys.readouterr().err
    assert main(["bench", "--report", str(tmp_path / "missing.json")]) == 2


def test_cli_plot_and_dtype_only_for_the_gpu_suite(capsys):
    assert main(["bench", "--plot"]) == 2
    assert main(["bench", "--backend", "cuda", "--suite", "tccg24", "--plot", "--no-save"]) == 2
    assert main(["bench", "--dtype", "float16"]) == 2
    assert "--backend cuda --suite tccg24" in capsys.readouterr().err


def test_case_geometry_matches_the_suite_flops():
    for _, case, subs, sizes, gflop, _ in load_tccg24():
        assert round(case_geometry(subs, sizes, 4)["flops"] / 1e9, 1) == gflop, case
    g = case_geometry("ij,jk->ik", {"i": 2, "j": 3, "k": 4}, 2)
    assert g["shapes"] == [[2, 3], [3, 4]] and g["output_shape"] == [2, 4]
    assert g["flops"] == 48 and g["bytes"] == 2 * (6 + 12 + 8) and g["intensity"] == 48 / 52


def test_schema_1_results_still_report(tmp_path):
    """Results saved before the roofline (einc_s / torch_s per row) load with their geometry."""
    (group, case, _, _, gflop, _), *_ = load_tccg24()
    old = {"device": "NVIDIA H200", "nvrtc": "13.0", "torch": "2.11",
           "rows": [{"group": group, "case": case, "einsum": "x", "gflop": gflop, "einc_s": 0.02,
                     "torch_s": 0.01, "ok": True, "strategies": "gett", "samples": [0.02] * 5}]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    md = write_report(path, plot=False)[0].read_text()
    assert f"| 1 | {group} {case} |" in md and "| 0.50 |" in md and "Medians of 5 samples" in md
    assert "not measured in this run" in md


def test_suite_samples_are_taken_in_turn():
    """`einc bench --suite tccg24` times einc and torch.einsum sample by sample in turn, the
    order reversed every other round, so drift in the card's clock falls on both: here a clock
    that slows with every launch, under which timing one wholly after the other would make the
    second look slower although both run the same work."""
    from einc.bench_cuda import _events_interleaved

    class Clock:  # a fake torch.cuda: each launch costs 1 ms more than the last
        now, cost, log = 0.0, 1.0, []

        class Event:
            def __init__(self, enable_timing=True):
                self.t = 0.0

            def record(self):
                self.t = Clock.now

            def synchronize(self):
                pass

            def elapsed_time(self, other):
                return other.t - self.t

        @staticmethod
        def synchronize():
            pass

    class FakeTorch:
        cuda = Clock

    def launch(name):
        def fn(i):
            Clock.log.append(name)
            Clock.now += Clock.cost
            Clock.cost += 1.0
        return fn

    (ta, sa), (tb, sb) = _events_interleaved(FakeTorch, [launch("a"), launch("b")], repeat=4, inner=2)
    body = Clock.log[6:]  # after 3 warm-up calls of each
    assert body == ["a", "a", "b", "b", "b", "b", "a", "a", "a", "a", "b", "b", "b", "b", "a", "a"]
    assert len(sa) == len(sb) == 4 and ta == statistics.median(sa) and tb == statistics.median(sb)
    assert abs(ta - tb) / ta < 0.05  # alike, where one wholly after the other gives b 1.76x a's median


def test_intensli_section_measures_each_case_against_a_copy_of_its_largest_operand(monkeypatch, capsys):
    """`einc bench --backend cuda --suite intensli`: every intensli case of the suite (and no
    other) in each dtype, its bandwidth over the bytes it must move set against a copy of its
    largest operand timed in the same run. A fake torch.cuda clock charges each launch by the
    bytes it moves (the copy: its operand read and written; einc: every operand and the output
    at half the copy's rate), so the fraction must come out 0.5."""
    import numpy as np
    from einc import api as einc_api, bench_cuda

    rows = [("intensli", "x", "akb,jk->jba", {"a": 6, "b": 5, "j": 3, "k": 4}, 0.0, []),
            ("ccsd", "y", "ki,jk->ji", {"i": 4, "j": 4, "k": 4}, 0.0, []),
            ("intensli", "z", "abk,kj->bja", {"a": 3, "b": 7, "j": 2, "k": 5}, 0.0, [])]
    monkeypatch.setattr(bench_cuda, "load_tccg24", lambda: rows)

    class T(np.ndarray):
        def double(self): return self.astype(np.float64).view(T)
        def numel(self): return self.size
        def abs(self): return np.abs(self)
        def element_size(self): return self.itemsize
        def copy_(self, other):
            Clock.now += 2 * other.nbytes
            self[...] = other
            return self

    class Clock:
        now = 0.0

        class Event:
            def __init__(self, enable_timing=True): self.t = 0.0
            def record(self): self.t = Clock.now
            def synchronize(self): pass
            def elapsed_time(self, other): return (other.t - self.t) * 1e3  # ms: a byte a second

        @staticmethod
        def synchronize(): pass

    def contract(subs, *ops):
        out = np.einsum(subs, *ops).view(T)
        Clock.now += 2 * (sum(o.nbytes for o in ops) + out.nbytes)
        return out

    class FakeTorch:
        cuda = Clock
        bfloat16, float32 = np.float16, np.float32  # (numpy has no bfloat16: its size is what counts)
        einsum = staticmethod(lambda subs, *ops: np.einsum(subs, *ops).view(T))
        randn = staticmethod(lambda s, device=None, dtype=None: np.random.randn(*s).astype(dtype).view(T))
        empty = staticmethod(lambda s, dtype=None: np.empty(s, dtype).view(T))
        empty_like = staticmethod(lambda x: np.empty_like(x).view(T))
        allclose = staticmethod(lambda a, b, rtol, atol: np.allclose(a, b, rtol=rtol, atol=atol))

    class FakeEinc:
        einsum = staticmethod(contract)
        api = einc_api  # (planning needs no GPU: the cost model's figure for each case)

    got, more = [], []
    assert bench_cuda._intensli_rows(FakeTorch, FakeEinc, lambda *a, **k: (got.append(a), more.append(k)), repeat=3)
    assert [g[0] for g in got] == ["intensli akb,jk->jba bf16", "intensli abk,kj->bja bf16",
                                   "intensli akb,jk->jba fp32", "intensli abk,kj->bja fp32"]
    out = capsys.readouterr().out
    assert out.count("= 0.50 of the copy") == 4 and "intensli fp32: 0.50-0.50 of the copy roofline" in out
    name, flops, nbytes, t, anchors, samples = got[0]
    assert nbytes == 2 * (6 * 4 * 5 + 3 * 4 + 3 * 5 * 6) and t == 2 * nbytes and anchors["copy"] == 2 * 2 * 120
    from einc.cost import predict_plan, profile_for
    plan = einc_api.plan_for("akb,jk->jba", [(6, 4, 5), (3, 4)], "bfloat16", backend="cuda")
    assert more[0] == {"predicted_s": predict_plan(plan, profile_for())[0]}
    assert f"x the cost model's {more[0]['predicted_s'] * 1e6:.0f} us" in out


def test_markdown_states_the_cost_models_error_recorded_at_run_time():
    """Rows that carry the model's prediction (run_tccg24 records it) give one line under the
    table: measured / predicted per case, its range, geometric mean and the furthest cases."""
    result = synthetic_result()
    result["cost_profile"] = "H200"
    result["rows"][0]["predicted_s"] = 0.05  # measured 0.1: the model was 2x optimistic
    result["rows"][1]["predicted_s"] = 1.0  # measured 0.5: 2x pessimistic
    text = markdown(result)
    assert ("Cost model (H200 profile, recorded at run time): measured / predicted 0.50-2.00, "
            "geometric mean 1.00, rms of the log 0.69; furthest") in text
    assert "`ki,jk->ji` 2.00" in text and "`akb,jk->jba` 0.50" in text


def test_model_rows_replan_a_result_saved_without_predictions():
    """An older result (no predicted_s) is priced by today's model on its own card: planned and
    priced as that device (its split factors and grids follow its 114 SMs, not this machine's)."""
    from einc import api
    from einc.cost import as_device, predict_plan, profile_for
    from einc.report import model_rows
    subs, sizes = "kmli,ljm->kji", {"i": 96, "j": 84, "k": 84, "l": 84, "m": 96}
    row = _row("ccsd x", subs, 1.0, 1.0, 1e-3, 2e-3)
    row["shapes"] = case_geometry(subs, sizes, 2)["shapes"]
    result = {**synthetic_result(), "device": "NVIDIA H100 PCIe", "sm_count": 114, "rows": [row]}
    what, rows = model_rows(result)
    shapes = [tuple(x) for x in row["shapes"]]
    with as_device("NVIDIA H100 PCIe", 114):
        mine = predict_plan(api.plan_for(subs, shapes, "bfloat16", backend="cuda"), profile_for())[0]
    here = predict_plan(api.plan_for(subs, shapes, "bfloat16", backend="cuda"), profile_for("NVIDIA H100 PCIe", 114))[0]
    assert what == "H100 PCIe at 114 SMs profile, today's model"
    assert rows == [(row, 1e-3, mine)] and mine != here  # (planned for 132 SMs, the price differs)


def test_tccg24_run_records_the_models_prediction_beside_each_measurement(monkeypatch, capsys):
    """run_tccg24 with a fake torch (numpy arrays, a fixed clock): each row keeps the cost
    model's time for its plan on the device's profile, the result names the profile, and the
    run prints the model's error; a fault in the model leaves the measurements standing."""
    import numpy as np
    from einc import bench_cuda
    from einc.cost import predict_plan, profile_for

    cases = [("ccsd", "a", "ki,jk->ji", {"i": 6, "j": 5, "k": 4}, 0.0, []),
             ("intensli", "b", "akb,jk->jba", {"a": 3, "b": 5, "j": 2, "k": 4}, 0.0, [])]
    monkeypatch.setattr(bench_cuda, "load_tccg24", lambda: cases)
    monkeypatch.setattr(bench_cuda, "device_info", lambda torch: {"device": "NVIDIA H100 80GB HBM3", "sm_count": 132,
                                                                  "compute_capability": "9.0"})
    monkeypatch.setattr(bench_cuda, "measure_rooflines", lambda *a: {"bandwidth_bytes_per_s": 3e12,
                                                                     "peak_flops_per_s": 5e13, "peak_label": "x"})
    monkeypatch.setattr(bench_cuda, "_events_interleaved", lambda torch, fns, repeat, inner: [(2e-6, [2e-6]), (1e-6, [1e-6])])

    class T(np.ndarray):
        def double(self): return self.astype(np.float64).view(T)
        def abs(self): return np.abs(self)
        def element_size(self): return self.itemsize

    class FakeTorch:
        class backends:
            class cuda:
                class matmul:
                    allow_tf32 = True
        float32 = np.float32
        einsum = staticmethod(lambda subs, *ops: np.einsum(subs, *ops).view(T))
        randn = staticmethod(lambda s, device=None, dtype=None: np.random.randn(*s).astype(dtype).view(T))
        empty = staticmethod(lambda s, dtype=None: np.empty(s, dtype).view(T))
        allclose = staticmethod(lambda a, b, rtol, atol: np.allclose(a, b, rtol=rtol, atol=atol))

    monkeypatch.setitem(sys.modules, "torch", FakeTorch)
    import einc
    real = einc.einsum  # (einc's CPU result, as the fake tensor type)
    monkeypatch.setattr(einc, "einsum", lambda subs, *ops: np.asarray(real(subs, *ops)).view(T))
    plans = [einc.api.plan_for(subs, case_geometry(subs, z, 4)["shapes"], "float32", backend="cuda")
             for _, _, subs, z, _, _ in cases]
    saved = {}
    import einc.report as report
    real_summarize = report.summarize
    monkeypatch.setattr(report, "summarize", lambda r: (saved.__setitem__("r", r), real_summarize(r))[1])
    assert bench_cuda.run_tccg24(save=False, repeat=1) == 0
    result = saved["r"]
    assert result["cost_profile"] == profile_for().name
    assert [r["predicted_s"] for r in result["rows"]] == [predict_plan(p, profile_for())[0] for p in plans]
    assert "Cost model (" + profile_for().name + " profile, recorded at run time): measured / predicted" \
        in capsys.readouterr().out

    def broken(*a):
        raise ZeroDivisionError("a fault in the model")
    monkeypatch.setattr(bench_cuda, "predict_plan", broken)
    assert bench_cuda.run_tccg24(save=False, repeat=1) == 0
    out = capsys.readouterr().out
    assert "(no prediction: ZeroDivisionError: a fault in the model)" in out
    assert all(r["einc"]["median_s"] == 1e-6 and r["predicted_s"] is None for r in saved["r"]["rows"])
