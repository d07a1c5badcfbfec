"""Measured matrix-multiply rates: what a GPU sustains in a large FP16/BF16 matmul, against its datasheet.

A datasheet's dense tensor peak assumes every SM at the boost clock. Under a long matrix
multiply a GPU runs at the clock its board power limit and cooling allow, and the library reaches
what its kernels reach on that architecture: published measurements put an H100 PCIe (350 W) at
about 60 % of its datasheet FP16, an L40S (350 W for 142 SMs) at about 70 %, and a GeForce RTX
4090 (450 W, boosting above its rated clock) at all of it. ``data/matmul_rates.csv`` holds such
measurements, one row per published run with its source, harness and software; a GPU's rate is
the median of its runs (:func:`rates`), and its **share** is that rate over the datasheet's dense
FP16 tensor figure (FP32 accumulate, as the catalogue records it).

The performance model (:func:`gpukit.perfmodel.place`) and the LLM model (:func:`gpukit.llm.speeds`)
run tensor-core matrix multiplies at :func:`tensor_share` of the datasheet peak, for every tensor
math (TF32, FP16, BF16, INT8 share the tensor cores and the clock). A GPU no run measured is taken
at the median share of those measured (:func:`typical_share`), and :func:`tensor_share` says so.
FP32 on the CUDA cores and memory bandwidth keep their datasheet figures.
"""
from __future__ import annotations

import functools
import os
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from . import precision as prec
from . import specs
from ._csv import Field, parse_rows, to_frame
from .errors import DataError, Problem
from .resources import DATA_DIR

PATH = DATA_DIR / "matmul_rates.csv"
SCHEMA: tuple[Field, ...] = (
    Field("source", "text", help="a short id of the harness and where it was published"),
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("source_gpu_name", "text", help="the GPU as the source names it"),
    Field("dtype", "choice", choices=("fp16", "bf16")),
    Field("tflops", "float", low=0.1, high=100_000, help="dense TFLOPS the run measured"),
    Field("shape", "text", required=False, help="the matrix shape the figure was measured at"),
    Field("software", "text", required=False),
    Field("source_url", "url"),
    Field("measured", "date", required=False, help="when the run was made, YYYY-MM-DD, if the source says"),
    Field("retrieved", "date", help="when gpukit read the source, YYYY-MM-DD"),
    Field("note", "text", required=False),
)
#: A run's share of the datasheet that is believable: above it the datasheet figure is probably
#: the wrong card's (or a sparse one), below it the run did not use the tensor cores (BF16 on
#: Volta and Turing is emulated at a few TFLOPS).
SHARE_RANGE = (0.3, 1.3)


def load(path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None,
         today: date | None = None) -> pd.DataFrame:
    """The measured runs, validated: sourced, dated, naming a catalogue GPU that has the dtype's
    tensor math, and within :data:`SHARE_RANGE` of its datasheet figure."""
    p = Path(path) if path else PATH
    cat = specs.load_catalogue() if catalogue is None else catalogue
    parsed, problems = parse_rows(p, SCHEMA, today or date.today(), "measurement")
    records = specs.resolve_rows(p, parsed, cat, lambda r: (r["source"], r["gpu"], r["source_url"]),
                                 problems, "same source, GPU and address")
    lines = {id(r): line for line, r in parsed}
    kept = []
    for r in records:
        row = cat.loc[cat["gpu"] == r["gpu"]].iloc[0]
        column = f"{r['dtype']}_tensor_tflops"
        datasheet = row.get(column)
        line = lines.get(id(r))
        if datasheet is None or pd.isna(datasheet):
            problems.append(Problem(p, line, "dtype", f"{r['gpu']} has no {r['dtype'].upper()} tensor cores (empty "
                                    f"{column} in the catalogue): the run was emulated or the dtype is wrong; "
                                    "drop the row or fix the dtype", r["gpu"]))
            continue
        share = r["tflops"] / float(datasheet)
        if not SHARE_RANGE[0] <= share <= SHARE_RANGE[1]:
            problems.append(Problem(p, line, "tflops", f"{r['tflops']:g} is {share:.0%} of {r['gpu']}'s datasheet "
                                    f"{float(datasheet):g}; expected {SHARE_RANGE[0]:.0%} to {SHARE_RANGE[1]:.0%} "
                                    "(check the GPU, the dtype and that the figure is dense)", r["gpu"]))
            continue
        kept.append(r)
    if problems:
        raise DataError(problems)
    return to_frame(kept, SCHEMA)


def rates(runs: pd.DataFrame | None = None, catalogue: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per measured GPU: how many runs and sources, the median, lowest and highest rate,
    the datasheet's dense FP16 tensor figure and the share (median over datasheet)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    runs = load(catalogue=cat) if runs is None else runs
    datasheet = cat.set_index("gpu")["fp16_tensor_tflops"]
    out = (runs.groupby("gpu", sort=True)
           .agg(runs=("tflops", "size"), sources=("source", "nunique"), tflops=("tflops", "median"),
                low=("tflops", "min"), high=("tflops", "max"))
           .reset_index())
    out["datasheet_tflops"] = out["gpu"].map(datasheet).astype(float)
    out["share"] = out["tflops"] / out["datasheet_tflops"]
    return out


def typical_share(table: pd.DataFrame) -> float:
    """The median share over the measured GPUs of :func:`rates`: what an unmeasured GPU is taken at."""
    return float(np.median(table["share"]))


@functools.lru_cache(maxsize=1)
def _shipped() -> tuple[dict[str, float], float]:
    table = rates()
    return dict(zip(table["gpu"], table["tflops"])), typical_share(table)


def tensor_share(gpu) -> tuple[float, bool]:
    """(share of the datasheet tensor peak catalogue GPU ``gpu`` sustains, whether a run measured it):
    the median measured rate over the row's dense FP16 figure, or :func:`typical_share` of the
    shipped measurements where none names the GPU (or the row has no FP16 figure)."""
    measured, typical = _shipped()
    rate = measured.get(str(gpu["gpu"]))
    datasheet = gpu.get("fp16_tensor_tflops")
    if rate is None or datasheet is None or pd.isna(datasheet) or not float(datasheet) > 0:
        return typical, False
    return rate / float(datasheet), True


def sustained_tflops(gpu, precision: str) -> tuple[float | None, str | None]:
    """(TFLOPS, basis) of ``precision``'s matrix multiplies on catalogue GPU ``gpu`` as the models
    run them: a tensor math at :func:`tensor_share` of its datasheet peak (basis ``measured`` or
    ``median share``), CUDA-core FP32 at the datasheet (``datasheet (CUDA cores)``); ``(None, None)``
    where the GPU lacks the precision."""
    try:
        label, peak = prec.math_unit(gpu, precision, True)
    except prec.Unsupported:
        return None, None
    if "tensor" not in label:
        return peak, "datasheet (CUDA cores)"
    share, measured = tensor_share(gpu)
    return peak * share, "measured" if measured else "median share"

