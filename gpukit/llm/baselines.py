"""Two naive predictions of single-GPU decode to grade the model against, on the same pairs.

* ``bandwidth``: tokens/s in proportion to the GPU's datasheet memory bandwidth (a decode step
  reads every weight once: the bare memory-bound estimate).
* ``bandwidth + fixed``: the weights' bytes over the datasheet bandwidth, plus one fixed time per
  token for everything else (kernel launches, synchronisation, sampling). The fixed time is
  fitted to the very pairs it is graded on (:func:`fit_fixed_cost`), which flatters it: a model
  that does not beat it is not worth its parts.
* for prefill, ``tensor peak``: tokens/s in proportion to the datasheet FP16 tensor peak
  (:func:`peak_predictions`).
* for serving at batch, a group's tokens/s in proportion to its GPUs times a datasheet figure
  (the FP16 tensor peak or the memory bandwidth: :func:`serving_ratio`).

Each is graded as the model is (:func:`gpukit.grading.grade_pairs`, ``LLM_SPEED``) on the rows of
one GPU each, so the three sit side by side on ``docs/accuracy/llm.md``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import grading, specs
from .memory import inference_memory
from .models import resolve_model

#: The names of the baselines, in the order a page shows them.
BASELINES = ("bandwidth", "bandwidth + fixed")
#: The fixed times per token the fit tries, seconds (0 to 10 ms in steps of 20 µs).
FIXED_GRID_S = np.arange(0.0, 10e-3 + 1e-9, 2e-5)


def single_gpu_decode(reference: pd.DataFrame) -> pd.DataFrame:
    """The rows a baseline can speak for: text generation on one GPU."""
    return reference[(reference["test"] == "tg") & (reference["gpus"].astype(int) == 1)].reset_index(
        drop=True
    )


def _inputs(rows: pd.DataFrame, catalogue: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each row's datasheet bandwidth (bytes/s) and the bytes of its model's weights."""
    cat = catalogue.set_index("gpu")
    bandwidth = rows["gpu"].map(cat["memory_bandwidth_gbs"]).astype(float).to_numpy() * 1e9
    weights = np.array(
        [
            inference_memory(resolve_model(m), w, 1, 1)["weights_bytes"]
            for m, w in zip(rows["model"], rows["weights"])
        ],
        dtype=float,
    )
    return bandwidth, weights


def predictions(rows: pd.DataFrame, fixed_s: float, catalogue: pd.DataFrame | None = None) -> np.ndarray:
    """Tokens/s of each row: weights over bandwidth, plus ``fixed_s`` a token (0: the bare ratio)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    bandwidth, weights = _inputs(rows, cat)
    return 1.0 / (weights / bandwidth + fixed_s)


def grade(
    rows: pd.DataFrame, predicted, groups, tolerance: grading.Tolerance = grading.LLM_SPEED
) -> pd.DataFrame:
    """The pairs of ``rows`` (one source, model, weights, test and length each) graded with ``predicted``."""
    return grading.grade_pairs(
        rows, groups, rows["throughput_tokens_s"], predicted, tolerance, each=("gpu", "gpus")
    )


def peak_predictions(rows: pd.DataFrame, catalogue: pd.DataFrame | None = None) -> np.ndarray:
    """Prefill's naive prediction: tokens/s in proportion to the GPU's datasheet FP16 tensor peak (a
    prompt's multiplies are compute-bound: the bare compute estimate)."""
    cat = (specs.load_catalogue() if catalogue is None else catalogue).set_index("gpu")
    return rows["gpu"].map(cat["fp16_tensor_tflops"]).astype(float).to_numpy()


def fit_fixed_cost(rows: pd.DataFrame, groups, catalogue: pd.DataFrame | None = None) -> float:
    """The fixed time per token on :data:`FIXED_GRID_S` that puts the most pairs of ``rows`` within
    the tolerance (the lower median error among equals; the smaller time among those)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    bandwidth, weights = _inputs(rows, cat)
    best, key = 0.0, None
    for fixed in FIXED_GRID_S:
        s = grading.summarize(grade(rows, 1.0 / (weights / bandwidth + fixed), groups))
        k = (-s["within_tolerance"], s["median_abs_error_pct"])
        if key is None or k < key:
            best, key = float(fixed), k
    return best


def serving_ratio(
    reference: pd.DataFrame, column: str, catalogue: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Serving's naive prediction on the same pairs the serving model is graded on
    (:func:`gpukit.llm.serving_reference.serving_validation`): a group's output tokens/s in
    proportion to its GPUs times the catalogue's ``column`` (``fp16_tensor_tflops``,
    ``memory_bandwidth_gbs``)."""
    from .serving_reference import SERVING_PAIRED, SERVING_TOLERANCE

    cat = (specs.load_catalogue() if catalogue is None else catalogue).set_index("gpu")
    peak = reference["gpu"].map(cat[column]).astype(float) * reference["gpus"].astype(float)
    return grading.grade_pairs(
        reference,
        SERVING_PAIRED,
        reference["output_tokens_per_s"],
        peak.to_numpy(),
        SERVING_TOLERANCE,
        each=("gpu", "gpus"),
    )
