"""Grading: predictions against published measurements, the efficiency fit, leave one GPU out.

``data/reference_benchmarks.csv`` holds published training throughputs, each row sourced and
dated. Predictions never read it; it grades them by speedup ratios within one source
(:func:`validation_table`), fits the efficiency factors (:func:`fit_efficiency`) and checks that
fit on GPUs it never saw (:func:`leave_one_gpu_out`).
"""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from .. import precision as prec
from .. import specs
from .._csv import Field, parse_rows, to_frame
from ..errors import DataError, ParameterError
from ..resources import DATA_DIR
from .profiles import MODES, profile
from .roofline import DEFAULT_EFFICIENCY, Efficiency, Placed, place, step_time

REFERENCE_PATH = DATA_DIR / "reference_benchmarks.csv"
REFERENCE_SCHEMA: tuple[Field, ...] = (
    Field("source", "text", help="a short id; ratios are only taken within one source"),
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("source_gpu_name", "text", help="the GPU as the source names it"),
    Field("workload", "choice", choices=("resnet50", "transformer")),
    Field("precision", "choice", choices=prec.KERAS_PRECISIONS),
    Field("mode", "choice", choices=MODES),
    Field("batch_size", "int", low=1, high=1_000_000),
    Field("throughput", "float", low=1e-6, high=1e12),
    Field("throughput_unit", "choice", choices=("images/s", "tokens/s", "sequences/s")),
    Field("framework", "text"),
    Field("source_url", "url"),
    Field("measured", "date", required=False, help="when the source ran it, YYYY-MM-DD, if it says"),
    Field("retrieved", "date", help="when gpukit read the source, YYYY-MM-DD"),
    Field("note", "text", required=False),
)


def load_reference(path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None,
                   today: date | None = None) -> pd.DataFrame:
    """Published measurements, validated: every row sourced, dated and naming a catalogue GPU."""
    p = Path(path) if path else REFERENCE_PATH
    cat = specs.load_catalogue() if catalogue is None else catalogue
    parsed, problems = parse_rows(p, REFERENCE_SCHEMA, today or date.today(), "measurement")
    records = specs.resolve_rows(p, parsed, cat, lambda r: (r["source"], r["gpu"], r["workload"],
                                                              r["precision"], r["mode"]),
                                 problems, "same source, GPU, workload, precision and mode")
    if problems:
        raise DataError(problems)
    return to_frame(records, REFERENCE_SCHEMA)


def graded_workloads(path: str | os.PathLike | None = None) -> set[str]:
    """Workloads with published measurements to grade predictions against."""
    import csv

    with open(Path(path) if path else REFERENCE_PATH, newline="") as f:
        return {row["workload"].strip().lower() for row in csv.DictReader(f)}


def _placed(reference: pd.DataFrame, catalogue: pd.DataFrame) -> list[Placed | None]:
    """Each reference row profiled and placed on its GPU (None where the GPU cannot run it)."""
    out: list[Placed | None] = []
    for _, r in reference.iterrows():
        prof = profile(r["workload"], int(r["batch_size"]), r["precision"], r["mode"])
        gpu = catalogue.loc[catalogue["gpu"] == r["gpu"]].iloc[0]
        try:
            out.append(place(prof, gpu))
        except prec.Unsupported:
            out.append(None)
    return out


def _throughputs(cases: list[Placed | None], eff: Efficiency) -> np.ndarray:
    """Predicted items per second of each placed case (the roofline's :func:`step_time`)."""
    return np.array([c.items / step_time(c, eff) if c is not None else np.nan for c in cases])


def _pairs(reference: pd.DataFrame) -> list[tuple[int, int]]:
    """Index pairs (faster first, by the published throughput) within one source, workload,
    precision and mode."""
    pairs = []
    ref = reference.reset_index(drop=True)
    for _, group in ref.groupby(["source", "workload", "precision", "mode"], sort=False):
        idx = list(group.index)
        for x in range(len(idx)):
            for y in range(x + 1, len(idx)):
                i, j = idx[x], idx[y]
                if ref.at[i, "throughput"] < ref.at[j, "throughput"]:
                    i, j = j, i
                pairs.append((i, j))
    return pairs


#: A winner is only called when the published results differ by more than this.
WINNER_MARGIN = 0.10
#: The target for predicted speedup ratios.
RATIO_TOLERANCE = 0.15


def validation_table(reference: pd.DataFrame | None = None, efficiency: Efficiency = DEFAULT_EFFICIENCY,
                     catalogue: pd.DataFrame | None = None, predicted: Sequence[float] | None = None) \
        -> pd.DataFrame:
    """Every pair of GPUs measured by the same source on the same workload, precision and mode:
    published and predicted speedup of the faster (``gpu_a``) over the slower (``gpu_b``), the
    error, and whether the predicted winner is right (judged where the published results differ
    by more than 10 %)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = (load_reference(catalogue=cat) if reference is None else reference).reset_index(drop=True)
    pred = _throughputs(_placed(ref, cat), efficiency) if predicted is None else np.asarray(predicted, float)
    rows = []
    for i, j in _pairs(ref):
        a, b = ref.iloc[i], ref.iloc[j]
        published = a["throughput"] / b["throughput"]
        ratio = pred[i] / pred[j]
        decisive = bool(published > 1 + WINNER_MARGIN)
        rows.append({
            "source": a["source"], "workload": a["workload"], "precision": a["precision"], "mode": a["mode"],
            "gpu_a": a["gpu"], "gpu_b": b["gpu"], "published_speedup": published, "predicted_speedup": ratio,
            "error_pct": 100 * (ratio / published - 1), "decisive": decisive,
            "winner_right": bool(ratio > 1) if decisive else None,
            "within_tolerance": bool(abs(ratio / published - 1) <= RATIO_TOLERANCE),
        })
    return pd.DataFrame(rows)


def summarize_validation(table: pd.DataFrame) -> dict:
    """Headline figures of a validation table."""
    if table.empty:
        return {"pairs": 0, "median_abs_error_pct": math.nan, "max_abs_error_pct": math.nan,
                "within_tolerance": 0, "decisive_pairs": 0, "winners_right": 0}
    err = table["error_pct"].abs()
    decisive = table[table["decisive"]]
    return {
        "pairs": int(len(table)),
        "median_abs_error_pct": float(err.median()),
        "max_abs_error_pct": float(err.max()),
        "within_tolerance": int(table["within_tolerance"].sum()),
        "decisive_pairs": int(len(decisive)),
        "winners_right": int((decisive["winner_right"] == True).sum()),  # noqa: E712 -- object column
    }


#: The pairs this kit exists for, as (faster-named, slower-named) natural names.
KEY_PAIRS = (("RTX A5000", "RTX A4000"), ("A40", "V100"))


def key_pairs(table: pd.DataFrame, pairs: Sequence[tuple[str, str]] = KEY_PAIRS) -> pd.DataFrame:
    """The rows of a validation table for the given pairs (any memory or form-factor variant)."""
    cat = specs.load_catalogue()
    keep = []
    for a, b in pairs:
        fa, fb = set(specs.resolve(a, cat).matches), set(specs.resolve(b, cat).matches)
        keep.append(table[(table["gpu_a"].isin(fa) & table["gpu_b"].isin(fb)) |
                          (table["gpu_a"].isin(fb) & table["gpu_b"].isin(fa))])
    return pd.concat(keep, ignore_index=True)


#: The grid :func:`fit_efficiency` searches.
FIT_GRID = {"tensor": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0), "cuda": (0.5, 0.7, 0.9),
            "elementwise": (0.01, 0.015, 0.02, 0.03, 0.04, 0.06), "memory": (0.2, 0.3, 0.4, 0.5, 0.7)}


def _fit(cases, pairs, published, base: Efficiency, grid) -> tuple[Efficiency, float]:
    best, best_err = base, math.inf
    ia = np.array([p[0] for p in pairs])
    ib = np.array([p[1] for p in pairs])
    for t in grid["tensor"]:
        for c in grid["cuda"]:
            for e in grid["elementwise"]:
                for m in grid["memory"]:
                    eff = replace(base, tensor=t, cuda=c, elementwise=e, memory=m)
                    pred = _throughputs(cases, eff)
                    err = float(np.nanmean(np.abs(np.log(pred[ia] / pred[ib] / published))))
                    if err < best_err - 1e-12:
                        best, best_err = eff, err
    return best, best_err


def fit_efficiency(reference: pd.DataFrame, catalogue: pd.DataFrame | None = None,
                   base: Efficiency = DEFAULT_EFFICIENCY, grid: dict | None = None) -> Efficiency:
    """The efficiency factors on :data:`FIT_GRID` that minimise the mean absolute log error of the
    speedup ratios in ``reference`` (ratios do not see a common scale, so the fit fixes the
    balance between compute, elementwise work and memory, not absolute speed)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = reference.reset_index(drop=True)
    pairs = _pairs(ref)
    if not pairs:
        raise ParameterError("no pair of GPUs measured by the same source to fit to")
    published = np.array([ref.at[i, "throughput"] / ref.at[j, "throughput"] for i, j in pairs])
    eff, _ = _fit(_placed(ref, cat), pairs, published, base, grid or FIT_GRID)
    return replace(eff, source=f"fitted to {len(ref)} published measurements ({ref['gpu'].nunique()} GPUs)")


def leave_one_gpu_out(reference: pd.DataFrame | None = None, catalogue: pd.DataFrame | None = None,
                      base: Efficiency = DEFAULT_EFFICIENCY, grid: dict | None = None) -> pd.DataFrame:
    """For each GPU: fit on the pairs without it, then grade the pairs with it (which the fit never saw)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = (load_reference(catalogue=cat) if reference is None else reference).reset_index(drop=True)
    cases = _placed(ref, cat)
    pairs = _pairs(ref)
    published = np.array([ref.at[i, "throughput"] / ref.at[j, "throughput"] for i, j in pairs])
    rows = []
    for gpu in sorted(ref["gpu"].unique()):
        with_gpu = [k for k, (i, j) in enumerate(pairs) if gpu in (ref.at[i, "gpu"], ref.at[j, "gpu"])]
        without = [k for k in range(len(pairs)) if k not in set(with_gpu)]
        if not with_gpu or not without:
            continue
        eff, _ = _fit(cases, [pairs[k] for k in without], published[without], base, grid or FIT_GRID)
        held = validation_table(ref, eff, cat, predicted=_throughputs(cases, eff)).iloc[with_gpu]
        s = summarize_validation(held)
        rows.append({"held_out": gpu, "pairs": s["pairs"], "median_abs_error_pct": s["median_abs_error_pct"],
                     "max_abs_error_pct": s["max_abs_error_pct"],
                     "within_15_pct": f"{s['within_tolerance']}/{s['pairs']}",
                     "winners_right": f"{s['winners_right']}/{s['decisive_pairs']}",
                     "fitted": f"tensor {eff.tensor:g}, cuda {eff.cuda:g}, elementwise {eff.elementwise:g}, "
                               f"memory {eff.memory:g}"})
    return pd.DataFrame(rows)
