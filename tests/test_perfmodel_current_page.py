"""The current-generation section of docs/accuracy/perfmodel.md (benchmarks/perfmodel_page/current.py):
only pairs of two current GPUs, the model graded beside the two bare-ratio baselines on the same pairs."""

from __future__ import annotations

import importlib
from pathlib import Path

import pandas as pd
import pytest

from gpukit import perfmodel

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def current(monkeypatch):
    module = importlib.import_module("benchmarks.perfmodel_page.current")
    monkeypatch.setattr(perfmodel, "held_out_errors", lambda fam: {"H100": 6.0})
    bands = {g: perfmodel.Band(5.0, "graded", "±5% (graded on it)") for g in ("H100", "H200")}
    bands["L40S"] = perfmodel.Band(9.0, "architecture", "±9% (not graded; Ada Lovelace GPUs held out)")
    monkeypatch.setattr(perfmodel, "error_bands", lambda workload, gpus, cat: {g: bands[g] for g in gpus})
    return module


CAT = pd.DataFrame(
    {
        "gpu": ["H100", "H200", "L40S", "A100"],
        "architecture": ["Hopper", "Hopper", "Ada Lovelace", "Ampere"],
        "fp16_tensor_tflops": [800.0, 800.0, 360.0, 312.0],
        "memory_bandwidth_gbs": [2000.0, 4800.0, 864.0, 2000.0],
        "compute_capability": [9.0, 9.0, 8.9, 8.0],
        "fp32_tflops": [51.0, 67.0, 91.6, 19.5],
    }
)


def test_only_pairs_of_two_current_gpus_are_graded_beside_the_baselines(current):
    table = pd.DataFrame(
        {
            "source": ["s", "s"],
            "family": ["transformer", "transformer"],
            "precision": ["fp16", "fp16"],
            "gpu_a": ["H200", "H100"],
            "gpu_b": ["H100", "A100"],  # the second pair has an Ampere GPU: left out
            "published_speedup": [1.5, 3.0],
            "predicted_speedup": [1.6, 3.0],
        }
    )
    lines = "\n".join(current.current_section(table, CAT))
    # the model: 1.6/1.5 - 1 = 6.7%, within ±20%, winner right (gap 50% > 15%); the tensor peaks
    # are equal (1.0x, 33% off) and the bandwidths 4800/2000 = 2.4x (60% off): neither within
    assert "| transformer | s | 1 | 1 of 1 (100.0%) | 6.7% | 1 of 1 | 0 of 1 | 0 of 1 |" in lines
    assert "Graded in these pairs: H100, H200; the sources: s." in lines
    assert (
        "- **One GPU against another:** 1 of 1 within ±20% (100.0%), winners right in 1 of 1: the target is met."
        in lines
    )
    assert "| H100 | transformer | 6.0% | — | — |" in lines
    assert (
        "In no graded single-GPU pair: L40S. Their predictions are quoted with the wider band above." in lines
    )
    assert "Whole systems" not in lines


def test_system_pairs_are_graded_per_publisher_with_their_held_out_errors(current):
    table = pd.DataFrame(
        {
            "source": ["s"],
            "family": ["CNN"],
            "precision": ["fp16"],
            "gpu_a": ["H200"],
            "gpu_b": ["H100"],
            "published_speedup": [1.1],
            "predicted_speedup": [1.1],
        }
    )
    systems = pd.DataFrame(
        {
            "source": ["acme-mlperf-v4.0", "beta-mlperf-v4.0", "lambda-2024"],
            "family": ["CNN"] * 3,
            "precision": ["fp16"] * 3,
            "gpu_a": ["H100", "H100", "H200"],
            "gpu_b": ["L40S", "L40S", "H100"],
            "gpus_a": [8, 4, 8],
            "gpus_b": [8, 8, 8],
            "published_speedup": [4.0, 4.0, 1.1],
            "predicted_speedup": [2.8, 4.2, 1.1],  # 30% off, 5% off, exact
        }
    )
    held = pd.DataFrame(
        [{"held_out": "L40S", "family": "CNN", "median_abs_error_pct": 17.5, "within_15_pct": "1/2"}]
    )
    lines = "\n".join(current.current_section(table, CAT, systems, held))
    # the two MLPerf submitters are one publisher: 1 of 2 within ±20%, median of 30% and 5%
    assert "| CNN | MLPerf Training | 2 | 1 of 2 (50.0%) | 17.5% | 2 of 2 |" in lines
    assert "| CNN | lambda | 1 | 1 of 1 (100.0%) | 0.0% |" in lines
    assert "| CNN | all | 3 | 2 of 3 (66.7%) |" in lines
    assert "| L40S | CNN | — | 17.5% | 1/2 |" in lines
    assert "L40S only in the system pairs above." in lines
    assert "Outside ±20%: 1 of 3 pairs; the GPUs in them, with how many: H100 1, L40S 1." in lines
    assert "Every pair lands within the band." in lines  # the one single-GPU pair
    # 2 of 3 within (66.7%), both winners past the 15% gap right: below the 85% target
    assert (
        "- **Whole systems:** 2 of 3 within ±20% (66.7%), winners right in 2 of 2: the target is not met."
        in lines
    )


@pytest.mark.parametrize(
    "source, name",
    [("nvidia-mlperf-v4.0", "MLPerf Training"), ("lambda-2023", "lambda"), ("nikolasent-2025", "nikolasent")],
)
def test_a_publisher_is_the_source_without_its_year(current, source, name):
    assert current.publisher(source) == name


def test_no_current_pair_says_so(current):
    table = pd.DataFrame(
        columns=["source", "family", "precision", "gpu_a", "gpu_b", "published_speedup", "predicted_speedup"]
    )
    lines = current.current_section(table, CAT)
    assert "No published source measured two of these GPUs the same way." in lines
