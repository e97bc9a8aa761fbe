"""CLI conventions: `python -m einc` is the same CLI, `--version`, `einc sysinfo`, and a
progress bar for long work that is drawn on a terminal and never in a pipe."""
from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import einc
import einc.bench
from einc.cli import main
from einc.progress import Progress, enabled_for

ROOT = Path(__file__).resolve().parent.parent


def _run(*args, **kw):
    env = {**os.environ, **kw.pop("env", {})}
    return subprocess.run([sys.executable, "-m", "einc", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120, **kw)


class TTY(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


# ---------------------------------------------------------------- python -m einc, --version

def test_python_dash_m_einc_is_the_cli():
    r = _run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"einc {einc.__version__}"
    r = _run("--help")
    assert r.returncode == 0
    for cmd in ("explain", "compile", "sysinfo", "demo", "tune", "bench"):
        assert cmd in r.stdout
    r = _run("explain", "ij,jk->ik", "--shapes", "3x4,5x6")
    assert r.returncode == 2 and "einc: error:" in r.stderr and "Traceback" not in r.stderr


def test_console_script_matches_python_dash_m():
    script = Path(sys.executable).with_name("einc")
    if not script.exists():
        pytest.skip("the einc console script is not installed beside this interpreter")
    r = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert r.stdout == _run("--version").stdout


def test_version_flag_in_process(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"einc {einc.__version__}"


# ---------------------------------------------------------------- sysinfo

@pytest.fixture
def cache_with_files(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    (root / "cpu").mkdir(parents=True)
    (root / "cuda" / "x").mkdir(parents=True)
    (root / "cpu" / "a.o").write_bytes(b"x" * 100)
    (root / "cuda" / "x" / "b.cubin").write_bytes(b"y" * 23)
    (root / "tuned.json").write_text("{}")
    monkeypatch.setenv("EINC_CACHE_DIR", str(root))
    return root


def test_sysinfo_reports_cpu_cache_and_versions(cache_with_files, capsys):
    import llvmlite.binding as llvm
    from einc.runtime.cuda import available
    assert main(["sysinfo"]) == 0
    out = capsys.readouterr().out
    lines = dict(line.split(None, 1) for line in out.splitlines() if line[:1].strip())
    assert lines["einc"].startswith(einc.__version__)
    assert lines["CPU"].startswith(llvm.get_host_cpu_name())
    assert f"{os.cpu_count()} cores" in lines["CPU"]
    features = [f[1:] for f in llvm.get_host_cpu_features().flatten().split(",") if f.startswith("+")]
    assert features and features[0] in out
    assert lines["cache"] == f"{cache_with_files} (3 files, 125 bytes = 125 B)"
    try:
        from einc.runtime.cuda import nvrtc_version
        assert lines["NVRTC"] == nvrtc_version()
    except ImportError:
        assert lines["NVRTC"] == "not installed"
    try:
        import importlib.metadata
        assert lines["cuda-python"].startswith(importlib.metadata.version("cuda-python"))
    except importlib.metadata.PackageNotFoundError:
        assert lines["cuda-python"] == "not installed"
    if not available():
        assert lines["GPU"].startswith("no GPU (")


def test_sysinfo_json_and_a_missing_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EINC_CACHE_DIR", str(tmp_path / "never-made"))
    monkeypatch.setenv("EINC_DISK_CACHE", "0")
    assert main(["sysinfo", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["cache"] == {"dir": str(tmp_path / "never-made"), "exists": False, "files": 0,
                             "bytes": 0, "disk_cache": False}
    assert info["cpu"]["cores"] == os.cpu_count() and info["einc"] == einc.__version__
    assert main(["sysinfo"]) == 0
    out = capsys.readouterr().out
    assert "(not created yet)" in out and "EINC_DISK_CACHE=0" in out


class _FakeCu:
    """The driver calls sysinfo makes, answering for one H200."""

    class CUresult:
        CUDA_SUCCESS = 0

    class CUdevice_attribute:
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = "major"
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = "minor"
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = "sms"

    init_error = 0

    def cuInit(self, flags):
        return (self.init_error,)

    def cuDeviceGetCount(self):
        return 0, 2

    def cuDeviceGet(self, i):
        return 0, 100 + i

    def cuDeviceGetName(self, n, dev):
        return 0, b"NVIDIA H200\0\0\0"

    def cuDeviceGetAttribute(self, attr, dev):
        return 0, {"major": 9, "minor": 0, "sms": 132}[attr]

    def cuDeviceTotalMem(self, dev):
        return 0, 150 * 2**30

    def cuDriverGetVersion(self):
        return 0, 13000

    def cuGetErrorString(self, err):
        return 0, b"fake failure"


def test_sysinfo_names_the_gpu(monkeypatch, capsys, cache_with_files):
    import einc.runtime.cuda as rc
    import einc.sysinfo
    cu = _FakeCu()
    monkeypatch.setattr(rc, "_driver", lambda: cu)
    monkeypatch.setattr(einc.sysinfo, "driver_release", lambda: "570.124.06")
    assert main(["sysinfo"]) == 0
    out = capsys.readouterr().out
    assert "GPU          NVIDIA H200 (sm_90, 132 SMs, 150.0 GiB; 2 devices)" in out
    assert "driver       570.124.06 (CUDA 13.0)" in out
    cu.init_error = 100  # CUDA_ERROR_NO_DEVICE
    assert main(["sysinfo"]) == 0
    assert "no GPU (no usable CUDA driver (100))" in capsys.readouterr().out


def test_driver_release_reads_the_kernel_module_version(monkeypatch, tmp_path):
    import einc.sysinfo as si
    text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  Wed Feb 26 2025\nGCC version: 12\n"
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text",
                        lambda self, *a, **k: text if str(self) == "/proc/driver/nvidia/version"
                        else real(self, *a, **k))
    assert si.driver_release() == "570.124.06"


# ---------------------------------------------------------------- the progress helper

def test_progress_writes_nothing_to_a_pipe_or_file(capsys):
    stream = io.StringIO()
    with Progress(3, "work", stream=stream) as bar:
        for item in "abc":
            bar.set_item(item)
            bar.print(f"row {item}")
            bar.advance(item)
    assert stream.getvalue() == ""
    assert capsys.readouterr().out == "row a\nrow b\nrow c\n"


def test_progress_draws_on_a_terminal_and_clears_itself(capsys):
    tty = TTY()
    with Progress(4, "work", stream=tty) as bar:
        bar.set_item("first")
        bar.print("a result line")
        for _ in range(4):
            bar.advance("next")
    text = tty.getvalue()
    assert "\r" in text and "work [" in text and "0/4" in text and "4/4" in text and "first" in text
    assert "#" * Progress.WIDTH in text  # the finished bar was drawn
    assert text.endswith("\r\x1b[2K")  # and taken off the line at the end
    assert "\n" not in text  # the bar never scrolls the terminal
    assert capsys.readouterr().out == "a result line\n"


def test_progress_line_fits_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    bar = Progress(10, "a label", stream=TTY())
    bar.set_item("x" * 200)
    assert len(bar.line()) < 40


@pytest.mark.parametrize("env", [{"EINC_PROGRESS": "0"}, {"TERM": "dumb"}])
def test_progress_can_be_turned_off(monkeypatch, env):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    tty = TTY()
    assert not enabled_for(tty)
    with Progress(2, stream=tty) as bar:
        bar.advance()
    assert tty.getvalue() == ""


def test_progress_survives_a_closed_terminal():
    tty = TTY()
    bar = Progress(2, stream=tty)
    tty.close()
    bar.advance()  # ValueError: I/O on a closed file is swallowed, and the bar turns off
    assert not bar.on


# ---------------------------------------------------------------- bench and tune use it

TINY = [("tiny matmul", "ij,jk->ik", [(16, 16), (16, 16)], "float64"),
        ("tiny row-dot", "ij,ij->i", [(32, 8), (32, 8)], "float64")]


def test_bench_suite_in_a_pipe_prints_rows_and_no_progress(monkeypatch, capsys):
    monkeypatch.setitem(einc.bench.SUITES, "tiny", TINY)
    assert main(["bench", "--suite", "tiny", "--repeat", "1", "--no-save"]) == 0
    cap = capsys.readouterr()
    assert cap.err == ""
    assert "tiny matmul" in cap.out and "tiny row-dot" in cap.out and "\r" not in cap.out


def test_bench_suite_on_a_terminal_shows_progress(monkeypatch, capsys):
    monkeypatch.setitem(einc.bench.SUITES, "tiny", TINY)
    tty = TTY()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(["bench", "--suite", "tiny", "--repeat", "1", "--no-save"]) == 0
    text = tty.getvalue()
    assert "einc bench tiny [" in text and "2/2" in text and "tiny row-dot" in text
    out = capsys.readouterr().out
    assert out.count("tiny matmul") == 1 and "\r" not in out  # rows are not garbled by the bar


def test_bench_on_a_real_pty_draws_the_bar_and_a_pipe_gets_none():
    """The whole CLI in a child: stderr a pseudo-terminal, stdout a pipe."""
    code = ("import einc.bench, sys; einc.bench.SUITES['tiny'] = %r; from einc.cli import main; "
            "sys.exit(main(['bench', '--suite', 'tiny', '--repeat', '1', '--no-save']))" % (TINY,))
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("EINC_PROGRESS", "TERM")}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=slave,
                            cwd=ROOT, env=env)
    os.close(slave)
    seen, deadline = b"", time.monotonic() + 120
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.5)
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    out = proc.communicate(timeout=60)[0].decode()
    os.close(master)
    assert proc.returncode == 0
    assert b"\r" in seen and b"einc bench tiny [" in seen and b"2/2" in seen
    assert "tiny matmul" in out and "\r" not in out and "einc bench tiny [" not in out


def test_tune_shows_progress_on_a_terminal_only(monkeypatch, capsys, tmp_path):
    pytest.importorskip("cuda.bindings")
    import einc.execute_cuda
    import einc.runtime.cuda
    from einc import tuned
    from test_cost_tune import _FakeDevice, _fake_executable
    monkeypatch.setenv("EINC_CACHE_DIR", str(tmp_path))
    tuned.reset()
    fake = _FakeDevice()
    monkeypatch.setattr(einc.runtime.cuda, "available", lambda: True)
    monkeypatch.setattr(einc.runtime.cuda, "runtime", lambda ordinal=0: fake)
    monkeypatch.setattr(einc.execute_cuda, "CudaExecutable", _fake_executable)
    args = ["tune", "ij,jk->ik", "--shapes", "64x2048,2048x64", "--dtype", "float32", "--repeat", "1"]
    try:
        assert main(args) == 0
        piped = capsys.readouterr()
        assert piped.err == "" and "winner:" in piped.out
        tty = TTY()
        monkeypatch.setattr(sys, "stderr", tty)
        assert main(args) == 0
        text = tty.getvalue()
        assert "einc tune [" in text and "contraction 0: gett" in text and "2/2" in text
        assert text.endswith("\r\x1b[2K")
        out = capsys.readouterr().out
        assert "\r" not in out and out.count("winner:") == 1
    finally:
        tuned.reset()
