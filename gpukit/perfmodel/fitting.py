"""Fitting the efficiency factors to the published runs, and checking the fit on runs it never saw.

The factors are chosen on a grid (:data:`FIT_GRID`) by the mean absolute log error of every
same-source pair's predicted speedup (:func:`fit_error`); a refit replaces the defaults only where
it is clearly better (:func:`refit_verdict`); leaving each GPU (:func:`leave_one_gpu_out`) and
each publication (:func:`leave_one_source_out`) out in turn grades the fit on pairs it never saw,
as does grading whole systems with each GPU left out (:func:`held_out_systems`).
docs/accuracy/perfmodel.md reports all of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from .. import cache, specs
from ..errors import ParameterError
from .grading import (
    pairs_of,
    place_runs,
    run_throughputs,
    summarize_validation,
    system_validation,
    validation_table,
)
from .reference import REFERENCE_PATH, family, load_reference, processed_rate, single_gpu
from .roofline import DEFAULT_EFFICIENCY, Efficiency, PlacedSet

#: The grid :func:`fit_efficiency` searches.
FIT_GRID = {
    "tensor": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0),
    "cuda": (0.5, 0.7, 0.9),
    "elementwise": (0.01, 0.015, 0.02, 0.03, 0.04, 0.06),
    "memory": (0.2, 0.3, 0.4, 0.5, 0.7),
}


def _pair_log_error(pred: np.ndarray, pairs, published) -> float | np.ndarray:
    """Mean absolute log error of the speedups of ``pairs`` under predicted throughputs ``pred``
    (one row of throughputs: a number; a row per grid point: one error per row)."""
    ia, ib = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    errors = np.nanmean(np.abs(np.log(pred[..., ia] / pred[..., ib] / published)), axis=-1)
    return float(errors) if np.ndim(errors) == 0 else errors


def _log_error(cases, pairs, published, eff: Efficiency) -> float:
    """Mean absolute log error of the predicted speedups of ``pairs``: what the fit minimises."""
    return _pair_log_error(run_throughputs(cases, eff), pairs, published)


#: Which unit's ops each fitted factor scales (:func:`gpukit.perfmodel.roofline.op_times`).
UNIT_FACTORS = ("tensor", "cuda", "elementwise")


def _grid_throughputs(cases, base: Efficiency, grid) -> list[tuple[Efficiency, np.ndarray]]:
    """Every efficiency on ``grid`` with the throughputs it predicts for ``cases``. A prediction does
    not depend on which pairs a fit reads, so a leave-one-out computes these once for all its fits.

    An op's time depends on one unit factor (its unit's) and ``memory`` only, so each unit's ops are
    timed at each pair of its factor and ``memory`` (7 x 5 + 3 x 5 + 6 x 5 passes over a share of
    the ops, not 630 passes over all), and each grid point adds its three sums: the step times
    :func:`run_throughputs` gives, to rounding."""
    cases = PlacedSet.of(cases)
    sums = []  # per unit: {(factor, memory): per-case sum of its ops' times}
    for unit, name in enumerate(UNIT_FACTORS):
        ops = cases.only(cases.unit == unit)
        sums.append(
            {
                (v, m): ops.op_sums(replace(base, **{name: v, "memory": m}))
                for v in grid[name]
                for m in grid["memory"]
            }
        )
    fixed = cases.fixed_s(base)
    out = []
    for t in grid["tensor"]:
        for c in grid["cuda"]:
            for e in grid["elementwise"]:
                for m in grid["memory"]:
                    eff = replace(base, tensor=t, cuda=c, elementwise=e, memory=m)
                    steps = (sums[0][t, m] + sums[1][c, m] + sums[2][e, m] + fixed) / eff.scale
                    out.append((eff, cases.spread(steps)))
    return out


def _fit(
    predicted: list[tuple[Efficiency, np.ndarray]], pairs, published, base: Efficiency
) -> tuple[Efficiency, float]:
    """The grid point (:func:`_grid_throughputs`) with the lowest log error on ``pairs``; the first
    in grid order among equals. The errors of every grid point come from one array operation."""
    if not predicted:
        return base, math.inf
    errors = _pair_log_error(np.stack([p for _, p in predicted]), pairs, np.asarray(published))
    best, best_err = base, math.inf
    for (eff, _), err in zip(predicted, errors.tolist()):
        if err < best_err - 1e-12:
            best, best_err = eff, err
    return best, best_err


def _pair_inputs(reference: pd.DataFrame, catalogue: pd.DataFrame | None, what: str):
    """The single-GPU rows of ``reference``, placed on their GPUs, their same-source pairs and the
    published speedups: what a fit works on (``what``: the verb the error names)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = single_gpu(reference)
    pairs = pairs_of(ref)
    if not pairs:
        raise ParameterError(f"no pair of GPUs measured by the same source to {what}")
    rate = processed_rate(ref)
    published = np.array([rate[i] / rate[j] for i, j in pairs])
    return ref, place_runs(ref, cat), pairs, published


#: A refit replaces the default efficiencies only where it lowers :func:`fit_error` by more than this
#: share (and calls no more winners wrong, :func:`refit_verdict`): the error is flat around its
#: minimum, and factors that move with every new row are not a model.
REFIT_MARGIN = 0.02


def fit_error(
    reference: pd.DataFrame,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    catalogue: pd.DataFrame | None = None,
) -> float:
    """The mean absolute log error of every single-GPU pair's predicted speedup under ``efficiency``:
    the quantity :func:`fit_efficiency` minimises, to compare a refit with the defaults."""
    _, cases, pairs, published = _pair_inputs(reference, catalogue, "grade")
    return _log_error(cases, pairs, published, efficiency)


def scan_error(
    reference: pd.DataFrame,
    name: str,
    values: Sequence[float],
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    catalogue: pd.DataFrame | None = None,
) -> pd.Series:
    """:func:`fit_error` with the efficiency field ``name`` at each of ``values`` (every other
    factor as in ``efficiency``): how a constant outside :data:`FIT_GRID` (``host_op_s``,
    ``sm_bytes_per_cycle``) is chosen, by the quantity the fit minimises."""
    _, cases, pairs, published = _pair_inputs(reference, catalogue, "grade")
    return pd.Series(
        {v: _log_error(cases, pairs, published, replace(efficiency, **{name: v})) for v in values},
        name="log_error",
    )


def refit_verdict(
    reference: pd.DataFrame,
    fitted: Efficiency,
    defaults: Efficiency = DEFAULT_EFFICIENCY,
    catalogue: pd.DataFrame | None = None,
) -> tuple[bool, str]:
    """Whether ``fitted`` should replace ``defaults``, and why, in words: only where it lowers
    :func:`fit_error` by more than :data:`REFIT_MARGIN` and calls no more winners wrong (the fit
    minimises the speedups' log error, which does not see a verdict turn; the target asks for both)."""
    now, best = fit_error(reference, defaults, catalogue), fit_error(reference, fitted, catalogue)
    text = (
        f"mean absolute log error of the speedups {best:.4f}, against the defaults' {now:.4f} "
        f"({(now - best) / now:.1%} lower)"
    )
    if now - best <= REFIT_MARGIN * now:
        return (
            False,
            text
            + f"; within {REFIT_MARGIN:.0%}, so the defaults stay (the error is flat around its minimum)",
        )

    def wrong(eff):
        s = summarize_validation(validation_table(reference, eff, catalogue))
        return s["decisive_pairs"] - s["winners_right"]

    lost = wrong(fitted) - wrong(defaults)
    if lost > 0:
        return (
            False,
            text + f", but it calls {lost} more winner{'s' * (lost > 1)} wrong, so the defaults stay",
        )
    return True, text + ": update the defaults"


def fit_efficiency(
    reference: pd.DataFrame,
    catalogue: pd.DataFrame | None = None,
    base: Efficiency = DEFAULT_EFFICIENCY,
    grid: dict | None = None,
) -> Efficiency:
    """The efficiency factors on :data:`FIT_GRID` that minimise the mean absolute log error of the
    speedup ratios in ``reference`` (ratios do not see a common scale, so the fit fixes the
    balance between compute, elementwise work and memory, not absolute speed)."""
    ref, cases, pairs, published = _pair_inputs(reference, catalogue, "fit to")
    eff, _ = _fit(_grid_throughputs(cases, base, grid or FIT_GRID), pairs, published, base)
    return replace(eff, source=f"fitted to {len(ref)} published measurements ({ref['gpu'].nunique()} GPUs)")


def _leave_out(
    reference: pd.DataFrame | None,
    catalogue: pd.DataFrame | None,
    base: Efficiency,
    grid: dict | None,
    groups,
) -> pd.DataFrame:
    """Fit on the pairs outside each group, grade the group's pairs (which the fit never saw).
    ``groups(ref, pairs)`` yields ``(label, indices of the held-out pairs)``; each group is graded
    per workload family."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = single_gpu(load_reference(catalogue=cat) if reference is None else reference)
    cases = PlacedSet.of(place_runs(ref, cat))
    pairs = pairs_of(ref)
    rate = processed_rate(ref)
    published = np.array([rate[i] / rate[j] for i, j in pairs])
    predicted = _grid_throughputs(cases, base, grid or FIT_GRID)
    rows = []
    for label, held in groups(ref, pairs):
        rest = [k for k in range(len(pairs)) if k not in set(held)]
        if not held or not rest:
            continue
        eff, _ = _fit(predicted, [pairs[k] for k in rest], published[rest], base)
        table = validation_table(ref, eff, cat, predicted=run_throughputs(cases, eff)).iloc[held]
        rows += [_held_out_row(label, fam, group, eff) for fam, group in table.groupby("family", sort=True)]
    return pd.DataFrame(rows)


def _held_out_row(label: str, fam: str, graded: pd.DataFrame, eff: Efficiency) -> dict:
    """One row of a held-out grading: what was held out, the family, how ``graded`` (pairs the fit
    ``eff`` never saw) came out, and the factors fitted."""
    s = summarize_validation(graded)
    return {
        "held_out": label,
        "family": fam,
        "pairs": s["pairs"],
        "median_abs_error_pct": s["median_abs_error_pct"],
        "max_abs_error_pct": s["max_abs_error_pct"],
        "within_15_pct": f"{s['within_tolerance']}/{s['pairs']}",
        "winners_right": f"{s['winners_right']}/{s['decisive_pairs']}",
        "fitted": f"tensor {eff.tensor:g}, cuda {eff.cuda:g}, elementwise {eff.elementwise:g}, memory {eff.memory:g}",
    }


def leave_one_gpu_out(
    reference: pd.DataFrame | None = None,
    catalogue: pd.DataFrame | None = None,
    base: Efficiency = DEFAULT_EFFICIENCY,
    grid: dict | None = None,
) -> pd.DataFrame:
    """For each GPU: fit on the pairs without it, then grade the pairs with it, per family. With
    the shipped reference, catalogue and factors (no arguments), kept between runs (:mod:`gpukit.cache`)."""
    return _held_out("gpu", reference, catalogue, base, grid)


def _by_gpu(ref, pairs):
    gpu_of = ref["gpu"].to_dict()
    for gpu in sorted(ref["gpu"].unique()):
        yield gpu, [k for k, (i, j) in enumerate(pairs) if gpu in (gpu_of[i], gpu_of[j])]


def _by_source(ref, pairs):
    source_of = ref["source"].to_dict()
    for source in sorted(ref["source"].unique()):
        yield source, [k for k, (i, _) in enumerate(pairs) if source_of[i] == source]


def _held_out(what: str, reference, catalogue, base: Efficiency, grid: dict | None) -> pd.DataFrame:
    groups = {"gpu": _by_gpu, "source": _by_source}[what]
    if reference is None and catalogue is None and base is DEFAULT_EFFICIENCY and grid is None:
        inputs = [*cache.data_files(), REFERENCE_PATH]
        kept = cache.cached(
            f"perfmodel-leave-one-{what}-out", inputs, lambda: _leave_out(None, None, base, None, groups)
        )
        return kept.copy()
    return _leave_out(reference, catalogue, base, grid, groups)


def leave_one_source_out(
    reference: pd.DataFrame | None = None,
    catalogue: pd.DataFrame | None = None,
    base: Efficiency = DEFAULT_EFFICIENCY,
    grid: dict | None = None,
) -> pd.DataFrame:
    """For each publication: fit on the others' pairs, grade its own (one harness's habits, its
    framework version, batch sizes and data pipeline, never seen by the fit), per family. With
    the shipped reference, catalogue and factors (no arguments), kept between runs (:mod:`gpukit.cache`)."""
    return _held_out("source", reference, catalogue, base, grid)


def held_out_systems(
    systems: pd.DataFrame,
    reference: pd.DataFrame | None = None,
    catalogue: pd.DataFrame | None = None,
    base: Efficiency = DEFAULT_EFFICIENCY,
    grid: dict | None = None,
) -> pd.DataFrame:
    """``systems`` (rows of :func:`gpukit.perfmodel.system_validation`) graded with each of their GPUs
    left out: fit on the family's single-GPU pairs without that GPU, then predict its system pairs
    again. One row per GPU and family, as :func:`leave_one_gpu_out` gives; the fit never reads a
    multi-GPU run, so the factors are never fitted to the systems themselves."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    full = load_reference(catalogue=cat) if reference is None else reference
    rows = []
    for fam, group in systems.groupby("family", sort=True):
        ref, cases, pairs, published = _pair_inputs(
            full[[family(w) == fam for w in full["workload"]]], cat, "fit to"
        )
        predicted = _grid_throughputs(cases, base, grid or FIT_GRID)
        multi = full[full["gpus"].fillna(1).astype(int) > 1]
        for gpu in sorted(set(group["gpu_a"]) | set(group["gpu_b"])):
            rest = [k for k, (i, j) in enumerate(pairs) if gpu not in (ref.at[i, "gpu"], ref.at[j, "gpu"])]
            if not rest:
                continue
            eff, _ = _fit(predicted, [pairs[k] for k in rest], published[rest], base)
            mine = group[(group["gpu_a"] == gpu) | (group["gpu_b"] == gpu)]
            keep = multi["source"].isin(mine["source"]) & multi["workload"].isin(mine["workload"])
            again = system_validation(multi[keep], eff, cat)
            again = again.merge(
                mine[["source", "workload", "precision", "gpu_a", "gpus_a", "gpu_b", "gpus_b"]]
            )
            rows.append(_held_out_row(gpu, fam, again, eff))
    return pd.DataFrame(rows)
