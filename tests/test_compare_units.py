"""compare's parts that need no TensorFlow, on synthetic inputs: numbers that may be missing, the
spec table of two devices of different vendors, the work costs of a device with no throughput, and
the LLMs served on each."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from gpukit import llm, specs
from gpukit.compare import costs, llms, numbers, tables
from gpukit.errors import ParameterError


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


def _served(gpu: str, tokens_s: float | None, usd: float | None, batch: int = 64, note: str = "") -> dict:
    return {
        "model": "qwen3-8b",
        "weights": "bf16",
        "gpu": gpu,
        "gpus": 1,
        "engine": "vllm (vLLM 0.22)",
        "engine_name": "vllm",
        "batch": batch,
        "serving_tokens_per_s": tokens_s,
        "usd_per_million_tokens": usd,
        "note": note,
    }


def test_a_served_llm_s_verdict_names_the_faster_and_the_cheaper():
    frame = pd.DataFrame([_served("A", 3000.0, 0.50, 200), _served("B", 2000.0, 0.40, 100)])
    (v,) = llms.serving_verdicts("A", "B", frame)
    assert v["topic"] == "serving qwen3-8b"
    assert v["verdict"].startswith(
        "A serves 1.50x the output tokens/s of B on qwen3-8b (bf16, 1 GPUs of each"
    )
    assert "Renting, B serves a million for 1.25x less ($0.4 vs $0.5)" in v["verdict"]
    assert "(200 sequences on A, 100 on B)" in v["reason"] and "graded on TensorRT-LLM" in v["reason"]
    # where only one serves it, the verdict says so and why the other does not
    one = pd.DataFrame([_served("A", 3000.0, 0.5), _served("B", None, None, note="does not fit")])
    (only,) = llms.serving_verdicts("A", "B", one)
    assert only["verdict"].startswith("Only A serves") and "B: does not fit" in only["reason"]
    neither = pd.DataFrame([_served("A", None, None), _served("B", None, None)])
    assert llms.serving_verdicts("A", "B", neither) == []


def test_an_llm_is_served_on_a_server_of_each_that_holds_it():
    a, b = specs.gpu("MI300X"), specs.gpu("H200 SXM")
    frame = llms.serving_frame(a, b, ["deepseek-r1"]).set_index("gpu")
    # 671 B parameters at FP8: four MI300X hold them, an H200 server needs more; both get the same power of two
    assert set(frame["gpus"]) == {8} and (frame["weights"] == "fp8").all()
    assert (frame["serving_tokens_per_s"] > 0).all() and set(frame["engine_name"]) == {"vllm"}
    assert frame.loc["Instinct MI300X", "batch"] > frame.loc["H200 SXM", "batch"]  # 192 GB against 141 GB
    # llama.cpp weights on an AMD card take llama.cpp's ROCm build, which predicts no prompt speed
    small = llms.serving_frame(specs.gpu("RX 7900 XTX"), specs.gpu("RTX 4090"), ["qwen3-8b"], "q4_k_m")
    assert list(small["engine_name"]) == ["llama.cpp-rocm", "llama.cpp"]
    with pytest.raises(ParameterError, match="does not fit even 64 x"):
        llms._server_size(
            llm.resolve_model("deepseek-r1"), "fp8", llm.ENGINES["vllm"], [specs.gpu("T4").row], 4000
        )


def test_the_bottom_line_serves_each_llm_with_its_error():
    import importlib

    from gpukit.compare.comparison import Comparison

    bottom_line = importlib.import_module("gpukit.compare.bottom_line")  # the package names its function so

    empty = pd.DataFrame()
    frame = pd.DataFrame([_served("A", 3000.0, 0.50), _served("B", 2000.0, None)])
    c = Comparison("A", "B", empty, empty, empty, empty, serving=frame)
    speed, rent = bottom_line._serving_rows(c)
    assert speed["what"] == "qwen3-8b bf16, 1 GPUs: output tokens/s served"
    assert (speed["a"], speed["b"], speed["wins"]) == ("3,000", "2,000", "A, 1.50×")
    assert speed["error"].startswith("predicted; served at batch, graded on TensorRT-LLM")
    assert (rent["a"], rent["b"], rent["wins"]) == ("$0.5", "—", "")  # no rate for B: no winner
    long = c.long()
    assert list(long.loc[long["section"] == "serving", "a_over_b"])[0] == pytest.approx(1.5)
