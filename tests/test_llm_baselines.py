"""The naive baselines the LLM decode model is graded against (docs/accuracy/llm.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gpukit import specs
from gpukit.llm import baselines
from gpukit.llm.grading import CONFIGURATION_PAIRED
from gpukit.llm.memory import inference_memory
from gpukit.llm.models import resolve_model

GPUS = ("RTX A4000", "RTX A5000", "A40", "A100 SXM4 80GB", "H100 SXM5")


def _rows(speeds) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "source": "s",
            "gpu": list(GPUS),
            "gpus": 1,
            "model": "llama-3-8b",
            "weights": "q4_k_m",
            "test": "tg",
            "tokens": 128,
            "throughput_tokens_s": speeds,
        }
    )


def _truth(fixed_s: float) -> np.ndarray:
    cat = specs.load_catalogue().set_index("gpu")
    weights = inference_memory(resolve_model("llama-3-8b"), "q4_k_m", 1, 1)["weights_bytes"]
    bandwidth = np.array([cat.loc[g, "memory_bandwidth_gbs"] * 1e9 for g in GPUS])
    return 1.0 / (weights / bandwidth + fixed_s)


def test_the_bare_baseline_is_the_ratio_of_bandwidths():
    rows = _rows(_truth(0.0))
    predicted = baselines.predictions(rows, 0.0)
    assert predicted == pytest.approx(_truth(0.0))
    table = baselines.grade(rows, predicted, CONFIGURATION_PAIRED)
    assert len(table) == 10 and table["error_pct"].abs().max() < 1e-9 and table["within_tolerance"].all()


@pytest.mark.slow  # a second or more: the full tier's
def test_the_fixed_time_is_found_where_the_published_speeds_put_it():
    rows = _rows(_truth(1e-3))
    assert baselines.fit_fixed_cost(rows, CONFIGURATION_PAIRED) == pytest.approx(1e-3, abs=2e-5)
    bare = baselines.grade(rows, baselines.predictions(rows, 0.0), CONFIGURATION_PAIRED)
    fitted = baselines.grade(rows, baselines.predictions(rows, 1e-3), CONFIGURATION_PAIRED)
    assert fitted["within_tolerance"].sum() >= bare["within_tolerance"].sum()


def test_only_single_gpu_decode_is_graded():
    rows = pd.concat(
        [_rows(_truth(0.0)), _rows(_truth(0.0)).assign(test="pp"), _rows(_truth(0.0)).assign(gpus=2)]
    )
    kept = baselines.single_gpu_decode(rows)
    assert len(kept) == len(GPUS) and set(kept["test"]) == {"tg"} and set(kept["gpus"]) == {1}
