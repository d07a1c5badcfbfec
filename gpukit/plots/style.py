"""The house style every figure shares: colours and markers, the seaborn theme, how a figure is
finished, labels placed beside scatter points without covering each other, and plain log ticks."""

from __future__ import annotations

import math

import matplotlib
import matplotlib.legend
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

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


def _renderer(fig: Figure):
    """A renderer to measure text with, whatever canvas the figure has (a closed figure's has none)."""
    if not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    return fig.canvas.get_renderer()


# --------------------------------------------------------------------------- point labels

_Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in display pixels


class _FreeSpace:
    """Where a label may still go: the axes' area, in display pixels, less the boxes taken."""

    def __init__(self, area, taken: list[_Box], step: float):
        self.area = area
        self.taken = taken
        self.step = step
        # near the point on the right, then near it on the left, then farther on either side, as far as
        # the axes go (k-th try: k // 2 steps up or down); the first free place, or failing one the least
        # covered
        self.tries = [(side, k) for side in (1, -1) for k in range(9)]
        self.tries += [(side, k) for k in range(9, 2 * (int(area.height / step) + 2)) for side in (1, -1)]

    def covered(self, box: _Box) -> float:
        """How much of ``box`` lies on what is already taken (inf: it leaves the axes)."""
        x0, y0, x1, y1 = box
        area = self.area
        if x0 < area.x0 or x1 > area.x1 or y0 < area.y0 or y1 > area.y1:
            return math.inf
        return sum(
            max(0.0, min(x1, b[2]) - max(x0, b[0])) * max(0.0, min(y1, b[3]) - max(y0, b[1]))
            for b in self.taken
        )

    def place(self, px: float, py: float, w: float, h: float, pad: float) -> tuple[int, float, _Box]:
        """(side, vertical offset, box) of a ``w`` x ``h`` label for the point at (px, py), ``pad``
        beside it: the first free place of :attr:`tries`, or failing one the least covered."""
        best, best_cover = (1, 0.0, (px + pad, py - h / 2, px + pad + w, py + h / 2)), math.inf
        for side, k in self.tries:
            dy = (k + 1) // 2 * self.step * (1 if k % 2 else -1)
            x0 = px + pad if side == 1 else px - pad - w
            box = (x0, py + dy - h / 2, x0 + w, py + dy + h / 2)
            cover = self.covered(box)
            if cover < best_cover:
                best, best_cover = (side, dy, box), cover
                if cover == 0:
                    break
        return best


def _taken_boxes(ax, renderer, points: np.ndarray, avoid, marker: float) -> list[_Box]:
    """What no label may cover: a marker's box around each point and each ``avoid`` point (data
    units), and any legend drawn inside the axes."""
    others = (
        ax.transData.transform(np.asarray(avoid, float).reshape(-1, 2)) if len(avoid) else np.empty((0, 2))
    )
    taken = [(px - marker, py - marker, px + marker, py + marker) for px, py in np.vstack([points, others])]
    legends = [a for a in ax.artists if isinstance(a, matplotlib.legend.Legend)] + [ax.get_legend()]
    for legend in filter(None, legends):
        bb = legend.get_window_extent(renderer)
        taken.append((bb.x0, bb.y0, bb.x1, bb.y1))
    return taken


def _text_size(ax, renderer, text: str, fontsize: float) -> tuple[float, float]:
    """Width and height, in display pixels, of ``text`` at ``fontsize``."""
    probe = ax.text(0, 0, text, fontsize=fontsize, transform=None)
    extent = probe.get_window_extent(renderer)
    probe.remove()
    return extent.width, extent.height


def _draw_label(
    ax, name: str, xy, side: int, dy: float, h: float, pad: float, fontsize: float, background: bool
) -> None:
    """``name`` at ``pad`` pixels to the ``side`` of the point ``xy`` and ``dy`` above it, with a
    leader line where it moved off the point's height."""
    dpi = ax.figure.dpi
    ax.annotate(
        name,
        xy,
        xytext=(side * pad * 72 / dpi, dy * 72 / dpi),
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
    points = ax.transData.transform(groups[[x, y]].to_numpy(float))
    marker = (
        (fontsize * 0.6 if marker_pt is None else marker_pt) * fig.dpi / 72
    )  # half a marker's size, in pixels
    space = _FreeSpace(
        ax.get_window_extent(renderer),
        _taken_boxes(ax, renderer, points, avoid, marker),
        step=fontsize * fig.dpi / 72 * 0.7,
    )
    pad = 4 * fig.dpi / 72
    for i in np.lexsort((points[:, 0], points[:, 1])):
        px, py = points[i]
        name = groups.iloc[i][label]
        w, h = _text_size(ax, renderer, name, fontsize)
        own = (px - marker, py - marker, px + marker, py + marker)
        space.taken.remove(own)
        side, dy, box = space.place(px, py, w, h, pad)
        space.taken.append(own)
        space.taken.append(box)
        _draw_label(ax, name, (groups.iloc[i][x], groups.iloc[i][y]), side, dy, h, pad, fontsize, background)


# --------------------------------------------------------------------------- log axes


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
