"""The estimate's measured error band, per family of models and mode (or per model measured apart),
and what it makes of a fit: ``fits``, ``borderline`` or ``does not fit``, and the range of largest batches.

``benchmarks/memory_accuracy.py`` measures the bands and writes them to :data:`ERROR_BANDS_PATH` and
:data:`MODEL_BANDS_PATH`; docs/accuracy/memory.md shows how they were measured.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path

from .. import precision as prec
from ..models.registry import check_mode
from ..resources import DATA_DIR
from .estimate import Estimator

#: Per family of models, the estimate's measured error band (``benchmarks/memory_accuracy.py``
#: writes it): the fit verdict is "borderline" where a GPU's memory falls inside it.
ERROR_BANDS_PATH = DATA_DIR / "memory_error.csv"


def _band_row(r: dict) -> dict:
    return {
        "cases": int(r["cases"]),
        "median_abs_error": float(r["median_abs_error"]),
        "worst_abs_error": float(r["worst_abs_error"]),
        "error_low": float(r["error_low"]),
        "error_high": float(r["error_high"]),
        "measured_on": r["measured_on"],
        "date": r["date"],
    }


def _band_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@functools.lru_cache(maxsize=1)
def error_bands() -> dict[tuple[str, str], dict]:
    """``data/memory_error.csv`` by (family, mode): cases, median and worst |error|, the band
    (estimate / measured - 1 over every measured run), where and when it was measured. A family's
    training and inference are banded apart: an inference step holds less, and other things, than
    a training step (the grid's inference errors run wider), so a training fit is judged by the
    family's training cases alone."""
    return {(r["family"], r["mode"]): _band_row(r) for r in _band_rows(ERROR_BANDS_PATH)}


#: Zoo models measured as the grid's cases are but kept out of its figures and families' bands
#: (``benchmarks/memory_accuracy.py --outside``): each one's own measured error, per precision
#: (``--model-bands`` writes it). Where a model has one, ``gpukit fit`` quotes and uses it in place of
#: its family's, which was measured on other models and does not cover it.
MODEL_BANDS_PATH = DATA_DIR / "memory_error_models.csv"


@functools.lru_cache(maxsize=1)
def model_error_bands() -> dict[tuple[str, str], dict]:
    """``data/memory_error_models.csv`` by (zoo model, precision): the band of :func:`error_bands`,
    measured on that model itself."""
    return {(r["model"], r["precision"]): _band_row(r) for r in _band_rows(MODEL_BANDS_PATH)}


#: How the error scope names a mode.
MODE_WORDS = {"train": "training", "infer": "inference"}


def error_band(estimator: Estimator, precision: str, mode: str = "train") -> tuple[str | None, dict | None]:
    """The measured error that applies to ``estimator``'s model in ``precision`` and ``mode``, and
    what it was measured on: the model's own where it was measured apart from the grid
    (:func:`model_error_bands`), else its family's in that mode (:func:`error_bands`: "transformer
    encoder, training"), else ``(family, None)``."""
    check_mode(mode)
    p = prec.normalize(precision)
    p = "fp32" if prec.itemsize(p) == 4 else p  # TF32 or not, the tensors hold the same bytes
    own = model_error_bands().get((estimator.name.lower(), p))
    if own is not None:
        return f"{estimator.name} itself in {p} (measured outside the grid)", own
    family = estimator.family
    if not family:
        return None, None
    band = error_bands().get((family, mode))
    return (f"{family}, {MODE_WORDS[mode]}" if band else family), band


def verdict(total_bytes: int, tensor_bytes: int, capacity_bytes: int, band: dict | None) -> str:
    """``fits``, ``borderline`` or ``does not fit``: with the family's band, the peak a run may
    reach lies between ``tensor_bytes / (1 + error_high)`` and ``tensor_bytes / (1 + error_low)``
    (plus the runtime reserve); a GPU whose memory falls in that range is borderline."""
    reserve = total_bytes - tensor_bytes
    scales = band_scales(band)
    if scales is None:
        return "fits" if total_bytes <= capacity_bytes else "does not fit"
    most, least = (reserve + tensor_bytes * f for f in scales)
    if capacity_bytes >= max(most, total_bytes):
        return "fits"
    if capacity_bytes < min(least, total_bytes):
        return "does not fit"
    return "borderline"


def band_scales(band: dict | None) -> tuple[float, float] | None:
    """The factors from the estimate to the highest and the lowest peak a run may reach, given a
    family's error band (estimate / measured - 1 between ``error_low`` and ``error_high``); the
    estimate itself always lies between them. :func:`verdict` and :func:`largest_batch_band` use them."""
    if band is None or band.get("error_low") is None or band["error_low"] != band["error_low"]:
        return None
    return 1 / (1 + min(band["error_low"], 0.0)), 1 / (1 + max(band["error_high"], 0.0))


def largest_batch_band(
    estimator: Estimator,
    capacity_bytes: int,
    band: dict | None,
    precision: str = "fp32",
    optimizer: str = "adam",
    mode: str = "train",
    runtime_reserve_bytes: int = 0,
) -> tuple[int, int] | tuple[None, None]:
    """The largest batch within the family's measured error: the one that fits even if the run
    peaks as far above the estimate as any measured run did, and the one that fits only if it
    peaks as far below. ``(None, None)`` for a model whose family was never measured."""
    scales = band_scales(band)
    if scales is None:
        return None, None
    most, least = scales
    return (
        estimator.largest_batch(
            capacity_bytes, precision, optimizer, mode, runtime_reserve_bytes, tensor_scale=most
        ),
        estimator.largest_batch(
            capacity_bytes, precision, optimizer, mode, runtime_reserve_bytes, tensor_scale=least
        ),
    )
