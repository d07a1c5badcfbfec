"""Today's LLMs from their own Hugging Face config.json: the families read, the attention layouts
counted (grouped-query, latent, sliding and chunked layers), mixtures with dense and shared layers,
MXFP4 with the parts a checkpoint leaves in BF16, and the one-line errors.

``tests/hf_configs/`` holds config.json files as the Hub ships them, each copied from the public
repository data/llm_models.csv's ``source_read`` names for the model of the same name (DeepSeek-V3's
and both Llama 4 copies are trimmed of keys the layout does not read; the row's note says so). The
shipped rows of those models must be what the reader makes of their config."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from gpukit import cli, llm
from gpukit.errors import ParameterError
from gpukit.llm.architecture import LLM
from gpukit.llm.hf_config import from_config, read_config

CONFIGS = Path(__file__).parent / "hf_configs"
#: The shape fields a config decides (not the name, the family's label or the sources).
SHAPE = [
    f.name
    for f in dataclasses.fields(LLM)
    if f.name
    not in ("name", "family", "published_params_b", "published_active_params_b", "config_url", "source_read")
]


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.json")), ids=lambda p: p.stem)
def test_each_shipped_row_is_what_its_config_says(path):
    shipped = llm.load_models()[path.stem]
    read = read_config(path, path.stem)
    assert {f: getattr(read, f) for f in SHAPE} == {f: getattr(shipped, f) for f in SHAPE}


@pytest.mark.parametrize(
    "name, total, active",
    [
        ("deepseek-v3", 671, 37),
        ("gpt-oss-120b", 117, 5.1),
        ("gpt-oss-20b", 21, 3.6),
        ("llama-4-scout", 109, 17),
        ("llama-4-maverick", 400, 17),
        ("qwen3-30b-a3b", 30.5, 3.3),
    ],
)
def test_counted_parameters_land_on_the_published_ones(name, total, active):
    """Total within 2 % of the model card; active within 10 % (cards count the embedding look-up
    or the vision tower in, the kit counts what a token multiplies)."""
    m = llm.load_models()[name]
    assert m.params() / 1e9 == pytest.approx(total, rel=0.02)
    assert m.active_params() / 1e9 == pytest.approx(active, rel=0.10)
    assert m.published_params_b == pytest.approx(total)


def test_multi_head_latent_attention_caches_the_latent_and_the_rope_key():
    ds = llm.load_models()["deepseek-v3"]
    assert (ds.attention, ds.kv_lora_rank, ds.rope_dim) == ("mla", 512, 64)
    assert ds.kv_bytes_per_token("f16") == 61 * (512 + 64) * 2
    # every GPU of a tensor-parallel group holds the latent whole
    assert ds.kv_cache_bytes(1000, "f16", gpus=8) == ds.kv_cache_bytes(1000, "f16", gpus=1)
    gqa = llm.load_models()["llama-3.1-8b"]
    assert gqa.kv_cache_bytes(1000, "f16", gpus=8) == gqa.kv_cache_bytes(1000, "f16") / 8
    # 3 dense layers of 18432, 58 with 256 experts of 2048, 8 routed and 1 shared
    assert (ds.dense_layers, ds.dense_ffn, ds.experts, ds.shared_experts) == (3, 18432, 256, 1)


def test_sliding_and_chunked_layers_keep_only_their_window():
    oss = llm.load_models()["gpt-oss-120b"]
    assert (oss.local_kind, oss.local_window, oss.local_layers) == ("sliding", 128, 18)
    per = 2 * 8 * 64 * 2  # a key and a value of 8 heads of 64, FP16, per layer
    assert oss.kv_cache_bytes(100_000) == (18 * 100_000 + 18 * 128) * per
    assert oss.kv_cache_bytes(100) == 36 * 100 * per  # inside the window every layer keeps it all
    scout = llm.load_models()["llama-4-scout"]
    assert (scout.local_kind, scout.local_window, scout.local_layers) == ("chunked", 8192, 36)
    assert scout.cached_tokens(100_000) == 12 * 100_000 + 36 * 8192


def test_gemma3_pattern_and_layer_types_become_sliding_layers(tmp_path):
    """A Gemma 3 shaped config written here: five local layers to one global, under text_config."""
    text = {
        "model_type": "gemma3_text",
        "num_hidden_layers": 12,
        "hidden_size": 256,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "intermediate_size": 512,
        "vocab_size": 1000,
        "max_position_embeddings": 131072,
        "sliding_window": 1024,
        "sliding_window_pattern": 6,
    }
    m = from_config({"model_type": "gemma3", "text_config": text, "vision_config": {}}, "g3")
    assert (m.family, m.local_layers, m.local_window, m.tied_embeddings) == ("gemma3", 10, 1024, True)
    typed = dict(text, layer_types=["sliding_attention"] * 11 + ["full_attention"])
    assert from_config(typed, "g3").local_layers == 11
    # the Hub's Gemma 3 configs leave vocabulary, context and pattern to Gemma3TextConfig's defaults
    bare = {
        k: v
        for k, v in text.items()
        if k not in ("vocab_size", "max_position_embeddings", "sliding_window_pattern")
    }
    m = from_config({"model_type": "gemma3", "text_config": bare}, "g3")
    assert (m.vocab, m.max_context, m.local_layers) == (262_208, 131_072, 10)
    with pytest.raises(ParameterError, match="layer_types lists 3 layers, num_hidden_layers says 12"):
        from_config(dict(text, layer_types=["full_attention"] * 3), "g3")


def test_mxfp4_keeps_what_the_checkpoint_leaves_in_bf16():
    oss = llm.load_models()["gpt-oss-120b"]
    assert oss.native_weights == "mxfp4"
    assert set(oss.unquantized) == {"attention", "router", "embeddings", "head"}
    bits = llm.weights_format("mxfp4").bits_per_weight
    assert bits == 4.25  # E2M1 and one E8M0 scale per 32
    parts = oss.param_parts()
    kept = sum(parts[p] for p in ("attention", "router", "embeddings", "head"))
    by_hand = (kept * 16 + (oss.params() - kept) * bits) / 8
    assert oss.weight_bytes(bits) == pytest.approx(by_hand, rel=1e-9)
    assert 60 < oss.weight_bytes(bits) / 2**30 < 62  # the experts in MXFP4, the rest BF16
    # a format of 16 bits or more applies to every part
    assert oss.weight_bytes(16) == pytest.approx(oss.params() * 2)


def test_decode_reads_the_active_experts_not_the_whole_mixture():
    oss = llm.load_models()["gpt-oss-120b"]
    one = oss.active_weight_bytes(4.25)
    assert one < oss.weight_bytes(4.25) / 10  # 4 of 128 experts
    assert oss.active_weight_bytes(4.25, experts=oss.experts) > 0.95 * oss.weight_bytes(4.25)


def test_quantization_config_names_the_format_and_the_kept_parts():
    base = json.loads((CONFIGS / "qwen3-8b.json").read_text())
    fp8 = dict(base, quantization_config={"quant_method": "fp8", "weight_block_size": [128, 128]})
    m = from_config(fp8, "q")
    assert m.native_weights == "fp8" and set(m.unquantized) == {"embeddings", "head", "router"}
    skip = {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.mlp.gate", "lm_head"]}
    m = from_config(dict(base, quantization_config=skip), "q")
    assert set(m.unquantized) == {"router", "head"}
    m = from_config(dict(base, quantization_config={"quant_method": "bitsandbytes"}), "q")
    assert m.native_weights == "bf16"


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"model_type": "mamba"},
            "model_type 'mamba' is a state-space model; the kit lays out transformer decoders",
        ),
        ({"model_type": "whatever"}, "model_type 'whatever' is not one the kit reads; use one of"),
        ({"num_hidden_layers": None}, "config has no 'num_hidden_layers'"),
        ({"intermediate_size": "big"}, "intermediate_size is 'big'; expected a whole number"),
        ({"model_type": None}, "config has no 'model_type'"),
    ],
)
def test_a_config_the_kit_cannot_lay_out_is_one_line(change, message):
    data = {
        k: v
        for k, v in {**json.loads((CONFIGS / "qwen3-8b.json").read_text()), **change}.items()
        if v is not None
    }
    with pytest.raises(ParameterError, match=message.replace("(", "\\(").replace(")", "\\)")) as exc:
        from_config(data, "x", "config.json")
    assert "\n" not in str(exc.value)


def test_gpukit_llm_reads_a_config_json(tmp_path, capsys):
    folder = tmp_path / "Qwen3-8B"
    folder.mkdir()
    (folder / "config.json").write_text((CONFIGS / "qwen3-8b.json").read_text())
    assert cli.main(["llm", "--model", str(folder / "config.json"), "--gpu", "L4", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "qwen3-8b" in out and "L4" in out
    assert cli.main(["llm", "--model", str(folder / "config.json"), "--context", "50000", "--gpu", "L4"]) == 2
    assert "takes up to 40960 tokens of context" in capsys.readouterr().err


def test_a_bad_config_file_is_one_line_from_the_command_line(tmp_path, capsys):
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({"model_type": "mamba", "hidden_size": 768}))
    assert cli.main(["llm", "--model", str(bad), "--gpu", "L4"]) == 2
    err = capsys.readouterr().err.strip()
    assert "state-space model" in err and len(err.splitlines()) == 1
