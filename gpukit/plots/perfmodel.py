"""Figures of the performance model: each GPU's predicted place on its roofline, predicted
throughput, the share of the datasheet peak GPUs sustain, and predictions graded against
published speedups and scaling efficiencies."""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from .. import precision as prec
from .. import specs
from ..grading import TRAINING_THROUGHPUT
from .style import _finish, _label_points, _plain_log_ticks, _renderer

#: What "compute-bound" and "memory-bound" mean in the predicted-roofline figure's legend, printed beside it.
ROOFLINE_BOUND_NOTE = (
    "Compute- or memory-bound: what limits most of\n"
    "the step, op by op. Compute counts the elementwise\n"
    "ops too, at the SMs' instruction issue rate, which\n"
    "the matrix-math lines do not draw; their bytes pass\n"
    "through the SMs' loads and stores as well as DRAM,\n"
    "and every op pays launch and host time, so the\n"
    "points sit below the lines."
)


def predicted_roofline_figure(predictions: pd.DataFrame, catalogue: pd.DataFrame) -> Figure:
    """Each GPU's datasheet roofline for the workload's math, with the workload placed on it.

    ``predictions`` is a :func:`gpukit.perfmodel.predict_table` frame: the point of a GPU sits
    at the step's arithmetic intensity and the TFLOP/s the model predicts there.
    """
    frame = predictions.dropna(subset=["throughput"])
    fig, ax = plt.subplots(figsize=(10, 6.5))
    if frame.empty:
        ax.text(0.5, 0.5, "no GPU can run this configuration", ha="center", transform=ax.transAxes)
        ax.set_title("Predicted roofline")
        return _finish(fig)
    intensity = float(frame["arithmetic_intensity"].iloc[0])
    ai = np.logspace(np.log10(max(intensity / 10, 0.05)), np.log10(max(intensity * 10, 1000)), 200)
    colors = sns.color_palette("husl", len(frame))
    for color, (_, r) in zip(colors, frame.iterrows()):
        gpu = specs.row(catalogue, r["gpu"])
        _, peak = prec.math_unit(gpu, r["precision"], r["workload"] != "bandwidth")
        bandwidth = float(gpu["memory_bandwidth_gbs"])
        ax.plot(ai, np.minimum(peak, ai * bandwidth / 1e3), color=color, lw=1.2, alpha=0.8)
        ax.scatter(
            [intensity],
            [r["achieved_tflops"]],
            color=color,
            s=60,
            zorder=3,
            edgecolor="black",
            label=f"{r['gpu']}: {r['achieved_tflops']:.3g} TFLOP/s predicted ({r['bound']}-bound)",
        )
    ax.axvline(intensity, color="grey", ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _plain_log_ticks(ax.xaxis, minor=False)
    _plain_log_ticks(ax.yaxis, minor=False)
    first = frame.iloc[0]
    ax.set_xlabel("arithmetic intensity of the step, FLOP per byte of device memory (log scale)")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.set_title(
        f"Rooflines, predicted point: {first['workload']} {first['mode']}, "
        f"{first['precision']}, batch {first['batch_size']}"
    )
    ax.legend(
        fontsize="x-small",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        title="GPU (line: its matrix-math roofline)",
        title_fontsize="small",
    )
    ax.text(
        1.02,
        0.0,
        ROOFLINE_BOUND_NOTE,
        transform=ax.transAxes,
        fontsize="x-small",
        va="bottom",
        ha="left",
        wrap=False,
    )
    return _finish(fig)


def predicted_throughput_figure(predictions: pd.DataFrame) -> Figure:
    """Predicted throughput per GPU, coloured by what bounds the step there."""
    frame = predictions.dropna(subset=["throughput"]).sort_values("throughput", ascending=False)
    fig, ax = plt.subplots(figsize=(9, 0.4 * max(len(frame), 1) + 1.8))
    if frame.empty:
        ax.text(0.5, 0.5, "no GPU can run this configuration", ha="center", transform=ax.transAxes)
        ax.set_title("Predicted throughput")
        return _finish(fig)
    palette = {"compute": "#C44E52", "memory": "#4C72B0"}
    sns.barplot(
        data=frame,
        y="gpu",
        x="throughput",
        hue="bound",
        palette=palette,
        dodge=False,
        ax=ax,
        orient="h",
        hue_order=[b for b in ("compute", "memory") if b in set(frame["bound"])],
    )
    measured = frame.dropna(subset=["measured_throughput"])
    if not measured.empty:
        ax.scatter(
            measured["measured_throughput"],
            measured["gpu"],
            marker="D",
            color="black",
            zorder=3,
            label="measured here",
        )
    first = frame.iloc[0]
    ax.set_xlabel(f"predicted throughput, {first['throughput_unit']}")
    ax.set_ylabel("")
    ax.set_title(
        f"Predicted {first['workload']} {first['mode']} throughput, {first['precision']}, "
        f"batch {first['batch_size']}"
    )
    ax.legend(title="step is mostly", fontsize="small", title_fontsize="small", loc="lower right")
    return _finish(fig)


def sustained_share_figure(rates: pd.DataFrame, typical: float) -> Figure:
    """Each measured GPU's largest-matmul rate as a share of its datasheet dense FP16 peak
    (:func:`gpukit.specs.matmul_rates.rates`), its runs' range as whiskers, the datasheet and the
    median share (what a GPU nobody measured is taken at) as lines."""
    frame = rates.sort_values("share")
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(frame) + 1.8))
    y = np.arange(len(frame))
    ax.barh(y, 100 * frame["share"], color="#4C72B0", label="median of the published runs")
    low = 100 * frame["low"] / frame["datasheet_tflops"]
    high = 100 * frame["high"] / frame["datasheet_tflops"]
    spread = frame["runs"] > 1
    ax.errorbar(
        100 * frame["share"][spread],
        y[spread.to_numpy()],
        xerr=[(100 * frame["share"] - low)[spread], (high - 100 * frame["share"])[spread]],
        fmt="none",
        ecolor="0.2",
        capsize=3,
        label="lowest to highest run",
    )
    ax.axvline(100, color="#C44E52", lw=1.2, label="datasheet peak")
    ax.axvline(
        100 * typical, color="0.4", lw=1.2, ls="--", label=f"median share ({typical:.0%}): GPUs not measured"
    )
    ax.set_yticks(y, frame["gpu"])
    ax.set_xlim(0, max(110, float(high.max()) + 5))
    ax.set_xlabel("measured largest-matmul rate, % of the datasheet dense FP16 tensor peak")
    ax.set_title("What each GPU sustains of its datasheet tensor peak")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    return _finish(fig)


#: The ``gid`` of the validation figure's text that says which pair each number names.
VALIDATION_KEY_GID = "validation-key"


def _tolerance_band(ax, x: np.ndarray, tolerance: float) -> None:
    """The ideal line (prediction = publication) over ``x``, in the band within ``tolerance`` of it."""
    ax.fill_between(
        x,
        x * (1 - tolerance),
        x * (1 + tolerance),
        color="#55A868",
        alpha=0.15,
        label=f"within ±{tolerance:.0%}",
    )
    ax.plot(x, x, color="black", lw=1, label="prediction = publication")


def _validation_key(ax, highlight: pd.DataFrame, legend) -> None:
    """Number the circled pairs beside their points and name each in a key below ``legend``
    (its GPUs, workload, precision and the prediction's error)."""
    numbered = highlight.assign(number=[str(k) for k in range(1, len(highlight) + 1)])
    lines = []
    for _, r in numbered.iterrows():
        what = " ".join(str(r[c]) for c in ("workload", "precision") if c in r and pd.notna(r[c]))
        lines.append(f"{r['number']}  {r['gpu_a']} / {r['gpu_b']}, {what}: {r['error_pct']:+.0f}%")
    fig = ax.figure
    fig.tight_layout()
    box = legend.get_window_extent(_renderer(fig)).transformed(ax.transAxes.inverted())
    ax.text(
        1.02,
        box.y0 - 0.03,
        "the pairs this kit is for:\n" + "\n".join(lines),
        transform=ax.transAxes,
        fontsize="x-small",
        va="top",
        ha="left",
        gid=VALIDATION_KEY_GID,
    )
    _label_points(
        ax,
        numbered,
        "published_speedup",
        "predicted_speedup",
        fontsize=8,
        label="number",
        marker_pt=6.5,
        background=True,
    )


def validation_figure(
    table: pd.DataFrame,
    highlight: pd.DataFrame | None = None,
    tolerance: float = TRAINING_THROUGHPUT.speedup,
    hue: str | None = None,
) -> Figure:
    """Predicted against published speedup for every pair of GPUs from one source, with the
    ideal line and the tolerance band; the highlighted pairs are circled and numbered, and a key
    beside the legend names each (its GPUs, workload, precision and the prediction's error)."""
    key = highlight is not None and not highlight.empty
    fig, ax = plt.subplots(figsize=(12.5, 7) if key else (9, 7))
    if table.empty:
        ax.text(0.5, 0.5, "no pairs to grade", ha="center", transform=ax.transAxes)
        ax.set_title("Predicted vs published speedups")
        return _finish(fig)
    lo = min(table["published_speedup"].min(), table["predicted_speedup"].min()) * 0.9
    hi = max(table["published_speedup"].max(), table["predicted_speedup"].max()) * 1.1
    _tolerance_band(ax, np.logspace(np.log10(lo), np.log10(hi), 50), tolerance)
    if hue is None:
        hue = "family" if "family" in table and table["family"].nunique() > 1 else "precision"
    sns.scatterplot(
        data=table,
        x="published_speedup",
        y="predicted_speedup",
        hue=hue,
        style="source",
        ax=ax,
        s=45,
        alpha=0.8,
    )
    if key:
        ax.scatter(
            highlight["published_speedup"],
            highlight["predicted_speedup"],
            s=160,
            facecolor="none",
            edgecolor="black",
            lw=1.5,
            label="the pairs this kit is for",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    _plain_log_ticks(ax.xaxis)
    _plain_log_ticks(ax.yaxis)
    ax.set_xlabel("published speedup of the faster GPU (log scale)")
    ax.set_ylabel("predicted speedup (log scale)")
    ax.set_title("Predicted vs published speedups, pairs of GPUs from one source")
    legend = ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if key:  # numbers beside the circled pairs, and what each is below the legend
        _validation_key(ax, highlight, legend)
    return _finish(fig)


def scaling_validation_figure(table: pd.DataFrame, tolerance: float = TRAINING_THROUGHPUT.speedup) -> Figure:
    """Predicted against published scaling efficiency (N-GPU throughput over N x one GPU's, from
    one source) for every published multi-GPU run, with the ideal line and the tolerance band."""
    fig, ax = plt.subplots(figsize=(9, 6))
    ax.set_title("Predicted vs published scaling efficiency, N GPUs against one from the same source")
    if table.empty:
        ax.text(0.5, 0.5, "no multi-GPU measurements to grade", ha="center", transform=ax.transAxes)
        return _finish(fig)
    hi = max(1.05, table["published_efficiency"].max() * 1.05, table["predicted_efficiency"].max() * 1.05)
    _tolerance_band(ax, np.linspace(0, hi, 50), tolerance)
    frame = table.assign(gpus=table["gpus"].astype(str) + " GPUs")
    sns.scatterplot(
        data=frame,
        x="published_efficiency",
        y="predicted_efficiency",
        hue="workload",
        style="gpus",
        ax=ax,
        s=45,
        alpha=0.8,
    )
    ax.set_xlim(0, hi)
    ax.set_ylim(0, hi)
    ax.xaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    ax.set_xlabel("published scaling efficiency (% of N x one GPU)")
    ax.set_ylabel("predicted scaling efficiency (% of N x one GPU)")
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _finish(fig)
