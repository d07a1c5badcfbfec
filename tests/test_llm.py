"""LLMs on the catalogue GPUs: shapes counted by hand, memory by hand, the speed roofline's
terms by hand, the CLI, user architecture files, and the shipped tables' provenance."""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import math
from dataclasses import replace as replace_engine

import pandas as pd
import pytest
from test_cli import table_headers

from gpukit import cli, llm, specs
from gpukit import precision as prec
from gpukit.bench import workloads as wl
from gpukit.errors import DataError, ParameterError
from gpukit.perfmodel import DEFAULT_EFFICIENCY
from gpukit.prices import book as prices
from gpukit.prices import cost
from gpukit.specs import bandwidth_rates, matmul_rates

#: A small grouped-query, gated-FFN decoder to count by hand.
TINY = llm.LLM(
    "tiny", layers=2, hidden=64, heads=8, kv_heads=2, head_dim=8, ffn=160, vocab=1000, max_context=512
)


def test_parameters_counted_by_hand():
    h, q, kv, f, v = 64, 8 * 8, 2 * 8, 160, 1000
    layer = h * (q + 2 * kv) + q * h + 3 * h * f + 2 * h  # Q, K, V, O, gate/up/down, two norms
    assert TINY.layer_params() == layer
    assert TINY.params() == v * h + 2 * layer + h + v * h  # embedding, layers, final norm, untied head
    assert TINY.active_params() == 2 * layer + v * h
    tied = llm.LLM("tied", 2, 64, 8, 2, 8, 160, 1000, tied_embeddings=True)
    assert tied.params() == TINY.params() - v * h
    moe = llm.LLM("moe", 2, 64, 8, 2, 8, 160, 1000, experts=8, experts_per_token=2)
    assert (
        moe.layer_params() == h * (q + 2 * kv) + q * h + 8 * 3 * h * f + h * 8 + 2 * h
    )  # eight experts, a router
    assert moe.active_params() == 2 * (h * (q + 2 * kv) + q * h + 2 * 3 * h * f + h * 8 + 2 * h) + v * h
    assert TINY.kv_bytes_per_token("f16") == 2 * 2 * kv * 2  # K and V, two layers, 16-bit


def test_shapes_are_checked():
    with pytest.raises(ParameterError, match="heads must be a multiple of kv_heads"):
        llm.LLM("bad", 2, 64, 8, 3, 8, 160, 1000)
    with pytest.raises(ParameterError, match="layers must be a whole number"):
        llm.LLM("bad", 0, 64, 8, 2, 8, 160, 1000)
    with pytest.raises(ParameterError, match="3 experts per token of 2"):
        llm.LLM("bad", 2, 64, 8, 2, 8, 160, 1000, experts=2, experts_per_token=3)


def test_every_shipped_model_counts_to_its_published_size():
    models = llm.load_models()
    assert {"llama-3-8b", "llama-2-7b", "mistral-7b"} <= set(models)
    for m in models.values():
        assert m.config_url.startswith("https://") and m.source_read.startswith("https://")
        # within 4 %: model cards round to the name (Llama 2 7B counts 6.74 B)
        if m.published_params_b:
            assert m.params() / 1e9 == pytest.approx(m.published_params_b, rel=0.04), m.name
    assert models["qwen2.5-7b"].params() / 1e9 == pytest.approx(7.61, abs=0.01)  # stated to two decimals
    assert models["mixtral-8x7b"].active_params() / 1e9 == pytest.approx(12.9, rel=0.02)  # "uses 13B active"


def test_weights_formats_sizes_from_their_layouts():
    """Each format's bits per weight follows from the storage layout its row quotes."""
    w = llm.load_weights()
    assert w["q8_0"].bits_per_weight == (2 + 32) * 8 / 32  # an FP16 scale and 32 int8s per block
    assert w["q4_0"].bits_per_weight == (2 + 16) * 8 / 32
    assert (
        w["gptq-4bit"].bits_per_weight == 4 + 4 / 128 + 16 / 128
    )  # packed zeros and FP16 scales per group of 128
    # LLM.int8(): an int8 per weight and a float32 scale per output row, here of a 4096-wide matrix
    assert w["int8"].bits_per_weight == 8 + 32 / 4096 and not w["int8"].dequantized
    assert {"f16", "bf16", "int8", "q8_0", "q4_0", "q4_k_m", "q5_k_m", "gptq-4bit", "awq-4bit"} <= set(w)


def test_inference_memory_by_hand():
    w = llm.weights_format("q4_0")
    mem = llm.inference_memory(TINY, "q4_0", context=256, batch=3, kv="f16", reserve_bytes=0)
    assert mem["weights_bytes"] == pytest.approx(TINY.params() * w.bits_per_weight / 8)
    assert mem["kv_cache_bytes"] == 3 * 256 * 2 * 2 * 16 * 2
    width = 2 * 64 + 64 + 2 * 16 + 64 + 3 * 160
    assert mem["activation_bytes"] == 4 * (256 * width + 3 * 1000)  # one 256-token chunk, 3 last-token logits
    eager = llm.inference_memory(TINY, "q4_0", context=256, batch=3, flash_attention=False, reserve_bytes=0)
    assert eager["activation_bytes"] - mem["activation_bytes"] == 4 * 256 * 256 * 8
    assert mem["total_bytes"] == mem["weights_bytes"] + mem["kv_cache_bytes"] + mem["activation_bytes"]
    q8 = llm.inference_memory(TINY, "q4_0", context=256, batch=3, kv="q8_0", reserve_bytes=0)
    assert q8["kv_cache_bytes"] == pytest.approx(mem["kv_cache_bytes"] * (34 / 32) / 2)
    split = llm.inference_memory(TINY, "q4_0", context=256, batch=3, gpus=2, reserve_bytes=0)
    assert (
        split["weights_bytes"] == mem["weights_bytes"] / 2
        and split["kv_cache_bytes"] == mem["kv_cache_bytes"] / 2
    )


def test_finetune_memory_by_hand():
    p = TINY.params()
    tokens = 2 * 128
    per_layer = 4 * 64 + 2 * 64 + 2 * 16 + 4 * 160  # norms' ins and outs, Q, O, K, V, the FFN's four
    full = llm.finetune_memory(TINY, "full", 128, 2, checkpointing=False, reserve_bytes=0)
    # 16 bytes a parameter (ZeRO's count): the 16-bit weight the passes read, and 14 of training state
    assert full["weights_bytes"] == 2 * p and full["optimizer_state_bytes"] == 14 * p
    assert full["shardable_bytes"] == 16 * p
    assert full["activation_bytes"] == 2 * per_layer * tokens * 2
    assert full["logits_bytes"] == tokens * 1000 * 10
    ckpt = llm.finetune_memory(TINY, "full", 128, 2, checkpointing=True, reserve_bytes=0)
    assert ckpt["activation_bytes"] == 2 * 64 * tokens * 2 + per_layer * tokens * 2
    lora = llm.finetune_memory(TINY, "lora", 128, 2, lora_rank=4, lora_targets="attention", reserve_bytes=0)
    adapters = 2 * 4 * ((64 + 64) * 2 + (64 + 16) * 2)  # q, o and k, v: rank x (in + out), two layers
    assert lora["trainable_params"] == adapters and lora["weights_bytes"] == 2 * p
    assert lora["optimizer_state_bytes"] == 16 * adapters
    qlora = llm.finetune_memory(TINY, "qlora", 128, 2, lora_rank=4, reserve_bytes=0)
    assert qlora["weights_bytes"] == pytest.approx(p * 4.127 / 8)
    assert qlora["trainable_params"] == 2 * 4 * ((64 + 64) * 2 + (64 + 16) * 2 + 3 * (64 + 160))
    with pytest.raises(ParameterError, match="fine-tuning mode 'dpo'"):
        llm.finetune_memory(TINY, "dpo")


def test_fine_tuning_that_fits_on_no_single_gpu_is_sharded(catalogue):
    """Full fine-tuning of an 8B model (16 bytes a parameter, about 120 GiB of model state) fits
    no single GPU; sharded over N, each holds 1/N of that state plus its own activations."""
    m = llm.resolve_model("llama-3-8b")
    need = llm.finetune_memory(m, "full", 2048, 1)
    assert need["shardable_bytes"] == 16 * m.params()
    rest = need["total_bytes"] - need["shardable_bytes"]
    for name in ("H100 SXM5", "A40", "RTX A4000"):
        g = catalogue.set_index("gpu").loc[name]
        cap = specs.memory_bytes(g["memory_gb"])
        n = llm.finetune_gpus_needed(need, g)
        assert n is not None and n > 1
        assert need["shardable_bytes"] / n + rest <= cap < need["shardable_bytes"] / (n // 2) + rest
    table = llm.llm_table(m, context=2048, gpus=["H100 SXM5", "A40"], mode="full").set_index("gpu")
    assert table.loc["H100 SXM5", "gpus_needed"] == 2 and not table.loc["H100 SXM5", "fits"]
    assert (
        "needs 2 GPUs" in table.loc["H100 SXM5", "note"] and "ZeRO-3/FSDP" in table.loc["H100 SXM5", "note"]
    )
    # a memory answer: no serving speed or cost on fine-tuning rows
    assert table[["prefill_tokens_per_s", "decode_tokens_per_s", "usd_per_million_tokens"]].isna().all().all()
    huge = dict(need, shardable_bytes=1e15, total_bytes=rest + 1e15)  # a petabyte of state: not on 64 cards
    assert llm.finetune_gpus_needed(huge, catalogue.iloc[0]) is None


def test_a_fine_tuning_run_no_number_of_gpus_holds_says_why_and_what_would_fit(catalogue):
    """Sharding splits the model state, not a GPU's own activations: the note says which of the two is
    too large, and how many GPUs batch 1 needs."""
    qwen = llm.llm_table("qwen2.5-14b", context=2048, batch=4, gpus=["RTX A4000"], mode="qlora").iloc[0]
    one = llm.finetune_memory(llm.resolve_model("qwen2.5-14b"), "qlora", 2048, 1)
    a4000 = catalogue.set_index("gpu").loc["RTX A4000"]
    assert not qwen["fits"] and pd.isna(qwen["gpus_needed"]) and llm.finetune_gpus_needed(one, a4000) == 1
    assert qwen["note"] == (
        "does not fit on 64 of these GPUs, even sharded: each keeps its own batch's activations, "
        "at batch 4 more than one holds; batch 1 fits on one"
    )
    h100 = llm.llm_table("llama-3-70b", context=8192, batch=8, gpus=["H100 SXM5"], mode="full").iloc[0]
    needed = llm.finetune_gpus_needed(
        llm.finetune_memory(llm.resolve_model("llama-3-70b"), "full", 8192, 1),
        catalogue.set_index("gpu").loc["H100 SXM5"],
    )
    assert needed and needed > 1 and h100["note"].endswith(f"; at batch 1 it needs {needed}")
    # 70B parameters of full fine-tuning state (16 bytes each) over 64 cards of 16 GB: the state alone is too much
    small = llm.llm_table("llama-3-70b", context=8192, batch=8, gpus=["RTX A4000"], mode="full").iloc[0]
    assert small["note"] == (
        "does not fit on 64 of these GPUs, even sharded: weights, gradients and optimizer "
        "state alone, sharded over 64, exceed one"
    )


def test_decode_is_memory_bound_at_batch_one_and_compute_bound_at_large_batches(catalogue):
    eff = DEFAULT_EFFICIENCY

    m = llm.resolve_model("llama-3-8b")
    row = catalogue[catalogue["gpu"] == "A40"].iloc[0]
    # build 2824's profile: flash attention off, so the attention scores pass through memory
    engine = llm.ENGINES["llama.cpp-2024"]
    s = llm.speeds(m, row, "f16", context=1024, batch=1, engine=engine)
    weights = m.active_params() * 2
    kv = 1024 * m.kv_bytes_per_token("f16")
    # the A40 streams its datasheet 696 GB/s at the median share published copies reach (llm.default_efficiency)
    stream = 696e9 * bandwidth_rates.shipped_typical_share() * eff.stream
    memory_s = (weights + kv) / stream
    fixed = m.layers * engine.kernels_per_layer * engine.launch_s
    assert s["decode_step_s"] == pytest.approx(memory_s + fixed)
    assert s["decode_bound"] == "memory" and s["decode_tokens_per_s"] == pytest.approx(1 / (memory_s + fixed))
    # a professional card: FP16 accumulate at the same rate; the tensor cores at the share of the
    # datasheet the A40 sustains (the one published run of data/matmul_rates.csv: 119.18 TFLOPS)
    peak = row["fp16_tensor_tflops"] * 1e12 * eff.tensor * (119.18 / 149.7)
    # prefill: 512-token chunks; each matrix in waves of 128 x 128 tiles over the A40's 84 SMs
    sms = row["cuda_cores"] / 128
    assert specs.sm_count(row) == sms == 84
    chunk = 512
    util = {o: llm.wave_utilization(o, chunk, 84) for o in (m.q_dim, m.kv_dim, m.hidden, m.ffn)}
    assert util[4096] == pytest.approx(128 / 168)  # 32 x 4 tiles: two waves of 84
    layer = sum(
        2 * o * i * chunk / (peak * util[o])
        for o, i in [
            (m.q_dim, m.hidden),
            (m.kv_dim, m.hidden),
            (m.kv_dim, m.hidden),
            (m.hidden, m.q_dim),
            (m.ffn, m.hidden),
            (m.ffn, m.hidden),
            (m.hidden, m.ffn),
        ]
    )
    # llama.cpp's attention multiplies each chunk by the whole cache filled so far: 512, then 1024
    window = (512 * 512 + 1024 * 512) / 1024
    assert llm.attention_window(1024, engine) == window == 768
    attention = chunk * 4 * m.layers * m.q_dim * window / peak
    # per token and layer outside the matrix multiplies, llama.cpp's float32 activations (4 bytes):
    # norms 8h, rotary 2(q+kv), residual adds 6h, SiLU and product 5f, merging heads 2q; FP16
    # conversions (6 bytes) of the multiplies' inputs and outputs and of the new keys and values;
    # 24 bytes per attention score of each of the 32 heads
    h, q, kv, f = 4096, 4096, 1024, 14336
    passes = 8 * h + 2 * (q + kv) + 6 * h + 5 * f + 2 * q
    converts = (3 * h + 2 * q + 2 * h + f) + (2 * q + 2 * kv + 2 * h + 2 * f) + 2 * kv
    traffic = m.layers * (4 * passes + 6 * converts + 24 * 32 * window)
    assert llm.prefill_traffic_bytes(m, engine, window) == pytest.approx(traffic)
    # the output head: one matrix-vector product for the prompt's last token
    head = m.vocab * m.hidden * 2 / stream / 1024
    prefill = (m.layers * layer + attention + chunk * traffic / stream) / chunk + head
    assert s["prefill_tokens_per_s"] == pytest.approx(1 / prefill)
    # flash attention (vLLM) keeps no scores in memory and skips the causal half of the window
    assert llm.attention_window(1024, "vllm") == 512
    assert llm.prefill_traffic_bytes(m, "vllm", 512) == pytest.approx(m.layers * 2 * passes)
    # many short sequences at once: the weights are read once for all of them, so the step turns compute-bound
    one = llm.speeds(m, row, "f16", context=64, batch=1, engine=engine)
    big = llm.speeds(m, row, "f16", context=64, batch=512, engine=engine)
    compute_s = 512 * (2 * m.active_params() + 4 * m.layers * m.q_dim * 64) / peak
    assert big["decode_bound"] == "compute" and big["decode_step_s"] == pytest.approx(compute_s + fixed)
    assert big["decode_tokens_per_s"] > 50 * one["decode_tokens_per_s"]
    # a quantised format reads fewer bytes but pays its unpacking on the CUDA cores
    q = llm.speeds(m, row, "q4_k_m", context=1024, batch=1, engine=engine)
    assert q["decode_tokens_per_s"] > s["decode_tokens_per_s"]


def test_llama_cpp_2025_multiplies_a_quantised_prompt_on_the_int8_tensor_cores(catalogue, monkeypatch):
    """A current llama.cpp build (the ``llama.cpp`` profile) gives a quantised prompt to its MMQ
    kernels on Turing and later: the packed weights multiply on the int8 tensor cores at the
    profile's share of the sustained int8 rate, and every weight is unpacked and rescaled on the
    CUDA cores once per 128-token column tile. Volta has no int8 mma and unpacks for cuBLAS."""
    m = llm.resolve_model("llama-3-8b")
    e = llm.ENGINES["llama.cpp"]
    assert e.quantised_prefill == "mmq" and e.flash_attention
    rtx = catalogue[catalogue["gpu"] == "GeForce RTX 4090"].iloc[0]
    # the memory-bound terms out of the way: what is left is the multiplies, the unpacking and the head
    monkeypatch.setattr(llm.speed, "SCALAR_BYTES_PER_SM_S", float("inf"))
    monkeypatch.setattr(llm.speed, "streaming_gbs", lambda row, measured: 1e9)  # GB/s: 1e18 bytes/s
    s = llm.speeds(m, rtx, "q4_0", context=512, prompt=512, engine=e)
    eff = llm.default_efficiency()
    int8 = rtx["int8_tensor_tops"] * 1e12 * matmul_rates.tensor_share(rtx)[0] * e.mmq_tensor_share
    cuda = rtx["fp32_tflops"] * 1e12 * eff.cuda
    peak = prec.fp16_accumulate_tflops(rtx) * 1e12 * eff.tensor * matmul_rates.tensor_share(rtx)[0]
    sms = specs.sm_count(rtx)
    unpack = m.layers * m.layer_params() * 4 * e.mmq_ops_per_weight / cuda  # 512 tokens: 4 column tiles
    gemms = m.layers * sum(
        2 * o * i * 512 / (int8 * llm.wave_utilization(o, 512, sms))
        for o, i in [(m.q_dim, m.hidden), (m.kv_dim, m.hidden), (m.kv_dim, m.hidden), (m.hidden, m.q_dim)]
        + [(m.ffn, m.hidden)] * 2
        + [(m.hidden, m.ffn)]
    )
    attention = 512 * 4 * m.layers * m.q_dim * 256 / peak  # flash attention: half the window
    assert llm.attention_window(512, e) == 256
    one_s = unpack + gemms + attention
    bits = llm.weights_format("q4_0").bits_per_weight
    # the output head: one matrix-vector product per pass, at the per-SM rate of llama.cpp's kernels
    head = m.vocab * m.hidden * bits / 8 / llm.gemv_rate(rtx, e.gemv_bytes_per_sm_cycle)
    traffic = 512 * llm.prefill_traffic_bytes(m, e, 256) / 1e18
    read = m.layers * m.layer_params() * bits / 8 / 1e18
    assert read < one_s  # the packed weights' read hides under the multiplies
    assert s["prefill_tokens_per_s"] == pytest.approx(512 / (one_s + traffic + head), rel=1e-6)
    # on Volta the same prompt is unpacked to FP16 and multiplied by cuBLAS, as build 2824 did
    monkeypatch.undo()
    v100 = catalogue[catalogue["gpu"] == "V100 SXM2 32GB"].iloc[0]
    unpacked = replace_engine(e, quantised_prefill="unpack")
    assert llm.speeds(m, v100, "q4_0", prompt=512, engine=e) == llm.speeds(
        m, v100, "q4_0", prompt=512, engine=unpacked
    )
    # and on an Ada card the int8 path is the faster one
    assert (
        llm.speeds(m, rtx, "q4_0", prompt=512, engine=e)["prefill_tokens_per_s"]
        > llm.speeds(m, rtx, "q4_0", prompt=512, engine=unpacked)["prefill_tokens_per_s"]
    )
    with pytest.raises(ParameterError, match="engine 'tgi'"):
        llm.resolve_engine("tgi")


def test_bf16_weights_do_not_run_on_volta_and_say_why(catalogue):
    m = llm.resolve_model("llama-3-8b")
    with pytest.raises(prec.Unsupported):
        llm.speeds(m, "V100 SXM2 32GB", "bf16", catalogue=catalogue)
    table = llm.llm_table("llama-3-8b", "bf16", 2048, gpus=["V100 SXM2 32GB", "A40"])
    v100 = table.set_index("gpu").loc["V100 SXM2 32GB"]
    assert math.isnan(v100["decode_tokens_per_s"]) and "BF16" in v100["note"]


def test_the_table_answers_fit_size_speed_and_cost(catalogue):
    """llama.cpp (the q4_k_m default) holds the weights, the cache of the context, one micro-batch's
    compute buffer and its runtime, against the memory CUDA reports."""
    from gpukit.llm import pool

    table = llm.llm_table("llama-3-70b", "q4_k_m", 8192, 1, gpus=["A40", "V100 SXM2 16GB", "H100 SXM5"])
    by = table.set_index("gpu")
    assert list(table.columns) == list(llm.LLM_COLUMNS)
    m = llm.resolve_model("llama-3-70b")
    need = pool.llamacpp_memory(m, "q4_k_m", 8192)["total_bytes"]
    for gpu, row in by.iterrows():
        visible = pool.visible_bytes(catalogue[catalogue["gpu"] == gpu].iloc[0])
        assert row["fits"] == (need <= visible)
        assert row["total_gib"] == pytest.approx(need / 2**30)
        assert row["kv_cache_tokens"] == 8192  # llama.cpp's n_ctx
    assert bool(by.loc["A40", "fits"]) and not bool(by.loc["V100 SXM2 16GB", "fits"])
    assert by.loc["V100 SXM2 16GB", "gpus_needed"] == 4  # 16 GB cards: two are too few for ~42 GB
    # the largest context is the last that fits
    a40 = by.loc["A40"]
    visible = pool.visible_bytes(catalogue[catalogue["gpu"] == "A40"].iloc[0])
    assert visible == pytest.approx(48 * 2**30 * 15 / 16 * pool.CUDA_VISIBLE_SHARE)  # ECC on by default
    assert pool.llamacpp_memory(m, "q4_k_m", int(a40["max_context"]))["total_bytes"] <= visible
    if a40["max_context"] < m.max_context:
        assert pool.llamacpp_memory(m, "q4_k_m", int(a40["max_context"]) + 1)["total_bytes"] > visible
    # a million generated tokens at the predicted decode speed and the market's on-demand rate
    book = prices.load_prices()
    hourly = cost._cloud(book, "A40", cost.DEFAULT_CLOUD)
    if hourly:
        assert a40["usd_per_million_tokens"] == pytest.approx(
            hourly["usd_per_hour"] / (a40["decode_tokens_per_s"] * 3600) * 1e6
        )


def test_user_architecture_files(tmp_path):
    good = tmp_path / "mine.json"
    good.write_text(
        json.dumps(
            {"name": "mine", "layers": 2, "hidden": 64, "heads": 8, "kv_heads": 2, "ffn": 160, "vocab": 1000}
        )
    )
    m = llm.resolve_model(str(good))
    assert m.head_dim == 8 and m.params() == TINY.params()
    yml = tmp_path / "mine.yaml"
    yml.write_text("layers: 2\nhidden: 64\nheads: 8\nkv_heads: 2\nffn: 160\nvocab: 1000\n")
    assert llm.resolve_model(str(yml)).name == "mine"
    bad = tmp_path / "bad.json"
    bad.write_text('{"layers": 2, "hidden": 64,')
    with pytest.raises(ParameterError, match="bad.json: not valid JSON"):
        llm.resolve_model(str(bad))
    odd = tmp_path / "odd.json"
    odd.write_text(
        json.dumps(
            {
                "layers": 2,
                "hidden": 64,
                "heads": 8,
                "kv_heads": 2,
                "ffn": 160,
                "vocab": 1000,
                "experts_total": 4,
            }
        )
    )
    with pytest.raises(ParameterError, match="unknown field\\(s\\) experts_total"):
        llm.resolve_model(str(odd))
    short = tmp_path / "short.json"
    short.write_text(json.dumps({"layers": 2, "hidden": 64}))
    with pytest.raises(ParameterError, match="missing field\\(s\\) heads, kv_heads, ffn, vocab"):
        llm.resolve_model(str(short))
    with pytest.raises(ParameterError, match="unknown model 'llama-3-9b'; did you mean"):
        llm.resolve_model("llama-3-9b")


def test_bad_model_table_names_file_line_and_column(tmp_path):
    rows = llm.MODELS_PATH.read_text().splitlines()
    bad = tmp_path / "models.csv"
    bad.write_text("\n".join([rows[0], rows[1].replace(",", ",x", 3)]) + "\n")
    with pytest.raises(DataError) as info:
        llm.load_models(bad)
    text = str(info.value)
    assert "models.csv" in text and "line 2" in text


def test_cli_llm_table_in_each_mode(capsys):
    assert (
        cli.main(
            [
                "llm",
                "--model",
                "llama-3-8b",
                "--weights",
                "q4_k_m",
                "--context",
                "8192",
                "--gpu",
                "A40",
                "--gpu",
                "RTX A4000",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "llama-3-8b" in out and "A40" in out and "decode (tokens/s)" in table_headers(out)
    assert (
        cli.main(
            [
                "llm",
                "--model",
                "llama-3-8b",
                "--mode",
                "qlora",
                "--context",
                "2048",
                "--gpu",
                "RTX A4000",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert header == list(llm.LLM_COLUMNS)
    assert cli.main(["llm", "--model", "llama-3-8b", "--mode", "full", "--gpu", "A40"]) == 0
    out = capsys.readouterr().out
    assert "Memory only" in out and "decode (tokens/s)" not in table_headers(out) and "Graded" not in out
    assert "needs 4 GPUs" in out


def test_cli_llm_grades_the_settings_its_rows_ran_in(capsys):
    # a table whose rows ran on one GPU and on several is graded in both settings, the model in each
    assert (
        cli.main(
            [
                "llm",
                "--model",
                "llama-3-70b",
                "--weights",
                "q4_k_m",
                "--context",
                "8192",
                "--gpu",
                "RTX A6000",
                "--gpu",
                "GeForce RTX 4090",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert llm.grading_statement([1, 2], "llama-3-70b", "q4_k_m") in out
    table = llm.validation_table()
    mine = table[(table["model"] == "llama-3-70b") & (table["weights"] == "q4_k_m") & (table["test"] == "pp")]
    for setting, where in zip(llm.SETTINGS, ("between single GPUs", "with several GPUs")):
        part = mine[mine["setting"] == setting]
        assert (
            f"{where}; {int(part['within_tolerance'].sum())} of the {len(part)} of llama-3-70b q4_k_m there"
            in out
        )
    assert cli.main(["llm", "--model", "llama-3-8b", "--weights", "q4_k_m", "--gpu", "A40"]) == 0
    assert "with several GPUs" not in capsys.readouterr().out


def test_cli_llm_lists_and_refuses_bad_arguments(capsys):
    assert cli.main(["llm", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in llm.load_models()) and "q4_k_m" in out and "gptq-4bit" in out
    for argv, message in (
        (["llm", "--model", "gpt-5"], "unknown model 'gpt-5'"),
        (["llm", "--weights", "q3_k_s"], "weights 'q3_k_s'"),
        (["llm", "--context", "0"], "context 0"),
        (["llm", "--model", "llama-2-7b", "--context", "8192"], "up to 4096 tokens"),
        # fine-tuning fixes its own weights: a format given for it would be silently dropped
        (["llm", "--mode", "qlora", "--weights", "f16"], "qlora fine-tunes nf4 weights"),
    ):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_decoder_workload_counts_by_hand():
    b, p, c, h, heads, kvh, f, L, v = 2, 16, 64, 32, 4, 2, 48, 3, 100
    kv = kvh * (h // heads)
    layer = h * (h + 2 * kv) + h * h + 3 * h * f
    flops, _ = wl.decoder_counts(b, p, c, h, heads, kvh, f, L, v, 4, "prefill")
    assert flops == 2 * L * layer * b * p + 4 * L * b * p * p * h + 2 * b * h * v
    flops, bytes_ = wl.decoder_counts(b, p, c, h, heads, kvh, f, L, v, 2, "decode")
    assert flops == 2 * L * layer * b + 4 * L * b * c * h + 2 * b * h * v
    weights = (L * layer + h * v) * 2
    cache = L * 2 * b * kv * (c + 1) * 2
    assert bytes_ > weights + cache  # at least every weight and the whole cache once
    with pytest.raises(ParameterError, match="decoder phase 'train'"):
        wl.decoder_counts(b, p, c, h, heads, kvh, f, L, v, 4, "train")
    configs = wl.default_configs(wl.DeviceInfo("cpu"), quick=True, workloads=["decoder"], precisions=["fp32"])
    assert [c.params["phase"] for c in configs] == ["prefill", "decode"]
    assert configs[0].label().startswith("decoder prefill 2L h512 prompt 128 context 512")


def test_what_holds_fast_gpus_back_in_decode_and_prefill(catalogue, monkeypatch):
    """The terms beyond a bandwidth roofline, by hand: the per-SM streaming cap (an A100 cannot
    stream its datasheet bandwidth through a matrix-vector product), GeForce's FP16-accumulate
    rate in llama.cpp's prefill, and a layer split's pipeline and hand-offs."""
    eff = DEFAULT_EFFICIENCY

    m = llm.resolve_model("llama-3-8b")
    a100 = catalogue[catalogue["gpu"] == "A100 PCIe 80GB"].iloc[0]
    assert specs.sm_count(a100) == 108  # 6912 CUDA cores, 64 FP32 lanes per SM at compute capability 8.0
    s = llm.speeds(m, a100, "f16", context=64)
    engine = llm.ENGINES["llama.cpp"]  # speeds' default: llama.cpp's 2025 profile
    per_sm = engine.gemv_bytes_per_sm_cycle
    capped = 108 * 1410e6 * per_sm  # SMs x boost clock x bytes per SM per cycle
    assert a100["boost_clock_mhz"] == 1410 and llm.gemv_rate(a100, per_sm) == pytest.approx(capped)
    # no run measured this A100's streaming rate: the datasheet at the measured GPUs' median share
    assert capped < a100["memory_bandwidth_gbs"] * 1e9 * bandwidth_rates.shipped_typical_share() * eff.stream
    # the rate rises with the clock: an H100 PCIe's SMs (114 at 1755 MHz) each stream 1755/1410 an A100's
    h100 = catalogue[catalogue["gpu"] == "H100 PCIe"].iloc[0]
    assert specs.sm_count(h100) == 114
    assert llm.gemv_rate(h100, per_sm) / 114 == pytest.approx(capped / 108 * 1755 / 1410)
    weights = m.active_params() * 2 + 64 * m.kv_bytes_per_token()
    fixed = m.layers * engine.kernels_per_layer * engine.launch_s
    assert s["decode_step_s"] == pytest.approx(weights / capped + fixed)
    # GeForce runs FP16 accumulation at twice its FP32-accumulate rate; llama.cpp's prompts use it
    rtx = catalogue[catalogue["gpu"] == "GeForce RTX 4090"].iloc[0]
    assert prec.fp16_accumulate_tflops(rtx) == 2 * rtx["fp16_tensor_tflops"]
    assert prec.fp16_accumulate_tflops(a100) == a100["fp16_tensor_tflops"]
    # llama.cpp's prompt kernels other than the matrix multiplies load one element a thread: the
    # A100 streams them at its per-SM rate too, the RTX 4090 (128 SMs x 10 GB/s above its 1008 GB/s) not
    # (build 2824's path: a quantised prompt unpacked to FP16 by those kernels before cuBLAS multiplies it)
    old = llm.ENGINES["llama.cpp-2024"]
    prompt = {
        g["gpu"]: llm.speeds(m, g, "q4_k_m", prompt=4096, engine=old)["prefill_tokens_per_s"]
        for g in (a100, rtx)
    }
    with monkeypatch.context() as patch:
        patch.setattr(llm.speed, "SCALAR_BYTES_PER_SM_S", float("inf"))
        lifted = {
            g["gpu"]: llm.speeds(m, g, "q4_k_m", prompt=4096, engine=old)["prefill_tokens_per_s"]
            for g in (a100, rtx)
        }
    assert lifted["A100 PCIe 80GB"] > 1.1 * prompt["A100 PCIe 80GB"]
    assert lifted["GeForce RTX 4090"] == pytest.approx(prompt["GeForce RTX 4090"])
    # (with memory traffic out of the way, which the two engines make differently)
    monkeypatch.setattr(llm.speed, "SCALAR_BYTES_PER_SM_S", float("inf"))
    unbound = rtx.copy()
    unbound["memory_bandwidth_gbs"] = 1e12
    fast = llm.speeds(m, unbound, "f16", prompt=512, engine="llama.cpp")["prefill_tokens_per_s"]
    slow = llm.speeds(m, unbound, "f16", prompt=512, engine="vllm")["prefill_tokens_per_s"]
    assert fast == pytest.approx(2 * slow, rel=0.05)
    # a layer split: decode pays a hand-off per boundary; a 4096-token prompt fills 4 micro-batches
    one = llm.speeds(m, rtx, "q4_k_m", context=512, prompt=4096)
    four = llm.speeds(m, rtx, "q4_k_m", context=512, prompt=4096, gpus=4, split="layer")
    assert four["decode_step_s"] == pytest.approx(one["decode_step_s"] + 3 * llm.LAYER_HOP_S)
    # llama.cpp gives the first GPU the extra layer and the last the output layer (the logged KV-cache
    # buffers of a published 4-GPU run: 288, 256, 256 and 224 MiB, 32 MiB a layer)
    assert llm.layer_stages(32, 4) == [9, 8, 8, 7] and llm.layer_stages(32, 8) == [5, 4, 4, 4, 4, 4, 4, 3]
    assert llm.layer_stages(80, 4) == [21, 20, 20, 19] and llm.layer_stages(32, 1) == [32]
    # a 4096-token prompt is 8 micro-batches; each GPU runs its share of one micro-batch's time T and
    # hands the float32 hidden state on through the host (PCIe 4.0: 31.5 / 2 GB/s); with four copies
    # for four GPUs the host never waits, so the slowest GPU paces it: all four stages once, then 7 more
    # of the first GPU's
    t = llm.PROMPT_CHUNK / one["prefill_tokens_per_s"]
    hop = llm.LAYER_HOP_S + llm.PROMPT_CHUNK * m.hidden * 4 / (31.5 / 2 * 1e9)
    makespan = (t + 3 * hop) + 7 * (9 * t / 32 + hop)
    assert four["prefill_tokens_per_s"] == pytest.approx(8 * llm.PROMPT_CHUNK / makespan)
    # an 8192-token prompt's 16 micro-batches run on from one pass of 2048 tokens into the next; drained
    # at each pass instead, it is four passes of 4 micro-batches
    one_long = llm.speeds(m, rtx, "q4_k_m", context=512, prompt=8192)
    t = llm.PROMPT_CHUNK / one_long["prefill_tokens_per_s"]
    running_on = llm.speeds(m, rtx, "q4_k_m", context=512, prompt=8192, gpus=4)
    tokens_per_s = 16 * llm.PROMPT_CHUNK / (t + 3 * hop + 15 * (9 * t / 32 + hop))
    assert running_on["prefill_tokens_per_s"] == pytest.approx(tokens_per_s)
    drained_engine = dataclasses.replace(llm.ENGINES["llama.cpp"], pipeline_across_passes=False)
    drained = llm.speeds(m, rtx, "q4_k_m", context=512, prompt=8192, gpus=4, engine=drained_engine)
    tokens_per_s = 4 * llm.PROMPT_CHUNK / (t + 3 * hop + 3 * (9 * t / 32 + hop))
    assert drained["prefill_tokens_per_s"] == pytest.approx(tokens_per_s)
    # with more GPUs than copies the host's wait paces it: on 8 equal GPUs every 4 micro-batches take
    # one micro-batch's trip through all 8 (16 micro-batches: 32 stage times, against 16 + 8 - 1 without)
    assert llm.pipeline_makespan([1.0] * 8, 16) == 32 and llm.pipeline_makespan([1.0] * 8, 16, 10**6) == 23
    assert llm.pipeline_makespan([1.0] * 4, 16) == 19 and llm.pipeline_makespan([2.0, 1.0], 3) == 7
    with pytest.raises(ParameterError, match="engine 'tgi'"):
        llm.speeds(m, rtx, engine="tgi")


def test_a_pair_one_source_measured_gets_its_published_ratio_beside_the_prediction():
    # the one source of both ran llama.cpp builds of 2024
    _, verdicts = llm.pair_answers(
        [("A100 PCIe 80GB", "RTX A6000")], ["llama-3-8b"], "q4_k_m", 8192, engine="llama.cpp-2024"
    )
    ref = llm.reference._graded_reference()
    run = ref[
        (ref["gpus"] == 1)
        & (ref["model"] == "llama-3-8b")
        & (ref["weights"] == "q4_k_m")
        & (ref["test"] == "tg")
        & (ref["tokens"] == 8192)
    ].set_index("gpu")["throughput_tokens_s"]
    speed = {g: run[g] for g in ("A100 PCIe 80GB", "RTX A6000")}
    ratio = speed["A100 PCIe 80GB"] / speed["RTX A6000"]
    assert (
        ratio > 1
        and (
            f"Published by one source for both: xiongjiedai-llama3 measured A100 PCIe 80GB at "
            f"{ratio:.2f}x on llama-3-8b (generating 8192 tokens)."
        )
        in verdicts[0]
    )
    # no source measured both cards: nothing published to set beside it
    _, seed = llm.pair_answers([("A40", "V100")], ["llama-3-8b"], "q4_k_m", 8192)
    assert "Published by one source" not in seed[0]


def test_the_seed_pairs_answered_for_llms():
    answers, verdicts = llm.pair_answers([("A40", "V100")], ["llama-3-8b", "llama-3-70b"], "q4_k_m", 8192)
    assert len(verdicts) == 1 and verdicts[0].startswith("A40 vs V100 PCIe 16GB:")
    rows = answers.set_index(["model", "gpu"])
    assert set(answers["gpu"]) == {"A40", "V100 PCIe 16GB"} and len(answers) == 4
    # llama-3-70b at 4-bit (about 40 GiB) fits on the 48 GB A40 alone, not on a 16 GB V100
    assert (
        rows.loc[("llama-3-70b", "A40"), "fits"] and not rows.loc[("llama-3-70b", "V100 PCIe 16GB"), "fits"]
    )
    assert "only A40 holds llama-3-70b." in verdicts[0]
    a = rows.loc[("llama-3-8b", "A40"), "decode_tokens_per_s"]
    v = rows.loc[("llama-3-8b", "V100 PCIe 16GB"), "decode_tokens_per_s"]
    faster, k = ("V100 PCIe 16GB", v / a) if v > a else ("A40", a / v)
    # one model fits both, so one factor, and the decode model's measured error between single GPUs beside it
    table = llm.validation_table()
    summary = llm.summarize(table[table["setting"] == "one GPU each"], "tg")
    share = summary["within_tolerance"] / summary["pairs"]
    assert summary["pairs"] < len(table[table["test"] == "tg"])
    one = table[(table["setting"] == "one GPU each") & (table["test"] == "tg")]
    own = {g: one[(one["gpu_a"] == g) | (one["gpu_b"] == g)] for g in ("A40", "V100 PCIe 16GB")}
    assert all(len(v) for v in own.values())
    assert (
        f"{faster} generates {k:.2f}x as fast (predicted; {share:.0%} of {summary['pairs']} published "
        f"single-GPU decode speedups within ±20%, median error {summary['median_abs_error_pct']:.0f}%; "
        f"pairs with the A40: {int(own['A40']['within_tolerance'].sum())} of {len(own['A40'])} within ±20%; "
        f"pairs with the V100 PCIe 16GB: {int(own['V100 PCIe 16GB']['within_tolerance'].sum())} of "
        f"{len(own['V100 PCIe 16GB'])} within ±20%)"
    ) in verdicts[0]
    # a card no source measured says so
    _, other = llm.pair_answers([("RTX A4000", "RTX A5000")], ["llama-3-8b"], "q4_k_m", 8192)
    assert (
        "RTX A4000: no published decode speed, outside what was graded; RTX A5000: no published decode "
        "speed, outside what was graded)" in other[0]
    )


def test_tensor_parallel_decode_by_hand(catalogue):
    """Split by tensor over two A100 SXM4 (NVLink): each card reads half the weights and cache per
    step, and every layer all-reduces the hidden state twice over the link."""
    m = llm.resolve_model("llama-3-8b")
    a100 = catalogue[catalogue["gpu"] == "A100 SXM4 80GB"].iloc[0]
    one = llm.speeds(m, a100, "f16", context=1024, engine="vllm")
    two = llm.speeds(m, a100, "f16", context=1024, gpus=2, engine="vllm")
    fixed = m.layers * llm.VLLM_KERNELS_PER_LAYER * llm.LAUNCH_S  # vLLM fuses more than llama.cpp
    assert two["link"] == "NVLink"
    memory_one = one["decode_step_s"] - fixed
    # each all-reduce: its latency, and one token's FP16 hidden state, 2(n-1)/n of it through each GPU,
    # over half the catalogue's bidirectional NVLink figure
    moved = m.hidden * 2 * 2 * (2 - 1) / 2
    allreduce = 2 * m.layers * (llm.ALLREDUCE_LATENCY_S["nvlink"] + moved / (a100["nvlink_gbs"] / 2 * 1e9))
    assert two["decode_step_s"] == pytest.approx(memory_one / 2 + fixed + allreduce)
    # at a batch of 512 the bytes outweigh the latency, and over PCIe the step is slower
    assert 512 * moved / (a100["nvlink_gbs"] / 2 * 1e9) > llm.ALLREDUCE_LATENCY_S["nvlink"]
    nvlink = llm.speeds(m, a100, "f16", context=1024, gpus=2, batch=512, engine="vllm")
    pcie = llm.speeds(m, a100, "f16", context=1024, gpus=2, batch=512, engine="vllm", link="pcie")
    assert nvlink["link"] == "NVLink" and pcie["decode_step_s"] > nvlink["decode_step_s"]


def test_llm_grading_takes_each_sources_own_ratio():
    ref = llm.by_configuration(llm.load_reference())
    table = llm.validation_table()
    r = table.iloc[0]
    rows = ref[
        (ref["source"] == r["source"])
        & (ref["model"] == r["model"])
        & (ref["weights"] == r["weights"])
        & (ref["test"] == r["test"])
        & (ref["tokens"] == r["tokens"])
    ]
    a = rows[(rows["gpu"] == r["gpu_a"]) & (rows["gpus"] == r["gpus_a"])]["throughput_tokens_s"].iloc[0]
    b = rows[(rows["gpu"] == r["gpu_b"]) & (rows["gpus"] == r["gpus_b"])]["throughput_tokens_s"].iloc[0]
    assert r["published_speedup"] == pytest.approx(a / b) and r["published_speedup"] >= 1
    s = llm.summary_by_test(table).set_index("test")
    assert s["pairs"].sum() == len(table)
    assert s["within_tolerance"].sum() == int(table["within_tolerance"].sum())
    # between single GPUs and between configurations of several: the two settings add up
    by = llm.summary_by_test(table, by_setting=True)
    assert by["pairs"].sum() == len(table) and set(by["setting"]) == set(llm.SETTINGS)
    one = table[(table["gpus_a"] == 1) & (table["gpus_b"] == 1)]
    assert (table["setting"] == "one GPU each").sum() == len(one)
    pp = by[(by["setting"] == "one GPU each") & by["test"].str.startswith("prefill")].iloc[0]
    assert pp["within_tolerance"] == int(one.loc[one["test"] == "pp", "within_tolerance"].sum())
    assert f"({pp['within_tolerance']} of the {pp['pairs']} between single GPUs)" in llm.grading_statement()
    # asked for several GPUs and one model, the line grades that setting and that model there
    many = table[(table["setting"] == "several GPUs") & (table["test"] == "pp")]
    mine = many[(many["model"] == "llama-3-70b") & (many["weights"] == "q4_k_m")]
    text = llm.grading_statement(4, "llama-3-70b", "q4_k_m")
    assert (
        f"({int(many['within_tolerance'].sum())} of the {len(many)} with several GPUs; "
        f"{int(mine['within_tolerance'].sum())} of the {len(mine)} of llama-3-70b q4_k_m there)"
    ) in text
    assert "none of qwen2.5-14b q4_k_m there" in llm.grading_statement(1, "qwen2.5-14b", "q4_k_m")


def test_a_single_gpu_series_that_rises_with_length_is_left_out():
    """One GPU's tokens/s can only fall as the prompt or context grows; a series that rises by more
    than RISING_TOLERANCE is left out whole, and only on one GPU (a layer split may pipeline)."""

    def series(gpu, gpus, test, speeds):
        return [
            {
                "source": "s",
                "gpu": gpu,
                "gpus": gpus,
                "model": "llama-3-8b",
                "weights": "f16",
                "test": test,
                "tokens": t,
                "throughput_tokens_s": v,
            }
            for t, v in zip((512, 1024, 4096, 8192), speeds)
        ]

    frame = pd.DataFrame(
        series("A40", 1, "pp", (4000, 3900, 3000, 2300))  # falls: kept
        + series("L40S", 1, "pp", (2250, 2500, 2900, 3300))  # rises 11 % first: out
        + series("L40S", 4, "pp", (2200, 2500, 3100, 4300))  # several GPUs: kept
        + series("A40", 1, "tg", (11.6, 11.8, 11.5, 11.2))  # +1.7 %, inside the tolerance: kept
        + series("A6000", 1, "tg", (11.6, 12.08, 11.68, 11.26))
    )  # +4.1 %: out
    why = llm.screened(frame)
    assert list(why != "") == [False] * 4 + [True] * 4 + [False] * 8 + [True] * 4
    assert (
        why[4]
        == "one GPU's prefill speed rises 16% from 1024 to 4096 tokens; it can only fall as the length grows"
    )
    assert "decode speed rises 4% from 512 to 1024" in why[16]
    # the shipped table: three runs, four series, and the grading leaves them out unless asked
    ref = llm.load_reference()
    out = ref[llm.screened(ref) != ""]
    assert set(zip(out["gpu"], out["gpus"], out["model"], out["weights"], out["test"])) == {
        ("A100 SXM4 80GB", 1, "llama-3-8b", "f16", "pp"),
        ("L40S", 1, "llama-3-8b", "f16", "pp"),
        ("A40", 1, "llama-3-70b", "q4_k_m", "pp"),
        ("A40", 1, "llama-3-70b", "q4_k_m", "tg"),
        # an M3 Max decodes 8B Q4_K_M faster over 1024 tokens than over 512 (XiongjieDai's Apple table)
        ("Apple M3 Max", 1, "llama-3-8b", "q4_k_m", "tg"),
        # the same machines' FP16 prompts on four cards: slower than their Q4_K_M ones (the rule below)
        ("A100 SXM4 80GB", 4, "llama-3-8b", "f16", "pp"),
        ("L40S", 4, "llama-3-8b", "f16", "pp"),
        # the RTX 3090 machines of two, four and six cards ran at 230, 185 and 270 W (their notebooks' nvidia-smi)
        *{
            ("GeForce RTX 3090", n, m, w, "pp")
            for n, m, w in itertools.product((2, 4, 6), ("llama-3-8b", "llama-3-70b"), ("f16", "q4_k_m"))
            if (m, w) != ("llama-3-70b", "f16")
        },
        ("GeForce RTX 3090", 6, "llama-3-70b", "f16", "pp"),
        # an FP16 prompt on four RTX 5000 Ada slower than the same machine's Q4_K_M one
        ("RTX 5000 Ada Generation", 4, "llama-3-8b", "f16", "pp"),
    }
    graded, everything = llm.validation_table(), llm.validation_table(ref, include_screened=True)
    assert len(everything) > len(graded)
    single = graded[(graded["gpus_a"] == 1) & (graded["gpus_b"] == 1) & (graded["test"] == "pp")]
    l40s = (single["gpu_a"] == "L40S") | (single["gpu_b"] == "L40S")
    assert not (l40s & (single["model"] == "llama-3-8b") & (single["weights"] == "f16")).any()


def test_a_power_capped_run_leaves_out_its_prefill_and_keeps_its_decode():
    """A run whose GPUs were capped below POWER_LIMIT_SHARE of the board's datasheet power ran its
    prompts at the clock the cap allowed: its prefill is left out, its decode (memory-bound) kept;
    at or near the datasheet power, or with no cap recorded, nothing is left out."""

    def series(gpu, gpus, test, cap):
        return [
            {
                "source": "s",
                "gpu": gpu,
                "gpus": gpus,
                "model": "llama-3-8b",
                "weights": "q4_k_m",
                "test": test,
                "tokens": t,
                "throughput_tokens_s": 1000.0 / t,
                "power_limit_w": cap,
            }
            for t in (512, 1024)
        ]

    frame = pd.DataFrame(
        series("GeForce RTX 3090", 2, "pp", 230.0)  # 66 % of 350 W: out
        + series("GeForce RTX 3090", 2, "tg", 230.0)  # its decode: kept
        + series("GeForce RTX 3090", 1, "pp", 370.0)  # above the datasheet: kept
        + series("H100 PCIe", 1, "pp", 310.0)  # 89 % of 350 W, a datasheet setting: kept
        + series("GeForce RTX 3090", 4, "pp", 0.8 * 350)  # 80 %: out
        + series("GeForce RTX 4090", 2, "pp", None)
    )  # not recorded: kept
    why = llm.screened(frame)
    assert list(why != "") == [True] * 2 + [False] * 6 + [True] * 2 + [False] * 2
    assert why[0].startswith("its GPUs ran power-capped (230 W at the lowest, against the board's 350 W)")
    assert 310 / 350 > llm.POWER_LIMIT_SHARE > 0.8
    # the shipped column: every xiongjiedai-llama3 row, from its notebook's nvidia-smi, as its note says
    ref = llm.load_reference()
    mine = ref[ref["source"] == "xiongjiedai-llama3"]
    assert mine["power_limit_w"].notna().all()
    assert ref.loc[ref["source"] != "xiongjiedai-llama3", "power_limit_w"].isna().all()
    four = mine[(mine["gpu"] == "GeForce RTX 3090") & (mine["gpus"] == 4)]
    assert (four["power_limit_w"] == 185).all()
    assert four["note"].str.endswith("(Pwr:Usage/Cap): power caps 230, 230, 230 and 185 W").all()


def test_an_fp16_prompt_slower_than_its_unpacked_quantised_one_is_left_out():
    """Before llama.cpp build 3216 a Q4_K_M prompt is unpacked to FP16 and multiplied as FP16, so the
    same run's FP16 prompt is the faster; an FP16 series slower by more than UNPACKED_TOLERANCE at
    some length is left out whole, on one GPU or several, and only its prefill."""

    def series(gpus, weights, test, speeds, build=2824, source="s"):
        return [
            {
                "source": source,
                "gpu": "L40S",
                "gpus": gpus,
                "model": "llama-3-8b",
                "weights": weights,
                "test": test,
                "tokens": t,
                "throughput_tokens_s": v,
                "engine": f"llama.cpp build {build} (x)",
            }
            for t, v in zip((512, 1024, 4096, 8192), speeds)
        ]

    frame = pd.DataFrame(
        series(4, "q4_k_m", "pp", (6100, 9000, 10600, 9000))
        + series(4, "f16", "pp", (6000, 2500, 3100, 4300))  # 72 % slower at 1024: out
        + series(4, "f16", "tg", (42.7, 42.5, 41.3, 40.2))  # its decode: kept
        + series(2, "q4_k_m", "pp", (6000, 7000, 8000, 7000))
        + series(2, "f16", "pp", (5500, 6500, 7300, 6400))  # 8-9 % slower: inside the tolerance
        + series(4, "q4_k_m", "pp", (6100, 9000, 10600, 9000), build=4753, source="t")
        + series(4, "f16", "pp", (3000, 4000, 5000, 4500), build=4753, source="t")
    )  # MMQ: kept
    why = llm.screened(frame)
    # (the MMQ build's quantised prompt is kept: its profile follows the int8 kernels)
    assert list(why != "") == [False] * 4 + [True] * 4 + [False] * 20
    assert why[4].startswith(
        "its FP16 prefill is slower than its q4_k_m's (2500 against 9000 tokens/s at 1024"
    )
    # the comparison behind it, one row per run with both (the MMQ build's run is not one)
    runs = llm.fp16_against_unpacked(frame).set_index("gpus")
    assert len(runs) == 2 and list(runs.loc[4, "fp16_rows"]) == [4, 5, 6, 7]
    assert runs.loc[4, ["tokens", "fp16_tokens_s", "unpacked_tokens_s", "slower"]].tolist() == [
        1024,
        2500,
        9000,
        True,
    ]
    assert (
        not runs.loc[2, "slower"] and runs.loc[2, "tokens"] == 4096
    )  # 8.75 % slower: the worst, inside 10 %
    assert (llm.screened(frame.drop(columns="engine")) == "").all()  # no build named: no rule to apply


@pytest.mark.tensorflow
def test_the_decoder_workload_compiles_without_log_noise(capfd):
    """Both steps compile as tf.functions with AutoGraph and run quietly (a report shows stdout)."""
    import tensorflow as tf

    tf.autograph.set_verbosity(0, alsologtostdout=True)  # as in a notebook kernel, warnings reach stdout
    info = wl.DeviceInfo("cpu")
    for phase in ("prefill", "decode"):
        config = wl.Config(
            "decoder", "fp32", {"phase": phase, **wl.sizes("cpu", True)["decoder"], "layers": 1}
        )
        with wl.precision_scope(config, info) as math:
            built = wl.build(config, math)
            out = built.step()
        assert tuple(out.shape) == (config.params["batch"], config.params["vocab"])
    tf.autograph.set_verbosity(0, alsologtostdout=False)
    captured = capfd.readouterr()
    assert "AutoGraph could not transform" not in captured.out + captured.err


def test_a_configuration_measured_on_several_hosts_is_graded_once_at_its_median():
    """A source that ran one GPU on several machines (cloud instance types) gives one configuration:
    the median of its hosts, so two machines with the same GPU never make a pair."""

    def row(gpu, host, speed):
        return {
            "source": "s",
            "gpu": gpu,
            "gpus": 1,
            "split": "layer",
            "model": "llama-1-7b",
            "weights": "q4_k_m",
            "test": "tg",
            "tokens": 128,
            "throughput_tokens_s": speed,
            "engine": "llama.cpp",
            "host": host,
        }

    frame = pd.DataFrame(
        [
            row("T4", "aws/g4dn.xlarge", 44.0),
            row("T4", "alicloud/gn6i", 34.0),
            row("T4", "aws/g4dn.2xlarge", 40.0),
            row("L4", "aws/g6.xlarge", 60.0),
        ]
    )
    one = llm.by_configuration(frame).set_index("gpu")
    assert one.loc["T4", "throughput_tokens_s"] == 40.0 and one.loc["T4", "hosts"] == 3
    assert one.loc["T4", "host_low"] == pytest.approx(-0.15) and one.loc["T4", "host_high"] == pytest.approx(
        0.10
    )
    assert one.loc["L4", "hosts"] == 1 and llm.by_configuration(llm.by_configuration(frame)).equals(
        llm.by_configuration(frame)
    )  # aggregating twice changes nothing
    table = llm.validation_table(frame)
    assert len(table) == 1 and {table.iloc[0]["gpu_a"], table.iloc[0]["gpu_b"]} == {"T4", "L4"}
    assert table.iloc[0]["published_speedup"] == pytest.approx(60 / 40)
    # the series rule reads each host's own series, not the hosts' speeds one after another
    assert (llm.screened(frame) == "").all()


def _reference_lines(path, rows) -> None:
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)


def test_the_same_configuration_on_the_same_host_twice_is_refused(tmp_path):
    with open(llm.REFERENCE_PATH, newline="") as f:
        rows = list(csv.reader(f))
    header, row = rows[0], next(r for r in rows if r[0].startswith("sparecores-"))
    host = row[header.index("host")]
    path = tmp_path / "ref.csv"
    _reference_lines(path, [header, row, row])
    with pytest.raises(DataError) as err:
        llm.load_reference(path)
    assert "line 3" in str(
        err.value
    ) and "repeats line 2 (same source, GPU, count, model, weights, test, length and host)" in str(err.value)
    other = list(row)
    other[header.index("host")] = "other/host"
    _reference_lines(path, [header, row, other])
    assert list(llm.load_reference(path)["host"]) == [host, "other/host"]


def test_a_published_run_that_set_its_micro_batches_is_predicted_with_them(tmp_path):
    """llama-bench's -ub and -b (``n_ubatch``, ``n_batch``): the 6x RTX 3090 70B F16 runs that set them
    to fit memory are predicted with their own sizes, not llama.cpp's defaults."""
    ref = llm.by_configuration(llm.load_reference())
    own = ref[ref["n_ubatch"].notna() | ref["n_batch"].notna()]
    assert sorted(zip(own["tokens"], own["n_batch"], own["n_ubatch"])) == [
        (4096, 1536, 256),
        (8192, 768, 128),
        (8192, 768, 128),
    ]
    m = llm.resolve_model("llama-3-70b")
    for i, r in own.iterrows():
        prompt = int(r["tokens"]) if r["test"] == "pp" else None
        s = llm.speeds(
            m,
            r["gpu"],
            "f16",
            int(r["tokens"]) if prompt else int(r["tokens"]) // 2,
            gpus=6,
            split="layer",
            prompt=prompt,
            prompt_chunk=int(r["n_ubatch"]),
            prompt_batch=int(r["n_batch"]),
            engine=llm.engine_of_run(r["engine"]),  # builds of 2024
        )
        assert llm.predict_reference(own.loc[[i]]).iloc[0] == pytest.approx(
            s["prefill_tokens_per_s"] if prompt else s["decode_tokens_per_s"]
        )
    # the defaults spelled out change nothing
    rtx = "GeForce RTX 3090"
    default = llm.speeds(m, rtx, "q4_k_m", context=512, prompt=4096, gpus=4, split="layer")
    assert (
        llm.speeds(
            m,
            rtx,
            "q4_k_m",
            context=512,
            prompt=4096,
            gpus=4,
            split="layer",
            prompt_chunk=512,
            prompt_batch=2048,
        )
        == default
    )
    # llama.cpp's attention in 256-token micro-batches covers the cache filled so far: 256, 512, 768, 1024
    assert llm.attention_window(1024, chunk=256) == 256 * (256 + 512 + 768 + 1024) / 1024 == 640
    # a pass of 1536 tokens in micro-batches of 256 is six micro-batches through four GPUs (21, 20, 20 and
    # 19 of the 80 layers): all four stages once, then five more of the first GPU's, each with its
    # 256-token hand-off through the host
    kw = {"context": 512, "prompt": 1536, "prompt_chunk": 256, "prompt_batch": 1536}
    t = 256 / llm.speeds(m, rtx, "q4_k_m", **kw)["prefill_tokens_per_s"]
    four = llm.speeds(m, rtx, "q4_k_m", gpus=4, split="layer", **kw)["prefill_tokens_per_s"]
    hop = llm.LAYER_HOP_S + 256 * m.hidden * 4 / (31.5 / 2 * 1e9)
    assert four == pytest.approx(1536 / (t + 3 * hop + 5 * (21 * t / 80 + hop)))
    # a micro-batch larger than its pass shrinks to the pass (llama.cpp: n_ubatch = min(n_batch, n_ubatch))
    big = {**kw, "prompt": 4096, "prompt_chunk": 4096}
    assert llm.speeds(m, rtx, "q4_k_m", gpus=4, split="layer", **big) == llm.speeds(
        m, rtx, "q4_k_m", gpus=4, split="layer", **{**big, "prompt_chunk": 1536}
    )
    # a size the file cannot hold is named with its line and column
    with open(llm.REFERENCE_PATH, newline="") as f:
        rows = list(csv.reader(f))
    bad = list(rows[1])
    bad[rows[0].index("n_ubatch")] = "0"
    _reference_lines(tmp_path / "ref.csv", [rows[0], bad])
    with pytest.raises(DataError, match=r"line 2.*n_ubatch"):
        llm.load_reference(tmp_path / "ref.csv")


def test_the_second_sources_models_have_the_gguf_files_parameter_counts():
    """LLaMA 7B, phi-4 and Llama 3.3 70B as the kit counts them against model_n_params of the GGUF
    files SpareCores benchmarked (quoted in each row's note); llama.cpp also stores Llama 3.1+'s 64
    rope frequency factors."""
    ref = llm.load_reference()
    models = llm.load_models()
    for name, extra in (("llama-1-7b", 0), ("phi-4", 0), ("llama-3.3-70b", 64)):
        note = ref.loc[ref["model"] == name, "note"].iloc[0]
        gguf = int(note.split('"model_n_params": ')[1].split(",")[0])
        assert models[name].params() + extra == gguf


def test_only_llamacpps_decode_is_held_to_the_per_sm_rate():
    """The per-SM streaming cap was read off llama.cpp's matrix-vector kernels; a PyTorch engine
    (vLLM) decodes at the streaming rate, so on an HBM card with more bandwidth than SMs x the cap
    its weight-bound decode step is the weights over the streaming rate."""
    m = llm.load_models()["llama-3.1-8b"]
    row = specs.load_catalogue().set_index("gpu").loc["H100 SXM5"]
    # the H100 SXM5's datasheet 3350 GB/s at the median share published copies reach
    stream = 3350e9 * bandwidth_rates.shipped_typical_share() * DEFAULT_EFFICIENCY.stream
    cpp_engine = llm.ENGINES["llama.cpp"]
    capped = llm.gemv_rate({**row.to_dict(), "gpu": "H100 SXM5"}, cpp_engine.gemv_bytes_per_sm_cycle)
    assert capped < stream
    vllm = llm.speeds(m, "H100 SXM5", "bf16", 64, engine="vllm")
    cpp = llm.speeds(m, "H100 SXM5", "bf16", 64, engine="llama.cpp")
    kv = 64 * m.kv_bytes_per_token("f16")
    weights = m.active_params() * 2
    assert vllm["decode_step_s"] == pytest.approx((weights + kv) / stream + m.layers * 11 * 5e-6, rel=1e-9)
    fixed = m.layers * cpp_engine.kernels_per_layer * cpp_engine.launch_s
    assert cpp_engine.kernels_per_layer == 14 and cpp_engine.launch_s == llm.LLAMA_CPP_2025["launch_s"]
    assert cpp["decode_step_s"] == pytest.approx((weights + kv) / capped + fixed, rel=1e-9)


def _published_rows(**changes):
    """Two published lengths of one configuration, and the same at another card count."""
    base = {
        "source": "a-source",
        "gpu": "A40",
        "gpus": 1,
        "split": "layer",
        "model": "llama-3-8b",
        "weights": "q4_k_m",
        "engine": "llama.cpp build 2824",
    }
    rows = [
        dict(base, test=t, tokens=n, throughput_tokens_s=v)
        for t, n, v in (("pp", 512, 3000.0), ("pp", 4096, 2500.0), ("tg", 512, 80.0), ("tg", 4096, 70.0))
    ]
    rows.append(dict(base, gpus=4, test="pp", tokens=4096, throughput_tokens_s=6000.0))
    return pd.DataFrame([dict(r, **changes) for r in rows])


def test_published_check_takes_the_nearest_length_and_grades_the_prediction_there():
    ref = _published_rows()
    got = llm.published_check("llama-3-8b", "q4_k_m", "A40", 1, 3000, "llama.cpp-2024", reference=ref)
    assert got["published_source"] == "a-source" and got["published_tokens"] == 4096
    assert got["published_prefill_tokens_per_s"] == 2500.0 and got["published_decode_tokens_per_s"] == 70.0
    m = llm.resolve_model("llama-3-8b")
    prefill = llm.speeds(m, "A40", "q4_k_m", 4096, prompt=4096, engine="llama.cpp-2024")[
        "prefill_tokens_per_s"
    ]
    decode = llm.speeds(m, "A40", "q4_k_m", 2048, engine="llama.cpp-2024")[
        "decode_tokens_per_s"
    ]  # 4096 generated: 2048 of context on average
    assert got["prefill_error_pct"] == pytest.approx(100 * (prefill / 2500 - 1))
    assert got["decode_error_pct"] == pytest.approx(100 * (decode / 70 - 1))
    assert (
        llm.published_check("llama-3-8b", "q4_k_m", "A40", 1, 600, "llama.cpp-2024", reference=ref)[
            "published_tokens"
        ]
        == 512
    )
    # several cards are another configuration; a batch of several sequences is not what was measured
    four = llm.published_check("llama-3-8b", "q4_k_m", "A40", 4, 512, "llama.cpp-2024", reference=ref)
    assert four["published_prefill_tokens_per_s"] == 6000.0 and "published_decode_tokens_per_s" not in four
    batched = llm.published_check(
        "llama-3-8b", "q4_k_m", "A40", 1, 512, "llama.cpp-2024", decode=False, reference=ref
    )
    assert "decode_error_pct" not in batched and batched["published_prefill_tokens_per_s"] == 3000.0
    # another engine, format, model or GPU: nothing to check against
    for args in (
        ("llama-3-8b", "q4_k_m", "A40", 1, 512, "vllm"),
        ("llama-3-8b", "f16", "A40", 1, 512, "llama.cpp-2024"),
        ("llama-3-70b", "q4_k_m", "A40", 1, 512, "llama.cpp-2024"),
        ("llama-3-8b", "q4_k_m", "RTX A4000", 1, 512, "llama.cpp-2024"),
    ):
        assert llm.published_check(*args, reference=ref) == {}


def test_the_table_shows_what_was_published_of_each_row(capsys):
    # the one source of the A40 ran llama.cpp builds of 2024
    table = llm.llm_table(
        "llama-3-8b", "q4_k_m", 4096, 1, gpus=["A40", "RTX A4000"], engine="llama.cpp-2024"
    ).set_index("gpu")
    a40, a4000 = table.loc["A40"], table.loc["RTX A4000"]
    shipped = llm.reference._graded_reference()
    row = shipped[
        (shipped["gpu"] == "A40")
        & (shipped["gpus"] == 1)
        & (shipped["model"] == "llama-3-8b")
        & (shipped["weights"] == "q4_k_m")
        & (shipped["test"] == "pp")
        & (shipped["tokens"] == 4096)
    ]
    assert a40["published_prefill_tokens_per_s"] == pytest.approx(row["throughput_tokens_s"].iloc[0])
    assert a40["published_tokens"] == 4096 and abs(a40["prefill_error_pct"]) < 50
    assert a4000[list(llm.PUBLISHED_COLUMNS)].isna().all()  # nobody published an RTX A4000 run
    assert (
        cli.main(
            ["llm", "--model", "llama-3-8b", "--context", "4096", "--engine", "llama.cpp-2024"]
            + ["--gpu", "A40", "--gpu", "RTX A4000"]
        )
        == 0
    )
    out = capsys.readouterr().out
    section = out.split("Published for the same configuration")[1]
    assert "A40" in section and "RTX A4000" not in section and "xiongjiedai-llama3" in section
    # a user's own shape under a shipped name is not what was measured
    mine = dataclasses.replace(llm.resolve_model("llama-3-8b"), layers=16)
    assert (
        llm.llm_table(mine, "q4_k_m", 4096, 1, gpus=["A40"])[list(llm.PUBLISHED_COLUMNS)].isna().all().all()
    )


def _rows_of_several_builds() -> list[list[str]]:
    """The shipped reference's header and five of its rows: build 2824's prefill and decode of one
    GPU, build 2843's decode of another, and a decode row of each SpareCores source (vLLM's last)."""
    with open(llm.REFERENCE_PATH, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    col = {name: i for i, name in enumerate(header)}

    def first(**match):
        return list(next(r for r in rows[1:] if all(r[col[k]] == v for k, v in match.items())))

    def built(row, build):
        row[col["engine"]] = f"llama.cpp build {build} (commit 0000000) per a test"
        return row

    pp = built(
        first(
            source="xiongjiedai-llama3",
            test="pp",
            gpu="A40",
            gpus="1",
            model="llama-3-8b",
            weights="q4_k_m",
            tokens="512",
        ),
        2824,
    )
    tg = built(
        first(
            source="xiongjiedai-llama3",
            test="tg",
            gpu="A40",
            gpus="1",
            model="llama-3-8b",
            weights="q4_k_m",
            tokens="512",
        ),
        2824,
    )
    tg_later = built(
        first(
            source="xiongjiedai-llama3",
            test="tg",
            gpu="RTX A6000",
            gpus="1",
            model="llama-3-8b",
            weights="q4_k_m",
            tokens="512",
        ),
        2843,
    )
    cloud = first(source="sparecores-llamacpp", test="tg")
    vllm = first(source="sparecores-vllm", test="tg")
    return [header, pp, tg, tg_later, cloud, vllm]


def test_engine_scope_says_which_versions_graded_decode_and_prefill(tmp_path, monkeypatch):
    """Each profile's scope: the versions and dates it describes, then the engine versions of the
    reference rows it is graded on (each source's llama.cpp builds as a range), decode and prefill
    apart; vLLM's prefill, which no row times, is ungraded."""
    rows = _rows_of_several_builds()
    vllm = rows[-1]
    col = {name: i for i, name in enumerate(rows[0])}
    path = tmp_path / "reference_llm.csv"
    _reference_lines(path, rows)
    monkeypatch.setattr(llm.reference, "REFERENCE_PATH", path)
    llm.reference._graded_reference.cache_clear()
    try:
        old = llm.engine_scope("llama.cpp-2024")
        current = llm.engine_scope("llama.cpp")
        served = llm.engine_scope("vllm", "bf16")
        trt = llm.engine_scope("trt-llm")
    finally:
        llm.reference._graded_reference.cache_clear()
    assert old == (
        "The llama.cpp-2024 profile describes builds 2824-2843 (May 2024); its decode is graded on "
        "builds 2824-2843, its prefill on build 2824."
    )
    assert current == (
        "The llama.cpp profile describes builds 4400 and later (2025 on); its decode is graded on build 4753; "
        "its prefill is not graded: no source here times a prompt apart from serving it."
    )
    weights = vllm[col["weights"]]
    assert served == (
        f"The vllm profile describes vLLM 0.22 (2026); its decode is graded on vLLM 0.22.1 (weights {weights}); "
        "its prefill is not graded: no source here times a prompt apart from serving it."
    )
    assert trt.startswith("The trt-llm profile describes TensorRT-LLM") and "its decode is not graded" in trt
    with pytest.raises(ParameterError, match="engine 'tgi'"):
        llm.engine_scope("tgi", "f16")


def test_a_current_builds_prompts_are_graded_under_its_own_profile():
    """SpareCores' build 4753 ran its prompts with flash attention on and, on Turing and later, a
    quantised prompt in the int8 kernels: the ``llama.cpp`` profile follows both, so those prompts are
    graded, predicted with that profile and the flash attention their run names."""
    ref = llm.by_configuration(llm.load_reference())
    why = llm.screened(ref)
    current = ref[ref["engine"].str.contains("build 4753") & (ref["test"] == "pp")]
    assert len(current) > 50 and (current["engine"].map(llm.engine_of_run) == "llama.cpp").all()
    assert (why[current.index] == "").mean() > 0.9
    r = current.iloc[0]
    assert llm.reference.flash_attention_of(r["engine"]) is True
    predicted = llm.predict_reference(current.iloc[[0]]).iloc[0]
    by_hand = llm.speeds(
        llm.resolve_model(r["model"]),
        r["gpu"],
        r["weights"],
        int(r["tokens"]),
        gpus=int(r["gpus"]),
        prompt=int(r["tokens"]),
        engine="llama.cpp",
        flash_attention=True,
    )["prefill_tokens_per_s"]
    assert predicted == pytest.approx(by_hand)
    # build 2824's rows belong to the 2024 profile
    old = ref[ref["source"] == "xiongjiedai-llama3"]
    assert (old["engine"].map(llm.engine_of_run) == "llama.cpp-2024").all()


def test_gpukit_llm_says_what_its_speeds_describe(capsys):
    base = ["llm", "--model", "llama-3-8b", "--gpu", "A40"]
    assert cli.main([*base, "--weights", "q4_k_m"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "with llama.cpp (builds 4400 and later, flash attention on)" in out[0]
    assert out[2] == llm.engine_scope("llama.cpp", "q4_k_m")
    assert cli.main([*base, "--weights", "q4_k_m", "--flash-attention", "off"]) == 0
    assert "flash attention off" in capsys.readouterr().out.splitlines()[0]
    # a weights format the engine does not serve: which engines do
    assert cli.main([*base, "--weights", "awq-4bit", "--engine", "llama.cpp"]) == 2
    assert "llama.cpp does not serve awq-4bit weights" in capsys.readouterr().err
