"""Each GPU's error band (gpukit.perfmodel.bands): a graded GPU quotes its family's median error,
or its own held-out error where larger; an ungraded one the largest error of its architecture's
GPUs held out of the fit, or of any GPU where no GPU of its architecture was graded; never
narrower than the family's."""

from __future__ import annotations

import pandas as pd
import pytest

from gpukit.perfmodel import bands

CATALOGUE = pd.DataFrame(
    {
        "gpu": ["A100", "A40", "H100", "H200", "T4", "RTX 5090"],
        "architecture": ["Ampere", "Ampere", "Hopper", "Hopper", "Turing", "Blackwell"],
    }
)


@pytest.fixture
def graded(monkeypatch):
    accuracy = {"pairs": 40, "median_abs_error_pct": 7.0, "gpus": ("A100", "A40", "H100")}
    held = {
        "transformer": {"A100": 5.0, "A40": 12.0, "H100": 9.0},
        "CNN": {"A100": 3.0, "A40": 4.0, "H100": 2.0},
    }
    monkeypatch.setattr(bands, "family_accuracy", lambda fam: accuracy)
    monkeypatch.setattr(bands, "graded_gpus", lambda fam: set(accuracy["gpus"]))
    monkeypatch.setattr(bands, "held_out_errors", held.__getitem__)


def test_graded_gpus_quote_the_family_and_ungraded_ones_their_architecture(graded):
    out = bands.error_bands("bert-base", list(CATALOGUE["gpu"]), CATALOGUE)
    assert out["A100"] == bands.Band(7.0, "graded", "±7% (graded on it)", ("A100",))
    # the A40 is graded, but erred by 12% when left out of the fit: its own error, not the family's 7%
    assert out["A40"] == bands.Band(12.0, "graded", "±12% (graded; its held-out error)", ("A40",))
    # H200: Hopper's one held-out GPU, the H100, erred by 9% when left out
    assert out["H200"].error_pct == 9.0 and out["H200"].basis == "architecture"
    assert out["H200"].text == "±9% (not graded; Hopper GPUs held out)" and out["H200"].graded_on == ("H100",)
    # no Turing or Blackwell GPU was graded: the worst held-out GPU of any architecture, the A40's 12%
    assert out["T4"].error_pct == out["RTX 5090"].error_pct == 12.0
    assert out["RTX 5090"].text == "±12% (not graded, nor any Blackwell GPU)"
    assert out["RTX 5090"].graded_on == out["T4"].graded_on == ("A40",)


def test_a_band_is_never_narrower_than_the_family(graded):
    # in the CNN family every held-out error (2-4%) is below the family's median (7%)
    out = bands.error_bands("resnet50", ["H200", "T4"], CATALOGUE)
    assert out["H200"].error_pct == out["T4"].error_pct == 7.0


def test_several_gpus_quote_the_scaling_family(graded):
    out = bands.error_bands("resnet50", ["T4", "A100"], CATALOGUE, count=4)
    assert {b.error_pct for b in out.values()} == {7.0} and "N-GPU" in out["T4"].text


def test_a_synthetic_kernel_has_no_band(graded):
    assert bands.error_bands("matmul", ["A100"], CATALOGUE)["A100"].error_pct is None


@pytest.mark.parametrize(
    ("a", "b", "e_a", "e_b", "within"),
    [
        (110, 100, 5, 5, True),  # 1.10 <= 1.05 x 1.05 = 1.1025
        (111, 100, 5, 5, False),  # 1.11 > 1.1025
        (100, 119, 10, 9, True),  # 1.19 <= 1.10 x 1.09 = 1.199, whichever is larger
        (100, 121, 10, 9, False),
    ],
)
def test_within_error_compares_the_ratio_with_both_bands(a, b, e_a, e_b, within):
    assert bands.within_error(a, b, e_a, e_b) is within


def test_within_error_needs_two_figures_and_two_bands():
    assert not bands.within_error(0, 100, 10.0, 10.0)
    assert not bands.within_error(100, 100, 10.0, None)


@pytest.mark.slow  # a second or more: the full tier's
def test_the_held_out_errors_are_fitted_within_the_family(monkeypatch, tmp_path):
    """The shipped transformer runs, each GPU left out of a fit to the other transformer pairs:
    without TensorFlow (the fast tier fails a test that imports it)."""
    monkeypatch.setenv("GPUKIT_CACHE_DIR", str(tmp_path))
    held = bands.held_out_errors("transformer")
    assert {"A100 SXM4 80GB", "H100 SXM5", "RTX A5000"} <= set(held)
    assert all(0 < e < 50 for e in held.values())


def test_the_prediction_table_names_the_gpus_each_band_was_graded_on(graded):
    frame = pd.DataFrame({"gpu": ["A100", "H200 SXM"], "throughput": [1.0, 2.0]})
    out = bands.with_error_bands(frame, "bert-base")
    assert out["error_band_pct"].tolist() == [7.0, 12.0]
    # the A100 on its own pairs; the H200, of an architecture none of the held-out GPUs shares, on
    # the GPU held out that erred most
    assert out["graded_on"].tolist() == ["A100", "A40"]
    assert out["throughput"].tolist() == [1.0, 2.0] and "graded_on" not in frame
