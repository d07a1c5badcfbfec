"""Figures of large language models on GPUs: which model fits in which GPU's memory, and the
predicted decode speed against memory bandwidth, with published speeds beside it."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from .style import _finish, _label_points


def llm_fit_heatmap(matrix: pd.DataFrame, title: str) -> Figure:
    """GPUs x models (a :func:`gpukit.llm.fit_matrix`, models as rows, transposed here): the share
    of each GPU's memory a model needs (✓ fits, ✗ does not)."""
    grid = matrix.T
    fig, ax = plt.subplots(figsize=(1.25 * len(grid.columns) + 5, 0.36 * len(grid) + 2))
    labels = grid.map(lambda v: f"✓ {v:.0%}" if v <= 1 else (f"✗ {v:.1f}x" if v < 10 else f"✗ {v:.0f}x"))
    sns.heatmap(
        grid.clip(upper=2.0),
        ax=ax,
        cmap="RdYlGn_r",
        vmin=0,
        vmax=2,
        annot=labels,
        fmt="",
        annot_kws={"fontsize": 8},
        linewidths=0.5,
        cbar_kws={"label": "memory needed / GPU memory (capped at 2)"},
    )
    ax.set_xlabel("model")
    ax.set_ylabel("GPU")
    ax.set_title(title)
    ax.tick_params(axis="x", labelrotation=30)
    return _finish(fig)


#: Legend label of the published decode speeds in :func:`llm_decode_figure`.
PUBLISHED_DECODE_LABEL = "published: same GPU, model, weights, engine (its own length)"


def llm_decode_figure(table: pd.DataFrame, catalogue: pd.DataFrame) -> Figure:
    """Predicted decode tokens/s against memory bandwidth per GPU, with what bandwidth alone
    would give (the weights and KV cache read once per token at the datasheet bandwidth), and
    where a source published the same configuration (``gpukit.llm.published_check``), its speed,
    joined to the prediction."""
    frame = table.dropna(subset=["decode_tokens_per_s"]).merge(
        catalogue[["gpu", "memory_bandwidth_gbs"]], on="gpu", how="left"
    )
    # a taller figure for a crowded catalogue, so that every point's label finds a free place
    fig, ax = plt.subplots(figsize=(11, max(6.0, len(frame) / 6)))
    first = table.iloc[0]
    engine = table.attrs.get("engine")
    ax.set_title(
        f"Decode speed against memory bandwidth: {first['model']}, {first['weights']}, "
        f"context {first['context']}, batch {first['batch']}" + (f"\n{engine}" if engine else "")
    )
    if frame.empty:
        ax.text(0.5, 0.5, "no GPU can run this configuration", ha="center", transform=ax.transAxes)
        return _finish(fig)
    sns.scatterplot(
        data=frame, x="memory_bandwidth_gbs", y="decode_tokens_per_s", hue="decode_bound", ax=ax, s=60
    )
    x = np.linspace(0, frame["memory_bandwidth_gbs"].max() * 1.05, 50)
    per_token = table.attrs.get("bytes_per_token")
    if per_token:
        ax.plot(
            x,
            x * 1e9 / per_token * int(first["batch"]),
            color="grey",
            ls="--",
            lw=1,
            label="bandwidth alone (every byte at the datasheet rate)",
        )
    seen = (
        frame.dropna(subset=["published_decode_tokens_per_s"])
        if "published_decode_tokens_per_s" in frame
        else frame.iloc[:0]
    )
    if len(seen):
        ax.vlines(
            seen["memory_bandwidth_gbs"],
            seen["decode_tokens_per_s"],
            seen["published_decode_tokens_per_s"],
            colors="black",
            lw=0.7,
            alpha=0.5,
        )
        ax.scatter(
            seen["memory_bandwidth_gbs"],
            seen["published_decode_tokens_per_s"],
            marker="D",
            s=40,
            facecolors="none",
            edgecolors="black",
            label=PUBLISHED_DECODE_LABEL,
        )
    ax.set_xlabel("memory bandwidth (GB/s)")
    ax.set_ylabel("decode speed (tokens/s, all sequences)")
    ax.set_xlim(left=0)
    # the speeds set the scale; the bandwidth-alone line runs on above them
    top = frame["decode_tokens_per_s"].max()
    if len(seen):
        top = max(top, seen["published_decode_tokens_per_s"].max())
    ax.set_ylim(0, top * 1.3)
    ax.legend(title="predicted: decode step bound by", fontsize="small", loc="upper left")
    _label_points(
        ax,
        frame,
        "memory_bandwidth_gbs",
        "decode_tokens_per_s",
        avoid=seen[["memory_bandwidth_gbs", "published_decode_tokens_per_s"]].to_numpy(float),
    )
    return _finish(fig)
