"""Reports of a `einc bench --backend cuda --suite tccg24` result: a markdown table and a roofline.

Both are made from the saved JSON alone, so a result measured on a GPU machine without
matplotlib can be charted anywhere later (`einc bench --report RESULT.json --plot`).
Only the chart needs matplotlib, imported when it is drawn.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from .errors import EincError


def geomean(values):
    """Geometric mean of the values that are present; None when none are.

    >>> geomean([2.0, None, 8.0])
    4.0
    """
    xs = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in xs) / len(xs)) if xs else None


def _tflops(row, who):
    t = row[who]
    return None if t is None else row["flops"] / t["median_s"] / 1e12


def _ratio(row):
    e, t = row["einc"], row["torch"]
    return None if e is None or t is None else t["median_s"] / e["median_s"]


def summarize(result: dict) -> dict:
    """Geometric means over the cases each side has, recomputed from the medians.

    einc's mean covers only the cases einc ran (a dtype it lacks leaves gaps), so the
    ratio's mean is taken over the cases both ran, never from the two means.

    >>> row = {"flops": 2e12, "einc": {"median_s": 1.0}, "torch": {"median_s": 2.0}}
    >>> summarize({"rows": [row]})["geomean_ratio"]
    2.0
    """
    rows = result["rows"]
    return {"cases": len(rows), "cases_einc": sum(r["einc"] is not None for r in rows),
            "geomean_einc_tflops": geomean(_tflops(r, "einc") for r in rows),
            "geomean_torch_tflops": geomean(_tflops(r, "torch") for r in rows),
            "geomean_ratio": geomean(_ratio(r) for r in rows)}


def load(path) -> dict:
    """A result JSON, with results saved before schema 2 brought to it (fp32 TCCG-24 only)."""
    try:
        result = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise EincError(f"cannot read the result {path}: {e}") from e
    rows = result.get("rows") if isinstance(result, dict) else None
    shaped = lambda r: isinstance(r, dict) and ({"einsum", "einc"} <= r.keys() or "einc_s" in r)
    if not rows or not all(shaped(r) for r in rows):
        raise EincError(f"{path} is not a `einc bench --backend cuda --suite tccg24` result")
    if result.get("schema", 1) >= 2:
        return result
    from .bench_cuda import case_geometry, load_tccg24
    sizes = {(g, c): (subs, ext) for g, c, subs, ext, _, _ in load_tccg24()}
    rows = []
    for r in result["rows"]:  # schema 1: einc_s / torch_s / samples, sizes only in the suite file
        if (r.get("group"), r.get("case")) not in sizes:
            raise EincError(f"{path}: case {r.get('group')} {r.get('case')} is not in benchmarks/tccg24.tsv")
        subs, ext = sizes[(r["group"], r["case"])]
        rows.append({"group": r["group"], "case": r["case"], "name": f"{r['group']} {r['case']}",
                     "einsum": subs, "sizes": ext, **case_geometry(subs, ext, 4),
                     "einc": {"median_s": r["einc_s"], "samples_s": r.get("samples")},
                     "torch": {"median_s": r["torch_s"]}, "einc_error": None, "ok": r.get("ok"),
                     "strategies": r.get("strategies")})
    repeat = len(result["rows"][0].get("samples") or []) or None
    return {**result, "schema": 2, "dtype": "float32", "rows": rows, "roofline": {},
            "timing": {"statistic": "median", "repeat": repeat}}


def model_rows(result: dict) -> tuple:
    """(profile text, [(row, measured s, predicted s)]): each case einc ran against the cost
    model's total for its plan (`einc explain`'s "predicted total"). The figure recorded at run
    time where the row has one; else today's model on the result's device and SM count
    (offline: planning needs no GPU), which prices today's kernels, not that day's.
    """
    from .cost import predict_plan, profile_for
    rows = [r for r in result["rows"] if r["einc"] is not None]
    if rows and all(r.get("predicted_s") for r in rows):
        profile = result.get("cost_profile", "?")
        return f"{profile} profile, recorded at run time", [(r, r["einc"]["median_s"], r["predicted_s"]) for r in rows]
    from . import api
    from .cost import as_device
    out = []
    with as_device(result.get("device", ""), result.get("sm_count") or 132):  # plans for that card too
        prof = profile_for()
        for r in rows:
            if not r.get("shapes"):
                continue  # (a synthetic row, or one saved without its operands' shapes)
            try:
                plan = api.plan_for(r["einsum"], [tuple(s) for s in r["shapes"]], result.get("dtype", "float32"),
                                    backend="cuda")
            except EincError:
                continue
            out.append((r, r["einc"]["median_s"], predict_plan(plan, prof)[0]))
    return f"{prof.name} profile, today's model", out


def model_summary(result: dict) -> str | None:
    """One line: the model's error over the cases (measured / predicted: > 1, the model was
    optimistic), its geometric mean and spread, and the furthest cases."""
    what, rows = model_rows(result)
    if not rows:
        return None
    ratios = [(m / p, r["einsum"]) for r, m, p in rows]
    logs = [math.log(x) for x, _ in ratios]
    rms = math.sqrt(sum(v * v for v in logs) / len(logs))
    far = sorted(ratios, key=lambda x: -abs(math.log(x[0])))[:3]
    return (f"Cost model ({what}): measured / predicted {min(ratios)[0]:.2f}-{max(ratios)[0]:.2f}, "
            f"geometric mean {geomean(x for x, _ in ratios):.2f}, rms of the log {rms:.2f}; furthest "
            + ", ".join(f"`{e}` {x:.2f}" for x, e in far) + ".")


def _num(v, spec):
    return "—" if v is None else format(v, spec)


def _intensity(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def markdown(result: dict, chart: str | None = None) -> str:
    """The result as a markdown table with geometric means and the roofs' values.

    ratio = einc TFLOP/s / torch.einsum TFLOP/s (> 1: einc faster); "—" marks a case
    einc did not run, with its error listed under the table.
    """
    s = summarize(result)
    names = {"einc": "einc", "torch": "torch", "nvrtc": "NVRTC", "cuda_bindings": "cuda-bindings",
             "driver": "driver", "numpy": "numpy"}
    versions = ", ".join(f"{v} {result[k]}" for k, v in names.items() if result.get(k))
    device = result.get("device", "unknown device")
    cc = f" (compute capability {result['compute_capability']}, {result.get('sm_count', '?')} SMs)" \
        if result.get("compute_capability") else ""
    timing = result.get("timing", {})
    lines = [f"# TCCG-24, {result.get('dtype', '?')}, {device}", "",
             f"{device}{cc}; {versions}; {result.get('date', '')}.".replace("; .", "."),
             f"Medians of {timing.get('repeat', '?')} samples (CUDA events"
             + ("; einc's and torch.einsum's taken in turn" if "in turn" in timing.get("method", "") else "") + "). "
             "ratio = einc TFLOP/s ÷ torch.einsum TFLOP/s (> 1: einc faster).", ""]
    if chart:
        lines += [f"![roofline]({chart})", ""]
    lines += ["| # | case | einsum | GFLOP | FLOP/B | einc TFLOP/s | torch.einsum TFLOP/s | ratio |",
              "|---:|---|---|---:|---:|---:|---:|---:|"]
    errors = []
    for i, r in enumerate(result["rows"], 1):
        einc = _num(_tflops(r, "einc"), ".2f") + (" (mismatch)" if r.get("ok") is False else "")
        if r["einc"] is None:
            errors.append(f"- #{i} {r['name']}: {(r.get('einc_error') or 'not run').splitlines()[0]}")
        lines.append(f"| {i} | {r['name']} | `{r['einsum']}` | {r['flops'] / 1e9:.1f} | "
                     f"{_intensity(r['intensity'])} | {einc} | {_num(_tflops(r, 'torch'), '.2f')} | "
                     f"{_num(_ratio(r), '.2f')} |")
    lines.append(f"| | **geometric mean** | | | | {_num(s['geomean_einc_tflops'], '.2f')} "
                 f"({s['cases_einc']} of {s['cases']}) | {_num(s['geomean_torch_tflops'], '.2f')} | "
                 f"{_num(s['geomean_ratio'], '.2f')} |")
    if errors:
        lines += ["", "einc did not run:", *errors]
    model = model_summary(result)
    if model:
        lines += ["", model]
    roof = result.get("roofline") or {}
    lines += ["", "Roofline:"]
    bw, peak = roof.get("bandwidth_bytes_per_s"), roof.get("peak_flops_per_s")
    if bw:
        lines.append(f"- bandwidth {bw / 1e12:.2f} TB/s ({roof.get('bandwidth_label', '')})")
    if peak:
        lines.append(f"- peak {peak / 1e12:.2f} TFLOP/s ({roof.get('peak_label', '')})")
    if bw and peak:
        lines.append(f"- ridge point {peak / bw:.1f} FLOP/B (cases to its right can reach the peak)")
    if not (bw or peak):
        lines.append("- not measured in this run")
    return "\n".join(lines) + "\n"


def plot_roofline(result: dict, path) -> Path:
    """Draw achieved TFLOP/s against FLOP/byte (log-log), einc and torch.einsum per case.

    Each case is numbered as in the markdown table; a thin line joins its two points so the
    gap reads at a glance. The bandwidth roof y = BW * x and the peak line are drawn when
    the result measured them.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise EincError("the roofline chart needs matplotlib: pip install matplotlib") from e
    fig = Figure(figsize=(9, 6), dpi=120)
    FigureCanvasAgg(fig)  # Agg, without touching pyplot's global backend
    ax = fig.add_subplot()
    rows = result["rows"]
    xs = [r["intensity"] for r in rows]
    seen = [v for r in rows for v in (_tflops(r, "einc"), _tflops(r, "torch")) if v]
    for i, r in enumerate(rows, 1):
        e, t = _tflops(r, "einc"), _tflops(r, "torch")
        if e and t:
            ax.plot([r["intensity"]] * 2, [e, t], color="0.6", lw=0.7, zorder=1)
        if e or t:
            ax.annotate(str(i), (r["intensity"], e or t), xytext=(4, 2), textcoords="offset points", fontsize=7)
    for who, label, style in (("einc", "einc", dict(marker="o", color="tab:blue")),
                              ("torch", "torch.einsum", dict(marker="s", color="tab:orange", mfc="none"))):
        pts = [(r["intensity"], _tflops(r, who)) for r in rows if r[who] is not None]
        if pts:
            ax.plot(*zip(*pts), ls="none", ms=6, label=label, zorder=3, **style)
    roof = result.get("roofline") or {}
    bw, peak = roof.get("bandwidth_bytes_per_s"), roof.get("peak_flops_per_s")
    lo, hi = min(xs) / 2, max(xs) * 2
    if bw and peak:
        lo = min(lo, peak / bw / 4)
    if bw:
        ax.plot([lo, hi], [bw * lo / 1e12, bw * hi / 1e12], "k--", lw=1,
                label=f"bandwidth {bw / 1e12:.2f} TB/s ({roof.get('bandwidth_label', 'measured')})")
    if peak:
        ax.axhline(peak / 1e12, color="k", ls="-.", lw=1,
                   label=f"peak {peak / 1e12:.1f} TFLOP/s ({roof.get('peak_label', 'measured')})")
    top = max(seen + ([peak / 1e12] if peak else []) or [1.0]) * 2
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(min(seen) / 2 if seen else 0.01, top),
           xlabel="arithmetic intensity (FLOP/byte: operands read + output written once)",
           ylabel="achieved TFLOP/s (median)",
           title=f"TCCG-24 roofline: {result.get('device', 'unknown device')}, {result.get('dtype', '?')}")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    return Path(path)


def write_report(json_path, result: dict | None = None, plot=True, plot_required=True) -> list[Path]:
    """Write ``<json>.md`` and, with ``plot``, ``<json>.png`` beside the JSON; return the paths.

    With ``plot_required=False`` a missing matplotlib costs only the chart (the GPU machine
    has none): one line says how to draw it later instead of an error.

    >>> write_report("benchmarks/results/tccg24-cuda-fp32-X.json")  # doctest: +SKIP
    """
    json_path = Path(json_path)
    result = load(json_path) if result is None else result
    md, png = json_path.with_suffix(".md"), json_path.with_suffix(".png")
    written = []
    if plot:
        try:
            written.append(plot_roofline(result, png))
        except EincError:
            if plot_required:
                raise
            print(f"no matplotlib here: `pip install matplotlib`, then `einc bench --report {json_path} --plot`"
                  " draws the chart")
    md.write_text(markdown(result, chart=png.name if png in written or png.exists() else None))
    written.insert(0, md)
    for p in written:
        print(f"wrote {p}")
    return written
