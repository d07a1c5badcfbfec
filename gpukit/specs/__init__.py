"""The GPU catalogue: load and validate ``data/gpus.csv``, look GPUs up by natural names.

Units live in the column names. Memory capacity (``memory_gb``) is binary as datasheets
mean it (a "16 GB" card holds 16 GiB, see :func:`memory_bytes`); bandwidth (GB/s) and
FLOP rates (TFLOPS, TOPS) are decimal. Tensor-core figures are **dense** (never the 2:4
sparse headline) and, for FP16/BF16, with **FP32 accumulate**. A mode the architecture
lacks is empty (``NaN`` in the frame), never zero.
"""

from __future__ import annotations

from ..units import GIB
from .catalogue import (
    BANDWIDTH_TOLERANCE,
    CATALOGUE_PATH,
    COLUMNS,
    FP32_TOLERANCE,
    NUMERIC_COLUMNS,
    SCHEMA,
    gpu_memory_bytes,
    load_catalogue,
    memory_bytes,
    shared_memory,
    states_no_tensor_peak,
    validate_catalogue,
)
from .names import GPU, Resolution, gpu, gpus, load_measurements, lookup, resolve, resolve_rows, row, select
from .views import (
    DERIVED,
    FP32_LANES_PER_SM,
    ISSUE_PER_SM_CLOCK,
    SEGMENTS,
    SUMMARY_COLUMNS,
    by_segment,
    issue_tflops,
    rankable_metrics,
    ranking,
    records,
    sm_count,
    summary_columns,
    with_derived,
)

__all__ = [
    "BANDWIDTH_TOLERANCE",
    "CATALOGUE_PATH",
    "COLUMNS",
    "DERIVED",
    "FP32_LANES_PER_SM",
    "FP32_TOLERANCE",
    "GIB",
    "GPU",
    "ISSUE_PER_SM_CLOCK",
    "NUMERIC_COLUMNS",
    "SCHEMA",
    "SEGMENTS",
    "SUMMARY_COLUMNS",
    "Resolution",
    "by_segment",
    "gpu",
    "gpus",
    "issue_tflops",
    "load_catalogue",
    "lookup",
    "gpu_memory_bytes",
    "shared_memory",
    "states_no_tensor_peak",
    "memory_bytes",
    "rankable_metrics",
    "ranking",
    "records",
    "resolve",
    "load_measurements",
    "resolve_rows",
    "row",
    "select",
    "sm_count",
    "summary_columns",
    "validate_catalogue",
    "with_derived",
]
