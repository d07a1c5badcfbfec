"""compare's parts that need no TensorFlow, on synthetic inputs: numbers that may be missing, the
spec table of two devices of different vendors, and the work costs of a device with no throughput."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from gpukit import specs
from gpukit.compare import costs, numbers, tables


@pytest.mark.parametrize("missing", [None, math.nan, pd.NA, "text"])
def test_a_missing_number_is_none_and_takes_no_ratio(missing):
    assert numbers.num(missing) is None
    assert numbers.ratio(missing, 2.0) is None and numbers.ratio(2.0, missing) is None
    assert numbers.ratio(3.0, 0) is None and numbers.ratio(3.0, 1.5) == 2.0


def test_money_and_times_read_as_written():
    assert [numbers.money(x) for x in (0.2634, 298.4, 4150.0)] == ["0.263", "298", "4,150"]
    assert numbers.times(1.2949) == "1.29×"


def test_the_spec_table_of_an_apple_chip_beside_an_nvidia_card():
    """Apple states no FP32 peak or board power: those rows hold nothing and no ratio."""
    table = tables.spec_table(specs.gpu("M2 Ultra"), specs.gpu("RTX 5090")).set_index("spec")
    assert table.loc["FP32 (CUDA cores)", "a"] is None and pd.isna(table.loc["FP32 (CUDA cores)", "a_over_b"])
    assert table.loc["memory bandwidth", "a_over_b"] == pytest.approx(800 / 1792)
    assert table.loc["architecture", "a"] == "Apple M2" and pd.isna(table.loc["architecture", "a_over_b"])


def test_work_costs_of_a_device_with_no_throughput_are_empty():
    a, b = specs.gpu("M2 Ultra"), specs.gpu("RTX 5090")
    first = pd.Series(
        {
            "unit": "images/s",
            "workload": "resnet50",
            "precision": "fp16",
            "throughput_a": math.nan,
            "throughput_b": 600.0,
        }
    )
    work = pd.DataFrame(
        {"cloud_usd_per_million_items": [0.2], "owned_usd_per_million_items": [0.1]},
        index=["GeForce RTX 5090"],
    )
    table = pd.DataFrame([{"gpu": a.name, "price_usd": None}, {"gpu": b.name, "price_usd": 2000.0}])
    rows = {r["item"]: r for r in costs._work_rows(a, b, first, work, table)}
    renting = rows["USD per million images, renting (resnet50 fp16)"]
    assert renting["a"] is None and renting["b"] == pytest.approx(0.2) and renting["a_over_b"] is None
    assert rows["images per second per 1000 USD of purchase (resnet50 fp16)"]["b"] == pytest.approx(300)
