"""The grid's errors summed up per group: how close counts as within, the error bands per family
(and mode, or per model and precision) and the bands files ``gpukit fit`` reads."""

from __future__ import annotations

import statistics

#: The |error| (against the median run) up to which the page counts a case as within.
TOLERANCE = 0.15


def bands(rows: list[dict], keys: tuple[str, ...] = ("family",)) -> list[dict]:
    """Per family (or per the row ``keys`` given): cases, median |error|, and the band of errors
    (estimate / measured - 1) over every repeat, the band ``gpukit fit`` uses to call a fit borderline."""
    out = []
    for group in sorted({tuple(r[k] for k in keys) for r in rows}):
        rs = [r for r in rows if tuple(r[k] for k in keys) == group and r["measured"]]
        if not rs:
            continue
        errs = [r["predicted"] / m - 1 for r in rs for m in (r["low"], r["high"])]
        out.append(
            {
                **dict(zip(keys, group)),
                "cases": len(rs),
                "median_abs_error": statistics.median(abs(r["error"]) for r in rs),
                "worst_abs_error": max(abs(r["error"]) for r in rs),
                "worst_vs_highest": min(r["predicted"] / r["high"] - 1 for r in rs),
                "error_low": min(errs),
                "error_high": max(errs),
            }
        )
    return out


#: What ``data/memory_error.csv`` groups the grid's cases by: a training fit is judged by the
#: family's training cases, an inference fit by its inference cases (gpukit.memory.error_band).
BAND_KEYS = ("family", "mode")


def bands_csv(rows: list[dict], when: str, device_name: str, keys: tuple[str, ...] = BAND_KEYS) -> str:
    """:func:`bands` as ``data/memory_error.csv`` (by family and mode) or, with
    ``keys=("model", "precision")``, ``data/memory_error_models.csv`` (the models kept out of the
    grid, each by itself)."""
    lines = [
        ",".join(keys)
        + ",cases,median_abs_error,worst_abs_error,error_low,error_high,measured_on,date,source"
    ]
    for b in bands(rows, keys):
        lines.append(
            ",".join(str(b[k]) for k in keys) + f",{b['cases']},{b['median_abs_error']:.4f},"
            f"{b['worst_abs_error']:.4f},{b['error_low']:.4f},{b['error_high']:.4f},{device_name},{when},"
            "benchmarks/memory_accuracy.py"
        )
    return "\n".join(lines) + "\n"
