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
FP32 on the CUDA cores keeps its datasheet figure; memory bandwidth has measurements of its own
(:mod:`gpukit.specs.bandwidth_rates`).
"""

from __future__ import annotations

import functools
import os
from datetime import date
from pathlib import Path

import pandas as pd

from .. import precision as prec
from .. import specs
from .._csv import Field
from ..resources import DATA_DIR
from . import rates as _rates

PATH = DATA_DIR / "matmul_rates.csv"
SCHEMA: tuple[Field, ...] = _rates.run_schema(
    Field("dtype", "choice", choices=("fp16", "bf16")),
    Field("tflops", "float", low=0.1, high=100_000, help="dense TFLOPS the run measured"),
    Field("shape", "text", required=False, help="the matrix shape the figure was measured at"),
)
#: A run's share of the datasheet that is believable: above it the datasheet figure is probably
#: the wrong card's (or a sparse one), below it the run did not use the tensor cores (BF16 on
#: Volta and Turing is emulated at a few TFLOPS).
SHARE_RANGE = (0.3, 1.3)


def _datasheet(gpu, run) -> tuple[str, float | None, str, str]:
    column = f"{run['dtype']}_tensor_tflops"
    return (
        column,
        gpu.get(column),
        "dtype",
        f"{run['gpu']} has no {run['dtype'].upper()} tensor cores (empty {column} in the catalogue): "
        "the run was emulated or the dtype is wrong; drop the row or fix the dtype",
    )


def load(
    path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None, today: date | None = None
) -> pd.DataFrame:
    """The measured runs, validated: sourced, dated, naming a catalogue GPU that has the dtype's
    tensor math, and within :data:`SHARE_RANGE` of its datasheet figure."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    return _rates.load_runs(
        Path(path) if path else PATH,
        SCHEMA,
        "tflops",
        cat,
        _datasheet,
        SHARE_RANGE,
        "check the GPU, the dtype and that the figure is dense",
        today,
    )


def rates(runs: pd.DataFrame | None = None, catalogue: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per measured GPU: how many runs and sources, the median, lowest and highest rate
    (``tflops``, ``low``, ``high``), the datasheet's dense FP16 tensor figure (``datasheet_tflops``)
    and the share (median over datasheet)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    runs = load(catalogue=cat) if runs is None else runs
    out = _rates.per_gpu(runs, "tflops", cat.set_index("gpu")["fp16_tensor_tflops"])
    return out.rename(columns={"rate": "tflops", "datasheet": "datasheet_tflops"})


typical_share = _rates.typical_share


@functools.lru_cache(maxsize=1)
def _shipped() -> tuple[dict[str, float], float]:
    return _rates.shares(rates())


def tensor_share(gpu) -> tuple[float, bool]:
    """(share of the datasheet tensor peak catalogue GPU ``gpu`` sustains, whether a run measured it):
    the median measured rate over the catalogue's dense FP16 figure, or :func:`typical_share` of
    the shipped measurements where none names the GPU."""
    measured, typical = _shipped()
    return _rates.share_of(measured, typical, gpu)


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
