"""benchmarks/perfmodel_accuracy.py's diagnostics that read the reference rows themselves."""

from __future__ import annotations

import importlib
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def page(monkeypatch):
    return importlib.import_module("benchmarks.perfmodel_page")


def test_pairs_are_split_by_the_framework_version_each_run_reports(page):
    """Each pair's two runs on one PyTorch version or on two, read from the rows' notes; a source
    whose runs all report one version, or none, has no row."""
    note = "folder sys_pytorch.txt reports PyTorch {}+abc; ..."
    ref = pd.DataFrame(
        [
            {
                "source": "s",
                "gpu": g,
                "workload": "bert-base-squad",
                "precision": "fp16",
                "gpus": 1,
                "note": note.format(v),
            }
            for g, v in (("A", "1.7.0a0"), ("B", "1.7.0a0"), ("C", "1.9.0a0"))
        ]
        + [
            {
                "source": "t",
                "gpu": g,
                "workload": "bert-base-squad",
                "precision": "fp16",
                "gpus": 1,
                "note": "none",
            }
            for g in ("A", "B")
        ]
    )
    table = pd.DataFrame(
        [
            {
                "source": "s",
                "family": "transformer",
                "workload": "bert-base-squad",
                "precision": "fp16",
                "gpu_a": a,
                "gpu_b": b,
                "within_tolerance": ok,
            }
            for a, b, ok in (("A", "B", True), ("A", "C", False), ("C", "B", True))
        ]
        + [
            {
                "source": "t",
                "family": "transformer",
                "workload": "bert-base-squad",
                "precision": "fp16",
                "gpu_a": "A",
                "gpu_b": "B",
                "within_tolerance": False,
            }
        ]
    )
    lines = page.software_section(ref, table)
    rows = [line for line in lines if line.startswith("| s ")]
    assert rows == ["| s | transformer | 1.7, 1.9 | 1 of 1 | 1 of 2 | 1 of 1 |"]
    assert not any(line.startswith("| t ") for line in lines)
    one_version = ref.assign(note=note.format("1.7.0a0"))
    assert page.software_section(one_version, table) == []
