"""Fit tables: the estimate per model, batch size and GPU, with the verdict within the measured error,
measured peaks beside it where asked for, and the tables in GiB and in words.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence

import pandas as pd

from .. import precision as prec
from .. import specs
from ..errors import ParameterError
from ..units import GIB, MIB, missing
from .bands import error_band, largest_batch_band, verdict
from .estimate import DEFAULT_RUNTIME_RESERVE_BYTES, Estimator
from .measure import measure_in_subprocess

#: The columns of a fit table that :func:`error_note` reads after the scope, in its order.
ERROR_COLUMNS = ("error_low", "error_high", "median_abs_error", "error_cases")


def fit_table(
    estimator: Estimator,
    batches: Iterable[int],
    gpus,
    precision: str = "fp32",
    optimizer: str = "adam",
    mode: str = "train",
    runtime_reserve_bytes: int = DEFAULT_RUNTIME_RESERVE_BYTES,
):
    """One row per batch size x GPU: the estimate, the GPU's memory, fits, headroom, largest batch
    (and, where the model's family was measured, ``largest_batch_low`` to ``largest_batch_high``:
    the largest batch within the estimate's measured error, :func:`largest_batch_band`).

    ``gpus`` is a catalogue frame (e.g. :func:`gpukit.specs.select`).
    """
    p = prec.normalize(precision)
    rows = []
    largest: dict[str, int] = {}
    largest_band: dict[str, tuple] = {}
    family = estimator.family
    scope, band = error_band(estimator, p, mode)
    for b in batches:
        est = estimator.estimate(b, p, optimizer, mode, runtime_reserve_bytes)
        for _, g in gpus.iterrows():
            capacity = specs.gpu_memory_bytes(g)
            if g["gpu"] not in largest:
                largest[g["gpu"]] = estimator.largest_batch(
                    capacity, p, optimizer, mode, runtime_reserve_bytes
                )
                largest_band[g["gpu"]] = largest_batch_band(
                    estimator, capacity, band, p, optimizer, mode, runtime_reserve_bytes
                )
            rows.append(
                {
                    "model": estimator.label,
                    "input": estimator.input_label,
                    "batch_size": b,
                    "precision": p,
                    "optimizer": optimizer if mode == "train" else "none",
                    "mode": mode,
                    "tensor_bytes": est.tensor_bytes,
                    "total_bytes": est.total_bytes,
                    "gpu": g["gpu"],
                    "gpu_memory_bytes": capacity,
                    "fits": est.total_bytes <= capacity,
                    "verdict": verdict(est.total_bytes, est.tensor_bytes, capacity, band),
                    "headroom_bytes": capacity - est.total_bytes,
                    "largest_batch": largest[g["gpu"]],
                    "largest_batch_low": largest_band[g["gpu"]][0],
                    "largest_batch_high": largest_band[g["gpu"]][1],
                    "family": family,
                    "error_scope": scope,
                    "error_low": band["error_low"] if band else None,
                    "error_high": band["error_high"] if band else None,
                    "median_abs_error": band["median_abs_error"] if band else None,
                    "error_cases": band["cases"] if band else None,
                }
            )
    return pd.DataFrame(rows)


def fit_report(
    models: Sequence[str],
    batch_sizes: Sequence[int],
    gpus: Sequence[str] | None = None,
    precision: str = "fp32",
    optimizer: str = "adam",
    mode: str = "train",
    input_shape: Sequence[int] | None = None,
    seq_len: int | None = None,
    runtime_reserve_mib: float = DEFAULT_RUNTIME_RESERVE_BYTES / MIB,
    catalogue=None,
):
    """:func:`fit_table` for several models and the named GPUs (all catalogue GPUs by default)."""
    if isinstance(models, str):
        models = [models]
    if not models:
        raise ParameterError("no models given; name at least one, such as ResNet50 or bert-base")
    batches = list(batch_sizes)
    for b in batches:
        if not isinstance(b, int) or isinstance(b, bool) or b < 1:
            raise ParameterError(f"batch size {b!r} must be a whole number of at least 1")
    cat = specs.load_catalogue() if catalogue is None else catalogue
    selection = specs.select(cat, list(gpus) if gpus else None)
    reserve = int(runtime_reserve_mib * MIB)
    frames = [
        fit_table(Estimator(m, input_shape, seq_len), batches, selection, precision, optimizer, mode, reserve)
        for m in models
    ]
    out = pd.concat(frames, ignore_index=True)
    out.attrs["runtime_reserve_bytes"] = reserve
    return out


def breakdown(
    models: Sequence[str],
    batch_sizes: Sequence[int],
    precision: str = "fp32",
    optimizer: str = "adam",
    mode: str = "train",
    input_shape: Sequence[int] | None = None,
    seq_len: int | None = None,
):
    """Where the bytes go, per model and batch size, in MiB."""
    rows = []
    mib = MIB
    for m in [models] if isinstance(models, str) else models:
        est = Estimator(m, input_shape, seq_len)
        for b in batch_sizes:
            e = est.estimate(int(b), precision, optimizer, mode)
            rows.append(
                {
                    "model": e.model,
                    "batch_size": b,
                    "weights_mib": e.weights_bytes / mib,
                    "gradients_mib": e.gradients_bytes / mib,
                    "optimizer_state_mib": e.optimizer_bytes / mib,
                    "activations_mib": e.activations_bytes / mib,
                    "input_mib": e.input_bytes / mib,
                    "tensor_mib": e.tensor_bytes / mib,
                }
            )
    return pd.DataFrame(rows)


def fit_summary(fit):
    """The fit table in GiB, for reading."""
    gib = GIB
    band = [c for c in ("largest_batch_low", "largest_batch_high") if c in fit]
    out = fit[["model", "batch_size", "gpu", "fits", "largest_batch", *band]].copy()
    out.insert(2, "total_gib", fit["total_bytes"] / gib)
    out.insert(4, "gpu_memory_gib", fit["gpu_memory_bytes"] / gib)
    out.insert(5, "headroom_gib", fit["headroom_bytes"] / gib)
    verdicts = fit["verdict"] if "verdict" in fit else fit["fits"].map({True: "fits", False: "does not fit"})
    out["fits"] = verdicts.map({"fits": "yes", "does not fit": "no", "borderline": "borderline"})
    out["estimate_error"] = [
        error_note(*args)
        for args in zip(fit["error_scope"], *(fit.get(c, [None] * len(fit)) for c in ERROR_COLUMNS))
    ]
    return out


def batch_range(low, high) -> str:
    """``low`` to ``high`` largest batches as text ('' where the family was never measured)."""
    if missing(low) or missing(high):
        return ""
    return f"{int(low)}" if int(low) == int(high) else f"{int(low)}–{int(high)}"


def error_note(
    family: str | None, low: float | None, high: float | None, median: float | None, cases: int | None = None
) -> str:
    """The measured error of a model's family (the scope :func:`error_band` names), for a table
    cell; with ``cases``, how many measured cases the band is drawn from."""
    if not family:
        return "not graded (no measured family)"
    if missing(low):
        return f"{family}: not measured"
    over = "" if missing(cases) else f" over {int(cases)} case{'s' if int(cases) != 1 else ''}"
    return f"{family}: median {median:.0%}, {low:+.0%} to {high:+.0%}{over}"


def with_measurements(
    frame,
    estimator: Estimator,
    input_shape: Sequence[int] | None = None,
    repeats: int = 1,
    probe: Callable[..., dict] | None = None,
):
    """``frame`` (from :func:`fit_table`) with the measured peak of each model x batch on the
    attached device and the estimate's error. Each batch is measured ``repeats`` times, each run
    in a fresh process (``probe``, default :func:`measure_in_subprocess`): the allocator's peak
    moves from run to run (docs/accuracy/memory.md shows by how much), so the estimate is compared
    with the median run and the lowest and highest are shown (:func:`summarize_runs`)."""
    if repeats < 1:
        raise ParameterError(f"--repeats {repeats} must be at least 1")
    probe = probe or measure_in_subprocess
    frame = frame.copy()
    measured: dict[int, dict] = {}
    for b in sorted(set(frame["batch_size"])):
        first = frame[frame["batch_size"] == b].iloc[0]
        measured[b] = summarize_runs(
            [
                probe(
                    estimator.name,
                    int(b),
                    first["precision"],
                    first["optimizer"] if first["mode"] == "train" else "sgd",
                    first["mode"],
                    input_shape,
                    seq_len=estimator.seq_len,
                )
                for _ in range(repeats)
            ]
        )
    for column in (
        "measured_peak_bytes",
        "measured_low_bytes",
        "measured_high_bytes",
        "measured_runs",
        "measured_status",
        "measured_device",
        "measured_native_16bit",
    ):
        frame[column] = [measured[b][column] for b in frame["batch_size"]]
    frame["estimate_error"] = [
        (t / m - 1) if m else None for t, m in zip(frame["tensor_bytes"], frame["measured_peak_bytes"])
    ]
    return pd.DataFrame(frame)


def summarize_runs(runs: Sequence[dict]) -> dict:
    """Several measurements of one case (:func:`measure_in_subprocess` results) as one: the median
    peak of the runs that completed, the lowest and highest, how many completed, and the status,
    ``ok`` when every run completed, else the first other status with the count
    (``oom in 1 of 3 runs``: a case that runs out of memory only sometimes is borderline)."""
    ok = [r for r in runs if r.get("status") == "ok"]
    peaks = [int(r["measured_peak_bytes"]) for r in ok]
    failed = [r for r in runs if r.get("status") != "ok"]
    status = (
        "ok"
        if not failed
        else (
            failed[0].get("status", "error")
            if len(failed) == len(runs)
            else f"{failed[0].get('status', 'error')} in {len(failed)} of {len(runs)} runs"
        )
    )
    return {
        "measured_peak_bytes": int(statistics.median(peaks)) if peaks else None,
        "measured_low_bytes": min(peaks) if peaks else None,
        "measured_high_bytes": max(peaks) if peaks else None,
        "measured_runs": len(peaks),
        "measured_status": status,
        "measured_device": ok[0].get("device") if ok else None,
        "measured_native_16bit": ok[0].get("native_16bit") if ok else None,
    }


def copies_note(precision: str, native_16bit: Sequence[str] | None) -> str | None:
    """What a measurement in a 16-bit ``precision`` on a CPU whose 16-bit instructions were
    ``native_16bit`` (:func:`gpukit.bench.device.cpu_native_16bit`; None: not a CPU, or not recorded)
    holds that a GPU does not, in words; None where nothing."""
    p = prec.normalize(precision)
    if native_16bit is None or prec.itemsize(p) != 2 or p in native_16bit:
        return None
    return (
        f"this CPU has no {p} dot-product instructions, so TensorFlow multiplies through float32 copies "
        "a GPU does not hold"
    )


def _size(n: float, like: float | None = None, unit: bool = True) -> str:
    """``n`` bytes in the unit that reads best for ``like`` (default ``n``): GiB from 1 GiB up,
    MiB below (a small model's step); ``unit=False`` leaves the unit off (the low end of a range)."""
    scale, name, digits = (GIB, "GiB", 2) if (like or n) >= GIB else (MIB, "MiB", 1)
    return f"{n / scale:.{digits}f}" + (f" {name}" if unit else "")


def format_fit(frame) -> str:
    """A readable fit report: per model and batch, the estimate and where it fits."""
    lines = []
    gib = GIB
    for (model, batch), part in frame.groupby(["model", "batch_size"], sort=False):
        first = part.iloc[0]
        head = (
            f"{model}, {first['input']}, batch {batch}, {first['mode']}, {first['precision']}"
            + (f", {first['optimizer']}" if first["mode"] == "train" else "")
            + f": tensors {_size(first['tensor_bytes'])}, total {_size(first['total_bytes'])}"
        )
        if "measured_peak_bytes" in part and first.get("measured_peak_bytes"):
            runs = int(first.get("measured_runs") or 1)
            low, high = first["measured_low_bytes"], first["measured_high_bytes"]
            spread = f" ({_size(low, high, unit=False)}–{_size(high)} over {runs} runs)" if runs > 1 else ""
            head += (
                f"; measured {_size(first['measured_peak_bytes'])}{spread} on {first['measured_device']} "
                f"(estimate {first['estimate_error']:+.1%}{' of the median' if runs > 1 else ''})"
            )
            if first["measured_status"] != "ok":
                head += f"; {first['measured_status']}"
            lacks = copies_note(first["precision"], first.get("measured_native_16bit"))
            if lacks:
                head += f"; {lacks}"
        elif "measured_status" in part:
            head += f"; measurement: {first['measured_status']}"
        lines.append(head)
        if first["error_scope"]:
            lines.append(
                "  estimate's measured error: "
                + error_note(first["error_scope"], *(first.get(c) for c in ERROR_COLUMNS))
            )
        verdicts = (
            part["verdict"] if "verdict" in part else part["fits"].map({True: "fits", False: "does not fit"})
        )
        fits = part[verdicts == "fits"]
        ranges = [
            batch_range(lo, hi)
            for lo, hi in zip(
                part.get("largest_batch_low", [None] * len(part)),
                part.get("largest_batch_high", [None] * len(part)),
            )
        ]
        within = {g: f"; {r} within the measured error" if r else "" for g, r in zip(part["gpu"], ranges)}
        lines.append(
            "  fits on: "
            + (
                ", ".join(
                    f"{g} ({h / gib:.1f} GiB spare, up to batch {lb}{within[g]})"
                    for g, h, lb in zip(fits["gpu"], fits["headroom_bytes"], fits["largest_batch"])
                )
                if len(fits)
                else "nowhere"
            )
        )
        close = part[verdicts == "borderline"]
        if len(close):
            lines.append(
                "  borderline (within the estimate's measured error): "
                + ", ".join(
                    f"{g} ({h / gib:+.1f} GiB)" for g, h in zip(close["gpu"], close["headroom_bytes"])
                )
            )
        misses = part[verdicts == "does not fit"]
        if len(misses):
            lines.append(
                "  too big for: "
                + ", ".join(
                    f"{g} ({-h / gib:.1f} GiB short, largest batch {lb})"
                    for g, h, lb in zip(misses["gpu"], misses["headroom_bytes"], misses["largest_batch"])
                )
            )
    return "\n".join(lines)
