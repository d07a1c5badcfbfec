"""Grading: predictions against published measurements, the efficiency fit, leave one out.

``data/reference_benchmarks.csv`` holds published training throughputs, each row sourced and
dated, on one GPU or several. Predictions never read it; it grades them by speedup ratios
within one source (:func:`validation_table`, per workload family: :func:`family`), by the
speedup of N GPUs over one of the same kind (:func:`scaling_validation`), fits the efficiency
factors (:func:`fit_efficiency`) and checks that fit on GPUs (:func:`leave_one_gpu_out`) and
publications (:func:`leave_one_source_out`) it never saw.
"""

from __future__ import annotations

import functools
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
from ..errors import DataError, ParameterError, Problem
from ..resources import DATA_DIR
from .profiles import MODES, UPDATES, Profile, profile
from .roofline import DEFAULT_EFFICIENCY, Efficiency, Placed, place, step_time

REFERENCE_PATH = DATA_DIR / "reference_benchmarks.csv"
REFERENCE_SCHEMA: tuple[Field, ...] = (
    Field("source", "text", help="a short id; ratios are only taken within one source"),
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("source_gpu_name", "text", help="the GPU as the source names it"),
    Field("workload", "choice", choices=("resnet50", "transformer", "bert-base-squad", "bert-large-squad")),
    Field("precision", "choice", choices=prec.KERAS_PRECISIONS),
    Field("mode", "choice", choices=MODES),
    Field("gpus", "int", low=1, high=1024, default="1", help="how many GPUs ran it (data parallel)"),
    Field("batch_size", "int", low=1, high=1_000_000, help="per GPU"),
    Field(
        "seq_len",
        "int",
        required=False,
        low=1,
        high=1_000_000,
        default="",
        help="tokens per sequence of a transformer workload",
    ),
    Field("throughput", "float", low=1e-6, high=1e12),
    Field("throughput_unit", "choice", choices=("images/s", "tokens/s", "sequences/s")),
    Field("framework", "text"),
    Field("source_url", "url"),
    Field("measured", "date", required=False, help="when the source ran it, YYYY-MM-DD, if it says"),
    Field("retrieved", "date", help="when gpukit read the source, YYYY-MM-DD"),
    Field(
        "link",
        "text",
        required=False,
        default="",
        help="what the source says of how several GPUs were connected",
    ),
    Field(
        "update",
        "choice",
        choices=UPDATES,
        default="per-tensor",
        help="how the source's script runs the optimizer's update (gpukit.perfmodel.profiles.UPDATES)",
    ),
    Field(
        "counted_steps",
        "int",
        required=False,
        low=1,
        high=1e9,
        default="",
        help="steps the source's throughput figure counts (run_squad.py: --max_steps), from its log",
    ),
    Field(
        "epochs",
        "float",
        required=False,
        low=1e-3,
        high=1e6,
        default="",
        help="the training loop's epoch limit (run_squad.py: --num_train_epochs), from its log",
    ),
    Field(
        "train_examples",
        "int",
        required=False,
        low=1,
        high=1e12,
        default="",
        help="examples one epoch draws from (run_squad.py logs training_features)",
    ),
    Field(
        "timed_from",
        "int",
        required=False,
        low=0,
        high=1e9,
        default="",
        help="a step the run's log timestamps (run_squad.py: its DLL 'Training Iteration' lines)",
    ),
    Field("timed_to", "int", required=False, low=1, high=1e9, default="", help="a later step it timestamps"),
    Field(
        "timed_seconds",
        "float",
        required=False,
        low=1e-6,
        high=1e9,
        default="",
        help="seconds between those two timestamps (the mean over the runs a row averages)",
    ),
    Field("note", "text", required=False),
)
#: The columns that say how long a run_squad.py run really was: all three or none.
HARNESS_LOOP = ("counted_steps", "epochs", "train_examples")
#: Two timestamped steps of the run's log: all three or none, and only with :data:`HARNESS_LOOP`.
TIMED = ("timed_from", "timed_to", "timed_seconds")


def squad_steps(
    train_examples: int, gpus: int, batch: int, epochs: float, counted_steps: int
) -> tuple[int, float]:
    """The steps a run of NVIDIA's BERT ``run_squad.py`` (the harness Lambda's SQuAD figures come
    from) really took, and the sequences it processed over those its throughput figure counts.

    The script reports ``train_batch_size x max_steps x world_size / e2e_train_time``. Its loop
    breaks once ``global_step > max_steps`` (so ``max_steps + 1`` steps), or earlier when the epochs
    run out: each of ``int(num_train_epochs)`` epochs is one pass over the process's shard of the
    training set (``DistributedSampler`` pads it to ``ceil(examples / world_size)``), in batches of
    ``train_batch_size``, the last one partial. On eight GPUs at large batches the epochs run out
    first, and the figure counts steps the run never took (an H100 SXM5 run at 320 a GPU: 70 steps
    counted as 100)."""
    per_epoch = math.ceil(math.ceil(train_examples / gpus) / batch)
    steps = min(int(counted_steps) + 1, int(epochs) * per_epoch)
    return steps, squad_sequences(train_examples, gpus, batch, 0, steps) / (batch * counted_steps)


def squad_sequences(train_examples: int, gpus: int, batch: int, first: int, last: int) -> int:
    """Sequences one process of a ``run_squad.py`` run takes in global steps ``first + 1`` to ``last``:
    ``batch`` a step, but the last step of each epoch takes what is left of the process's shard."""
    shard = math.ceil(train_examples / gpus)
    per_epoch = math.ceil(shard / batch)
    last_batch = shard - (per_epoch - 1) * batch
    ends = last // per_epoch - first // per_epoch  # epoch ends among the steps
    return (last - first) * batch - ends * (batch - last_batch)


def load_reference(
    path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None, today: date | None = None
) -> pd.DataFrame:
    """Published measurements, validated: every row sourced, dated and naming a catalogue GPU."""
    p = Path(path) if path else REFERENCE_PATH
    cat = specs.load_catalogue() if catalogue is None else catalogue
    parsed, problems = parse_rows(p, REFERENCE_SCHEMA, today or date.today(), "measurement")
    records = specs.resolve_rows(
        p,
        parsed,
        cat,
        lambda r: (r["source"], r["gpu"], r["workload"], r["precision"], r["mode"], r["gpus"]),
        problems,
        "same source, GPU, workload, precision, mode and GPU count",
    )
    for line, r in parsed:
        given = [c for c in HARNESS_LOOP if r[c] is not None]
        if given and len(given) < len(HARNESS_LOOP):
            missing = next(c for c in HARNESS_LOOP if r[c] is None)
            problems.append(
                Problem(
                    p,
                    line,
                    missing,
                    f"is empty while {', '.join(given)} is given; fill all of "
                    f"{', '.join(HARNESS_LOOP)} from the run's log, or none",
                    r["source"],
                )
            )
        timed = [c for c in TIMED if r[c] is not None]
        if timed and (len(timed) < len(TIMED) or len(given) < len(HARNESS_LOOP)):
            problems.append(
                Problem(
                    p,
                    line,
                    timed[0],
                    f"needs all of {', '.join(TIMED + HARNESS_LOOP)}: the steps "
                    "between two timestamps are counted from the harness loop; fill them or none",
                    r["source"],
                )
            )
        elif timed and r["timed_to"] <= r["timed_from"]:
            problems.append(
                Problem(
                    p,
                    line,
                    "timed_to",
                    f"{r['timed_to']} is not after timed_from {r['timed_from']}; write the later step",
                    r["source"],
                )
            )
    if problems:
        raise DataError(problems)
    return with_processed_throughput(to_frame(records, REFERENCE_SCHEMA))


def with_processed_throughput(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``steps_run`` and ``processed_throughput``: what each run processed per second.
    That is the published ``throughput`` unless the row gives its harness loop (:data:`HARNESS_LOOP`),
    whose steps :func:`squad_steps` works out. Where the row also gives two timestamped steps
    (:data:`TIMED`), ``steady_throughput`` is the rate between them, without the first steps' warm-up
    (autotuning, allocation) that the published time includes (docs/perfmodel-accuracy.md says how
    much); NaN elsewhere."""
    steps, rate, steady = [], [], []
    for _, r in frame.iterrows():
        loop = [r.get(c) for c in HARNESS_LOOP]
        if any(v is None or pd.isna(v) for v in loop):
            steps.append(pd.NA)
            rate.append(r["throughput"])
            steady.append(math.nan)
            continue
        counted, epochs, examples = loop
        gpus, batch = int(r["gpus"]), int(r["batch_size"])
        n, share = squad_steps(int(examples), gpus, batch, float(epochs), int(counted))
        steps.append(n)
        rate.append(r["throughput"] * share)
        timed = [r.get(c) for c in TIMED]
        steady.append(
            math.nan
            if any(v is None or pd.isna(v) for v in timed)
            else gpus * squad_sequences(int(examples), gpus, batch, int(timed[0]), int(timed[1])) / timed[2]
        )
    return frame.assign(
        steps_run=pd.array(steps, dtype="Int64"),
        processed_throughput=np.array(rate, float),
        steady_throughput=np.array(steady, float),
    )


def _rate(reference: pd.DataFrame) -> pd.Series:
    """What each measured run processed per second: ``processed_throughput``, worked out here for a
    frame that does not come from :func:`load_reference`."""
    if "processed_throughput" not in reference:
        reference = with_processed_throughput(reference)
    return reference["processed_throughput"]


#: The benchmark's single-kernel workloads: no publication measures them the same way.
SYNTHETIC = ("matmul", "conv", "bandwidth")


def family(workload: str) -> str:
    """The workload family a prediction is graded in: ``CNN``, ``transformer``, or ``synthetic``
    for a single kernel (never graded)."""
    from ..models import transformer_task

    key = str(workload).strip().lower()
    if key in SYNTHETIC:
        return "synthetic"
    return "transformer" if key == "transformer" or transformer_task(key) else "CNN"


def graded_workloads(path: str | os.PathLike | None = None) -> set[str]:
    """Workloads with published single-GPU measurements to grade predictions against."""
    ref = _reference_cached(str(Path(path) if path else REFERENCE_PATH))
    return {str(w).lower() for w in ref.loc[ref["gpus"].fillna(1).astype(int) == 1, "workload"]}


#: What makes a column of single-GPU measurements: pairs are taken within one of these.
PAIR_KEYS = ["source", "workload", "precision", "mode"]


def _paired(single: pd.DataFrame) -> pd.Series:
    """Which single-GPU measurements have a pair: another GPU in their source, workload, precision
    and mode (one measured alone grades nothing)."""
    return single.groupby(PAIR_KEYS)["gpu"].transform("nunique") >= 2


def graded_gpus(family_name: str, path: str | os.PathLike | None = None) -> set[str]:
    """Catalogue GPUs with a published measurement in a family: ``CNN`` and ``transformer`` on
    one GPU, with another GPU measured by the same source alike (pairs are what is graded: a GPU
    a source measured alone is not graded), ``scaling`` on several (with the same source's
    single-GPU figure to compare)."""
    ref = _reference_cached(str(Path(path) if path else REFERENCE_PATH))
    gpus = ref["gpus"].fillna(1).astype(int)
    if family_name == "scaling":
        multi = ref[gpus > 1]
        single = set(zip(ref.loc[gpus == 1, "source"], ref.loc[gpus == 1, "gpu"]))
        return {g for s, g in zip(multi["source"], multi["gpu"]) if (s, g) in single}
    single = ref[gpus == 1]
    single = single[[family(w) == family_name for w in single["workload"]]]
    return set(single.loc[_paired(single), "gpu"])


@functools.lru_cache(maxsize=4)
def _reference_cached(path: str) -> pd.DataFrame:
    return load_reference(path)


def _profile_of(r) -> Profile:
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


def _single(reference: pd.DataFrame) -> pd.DataFrame:
    """The rows measured on one GPU."""
    if "gpus" not in reference:
        return reference.reset_index(drop=True)
    return reference[reference["gpus"].fillna(1).astype(int) == 1].reset_index(drop=True)


def _placed(reference: pd.DataFrame, catalogue: pd.DataFrame) -> list[Placed | None]:
    """Each reference row profiled and placed on its GPU (None where the GPU cannot run it)."""
    out: list[Placed | None] = []
    for _, r in reference.iterrows():
        prof = _profile_of(r)
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
    rate = _rate(ref)
    for _, group in ref.groupby(PAIR_KEYS, sort=False):
        idx = list(group.index)
        for x in range(len(idx)):
            for y in range(x + 1, len(idx)):
                i, j = idx[x], idx[y]
                if rate[i] < rate[j]:
                    i, j = j, i
                pairs.append((i, j))
    return pairs


#: A winner is only called when the published results differ by more than this.
WINNER_MARGIN = 0.10
#: The target for predicted speedup ratios.
RATIO_TOLERANCE = 0.15


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
    ref = _single(full)
    if predicted is None:
        pred = _throughputs(_placed(ref, cat), efficiency)
    else:  # one prediction per row of ``reference``, or per single-GPU row
        pred = np.asarray(predicted, float)
        if len(pred) == len(full) and len(full) != len(ref):
            pred = pred[(full["gpus"].fillna(1).astype(int) == 1).to_numpy()]
    rows = []
    rate = _rate(ref)
    for i, j in _pairs(ref):
        a, b = ref.iloc[i], ref.iloc[j]
        published = rate[i] / rate[j]
        ratio = pred[i] / pred[j]
        decisive = bool(published > 1 + WINNER_MARGIN)
        rows.append(
            {
                "source": a["source"],
                "family": family(a["workload"]),
                "workload": a["workload"],
                "precision": a["precision"],
                "mode": a["mode"],
                "gpu_a": a["gpu"],
                "gpu_b": b["gpu"],
                "published_speedup": published,
                "predicted_speedup": ratio,
                "error_pct": 100 * (ratio / published - 1),
                "decisive": decisive,
                "winner_right": bool(ratio > 1) if decisive else None,
                "within_tolerance": bool(abs(ratio / published - 1) <= RATIO_TOLERANCE),
            }
        )
    return pd.DataFrame(rows)


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
    ref = _single(load_reference(catalogue=cat) if reference is None else reference)
    pred = _throughputs(_placed(ref, cat), efficiency)
    out = ref[["source", "workload", "precision", "mode", "gpu"]].copy()
    out["throughput"] = _rate(ref).to_numpy()
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
    frame = frame[_paired(frame)]  # a GPU alone in its column says nothing against the others
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
    rows = []
    for fam, group in table.groupby("family", sort=True):
        s = summarize_validation(group)
        share = s["within_tolerance"] / s["pairs"] if s["pairs"] else math.nan
        rows.append(
            {
                "family": fam,
                **s,
                "within_share": share,
                "meets_target": bool(share >= FAMILY_TARGET and s["winners_right"] == s["decisive_pairs"]),
            }
        )
    return pd.DataFrame(rows)


#: Share of same-source speedups that must land within :data:`RATIO_TOLERANCE` in each family.
FAMILY_TARGET = 0.90


def summarize_validation(table: pd.DataFrame) -> dict:
    """Headline figures of a validation table."""
    if table.empty:
        return {
            "pairs": 0,
            "median_abs_error_pct": math.nan,
            "max_abs_error_pct": math.nan,
            "within_tolerance": 0,
            "decisive_pairs": 0,
            "winners_right": 0,
        }
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
        keep.append(
            table[
                (table["gpu_a"].isin(fa) & table["gpu_b"].isin(fb))
                | (table["gpu_a"].isin(fb) & table["gpu_b"].isin(fa))
            ]
        )
    return pd.concat(keep, ignore_index=True)


#: The grid :func:`fit_efficiency` searches.
FIT_GRID = {
    "tensor": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0),
    "cuda": (0.5, 0.7, 0.9),
    "elementwise": (0.01, 0.015, 0.02, 0.03, 0.04, 0.06),
    "memory": (0.2, 0.3, 0.4, 0.5, 0.7),
}


def _pair_log_error(pred: np.ndarray, pairs, published) -> float:
    """Mean absolute log error of the speedups of ``pairs`` under predicted throughputs ``pred``."""
    ia, ib = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    return float(np.nanmean(np.abs(np.log(pred[ia] / pred[ib] / published))))


def _log_error(cases, pairs, published, eff: Efficiency) -> float:
    """Mean absolute log error of the predicted speedups of ``pairs``: what the fit minimises."""
    return _pair_log_error(_throughputs(cases, eff), pairs, published)


def _grid_throughputs(cases, base: Efficiency, grid) -> list[tuple[Efficiency, np.ndarray]]:
    """Every efficiency on ``grid`` with the throughputs it predicts for ``cases``. A prediction does
    not depend on which pairs a fit reads, so a leave-one-out computes these once for all its fits."""
    return [
        (eff, _throughputs(cases, eff))
        for eff in (
            replace(base, tensor=t, cuda=c, elementwise=e, memory=m)
            for t in grid["tensor"]
            for c in grid["cuda"]
            for e in grid["elementwise"]
            for m in grid["memory"]
        )
    ]


def _fit(
    predicted: list[tuple[Efficiency, np.ndarray]], pairs, published, base: Efficiency
) -> tuple[Efficiency, float]:
    """The grid point (:func:`_grid_throughputs`) with the lowest log error on ``pairs``; the first
    in grid order among equals."""
    best, best_err = base, math.inf
    for eff, pred in predicted:
        err = _pair_log_error(pred, pairs, published)
        if err < best_err - 1e-12:
            best, best_err = eff, err
    return best, best_err


def _pair_inputs(reference: pd.DataFrame, catalogue: pd.DataFrame | None, what: str):
    """The single-GPU rows of ``reference``, placed on their GPUs, their same-source pairs and the
    published speedups: what a fit works on (``what``: the verb the error names)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = _single(reference)
    pairs = _pairs(ref)
    if not pairs:
        raise ParameterError(f"no pair of GPUs measured by the same source to {what}")
    rate = _rate(ref)
    published = np.array([rate[i] / rate[j] for i, j in pairs])
    return ref, _placed(ref, cat), pairs, published


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
    ref = _single(load_reference(catalogue=cat) if reference is None else reference)
    cases = _placed(ref, cat)
    pairs = _pairs(ref)
    rate = _rate(ref)
    published = np.array([rate[i] / rate[j] for i, j in pairs])
    predicted = _grid_throughputs(cases, base, grid or FIT_GRID)
    rows = []
    for label, held in groups(ref, pairs):
        rest = [k for k in range(len(pairs)) if k not in set(held)]
        if not held or not rest:
            continue
        eff, _ = _fit(predicted, [pairs[k] for k in rest], published[rest], base)
        table = validation_table(ref, eff, cat, predicted=_throughputs(cases, eff)).iloc[held]
        for fam, group in table.groupby("family", sort=True):
            s = summarize_validation(group)
            rows.append(
                {
                    "held_out": label,
                    "family": fam,
                    "pairs": s["pairs"],
                    "median_abs_error_pct": s["median_abs_error_pct"],
                    "max_abs_error_pct": s["max_abs_error_pct"],
                    "within_15_pct": f"{s['within_tolerance']}/{s['pairs']}",
                    "winners_right": f"{s['winners_right']}/{s['decisive_pairs']}",
                    "fitted": f"tensor {eff.tensor:g}, cuda {eff.cuda:g}, elementwise {eff.elementwise:g}, "
                    f"memory {eff.memory:g}",
                }
            )
    return pd.DataFrame(rows)


def leave_one_gpu_out(
    reference: pd.DataFrame | None = None,
    catalogue: pd.DataFrame | None = None,
    base: Efficiency = DEFAULT_EFFICIENCY,
    grid: dict | None = None,
) -> pd.DataFrame:
    """For each GPU: fit on the pairs without it, then grade the pairs with it, per family."""

    def groups(ref, pairs):
        for gpu in sorted(ref["gpu"].unique()):
            yield gpu, [k for k, (i, j) in enumerate(pairs) if gpu in (ref.at[i, "gpu"], ref.at[j, "gpu"])]

    return _leave_out(reference, catalogue, base, grid, groups)


def leave_one_source_out(
    reference: pd.DataFrame | None = None,
    catalogue: pd.DataFrame | None = None,
    base: Efficiency = DEFAULT_EFFICIENCY,
    grid: dict | None = None,
) -> pd.DataFrame:
    """For each publication: fit on the others' pairs, grade its own (one harness's habits, its
    framework version, batch sizes and data pipeline, never seen by the fit), per family."""

    def groups(ref, pairs):
        for source in sorted(ref["source"].unique()):
            yield source, [k for k, (i, _) in enumerate(pairs) if ref.at[i, "source"] == source]

    return _leave_out(reference, catalogue, base, grid, groups)


def source_link(text) -> str | None:
    """The link a source's multi-GPU run really used, where its text says so: ``host`` when the
    harness disabled NCCL's peer-to-peer transport (``NCCL_P2P_DISABLE=1``: NCCL then stages
    through host memory even between NVLink-connected GPUs); otherwise None (the GPU's default,
    :func:`gpukit.perfmodel.scaling.default_link`)."""
    t = str(text or "")
    return "host" if "NCCL_P2P_DISABLE=1" in t and "commented out by then" not in t else None


def scaling_validation(
    reference: pd.DataFrame | None = None,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    catalogue: pd.DataFrame | None = None,
    overlap: str = "none",
) -> pd.DataFrame:
    """Every multi-GPU measurement against the same source's single-GPU measurement of that GPU,
    workload and precision: published and predicted speedup of N GPUs over one (and the scaling
    efficiency, that speedup over N), the link the model assumes and what the source says of it."""
    from .scaling import predict_scaling

    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = (load_reference(catalogue=cat) if reference is None else reference).reset_index(drop=True)
    ref = ref.assign(gpus=ref["gpus"].fillna(1).astype(int))
    rate = _rate(ref)
    rows = []
    keys = ["source", "gpu", "workload", "precision", "mode"]
    for key, group in ref.groupby(keys, sort=True):
        one = group[group["gpus"] == 1]
        if one.empty:
            continue
        base = one.iloc[0]
        gpu = cat.loc[cat["gpu"] == base["gpu"]].iloc[0]
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
                    "within_tolerance": bool(abs(predicted / published - 1) <= RATIO_TOLERANCE),
                }
            )
    return pd.DataFrame(rows)


@functools.lru_cache(maxsize=4)
def default_validation(family_name: str | None = None) -> pd.DataFrame:
    """:func:`validation_table` of the shipped measurements with the default factors, of one
    workload family or all (computed once per process; treat as read-only). A transformer family
    needs no TensorFlow; the CNN family builds ResNet-50 to walk it."""
    ref = _reference_cached(str(REFERENCE_PATH))
    if family_name is not None:
        ref = ref[[family(w) == family_name for w in ref["workload"]]]
    return validation_table(ref)


@functools.lru_cache(maxsize=8)
def family_accuracy(family_name: str) -> dict:
    """How right the default model is in a family (``CNN``, ``transformer``, ``scaling``), graded
    on every published measurement: pairs, share within ±15 %, median error, winners right, and
    the workloads and GPUs graded. Empty (``pairs`` 0) when nothing was published."""
    ref = _reference_cached(str(REFERENCE_PATH))
    if family_name == "scaling":
        table = scaling_validation(ref)
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
    """One phrase of a family's measured accuracy, for tables and verdicts: "±15 % in 120 of 146
    published speedups, median error 7.7 %", or "not graded"."""
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
            "(docs/perfmodel-accuracy.md grades ResNet-50, BERT and multi-GPU scaling)"
        )
    fam = "scaling" if count > 1 else family(key)
    a = family_accuracy(fam)
    if not a["pairs"]:
        return f"Not graded: no published {fam} measurement to check these predictions against"
    on = ", ".join(a["workloads"])
    line = f"Graded ({fam}, on {on}): {accuracy_text(fam)} (docs/perfmodel-accuracy.md)"
    if key not in a["workloads"] and fam != "scaling":
        line += f"; {key} itself has no published measurement"
    if table is not None and "graded" in table:
        outside = [str(g) for g, ok in zip(table["gpu"], table["graded"]) if not ok]
        if outside:
            line += f"; outside what was graded: {', '.join(outside)}"
    return line
