"""Serving at batch: the largest batch the memory allows, throughput and latency from the decode
step and the prompts between steps, cost beside batch 1, the errors a user meets, and the grading
on published max-throughput runs."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from gpukit import cli, llm, specs
from gpukit import precision as prec
from gpukit.errors import DataError, ParameterError
from gpukit.prices import book as prices
from gpukit.prices import cost


def test_serving_is_the_decode_steps_and_the_prompts_between_them():
    m = llm.resolve_model("llama-3.1-8b")
    s = llm.serve(m, "H100 SXM5", "fp8", "trt-llm", 1, 64, 1024, 256, "fp8")
    step = llm.speeds(m, "H100 SXM5", "fp8", 1024 + 128, 64, "fp8", prompt=1024, engine="trt-llm")
    one = llm.speeds(m, "H100 SXM5", "fp8", 1024 + 128, 1, "fp8", prompt=1024, engine="trt-llm")
    prompt_s = 1024 / step["prefill_tokens_per_s"]
    cycle = 256 * step["decode_step_s"] + 64 * prompt_s
    assert s["batch"] == 64 and s["serving_tokens_per_s"] == pytest.approx(64 * 256 / cycle)
    assert s["tpot_ms"] == pytest.approx(1e3 * cycle / 256)
    assert s["ttft_s"] == pytest.approx(prompt_s + one["decode_step_s"])
    assert s["batch1_tokens_per_s"] == pytest.approx(one["decode_tokens_per_s"])
    # many sequences at once: far more tokens/s than one
    assert s["serving_tokens_per_s"] > 20 * s["batch1_tokens_per_s"]
    # a finite run of 100 requests at batch 64: one full wave, then a wave of 36
    rest = llm.speeds(m, "H100 SXM5", "fp8", 1024 + 128, 36, "fp8", prompt=1024, engine="trt-llm")
    finite = llm.serve(m, "H100 SXM5", "fp8", "trt-llm", 1, 64, 1024, 256, "fp8", requests=100)
    total = cycle + 256 * rest["decode_step_s"] + 36 * prompt_s
    assert finite["serving_tokens_per_s"] == pytest.approx(100 * 256 / total)


def test_the_largest_batch_is_the_last_the_memory_holds():
    """vLLM serves as many sequences as its pool holds (:func:`gpukit.llm.pool.vllm_pool`), at most
    its ``max_num_seqs``; TensorRT-LLM at most its scheduler's cap."""
    from gpukit.llm import pool

    m = llm.resolve_model("llama-3.1-70b")
    cat = specs.load_catalogue()
    h100 = cat[cat["gpu"] == "H100 SXM5"].iloc[0]
    b = llm.max_batch(m, "H100 SXM5", "fp8", 2048, 2048, "fp8", gpus=2)
    held = pool.vllm_pool(m, h100, "fp8", 2, "fp8", context=4096)
    assert b > 1 and b == min(math.floor(held["max_concurrency"]), held["max_num_seqs"])
    # what one sequence takes of the pool: its 4096 tokens' cache on each GPU
    assert held["max_concurrency"] == pytest.approx(
        held["pool_bytes"] / m.kv_cache_bytes(4096, "fp8", 2), rel=0.01
    )
    # --batch max serves at it, capped at the engine's scheduler where it has one
    vllm = llm.serve(m, "H100 SXM5", "fp8", "vllm", 2, "max", 2048, 2048, "fp8")
    assert vllm["batch"] == vllm["max_batch"] == b
    assert vllm["kv_cache_tokens"] == held["kv_cache_tokens"]
    trt = llm.serve(m, "H100 SXM5", "fp8", "trt-llm", 8, "max", 128, 128, "fp8")
    assert trt["batch"] == llm.ENGINES["trt-llm"].max_batch == 512
    assert llm.max_batch(m, "GeForce RTX 4090", "f16", 1024, 256) == 0


def test_serving_errors_say_what_to_do():
    with pytest.raises(prec.Unsupported, match=r"A100 PCIe 80GB \(Ampere\) has no FP4 tensor cores"):
        llm.serve("llama-3.1-8b", "A100 PCIe 80GB", "fp4", "trt-llm")
    with pytest.raises(
        ParameterError, match=r"does not fit one sequence on 1 x GeForce RTX 4090 .*: it needs 8"
    ):
        llm.serve("llama-3.1-70b", "GeForce RTX 4090", "f16", "vllm", batch="max")
    with pytest.raises(ParameterError, match=r"batch 4000 does not fit .*holds at most \d+ sequences"):
        llm.serve(
            "llama-3.1-8b", "A100 PCIe 80GB", "f16", "vllm", batch=4000, input_tokens=2048, output_tokens=2048
        )
    with pytest.raises(ParameterError, match="llama.cpp does not serve fp8 weights"):
        llm.serve("llama-3.1-8b", "H100 SXM5", "fp8", "llama.cpp")
    with pytest.raises(ParameterError, match="takes up to 8192 tokens"):
        llm.serve("llama-3-8b", "H100 SXM5", "fp8", "vllm", input_tokens=8000, output_tokens=1000)


def test_a_mixture_is_held_whole_and_read_by_the_experts_its_tokens_reach():
    m = llm.resolve_model("mixtral-8x7b")
    assert llm.speed.experts_touched(m, 1) == pytest.approx(2)
    assert llm.speed.experts_touched(m, 2) == pytest.approx(8 * (1 - (6 / 8) ** 2))
    assert llm.speed.experts_touched(m, 256) == pytest.approx(8, rel=1e-6)
    s = llm.serve(m, "H100 SXM5", "fp8", "vllm", 1, 16, 512, 128, "fp8")
    assert s["weights_gib"] == pytest.approx(m.params() / 2**30, rel=1e-6)
    assert s["active_weights_gib"] == pytest.approx(m.active_params() / 2**30, rel=1e-6)
    table = llm.serving_table(m, "fp8", "vllm", ["H100 SXM5"], batch=16, input_tokens=512, output_tokens=128)
    assert table.attrs["moe"] == (
        f"mixture of experts: all 8 experts held in memory ({m.params() / 1e9:.1f} B weights), 2 of them per "
        f"token ({m.active_params() / 1e9:.1f} B active)"
    )


def test_the_cost_of_a_million_tokens_served_beside_batch_one():
    table = llm.serving_table("llama-3.1-8b", "fp8", "trt-llm", ["H100 SXM5", "A100 SXM4 80GB"], count=2)
    h100 = table.set_index("gpu").loc["H100 SXM5"]
    one_unit = pd.DataFrame({"gpu": ["H100 SXM5"], "throughput": [1.0], "throughput_unit": ["tokens/s"]})
    rate = cost.work_cost_table(prices.load_prices(), one_unit)["cloud_usd_per_hour"].iloc[0]
    per_gpu = h100["serving_tokens_per_s"] / 2
    assert h100["usd_per_million_tokens"] == pytest.approx(rate / 3600 / per_gpu * 1e6, rel=1e-6)
    assert h100["usd_per_million_tokens_batch1"] == pytest.approx(
        rate / 3600 / (h100["batch1_tokens_per_s"] / 2) * 1e6, rel=1e-6
    )
    a100 = table.set_index("gpu").loc["A100 SXM4 80GB"]
    assert math.isnan(a100["serving_tokens_per_s"]) and "no FP8 tensor cores" in a100["note"]
    line = llm.serving_bottom_line(table)
    assert line.startswith(
        f"Cheapest per million output tokens: H100 SXM5 at ${h100['usd_per_million_tokens']:.3g}"
    )
    assert table.attrs["engine"] == llm.ENGINES["trt-llm"].label


def test_gpukit_llm_serves_at_batch_from_the_command_line(capsys):
    base = ["llm", "--model", "llama-3.1-8b", "--weights", "fp8", "--engine", "trt-llm", "--gpu", "H100 SXM5"]
    assert cli.main([*base, "--batch", "max", "--input-tokens", "512", "--output-tokens", "128"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("llama-3.1-8b (8.0 B parameters) served at batch with trt-llm (TensorRT-LLM")
    assert out[1].startswith("Cheapest per million output tokens: H100 SXM5")
    assert out[2].startswith("Serving at batch graded: ")
    assert cli.main([*base, "--batch", "max", "--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert (
        list(frame.columns) == list(llm.SERVING_COLUMNS)
        and frame["batch"].iloc[0] == frame["max_batch"].iloc[0]
    )
    assert cli.main([*base[:-2], "--gpu", "A100 PCIe 80GB", "--weights", "fp4", "--batch", "max"]) == 2
    assert capsys.readouterr().err.strip() == (
        "gpukit: error: A100 PCIe 80GB (Ampere) has no FP4 tensor cores "
        "(NVIDIA Blackwell and AMD CDNA 4 GPUs have them)"
    )
    with pytest.raises(SystemExit) as exited:
        cli.main([*base, "--batch", "lots"])
    assert exited.value.code == 2
    assert "'lots': give a whole number of sequences or max" in capsys.readouterr().err


def _serving_lines(path, edit):
    with open(llm.SERVING_REFERENCE_PATH) as f:
        lines = f.read().splitlines()
    lines = [lines[0], *(edit(line) for line in lines[1:3])]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_bad_serving_row_names_its_line_column_and_fix(tmp_path):
    path = _serving_lines(tmp_path / "serving.csv", lambda line: line.replace("llama-3-70b", "llama-9-70b"))
    with pytest.raises(
        DataError, match=r"serving.csv, line 2, column model: 'llama-9-70b' is not in data/llm_models.csv"
    ):
        llm.load_serving_reference(path)
    path = _serving_lines(tmp_path / "tp.csv", lambda line: line.replace(",1,1,TensorRT", ",1,2,TensorRT", 1))
    with pytest.raises(DataError, match="column tensor_parallel: the model serves one tensor-parallel group"):
        llm.load_serving_reference(path)


@pytest.mark.slow  # a second or more: the full tier's
def test_serving_is_graded_on_same_source_pairs_and_each_source_held_out():
    ref = llm.load_serving_reference()
    assert set(ref["source"]) == set(llm.ENGINES["trt-llm"].sources)
    table = llm.serving_validation(ref)
    # pairs only within one source, model, weights and lengths
    assert (table.groupby(list(llm.serving_reference.SERVING_PAIRED)).size() > 0).all()
    s = llm.serving_summary()
    assert s["pairs"] == len(table) and s["within_tolerance"] / s["pairs"] >= 0.80
    assert s["winners_right"] >= 0.995 * s["decisive_pairs"]
    values, fitted = llm.fit_serving(
        ref[ref["source"] == "trtllm-perf-overview-v1.0"], {"link_share": (0.3, 0.6)}
    )
    assert values["link_share"] in (0.3, 0.6) and fitted["pairs"] > 0


def test_a_mixture_says_so_under_every_llm_heading(capsys):
    m = llm.resolve_model("mixtral-8x7b")
    assert cli.main(["llm", "--model", "mixtral-8x7b", "--gpu", "A40"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == llm.moe_note(m)[0].upper() + llm.moe_note(m)[1:] + "."
    assert (
        cli.main(
            ["llm", "--model", "mixtral-8x7b", "--weights", "fp8", "--gpu", "H100 SXM5", "--batch", "max"]
        )
        == 0
    )
    assert "Mixture of experts: all 8 experts held in memory" in capsys.readouterr().out
    assert llm.moe_note(llm.resolve_model("llama-3-8b")) == ""
