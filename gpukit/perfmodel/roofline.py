"""The roofline: per op, the longer of compute time and memory time, plus a launch cost per kernel.

On a GPU each op of a :class:`~gpukit.perfmodel.profiles.Profile` takes the longer of

* its compute time: FLOPs ÷ (the peak of the unit and precision it runs at × the ``tensor``,
  ``cuda`` or ``elementwise`` efficiency), and
* its memory time: bytes ÷ (memory bandwidth × the ``memory`` efficiency, or ``stream`` for a
  plain streaming kernel),

plus ``launch_s`` per kernel and, for a model's step, ``host_op_s`` per layer operation; the step
time is the sum over ops. Which unit runs an op is
:func:`gpukit.precision.math_unit`'s rule. An op is compute-bound where the first is longer;
the workload is compute-bound when its compute-bound ops take most of the step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .. import precision as prec
from ..errors import ParameterError
from ..specs import ISSUE_PER_SM_CLOCK, issue_tflops
from ..specs.bandwidth_rates import bandwidth_share, shipped_typical_share
from ..specs.matmul_rates import tensor_share
from ..units import MIB
from .profiles import Profile


@dataclass(frozen=True)
class Efficiency:
    """How close real kernels come to the datasheet, and the fixed cost per kernel.

    * ``tensor``: fraction of the tensor cores' sustained rate (the datasheet peak times the share
      a large matrix multiply measured on that GPU reaches, :mod:`gpukit.specs.matmul_rates`) that a
      model's matmuls and convolutions reach;
    * ``cuda``: fraction of the FP32 CUDA-core peak reached by matmuls and convolutions without
      tensor cores (FP32 on Volta and Turing, or with TF32 off);
    * ``elementwise``: fraction of the SMs' instruction issue rate (:func:`gpukit.specs.issue_tflops`,
      in the units of the FP32 peak) at which normalisation, activation and pooling layers get
      through their nominal arithmetic (:data:`gpukit.perfmodel.profiles.ELEMENTWISE_FLOPS`); small,
      because indexing, type conversion and reductions cost far more instructions than the
      maths they serve. The issue rate, not the FP32 peak: those instructions are mostly not FP32
      ones, so the second FP32 datapath of GA10x, Ada and Hopper SMs, which doubled their FP32
      peak, does not speed them up (``docs/accuracy/perfmodel.md`` shows the fit both ways);
    * ``memory``: fraction of the GPU's streaming bandwidth (the datasheet bandwidth times the
      share a published streaming kernel measured on that GPU reaches, :mod:`gpukit.specs.bandwidth_rates`)
      at which the model's minimal traffic (every operand read once, every result written once)
      moves; real kernels move more bytes than that minimum, so this is well under 1;
    * ``stream``: fraction of the streaming bandwidth a plain streaming kernel (the ``bandwidth``
      workload, a fused optimizer update) reaches;
    * ``launch_s``: launch per kernel;
    * ``host_op_s``: host time per layer operation of a model's step (a layer's forward, its
      backward, its update: the framework's dispatch and bookkeeping that the device waits for),
      which single-kernel workloads do not pay. Read off the published measurements by the fit's
      log error (:func:`gpukit.perfmodel.scan_error`; ``docs/accuracy/perfmodel.md`` scans it);
      on a fast GPU it is a large share of the step;
    * ``sm_bytes_per_cycle``: bytes one SM moves per clock cycle through an elementwise kernel's
      loads and stores (normalisation, activation, pooling, residual adds: the ops that are not
      matrix multiplies). Such a kernel's memory time is its DRAM time plus its bytes over
      SMs x boost clock x this: the two limits do not overlap fully, so their times add, as rates
      in series do, rather than the slower alone setting the pace. It lets a GPU with many fast
      SMs against its bandwidth (the RTX 4090) through these kernels faster than its bandwidth
      alone says, and one with a wide memory against few SMs (the HBM cards) slower. Scanned
      against the published measurements like ``host_op_s`` (``docs/accuracy/perfmodel.md``);
      0 leaves the term out;
    * ``l2_share``: the share of a GPU's L2 cache (``l2_cache_mib`` in the catalogue) a tensor may
      take and still be read from it by the kernel after the one that wrote it: an elementwise
      kernel's read of what the kernel before it has just written (a layer's input in the forward
      pass, its output gradient in the backward) then moves no DRAM bytes (its bytes still pass
      through the SMs' loads and stores). Writes still reach DRAM, as the cache writes back what it
      evicts. 1 by default: a tensor no larger than the L2 is read from it, a physical bound rather
      than a fitted figure; ``docs/accuracy/perfmodel.md`` scans smaller shares against the published
      measurements. 0 leaves the term out, as does a GPU the catalogue gives no L2 size;
    * ``sustained``: the tensor cores at the share of their datasheet peak the GPU sustains
      (:func:`gpukit.specs.matmul_rates.tensor_share`; False: at the datasheet peak, to show what the
      measured rates change);
    * ``measured_bandwidth``: memory at the share of its datasheet bandwidth the GPU's published
      streaming runs reached (:func:`gpukit.specs.bandwidth_rates.bandwidth_share`; False: every GPU at
      the median share of those measured, to show what the per-GPU measurements change);
    * ``scale``: throughput multiplier for the software stack as a whole (1 by default; set by
      :func:`gpukit.perfmodel.calibrate` from a model measured on the attached GPU). It moves every GPU alike,
      so it changes absolute throughputs and never a speedup.

    The defaults are fitted to the published measurements of ``data/reference_benchmarks.csv``
    (:func:`gpukit.perfmodel.fit_efficiency`; a refit replaces them only where it lowers the fit's
    error by more than :data:`gpukit.perfmodel.REFIT_MARGIN` and calls no more winners wrong,
    :func:`gpukit.perfmodel.refit_verdict`; ``benchmarks/perfmodel_accuracy.py``
    refits them and checks the fit by leaving each GPU out, in ``docs/accuracy/perfmodel.md``).
    ``source`` says where a set of factors came from.
    """

    tensor: float = 0.8
    cuda: float = 0.7
    elementwise: float = 0.02
    memory: float = 0.4
    stream: float = 1.0
    launch_s: float = 5e-6
    host_op_s: float = 100e-6
    sm_bytes_per_cycle: float = 32.0
    l2_share: float = 1.0
    scale: float = 1.0
    sustained: bool = True
    measured_bandwidth: bool = True
    source: str = "defaults"

    def __post_init__(self):
        for name in ("tensor", "cuda", "elementwise", "memory", "stream"):
            v = getattr(self, name)
            if not (0 < v <= 1):
                raise ParameterError(f"efficiency {name}={v!r} must be in (0, 1]")
        for name in ("launch_s", "host_op_s", "sm_bytes_per_cycle", "l2_share"):
            if getattr(self, name) < 0:
                raise ParameterError(f"{name}={getattr(self, name)!r} must not be negative")
        if self.l2_share > 1:
            raise ParameterError(
                f"l2_share={self.l2_share!r} must be at most 1: a tensor cannot take more than the "
                "whole L2 cache"
            )
        if not self.scale > 0:
            raise ParameterError(f"scale={self.scale!r} must be positive")


DEFAULT_EFFICIENCY = Efficiency()


@dataclass(frozen=True)
class Prediction:
    gpu: str
    workload: str
    precision: str
    batch_size: int
    mode: str
    step_time_s: float
    throughput: float
    throughput_unit: str
    bound: str  # compute | memory
    compute_bound_share: float  # share of the step spent in compute-bound ops
    compute_s: float
    memory_s: float
    launch_s: float
    math: str
    flops: float
    bytes: float
    efficiency_source: str

    @property
    def achieved_tflops(self) -> float:
        return self.flops / self.step_time_s / 1e12


@dataclass(frozen=True)
class Placed:
    """A profile placed on one GPU: per-op arrays the roofline works on (one implementation for
    :func:`predict` and for grading, which re-predicts many times while fitting)."""

    gpu: str
    flops: np.ndarray
    bytes: np.ndarray
    peak_flops: np.ndarray  # FLOP/s of the unit each op runs on
    unit: np.ndarray  # 0 tensor-core matmul, 1 CUDA-core matmul, 2 everything else
    stream: np.ndarray  # a plain streaming kernel (the bandwidth workload, a fused optimizer update)
    kernels: int
    bandwidth: float  # bytes/s
    items: float
    maths: tuple[str, ...]  # the maths the matmuls run at
    host_ops: int = 0  # layer operations dispatched from the host per step
    tensor_share: float = (
        1.0  # share of the datasheet tensor peak the GPU sustains (gpukit.specs.matmul_rates)
    )
    sm_cycles_per_s: float = 0.0  # SMs x boost clock: what elementwise kernels' loads and stores pass through
    bandwidth_share: float = (
        1.0  # share of the datasheet bandwidth a streaming kernel reaches (gpukit.specs.bandwidth_rates)
    )
    reread: np.ndarray | None = None  # bytes each op reads of what the kernel before it has just written
    l2_bytes: float = 0.0  # the GPU's L2 cache (0: not in the catalogue)


def place(prof: Profile, gpu: pd.Series | dict) -> Placed:
    """``prof`` on catalogue GPU ``gpu``: which unit runs each op at what peak
    (:func:`gpukit.precision.math_unit`, at datasheet peaks) and the share of its tensor peak the
    GPU sustains (:func:`gpukit.specs.matmul_rates.tensor_share`); raises :class:`gpukit.precision.Unsupported`."""
    ops = prof.arrays  # the profile's per-op arrays, made once; shared, never written
    matmul = ops["matmul"]
    unit_of = {m: prec.math_unit(gpu, prof.precision, m) for m in set(matmul.tolist())}
    issue = issue_tflops(gpu)  # what everything but the matrix multiplies gets through (not the FP32 lanes)

    def code(m: bool) -> int:
        return 0 if "tensor" in unit_of[m][0] else (1 if m else 2)

    return Placed(
        str(gpu["gpu"]),
        ops["flops"],
        ops["bytes"],
        np.where(matmul, unit_of[True][1] if True in unit_of else 0.0, issue) * 1e12,
        np.where(matmul, code(True) if True in unit_of else 1, code(False) if False in unit_of else 2),
        ops["stream"],
        prof.kernels,
        float(gpu["memory_bandwidth_gbs"]) * 1e9,
        prof.items_per_step,
        (unit_of[True][0],) if True in unit_of else (),
        prof.host_ops,
        tensor_share(gpu)[0],
        issue * 1e12 / ISSUE_PER_SM_CLOCK,
        bandwidth_share(gpu)[0],
        ops["reread"],
        l2_cache_bytes(gpu),
    )


def l2_cache_bytes(gpu: pd.Series | dict) -> float:
    """A catalogue GPU's L2 cache in bytes, 0 where the catalogue has no size for it."""
    mib = gpu.get("l2_cache_mib")
    return float(mib) * MIB if mib is not None and not pd.isna(mib) else 0.0


def op_times(placed: Placed | PlacedSet, eff: Efficiency) -> tuple[np.ndarray, np.ndarray]:
    """Per-op compute time (FLOPs ÷ the unit's peak × its efficiency) and memory time (DRAM bytes ÷
    bandwidth × the memory or stream efficiency, less what the L2 holds of the kernel before's
    output, ``l2_share``; and for an elementwise kernel, its bytes through the SMs' loads and
    stores: ÷ SMs × clock × ``sm_bytes_per_cycle``), in seconds. The GPU's figures may be one
    number (a :class:`Placed`) or one per op (a :class:`PlacedSet`: many cases at once)."""
    tensor = eff.tensor * (placed.tensor_share if eff.sustained else 1.0)
    factor = np.where(placed.unit == 0, tensor, np.where(placed.unit == 1, eff.cuda, eff.elementwise))
    with np.errstate(divide="ignore", invalid="ignore"):
        compute = np.where(placed.flops > 0, placed.flops / (placed.peak_flops * factor), 0.0)
    bandwidth = placed.bandwidth * (
        placed.bandwidth_share if eff.measured_bandwidth else shipped_typical_share()
    )
    dram = placed.bytes
    if eff.l2_share and placed.reread is not None:  # no L2 in the catalogue (0 bytes) holds nothing
        held = (placed.reread > 0) & (placed.reread <= eff.l2_share * placed.l2_bytes)
        dram = dram - np.where(held, placed.reread, 0.0)
    memory = dram / (bandwidth * np.where(placed.stream, eff.stream, eff.memory))
    if eff.sm_bytes_per_cycle:
        elementwise = (placed.unit == 2) & ~placed.stream & (placed.sm_cycles_per_s > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            through_sms = placed.bytes / (placed.sm_cycles_per_s * eff.sm_bytes_per_cycle)
        memory = memory + np.where(elementwise, through_sms, 0.0)
    return compute, memory


def step_time(placed: Placed, eff: Efficiency) -> float:
    """Seconds per step: each op takes the longer of its compute and memory time, plus a launch
    cost per kernel and the host's time per layer operation, all divided by the stack's ``scale``."""
    compute, memory = op_times(placed, eff)
    return float((np.maximum(compute, memory).sum() + _fixed_s(placed, eff)) / eff.scale)


@dataclass(frozen=True)
class PlacedSet:
    """Many placed cases as one: their ops end to end, each GPU figure repeated for each of its ops,
    so that grading a fit's every candidate (thousands of step times) is a few array operations per
    candidate instead of a few per case. ``cases`` are the positions of the cases that could be
    placed; ``case_of_op`` which of them (0, 1, ...) each op belongs to."""

    size: int
    cases: np.ndarray
    case_of_op: np.ndarray
    flops: np.ndarray
    bytes: np.ndarray
    peak_flops: np.ndarray
    unit: np.ndarray
    stream: np.ndarray
    reread: np.ndarray
    bandwidth: np.ndarray
    tensor_share: np.ndarray
    bandwidth_share: np.ndarray
    sm_cycles_per_s: np.ndarray
    l2_bytes: np.ndarray
    kernels: np.ndarray
    host_ops: np.ndarray
    items: np.ndarray

    @classmethod
    def of(cls, placed: Sequence[Placed | None] | PlacedSet) -> PlacedSet:
        """The cases of ``placed`` (None: one that cannot run, predicted as NaN) as one set."""
        if isinstance(placed, PlacedSet):
            return placed
        kept = [(i, p) for i, p in enumerate(placed) if p is not None]
        lengths = np.array([len(p.flops) for _, p in kept], int)

        def per_op(field: str) -> np.ndarray:
            return np.repeat(np.array([float(getattr(p, field)) for _, p in kept]), lengths)

        def joined(field: str, dtype=float) -> np.ndarray:
            arrays = [
                np.zeros(len(p.flops)) if getattr(p, field) is None else getattr(p, field) for _, p in kept
            ]
            return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype)

        def per_case(field: str) -> np.ndarray:
            return np.array([float(getattr(p, field)) for _, p in kept])

        return cls(
            size=len(placed),
            cases=np.array([i for i, _ in kept], int),
            case_of_op=np.repeat(np.arange(len(kept)), lengths),
            flops=joined("flops"),
            bytes=joined("bytes"),
            peak_flops=joined("peak_flops"),
            unit=joined("unit", int),
            stream=joined("stream", bool),
            reread=joined("reread"),
            bandwidth=per_op("bandwidth"),
            tensor_share=per_op("tensor_share"),
            bandwidth_share=per_op("bandwidth_share"),
            sm_cycles_per_s=per_op("sm_cycles_per_s"),
            l2_bytes=per_op("l2_bytes"),
            kernels=per_case("kernels"),
            host_ops=per_case("host_ops"),
            items=per_case("items"),
        )

    def only(self, ops: np.ndarray) -> PlacedSet:
        """The same cases with only the ops ``ops`` selects (a boolean mask over all their ops)."""
        per_op = {
            f: getattr(self, f)[ops]
            for f in ("case_of_op", "flops", "bytes", "peak_flops", "unit", "stream", "reread", "bandwidth")
            + ("tensor_share", "bandwidth_share", "sm_cycles_per_s", "l2_bytes")
        }
        return replace(self, **per_op)

    def op_sums(self, eff: Efficiency) -> np.ndarray:
        """Per case, the sum over its ops of the longer of compute and memory time (no fixed costs)."""
        compute, memory = op_times(self, eff)
        return np.bincount(self.case_of_op, weights=np.maximum(compute, memory), minlength=len(self.cases))

    def fixed_s(self, eff: Efficiency) -> np.ndarray:
        """Per case, the time no roofline sees: kernel launches and the host's per-op work."""
        return _fixed_s(self, eff)

    def spread(self, steps: np.ndarray) -> np.ndarray:
        """Items per second from each placed case's step time, NaN for the cases not placed."""
        out = np.full(self.size, np.nan)
        out[self.cases] = self.items / steps
        return out


def throughputs(cases: PlacedSet, eff: Efficiency) -> np.ndarray:
    """Items per second of each case of ``cases`` (NaN for one that cannot run): ``items ÷``
    :func:`step_time`, for all of them at once."""
    return cases.spread((cases.op_sums(eff) + cases.fixed_s(eff)) / eff.scale)


def _fixed_s(placed: Placed, eff: Efficiency) -> float:
    """Time a step spends that no roofline sees: kernel launches and the host's per-op work."""
    return placed.kernels * eff.launch_s + placed.host_ops * eff.host_op_s


def predict(prof: Profile, gpu: pd.Series | dict, efficiency: Efficiency = DEFAULT_EFFICIENCY) -> Prediction:
    """Predicted step time of ``prof`` on one catalogue GPU (raises :class:`gpukit.precision.Unsupported`)."""
    placed = place(prof, gpu)
    compute, memory = op_times(placed, efficiency)
    bound_by_compute = compute >= memory
    compute_bound = float(compute[bound_by_compute].sum())
    memory_bound = float(memory[~bound_by_compute].sum())
    launch = _fixed_s(placed, efficiency)
    step = step_time(placed, efficiency)
    share = compute_bound / (compute_bound + memory_bound) if compute_bound + memory_bound else 0.0
    if prof.throughput_unit == "GB/s":
        throughput = prof.bytes / step / 1e9
    elif prof.throughput_unit == "TFLOP/s":
        throughput = prof.flops / step / 1e12
    else:
        throughput = prof.items_per_step / step
    return Prediction(
        placed.gpu,
        prof.workload,
        prof.precision,
        prof.batch,
        prof.mode,
        step,
        throughput,
        prof.throughput_unit,
        "compute" if share >= 0.5 else "memory",
        share,
        float(compute.sum()),
        float(memory.sum()),
        launch,
        ", ".join(placed.maths) or prec.MATH_LABEL["FP32"],
        prof.flops,
        prof.bytes,
        efficiency.source,
    )
