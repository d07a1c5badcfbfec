"""benchmarks/llm_accuracy.py's several-GPU prefill table, on rows made up here (the predictions are
stand-ins: the table's arithmetic is what is tested)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pandas as pd
import pytest

from gpukit import llm

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def page(monkeypatch):
    module = importlib.import_module("benchmarks.llm_page")
    # where several_gpus_section looks it up
    monkeypatch.setattr(
        importlib.import_module("benchmarks.llm_page.pipeline"), "_pipeline_variants", lambda *args: []
    )
    return module


def test_a_layer_splits_single_micro_batch_is_set_against_one_card(page, monkeypatch):
    """Each several-card row gives its pp512 over one card of the same GPU, model and weights,
    published and predicted, and leaves both cells empty where the source ran no single card."""
    short, second, long = llm.PROMPT_CHUNK, 2 * llm.PROMPT_CHUNK, 16 * llm.PROMPT_CHUNK
    published = {
        ("G", 4, short): 120.0,
        ("G", 4, second): 160.0,
        ("G", 4, long): 200.0,
        ("G", 1, short): 100.0,
        ("H", 2, short): 50.0,
        ("H", 2, second): 80.0,
        ("H", 2, long): 90.0,
    }
    predicted = {
        ("G", 4, short): 90.0,
        ("G", 4, second): 150.0,
        ("G", 4, long): 180.0,
        ("G", 1, short): 100.0,
        ("H", 2, short): 50.0,
        ("H", 2, second): 50.0,
        ("H", 2, long): 90.0,
    }
    ref = pd.DataFrame(
        [
            {
                "gpu": g,
                "gpus": n,
                "model": "m",
                "weights": "w",
                "test": "pp",
                "tokens": t,
                "throughput_tokens_s": v,
            }
            for (g, n, t), v in published.items()
        ]
    )
    monkeypatch.setattr(
        llm,
        "predict_reference",
        lambda frame, *args, **kwargs: pd.Series(
            [predicted[(r.gpu, r.gpus, r.tokens)] for r in frame.itertuples()], index=frame.index
        ),
    )
    lines = page.several_gpus_section(ref)
    assert "The next two columns isolate the overlap" in lines[3] and "The last two set" in lines[3]
    assert lines[5].endswith(f"| pp{short} over one card, published | predicted |")
    # pp512 120/90, pp8192 200/180; second micro-batch 2*120/160 - 1 and 2*90/150 - 1; one card 120/100 and 90/100
    assert lines[7] == "| G | 4 | m | w | 1.33 | 1.11 | 0.50 | 0.20 | 1.20 | 0.90 |"
    # H: pp512 50/50, pp8192 90/90, second micro-batch 2*50/80 - 1 and 2*50/50 - 1; no single card
    assert lines[8] == "| H | 2 | m | w | 1.00 | 1.00 | 0.25 | 1.00 |  |  |"


def test_the_engine_section_states_each_target_met_or_not(page):
    """The current llama.cpp's targets (decode 90 % within ±20 %, prefill 75 % within ±25 %, winners
    95 %) are stated against the grading, met or not; a profile with no runs of its own says so."""
    engines = importlib.import_module("benchmarks.llm_page.engines")
    graded = {
        "tg": {"pairs": 100, "within_tolerance": 89, "decisive_pairs": 50, "winners_right": 48},
        "pp": {"pairs": 10, "within_tolerance": 8, "decisive_pairs": 20, "winners_right": 18},
    }
    assert engines._targets(graded) == (
        "Targets for a current llama.cpp: decode 89% within ±20% against a target of 90% (not met), winners 96% "
        "against 95% (met); prefill 80% within ±25% against a target of 75% (met), winners 90% against 95% "
        "(not met)."
    )
    lines = engines.engine_section("trt-llm")
    assert lines[1].startswith("### trt-llm (TensorRT-LLM") and lines[-1].startswith(
        "No published single-GPU run"
    )
