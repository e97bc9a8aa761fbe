"""How `einc bench` times einc beside its anchors on the CPU: one worker process per side,
quiesced, warm, interleaved blocks.

Why. The anchors (numpy.einsum(optimize=True), opt_einsum.contract) call OpenBLAS, whose
worker threads busy-wait after every call (2**28 TSC cycles by default, ~0.1 s here)
before they sleep. Timed in the same process right after an anchor, einc shared the cores
with them: on a 2-core host its second thread got no core, and einc's samples read up to
2x its time alone. A process's history also stays in it (malloc's thresholds and trimmed
heap, so whether a fresh result faults its pages in; OpenBLAS's buffers).

The protocol. Each side (einc, every anchor, numpy's copy) runs in its own long-lived
worker process (``python -m einc.bench_protocol SIDE``), so no side's library state or
threads are in another's process; a worker makes its operands from the case's seed, so
all sides see the same values. The parent sends one case at a time and asks the workers
for blocks of samples in turn, for several rounds, the first side rotating each round (a
shared host's drift then reaches every side alike). Before every block it waits until
no worker's threads and none of its own others are running (``quiesce``: their CPU time
in ``/proc/<pid>/task/*/schedstat`` stops growing, i.e. OpenBLAS's spin is over). A block
runs >= 0.15 s of untimed warm-up calls first (caches, einc's pool and OpenBLAS's workers
awake; on this VM a 2-thread step that follows 0.3 s of idling runs at 1-thread speed
until ~50 ms of continuous calls have passed: ccsd_t 0.62 -> 0.40 ms median), then
the timed samples. Min and median over all samples are kept. The CPU time other
processes took during each block (``Foreign``: /proc/stat's busy time minus ours) is
recorded; a block that shared the host with more than 0.3 cores of it runs again after
a pause (up to 4 tries, 4 pauses per case) and the quietest attempt counts; cases still
above it are flagged. No side's threads are
reconfigured: OpenBLAS keeps its threads and its spinning within its own blocks, as it
runs for users who call it back to back.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

SIDES = ("einc", "numpy_noopt", "numpy_opt", "opt_einsum", "numpy", "copy")


def _threads_ns(pids, with_caller=False):
    """{(pid, tid): nanoseconds on CPU} of the threads of ``pids`` (the caller's own thread
    left out unless ``with_caller``), or None where the kernel does not say (no /proc)."""
    me = None if with_caller else (os.getpid(), threading.get_native_id())
    ns = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            if pid == os.getpid():
                return None
            continue  # a worker that has exited
        for tid in tids:
            if me is not None and (pid, int(tid)) == me:
                continue
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    ns[(pid, tid)] = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue  # a thread that just ended
    return ns


def quiesce(pids=(), timeout=1.0, window=0.005, busy=0.1) -> float:
    """Wait until the threads of this process (but the caller's) and of ``pids`` use under
    ``busy`` of a core over ``window`` seconds, at most ``timeout``; returns seconds waited."""
    pids = (os.getpid(), *pids)
    t0 = last = time.perf_counter()
    prev = _threads_ns(pids)
    if prev is None:
        time.sleep(0.2)  # longer than OpenBLAS's default spin
        return time.perf_counter() - t0
    while True:
        time.sleep(window)
        now, cur = time.perf_counter(), _threads_ns(pids) or {}
        ran = sum(v - prev.get(t, v) for t, v in cur.items())
        if ran < busy * (now - last) * 1e9 or now - t0 > timeout:
            return now - t0
        prev, last = cur, now


def _busy_ns():
    """Nanoseconds all CPUs spent busy (or stolen by the hypervisor) since boot, or None."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = v
    return (user + nice + system + irq + softirq + steal) * 1e9 / os.sysconf("SC_CLK_TCK")


class Foreign:
    """CPU time other processes (and the hypervisor's steal) took while we measured:
    ``stop()`` -> cores' worth of foreign load since ``start()`` (None without /proc).
    /proc/stat counts in ticks (10 ms), so short blocks read coarsely."""

    def __init__(self, pids):
        self.pids = (os.getpid(), *pids)

    def start(self):
        self.t, self.busy = time.perf_counter(), _busy_ns()
        self.ours = sum((_threads_ns(self.pids, True) or {}).values())

    def stop(self, window=0.1):
        """(Waits until ``window`` s have passed since start(): /proc/stat ticks are 10 ms.)"""
        rest = window - (time.perf_counter() - self.t)
        if rest > 0:
            time.sleep(rest)
        busy, wall = _busy_ns(), time.perf_counter() - self.t
        if busy is None or self.busy is None or wall <= 0:
            return None
        ours = sum((_threads_ns(self.pids, True) or {}).values())
        return max(0.0, (busy - self.busy) - (ours - self.ours)) / 1e9 / wall


def load_average():
    """The 1-minute load average (None where the OS does not say)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


# ------------------------------------------------------------------ the worker process
def operands(shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def side_call(side, case):
    """The function a worker times for ``case`` (dict: subs, shapes, dtype, seed, out)."""
    if side == "copy":  # numpy's copy of case["bytes"] into an existing array
        src = np.random.default_rng(case["seed"]).standard_normal(case["bytes"] // 8)
        dst = np.empty_like(src)
        np.copyto(dst, src)  # the destination's pages faulted in before timing
        return lambda: np.copyto(dst, src)
    subs, ops = case["subs"], operands(case["shapes"], case["dtype"], case["seed"])
    out = None
    if case.get("out"):  # a preallocated result, its pages faulted in
        out = np.einsum(subs, *ops)
        out.fill(0)
    if side == "einc":
        import einc
        return (lambda: einc.einsum(subs, *ops, out=out)) if out is not None else (lambda: einc.einsum(subs, *ops))
    if side == "opt_einsum":
        import opt_einsum as oe
        return lambda: oe.contract(subs, *ops)
    opt = {"numpy_noopt": False, "numpy_opt": True, "numpy": "default"}[side]
    if out is not None:
        return lambda: np.einsum(subs, *ops, out=out)
    return (lambda: np.einsum(subs, *ops)) if opt == "default" else (lambda: np.einsum(subs, *ops, optimize=opt))


def block(f, state, repeat, warm, sample, budget):
    """Untimed calls for >= ``warm`` s (at least two), then ``repeat`` samples of per-call
    seconds: one call each, or as many as fill ``sample`` s for calls of microseconds.
    ``budget`` s per block shortens a slow side's block: no warm-up when two calls would
    not fit, fewer samples (at least one)."""
    single = state["single"]
    if 2 * single <= budget:
        t0, calls = time.perf_counter(), 0
        while calls < 2 or time.perf_counter() - t0 < warm:
            f()
            calls += 1
    n = state.setdefault("number", max(1, int(sample / max(single, 1e-7))))
    out = []
    for _ in range(max(1, min(repeat, int(budget / max(single * n, 1e-9))))):
        t = time.perf_counter()
        for _ in range(n):
            f()
        out.append((time.perf_counter() - t) / n)
    state["single"] = min(single, min(out))
    return out


def worker_main(side):
    """Serve one side: JSON lines in on stdin ("case", "block", "quit"), one reply line each."""
    f, state = None, {}
    for line in sys.stdin:
        msg = json.loads(line)
        try:
            if msg["op"] == "case":
                f = side_call(side, msg["case"])
                f()  # compiles einc's kernels; the first call of anything
                t = time.perf_counter()
                f()
                state = {"single": time.perf_counter() - t}
                reply = {"single": state["single"]}
            elif msg["op"] == "block":
                reply = {"samples": block(f, state, msg["repeat"], msg["warm"], msg["sample"], msg["budget"])}
            else:
                return
        except Exception as e:  # reported to the parent, which raises it
            reply = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


# ------------------------------------------------------------------ the parent
class Worker:
    """One side's worker process."""

    def __init__(self, side):
        env = dict(os.environ, EINC_PROGRESS="0")
        root = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = root + os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else root
        self.side, self.err = side, tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "einc.bench_protocol", side], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     text=True, bufsize=1)

    def ask(self, **msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.err.seek(0)
            raise RuntimeError(f"bench worker {self.side!r} died:\n{self.err.read().decode(errors='replace')}")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"bench worker {self.side!r}: {reply['error']}")
        return reply

    def close(self):
        try:
            self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
        self.err.close()


class Bench:
    """Workers for ``sides``; ``time(case)`` -> {side: {"median", "min", "samples", "foreign"}}
    (seconds; ``foreign``: other processes' mean load in cores during the side's blocks).

    ``rounds`` blocks per side of ``repeat`` samples; ``budget`` seconds per block (a slow
    side gets fewer samples, at least one). A block during which other processes used more
    than FOREIGN_RETRY cores runs again after a pause (ATTEMPTS in all); the quietest attempt
    counts, and ``foreign`` says how quiet it was.
    """

    FOREIGN_RETRY = 0.3  # cores of other processes' load during a block that make it run again
    ATTEMPTS = 4  # tries per block at most (0.5 s apart); the quietest one counts
    RETRY_PAUSES = 4  # pauses per case at most: a host busy for good costs a case 2 s, not minutes

    def __init__(self, sides, repeat=5, rounds=3, warm=0.15, sample=1e-3, budget=2.0):
        self.sides, self.repeat, self.rounds = list(sides), repeat, rounds
        self.opts = {"warm": warm, "sample": sample, "budget": budget}
        self.workers = {s: Worker(s) for s in self.sides}
        self.waited = 0.0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for w in self.workers.values():
            w.close()

    def time(self, case: dict, sides=None) -> dict:
        sides = [s for s in self.sides if sides is None or s in sides]
        single = {s: self.workers[s].ask(op="case", case=case)["single"] for s in sides}
        pids = [w.proc.pid for w in self.workers.values()]
        watch = Foreign(pids)
        samples, foreign = {s: [] for s in sides}, {s: [] for s in sides}
        pauses = self.RETRY_PAUSES
        for r in range(self.rounds):
            for s in sides[r % len(sides):] + sides[:r % len(sides)]:
                if r and single[s] > self.opts["budget"]:
                    continue  # one block of a side slower than the budget is enough
                tries = []
                for attempt in range(self.ATTEMPTS):
                    if attempt:
                        if not pauses:
                            break
                        pauses -= 1
                        time.sleep(0.5)
                    self.waited += quiesce(pids)
                    watch.start()
                    got = self.workers[s].ask(op="block", repeat=self.repeat, **self.opts)["samples"]
                    tries.append((watch.stop() or 0.0, got))
                    if tries[-1][0] <= self.FOREIGN_RETRY:
                        break
                load, got = min(tries, key=lambda x: x[0])
                samples[s] += got
                foreign[s].append(load)
        return {s: {"median": statistics.median(v), "min": min(v), "samples": len(v),
                    "foreign": round(statistics.mean(foreign[s]), 3)} for s, v in samples.items()}


if __name__ == "__main__":
    worker_main(sys.argv[1])
