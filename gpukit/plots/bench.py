"""Figures of what the attached device measured: the throughput each benchmark configuration
achieved, and the device's roofline with each workload placed on it."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .. import precision as prec
from .. import specs
from ..bench.results import Results
from .style import _finish

#: A marker per benchmark workload (:data:`gpukit.bench.workloads.UNITS`); its place here sets its colour.
WORKLOAD_MARKERS = {
    "matmul": "o",
    "conv": "s",
    "bandwidth": "v",
    "resnet50": "D",
    "transformer": "P",
    "decoder": "X",
}


def _ok(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["status"] == "ok"].copy()


def achieved_figure(results: Results) -> Figure:
    """Achieved throughput of each configuration, with the datasheet peak where the device has one."""
    frame = _ok(results.frame())
    frame["name"] = frame["configuration"] + " · " + frame["precision"]
    compute = frame[frame["workload"] != "bandwidth"]
    memory = frame[frame["workload"] == "bandwidth"]
    device = results.device
    fig, axes = plt.subplots(
        1,
        2,
        figsize=(12, 0.38 * max(len(compute), len(memory), 3) + 2.2),
        gridspec_kw={"width_ratios": [3, 2]},
    )
    for ax, part, column, unit in (
        (axes[0], compute, "achieved_tflops", "TFLOP/s"),
        (axes[1], memory, "throughput", "GB/s"),
    ):
        if part.empty:
            ax.set_axis_off()
            continue
        colors = [sns.color_palette()[list(WORKLOAD_MARKERS).index(w) % 10] for w in part["workload"]]
        ax.barh(part["name"], part[column], color=colors)
        # The bar colours stand for the workloads: name them, with or without a datasheet peak.
        handles = [
            Patch(color=sns.color_palette()[list(WORKLOAD_MARKERS).index(w) % 10], label=w)
            for w in dict.fromkeys(part["workload"])
        ]
        peaks = part["throughput"] / part["peak_fraction"] if part["peak_fraction"].notna().any() else None
        if unit == "TFLOP/s" and peaks is not None:
            peaks = part["achieved_tflops"] / part["peak_fraction"]
        if peaks is not None and peaks.notna().any():
            handles.append(
                ax.scatter(
                    peaks, part["name"], marker="|", s=300, color="black", label="datasheet peak", zorder=3
                )
            )
            for name, value, frac in zip(part["name"], part[column], part["peak_fraction"]):
                if frac == frac and frac is not None:
                    ax.annotate(
                        f"{frac:.0%}",
                        (value, name),
                        xytext=(4, 0),
                        textcoords="offset points",
                        va="center",
                        fontsize=8,
                    )
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, fontsize="small")
        ax.invert_yaxis()
        ax.set_xlabel(f"achieved {unit}")
    peak_note = (
        "share of the datasheet peak annotated"
        if device.catalogue_gpu
        else "no datasheet peak for this device"
    )
    fig.suptitle(f"What {device.kind.upper()} {device.name} delivers ({peak_note})", fontweight="bold")
    axes[0].set_title("compute (matmul, conv, models)")
    axes[1].set_title("memory bandwidth")
    return _finish(fig)


def _ceilings(results: Results, frame: pd.DataFrame, row: pd.Series | None) -> tuple[dict, float, str]:
    """(TFLOP/s ceiling per math, bandwidth in GB/s, what they are) of the roofline: the datasheet's
    where the device is catalogued (``row``), else the best the device measured."""
    if row is not None:
        bandwidth = row["memory_bandwidth_gbs"]
        maths = set(frame["math_mode"].dropna()) | {"FP32"}
        ceilings = {
            m: row[prec.MATH_PEAK_COLUMN[m]]
            for m in maths
            if m in prec.MATH_PEAK_COLUMN and row[prec.MATH_PEAK_COLUMN[m]] == row[prec.MATH_PEAK_COLUMN[m]]
        }
        source = "datasheet"
    else:
        bw = frame[frame["workload"] == "bandwidth"]["throughput"]
        all_ok = _ok(results.frame())
        bandwidth = (
            all_ok.loc[all_ok["workload"] == "bandwidth", "throughput"].max() if bw.empty else bw.max()
        )
        mm = frame[frame["workload"] == "matmul"]
        ceilings = mm.groupby("math_mode")["achieved_tflops"].max().to_dict() or {
            "all": frame["achieved_tflops"].max()
        }
        source = "best measured"
    return ceilings, bandwidth, source


def roofline_figure(results: Results) -> Figure:
    """The attached device's roofline, each workload placed by arithmetic intensity.

    Ceilings are the datasheet peaks of a catalogued GPU, otherwise the best measured matmul
    TFLOP/s per math that ran (FP32, TF32, FP16, BF16) and the best measured bandwidth (said in
    the title)."""
    frame = _ok(results.frame())
    frame = frame[frame["arithmetic_intensity"].notna() & frame["achieved_tflops"].notna()]
    device = results.device
    row = specs.lookup(device.catalogue_gpu) if device.catalogue_gpu else None
    fig, ax = plt.subplots(figsize=(10, 6.5))
    if frame.empty:
        ax.text(0.5, 0.5, "no successful measurement to place", ha="center", transform=ax.transAxes)
        ax.set_title("Roofline")
        return _finish(fig)
    ai = np.logspace(
        np.log10(max(frame["arithmetic_intensity"].min() / 4, 0.01)),
        np.log10(frame["arithmetic_intensity"].max() * 4),
        200,
    )
    ceilings, bandwidth, source = _ceilings(results, frame, row)
    for i, (p, peak) in enumerate(sorted(ceilings.items(), key=lambda kv: kv[1])):
        if bandwidth == bandwidth and bandwidth:
            roof = np.minimum(peak, ai * bandwidth / 1e3)
        else:
            roof = np.full_like(ai, peak)
        ax.plot(
            ai,
            roof,
            color=f"{0.15 + 0.2 * i:.2f}",
            lw=1.5,
            label=f"{source} ceiling, {p}: {peak:.3g} TFLOP/s",
        )
    if bandwidth == bandwidth and bandwidth:
        ax.plot([], [], " ", label=f"{source} bandwidth: {bandwidth:,.0f} GB/s")
    palette = sns.color_palette()
    for j, (workload, part) in enumerate(frame.groupby("workload", sort=False)):
        ax.scatter(
            part["arithmetic_intensity"],
            part["achieved_tflops"],
            s=70,
            marker=WORKLOAD_MARKERS.get(workload, "o"),
            color=palette[list(WORKLOAD_MARKERS).index(workload) % 10]
            if workload in WORKLOAD_MARKERS
            else palette[j % 10],
            label=workload,
            zorder=3,
            edgecolor="white",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity, FLOP per byte of device memory traffic (log scale)")
    ax.set_ylabel("achieved TFLOP/s (log scale)")
    ax.set_title(f"Roofline of {device.kind.upper()} {device.name} ({source} ceilings)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    return _finish(fig)
