"""Figures of the datasheet catalogue: peak compute per precision, memory capacity against
bandwidth, and throughput per watt."""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from .style import ARCHITECTURES, PALETTE, SEGMENT_MARKERS, _finish, _label_points


def compute_figure(catalogue: pd.DataFrame) -> Figure:
    """Peak dense compute per GPU: FP32 on CUDA cores vs TF32 and FP16 on tensor cores (log scale)."""
    cols = {
        "fp32_tflops": "FP32 (CUDA cores)",
        "tf32_tensor_tflops": "TF32 tensor",
        "fp16_tensor_tflops": "FP16/BF16 tensor (FP32 accumulate)",
    }
    long = catalogue.melt(id_vars="gpu", value_vars=list(cols), var_name="mode", value_name="tflops")
    long["mode"] = long["mode"].map(cols)
    long = long.dropna(subset=["tflops"])
    order = catalogue.sort_values("fp16_tensor_tflops", ascending=False, na_position="last")["gpu"]
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(order) + 1.8))
    sns.barplot(data=long, y="gpu", x="tflops", hue="mode", order=order, palette=PALETTE, ax=ax, orient="h")
    ax.set_xscale("log")
    ax.set_xlabel("peak TFLOPS, dense (log scale)")
    ax.set_ylabel("")
    ax.set_title("Peak compute: CUDA cores vs tensor cores")
    # outside the axes: inside, the longest bars at the bottom (a T4's FP16) ran under it
    ax.legend(
        title="precision",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize="small",
        title_fontsize="small",
        frameon=False,
    )
    return _finish(fig)


def memory_figure(catalogue: pd.DataFrame) -> Figure:
    """Memory capacity vs bandwidth, one point per GPU, coloured by architecture."""
    fig, ax = plt.subplots(figsize=(10, 6))
    archs = [a for a in ARCHITECTURES if a in set(catalogue["architecture"])]
    archs += sorted(set(catalogue["architecture"]) - set(archs))
    segments = [s for s in SEGMENT_MARKERS if s in set(catalogue["segment"])]
    sns.scatterplot(
        data=catalogue,
        x="memory_gb",
        y="memory_bandwidth_gbs",
        hue="architecture",
        hue_order=archs,
        palette={a: ARCHITECTURES.get(a, "#8c8c8c") for a in archs},
        style="segment",
        style_order=segments,
        markers=SEGMENT_MARKERS,
        s=90,
        ax=ax,
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlim(catalogue["memory_gb"].min() / 1.15, catalogue["memory_gb"].max() * 1.5)  # room for labels
    ticks = []
    for t in sorted({int(v) for v in catalogue["memory_gb"]}):
        if not ticks or t / ticks[-1] > 1.1:  # closer sizes (94 and 96 GB) would print over each other
            ticks.append(t)
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_xlabel("memory capacity, GB (binary, as on the datasheet; log scale)")
    ax.set_ylabel("memory bandwidth, GB/s (log scale)")
    ax.set_title("Memory: how much, and how fast")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    _label_points(ax, catalogue, "memory_gb", "memory_bandwidth_gbs")
    return _finish(fig)


def efficiency_figure(catalogue: pd.DataFrame) -> Figure:
    """Peak throughput per watt of TDP: FP32 and dense FP16 tensor."""
    frame = catalogue.assign(
        fp32=catalogue["fp32_tflops"] / catalogue["tdp_w"],
        fp16=catalogue["fp16_tensor_tflops"] / catalogue["tdp_w"],
    )
    order = frame.sort_values("fp16", ascending=False, na_position="last")["gpu"]
    long = frame.melt(id_vars="gpu", value_vars=["fp32", "fp16"], var_name="mode", value_name="per_w")
    long["mode"] = long["mode"].map(
        {"fp32": "FP32 (CUDA cores)", "fp16": "FP16/BF16 tensor (FP32 accumulate)"}
    )
    long = long.dropna(subset=["per_w"])
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(order) + 1.8))
    sns.barplot(data=long, y="gpu", x="per_w", hue="mode", order=order, palette=PALETTE, ax=ax, orient="h")
    ax.set_xlabel("peak TFLOPS per watt of TDP")
    ax.set_ylabel("")
    ax.set_title("Throughput per watt (datasheet peak / TDP)")
    ax.legend(title="precision", loc="lower right", fontsize="small", title_fontsize="small")
    if len(long):
        ax.set_xlim(0, float(np.nanmax(long["per_w"])) * 1.08)
    return _finish(fig)
