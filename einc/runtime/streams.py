"""Which CUDA stream a call runs on, and ordering it after the operands' producers.

A GPU call runs on one stream, the *consumer*: the ``stream=`` the caller passed (an int
handle, a ``torch.cuda.Stream``, a ``cupy.cuda.Stream``, anything with ``__cuda_stream__``
or ``cuda_stream``/``ptr``), else the current stream of the operands' library (torch's,
CuPy's), else the stream an operand's CUDA Array Interface names, else the legacy default.

Before any kernel reads an operand (or writes ``out=``), the consumer waits for the work
that produced it, without blocking the host: an event recorded on the producer's stream,
waited on by the consumer (``cuEventRecord`` + ``cuStreamWaitEvent``). The producers are:

- CUDA Array Interface v3: the ``stream`` field (None means "no ordering needed");
- torch tensors: torch's current stream on their device (where torch ordered the work);
- DLPack: the consumer's stream is handed to ``__dlpack__(stream=...)`` and the producer
  orders itself (the protocol's rule; CAI and DLPack use 1 for the legacy default stream).

Nothing is waited for when producer and consumer are the same stream, so the common case
(everything on torch's or CuPy's current stream) costs nothing. The result is ready on the
consumer stream; work on other streams must wait for it (as after any torch side-stream op).
"""
from __future__ import annotations

import threading

from ..errors import EincTypeError

LEGACY, PER_THREAD = 1, 2  # CAI / DLPack spellings (the driver accepts both as CUstream values)


def handle_of(stream) -> int:
    """The raw CUstream value of a caller's ``stream=`` argument.

    >>> handle_of(0), handle_of(7)
    (0, 7)
    >>> class S:
    ...     def __cuda_stream__(self): return (0, 42)
    >>> handle_of(S())
    42
    """
    if isinstance(stream, bool):
        raise EincTypeError("stream= must be a CUDA stream or its integer handle, not a bool")
    if isinstance(stream, int):
        if stream < 0:
            raise EincTypeError(f"stream= {stream} is not a CUDA stream handle (handles are >= 0)")
        return stream
    proto = getattr(stream, "__cuda_stream__", None)  # cuda.core and the CUDA stream protocol
    if proto is not None:
        got = proto() if callable(proto) else proto
        return int(got[1])
    for attr in ("cuda_stream", "ptr", "handle"):  # torch, CuPy, Numba/others
        h = getattr(stream, attr, None)
        if isinstance(h, int) and not isinstance(h, bool):
            return h
    raise EincTypeError(f"stream= must be a CUDA stream (torch.cuda.Stream, cupy.cuda.Stream, an object with "
                        f"__cuda_stream__) or its integer handle, not {type(stream).__name__}")


def same(a: int, b: int) -> bool:
    """Whether two handles name one stream (0 and 1 are both the legacy default stream)."""
    return a == b or {a, b} == {0, LEGACY}


def dlpack_stream(consumer: int) -> int:
    """The ``stream=`` value DLPack's ``__dlpack__`` expects for the consumer stream."""
    return LEGACY if consumer == 0 else consumer


class Orderer:
    """Makes a consumer stream wait for producer streams (one reusable event per thread).

    An event may be recorded again right after ``cuStreamWaitEvent``: the wait captures the
    event's state at the time of the call.
    """

    def __init__(self, rt):
        self.rt = rt
        self._local = threading.local()

    def _event(self):
        ev = getattr(self._local, "event", None)
        if ev is None:
            from .cuda import check
            cu = self.rt.cu
            ev = check(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate")
            self._local.event = ev
        return ev

    def wait(self, consumer: int, producers) -> int:
        """Order ``consumer`` after every producer stream that is not itself; how many waited."""
        from .cuda import check
        cu, done, n = self.rt.cu, [], 0
        for p in producers:
            if p is None or same(p, consumer) or any(same(p, d) for d in done):
                continue
            ev = self._event()
            check(cu.cuEventRecord(ev, self.rt.stream(p)), f"cuEventRecord on the producer stream {p:#x}")
            check(cu.cuStreamWaitEvent(self.rt.stream(consumer), ev, 0),
                  f"cuStreamWaitEvent (stream {consumer:#x} after {p:#x})")
            done.append(p)
            n += 1
        return n


def producers(views, torch_current) -> list:
    """The stream each device view's data was produced on (None: nothing to wait for)."""
    out = []
    for v in views:
        if v.library == "torch":
            out.append(torch_current(v))
        else:
            out.append(v.stream)  # CAI v3's field; CuPy fills it with its current stream
    return out
