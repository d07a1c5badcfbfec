"""Figures of what fits in a GPU's memory: the share of memory each model and batch size needs
on each GPU, and the largest batch that fits."""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from ..units import GIB, missing
from .style import _finish


def fit_heatmap(fit: pd.DataFrame) -> Figure:
    """GPU x batch size for each model: the share of the GPU's memory one step needs (✓ fits, ✗ not)."""
    models = list(dict.fromkeys(fit["model"]))
    gpus = list(dict.fromkeys(fit.sort_values("gpu_memory_bytes")["gpu"]))
    batches = sorted(set(fit["batch_size"]))
    fig, axes = plt.subplots(
        1,
        len(models),
        figsize=(1.1 * len(batches) * len(models) + 3.5 * len(models), 0.36 * len(gpus) + 2.2),
        squeeze=False,
    )
    first = fit.iloc[0]
    marks = {"fits": "✓", "borderline": "~", "does not fit": "✗"}
    for i, (ax, model) in enumerate(zip(axes[0], models)):
        part = fit[fit["model"] == model]
        share = (
            part.assign(share=part["total_bytes"] / part["gpu_memory_bytes"])
            .pivot(index="gpu", columns="batch_size", values="share")
            .reindex(index=gpus, columns=batches)
        )
        verdicts = (
            part.pivot(index="gpu", columns="batch_size", values="verdict").reindex(
                index=gpus, columns=batches
            )
            if "verdict" in part
            else share.map(lambda v: "fits" if v <= 1 else "does not fit")
        )
        labels = share.combine(
            verdicts,
            lambda v, m: pd.Series(
                [
                    f"{marks.get(x, '?')} {y:.0%}" if y < 10 else f"{marks.get(x, '?')} {y:.0f}x"
                    for y, x in zip(v, m)
                ],
                index=v.index,
            ),
        )
        sns.heatmap(
            share.clip(upper=2.0),
            ax=ax,
            cmap="RdYlGn_r",
            vmin=0,
            vmax=2,
            annot=labels,
            fmt="",
            annot_kws={"fontsize": 8},
            cbar=i == len(models) - 1,
            linewidths=0.5,
            cbar_kws={"label": "memory needed / GPU memory (capped at 2)"},
        )
        ax.set_title(f"{model}, {part['input'].iloc[0]}" if "input" in part else model)
        ax.set_xlabel("batch size")
        ax.set_ylabel("" if i else "GPU (by memory)")
        if i:
            ax.set_yticklabels([])
    opt = f", {first['optimizer']}" if first["mode"] == "train" else ""
    fig.suptitle(
        f"Will it fit? {first['mode']}, {first['precision']}{opt} "
        f"(✓ fits, ~ borderline within the estimate's measured error, ✗ does not; share of memory "
        f"incl. {fit.attrs.get('runtime_reserve_bytes', 0) / GIB:.1f} GiB runtime reserve)",
        fontweight="bold",
    )
    return _finish(fig)


def _batch_ranges(ax, plotted: pd.DataFrame, order: list, hue_order: list) -> int:
    """Whiskers on each bar from ``largest_batch_low`` to ``largest_batch_high`` (where the model's
    family was measured); returns how many were drawn."""
    if "largest_batch_low" not in plotted:
        return 0
    ranges = {
        (r["gpu"], r["model"]): (r["largest_batch_low"], r["largest_batch_high"])
        for _, r in plotted.iterrows()
    }
    drawn = 0
    # seaborn gives each hue level of ``hue_order`` a container, an empty one for a model with no bar
    for model, container in zip(hue_order, ax.containers):
        for bar in container:
            if not np.isfinite(bar.get_width()) or bar.get_width() <= 0:
                continue
            y = bar.get_y() + bar.get_height() / 2
            low, high = ranges.get((order[int(round(y))], model), (None, None))
            if missing(low) or missing(high):
                continue
            ax.plot(
                [max(low, 1), max(high, 1)],
                [y, y],
                color="0.15",
                lw=1.2,
                solid_capstyle="butt",
                marker="|",
                markersize=6,
                label="_range",
            )
            drawn += 1
    return drawn


def largest_batch_figure(fit: pd.DataFrame) -> Figure:
    """The largest batch that fits on each GPU, per model (log scale)."""
    frame = fit.drop_duplicates(["model", "gpu"]).copy()
    if "input" in frame:  # each model with one example's size: "bert-base (512 tokens)"
        frame["model"] = frame["model"] + " (" + frame["input"] + ")"
    order = list(dict.fromkeys(frame.sort_values("gpu_memory_bytes")["gpu"]))
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(order) * max(1, len(set(frame["model"]))) ** 0.5 + 2))
    plotted = frame[frame["largest_batch"] > 0]
    # Every model given gets its legend entry, also one that fits on none of these GPUs.
    sns.barplot(
        data=plotted,
        y="gpu",
        x="largest_batch",
        hue="model",
        order=order,
        ax=ax,
        orient="h",
        hue_order=list(dict.fromkeys(frame["model"])),
    )
    misfits = frame[frame["largest_batch"] == 0].groupby("gpu", sort=False)["model"].agg(", ".join)
    for gpu, models in misfits.items():
        ax.annotate(
            f"does not fit at batch 1: {models}", (1, order.index(gpu)), va="center", fontsize=8, color="0.3"
        )
    ranged = _batch_ranges(ax, plotted, order, list(dict.fromkeys(frame["model"])))
    ax.set_ylim(len(order) - 0.5, -0.5)  # the whiskers' lines would pad the rows with a margin of empty ones
    ax.set_xscale("log", base=2)
    ax.set_xlim(left=1)  # bars start at batch 1, so their lengths compare
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel(
        "largest batch size that fits (log scale)"
        + ("; whiskers: within the estimate's measured error" if ranged else "")
    )
    ax.set_ylabel("")
    first = fit.iloc[0]
    opt = f", {first['optimizer']}" if first["mode"] == "train" else ""
    ax.set_title(f"Largest batch per GPU ({first['mode']}, {first['precision']}{opt})")
    ax.legend(title="model", loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    return _finish(fig)
