"""Every public figure of :mod:`gpukit.plots`, checked directly on the figure it returns.

Each figure is built from small inputs made with gpukit's own light functions (the catalogue,
the cost model, the closed-form transformer memory model, the performance model of the
synthetic workloads) or, where the producer needs TensorFlow, from hand-built frames with the
columns the figure reads. The tests check the house promises (a title, units on the axes, log
axes where meant, a legend naming the series given) and that the marks drawn are the data
given: bar lengths, point positions, line heights, heatmap cells and category labels. Expected
values are always taken from the inputs (never copied from the catalogue), so a corrected
catalogue keeps these tests green. Nothing here imports TensorFlow.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PathCollection, PolyCollection, QuadMesh  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from gpukit import compare, memory, perfmodel, plots, precision, rank, specs
from gpukit.bench import results
from gpukit.compare import claims
from gpukit.errors import ParameterError  # noqa: E402
from gpukit.plots import style  # noqa: E402
from gpukit.prices import book as prices
from gpukit.prices import cost

#: A mix of architectures (Volta, Turing, Ampere, Hopper), by natural names.
SAMPLE = ["A40", "V100", "RTX A4000", "H100 SXM5", "T4"]
#: The precision families of the compute figure: catalogue column -> legend entry.
COMPUTE_MODES = {
    "fp32_tflops": "FP32 (CUDA cores)",
    "tf32_tensor_tflops": "TF32 tensor",
    "fp16_tensor_tflops": "FP16/BF16 tensor (FP32 accumulate)",
}
EFFICIENCY_MODES = {
    "fp32_tflops": "FP32 (CUDA cores)",
    "fp16_tensor_tflops": "FP16/BF16 tensor (FP32 accumulate)",
}


# --------------------------------------------------------------------------- fixtures and helpers


@pytest.fixture(scope="module", autouse=True)
def house_style():
    """The notebooks' style, undone after this module so no other test sees it."""
    with matplotlib.rc_context():
        plots.apply_style()
        yield


@pytest.fixture(autouse=True)
def no_open_figures():
    """Figures come back already closed in pyplot (the module's promise); close anything left."""
    plt.close("all")
    yield
    left_open = plt.get_fignums()
    plt.close("all")
    assert not left_open, "a figure function left its figure open in pyplot"


@pytest.fixture(scope="module")
def sample(catalogue):
    return specs.select(catalogue, SAMPLE)


def rgba(color) -> tuple:
    return tuple(round(float(c), 3) for c in to_rgba(color))


def texts(items) -> list[str]:
    return [t.get_text() for t in items]


def legend_texts(ax) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None, f"no legend on {ax.get_title()!r}"
    return texts(legend.get_texts())


def legend_colours(ax) -> dict[tuple, str]:
    """{face colour of a legend handle: its entry} for the handles that have a face colour."""
    legend = ax.get_legend()
    out = {}
    for handle, text in zip(legend.legend_handles, legend.get_texts()):
        if hasattr(handle, "get_facecolor") and handle.get_facecolor() is not None:
            face = handle.get_facecolor()
            face = face[0] if np.ndim(face) == 2 and len(face) else face
            out[rgba(face)] = text.get_text()
    return out


def category_names(ax) -> dict[int, str]:
    """{tick position: label} of the category (y) axis of horizontal bars."""
    return {int(round(float(t))): lab.get_text() for t, lab in zip(ax.get_yticks(), ax.get_yticklabels())}


def hbars(ax, names_from=None) -> list[tuple[str, tuple, float, float]]:
    """(category, face colour, left, width) of every horizontal bar of ``ax``'s bar containers;
    the category is the y tick label nearest the bar's centre (``names_from``: another axes
    sharing the y axis, whose tick labels are the visible ones)."""
    names = category_names(names_from or ax)
    out = []
    for container in ax.containers:
        for p in container.patches:
            centre = p.get_y() + p.get_height() / 2
            out.append(
                (names[int(round(centre))], rgba(p.get_facecolor()), float(p.get_x()), float(p.get_width()))
            )
    return out


def bars_by_hue(ax, names_from=None) -> dict[tuple[str, str], float]:
    """{(category, legend entry of the bar's colour): bar length}."""
    colours = legend_colours(ax)
    out = {}
    for name, colour, _, width in hbars(ax, names_from):
        assert colour in colours, f"bar of {name} has a colour the legend does not name"
        key = (name, colours[colour])
        assert key not in out, f"two bars for {key}"
        out[key] = width
    return out


def expected_by_column(frame: pd.DataFrame, columns: dict[str, str], value=lambda row, col: row[col]) -> dict:
    """{(gpu, label): value} for every non-empty cell of ``columns``."""
    out = {}
    for _, row in frame.iterrows():
        for col, label in columns.items():
            v = value(row, col)
            if v == v and v is not None:
                out[(row["gpu"], label)] = float(v)
    return out


def collection(ax, label: str) -> PathCollection:
    hits = [c for c in ax.collections if c.get_label() == label]
    assert len(hits) == 1, (
        f"expected one collection labelled {label!r}, found {[c.get_label() for c in ax.collections]}"
    )
    return hits[0]


def offsets(coll) -> list[tuple[float, float]]:
    return [tuple(map(float, xy)) for xy in np.asarray(coll.get_offsets())]


def assert_points(actual, expected):
    """The same points, in any order."""
    actual, expected = sorted(actual), sorted(map(tuple, expected))
    assert len(actual) == len(expected), (actual, expected)
    assert np.ravel(actual).tolist() == pytest.approx(np.ravel(expected).tolist(), rel=1e-9)


def suptitle(fig) -> str:
    return fig._suptitle.get_text() if fig._suptitle is not None else ""


def annotation_texts(ax) -> list[str]:
    return texts(ax.texts)


def assert_message_only(fig, message: str):
    """An empty input: one axes with a title and the message saying why nothing is drawn."""
    (ax,) = fig.axes
    assert ax.get_title()
    assert message in annotation_texts(ax)
    assert not ax.patches and not ax.containers and not ax.collections and not ax.lines


# --------------------------------------------------------------------------- catalogue figures


def test_compute_figure_bars_are_the_catalogue_peaks(sample):
    ax = plots.compute_figure(sample).axes[0]
    assert ax.get_title()
    assert "TFLOPS" in ax.get_xlabel() and ax.get_xscale() == "log"
    order = sample.sort_values("fp16_tensor_tflops", ascending=False)["gpu"].tolist()
    assert texts(ax.get_yticklabels()) == order
    assert legend_texts(ax) == [m for col, m in COMPUTE_MODES.items() if sample[col].notna().any()]
    expected = expected_by_column(sample, COMPUTE_MODES)
    got = bars_by_hue(ax)
    assert got.keys() == expected.keys()
    assert got == pytest.approx(expected)


def test_compute_figure_has_no_bar_for_a_mode_the_gpu_lacks(catalogue):
    lacking = catalogue[catalogue["tf32_tensor_tflops"].isna()]
    assert len(lacking), "the catalogue has no GPU without TF32 to try this on"
    one = lacking.iloc[[0]]
    ax = plots.compute_figure(one).axes[0]
    assert texts(ax.get_yticklabels()) == [one["gpu"].iloc[0]]
    got = bars_by_hue(ax)
    assert got == pytest.approx(expected_by_column(one, COMPUTE_MODES))
    assert all(label != "TF32 tensor" for _, label in got)
    assert "TF32 tensor" not in legend_texts(ax)


def test_memory_figure_points_are_capacity_and_bandwidth(sample):
    ax = plots.memory_figure(sample).axes[0]
    assert ax.get_title()
    assert "GB" in ax.get_xlabel() and "GB/s" in ax.get_ylabel()
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    assert ax.get_yscale() == "log"
    points = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(points) == 1
    assert_points(offsets(points[0]), list(zip(sample["memory_gb"], sample["memory_bandwidth_gbs"])))
    names = "\n".join(annotation_texts(ax)).split("\n")
    assert sorted(names) == sorted(sample["gpu"])
    entries = legend_texts(ax)
    for value in set(sample["architecture"]) | set(sample["segment"]):
        assert value in entries


def test_memory_figure_shares_labels_of_coinciding_points(catalogue):
    same = catalogue.groupby(["memory_gb", "memory_bandwidth_gbs"])["gpu"].agg(list)
    same = same[same.map(len) > 1]
    if same.empty:
        pytest.skip("no two catalogue GPUs share capacity and bandwidth")
    names = same.iloc[0]
    ax = plots.memory_figure(specs.select(catalogue, names)).axes[0]
    assert annotation_texts(ax) == ["\n".join(names)]


def test_memory_figure_capacity_ticks_never_print_over_each_other(catalogue):
    """Every capacity of the catalogue gets a tick unless one within 10 % already has it (94 and
    96 GB share the 94 tick)."""
    ax = plots.memory_figure(catalogue).axes[0]
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert all(b / a > 1.1 for a, b in zip(ticks, ticks[1:]))
    for gb in catalogue["memory_gb"]:
        assert min(abs(gb / t - 1) for t in ticks) <= 0.1
    assert 94 in ticks and 96 not in ticks


def _label_boxes(fig):
    """Display-space boxes of a figure's point labels (their text only, not the leader lines)."""
    ax = fig.axes[0]
    renderer = style._renderer(fig)
    boxes = []
    fig.canvas.draw()
    for a in ax.texts:  # the text's own extent, without its leader line
        boxes.append((a.get_text(), matplotlib.text.Text.get_window_extent(a, renderer)))
    return ax.get_window_extent(renderer), boxes


@pytest.mark.parametrize("figure", ["memory", "decode", "price"])
@pytest.mark.slow  # a second or more: the full tier's
def test_point_labels_of_the_whole_catalogue_neither_overlap_nor_leave_the_axes(catalogue, figure):
    """The catalogue crowds its points (24 GB cards near 1 TB/s; decode speeds of a dozen GPUs
    between 800 and 1000 GB/s): every label is placed where no other covers it."""
    from gpukit import llm

    if figure == "memory":
        fig = plots.memory_figure(catalogue)
        expected = catalogue["gpu"]
    elif figure == "price":  # the shipped cloud prices: the H100 SXM5 and H200 SXM sit side by side
        costs = cost.cost_table(prices.load_prices(), catalogue=catalogue)
        fig = plots.price_performance_figure(costs, "fp16")
        expected = costs[costs["precision"] == "fp16"].dropna(subset=["cloud_usd_per_hour", "peak_tflops"])[
            "gpu"
        ]
        legend = fig.axes[0].get_legend().get_window_extent(style._renderer(fig))
    else:
        table = llm.llm_table("llama-3-8b", "q4_k_m", 8192, 1)
        fig = plots.llm_decode_figure(table, catalogue)
        expected = table.dropna(subset=["decode_tokens_per_s"])["gpu"]
    area, boxes = _label_boxes(fig)
    assert sorted("\n".join(t for t, _ in boxes).split("\n")) == sorted(expected)
    for i, (name, a) in enumerate(boxes):
        assert area.x0 - 1 <= a.x0 and a.x1 <= area.x1 + 1 and area.y0 - 1 <= a.y0 and a.y1 <= area.y1 + 1, (
            name
        )
        for other, b in boxes[i + 1 :]:
            assert not a.overlaps(b), (name, other)
        if figure == "price":
            assert not a.overlaps(legend), name


def test_memory_figure_of_a_single_gpu(catalogue):
    one = catalogue.iloc[[0]]
    ax = plots.memory_figure(one).axes[0]
    assert_points(
        offsets(ax.collections[0]), [(one["memory_gb"].iloc[0], one["memory_bandwidth_gbs"].iloc[0])]
    )
    assert annotation_texts(ax) == [one["gpu"].iloc[0]]
    lo, hi = ax.get_xlim()
    assert lo < one["memory_gb"].iloc[0] < hi


def per_watt(row, col):
    return row[col] / row["tdp_w"]


def test_efficiency_figure_bars_are_peak_per_watt(sample):
    ax = plots.efficiency_figure(sample).axes[0]
    assert ax.get_title()
    assert "TFLOPS per watt" in ax.get_xlabel()
    assert legend_texts(ax) == list(EFFICIENCY_MODES.values())
    expected = expected_by_column(sample, EFFICIENCY_MODES, per_watt)
    assert bars_by_hue(ax) == pytest.approx(expected)
    fp16 = sample["fp16_tensor_tflops"] / sample["tdp_w"]
    assert (
        texts(ax.get_yticklabels()) == sample.assign(k=fp16).sort_values("k", ascending=False)["gpu"].tolist()
    )
    assert ax.get_xlim()[0] == 0 and ax.get_xlim()[1] >= max(expected.values())


def test_efficiency_figure_of_one_gpu_without_a_tensor_mode(catalogue):
    one = catalogue.iloc[[0]].copy()
    one["fp16_tensor_tflops"] = np.nan  # a mode the architecture lacks is empty
    ax = plots.efficiency_figure(one).axes[0]
    gpu = one["gpu"].iloc[0]
    assert bars_by_hue(ax) == pytest.approx(
        {(gpu, "FP32 (CUDA cores)"): one["fp32_tflops"].iloc[0] / one["tdp_w"].iloc[0]}
    )


# --------------------------------------------------------------------------- benchmark results


#: The math each benchmark precision runs as in these made-up runs.
MATH = {"fp32": "FP32", "fp16": "FP16"}


def record(
    workload,
    precision,
    label,
    *,
    median_s=None,
    flops=None,
    nbytes=None,
    unit="TFLOP/s",
    items=None,
    peak=None,
    status="ok",
) -> results.Record:
    """A results record as ``gpukit bench`` writes it, with its rates worked out from the counts."""
    if status != "ok":
        return results.Record(
            workload,
            precision,
            {},
            status,
            label=label,
            error="ResourceExhaustedError: OOM when allocating tensor",
        )
    achieved = flops / median_s / 1e12
    rate = {"TFLOP/s": achieved, "GB/s": (nbytes or 0) / median_s / 1e9}.get(unit, (items or 0) / median_s)
    return results.Record(
        workload,
        precision,
        {},
        "ok",
        label=label,
        math_mode=MATH[precision],
        times_s=[median_s],
        median_s=median_s,
        iqr_s=0.0,
        noisy=False,
        throughput=rate,
        throughput_unit=unit,
        achieved_tflops=achieved,
        flops_per_step=flops,
        bytes_per_step=nbytes,
        items_per_step=items,
        peak=peak,
        peak_fraction=((rate if unit == "GB/s" else achieved) / peak) if peak else None,
    )


def results_document(catalogue_row=None, keep=lambda r: True) -> results.Results:
    """A small run: two matmuls, a bandwidth kernel, a ResNet-50 step and an out-of-memory conv;
    on a catalogued GPU when ``catalogue_row`` is given (peaks from it), else on a CPU."""

    def peak(column):
        return None if catalogue_row is None else float(catalogue_row[column])

    recs = [
        record(
            "matmul",
            "fp32",
            "matmul square 2048x2048x2048",
            median_s=1e-3,
            flops=2.0 * 2048**3,
            nbytes=3.0 * 2048**2 * 4,
            peak=peak("fp32_tflops"),
        ),
        record(
            "matmul",
            "fp16",
            "matmul square 4096x4096x4096",
            median_s=2e-3,
            flops=2.0 * 4096**3,
            nbytes=3.0 * 4096**2 * 2,
            peak=peak("fp16_tensor_tflops"),
        ),
        record(
            "bandwidth",
            "fp32",
            "bandwidth scale 512 MiB",
            median_s=2e-3,
            flops=float(2**27),
            nbytes=2.0 * 2**27 * 4,
            unit="GB/s",
            peak=peak("memory_bandwidth_gbs"),
        ),
        record(
            "resnet50",
            "fp32",
            "resnet50 train 224px batch 64",
            median_s=0.2,
            flops=3 * 4.1e9 * 64,
            nbytes=5e9,
            unit="images/s",
            items=64,
            peak=peak("fp32_tflops"),
        ),
        record("conv", "fp32", "conv 3x3 56x56x64->64 batch 4", status="oom"),
    ]
    if catalogue_row is None:
        device = results.Device("cpu", "Test CPU (2 logical cores)")
    else:
        device = results.Device("gpu", f"NVIDIA {catalogue_row['gpu']}", catalogue_gpu=catalogue_row["gpu"])
    return results.Results("bench", "2026-01-01T00:00:00Z", {}, device, tuple(r for r in recs if keep(r)))


@pytest.fixture(scope="module")
def a40(catalogue):
    return specs.lookup("A40", catalogue)


def ok_records(doc, compute: bool):
    return [r for r in doc.records if r.status == "ok" and (r.workload != "bandwidth") == compute]


def bar_widths_by_name(ax) -> dict[str, float]:
    return {name: width for name, _, _, width in hbars(ax)}


def test_achieved_figure_on_a_catalogued_gpu(a40):
    doc = results_document(a40)
    fig = plots.achieved_figure(doc)
    compute_ax, memory_ax = fig.axes
    assert doc.device.name in suptitle(fig) and "datasheet peak" in suptitle(fig)
    assert compute_ax.get_title() and memory_ax.get_title()
    assert "TFLOP/s" in compute_ax.get_xlabel() and "GB/s" in memory_ax.get_xlabel()
    for ax, compute, value in ((compute_ax, True, "achieved_tflops"), (memory_ax, False, "throughput")):
        recs = ok_records(doc, compute)
        names = [f"{r.label} · {r.precision}" for r in recs]
        assert bar_widths_by_name(ax) == pytest.approx({n: getattr(r, value) for n, r in zip(names, recs)})
        # The datasheet peak marker of each bar sits on its row, at the peak the record was measured against.
        rows = {name: pos for pos, name in category_names(ax).items()}
        marks = offsets(collection(ax, "datasheet peak"))
        assert_points(marks, [(getattr(r, value) / r.peak_fraction, rows[n]) for n, r in zip(names, recs)])
        assert annotation_texts(ax) == [f"{r.peak_fraction:.0%}" for r in recs]
        assert legend_texts(ax) == list(dict.fromkeys(r.workload for r in recs)) + ["datasheet peak"]
    assert not any("conv" in name for name in bar_widths_by_name(compute_ax))  # the out-of-memory run
    assert [x for x, _ in offsets(collection(memory_ax, "datasheet peak"))] == [
        pytest.approx(a40["memory_bandwidth_gbs"])
    ]


def test_achieved_figure_on_a_cpu_names_the_workloads_without_peaks():
    doc = results_document()
    fig = plots.achieved_figure(doc)
    compute_ax, memory_ax = fig.axes
    assert "no datasheet peak" in suptitle(fig)
    recs = ok_records(doc, True)
    assert bar_widths_by_name(compute_ax) == pytest.approx(
        {f"{r.label} · {r.precision}": r.achieved_tflops for r in recs}
    )
    assert not compute_ax.collections and not compute_ax.texts
    # Bars are coloured by workload: the legend says which colour is which.
    assert legend_texts(compute_ax) == list(dict.fromkeys(r.workload for r in recs))
    colours = legend_colours(compute_ax)
    for name, colour, _, _ in hbars(compute_ax):
        assert name.startswith(colours[colour])
    assert legend_texts(memory_ax) == ["bandwidth"]


def test_achieved_figure_with_only_a_bandwidth_run_turns_the_compute_panel_off():
    doc = results_document(keep=lambda r: r.workload == "bandwidth")
    fig = plots.achieved_figure(doc)
    compute_ax, memory_ax = fig.axes
    assert not compute_ax.axison and not compute_ax.patches
    assert bar_widths_by_name(memory_ax) == pytest.approx(
        {f"{r.label} · {r.precision}": r.throughput for r in doc.records}
    )


def roofline_points(doc) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in doc.records:
        if r.status == "ok":
            out.setdefault(r.workload, []).append((r.flops_per_step / r.bytes_per_step, r.achieved_tflops))
    return out


def ceiling_line(ax, math: str):
    (line,) = [ln for ln in ax.lines if "ceiling" in ln.get_label() and f", {math}:" in ln.get_label()]
    return np.asarray(line.get_xdata()), np.asarray(line.get_ydata())


def test_roofline_figure_uses_the_datasheet_ceilings_of_a_catalogued_gpu(a40):
    doc = results_document(a40)
    ax = plots.roofline_figure(doc).axes[0]
    assert "datasheet" in ax.get_title() and doc.device.name in ax.get_title()
    assert "FLOP per byte" in ax.get_xlabel() and "TFLOP/s" in ax.get_ylabel()
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    for workload, points in roofline_points(doc).items():
        assert_points(offsets(collection(ax, workload)), points)
    maths = {r.math_mode for r in doc.records if r.status == "ok"}
    assert sum("ceiling" in ln.get_label() for ln in ax.lines) == len(maths)
    bandwidth = a40["memory_bandwidth_gbs"]
    for m in maths:
        peak = a40[precision.MATH_PEAK_COLUMN[m]]
        x, y = ceiling_line(ax, m)
        assert y.max() == pytest.approx(peak)
        assert y == pytest.approx(np.minimum(peak, x * bandwidth / 1e3))
    entries = legend_texts(ax)
    assert f"datasheet bandwidth: {bandwidth:,.0f} GB/s" in entries
    assert set(roofline_points(doc)) <= set(entries)


def test_roofline_figure_of_a_cpu_uses_the_best_measurements():
    doc = results_document()
    ax = plots.roofline_figure(doc).axes[0]
    assert "best measured" in ax.get_title()
    best: dict[str, float] = {}
    for r in doc.records:
        if r.workload == "matmul":
            best[r.math_mode] = max(best.get(r.math_mode, 0.0), r.achieved_tflops)
    assert sum("ceiling" in ln.get_label() for ln in ax.lines) == len(best)
    for m, peak in best.items():
        assert ceiling_line(ax, m)[1].max() == pytest.approx(peak)
    bandwidth = max(r.throughput for r in doc.records if r.workload == "bandwidth" and r.status == "ok")
    assert f"best measured bandwidth: {bandwidth:,.0f} GB/s" in legend_texts(ax)


def test_roofline_figure_without_a_successful_run_says_so():
    doc = results_document(keep=lambda r: r.status != "ok")
    assert_message_only(plots.roofline_figure(doc), "no successful measurement to place")


# --------------------------------------------------------------------------- memory fit


@pytest.fixture(scope="module")
def fit():
    return memory.fit_report(
        ["bert-base", "gpt2-small"],
        [8, 32, 128],
        ["RTX A4000", "A40", "H100 SXM5"],
        "mixed_float16",
        "adam",
        "train",
    )


def panels(fig):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def labelled(fit):
    """The fit rows once per model and GPU, each model named as the largest-batch figure names it:
    with one example's size."""
    once = fit.drop_duplicates(["model", "gpu"]).copy()
    once["model"] = [f"{m} ({i})" for m, i in zip(once["model"], once["input"])]
    return once


def test_fit_heatmap_cells_are_the_share_of_memory_needed(fit):
    fig = plots.fit_heatmap(fit)
    models = list(dict.fromkeys(fit["model"]))
    axes = panels(fig)
    assert [ax.get_title() for ax in axes] == [
        f"{m}, {fit[fit['model'] == m]['input'].iloc[0]}" for m in models
    ]
    assert [ax.get_title() for ax in axes] == ["bert-base, 512 tokens", "gpt2-small, 1024 tokens"]
    first = fit.iloc[0]
    title = suptitle(fig)
    assert first["mode"] in title and first["precision"] in title
    assert f"{fit.attrs['runtime_reserve_bytes'] / 2**30:.1f} GiB" in title
    (colorbar,) = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert colorbar.get_ylabel()
    gpus = list(dict.fromkeys(fit.sort_values("gpu_memory_bytes")["gpu"]))
    batches = sorted(set(fit["batch_size"]))
    assert texts(axes[0].get_yticklabels()) == gpus
    for ax, model in zip(axes, models):
        assert ax.get_xlabel() == "batch size"
        assert texts(ax.get_xticklabels()) == [str(b) for b in batches]
        part = fit[fit["model"] == model]
        share = (
            part.assign(share=part["total_bytes"] / part["gpu_memory_bytes"])
            .pivot(index="gpu", columns="batch_size", values="share")
            .reindex(index=gpus, columns=batches)
        )
        (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
        assert np.asarray(mesh.get_array()).reshape(share.shape) == pytest.approx(
            share.clip(upper=2.0).to_numpy()
        )
        verdicts = part.pivot(index="gpu", columns="batch_size", values="verdict").reindex(
            index=gpus, columns=batches
        )
        marks = [t[0] for t in annotation_texts(ax)]
        assert marks == [
            {"fits": "✓", "borderline": "~", "does not fit": "✗"}[v] for v in verdicts.to_numpy().ravel()
        ]
    assert "~" in [t[0] for ax in axes for t in annotation_texts(ax)]  # the fixture has a borderline cell
    assert "borderline" in title


def test_largest_batch_figure_bars_are_the_largest_batches(fit):
    ax = plots.largest_batch_figure(fit).axes[0]
    first = fit.iloc[0]
    assert (
        ax.get_title()
        == f"Largest batch per GPU ({first['mode']}, {first['precision']}, {first['optimizer']})"
    )
    assert "batch size" in ax.get_xlabel()
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    assert legend_texts(ax) == ["bert-base (512 tokens)", "gpt2-small (1024 tokens)"]
    assert texts(ax.get_yticklabels()) == list(dict.fromkeys(fit.sort_values("gpu_memory_bytes")["gpu"]))
    once = labelled(fit)
    assert bars_by_hue(ax) == pytest.approx(
        {(r["gpu"], r["model"]): float(r["largest_batch"]) for _, r in once.iterrows()}
    )


def whiskers(ax) -> dict[tuple[str, str], tuple[float, float]]:
    """{(category, model): (low, high)} of the range whiskers, matched to the bar they sit on."""
    out = {}
    names, colours = category_names(ax), legend_colours(ax)
    bars = [
        (
            names[int(round(b.get_y() + b.get_height() / 2))],
            colours[rgba(b.get_facecolor())],
            b.get_y() + b.get_height() / 2,
        )
        for c in ax.containers
        for b in c.patches
    ]
    for line in ax.lines:
        if line.get_label() != "_range":
            continue
        (x0, x1), (y, _) = line.get_xdata(), line.get_ydata()
        matches = [(name, model) for name, model, by in bars if abs(by - y) < 1e-9]
        assert len(matches) == 1, f"a whisker at y={y} sits on {len(matches)} bars"
        out[matches[0]] = (x0, x1)
    return out


def test_largest_batch_figure_has_no_empty_rows_around_its_gpus(fit):
    ax = plots.largest_batch_figure(fit).axes[0]
    rows = len(ax.get_yticklabels())
    assert ax.get_ylim() == pytest.approx((rows - 0.5, -0.5))  # one row a GPU, the first at the top


def test_largest_batch_figure_whiskers_span_the_measured_error(fit):
    """Each bar carries a whisker from the largest batch at one edge of the family's measured error
    to the other, and the bar's end (the estimate) lies on it."""
    ax = plots.largest_batch_figure(fit).axes[0]
    once = labelled(fit)
    assert whiskers(ax) == {
        (r["gpu"], r["model"]): pytest.approx((r["largest_batch_low"], r["largest_batch_high"]))
        for _, r in once.iterrows()
    }
    assert all(
        r["largest_batch_low"] <= r["largest_batch"] <= r["largest_batch_high"] for _, r in once.iterrows()
    )
    assert "measured error" in ax.get_xlabel()


def test_largest_batch_figure_names_a_model_that_fits_nowhere():
    fit = memory.fit_report(["llama-7b", "bert-base"], [1], ["RTX A4000", "A40"], "fp32", "adam", "train")
    once = labelled(fit)
    misfits = once[once["largest_batch"] == 0]
    assert set(misfits["model"]) == {"llama-7b (2048 tokens)"}, (
        "llama-7b was expected not to fit these GPUs in fp32 training"
    )
    ax = plots.largest_batch_figure(fit).axes[0]
    assert legend_texts(ax) == ["llama-7b (2048 tokens)", "bert-base (512 tokens)"]
    fitting = once[once["largest_batch"] > 0]
    assert bars_by_hue(ax) == pytest.approx(
        {(r["gpu"], r["model"]): float(r["largest_batch"]) for _, r in fitting.iterrows()}
    )
    rows = {name: pos for pos, name in category_names(ax).items()}
    notes = [(t.get_text(), t.xy[1]) for t in ax.texts]
    assert sorted(notes) == sorted(
        (f"does not fit at batch 1: {r['model']}", rows[r["gpu"]]) for _, r in misfits.iterrows()
    )
    assert set(whiskers(ax)) == {(r["gpu"], r["model"]) for _, r in fitting.iterrows()}


# --------------------------------------------------------------------------- cost


@pytest.fixture(scope="module")
def book():
    """Prices made up for the test: A40, RTX A4000 and H100 to buy; A40, RTX A4000, V100 and T4 to rent."""
    purchase = pd.DataFrame(
        [
            {
                "gpu": "A40",
                "kind": "street",
                "usd": 4500.0,
                "date": "2026-01-01",
                "stale": False,
                "source_url": "https://example.com/p",
            },
            {
                "gpu": "RTX A4000",
                "kind": "msrp",
                "usd": 1000.0,
                "date": "2021-04-12",
                "stale": False,
                "source_url": "https://example.com/p",
            },
            {
                "gpu": "H100 SXM5",
                "kind": "street",
                "usd": 30000.0,
                "date": "2026-01-01",
                "stale": False,
                "source_url": "https://example.com/p",
            },
        ]
    )
    cloud = pd.DataFrame(
        [
            {
                "gpu": "A40",
                "provider": "P",
                "offering": "a",
                "kind": "on-demand",
                "usd_per_hour": 0.8,
                "date": "2026-01-01",
                "stale": False,
                "source_url": "https://example.com/p",
            },
            {
                "gpu": "RTX A4000",
                "provider": "P",
                "offering": "b",
                "kind": "on-demand",
                "usd_per_hour": 0.3,
                "date": "2026-01-01",
                "stale": False,
                "source_url": "https://example.com/p",
            },
            {
                "gpu": "V100 PCIe 16GB",
                "provider": "P",
                "offering": "c",
                "kind": "on-demand",
                "usd_per_hour": 0.5,
                "date": "2026-01-01",
                "stale": False,
                "source_url": "https://example.com/p",
            },
            # Dearer than an A40 and slower: off the Pareto front.
            {
                "gpu": "T4",
                "provider": "P",
                "offering": "d",
                "kind": "on-demand",
                "usd_per_hour": 5.0,
                "date": "2026-01-01",
                "stale": False,
                "source_url": "https://example.com/p",
            },
        ]
    )
    return prices.Prices(purchase, cloud)


@pytest.fixture(scope="module")
def costs(book, catalogue):
    return cost.cost_table(
        book, ["A40", "RTX A4000", "H100 SXM5", "V100", "T4"], ["fp32", "fp16"], catalogue=catalogue
    )


def by_gpu_and_precision(costs, column) -> dict:
    data = costs.dropna(subset=[column])
    return {(r["gpu"], r["precision"]): float(r[column]) for _, r in data.iterrows()}


def test_cost_per_tflop_figure_bars_are_the_cost_table(costs):
    fig = plots.cost_per_tflop_figure(costs)
    own, rent = fig.axes
    attrs = costs.attrs
    assert f"{attrs['years']:g} years" in suptitle(fig) and f"{attrs['utilization']:.0%}" in suptitle(fig)
    assert (
        "dollars per peak TFLOPS" in own.get_xlabel() and "dollars per peak TFLOPS-hour" in rent.get_xlabel()
    )
    assert own.get_xscale() == rent.get_xscale() == "log"
    order = list(dict.fromkeys(costs.sort_values("peak_tflops", ascending=False)["gpu"]))
    assert texts(own.get_yticklabels()) == order
    for ax, column in ((own, "tco_usd_per_tflop"), (rent, "cloud_usd_per_tflop_hour")):
        assert legend_texts(ax) == ["fp32", "fp16"]
        assert bars_by_hue(ax, names_from=own) == pytest.approx(by_gpu_and_precision(costs, column))
    # The GPU without a purchase price says so on its row.
    unpriced = costs.groupby("gpu")["price_usd"].apply(lambda s: s.isna().all())
    rows = {name: pos for pos, name in category_names(own).items()}
    assert sorted((t.get_text(), t.xy[1]) for t in own.texts) == sorted(
        ("no purchase price", rows[g]) for g in unpriced[unpriced].index
    )


def test_cost_figures_price_the_sustained_tflops_on_request(costs):
    fig = plots.cost_per_tflop_figure(costs, "sustained")
    own, rent = fig.axes
    assert (
        "dollars per sustained TFLOPS" in own.get_xlabel()
        and "per sustained TFLOPS-hour" in rent.get_xlabel()
    )
    assert "Cost per sustained TFLOP" in suptitle(fig)
    for ax, column in ((own, "tco_usd_per_sustained_tflop"), (rent, "cloud_usd_per_sustained_tflop_hour")):
        assert bars_by_hue(ax, names_from=own) == pytest.approx(by_gpu_and_precision(costs, column))
    # a tensor precision costs more per sustained TFLOPS than per peak where the GPU sustains less
    fp16 = costs[costs["precision"] == "fp16"].set_index("gpu")
    assert (fp16["tco_usd_per_sustained_tflop"] > fp16["tco_usd_per_tflop"]).loc[["A40", "H100 SXM5"]].all()
    fig = plots.price_performance_figure(costs, "fp16", "price_usd", basis="sustained")
    ax = fig.axes[0]
    assert ax.get_ylabel().startswith("sustained fp16 TFLOPS")
    priced = fp16.dropna(subset=["price_usd"])
    points = ax.collections[0].get_offsets()
    expected = sorted(zip(priced["price_usd"], priced["sustained_tflops"]))
    assert [v for p in sorted(map(tuple, points)) for v in p] == pytest.approx(
        [v for p in expected for v in p]
    )
    with pytest.raises(ParameterError, match="TFLOPS basis 'boost': use peak or sustained"):
        plots.cost_per_tflop_figure(costs, "boost")


def test_cost_per_tflop_figure_tick_labels_never_overlap(catalogue):
    from gpukit.prices import book as price_data

    fig = plots.cost_per_tflop_figure(cost.cost_table(price_data.load_prices(), catalogue=catalogue))
    fig.canvas.draw()
    for ax in fig.axes:
        boxes = sorted(
            (
                t.get_window_extent()
                for t in ax.get_xticklabels(minor=True) + ax.get_xticklabels()
                if t.get_text() and t.get_visible()
            ),
            key=lambda b: b.x0,
        )
        boxes = [b for b in boxes if ax.get_window_extent().x0 - 1 <= b.x0 <= ax.get_window_extent().x1]
        assert len(boxes) >= 2
        assert all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:])), [b.x0 for b in boxes]


def test_cost_per_tflop_figure_without_any_price_says_so(catalogue):
    none = prices.Prices(
        pd.DataFrame(columns=["gpu", "kind", "usd", "date", "stale"]),
        pd.DataFrame(columns=["gpu", "provider", "offering", "kind", "usd_per_hour", "date", "stale"]),
    )
    fig = plots.cost_per_tflop_figure(cost.cost_table(none, ["A40"], ["fp32"], catalogue=catalogue))
    for ax in fig.axes:
        assert "no prices for these GPUs" in annotation_texts(ax)
        assert not ax.containers
        assert ax.get_xlabel()


def test_price_performance_figure_points_and_pareto_front(costs):
    ax = plots.price_performance_figure(costs, "fp16").axes[0]
    assert "fp16" in ax.get_title()
    assert "dollars per GPU-hour" in ax.get_xlabel() and "TFLOPS" in ax.get_ylabel()
    assert ax.get_xscale() == ax.get_yscale() == "log"
    data = costs[costs["precision"] == "fp16"].dropna(subset=["cloud_usd_per_hour", "peak_tflops"])
    assert_points(offsets(collection(ax, "GPU")), list(zip(data["cloud_usd_per_hour"], data["peak_tflops"])))
    assert sorted("\n".join(annotation_texts(ax)).split("\n")) == sorted(data["gpu"])
    front = cost.pareto_front(data, "cloud_usd_per_hour", "peak_tflops")
    assert len(front) < len(data), "the test prices were meant to leave a GPU off the front"
    (step,) = [ln for ln in ax.lines if ln.get_label().startswith("Pareto front")]
    assert list(step.get_xdata()) == pytest.approx(front["cloud_usd_per_hour"].tolist())
    assert list(step.get_ydata()) == pytest.approx(front["peak_tflops"].tolist())
    assert legend_texts(ax) == ["GPU", step.get_label()]


def test_price_performance_figure_against_the_total_cost_of_ownership(costs):
    ax = plots.price_performance_figure(costs, "fp32", "tco_usd").axes[0]
    assert "total cost of ownership, dollars" in ax.get_xlabel()
    data = costs[costs["precision"] == "fp32"].dropna(subset=["tco_usd", "peak_tflops"])
    assert_points(offsets(collection(ax, "GPU")), list(zip(data["tco_usd"], data["peak_tflops"])))


def test_price_performance_figure_leaves_out_gpus_without_the_price(costs):
    ax = plots.price_performance_figure(costs, "fp16", "price_usd").axes[0]
    priced = costs[(costs["precision"] == "fp16") & costs["price_usd"].notna()]
    assert 0 < len(priced) < (costs["precision"] == "fp16").sum()
    assert_points(offsets(collection(ax, "GPU")), list(zip(priced["price_usd"], priced["peak_tflops"])))
    empty = plots.price_performance_figure(costs.assign(price_usd=np.nan), "fp16", "price_usd").axes[0]
    assert "no purchase price, dollars for these GPUs" in annotation_texts(empty)
    assert not empty.collections and empty.get_title() and "dollars" in empty.get_xlabel()


def test_price_history_figure_plots_dollars_per_tflops_over_time(catalogue):
    import matplotlib.dates as mdates

    rows = [
        ("A40", "street", 5200.0, "2023-01-15"),
        ("A40", "street", 4600.0, "2024-06-01"),
        ("A40", "street", 4100.0, "2025-09-01"),
        ("A40", "used", 2600.0, "2025-09-01"),
        ("RTX A4000", "msrp", 1000.0, "2021-04-12"),
        ("RTX A4000", "street", 900.0, "2024-02-01"),
    ]
    book = prices.Prices(
        pd.DataFrame(
            [
                {
                    "gpu": g,
                    "kind": k,
                    "usd": u,
                    "date": d,
                    "stale": False,
                    "source_url": "https://example.com/p",
                }
                for g, k, u, d in rows
            ]
        ),
        pd.DataFrame(columns=["gpu", "provider", "offering", "kind", "usd_per_hour", "date", "stale"]),
    )
    history = cost.price_history(book, "fp16", catalogue=catalogue)
    fig = plots.price_history_figure(history)
    ax = fig.axes[0]
    assert "over time" in ax.get_title() and ax.get_yscale() == "log"
    assert "USD per peak fp16 TFLOPS" in ax.get_ylabel() and ax.get_xlabel() == "date the price held"
    # one legend entry per GPU in its colour, and one per kind of price in its line style
    assert set(legend_texts(ax)) == {"A40", "RTX A4000"}
    (kinds,) = [a for a in ax.artists if isinstance(a, matplotlib.legend.Legend)]
    assert [t.get_text() for t in kinds.get_texts()] == ["new (street)", "used", "launch price"]
    colour = {
        t.get_text(): h.get_color()
        for t, h in zip(ax.get_legend().get_texts(), ax.get_legend().legend_handles)
    }
    for line in ax.get_lines():
        gpu, kind = line.get_label().split(", ")
        assert line.get_color() == colour[gpu]
        want = history[(history["gpu"] == gpu) & (history["kind"] == kind)].sort_values("date")
        peak = specs.lookup(gpu, catalogue)["fp16_tensor_tflops"]
        assert list(line.get_ydata()) == pytest.approx(list(want["usd"] / peak))
        assert [mdates.num2date(x).strftime("%Y-%m-%d") for x in mdates.date2num(line.get_xdata())] == list(
            want["date"].dt.strftime("%Y-%m-%d")
        )
    # the date labels are readable: none overlaps the next
    fig.canvas.draw()
    boxes = sorted((t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()), key=lambda b: b.x0)
    assert len(boxes) >= 3 and all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:]))


def test_price_history_figure_without_prices_says_so(catalogue):
    empty = cost.price_history(
        prices.Prices(
            pd.DataFrame(columns=["gpu", "kind", "usd", "date", "stale", "source_url"]), pd.DataFrame()
        ),
        "fp16",
        catalogue=catalogue,
    )
    assert_message_only(plots.price_history_figure(empty), "no dated purchase price for these GPUs")


def test_break_even_figure_bars_are_the_months(costs):
    ax = plots.break_even_figure(costs).axes[0]
    assert ax.get_title()
    assert "months" in ax.get_xlabel() and f"{costs.attrs['utilization']:.0%}" in ax.get_xlabel()
    data = costs.drop_duplicates("gpu").dropna(subset=["break_even_months"]).sort_values("break_even_months")
    assert len(data) >= 2
    assert texts(ax.get_yticklabels()) == data["gpu"].tolist()
    assert bar_widths_by_name(ax) == pytest.approx(dict(zip(data["gpu"], data["break_even_months"])))
    assert legend_texts(ax) == ["break-even"]


def test_break_even_figure_without_both_prices_says_so(costs):
    only_rented = costs[costs["price_usd"].isna()]
    assert_message_only(plots.break_even_figure(only_rented), "no GPU has both a purchase and a cloud price")


# --------------------------------------------------------------------------- performance model


@pytest.fixture(scope="module")
def bf16_matmul(catalogue):
    """Predicted dense matmuls in BF16: Volta and Turing have no BF16, so their rows are empty."""
    table = perfmodel.predict_table("matmul", "mixed_bfloat16", None, "infer", SAMPLE, catalogue=catalogue)
    assert table["throughput"].isna().any() and table["throughput"].notna().sum() >= 2
    return table


def test_predicted_roofline_figure_places_each_gpu_on_its_roofline(bf16_matmul, catalogue):
    ax = plots.predicted_roofline_figure(bf16_matmul, catalogue).axes[0]
    ran = bf16_matmul.dropna(subset=["throughput"])
    first = ran.iloc[0]
    assert first["workload"] in ax.get_title() and str(first["batch_size"]) in ax.get_title()
    assert "FLOP per byte" in ax.get_xlabel() and "TFLOP/s" in ax.get_ylabel()
    assert ax.get_xscale() == ax.get_yscale() == "log"
    entries = legend_texts(ax)
    assert [e.split(":")[0] for e in entries] == ran["gpu"].tolist()  # GPUs without BF16 are left out
    assert [t.get_text() for t in ax.texts] == [
        plots.ROOFLINE_BOUND_NOTE
    ]  # what "compute-bound" and "memory-bound" mean, beside it
    rooflines = [ln for ln in ax.lines if len(ln.get_xdata()) > 2]
    assert len(rooflines) == len(ran)
    for (_, r), entry in zip(ran.iterrows(), entries):
        assert f"({r['bound']}-bound)" in entry
        point = collection(ax, entry)
        assert offsets(point) == [pytest.approx((r["arithmetic_intensity"], r["achieved_tflops"]))]
        (line,) = [ln for ln in rooflines if rgba(ln.get_color()) == rgba(point.get_facecolor()[0])]
        row = specs.lookup(r["gpu"], catalogue)
        _, peak = precision.math_unit(row, r["precision"], True)
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert y == pytest.approx(np.minimum(peak, x * row["memory_bandwidth_gbs"] / 1e3))


def test_predicted_roofline_figure_when_no_gpu_can_run_it(bf16_matmul, catalogue):
    none = bf16_matmul[bf16_matmul["throughput"].isna()]
    assert_message_only(plots.predicted_roofline_figure(none, catalogue), "no GPU can run this configuration")


def test_predicted_throughput_figure_bars_and_measurement(catalogue):
    table = perfmodel.predict_table("matmul", "mixed_float16", 512, "infer", SAMPLE, catalogue=catalogue)
    table["measured_throughput"] = table["measured_throughput"].astype(float)
    measured_gpu = table["gpu"].iloc[1]
    table.loc[1, "measured_throughput"] = 0.8 * table.loc[1, "throughput"]
    ax = plots.predicted_throughput_figure(table).axes[0]
    first = table.iloc[0]
    assert first["workload"] in ax.get_title() and first["precision"] in ax.get_title()
    assert ax.get_xlabel() == f"predicted throughput, {first['throughput_unit']}"
    ordered = table.sort_values("throughput", ascending=False)
    assert texts(ax.get_yticklabels()) == ordered["gpu"].tolist()
    bounds = [b for b in ("compute", "memory") if b in set(table["bound"])]
    assert legend_texts(ax) == bounds + ["measured here"]
    assert bars_by_hue(ax) == pytest.approx(
        {(r["gpu"], r["bound"]): r["throughput"] for _, r in table.iterrows()}
    )
    rows = {name: pos for pos, name in category_names(ax).items()}
    assert offsets(collection(ax, "measured here")) == [
        pytest.approx((table.loc[1, "measured_throughput"], rows[measured_gpu]))
    ]


def test_predicted_throughput_figure_leaves_out_gpus_that_cannot_run_it(bf16_matmul):
    ax = plots.predicted_throughput_figure(bf16_matmul).axes[0]
    ran = bf16_matmul.dropna(subset=["throughput"])
    assert bar_widths_by_name(ax) == pytest.approx(dict(zip(ran["gpu"], ran["throughput"])))
    assert "measured here" not in legend_texts(ax)


def test_predicted_throughput_figure_when_no_gpu_can_run_it(bf16_matmul):
    none = bf16_matmul[bf16_matmul["throughput"].isna()]
    assert_message_only(plots.predicted_throughput_figure(none), "no GPU can run this configuration")


@pytest.fixture(scope="module")
def validation(catalogue):
    """The shipped reference measurements, graded against made-up predictions (no Keras model)."""
    reference = perfmodel.load_reference(catalogue=catalogue)
    predicted = reference["throughput"].to_numpy() * np.linspace(0.8, 1.25, len(reference))
    table = perfmodel.validation_table(reference, catalogue=catalogue, predicted=predicted)
    return table, perfmodel.key_pairs(table)


def test_validation_figure_points_band_and_highlights(validation):
    table, key = validation
    tolerance = 0.1
    ax = plots.validation_figure(table, key, tolerance=tolerance).axes[0]
    assert ax.get_title()
    assert "published speedup" in ax.get_xlabel() and "predicted speedup" in ax.get_ylabel()
    assert ax.get_xscale() == ax.get_yscale() == "log"
    (points,) = [
        c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets()) == len(table)
    ]
    assert_points(offsets(points), list(zip(table["published_speedup"], table["predicted_speedup"])))
    assert_points(
        offsets(collection(ax, "the pairs this kit is for")),
        list(zip(key["published_speedup"], key["predicted_speedup"])),
    )
    # each circled pair is numbered beside its point, and the key says which pair each number is
    (legend_key,) = [t for t in ax.texts if t.get_gid() == plots.VALIDATION_KEY_GID]
    numbers = {t.get_text(): t.xy for t in ax.texts if t.get_gid() != plots.VALIDATION_KEY_GID}
    assert sorted(numbers, key=int) == [str(k) for k in range(1, len(key) + 1)]
    lines = legend_key.get_text().split("\n")
    assert lines[0] == "the pairs this kit is for:" and len(lines) == len(key) + 1
    for k, (_, r) in enumerate(key.iterrows(), 1):
        assert lines[k] == (
            f"{k}  {r['gpu_a']} / {r['gpu_b']}, {r['workload']} {r['precision']}: {r['error_pct']:+.0f}%"
        )
        assert numbers[str(k)] == pytest.approx((r["published_speedup"], r["predicted_speedup"]))
    (band,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    xy = band.get_paths()[0].vertices
    assert sorted({round(y / x, 9) for x, y in xy}) == pytest.approx([1 - tolerance, 1 + tolerance])
    (ideal,) = [ln for ln in ax.lines if ln.get_label() == "prediction = publication"]
    assert list(ideal.get_ydata()) == pytest.approx(list(ideal.get_xdata()))
    entries = legend_texts(ax)
    for entry in [
        f"within ±{tolerance:.0%}",
        "prediction = publication",
        "the pairs this kit is for",
        *set(table["family"]),
        *set(table["source"]),
    ]:
        assert entry in entries


@pytest.mark.tensorflow
def test_scaling_validation_figure_points_and_band(catalogue):
    table = perfmodel.scaling_validation(perfmodel.load_reference(catalogue=catalogue), catalogue=catalogue)
    ax = plots.scaling_validation_figure(table, tolerance=0.15).axes[0]
    assert ax.get_title() and "published scaling efficiency" in ax.get_xlabel()
    assert "predicted scaling efficiency" in ax.get_ylabel()
    (points,) = [
        c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets()) == len(table)
    ]
    assert_points(offsets(points), list(zip(table["published_efficiency"], table["predicted_efficiency"])))
    entries = legend_texts(ax)
    for entry in ["within ±15%", "prediction = publication", *set(table["workload"]), "2 GPUs", "8 GPUs"]:
        assert entry in entries
    assert_message_only(plots.scaling_validation_figure(table.iloc[:0]), "no multi-GPU measurements to grade")


def test_validation_figure_without_highlights_or_pairs(validation):
    table, _ = validation
    ax = plots.validation_figure(table).axes[0]
    assert "the pairs this kit is for" not in legend_texts(ax) and not ax.texts
    assert_message_only(plots.validation_figure(table.iloc[:0]), "no pairs to grade")


@pytest.fixture(scope="module")
def speeds():
    """Images per second of ResNet-50 as a predict_table frame has them (one GPU measured)."""
    return pd.DataFrame(
        {
            "gpu": ["A40", "RTX A4000", "H100 SXM5", "V100 PCIe 16GB"],
            "throughput": [420.0, 260.0, 1750.0, 380.0],
            "throughput_unit": "images/s",
            "measured_throughput": [400.0, np.nan, np.nan, np.nan],
        }
    )


def test_work_cost_figure_bars_are_dollars_per_million_items(book, speeds, catalogue):
    work = cost.work_cost_table(book, speeds, catalogue=catalogue)
    ax = plots.work_cost_figure(work).axes[0]
    assert ax.get_xlabel() == "USD per million images"
    assert "measured and predicted" in ax.get_title()
    labels = {
        "cloud_usd_per_million_items": "rent (cloud, median of offers)",
        "owned_usd_per_million_items": "own (TCO)",
    }
    hatch_note = ["hatched: predicted speed"] if (work["basis"] == "predicted").any() else []
    assert legend_texts(ax) == list(labels.values()) + hatch_note
    expected = expected_by_column(work, labels)
    assert len(expected) >= 4
    assert bars_by_hue(ax) == pytest.approx(expected)
    cheapest = {}
    for (gpu, _), usd in expected.items():
        cheapest[gpu] = min(cheapest.get(gpu, math.inf), usd)
    assert texts(ax.get_yticklabels()) == sorted(cheapest, key=cheapest.get)


def test_work_cost_figure_hatches_predicted_throughput(book, speeds, catalogue):
    work = cost.work_cost_table(book, speeds, catalogue=catalogue)
    work.loc[work.index[0], "basis"] = "measured"  # one measured GPU among predicted ones
    ax = plots.work_cost_figure(work).axes[0]
    basis = dict(zip(work["gpu"], work["basis"]))
    assert {"measured", "predicted"} <= set(basis.values())
    assert "hatched: predicted speed" in [t.get_text() for t in ax.get_legend().get_texts()]
    names = category_names(ax)
    for container in ax.containers:
        for p in container.patches:
            gpu = names[int(round(p.get_y() + p.get_height() / 2))]
            assert bool(p.get_hatch()) == (basis[gpu] == "predicted"), gpu


def test_work_cost_figure_without_prices_says_so(speeds, catalogue):
    none = prices.Prices(
        pd.DataFrame(columns=["gpu", "kind", "usd", "date", "stale"]),
        pd.DataFrame(columns=["gpu", "provider", "offering", "kind", "usd_per_hour", "date", "stale"]),
    )
    work = cost.work_cost_table(none, speeds, catalogue=catalogue)
    assert_message_only(plots.work_cost_figure(work), "no GPU has both a price and a throughput")


# --------------------------------------------------------------------------- head to head


@pytest.fixture(scope="module")
def comparison(catalogue):
    """A40 against V100 on the synthetic workloads (BF16 matmul: V100 cannot run it)."""
    ra, rb = specs.gpu("A40", catalogue), specs.gpu("V100", catalogue)
    thr, _ = compare.throughput_table(
        ra, rb, ["matmul", "bandwidth"], ["float32", "mixed_bfloat16"], None, None, catalogue
    )
    return compare.Comparison(
        ra.name, rb.name, compare.spec_table(ra, rb), thr, pd.DataFrame(), pd.DataFrame()
    )


def test_spec_ratio_figure_bars_are_log2_of_the_ratios(comparison):
    c = comparison
    ax = plots.spec_ratio_figure(c).axes[0]
    assert c.a in ax.get_title() and c.b in ax.get_title()
    assert c.a in ax.get_xlabel() and c.b in ax.get_xlabel() and "log scale" in ax.get_xlabel()
    assert legend_texts(ax) == [f"{c.a} has more", f"{c.b} has more"]
    rows = c.specs[pd.to_numeric(c.specs["a_over_b"], errors="coerce") > 0]
    assert len(rows) >= 3
    labels = [f"{s} ({u})" if u else s for s, u in zip(rows["spec"], rows["unit"])]
    assert texts(ax.get_yticklabels()) == labels
    assert any("(TFLOPS)" in label for label in labels) and any("(GB/s)" in label for label in labels)
    colours = legend_colours(ax)
    drawn = hbars(ax)
    assert {name: width for name, _, _, width in drawn} == pytest.approx(
        dict(zip(labels, np.log2(rows["a_over_b"].astype(float))))
    )
    for (name, colour, _, _), ratio in zip(drawn, rows["a_over_b"]):
        assert colours[colour] == (f"{c.a} has more" if ratio >= 1 else f"{c.b} has more"), name
    for tick, label in zip(ax.get_xticks(), ax.get_xticklabels()):
        assert label.get_text() == f"{2.0**tick:g}×"


def test_spec_ratio_figure_without_numeric_specs_says_so(comparison):
    text_only = compare.Comparison(
        comparison.a,
        comparison.b,
        comparison.specs[comparison.specs["a_over_b"].isna()],
        comparison.throughput,
        pd.DataFrame(),
        pd.DataFrame(),
    )
    assert_message_only(plots.spec_ratio_figure(text_only), "no numeric spec to compare")


def test_throughput_comparison_figure_bars_are_the_speedups(comparison):
    c = comparison
    ax = plots.throughput_comparison_figure(c).axes[0]
    assert c.a in ax.get_title() and c.b in ax.get_title() and c.b in ax.get_xlabel()
    t = c.throughput.dropna(subset=["speedup_a_over_b"])
    assert 0 < len(t) < len(c.throughput)  # BF16 matmul has no V100 figure and is left out
    assert texts(ax.get_yticklabels()) == [f"{w}, {p}" for w, p in zip(t["workload"], t["precision"])]
    assert legend_texts(ax) == [c.a, f"{c.b} (= 1)"]
    by_label = {cont.get_label(): cont for cont in ax.containers}
    assert list(by_label[c.a].datavalues) == pytest.approx(t["speedup_a_over_b"].tolist())
    assert list(by_label[f"{c.b} (= 1)"].datavalues) == pytest.approx([1.0] * len(t))
    notes = annotation_texts(ax)
    for _, r in t.iterrows():
        assert f" {r['throughput_b']:,.0f} {r['unit']} ({r['basis_b']})" in notes
        assert f" {r['speedup_a_over_b']:.2f}× ({r['basis_a']})" in notes


def test_throughput_comparison_figure_without_a_common_workload_says_so(comparison):
    c = comparison
    neither = compare.Comparison(
        c.a,
        c.b,
        c.specs,
        c.throughput[c.throughput["speedup_a_over_b"].isna()],
        pd.DataFrame(),
        pd.DataFrame(),
    )
    assert_message_only(plots.throughput_comparison_figure(neither), "no workload both GPUs run")


# --------------------------------------------------------------------------- fact check


@pytest.fixture(scope="module")
def claim_summary(catalogue):
    return claims.summary(claims.check(catalogue=catalogue))


def stacked(ax) -> dict[tuple[str, str], tuple[float, float]]:
    names = category_names(ax)
    return {
        (names[int(round(p.get_y() + p.get_height() / 2))], cont.get_label()): (p.get_x(), p.get_width())
        for cont in ax.containers
        for p in cont.patches
    }


def test_claims_figure_stacks_the_verdict_counts(claim_summary):
    ax = plots.claims_figure(claim_summary).axes[0]
    assert ax.get_title() and "claims" in ax.get_xlabel()
    verdicts = ["confirmed", "unclear", "wrong"]
    assert legend_texts(ax) == verdicts
    assert texts(ax.get_yticklabels()) == claim_summary["source"].tolist()
    expected = {}
    for _, r in claim_summary.iterrows():
        left = 0.0
        for v in verdicts:
            expected[(r["source"], v)] = (left, float(r[v]))
            left += float(r[v])
    got = stacked(ax)
    assert got.keys() == expected.keys()
    assert {k: v[0] for k, v in got.items()} == pytest.approx({k: v[0] for k, v in expected.items()})  # lefts
    assert {k: v[1] for k, v in got.items()} == pytest.approx(
        {k: v[1] for k, v in expected.items()}
    )  # widths
    assert max(left + width for left, width in expected.values()) <= ax.get_xlim()[1]


def test_claims_figure_with_a_verdict_missing_or_no_article(claim_summary):
    partial = claim_summary.drop(columns=["unclear"])
    ax = plots.claims_figure(partial).axes[0]
    got = stacked(ax)
    assert all(got[(s, "unclear")][1] == 0 for s in partial["source"])
    assert all(got[(r["source"], "wrong")][0] == r["confirmed"] for _, r in partial.iterrows())
    empty = plots.claims_figure(claim_summary.iloc[:0]).axes[0]
    assert (
        empty.get_title() and not stacked(empty) and legend_texts(empty) == ["confirmed", "unclear", "wrong"]
    )


# --------------------------------------------------------------------------- coverage and imports


def test_llm_fit_heatmap_cells_are_the_share_of_memory_needed():
    from gpukit import llm

    matrix = llm.fit_matrix(
        ["llama-3-8b", "llama-3-70b"], "q4_k_m", 8192, 1, ["A40", "RTX A4000", "H100 SXM5"]
    )
    ax = plots.llm_fit_heatmap(matrix, "serving at q4_k_m").axes[0]
    assert ax.get_title() == "serving at q4_k_m" and ax.get_xlabel() == "model" and ax.get_ylabel() == "GPU"
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == matrix.size
    for share in matrix.stack():
        expected = (
            f"✓ {share:.0%}" if share <= 1 else (f"✗ {share:.1f}x" if share < 10 else f"✗ {share:.0f}x")
        )
        assert expected in texts
    # llama-3-70b does not fit on a 16 GB card; llama-3-8b at 4-bit does
    assert matrix.loc["llama-3-70b", "RTX A4000"] > 1 and matrix.loc["llama-3-8b", "RTX A4000"] < 1


def test_llm_decode_figure_points_are_the_predicted_decode_speeds(catalogue):
    from gpukit import llm

    # the 2024 profile: its source published the A40, V100 and H100
    table = llm.llm_table(
        "llama-3-8b",
        "q4_k_m",
        4096,
        1,
        ["A40", "RTX A4000", "V100 SXM2 32GB", "H100 SXM5"],
        engine="llama.cpp-2024",
    )
    ax = plots.llm_decode_figure(table, catalogue).axes[0]
    assert "llama-3-8b" in ax.get_title() and "memory bandwidth (GB/s)" in ax.get_xlabel()
    assert ax.get_title().endswith("llama.cpp-2024 (builds 2824-2843, flash attention off)")
    assert "tokens/s" in ax.get_ylabel()
    bw = catalogue.set_index("gpu")["memory_bandwidth_gbs"]
    expected = [(bw[g], t) for g, t in zip(table["gpu"], table["decode_tokens_per_s"])]
    published = collection(ax, plots.PUBLISHED_DECODE_LABEL)
    points = [
        o for c in ax.collections if isinstance(c, PathCollection) and c is not published for o in offsets(c)
    ]
    assert_points(points, expected)
    # what a source published of the same configuration, where one did (nobody ran an RTX A4000)
    seen = table.dropna(subset=["published_decode_tokens_per_s"])
    assert "A40" in set(seen["gpu"]) and "RTX A4000" not in set(seen["gpu"])
    assert_points(
        offsets(published), [(bw[g], t) for g, t in zip(seen["gpu"], seen["published_decode_tokens_per_s"])]
    )
    (line,) = [ln for ln in ax.lines if ln.get_label().startswith("bandwidth alone")]
    x, y = line.get_xdata(), line.get_ydata()
    assert y[-1] == pytest.approx(x[-1] * 1e9 / table.attrs["bytes_per_token"])
    assert_message_only(
        plots.llm_decode_figure(table.assign(decode_tokens_per_s=float("nan")), catalogue),
        "no GPU can run this configuration",
    )


def _ranking(rows, renting=False):
    """A ranking frame of (gpu, standing, throughput, price) rows, as gpukit.rank makes them."""
    column = "cloud_usd_per_hour" if renting else "price_usd"
    frame = pd.DataFrame(
        [{"gpu": g, "standing": st, "throughput": t, column: p, "gpus": 1} for g, st, t, p in rows]
    )
    frame.attrs.update(
        price=rank.Price("cloud" if renting else "street"), unit="images/s", job=rank.Job("resnet50")
    )
    return frame


def test_rank_figure_marks_the_front_and_greys_what_does_not_fit():
    ranking = _ranking(
        [
            ("A", "ranked", 100.0, 1000.0),
            ("B", "ranked", 300.0, 2000.0),
            ("C", "ranked", 200.0, 3000.0),  # dearer and slower than B: off the front
            ("D", "does not fit", 500.0, 1500.0),
            ("E", "no price", 400.0, None),
        ]
    )
    ax = plots.rank_figure(ranking).axes[0]
    assert_points(offsets(collection(ax, "fits")), [(1000, 100), (2000, 300), (3000, 200)])
    grey = collection(ax, "does not fit (throughput if it did)")
    assert_points(offsets(grey), [(1500, 500)])
    (step,) = [ln for ln in ax.lines if ln.get_label().startswith("Pareto front")]
    assert list(step.get_xdata()) == [1000, 2000] and list(step.get_ydata()) == [100, 300]
    assert sorted(annotation_texts(ax)) == ["A", "B", "C", "D"]  # E has no price to plot at
    assert "street purchase price, dollars" in ax.get_xlabel() and "images/s" in ax.get_ylabel()
    assert "resnet50 training" in ax.get_title() and ax.get_xscale() == "log"
    renting = plots.rank_figure(_ranking([("A", "ranked", 100.0, 0.5)], renting=True)).axes[0]
    assert "cloud rate, dollars per hour" in renting.get_xlabel()
    empty = plots.rank_figure(_ranking([("E", "no price", 400.0, None)])).axes[0]
    assert "no GPU has a street purchase price and a throughput" in annotation_texts(empty)


def test_every_public_figure_function_is_tested_here():
    public = {
        name
        for name, obj in vars(plots).items()
        if callable(obj)
        and getattr(obj, "__module__", "").startswith(f"{plots.__name__}.")
        and not name.startswith("_")
        and name.endswith(("_figure", "_heatmap"))
    }
    source = Path(__file__).read_text(encoding="utf-8")
    untested = sorted(name for name in public if f"plots.{name}(" not in source)
    assert len(public) >= 17 and not untested, untested


@pytest.mark.slow  # a second or more: the full tier's
def test_the_test_inputs_never_import_tensorflow():
    """Importing this module's dependencies in a fresh interpreter loads no TensorFlow (that no
    figure test loads it either is what conftest's tier guard checks, test by test)."""
    code = (
        "import sys, matplotlib; matplotlib.use('Agg'); "
        "from gpukit import claims, compare, cost, memory, perfmodel, plots, precision, prices, results, specs; "
        "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_every_benchmark_workload_has_a_marker_and_colour():
    from gpukit.bench import workloads

    assert set(plots.WORKLOAD_MARKERS) == set(workloads.UNITS)


def test_sustained_share_figure_bars_are_the_measured_shares():
    from gpukit.specs import matmul_rates

    table = matmul_rates.rates()
    fig = plots.sustained_share_figure(table, matmul_rates.typical_share(table))
    ax = fig.axes[0]
    ordered = table.sort_values("share")
    assert [t.get_text() for t in ax.get_yticklabels()] == list(ordered["gpu"])
    widths = [p.get_width() for p in ax.patches]
    assert widths == pytest.approx(list(100 * ordered["share"]))
    assert ax.get_title() and "% of the datasheet" in ax.get_xlabel()
    labels = ax.get_legend_handles_labels()[1]
    assert "datasheet peak" in labels and any(label.startswith("median share") for label in labels)


def test_advantage_figure_bars_are_log2_of_who_wins_each_bottom_line_row(comparison):
    line = pd.DataFrame(
        {
            "what": ["work per $1,000", "speed", "largest batch", "price"],
            "wins": ["A40, 2.00×", "V100, 1.25×", "", "about even (A40 by 1.05×)"],
            "advantage": [2.0, 0.8, None, 1.05],
        }
    )
    ax = plots.advantage_figure(comparison, line).axes[0]
    c = comparison
    assert c.a in ax.get_title() and c.b in ax.get_title() and "log scale" in ax.get_xlabel()
    assert legend_texts(ax) == [f"{c.a} better", f"{c.b} better"]
    colours = legend_colours(ax)
    drawn = {name: (colours[colour], width) for name, colour, _, width in hbars(ax)}
    assert set(drawn) == {"work per $1,000", "speed", "price"}  # no figure for both: no bar
    assert drawn["work per $1,000"] == (f"{c.a} better", pytest.approx(1.0))
    assert drawn["speed"] == (f"{c.b} better", pytest.approx(np.log2(0.8)))
    assert drawn["price"][0] == f"{c.a} better"
    assert annotation_texts(ax) == ["2.00×", "1.25×", "1.05×"]


def test_advantage_figure_without_a_shared_figure_says_so(comparison):
    line = pd.DataFrame({"what": ["speed"], "wins": [""], "advantage": [None]})
    assert_message_only(plots.advantage_figure(comparison, line), "nothing both cards have a figure for")


def test_rank_figures_draw_each_ranking_in_a_panel_of_its_own():
    one = _ranking([("A", "ranked", 100.0, 1000.0), ("B", "ranked", 300.0, 2000.0)])
    two = _ranking([("C", "ranked", 50.0, 500.0), ("D", "does not fit", 80.0, 700.0)])
    fig = plots.rank_figures([one, two])
    assert len(fig.axes) == 2
    for ax, ranking in zip(fig.axes, (one, two)):
        alone = plots.rank_figure(ranking).axes[0]
        assert ax.get_title() == alone.get_title() and ax.get_xlabel() == alone.get_xlabel()
        assert offsets(collection(ax, "fits")) == offsets(collection(alone, "fits"))
    assert_points(offsets(collection(fig.axes[1], "does not fit (throughput if it did)")), [(700, 80)])
    assert_message_only(plots.rank_figures([]), "no ranking to draw")
