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
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    module = importlib.import_module("llm_page")
    # where several_gpus_section looks it up
    monkeypatch.setattr(importlib.import_module("llm_page.pipeline"), "_pipeline_variants", lambda *args: [])
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


def test_prompts_on_another_path_are_set_against_the_model_apart(page, monkeypatch):
    """The prompts llm.other_prefill_path leaves out get a section of their own: the pairs among them
    graded as the rest are, and per GPU the median of published over predicted at the shortest and
    longest prompt, with the path each took (worked by hand on made-up rows)."""
    engine = "llama.cpp build 4753 (commit x), flash attention on (-fa 1)"
    published = {
        ("T4", 512): 1200.0,
        ("T4", 4096): 1000.0,
        ("V100 SXM2 16GB", 512): 3000.0,
        ("V100 SXM2 16GB", 4096): 2000.0,
    }
    predicted = {
        ("T4", 512): 1000.0,
        ("T4", 4096): 1000.0,
        ("V100 SXM2 16GB", 512): 3000.0,
        ("V100 SXM2 16GB", 4096): 2500.0,
    }
    ref = pd.DataFrame(
        [
            {
                "source": "s",
                "gpu": g,
                "gpus": 1,
                "split": "layer",
                "model": "llama-1-7b",
                "weights": "q4_k_m",
                "test": "pp",
                "tokens": t,
                "throughput_tokens_s": v,
                "engine": engine,
            }
            for (g, t), v in published.items()
        ]
    )
    monkeypatch.setattr(
        llm.grading,  # where other_path_table and other_path_grading look it up
        "predict_reference",
        lambda frame, *args, **kwargs: pd.Series(
            [predicted[(r.gpu, r.tokens)] for r in frame.itertuples()], index=frame.index
        ),
    )
    lines = page.current_build_section(ref)
    assert lines[1] == "## Prompts on a current llama.cpp, beside the grading"
    # pairs: at 512 V100/T4 published 2.5, predicted 3.0 (+20.0%: within); at 4096 2.0 against 2.5 (+25%: not)
    assert "4 configurations' prompts from llama.cpp build 4753 (s)" in lines[3]
    assert "1 of 2 pairs within ±20%, winners right in 2 of 2, median error 22.5%" in lines[3]
    assert lines[5] == "| GPU | compute capability | path | configurations | pp512 | pp4096 |"
    assert lines[7] == "| T4 | 7.5 | int8 kernels (MMQ), flash attention | 2 | 1.20 | 1.00 |"
    assert (
        lines[8]
        == "| V100 SXM2 16GB | 7.0 | unpacked to FP16 for cuBLAS, flash attention | 2 | 1.00 | 0.80 |"
    )
    assert page.current_build_section(ref.assign(engine="llama.cpp build 2824 (commit y)")) == []
