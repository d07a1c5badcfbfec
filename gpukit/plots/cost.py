"""Figures of what the GPUs cost: dollars per TFLOPS to own and to rent, price against
performance, purchase prices over time, when buying beats renting, and cost per unit of work."""

from __future__ import annotations

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..errors import ParameterError
from ..prices.cost import pareto_front
from .style import _finish, _label_points, _plain_log_ticks

#: What a TFLOPS is, for the cost figures: the datasheet peak, or the share of it each GPU was
#: measured to sustain (:func:`gpukit.prices.cost.cost_table`'s ``sustained_tflops``).
TFLOPS_BASES = ("peak", "sustained")


def _tflops_basis(basis: str) -> tuple[str, str]:
    """(column infix, words) of a :data:`TFLOPS_BASES` basis."""
    if basis not in TFLOPS_BASES:
        raise ParameterError(f"TFLOPS basis {basis!r}: use peak or sustained")
    return ("", "peak") if basis == "peak" else ("sustained_", "sustained")


def cost_per_tflop_figure(costs: pd.DataFrame, basis: str = "peak") -> Figure:
    """Dollars per TFLOPS per GPU and precision: to own (TCO) and to rent for an hour; ``basis``
    peak (datasheet) or sustained (the share each GPU was measured to sustain)."""
    infix, words = _tflops_basis(basis)
    fig, axes = plt.subplots(1, 2, figsize=(13, 0.4 * costs["gpu"].nunique() + 2.4), sharey=True)
    order = list(dict.fromkeys(costs.sort_values("peak_tflops", ascending=False)["gpu"]))
    for ax, column, label in (
        (axes[0], f"tco_usd_per_{infix}tflop", f"TCO dollars per {words} TFLOPS"),
        (axes[1], f"cloud_usd_per_{infix}tflop_hour", f"cloud dollars per {words} TFLOPS-hour"),
    ):
        data = costs.dropna(subset=[column])
        if data.empty:
            ax.text(0.5, 0.5, "no prices for these GPUs", ha="center", va="center", transform=ax.transAxes)
        else:
            sns.barplot(data=data, y="gpu", x=column, hue="precision", order=order, ax=ax, orient="h")
            ax.set_xscale("log")
            _plain_log_ticks(ax.xaxis)
            ax.legend(title="precision", fontsize="small", loc="lower right")
        ax.set_xlabel(label + " (log scale)")
        ax.set_ylabel("")
    missing = costs.groupby("gpu")["price_usd"].apply(lambda s: s.isna().all())
    for gpu in missing[missing].index:
        if gpu in order:
            axes[0].annotate(
                "no purchase price",
                (0.01, order.index(gpu)),
                xycoords=("axes fraction", "data"),
                va="center",
                fontsize=8,
                color="0.4",
            )
    attrs = costs.attrs
    fig.suptitle(
        f"Cost per {words} TFLOP (TCO: {attrs.get('years', 0):g} years at "
        f"{attrs.get('utilization', 0):.0%} use, ${attrs.get('electricity_usd_per_kwh', 0):g}/kWh; "
        "lower is better)",
        fontweight="bold",
    )
    return _finish(fig)


def price_performance_figure(
    costs: pd.DataFrame, precision: str, price_column: str = "cloud_usd_per_hour", basis: str = "peak"
) -> Figure:
    """TFLOPS (``basis`` peak or sustained) against price, with the Pareto front (no GPU is both
    cheaper and faster)."""
    _, words = _tflops_basis(basis)
    speed = f"{words}_tflops"
    data = costs[costs["precision"] == precision].dropna(subset=[price_column, speed])
    fig, ax = plt.subplots(figsize=(9, 6))
    label = {
        "cloud_usd_per_hour": "cloud price, dollars per GPU-hour",
        "price_usd": "purchase price, dollars",
        "tco_usd": "total cost of ownership, dollars",
    }.get(price_column, price_column)
    if data.empty:
        ax.text(0.5, 0.5, f"no {label} for these GPUs", ha="center", transform=ax.transAxes)
    else:
        ax.scatter(data[price_column], data[speed], s=70, color="#4C72B0", label="GPU", zorder=3)
        front = pareto_front(data, price_column, speed)
        ax.step(
            front[price_column],
            front[speed],
            where="post",
            color="#C44E52",
            lw=1.5,
            label="Pareto front (cheapest for its speed)",
        )
        ax.set_xscale("log")
        ax.set_yscale("log")
        _plain_log_ticks(ax.xaxis)
        _plain_log_ticks(ax.yaxis)
        ax.legend(loc="upper left", fontsize="small")
    ax.set_xlabel(label + " (log scale)")
    ax.set_ylabel(f"{words} {precision} TFLOPS, dense (log scale)")
    ax.set_title(f"Price against performance, {precision}")
    if not data.empty:
        _label_points(ax, data, price_column, speed, marker_pt=5)
    return _finish(fig)


def price_history_figure(history: pd.DataFrame) -> Figure:
    """Dollars per dense peak TFLOPS over time per GPU (a :func:`gpukit.prices.cost.price_history` frame):
    street prices as lines, used prices dashed, launch prices as diamonds (log scale)."""
    fig, ax = plt.subplots(figsize=(12, 6.5))
    if history.empty:
        ax.text(0.5, 0.5, "no dated purchase price for these GPUs", ha="center", transform=ax.transAxes)
        ax.set_title("Purchase price per TFLOPS over time")
        return _finish(fig)
    gpus = list(dict.fromkeys(history.sort_values("usd_per_tflop")["gpu"]))
    # up to 28 GPUs in colours that differ (tab20's ten dark ones, its ten light ones, Dark2's eight),
    # then evenly spaced hues
    tab = sns.color_palette("tab20", 20)
    distinct = tab[0::2] + tab[1::2] + sns.color_palette("Dark2", 8)
    palette = distinct if len(gpus) <= len(distinct) else sns.color_palette("husl", len(gpus))
    colors = dict(zip(gpus, palette))
    styles = {
        "street": dict(ls="-", marker="o", ms=3),
        "used": dict(ls="--", marker="s", ms=3),
        "msrp": dict(ls="none", marker="D", ms=7),
    }
    for (gpu, kind), part in history.groupby(["gpu", "kind"], sort=False):
        part = part.sort_values("date")
        ax.plot(
            part["date"],
            part["usd_per_tflop"],
            color=colors[gpu],
            lw=1.4,
            label=f"{gpu}, {kind}",
            **styles.get(kind, {}),
        )
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis)
    locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    precision = history["precision"].iloc[0]
    ax.set_ylabel(f"USD per peak {precision} TFLOPS, dense (log scale)")
    ax.set_xlabel("date the price held")
    flagged = history.attrs.get("flagged_left_out", 0)
    ax.set_title(
        f"Purchase price per {precision} TFLOPS over time (solid: new, dashed: used, diamond: launch)"
        + (
            f"\n{flagged} flagged price{'s' if flagged > 1 else ''} left out (gpukit prices check)"
            if flagged
            else ""
        )
    )
    # one legend entry per GPU (its colour) and one per kind of price (its line), not one per pair
    kinds = {"street": "new (street)", "used": "used", "msrp": "launch price"}
    present = [k for k in kinds if k in set(history["kind"])] + sorted(set(history["kind"]) - set(kinds))
    by_kind = ax.legend(
        [Line2D([], [], color="0.3", **styles.get(k, {})) for k in present],
        [kinds.get(k, k) for k in present],
        title="price",
        fontsize="x-small",
        title_fontsize="small",
        loc="lower left",
        framealpha=0.9,
    )
    ax.add_artist(by_kind)
    ax.legend(
        [Line2D([], [], color=colors[g], lw=3) for g in gpus],
        gpus,
        title="GPU",
        fontsize="x-small",
        title_fontsize="small",
        loc="upper left",
        bbox_to_anchor=(1.01, 1),
        ncol=1 if len(gpus) <= 28 else 2,
    )
    return _finish(fig)


def break_even_figure(costs: pd.DataFrame) -> Figure:
    """Months of use after which buying beats renting, per GPU (where both prices exist)."""
    data = costs.drop_duplicates("gpu").dropna(subset=["break_even_months"]).sort_values("break_even_months")
    fig, ax = plt.subplots(figsize=(9, 0.45 * max(len(data), 2) + 1.8))
    if data.empty:
        ax.text(0.5, 0.5, "no GPU has both a purchase and a cloud price", ha="center", transform=ax.transAxes)
        ax.set_yticks([])
    else:
        ax.barh(data["gpu"], data["break_even_months"], color="#55A868", label="break-even")
        ax.invert_yaxis()
        ax.legend(loc="lower right", fontsize="small")
    u = costs.attrs.get("utilization", 0)
    ax.set_xlabel(f"months of use at {u:.0%} utilisation until buying costs less than renting")
    ax.set_title("Buy or rent: break-even")
    return _finish(fig)


def work_cost_figure(work: pd.DataFrame) -> Figure:
    """Dollars per million units of work per GPU, renting and owning (hatched: predicted speed)."""
    cols = {
        "cloud_usd_per_million_items": "rent (cloud, median of offers)",
        "owned_usd_per_million_items": "own (TCO)",
    }
    long = work.melt(id_vars=["gpu", "basis"], value_vars=list(cols), var_name="how", value_name="usd")
    long["how"] = long["how"].map(cols)
    long = long.dropna(subset=["usd"])
    fig, ax = plt.subplots(figsize=(9, 0.45 * max(work["gpu"].nunique(), 1) + 2))
    if long.empty:
        ax.text(0.5, 0.5, "no GPU has both a price and a throughput", ha="center", transform=ax.transAxes)
        ax.set_title("Cost per unit of work")
        return _finish(fig)
    order = long.groupby("gpu")["usd"].min().sort_values().index
    sns.barplot(
        data=long,
        y="gpu",
        x="usd",
        hue="how",
        order=order,
        ax=ax,
        orient="h",
        palette={"rent (cloud, median of offers)": "#4C72B0", "own (TCO)": "#DD8452"},
    )
    predicted = {g for g, b in zip(work["gpu"], work["basis"]) if b == "predicted"}
    for container in ax.containers:  # one per hue level, one bar per GPU in `order`
        for gpu, bar in zip(order, container.patches):
            if gpu in predicted:
                bar.set_hatch("//")
    unit = work["throughput_unit"].iloc[0].split("/")[0]
    ax.set_xlabel(f"USD per million {unit}")
    ax.set_ylabel("")
    basis = sorted(set(work["basis"]))
    ax.set_title(f"Cost per million {unit} ({' and '.join(basis)} throughput)")
    handles, labels = ax.get_legend_handles_labels()
    if predicted:
        handles.append(Patch(facecolor="white", edgecolor="grey", hatch="//"))
        labels.append("hatched: predicted speed")
    ax.legend(handles, labels, title="", fontsize="small", loc="upper right")
    return _finish(fig)
