"""Grading the performance model: its predictions of the published runs, pair by pair.

Each single-GPU run of ``data/reference_benchmarks.csv`` (:mod:`.reference`) is profiled and placed
on its GPU and its throughput predicted; every pair of GPUs one source measured alike is graded by
its speedup (:func:`validation_table`, with :mod:`gpukit.grading`'s training-throughput tolerance),
per workload family (:func:`summarize_by_family`); every multi-GPU run by its speedup over the same
source's single GPU (:func:`scaling_validation`); every pair of multi-GPU systems of different GPUs
one source measured alike by its speedup per GPU (:func:`system_validation`, what a publisher of
whole servers such as MLPerf Training grades). The family's measured accuracy goes with every
prediction in a sentence (:func:`accuracy_text`, :func:`grading_statement`), the figures
docs/accuracy/perfmodel.md reports.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .. import cache, specs
from .. import precision as prec
from ..errors import ParameterError
from ..grading import TRAINING_THROUGHPUT, Tolerance, faster_first, pair_table, summarize, summarize_by
from .profiles import Profile, profile
from .reference import (
    PAIR_KEYS,
    REFERENCE_PATH,
    SYNTHETIC,
    cached_reference,
    family,
    load_reference,
    paired,
    processed_rate,
    single_gpu,
    source_link,
)
from .roofline import DEFAULT_EFFICIENCY, Efficiency, Placed, PlacedSet, place, throughputs
from .scaling import predict_scaling

#: How a predicted speedup of training throughput is judged (:data:`gpukit.grading.TRAINING_THROUGHPUT`).
TOLERANCE = TRAINING_THROUGHPUT
#: The largest error of a predicted speedup within target, a share of the published one.
RATIO_TOLERANCE = TOLERANCE.speedup
#: A winner is only called when the published results differ by more than this.
WINNER_MARGIN = TOLERANCE.winner_margin
#: Share of same-source speedups that must land within :data:`RATIO_TOLERANCE` in each family.
FAMILY_TARGET = TOLERANCE.target_share
#: The architectures a buyer sees at the top of most lists today, and how their pairs are judged:
#: 85% within ±20%, every winner right past a 15% gap (``docs/accuracy/perfmodel.md``'s section on
#: current GPUs).
CURRENT_ARCHITECTURES = ("Hopper", "Blackwell", "Ada Lovelace")
CURRENT_TOLERANCE = Tolerance(speedup=0.20, winner_margin=0.15, target_share=0.85)


def bare_ratio(pair: pd.Series, gpus: pd.DataFrame, column: str | None = None) -> float:
    """The naive prediction the model is graded beside: a pair's speedup (``gpu_a`` over ``gpu_b``)
    as the ratio of the tensor peak at the pair's precision (``column`` None) or of a catalogue
    column (``memory_bandwidth_gbs``); ``gpus`` is the catalogue indexed by GPU."""
    a, b = gpus.loc[pair["gpu_a"]], gpus.loc[pair["gpu_b"]]
    if column is None:
        return prec.math_unit(a, pair["precision"])[1] / prec.math_unit(b, pair["precision"])[1]
    return float(a[column]) / float(b[column])


def _profile_of(r) -> Profile:
    """The profile of a reference row's workload, batch, precision, mode, update and length."""
    seq_len = int(r["seq_len"]) if "seq_len" in r and pd.notna(r["seq_len"]) else None
    return _profile_cached(
        r["workload"],
        int(r["batch_size"]),
        r["precision"],
        r["mode"],
        r.get("update") or "per-tensor",
        seq_len,
    )


@functools.lru_cache(maxsize=512)
def _profile_cached(
    workload: str, batch: int, precision: str, mode: str, update: str, seq_len: int | None
) -> Profile:
    """A reference row's profile (a frozen value): the rows of one configuration share it, and the
    gradings build the same profiles again for every table."""
    return profile(
        workload,
        batch,
        precision,
        mode,
        update=update,
        **({"seq_len": seq_len} if seq_len is not None else {}),
    )


def place_runs(reference: pd.DataFrame, catalogue: pd.DataFrame) -> list[Placed | None]:
    """Each reference row profiled and placed on its GPU (None where the GPU cannot run it)."""
    out: list[Placed | None] = []
    for _, r in reference.iterrows():
        prof = _profile_of(r)
        gpu = specs.row(catalogue, r["gpu"])
        try:
            out.append(place(prof, gpu))
        except prec.Unsupported:
            out.append(None)
    return out


def run_throughputs(cases: list[Placed | None] | PlacedSet, eff: Efficiency) -> np.ndarray:
    """Predicted items per second of each placed case (the roofline's :func:`step_time`; NaN where
    the GPU cannot run it). A fit that predicts the same cases many times passes them as one
    :class:`PlacedSet`, built once."""
    return throughputs(PlacedSet.of(cases), eff)


def pairs_of(reference: pd.DataFrame) -> list[tuple[int, int]]:
    """Position pairs (faster first, by the processed throughput) within one source, workload,
    precision and mode, in the order the groups first appear."""
    return faster_first(reference, PAIR_KEYS, processed_rate(reference), sort=False)


def validation_table(
    reference: pd.DataFrame | None = None,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    catalogue: pd.DataFrame | None = None,
    predicted: Sequence[float] | None = None,
) -> pd.DataFrame:
    """Every pair of GPUs measured one at a time by the same source on the same workload,
    precision and mode: published and predicted speedup of the faster (``gpu_a``) over the slower
    (``gpu_b``), the error, whether the predicted winner is right (judged where the published
    results differ by more than 10 %), and the workload's ``family``."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    full = (load_reference(catalogue=cat) if reference is None else reference).reset_index(drop=True)
    ref = single_gpu(full)
    if predicted is None:
        pred = run_throughputs(place_runs(ref, cat), efficiency)
    else:  # one prediction per row of ``reference``, or per single-GPU row
        pred = np.asarray(predicted, float)
        if len(pred) == len(full) and len(full) != len(ref):
            pred = pred[(full["gpus"].fillna(1).astype(int) == 1).to_numpy()]
    pairs = pairs_of(ref)
    if not pairs:
        return pd.DataFrame()
    return pair_table(
        ref.assign(family=ref["workload"].map(family)),
        pairs,
        processed_rate(ref),
        pred,
        TOLERANCE,
        shared=("source", "family", "workload", "precision", "mode"),
        each=("gpu",),
    )


def throughput_ratios(
    reference: pd.DataFrame | None = None,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    catalogue: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every single-GPU measurement with the model's prediction and published / predicted.

    Pairs are graded, not absolute speeds, so what the ratio tells is how alike it is across the
    GPUs of one source, workload and precision: a GPU whose ratio stands apart is one the model
    misjudges (the pair errors of :func:`validation_table` are quotients of these ratios)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = single_gpu(load_reference(catalogue=cat) if reference is None else reference)
    pred = run_throughputs(place_runs(ref, cat), efficiency)
    out = ref[["source", "workload", "precision", "mode", "gpu"]].copy()
    out["throughput"] = processed_rate(ref).to_numpy()
    out["family"] = out["workload"].map(family)
    out["predicted"] = pred
    out["ratio"] = out["throughput"] / out["predicted"]
    return out


def gpu_factors(ratios: pd.DataFrame) -> pd.Series:
    """One factor per GPU that best explains the ratios of :func:`throughput_ratios`: least squares
    on log(published / predicted) with a free level per column (source, workload, precision,
    mode; pairs are graded, so a column's level never matters; a column of one GPU is left out),
    normalised to a geometric mean of 1 over the GPUs.

    A diagnostic, never applied to a prediction: multiplying each GPU's predictions by its factor
    and grading again (:func:`validation_table` with ``predicted=``) shows how far anything that
    depends on the GPU alone (a clock, a cache, a power limit) could take the grading, and what is
    left is how each GPU's speed varies with the workload and precision."""
    frame = ratios[np.isfinite(ratios["ratio"]) & (ratios["ratio"] > 0)]
    frame = frame[paired(frame)]  # a GPU alone in its column says nothing against the others
    columns = frame.groupby(PAIR_KEYS, sort=True).ngroup().to_numpy()
    gpus = sorted(frame["gpu"].unique())
    design = np.zeros((len(frame), columns.max() + 1 + len(gpus)))
    design[np.arange(len(frame)), columns] = 1.0
    design[np.arange(len(frame)), columns.max() + 1 + frame["gpu"].map(gpus.index).to_numpy()] = 1.0
    coef, *_ = np.linalg.lstsq(design, np.log(frame["ratio"].to_numpy()), rcond=None)
    logs = coef[columns.max() + 1 :]
    return pd.Series(np.exp(logs - logs.mean()), index=gpus, name="factor")


def summarize_by_family(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`summarize_validation` per workload family, with whether it meets the targets
    (:data:`FAMILY_TARGET` of speedups within ±15 %, every decisive winner right)."""
    return summarize_by(table, "family", TOLERANCE)


def summarize_validation(table: pd.DataFrame) -> dict:
    """Headline figures of a validation table (:func:`gpukit.grading.summarize`)."""
    return summarize(table)


#: The pairs this kit exists for, as (faster-named, slower-named) natural names.
KEY_PAIRS = (("RTX A5000", "RTX A4000"), ("A40", "V100"))


def key_pairs(table: pd.DataFrame, pairs: Sequence[tuple[str, str]] = KEY_PAIRS) -> pd.DataFrame:
    """The rows of a validation table for the given pairs (any memory or form-factor variant)."""
    cat = specs.load_catalogue()
    keep = []
    for a, b in pairs:
        fa, fb = set(specs.resolve(a, cat).matches), set(specs.resolve(b, cat).matches)
        keep.append(
            table[
                (table["gpu_a"].isin(fa) & table["gpu_b"].isin(fb))
                | (table["gpu_a"].isin(fb) & table["gpu_b"].isin(fa))
            ]
        )
    return pd.concat(keep, ignore_index=True)


def scaling_validation(
    reference: pd.DataFrame | None = None,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    catalogue: pd.DataFrame | None = None,
    overlap: str = "none",
) -> pd.DataFrame:
    """Every multi-GPU measurement against the same source's single-GPU measurement of that GPU,
    workload and precision: published and predicted speedup of N GPUs over one (and the scaling
    efficiency, that speedup over N), the link the model assumes and what the source says of it."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = (load_reference(catalogue=cat) if reference is None else reference).reset_index(drop=True)
    ref = ref.assign(gpus=ref["gpus"].fillna(1).astype(int))
    rate = processed_rate(ref)
    rows = []
    keys = ["source", "gpu", "workload", "precision", "mode"]
    for key, group in ref.groupby(keys, sort=True):
        one = group[group["gpus"] == 1]
        if one.empty:
            continue
        base = one.iloc[0]
        gpu = specs.row(cat, base["gpu"])
        for _, r in group[group["gpus"] > 1].sort_values("gpus").iterrows():
            n = int(r["gpus"])
            link = source_link(r.get("link"))
            try:
                single = predict_scaling(_profile_of(base), gpu, 1, efficiency)
                multi = predict_scaling(_profile_of(r), gpu, n, efficiency, link=link, overlap=overlap)
            except prec.Unsupported:
                continue
            published = rate.at[r.name] / rate.at[base.name]
            predicted = multi["throughput"] / single["throughput"]
            rows.append(
                {
                    **dict(zip(keys, key)),
                    "family": "scaling",
                    "gpus": n,
                    "link": multi["link"],
                    "source_link": r.get("link") or "not stated",
                    "published_speedup": published,
                    "predicted_speedup": predicted,
                    "published_efficiency": published / n,
                    "predicted_efficiency": predicted / n,
                    "error_pct": 100 * (predicted / published - 1),
                    "within_tolerance": bool(TOLERANCE.within(published, predicted)),
                }
            )
    return pd.DataFrame(rows)


def system_throughputs(
    systems: pd.DataFrame,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    catalogue: pd.DataFrame | None = None,
    overlap: str = "none",
) -> np.ndarray:
    """Predicted items per second of each multi-GPU row, at its own GPU count, batch per GPU and
    link (:func:`gpukit.perfmodel.scaling.predict_scaling`; NaN where its GPU cannot run it or its
    link cannot join that many)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    out = []
    for _, r in systems.iterrows():
        try:
            out.append(
                predict_scaling(
                    _profile_of(r),
                    specs.row(cat, r["gpu"]),
                    int(r["gpus"]),
                    efficiency,
                    link=source_link(r.get("link")),
                    overlap=overlap,
                )["throughput"]
            )
        except (prec.Unsupported, ParameterError):
            out.append(np.nan)
    return np.array(out, float)


def _system_pairs(systems: pd.DataFrame) -> list[tuple[int, int]]:
    """Positions of the systems to compare: for each two GPUs of one source, workload, precision and
    mode, their systems of each GPU count both have, or, with no count in common, the largest of
    each (a source's 4- against its 8-GPU server)."""
    pairs = []
    for _, column in systems.groupby(PAIR_KEYS, sort=False):
        by_gpu = {g: dict(zip(rows["gpus"], rows.index)) for g, rows in column.groupby("gpu", sort=False)}
        gpus = list(by_gpu)
        for x, g in enumerate(gpus):
            for h in gpus[x + 1 :]:
                common = sorted(set(by_gpu[g]) & set(by_gpu[h]))
                if common:
                    pairs += [(by_gpu[g][n], by_gpu[h][n]) for n in common]
                else:
                    pairs.append((by_gpu[g][max(by_gpu[g])], by_gpu[h][max(by_gpu[h])]))
    return pairs


def system_validation(
    reference: pd.DataFrame | None = None,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    catalogue: pd.DataFrame | None = None,
    overlap: str = "none",
    predicted: Sequence[float] | None = None,
) -> pd.DataFrame:
    """Every pair of multi-GPU systems of different GPUs one source measured alike (workload,
    precision, mode), graded by their throughput per GPU: published and predicted speedup of the
    faster system's GPU (``gpu_a`` on ``gpus_a`` of them) over the slower's, each system predicted
    at its own GPU count, batch per GPU and link (:func:`system_throughputs`, or ``predicted``, one
    figure per multi-GPU row). Two GPUs are compared at each GPU count both were run on, or, with
    none in common, on the largest system of each: per GPU, so that a source's 4-GPU server and its
    8-GPU one compare. Some publishers run only whole servers (MLPerf Training's results are 4- and
    8-GPU systems): this grades the model on them. One GPU on several and on one is
    :func:`scaling_validation`'s."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = load_reference(catalogue=cat) if reference is None else reference
    counts = ref["gpus"].fillna(1).astype(int) if "gpus" in ref else pd.Series(1, index=ref.index)
    systems = ref[counts > 1].reset_index(drop=True)
    systems = systems.assign(gpus=systems["gpus"].astype(int), family=systems["workload"].map(family))
    candidates = _system_pairs(systems)
    if not candidates:
        return pd.DataFrame()
    if predicted is None:  # only the systems a pair compares: a GPU run alone is never profiled
        needed = sorted({k for pair in candidates for k in pair})
        pred = np.full(len(systems), np.nan)
        pred[needed] = system_throughputs(systems.iloc[needed], efficiency, cat, overlap)
    else:
        pred = np.asarray(predicted, float)
    per_gpu = processed_rate(systems).to_numpy() / systems["gpus"].to_numpy()
    pred_per_gpu = pred / systems["gpus"].to_numpy()
    pairs = [
        (i, j) if per_gpu[i] >= per_gpu[j] else (j, i)
        for i, j in candidates
        if np.isfinite(pred_per_gpu[i]) and np.isfinite(pred_per_gpu[j])
    ]
    return pair_table(
        systems,
        pairs,
        per_gpu,
        pred_per_gpu,
        TOLERANCE,
        shared=("source", "family", "workload", "precision", "mode"),
        each=("gpu", "gpus"),
    )


@functools.lru_cache(maxsize=4)
def default_validation(family_name: str | None = None) -> pd.DataFrame:
    """:func:`validation_table` of the shipped measurements with the default factors, of one
    workload family or all (treat as read-only). Computed once for the code and data at hand and
    kept (:mod:`gpukit.cache`): a transformer family needs no TensorFlow, but the CNN family
    builds ResNet-50 to walk it."""

    def grade() -> pd.DataFrame:
        ref = cached_reference(str(REFERENCE_PATH))
        if family_name is not None:
            ref = ref[[family(w) == family_name for w in ref["workload"]]]
        return validation_table(ref)

    inputs = [*cache.data_files(), REFERENCE_PATH]
    return cache.cached(f"perfmodel-validation-{family_name or 'all'}", inputs, grade)


@functools.lru_cache(maxsize=8)
def family_accuracy(family_name: str) -> dict:
    """How right the default model is in a family (``CNN``, ``transformer``, ``scaling``), graded
    on every published measurement: pairs, share within ±15 %, median error, winners right, and
    the workloads and GPUs graded. Empty (``pairs`` 0) when nothing was published. Kept between
    runs (:mod:`gpukit.cache`): grading the scaling family builds ResNet-50 in TensorFlow."""
    inputs = [*cache.data_files(), REFERENCE_PATH]
    return cache.cached(f"perfmodel-accuracy-{family_name}", inputs, lambda: _family_accuracy(family_name))


def _family_accuracy(family_name: str) -> dict:
    if family_name == "scaling":
        table = scaling_validation(cached_reference(str(REFERENCE_PATH)))
        if table.empty:
            return {"family": family_name, "pairs": 0}
        err = table["error_pct"].abs()
        return {
            "family": family_name,
            "pairs": int(len(table)),
            "within_tolerance": int(table["within_tolerance"].sum()),
            "median_abs_error_pct": float(err.median()),
            "max_abs_error_pct": float(err.max()),
            "decisive_pairs": 0,
            "winners_right": 0,
            "workloads": tuple(sorted(table["workload"].unique())),
            "gpus": tuple(sorted(table["gpu"].unique())),
        }
    table = default_validation(family_name)
    if table.empty:
        return {"family": family_name, "pairs": 0}
    return {
        "family": family_name,
        **summarize_validation(table),
        "workloads": tuple(sorted(table["workload"].unique())),
        "gpus": tuple(sorted(set(table["gpu_a"]) | set(table["gpu_b"]))),
    }


def accuracy_text(family_name: str) -> str:
    """One phrase of a family's measured accuracy, for tables and verdicts: "within ±15% in <n> of
    <pairs> published same-source speedups, median error <e>%", or "not graded"."""
    if family_name == "synthetic":
        return "not graded (a single kernel; no publication measures it the same way)"
    a = family_accuracy(family_name)
    if not a["pairs"]:
        return "not graded (no published measurement)"
    what = "N-GPU speedups" if family_name == "scaling" else "same-source speedups"
    return (
        f"within ±{RATIO_TOLERANCE:.0%} in {a['within_tolerance']} of {a['pairs']} published {what}, "
        f"median error {a['median_abs_error_pct']:.1f}%"
    )


def grading_statement(workload: str, count: int = 1, table: pd.DataFrame | None = None) -> str:
    """What the published measurements say of predictions of ``workload`` (on ``count`` GPUs):
    the family's measured error, and the GPUs of ``table`` (a :func:`predict_table` frame) that
    no published measurement in the family covers."""
    key = str(workload).strip().lower()
    if key in SYNTHETIC:
        return (
            f"Not graded: {key} is a synthetic kernel; no publication measures it the same way "
            "(docs/accuracy/perfmodel.md grades ResNet-50, BERT and multi-GPU scaling)"
        )
    fam = "scaling" if count > 1 else family(key)
    a = family_accuracy(fam)
    if not a["pairs"]:
        return f"Not graded: no published {fam} measurement to check these predictions against"
    on = ", ".join(a["workloads"])
    line = f"Graded ({fam}, on {on}): {accuracy_text(fam)} (docs/accuracy/perfmodel.md)"
    if key not in a["workloads"] and fam != "scaling":
        line += f"; {key} itself has no published measurement"
    if table is not None and "graded" in table:
        outside = [str(g) for g, ok in zip(table["gpu"], table["graded"]) if not ok]
        if outside:
            line += (
                f"; outside what was graded: {', '.join(outside)} (each with the error of GPUs of its "
                "architecture held out of the fit, the error band column)"
            )
    return line
