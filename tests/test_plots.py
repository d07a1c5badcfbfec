"""Figures carry a title, units on both axes, a legend, and one mark per GPU and mode."""
from __future__ import annotations

import pytest

from gpukit import plots, specs


@pytest.fixture(scope="module")
def pair(catalogue):
    plots.apply_style()
    return specs.select(catalogue, ["A40", "V100"])


def test_compute_figure(pair):
    ax = plots.compute_figure(pair).axes[0]
    assert ax.get_title() and "TFLOPS" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["A40", "V100 PCIe 16GB"]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["FP32 (CUDA cores)", "TF32 tensor", "FP16/BF16 tensor (FP32 accumulate)"]
    widths = sorted(round(p.get_width(), 1) for p in ax.patches if p.get_width() > 0)
    # A40: 37.4, 74.8, 149.7; V100 PCIe: 14, 112 (no TF32 bar for Volta).
    assert widths == [14.0, 37.4, 74.8, 112.0, 149.7]


def test_memory_figure(pair):
    ax = plots.memory_figure(pair).axes[0]
    assert ax.get_title() and "GB" in ax.get_xlabel() and "GB/s" in ax.get_ylabel()
    assert ax.get_legend() is not None
    texts = {t.get_text() for t in ax.texts}
    assert texts == {"A40", "V100 PCIe 16GB"}


def test_memory_figure_shares_labels_of_coinciding_points(catalogue):
    ax = plots.memory_figure(specs.select(catalogue, ["V100 PCIe 16GB", "V100 SXM2 16GB"])).axes[0]
    assert [t.get_text() for t in ax.texts] == ["V100 PCIe 16GB\nV100 SXM2 16GB"]


def test_efficiency_figure(pair):
    ax = plots.efficiency_figure(pair).axes[0]
    assert ax.get_title() and "per watt" in ax.get_xlabel()
    widths = sorted(round(p.get_width(), 4) for p in ax.patches if p.get_width() > 0)
    assert widths == pytest.approx(sorted([37.4 / 300, 149.7 / 300, 14 / 250, 112 / 250]), rel=1e-3)
