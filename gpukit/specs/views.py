"""Views derived from the catalogue: per-watt and per-byte ratios, rankings by any metric, rows as
plain records, and what the SMs of a GPU are and issue."""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence

import pandas as pd

from ..errors import ParameterError
from .catalogue import COLUMNS, NUMERIC_COLUMNS

#: Derived metrics: name -> (numerator column, denominator column, description).
DERIVED: dict[str, tuple[str, str, str]] = {
    "fp32_tflops_per_w": ("fp32_tflops", "tdp_w", "FP32 TFLOPS per watt of TDP"),
    "fp16_tensor_tflops_per_w": ("fp16_tensor_tflops", "tdp_w", "dense FP16 tensor TFLOPS per watt of TDP"),
    "memory_bandwidth_gbs_per_w": ("memory_bandwidth_gbs", "tdp_w", "memory bandwidth GB/s per watt of TDP"),
    "fp16_tensor_flop_per_byte": (
        "fp16_tensor_tflops",
        "memory_bandwidth_gbs",
        "FLOP per byte of memory traffic at which dense FP16 turns compute-bound",
    ),
}
_DERIVED_SCALE = {"fp16_tensor_flop_per_byte": 1e12 / 1e9}


def with_derived(catalogue: pd.DataFrame) -> pd.DataFrame:
    """The catalogue plus the :data:`DERIVED` ratio columns (NaN where an input is empty)."""
    out = catalogue.copy()
    for name, (num, den, _) in DERIVED.items():
        out[name] = out[num] / out[den] * _DERIVED_SCALE.get(name, 1.0)
    return out


def rankable_metrics() -> tuple[str, ...]:
    """Every metric :func:`ranking` accepts."""
    return NUMERIC_COLUMNS + tuple(DERIVED)


def _check_metric(name: str, verb: str) -> None:
    """Refuse a metric :func:`ranking` and :func:`by_segment` cannot order by, naming the close ones."""
    if name not in rankable_metrics():
        close = difflib.get_close_matches(name, rankable_metrics(), n=3)
        hint = (
            f"did you mean {', '.join(close)}?" if close else f"choose one of {', '.join(rankable_metrics())}"
        )
        raise ParameterError(f"cannot {verb} by {name!r}; {hint}")


def ranking(catalogue: pd.DataFrame, by: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """GPUs sorted by ``by`` (largest first; GPUs lacking the metric last) with a ``rank`` column."""
    _check_metric(by, "rank")
    frame = with_derived(catalogue)
    cols = (
        list(columns)
        if columns
        else [
            "gpu",
            "architecture",
            "memory_gb",
            "memory_bandwidth_gbs",
            "fp32_tflops",
            "fp16_tensor_tflops",
            "tdp_w",
        ]
    )
    if by not in cols:
        cols.append(by)
    out = frame.sort_values(by, ascending=False, na_position="last", kind="stable")[cols]
    out.insert(0, "rank", range(1, len(out) + 1))
    return out.reset_index(drop=True)


#: The catalogue's segments in the order a reader meets them: the cards a person buys, the
#: workstation cards, the data-centre parts that are mostly rented.
SEGMENTS = ("consumer", "workstation", "datacenter")


def by_segment(
    catalogue: pd.DataFrame, segments: Sequence[str] | None = None, sort: str = "fp16_tensor_tflops"
) -> pd.DataFrame:
    """The catalogue's GPUs grouped by segment (:data:`SEGMENTS` order), only ``segments`` where
    given, each group sorted by ``sort`` (a numeric or derived column, largest first; GPUs lacking
    the figure last, then by name)."""
    chosen = tuple(segments) if segments else SEGMENTS
    unknown = [s for s in chosen if s not in SEGMENTS]
    if unknown:
        raise ParameterError(f"segment {unknown[0]!r}: use one of {', '.join(SEGMENTS)}")
    _check_metric(sort, "sort")
    frame = with_derived(catalogue)
    frame = frame[frame["segment"].isin(chosen)].assign(_segment=lambda f: f["segment"].map(SEGMENTS.index))
    frame = frame.sort_values(
        ["_segment", sort, "gpu"], ascending=[True, False, True], na_position="last", kind="stable"
    )
    return frame.drop(columns="_segment").reset_index(drop=True)


#: The figures a reader compares first, as the specs page and ``gpukit specs`` show them.
SUMMARY_COLUMNS = (
    "gpu",
    "architecture",
    "launch",
    "memory_gb",
    "memory_bandwidth_gbs",
    "fp32_tflops",
    "tf32_tensor_tflops",
    "fp16_tensor_tflops",
    "int8_tensor_tops",
    "tdp_w",
    "nvlink_gbs",
)


def summary_columns(sort: str) -> list[str]:
    """:data:`SUMMARY_COLUMNS`, and the figure sorted by where it is not one of them."""
    return list(SUMMARY_COLUMNS) + ([sort] if sort not in SUMMARY_COLUMNS else [])


def records(catalogue: pd.DataFrame) -> list[dict]:
    """Rows as plain dicts with ``None`` for empty cells (for JSON)."""
    out = []
    for rec in catalogue[list(COLUMNS)].to_dict(orient="records"):
        clean = {}
        for k, v in rec.items():
            if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
                clean[k] = None
            elif hasattr(v, "item"):
                clean[k] = v.item()
            else:
                clean[k] = v
        out.append(clean)
    return out


#: FP32 lanes per streaming multiprocessor by compute capability (CUDA C++ Programming Guide,
#: "Throughput of Native Arithmetic Instructions": 32-bit floating-point add and multiply results
#: per clock cycle per multiprocessor), to count a GPU's SMs from its CUDA cores.
#: FP32 lanes of a compute unit where a vendor has no CUDA compute capability: an AMD compute unit
#: has 64 stream processors (CDNA and RDNA), an Apple GPU core 128 ALUs.
FP32_LANES_PER_UNIT = {"AMD": 64, "Apple": 128}
FP32_LANES_PER_SM = {
    "6.0": 64,
    "6.1": 128,
    "7.0": 64,
    "7.5": 64,
    "8.0": 64,
    "8.6": 128,
    "8.7": 128,
    "8.9": 128,
    "9.0": 128,
    "10.0": 128,
    "10.3": 128,
    "12.0": 128,
    "12.1": 128,
}


#: Thread-instructions one SM issues per clock cycle: four processing blocks, each with a warp
#: scheduler dispatching one instruction for a warp of 32 threads per clock (the Volta, Turing,
#: GA100, GA10x, Ada and Hopper whitepapers' SM diagrams; the same four-block SM in Blackwell's).
ISSUE_PER_SM_CLOCK = 128


def issue_tflops(row) -> float:
    """The rate of a GPU's kernels that mix integer and floating-point instructions (indexing,
    conversions, reductions and the arithmetic they serve: normalisation, activation, pooling),
    in the units of the FP32 peak: SMs x :data:`ISSUE_PER_SM_CLOCK` x boost clock. It equals the
    FP32 peak where an SM has 64 FP32 lanes (one fused multiply-add, two FLOPs, per lane and
    clock) and is half of it where a second FP32 datapath doubled the lanes (GA10x, Ada, Hopper,
    Blackwell) but not the instructions an SM issues."""
    return sm_count(row) * ISSUE_PER_SM_CLOCK * float(row["boost_clock_mhz"]) * 1e6 / 1e12


def sm_count(row) -> int:
    """Streaming multiprocessors of a catalogue GPU: CUDA cores over FP32 lanes per SM."""
    cc = row.get("compute_capability")
    if cc is None or cc != cc or cc == "":
        lanes = FP32_LANES_PER_UNIT.get(row.get("vendor"))
        what = f"vendor {row.get('vendor')}"
    else:
        lanes = FP32_LANES_PER_SM.get(str(cc))
        what = f"compute capability {cc}"
    if not lanes:
        raise ParameterError(
            f"{row['gpu']}: {what} has no FP32 lane count in gpukit.specs.FP32_LANES_PER_SM; add it"
        )
    return int(round(float(row["cuda_cores"]) / lanes))
