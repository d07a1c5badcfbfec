"""Measured memory bandwidth: what a GPU's device memory streams in a plain streaming kernel (a
copy, a triad, a load or a store), against its datasheet.

A datasheet's bandwidth is the memory interface's peak: bus width times data rate. What a
kernel reaches depends on the memory technology, the controllers and the clocks: published
streaming measurements put a T4 (GDDR6, 70 W) at about 73 % of its datasheet, the L4 and L40S at
about 77 %, the A10 at 81 %, and an RTX 4090 or a V100 at about 90 %. ``data/bandwidth_rates.csv`` holds such
measurements, one row per published run with its source, kernel and harness: BabelStream's Copy
and Triad, CUDA's bandwidthTest device to device, PyTorch tensor copies, nvbandwidth's device-local
copy on cloud machines (doubled: nvbandwidth counts the bytes copied once), mt4g's load-only and
store-only main-memory kernels, each counting the bytes read and written. A GPU's rate is the
median of its runs (:func:`rates`), its **share** that rate over the catalogue's
``memory_bandwidth_gbs``. ECC on a GDDR6 card costs it about 15 % of that
(an L40S streams 657 GB/s with it on and 763 with it off on the same provider's harness); the runs
mix both, mostly on, as cloud machines run them, and each row's note says which where the source does.

The performance model (:func:`gpukit.perfmodel.place`) moves bytes at :func:`bandwidth_share` of the
datasheet bandwidth, times its efficiencies; a GPU no run measured is taken at the median share of
those measured (:func:`typical_share`), and :func:`bandwidth_share` says so. The LLM model
(:func:`gpukit.llm.speeds`) streams every GPU at that median share (:func:`streaming_gbs` with
``measured=False``; ``gpukit.llm.default_efficiency`` says why).
"""

from __future__ import annotations

import functools
import os
from datetime import date
from pathlib import Path

import pandas as pd

from .. import specs
from .._csv import Field
from ..resources import DATA_DIR
from . import rates as _rates

PATH = DATA_DIR / "bandwidth_rates.csv"
#: What the kernel does per element; every figure counts the bytes it reads and writes.
KERNELS = ("copy", "mul", "add", "triad", "d2d", "read", "write")
SCHEMA: tuple[Field, ...] = _rates.run_schema(
    Field(
        "kernel",
        "choice",
        choices=KERNELS,
        help="copy and mul read one array and write one; add and triad read two and write one; "
        "d2d is cudaMemcpy device to device (bandwidthTest; nvbandwidth's device_local_copy doubled), "
        "counting the read and the write; read and write only load or only store one array "
        "(mt4g's main-memory kernels)",
    ),
    Field("gbs", "float", low=1, high=100_000, help="GB/s (10^9 bytes a second) read plus written"),
    Field(
        "array_bytes", "float", required=False, low=1, high=1e13, help="bytes per array, if the source says"
    ),
)
#: A run's share of the datasheet that is believable: above it the datasheet figure is probably
#: another card's or the array fitted in the cache; below it the kernel was not streaming (too
#: few threads in flight, or host memory).
SHARE_RANGE = (0.5, 1.05)


def _datasheet(gpu, run) -> tuple[str, float | None, str, str]:
    return (
        "memory_bandwidth_gbs",
        gpu.get("memory_bandwidth_gbs"),
        "gpu",
        f"{run['gpu']} has no memory_bandwidth_gbs in the catalogue; add it there first",
    )


def load(
    path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None, today: date | None = None
) -> pd.DataFrame:
    """The measured runs, validated: sourced, dated, naming a catalogue GPU, and within
    :data:`SHARE_RANGE` of its datasheet bandwidth."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    return _rates.load_runs(
        Path(path) if path else PATH,
        SCHEMA,
        "gbs",
        cat,
        _datasheet,
        SHARE_RANGE,
        "check the GPU and that the figure counts both the bytes read and those written, "
        "over arrays larger than the GPU's cache",
        today,
        key=("source", "gpu", "kernel", "source_url"),
    )


def rates(runs: pd.DataFrame | None = None, catalogue: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per measured GPU: how many runs and sources, the median, lowest and highest rate
    (``gbs``, ``low``, ``high``), the datasheet bandwidth (``datasheet_gbs``) and the share."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    runs = load(catalogue=cat) if runs is None else runs
    out = _rates.per_gpu(runs, "gbs", cat.set_index("gpu")["memory_bandwidth_gbs"])
    return out.rename(columns={"rate": "gbs", "datasheet": "datasheet_gbs"})


typical_share = _rates.typical_share


@functools.lru_cache(maxsize=1)
def _shipped() -> tuple[dict[str, float], float]:
    return _rates.shares(rates())


def shipped_typical_share() -> float:
    """:func:`typical_share` of the shipped measurements."""
    return _shipped()[1]


def bandwidth_share(gpu) -> tuple[float, bool]:
    """(share of its datasheet bandwidth catalogue GPU ``gpu`` streams at, whether a run measured it):
    the median measured rate over the catalogue's ``memory_bandwidth_gbs``, or :func:`typical_share`
    of the shipped measurements where none names the GPU."""
    measured, typical = _shipped()
    return _rates.share_of(measured, typical, gpu)


def streaming_gbs(gpu, measured: bool = True) -> float:
    """GB/s a plain streaming kernel reaches on catalogue GPU ``gpu``: the datasheet bandwidth
    times :func:`bandwidth_share` (``measured=False``: times the typical share, as if no run had
    measured the GPU)."""
    share = bandwidth_share(gpu)[0] if measured else shipped_typical_share()
    return float(gpu["memory_bandwidth_gbs"]) * share
