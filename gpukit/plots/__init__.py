"""Seaborn figures in one house style. Every figure has a title, units on its axes and a legend.

Functions return a :class:`matplotlib.figure.Figure` already closed in pyplot, so a notebook
shows it exactly once (as the cell's value) and scripts can ``savefig`` it.
"""

from __future__ import annotations

import math

import matplotlib
import matplotlib.legend
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from .. import precision as prec
from ..errors import ParameterError
from ..results import Results

#: Colours of the precision families, shared by every figure.
PALETTE = {
    "FP32 (CUDA cores)": "#4C72B0",
    "TF32 tensor": "#55A868",
    "FP16/BF16 tensor (FP32 accumulate)": "#C44E52",
}
#: Architectures oldest first, each with one colour in every figure; unknown ones get grey.
ARCHITECTURES = {
    "Volta": "#DD8452",
    "Turing": "#8172B3",
    "Ampere": "#4C72B0",
    "Ada Lovelace": "#55A868",
    "Hopper": "#C44E52",
}
SEGMENT_MARKERS = {"datacenter": "X", "workstation": "o", "consumer": "s"}


def apply_style() -> None:
    """The house style: seaborn's whitegrid, readable sizes, crisp inline figures."""
    sns.set_theme(style="whitegrid", context="notebook")
    matplotlib.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "axes.titleweight": "bold",
            "axes.titlesize": 13,
            "figure.autolayout": False,
        }
    )


def _finish(fig: Figure) -> Figure:
    fig.tight_layout()
    plt.close(fig)
    return fig


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


def _renderer(fig: Figure):
    """A renderer to measure text with, whatever canvas the figure has (a closed figure's has none)."""
    if not hasattr(fig.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    return fig.canvas.get_renderer()


def _label_points(
    ax,
    frame: pd.DataFrame,
    x: str,
    y: str,
    fontsize: float = 8,
    avoid=(),
    label: str = "gpu",
    marker_pt: float | None = None,
    background: bool = False,
) -> None:
    """Name each point of a scatter; points that coincide share a label.

    Call last, once the axes' scales, limits and legend are set: the figure is laid out, then
    each label goes beside its point, to the right (to the left where the right runs out of the
    axes), and where it would cover a label already placed or another point it moves up or down
    a step at a time until it is free, joined to its point by a leader line (greedy, in display
    coordinates, the lowest points first). ``avoid``: more (x, y) points, in data units, that no
    label may cover (another series' markers); ``marker_pt``: half a marker's size in points (default: a
    small scatter marker's); ``background``: a white box behind each label, to read it over other points."""
    fig = ax.figure
    fig.tight_layout()
    renderer = _renderer(fig)
    groups = frame.dropna(subset=[x, y]).groupby([x, y], sort=False)[label].agg("\n".join).reset_index()
    if groups.empty:
        return
    to_px = ax.transData.transform
    area = ax.get_window_extent(renderer)
    points = to_px(groups[[x, y]].to_numpy(float))
    marker = (
        (fontsize * 0.6 if marker_pt is None else marker_pt) * fig.dpi / 72
    )  # half a marker's size, in pixels
    others = to_px(np.asarray(avoid, float).reshape(-1, 2)) if len(avoid) else np.empty((0, 2))
    taken = [(px - marker, py - marker, px + marker, py + marker) for px, py in np.vstack([points, others])]
    legends = [a for a in ax.artists if isinstance(a, matplotlib.legend.Legend)] + [ax.get_legend()]
    for legend in filter(None, legends):  # nor a legend drawn inside the axes
        bb = legend.get_window_extent(renderer)
        taken.append((bb.x0, bb.y0, bb.x1, bb.y1))
    pad = 4 * fig.dpi / 72
    step = fontsize * fig.dpi / 72 * 0.7

    def covered(box) -> float:
        """How much of ``box`` lies on what is already taken (inf: it leaves the axes)."""
        x0, y0, x1, y1 = box
        if x0 < area.x0 or x1 > area.x1 or y0 < area.y0 or y1 > area.y1:
            return math.inf
        return sum(
            max(0.0, min(x1, b[2]) - max(x0, b[0])) * max(0.0, min(y1, b[3]) - max(y0, b[1])) for b in taken
        )

    # near the point on the right, then near it on the left, then farther on either side, as far as the
    # axes go (k-th try: k // 2 steps up or down); the first free place, or failing one the least covered
    tries = [(side, k) for side in (1, -1) for k in range(9)]
    tries += [(side, k) for k in range(9, 2 * (int(area.height / step) + 2)) for side in (1, -1)]
    for i in np.lexsort((points[:, 0], points[:, 1])):
        px, py = points[i]
        name = groups.iloc[i][label]
        probe = ax.text(0, 0, name, fontsize=fontsize, transform=None)
        extent = probe.get_window_extent(renderer)
        probe.remove()
        w, h = extent.width, extent.height
        own = (px - marker, py - marker, px + marker, py + marker)
        taken.remove(own)
        best, best_cover = (1, 0.0, (px + pad, py - h / 2, px + pad + w, py + h / 2)), math.inf
        for side, k in tries:
            dy = (k + 1) // 2 * step * (1 if k % 2 else -1)
            x0 = px + pad if side == 1 else px - pad - w
            box = (x0, py + dy - h / 2, x0 + w, py + dy + h / 2)
            cover = covered(box)
            if cover < best_cover:
                best, best_cover = (side, dy, box), cover
                if cover == 0:
                    break
        side, dy, box = best
        taken.append(own)
        taken.append(box)
        ax.annotate(
            name,
            (groups.iloc[i][x], groups.iloc[i][y]),
            xytext=(side * pad * 72 / fig.dpi, dy * 72 / fig.dpi),
            textcoords="offset points",
            fontsize=fontsize,
            va="center",
            ha="left" if side == 1 else "right",
            bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8}
            if background
            else None,
            arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.6, "shrinkA": 0, "shrinkB": 3}
            if abs(dy) > h / 2
            else None,
        )


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


# --------------------------------------------------------------------------- benchmark results

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
    from matplotlib.patches import Patch

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


def roofline_figure(results: Results) -> Figure:
    """The attached device's roofline, each workload placed by arithmetic intensity.

    Ceilings are the datasheet peaks of a catalogued GPU, otherwise the best measured matmul
    TFLOP/s per math that ran (FP32, TF32, FP16, BF16) and the best measured bandwidth (said in
    the title)."""
    frame = _ok(results.frame())
    frame = frame[frame["arithmetic_intensity"].notna() & frame["achieved_tflops"].notna()]
    device = results.device
    row = None
    if device.catalogue_gpu:
        from .. import specs

        row = specs.lookup(device.catalogue_gpu)
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


# --------------------------------------------------------------------------- memory fit


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
        f"incl. {fit.attrs.get('runtime_reserve_bytes', 0) / 2**30:.1f} GiB runtime reserve)",
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
            if low is None or high is None or low != low or high != high:
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


# --------------------------------------------------------------------------- cost


def _plain_log_ticks(axis, minor: bool = True) -> None:
    """Plain numbers on a log axis: every decade, and with ``minor`` the 2s and 5s between them
    (1, 2, 5, 10, 20, 50...; labelling every minor tick makes them overlap); ``minor=False``
    leaves the minor ticks unlabelled (wide ranges)."""
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")

    def two_and_five(v, _):
        if v <= 0:
            return ""
        lead = round(v / 10 ** np.floor(np.log10(v)), 6)
        return f"{v:g}" if lead in (2.0, 5.0) else ""

    axis.set_major_formatter(fmt)
    axis.set_minor_formatter(
        matplotlib.ticker.FuncFormatter(two_and_five) if minor else matplotlib.ticker.NullFormatter()
    )


#: What a TFLOPS is, for the cost figures: the datasheet peak, or the share of it each GPU was
#: measured to sustain (:func:`gpukit.cost.cost_table`'s ``sustained_tflops``).
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
    from ..cost import pareto_front

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
    """Dollars per dense peak TFLOPS over time per GPU (a :func:`gpukit.cost.price_history` frame):
    street prices as lines, used prices dashed, launch prices as diamonds (log scale)."""
    import matplotlib.dates as mdates

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
    ax.set_title(
        f"Purchase price per {precision} TFLOPS over time (solid: new, dashed: used, diamond: launch)"
    )
    # one legend entry per GPU (its colour) and one per kind of price (its line), not one per pair
    from matplotlib.lines import Line2D

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


# --------------------------------------------------------------------------- performance model


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
        gpu = catalogue.loc[catalogue["gpu"] == r["gpu"]].iloc[0]
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
    (:func:`gpukit.matmul_rates.rates`), its runs' range as whiskers, the datasheet and the
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


def validation_figure(
    table: pd.DataFrame,
    highlight: pd.DataFrame | None = None,
    tolerance: float = 0.15,
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
    x = np.logspace(np.log10(lo), np.log10(hi), 50)
    ax.fill_between(
        x,
        x * (1 - tolerance),
        x * (1 + tolerance),
        color="#55A868",
        alpha=0.15,
        label=f"within ±{tolerance:.0%}",
    )
    ax.plot(x, x, color="black", lw=1, label="prediction = publication")
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
        numbered = highlight.assign(number=[str(k) for k in range(1, len(highlight) + 1)])
        lines = []
        for _, r in numbered.iterrows():
            what = " ".join(str(r[c]) for c in ("workload", "precision") if c in r and pd.notna(r[c]))
            lines.append(f"{r['number']}  {r['gpu_a']} / {r['gpu_b']}, {what}: {r['error_pct']:+.0f}%")
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
    return _finish(fig)


def scaling_validation_figure(table: pd.DataFrame, tolerance: float = 0.15) -> Figure:
    """Predicted against published scaling efficiency (N-GPU throughput over N x one GPU's, from
    one source) for every published multi-GPU run, with the ideal line and the tolerance band."""
    fig, ax = plt.subplots(figsize=(9, 6))
    ax.set_title("Predicted vs published scaling efficiency, N GPUs against one from the same source")
    if table.empty:
        ax.text(0.5, 0.5, "no multi-GPU measurements to grade", ha="center", transform=ax.transAxes)
        return _finish(fig)
    hi = max(1.05, table["published_efficiency"].max() * 1.05, table["predicted_efficiency"].max() * 1.05)
    x = np.linspace(0, hi, 50)
    ax.fill_between(
        x,
        x * (1 - tolerance),
        x * (1 + tolerance),
        color="#55A868",
        alpha=0.15,
        label=f"within ±{tolerance:.0%}",
    )
    ax.plot(x, x, color="black", lw=1, label="prediction = publication")
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
    fig, ax = plt.subplots(figsize=(9, 6))
    frame = table.dropna(subset=["decode_tokens_per_s"]).merge(
        catalogue[["gpu", "memory_bandwidth_gbs"]], on="gpu", how="left"
    )
    first = table.iloc[0]
    ax.set_title(
        f"Decode speed against memory bandwidth: {first['model']}, {first['weights']}, "
        f"context {first['context']}, batch {first['batch']}"
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


def work_cost_figure(work: pd.DataFrame) -> Figure:
    """Dollars per million units of work per GPU, renting and owning (hatched: predicted speed)."""
    cols = {
        "cloud_usd_per_million_items": "rent (cheapest cloud)",
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
        palette={"rent (cheapest cloud)": "#4C72B0", "own (TCO)": "#DD8452"},
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
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="white", edgecolor="grey", hatch="//"))
        labels.append("hatched: predicted speed")
    ax.legend(handles, labels, title="", fontsize="small", loc="upper right")
    return _finish(fig)


# --------------------------------------------------------------------------- head to head


def spec_ratio_figure(comparison) -> Figure:
    """Each numeric spec of GPU a over GPU b on a log axis centred on 1 (bars right: a leads)."""
    frame = comparison.specs.dropna(subset=["a_over_b"])
    frame = frame[frame["a_over_b"] > 0]
    fig, ax = plt.subplots(figsize=(9, 0.45 * max(len(frame), 1) + 1.8))
    if frame.empty:
        ax.text(0.5, 0.5, "no numeric spec to compare", ha="center", transform=ax.transAxes)
        ax.set_title("Spec ratios")
        return _finish(fig)
    labels = [f"{s} ({u})" if u else s for s, u in zip(frame["spec"], frame["unit"])]
    colors = ["#4C72B0" if r >= 1 else "#DD8452" for r in frame["a_over_b"]]
    ax.barh(labels, np.log2(frame["a_over_b"]), color=colors)
    ax.axvline(0, color="black", lw=1)
    lim = max(1.0, float(np.abs(np.log2(frame["a_over_b"])).max()) * 1.15)
    ax.set_xlim(-lim, lim)
    ticks = [t for t in (-3, -2, -1, 0, 1, 2, 3) if abs(t) <= lim]
    ax.set_xticks(ticks, [f"{2.0**t:g}×" for t in ticks])
    ax.invert_yaxis()
    ax.set_xlabel(f"{comparison.a} ÷ {comparison.b} (log scale; right of 1: {comparison.a} has more)")
    ax.set_title(f"Specs: {comparison.a} against {comparison.b}")
    from matplotlib.patches import Patch

    ax.legend(
        handles=[
            Patch(color="#4C72B0", label=f"{comparison.a} has more"),
            Patch(color="#DD8452", label=f"{comparison.b} has more"),
        ],
        fontsize="small",
        loc="lower right",
    )
    return _finish(fig)


def throughput_comparison_figure(comparison) -> Figure:
    """Throughput of both GPUs per workload and precision, relative to GPU b, labelled measured or predicted."""
    t = comparison.throughput.dropna(subset=["speedup_a_over_b"])
    fig, ax = plt.subplots(figsize=(9, 0.6 * max(len(t), 1) + 2))
    if t.empty:
        ax.text(0.5, 0.5, "no workload both GPUs run", ha="center", transform=ax.transAxes)
        ax.set_title("Throughput")
        return _finish(fig)
    labels = [f"{w}, {p}" for w, p in zip(t["workload"], t["precision"])]
    y = np.arange(len(t))
    ax.barh(y - 0.2, t["speedup_a_over_b"], height=0.4, color="#4C72B0", label=comparison.a)
    ax.barh(y + 0.2, np.ones(len(t)), height=0.4, color="#DD8452", label=f"{comparison.b} (= 1)")
    for yi, (_, r) in zip(y, t.iterrows()):
        ax.text(
            r["speedup_a_over_b"],
            yi - 0.2,
            f" {r['speedup_a_over_b']:.2f}× ({r['basis_a']})",
            va="center",
            fontsize="small",
        )
        ax.text(
            1,
            yi + 0.2,
            f" {r['throughput_b']:,.0f} {r['unit']} ({r['basis_b']})",
            va="center",
            fontsize="small",
        )
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(0, max(1.0, float(t["speedup_a_over_b"].max())) * 1.45)
    ax.set_xlabel(f"training throughput relative to {comparison.b}")
    ax.set_title(f"Throughput: {comparison.a} against {comparison.b}")
    ax.legend(
        fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1)
    )  # outside: the bar labels run to the right
    return _finish(fig)


def claims_figure(summary: pd.DataFrame) -> Figure:
    """Verdict counts per article (stacked bars)."""
    colors = {"confirmed": "#55A868", "unclear": "#CCB974", "wrong": "#C44E52"}
    fig, ax = plt.subplots(figsize=(9, 0.55 * max(len(summary), 1) + 1.8))
    left = np.zeros(len(summary))
    for verdict in ("confirmed", "unclear", "wrong"):
        values = summary[verdict].to_numpy() if verdict in summary else np.zeros(len(summary))
        ax.barh(summary["source"], values, left=left, color=colors[verdict], label=verdict)
        left = left + values
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_xlabel("claims checked against the catalogue")
    ax.set_title("Spec claims per article, by verdict")
    ax.legend(fontsize="small", loc="lower right")
    return _finish(fig)
