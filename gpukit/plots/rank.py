"""The figure of a ranking (:func:`gpukit.rank.rank`): each GPU's predicted throughput against its
price, the Pareto front (no GPU both cheaper and faster) marked, GPUs the job does not fit greyed."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from ..prices.cost import pareto_front
from .style import _finish, _label_points, _plain_log_ticks

FITS_COLOR = "#4C72B0"
FRONT_COLOR = "#C44E52"
GREY = "0.72"


def rank_figure(ranking: pd.DataFrame) -> Figure:
    """Throughput against price for every GPU of ``ranking`` with a price and a throughput (log
    scales); the Pareto front of the GPUs that fit as a step line; GPUs that do not fit in grey."""
    fig, ax = plt.subplots(figsize=(9.5, 6))
    _draw(ax, ranking)
    return _finish(fig)


def rank_figures(rankings: list[pd.DataFrame]) -> Figure:
    """:func:`rank_figure` of each ranking, one panel each, one above the other."""
    fig, axes = plt.subplots(
        max(len(rankings), 1), 1, figsize=(9.5, 5.5 * max(len(rankings), 1)), squeeze=False
    )
    for ax, ranking in zip(axes[:, 0], rankings):
        _draw(ax, ranking)
    if not rankings:
        axes[0, 0].text(0.5, 0.5, "no ranking to draw", ha="center", transform=axes[0, 0].transAxes)
        axes[0, 0].set_title("Throughput against price")
    return _finish(fig)


def _draw(ax, ranking: pd.DataFrame) -> None:
    price = ranking.attrs["price"]
    column = "cloud_usd_per_hour" if price.renting else "price_usd"
    unit = ranking.attrs.get("unit", "")
    data = ranking.assign(
        spend=pd.to_numeric(ranking[column], errors="coerce") * ranking["gpus"],
        rate=pd.to_numeric(ranking["throughput"], errors="coerce"),
    ).dropna(subset=["spend", "rate"])
    fits = data[data["standing"] == "ranked"]
    misfit = data[data["standing"] == "does not fit"]
    if data.empty:
        ax.text(
            0.5, 0.5, f"no GPU has a {price.describe()} and a throughput", ha="center", transform=ax.transAxes
        )
    else:
        if len(misfit):
            ax.scatter(
                misfit["spend"],
                misfit["rate"],
                s=60,
                color=GREY,
                zorder=2,
                label="does not fit (throughput if it did)",
            )
        if len(fits):
            ax.scatter(fits["spend"], fits["rate"], s=70, color=FITS_COLOR, zorder=3, label="fits")
            front = pareto_front(fits, "spend", "rate")
            ax.step(
                front["spend"],
                front["rate"],
                where="post",
                color=FRONT_COLOR,
                lw=1.5,
                zorder=2,
                label="Pareto front (fastest for its price)",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        _plain_log_ticks(ax.xaxis)
        _plain_log_ticks(ax.yaxis)
        ax.legend(loc="upper left", fontsize="small")
    many = f" for {int(ranking['gpus'].iloc[0])} GPUs" if len(ranking) and ranking["gpus"].iloc[0] > 1 else ""
    ax.set_xlabel(
        (
            f"{price.cloud_kind} cloud rate, dollars per hour{many}"
            if price.renting
            else f"{price.kind} purchase price, dollars{many}"
        )
        + " (log scale)"
    )
    ax.set_ylabel(f"predicted throughput, {unit} (log scale)")
    job = ranking.attrs.get("job")
    ax.set_title(f"Throughput against price: {job.describe() if job else ''}")
    if not data.empty:
        _label_points(ax, data, "spend", "rate", marker_pt=5)
