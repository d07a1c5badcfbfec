"""Head-to-head figures: two GPUs' specs as ratios, their throughput per workload relative to
each other, and the verdicts on articles' spec claims."""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .style import _finish

#: The colours of a bar that favours GPU a (right of 1) and GPU b (left of it).
SIDE_A, SIDE_B = "#4C72B0", "#DD8452"


def _sides_legend(ax, a_label: str, b_label: str, **where) -> None:
    """The legend of a two-sided bar chart: GPU a's colour, then GPU b's."""
    ax.legend(
        handles=[Patch(color=SIDE_A, label=a_label), Patch(color=SIDE_B, label=b_label)],
        fontsize="small",
        **where,
    )


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
    colors = [SIDE_A if r >= 1 else SIDE_B for r in frame["a_over_b"]]
    ax.barh(labels, np.log2(frame["a_over_b"]), color=colors)
    ax.axvline(0, color="black", lw=1)
    lim = max(1.0, float(np.abs(np.log2(frame["a_over_b"])).max()) * 1.15)
    ax.set_xlim(-lim, lim)
    ticks = [t for t in (-3, -2, -1, 0, 1, 2, 3) if abs(t) <= lim]
    ax.set_xticks(ticks, [f"{2.0**t:g}×" for t in ticks])
    ax.invert_yaxis()
    ax.set_xlabel(f"{comparison.a} ÷ {comparison.b} (log scale; right of 1: {comparison.a} has more)")
    ax.set_title(f"Specs: {comparison.a} against {comparison.b}")
    _sides_legend(ax, f"{comparison.a} has more", f"{comparison.b} has more", loc="lower right")
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
    ax.barh(y - 0.2, t["speedup_a_over_b"], height=0.4, color=SIDE_A, label=comparison.a)
    ax.barh(y + 0.2, np.ones(len(t)), height=0.4, color=SIDE_B, label=f"{comparison.b} (= 1)")
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


def advantage_figure(comparison, line: pd.DataFrame) -> Figure:
    """Who wins each row of a comparison's bottom line (:func:`gpukit.compare.bottom_line`) and by
    how much, on one log axis centred on even: a bar right of it where GPU a is better (more work
    per dollar, more speed, a larger batch, a lower price), left where GPU b is."""
    rows = line.dropna(subset=["advantage"])
    fig, ax = plt.subplots(figsize=(9.5, 0.38 * max(len(rows), 1) + 2.0))
    if rows.empty:
        ax.text(0.5, 0.5, "nothing both cards have a figure for", ha="center", transform=ax.transAxes)
        ax.set_title(f"{comparison.a} against {comparison.b}")
        return _finish(fig)
    logs = np.log2(rows["advantage"].astype(float))
    colors = [SIDE_A if v >= 0 else SIDE_B for v in logs]
    ax.barh(list(rows["what"]), logs, color=colors)
    ax.axvline(0, color="black", lw=1)
    lim = max(1.0, float(np.abs(logs).max())) * 1.45  # room for each bar's figure beyond its end
    ax.set_xlim(-lim, lim)
    ticks = [t for t in range(-6, 7) if abs(t) <= lim]
    ax.set_xticks(ticks, [f"{2.0 ** abs(t):g}×" if t else "even" for t in ticks])
    for y, v in enumerate(logs):
        ax.text(
            v + (0.03 if v >= 0 else -0.03) * lim,
            y,
            f"{2.0 ** abs(v):.2f}×",
            va="center",
            ha="left" if v >= 0 else "right",
            fontsize=8,
        )
    ax.invert_yaxis()
    ax.set_xlabel(f"how much better (log scale): right, {comparison.a}; left, {comparison.b}")
    ax.set_title(f"{comparison.a} against {comparison.b}: who wins, and by how much", pad=24)
    _sides_legend(
        ax,
        f"{comparison.a} better",
        f"{comparison.b} better",
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncols=2,
        frameon=False,
    )
    return _finish(fig)
