"""The head of docs/accuracy/memory.md: where and how the grid was measured, its figures against the
targets, then the figures per family and per family and mode."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime

from gpukit.bench import device

from .._report import table_head
from .bands import BAND_KEYS, TOLERANCE, bands
from .conditions import conditions_lines
from .refit import leave_one_family_out

#: The accuracy the estimate aims at over the whole grid.
TARGETS = {"median": 0.05, "worst": 0.15, "leave_one_family_out": 0.20}


def summary_lines(rows: list[dict]) -> list[str]:
    """The report's head: where and how the grid was measured, its figures and the targets."""
    info = device.describe_attached()
    env = device.bench_environment()
    ok = [r for r in rows if r["error"] is not None]
    errs = [abs(r["error"]) for r in ok]
    within = sum(e <= TOLERANCE for e in errs)
    worst = max(ok, key=lambda r: abs(r["error"])) if ok else None
    return [
        "# Memory-fit accuracy",
        "",
        f"Written by `benchmarks/memory_accuracy.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; "
        "every measured figure is what a run of it measured (the runs: `benchmarks/runs/memory-accuracy-runs-*.json`, "
        "which `--from-raw` estimates again after a change to the estimate).",
        "",
        f"- device: {info['kind'].upper()} {info['name']}; TensorFlow {env['tensorflow']}, Keras {env['keras']}",
        "- predicted: `gpukit.memory` `tensor_bytes`; measured: the BFC allocator's peak "
        "(`tf.config.experimental.get_memory_info`) over one step after one warm-up step, each case in a fresh "
        f"process, {'–'.join(map(str, sorted({len(r.get('runs') or [0]) for r in rows})))} times; "
        "the error is against the median run; the range is the lowest and highest run, "
        "and the band of errors over every run is what `gpukit fit` calls borderline",
        *conditions_lines(rows),
        f"- {len(ok)} cases: median |error| {statistics.median(errs):.1%}, {within} within ±{TOLERANCE:.0%}, "
        f"worst when a family is left out of the fit {max(leave_one_family_out(rows).values()):.1%}"
        + (
            f"; worst: {worst['model']} batch {worst['batch']} {worst['precision']} {worst['optimizer']} "
            f"{worst['mode']} at {worst['error']:+.1%}"
            if worst
            else ""
        ),
        "- targets: "
        + "; ".join(
            f"{label} {value:.1%} (≤ {TARGETS[key]:.0%}: {'met' if value <= TARGETS[key] else 'not met'})"
            for key, label, value in (
                ("median", "median |error|", statistics.median(errs)),
                ("worst", "worst |error|", max(errs)),
                (
                    "leave_one_family_out",
                    "worst left out of the fit",
                    max(leave_one_family_out(rows).values()),
                ),
            )
        ),
        "",
    ]


def family_lines(rows: list[dict]) -> list[str]:
    """The figures per family, and the bands per family and mode that ``gpukit fit`` quotes."""
    lines = [
        "## Per family",
        "",
        *table_head(
            "| family | cases | median abs. error | worst abs. error | most under the highest run |"
            " error band over all runs | worst when fitted without it |",
            "lrrrrlr",
        ),
    ]
    lofo = leave_one_family_out(rows)
    for b in bands(rows):
        lines.append(
            f"| {b['family']} | {b['cases']} | {b['median_abs_error']:.1%} | {b['worst_abs_error']:.1%} | "
            f"{b['worst_vs_highest']:+.1%} | {b['error_low']:+.1%} to {b['error_high']:+.1%} | "
            f"{lofo.get(b['family'], float('nan')):.1%} |"
        )
    lines += [
        "",
        "Per family and mode: the bands `gpukit fit` quotes and calls borderline by (`data/memory_error.csv`), "
        "a training fit by the family's training cases, an inference fit by its inference cases.",
        "",
        *table_head(
            "| family | mode | cases | median abs. error | worst abs. error | error band over all runs |",
            "llrrrl",
        ),
    ]
    for b in bands(rows, BAND_KEYS):
        lines.append(
            f"| {b['family']} | {b['mode']} | {b['cases']} | {b['median_abs_error']:.1%} | "
            f"{b['worst_abs_error']:.1%} | {b['error_low']:+.1%} to {b['error_high']:+.1%} |"
        )
    return lines
