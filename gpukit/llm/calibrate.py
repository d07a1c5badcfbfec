"""Fitting an engine profile's constants to the published runs of that engine, with hold-outs.

:func:`fit` tries every combination of a grid of an :class:`~gpukit.llm.engines.Engine`'s fields on
the runs of its sources and keeps the one that puts the most same-source pairs within the grading's
tolerance (the lower median error among equals). :func:`hold_out` fits again without one GPU
family (an architecture) and grades the pairs that involve it: the error a GPU the fit never saw
can expect, which ``benchmarks/llm_accuracy.py`` reports apart from the in-sample error.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .. import grading, specs
from ..errors import ParameterError
from .engines import Engine
from .grading import CONFIGURATION_PAIRED, predict_reference
from .reference import by_configuration, load_reference, screened

#: How near a predicted speedup must land, per test, for the current llama.cpp's targets: decode
#: within 20 %, prefill within 25 %, winners called where the published gap exceeds 15 %.
TOLERANCES = {
    "tg": grading.Tolerance(speedup=0.20, winner_margin=0.15),
    "pp": grading.Tolerance(speedup=0.25, winner_margin=0.15),
}
#: The fields a test's speed depends on, which a fit of that test varies.
FIELDS = {
    "tg": ("gemv_bytes_per_sm_cycle", "launch_s"),
    "pp": ("mmq_tensor_share", "mmq_ops_per_weight"),
}

#: The grids :func:`fit` searches, per profile and test: the constants a profile's runs can speak
#: for. The values :data:`gpukit.llm.engines.LLAMA_CPP_2025` ships are the best points of
#: ``llama.cpp``'s on SpareCores' runs; the other profiles' constants came before and are graded
#: on these grids only to hold a family out.
GRIDS = {
    "llama.cpp": {
        "tg": {
            "gemv_bytes_per_sm_cycle": (None, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0),
            "launch_s": (0.0, 2e-6, 4e-6, 6e-6, 8e-6, 1e-5, 1.2e-5),
        },
        "pp": {
            "mmq_tensor_share": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0),
            "mmq_ops_per_weight": (8.0, 12.0, 16.0, 20.0, 24.0, 28.0, 32.0, 40.0, 48.0),
        },
    },
    "llama.cpp-2024": {
        "tg": {
            "gemv_bytes_per_sm_cycle": (None, 4.0, 5.0, 6.0, 7.0, 8.0),
            "launch_s": (0.0, 2.5e-6, 5e-6, 7.5e-6, 1e-5),
        },
    },
    "vllm": {"tg": {"launch_s": (0.0, 2.5e-6, 5e-6, 7.5e-6, 1e-5, 1.5e-5)}},
}


@dataclass(frozen=True)
class Fit:
    """A fitted profile, the grid point it took (``values``), and its in-sample grading."""

    engine: Engine
    values: dict
    summary: dict


def runs(engine: Engine, test: str, reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """The graded single-GPU configurations of ``engine``'s sources for ``test`` (``tg`` or ``pp``)."""
    ref = by_configuration(load_reference() if reference is None else reference)
    ref = ref[(screened(ref) == "") & ref["source"].isin(engine.sources)]
    ref = ref[(ref["test"] == test) & (ref["gpus"].astype(int) == 1)]
    return ref.assign(tokens=ref["tokens"].astype(int), gpus=ref["gpus"].astype(int)).reset_index(drop=True)


def grade(
    rows: pd.DataFrame, engine: Engine, test: str, catalogue: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Every same-source pair of ``rows`` graded with ``engine``'s predictions at ``test``'s tolerance."""
    # predict_reference maps each row to the profile its engine text names; a fit grades the one given
    pred = predict_reference(rows, catalogue, engine=engine).to_numpy()
    return grading.grade_pairs(
        rows, CONFIGURATION_PAIRED, rows["throughput_tokens_s"], pred, TOLERANCES[test], each=("gpu", "gpus")
    )


def _key(summary: dict) -> tuple:
    return (-summary["within_tolerance"], -summary["winners_right"], summary["median_abs_error_pct"])


def fit(
    engine: Engine,
    test: str,
    grid: Mapping[str, Sequence],
    rows: pd.DataFrame | None = None,
    catalogue: pd.DataFrame | None = None,
) -> Fit:
    """The point of ``grid`` (field name to values) whose profile grades best on ``rows`` (default:
    :func:`runs` of ``engine`` for ``test``)."""
    rows = runs(engine, test) if rows is None else rows
    cat = specs.load_catalogue() if catalogue is None else catalogue
    best = None
    for point in itertools.product(*grid.values()):
        values = dict(zip(grid, point))
        candidate = replace(engine, **values)
        summary = grading.summarize(grade(rows, candidate, test, cat))
        if best is None or _key(summary) < _key(best.summary):
            best = Fit(candidate, values, summary)
    return best


def families(rows: pd.DataFrame, catalogue: pd.DataFrame | None = None) -> pd.Series:
    """Each row's GPU family: the catalogue's ``architecture``."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    return rows["gpu"].map(cat.set_index("gpu")["architecture"])


def hold_out(
    engine: Engine,
    test: str,
    grid: Mapping[str, Sequence],
    family: str,
    rows: pd.DataFrame | None = None,
    catalogue: pd.DataFrame | None = None,
) -> dict:
    """Fit ``grid`` without ``family``'s GPUs, then grade the pairs with one of them on either side:
    the fitted values, the pairs, those within tolerance, the winners right and the median error."""
    rows = runs(engine, test) if rows is None else rows
    fam = families(rows, catalogue).to_numpy()
    kept = rows[fam != family].reset_index(drop=True)
    fitted = fit(engine, test, grid, kept, catalogue)
    table = grade(rows, fitted.engine, test, catalogue)
    held = table[
        (families(table.rename(columns={"gpu_a": "gpu"}), catalogue) == family).to_numpy()
        | (families(table.rename(columns={"gpu_b": "gpu"}), catalogue) == family).to_numpy()
    ]
    return {"family": family, "values": fitted.values, **grading.summarize(held)}


def held_out_summary(
    engine: Engine, test: str, grid: Mapping[str, Sequence], family_list: Sequence[str] | None = None
) -> pd.DataFrame:
    """:func:`hold_out` for each family in turn (default: every family the runs hold)."""
    rows = runs(engine, test)
    names = sorted(set(families(rows))) if family_list is None else family_list
    return pd.DataFrame([hold_out(engine, test, grid, f, rows) for f in names if np.any(families(rows) == f)])


#: The grid of a bandwidth-only profile (``llama.cpp-metal``): the share of the datasheet bandwidth
#: its decode streams at, and its GPU cores' rate of unpacking quantised weights (0: none).
BANDWIDTH_GRID = {
    "stream_share": (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0),
    "core_ops_per_s": (0.0, 2e10, 3e10, 4e10, 5e10, 6e10, 8e10, 1e11),
}


def _absolute(rows: pd.DataFrame, engine: Engine, catalogue) -> pd.Series:
    """Each run's error (predicted over published, less one)."""
    return predict_reference(rows, catalogue, engine=engine) / rows["throughput_tokens_s"].astype(float) - 1


def fit_bandwidth_profile(
    engine: Engine,
    rows: pd.DataFrame | None = None,
    grid: Mapping[str, Sequence] = BANDWIDTH_GRID,
    catalogue: pd.DataFrame | None = None,
) -> Fit:
    """A bandwidth-only profile's constants on its decode runs (default :func:`runs` of ``engine``):
    the grid point with the most same-source pairs within tolerance, then the most runs within 20 %
    of their published speed (its share of the bandwidth sets the level, which pairs do not see),
    then the lower median error of the runs."""
    rows = runs(engine, "tg") if rows is None else rows
    cat = specs.load_catalogue() if catalogue is None else catalogue
    best, best_key = None, None
    for point in itertools.product(*grid.values()):
        values = dict(zip(grid, point))
        candidate = replace(engine, **values)
        summary = grading.summarize(grade(rows, candidate, "tg", cat))
        err = _absolute(rows, candidate, cat).abs()
        key = (-summary["within_tolerance"], -int((err <= 0.20).sum()), float(err.median()))
        if best_key is None or key < best_key:
            best, best_key = Fit(candidate, values, summary), key
    return best


def held_out_bandwidth_profile(
    engine: Engine, catalogue: pd.DataFrame | None = None, by: str = "gpu"
) -> pd.DataFrame:
    """Each GPU (``by="gpu"``) or model (``by="model"``: where the runs are of one device) of
    ``engine``'s decode runs held out in turn: the profile fitted on the others
    (:func:`fit_bandwidth_profile`), the held-out runs predicted with it (median error, runs
    within 20 %), beside the same runs at the full datasheet bandwidth and no unpacking term (the
    bare-bandwidth baseline)."""
    if by not in ("gpu", "model"):
        raise ParameterError(f"held out by {by!r}: use gpu or model")
    cat = specs.load_catalogue() if catalogue is None else catalogue
    rows = runs(engine, "tg")
    out = []
    for value in sorted(rows[by].unique()):
        kept = rows[rows[by] != value].reset_index(drop=True)
        held = rows[rows[by] == value].reset_index(drop=True)
        fitted = fit_bandwidth_profile(engine, kept, catalogue=cat)
        err = _absolute(held, fitted.engine, cat).abs()
        bare = _absolute(held, replace(engine, stream_share=1.0, core_ops_per_s=0.0), cat).abs()
        out.append(
            {
                by: value,
                "runs": len(held),
                "fitted_without_it": fitted.values,
                "within_20_pct": int((err <= 0.20).sum()),
                "median_abs_error_pct": 100 * float(err.median()),
                "bare_bandwidth_within_20_pct": int((bare <= 0.20).sum()),
                "bare_bandwidth_median_abs_error_pct": 100 * float(bare.median()),
            }
        )
    return pd.DataFrame(out)
