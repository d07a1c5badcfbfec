"""Serving memory as the engines count it: vLLM's pool by hand, its versions, hybrid stacks'
concurrency, TensorRT-LLM's and llama.cpp's, the grading on published startup logs, and the errors."""

from __future__ import annotations

import math

import pytest

from gpukit import cli, llm, specs
from gpukit.errors import ParameterError
from gpukit.llm import pool
from gpukit.units import GIB


@pytest.fixture(scope="module")
def rows():
    cat = specs.load_catalogue()
    return {
        g: cat[cat["gpu"] == g].iloc[0]
        for g in ("H100 SXM5", "A100 SXM4 80GB", "L4", "GeForce RTX 4090", "L40S")
    }


def test_the_memory_cuda_reports():
    """HBM cards report 99 % of their GiB (79.2 of an 80 GB H100, as the logs give 79.18-79.22); a GDDR
    data-centre card loses a sixteenth to ECC first; a GeForce card does not."""
    cat = specs.load_catalogue().set_index("gpu", drop=False)
    assert pool.visible_bytes(cat.loc["H100 SXM5"]) / GIB == pytest.approx(79.2)
    assert pool.visible_bytes(cat.loc["L4"]) / GIB == pytest.approx(24 * 15 / 16 * 0.99)
    assert pool.visible_bytes(cat.loc["GeForce RTX 4090"]) / GIB == pytest.approx(24 * 0.99)


def test_vllm_pool_by_hand(rows):
    """Llama 3.1 8B in BF16 on one H100 as vLLM 0.19 sizes it: 0.9 of 79.2 GiB, less 14.96 GiB of
    weights, the sampler's peak (4 copies of 1024 x 128256 float32 logits, above the forward pass
    of 8192 tokens) and 0.25 GiB outside PyTorch."""
    m = llm.load_models()["llama-3.1-8b"]
    p = pool.vllm_pool(m, rows["H100 SXM5"], "bf16", context=8192, version="0.19")
    weights = m.params() * 2
    sampler = 4.0 * 1024 * 128256 * 4
    forward = 8192 * (2 * 4096 + 4096 + 2 * 1024 + 4096 + 3 * 14336) * 2
    assert sampler > forward
    assert p["activation_bytes"] == pytest.approx(sampler)
    by_hand = 0.9 * 79.2 * GIB - weights - sampler - 0.25 * GIB
    assert p["pool_bytes"] == pytest.approx(by_hand)
    per_token = 32 * 2 * 8 * 128 * 2  # every layer's key and value, 8 KV heads of 128, FP16
    assert p["kv_cache_tokens"] == math.floor(by_hand / (per_token * 16)) * 16
    assert p["max_concurrency"] == pytest.approx(p["kv_cache_tokens"] / 8192)
    # the current profile subtracts its CUDA graphs too
    now = pool.vllm_pool(m, rows["H100 SXM5"], "bf16", context=8192)
    assert now["pool_bytes"] == pytest.approx(by_hand - pool.CUDA_GRAPH_BYTES)


def test_vllm_defaults_by_card_and_version(rows):
    m = llm.load_models()["qwen3-8b"]
    big = pool.vllm_pool(m, rows["H100 SXM5"], "bf16", version="0.19")
    small = pool.vllm_pool(m, rows["A100 SXM4 80GB"], "bf16", version="0.19")
    assert (big["max_num_batched_tokens"], big["max_num_seqs"]) == (8192, 1024)
    assert (small["max_num_batched_tokens"], small["max_num_seqs"]) == (
        2048,
        256,
    )  # A100s take the small ones
    old = pool.vllm_pool(m, rows["H100 SXM5"], "bf16", version="0.10.2")
    assert old["activation_bytes"] > big["activation_bytes"]  # 0.10's sampler held ~9.7 copies of the logits
    with pytest.raises(ParameterError, match="vLLM 0.6.4 sizes its pool by rules the kit does not model"):
        pool.vllm_version("0.6.4")


def test_a_hybrid_stack_holds_more_sequences_than_its_token_count_says(rows):
    """gpt-oss keeps 128 tokens (and a step's) in half its layers: vLLM logs the pool's tokens as if
    every layer kept them all, and its concurrency counts what the sliding layers really need. The
    published 0.10 log on 4 x A100 at 0.8: 2,640,144 tokens, 284.25 sequences of 16,384."""
    m = llm.load_models()["gpt-oss-120b"]
    p = pool.vllm_pool(
        m, rows["A100 SXM4 80GB"], "mxfp4", 4, context=16384, gpu_memory_utilization=0.8, version="0.10.1"
    )
    assert p["kv_cache_tokens"] == pytest.approx(2_640_144, rel=0.02)
    assert p["max_concurrency"] == pytest.approx(284.25, rel=0.02)
    full_only = p["kv_cache_tokens"] / 16384
    assert p["max_concurrency"] > 1.7 * full_only
    need = pool.sequence_token_layers(m, 16384, 2048)
    assert need == 18 * 16384 + 18 * (math.ceil((128 - 1 + 2048) / 16) + 1) * 16


def test_the_pool_model_is_graded_on_published_logs():
    """At least 80 % of the published logs within ±20 %, the ones the constants were not read off too."""
    v = llm.pool_validation()
    assert v["logs"] >= 40 and v["share"] >= 0.8
    assert v["held_out_logs"] >= 30 and v["held_out_within"] / v["held_out_logs"] >= 0.8


def test_trtllm_takes_a_share_of_the_free_memory(rows):
    m = llm.load_models()["llama-3.1-8b"]
    p = pool.trtllm_pool(m, rows["H100 SXM5"], "fp8", context=4096)
    free = p["total_bytes"] - p["weights_bytes"] - p["activation_bytes"] - p["non_torch_bytes"]
    assert p["pool_bytes"] == pytest.approx(0.9 * free)
    assert p["max_concurrency"] == pytest.approx(p["pool_bytes"] / m.kv_cache_bytes(4096, "f16"))


def test_llamacpp_allocates_its_context_up_front(rows):
    m = llm.load_models()["gpt-oss-20b"]
    small = pool.llamacpp_memory(m, "mxfp4", 4096)
    large = pool.llamacpp_memory(m, "mxfp4", 65536)
    per = 2 * 8 * 64 * 2
    # the 12 full layers grow with n_ctx, the 12 sliding ones stay at their window and a micro-batch
    assert large["kv_cache_bytes"] - small["kv_cache_bytes"] == pytest.approx(12 * (65536 - 4096) * per)
    assert small["kv_cache_bytes"] == pytest.approx((12 * 4096 + 12 * (128 + 512)) * per)
    held = pool.engine_memory(m, rows["GeForce RTX 4090"], "mxfp4", "llama.cpp", context=4096)
    assert held["fits"] and held["kv_cache_tokens"] == 4096 and held["max_batch"] > 1


def test_utilization_outside_zero_to_one_is_an_error(rows, capsys):
    m = llm.load_models()["qwen3-8b"]
    for bad in (0, 1.2, -0.5):
        with pytest.raises(ParameterError, match="must be above 0 and at most 1"):
            pool.vllm_pool(m, rows["L4"], "bf16", gpu_memory_utilization=bad)
    with pytest.raises(SystemExit):
        cli.main(
            ["llm", "--engine", "vllm", "--weights", "bf16", "--gpu-memory-utilization", "0", "--gpu", "L4"]
        )
    assert "must be above 0 and at most 1" in capsys.readouterr().err
    # a lower share holds fewer sequences
    hi = pool.engine_memory(m, rows["L40S"], "bf16", "vllm", context=8192)
    lo = pool.engine_memory(m, rows["L40S"], "bf16", "vllm", context=8192, gpu_memory_utilization=0.7)
    assert 0 < lo["max_concurrency"] < hi["max_concurrency"]


def test_gpukit_llm_answers_the_pool_for_vllm(capsys):
    assert (
        cli.main(
            [
                "llm",
                "--model",
                "qwen3-8b",
                "--engine",
                "vllm",
                "--weights",
                "bf16",
                "--gpu",
                "H100 SXM5",
                "--format",
                "json",
            ]
        )
        == 0
    )
    import json

    row = json.loads(capsys.readouterr().out)[0]
    m = llm.load_models()["qwen3-8b"]
    cat = specs.load_catalogue()
    p = pool.vllm_pool(m, cat[cat["gpu"] == "H100 SXM5"].iloc[0], "bf16", context=4096)
    assert row["kv_cache_tokens"] == p["kv_cache_tokens"]
    assert row["max_concurrency"] == pytest.approx(p["max_concurrency"])
    assert row["weights_gib"] == pytest.approx(m.params() * 2 / GIB)
    assert row["kv_cache_gib"] == pytest.approx(m.kv_cache_bytes(4096) / GIB)


def test_the_kv_pool_page_is_what_its_script_writes(monkeypatch):
    """docs/accuracy/kv-pool.md is benchmarks/kv_pool_accuracy.py's output for the shipped logs."""
    import importlib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    script = importlib.import_module("benchmarks.kv_pool_accuracy")
    page = (root / "docs" / "accuracy" / "kv-pool.md").read_text()
    assert page == script.markdown(), (
        "stale: run python -m benchmarks.kv_pool_accuracy --write docs/accuracy/kv-pool.md"
    )


def test_a_bad_or_repeated_log_is_named_by_line_and_column(tmp_path):
    from gpukit.errors import DataError

    lines = llm.POOL_REFERENCE_PATH.read_text().splitlines()
    bad = tmp_path / "logs.csv"
    header, first = lines[0], lines[1]
    cells = first.split(",")
    cells[1] = "no-such-model"
    bad.write_text("\n".join([header, ",".join(cells), first, first]) + "\n")
    with pytest.raises(DataError) as info:
        llm.load_pool_reference(bad)
    text = "\n".join(str(problem) for problem in info.value.problems)
    assert (
        "line 2" in text
        and "column model" in text
        and "'no-such-model' is not in data/llm_models.csv" in text
    )
    assert "line 3" in text and "line 4" in text and "repeats line 2" in text
