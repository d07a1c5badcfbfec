"""A model's own Hugging Face ``config.json``, read into an :class:`~gpukit.llm.architecture.LLM`.

The config is read as the Hub ships it: flat, or with the language model under ``text_config``
(Gemma 3, Llama 4, Mistral Small 3.x: the vision tower is left out and said so). Each family's
keys are read as its ``transformers`` configuration class defines them, and a key a family needs
but the file lacks is a one-line error naming it. Nothing is fetched: the kit reads the file the
user has.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import ParameterError
from .architecture import LLM

#: The ``model_type`` values read, and the family each is filed under.
FAMILIES = {
    "llama": "llama",
    "mistral": "mistral",
    "mixtral": "mixtral",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3_moe",
    "gemma2": "gemma2",
    "gemma3": "gemma3",
    "gemma3_text": "gemma3",
    "phi3": "phi3",
    "deepseek_v2": "deepseek_v2",
    "deepseek_v3": "deepseek_v3",
    "gpt_oss": "gpt_oss",
    "llama4": "llama4",
    "llama4_text": "llama4",
    "mistral3": "mistral",
}
#: Model types that are not a transformer decoder the kit can lay out, and what they are.
NOT_DECODERS = {
    "mamba": "a state-space model",
    "mamba2": "a state-space model",
    "falcon_mamba": "a state-space model",
    "rwkv": "a recurrent model",
    "jamba": "a hybrid state-space model",
    "zamba": "a hybrid state-space model",
    "zamba2": "a hybrid state-space model",
    "bamba": "a hybrid state-space model",
    "nemotron_h": "a hybrid state-space model",
    "falcon_h1": "a hybrid state-space model",
    "qwen3_next": "a hybrid linear-attention model",
    "lfm2": "a hybrid convolution model",
    "recurrent_gemma": "a recurrent model",
    "xlstm": "a recurrent model",
    "stable-diffusion": "a diffusion model",
    "unet": "a diffusion model",
    "dit": "a diffusion model",
    "clip": "an image-text encoder",
    "siglip": "an image encoder",
    "bert": "an encoder",
    "t5": "an encoder-decoder",
    "whisper": "a speech encoder-decoder",
}
#: Parts named in a ``quantization_config``'s ``modules_to_not_convert``, by the module names the
#: families use (a router is ``router``, or a mixture's ``mlp.gate``, not ``gate_proj``).
_MODULE_PARTS = (
    (re.compile(r"self_attn|\battn\b"), "attention"),
    (re.compile(r"router|mlp\.gate\b(?!_)"), "router"),
    (re.compile(r"embed_tokens|\bwte\b"), "embeddings"),
    (re.compile(r"lm_head"), "head"),
)
#: Keys a family's config may leave out, as its ``transformers`` configuration class defaults them:
#: Gemma 3's Hub configs give no vocabulary, context or pattern in ``text_config``
#: (``Gemma3TextConfig``: ``vocab_size=262_208``, ``max_position_embeddings=131_072``,
#: ``sliding_window_pattern=6``).
FAMILY_DEFAULTS = {
    "gemma3": {"vocab_size": 262_208, "max_position_embeddings": 131_072, "sliding_window_pattern": 6},
}
#: Parts a block-wise FP8 checkpoint (DeepSeek-V3's ``quant_method: fp8``) leaves in BF16: it
#: quantizes the decoder's linear layers, not the embedding, the output head or the router.
_FP8_KEEPS = ("embeddings", "head", "router")


class _Config:
    """The config's mapping, read with errors that name the file and the key."""

    def __init__(self, data: dict, where: str):
        self.data, self.where = data, where

    def need(self, *keys: str):
        for key in keys:
            if self.data.get(key) is not None:
                return self.data[key]
        raise ParameterError(f"{self.where}: config has no {keys[0]!r}; it is needed to lay out the model")

    def get(self, key: str, default=None):
        value = self.data.get(key)
        return default if value is None else value

    def count(self, *keys: str) -> int:
        value = self.need(*keys)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ParameterError(
                f"{self.where}: {keys[0]} is {value!r}; expected a whole number of at least 1"
            )
        return value


def read_config(path: str | Path, name: str | None = None) -> LLM:
    """The :class:`LLM` a Hugging Face ``config.json`` at ``path`` describes."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ParameterError(f"{p}: no such file; give a model's config.json") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ParameterError(
            f"{p}: not valid JSON ({exc.__class__.__name__}: {str(exc).splitlines()[0]})"
        ) from None
    if not isinstance(data, dict):
        raise ParameterError(f"{p}: expected a JSON object such as a config.json")
    stem = p.parent.name if p.stem == "config" and p.parent.name else p.stem
    return from_config(data, name or stem.lower(), str(p))


def is_hf_config(data: dict) -> bool:
    """Whether a mapping is a Hugging Face config (it names a ``model_type`` or ``architectures``)."""
    return isinstance(data, dict) and ("model_type" in data or "architectures" in data)


def from_config(data: dict, name: str, where: str = "config") -> LLM:
    """The :class:`LLM` a Hugging Face config mapping describes, named ``name``."""
    outer = str(data.get("model_type") or "").lower()
    if not outer:
        raise ParameterError(f"{where}: config has no 'model_type'; it names the architecture to read")
    inner = data.get("text_config")
    if isinstance(inner, dict) and outer not in ("gemma3_text", "llama4_text"):
        text = dict(inner)
        # keys the language model inherits from the outer config when its own copy lacks them
        for key in ("tie_word_embeddings", "quantization_config", "vocab_size"):
            if key not in text and key in data:
                text[key] = data[key]
        kind = str(text.get("model_type") or outer).lower()
        # a multimodal wrapper names its text model's type, or implies it
        kind = {"mistral3": "mistral", "gemma3": "gemma3_text", "llama4": "llama4_text"}.get(kind, kind)
    else:
        text, kind = data, outer
    if kind in NOT_DECODERS or outer in NOT_DECODERS:
        what = NOT_DECODERS.get(kind) or NOT_DECODERS[outer]
        raise ParameterError(
            f"{where}: model_type {kind!r} is {what}; the kit lays out transformer decoders only"
        )
    if kind not in FAMILIES:
        raise ParameterError(
            f"{where}: model_type {kind!r} is not one the kit reads; use one of "
            f"{', '.join(sorted(set(FAMILIES) - {'gemma3_text', 'llama4_text', 'mistral3'}))}, "
            "or describe the shape in the kit's own model file (gpukit llm --help)"
        )
    family = FAMILIES[kind]
    c = _Config({**FAMILY_DEFAULTS.get(family, {}), **text}, where)
    fields = _common(c, family)
    fields.update(_READERS.get(family, _dense)(c, fields))
    fields.update(_quantization(c, fields))
    return LLM(name=name, family=family, **fields)


def _common(c: _Config, family: str) -> dict:
    layers = c.count("num_hidden_layers", "n_layer", "num_layers")
    hidden = c.count("hidden_size", "n_embd", "d_model")
    heads = c.count("num_attention_heads", "n_head")
    kv_heads = c.get("num_key_value_heads") or heads
    head_dim = c.get("head_dim")
    if head_dim is None:
        if hidden % heads:
            raise ParameterError(
                f"{c.where}: config has no 'head_dim' and hidden_size is not a multiple of heads"
            )
        head_dim = hidden // heads
    tied_default = family in ("gemma2", "gemma3")
    return {
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "ffn": c.count("intermediate_size"),
        "vocab": c.count("vocab_size"),
        "tied_embeddings": bool(c.get("tie_word_embeddings", tied_default)),
        "max_context": c.count("max_position_embeddings"),
    }


def _sliding_all(c: _Config, f: dict) -> dict:
    """Every layer sliding when the config sets a window (Mistral 7B v0.1, Phi-3 mini)."""
    window = c.get("sliding_window")
    if window and window < f["max_context"]:
        return {"local_kind": "sliding", "local_window": int(window), "local_layers": f["layers"]}
    return {}


def _dense(c: _Config, f: dict) -> dict:
    return _sliding_all(c, f)


def _layer_types(c: _Config, f: dict, pattern: int | None = None, first_local: bool = True) -> dict:
    """Sliding layers from ``layer_types`` (transformers' hybrid stacks), else every
    ``pattern``-th layer global (Gemma 3's ``sliding_window_pattern``; Gemma 2 alternates)."""
    window = c.get("sliding_window")
    if not window:
        return {}
    types = c.get("layer_types")
    if types:
        if len(types) != f["layers"]:
            raise ParameterError(
                f"{c.where}: layer_types lists {len(types)} layers, num_hidden_layers says {f['layers']}"
            )
        local = sum(1 for t in types if "sliding" in str(t) or "local" in str(t))
    elif pattern:
        local = sum(1 for i in range(f["layers"]) if (i + 1) % pattern)
    else:
        local = (f["layers"] + 1) // 2 if first_local else f["layers"] // 2
    if not local:
        return {}
    return {"local_kind": "sliding", "local_window": int(window), "local_layers": local}


def _qwen(c: _Config, f: dict) -> dict:
    if not c.get("use_sliding_window", False):
        return {}
    window = c.get("sliding_window")
    first = c.get("max_window_layers", f["layers"])
    local = max(0, f["layers"] - first)  # Qwen2: layers from max_window_layers on slide
    return (
        {"local_kind": "sliding", "local_window": int(window), "local_layers": local}
        if window and local
        else {}
    )


def _qwen3_moe(c: _Config, f: dict) -> dict:
    out = _qwen(c, f)
    experts = c.count("num_experts")
    step = c.get("decoder_sparse_step", 1) or 1
    dense_only = set(c.get("mlp_only_layers", []) or [])
    moe = [i for i in range(f["layers"]) if i not in dense_only and experts > 0 and (i + 1) % step == 0]
    out.update(
        experts=experts,
        experts_per_token=c.count("num_experts_per_tok"),
        ffn=c.count("moe_intermediate_size"),
        dense_layers=f["layers"] - len(moe),
        dense_ffn=f["ffn"] if len(moe) < f["layers"] else 0,
        shared_experts=0,
    )
    return out


def _mixtral(c: _Config, f: dict) -> dict:
    out = _sliding_all(c, f)
    out.update(experts=c.count("num_local_experts"), experts_per_token=c.count("num_experts_per_tok"))
    return out


def _gemma2(c: _Config, f: dict) -> dict:
    return _layer_types(c, f)


def _gemma3(c: _Config, f: dict) -> dict:
    return _layer_types(c, f, pattern=c.get("sliding_window_pattern", 6))


def _deepseek(c: _Config, f: dict) -> dict:
    kv_lora = c.count("kv_lora_rank")
    rope = c.count("qk_rope_head_dim")
    nope = c.count("qk_nope_head_dim")
    experts = c.get("n_routed_experts")
    out = {
        "attention": "mla",
        "q_lora_rank": int(c.get("q_lora_rank", 0) or 0),
        "kv_lora_rank": kv_lora,
        "rope_dim": rope,
        "head_dim": nope + rope,
        "v_head_dim": c.count("v_head_dim"),
        "kv_heads": f["heads"],
    }
    if experts:
        first_dense = int(c.get("first_k_dense_replace", 0) or 0)
        freq = int(c.get("moe_layer_freq", 1) or 1)
        moe = sum(1 for i in range(f["layers"]) if i >= first_dense and i % freq == 0)
        out.update(
            experts=int(experts),
            experts_per_token=c.count("num_experts_per_tok"),
            ffn=c.count("moe_intermediate_size"),
            dense_layers=f["layers"] - moe,
            dense_ffn=f["ffn"] if moe < f["layers"] else 0,
            shared_experts=int(c.get("n_shared_experts", 0) or 0),
        )
    return out


def _gpt_oss(c: _Config, f: dict) -> dict:
    out = _layer_types(c, f)
    out.update(
        experts=c.count("num_local_experts", "num_experts"),
        experts_per_token=c.count("num_experts_per_tok", "experts_per_token"),
    )
    return out


def _llama4(c: _Config, f: dict) -> dict:
    experts = c.count("num_local_experts")
    layers = f["layers"]
    moe_layers = c.get("moe_layers")
    if moe_layers is None:
        step = int(c.get("interleave_moe_layer_step", 1) or 1)
        moe_layers = list(range(step - 1, layers, step))
    out = {
        "experts": experts,
        "experts_per_token": c.count("num_experts_per_tok"),
        "dense_layers": layers - len(moe_layers),
        "dense_ffn": int(c.get("intermediate_size_mlp", 0) or 0) if len(moe_layers) < layers else 0,
        "shared_experts": 1,  # every Llama 4 mixture layer adds a shared expert of the experts' size
    }
    chunk = c.get("attention_chunk_size")
    if chunk:
        no_rope = c.get("no_rope_layers")
        if no_rope:  # 1: the layer uses rotary embedding, and chunked attention; 0: a global NoPE layer
            local = sum(1 for x in no_rope[:layers] if x)
        else:
            interval = int(c.get("no_rope_layer_interval", 4) or 4)
            local = sum(1 for i in range(layers) if (i + 1) % interval)
        if local:
            out.update(local_kind="chunked", local_window=int(chunk), local_layers=local)
    return out


_READERS = {
    "llama": _dense,
    "mistral": _dense,
    "phi3": _dense,
    "mixtral": _mixtral,
    "qwen2": _qwen,
    "qwen3": _qwen,
    "qwen3_moe": _qwen3_moe,
    "gemma2": _gemma2,
    "gemma3": _gemma3,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "gpt_oss": _gpt_oss,
    "llama4": _llama4,
}


def _quantization(c: _Config, f: dict) -> dict:
    """The checkpoint's own format and the parts it leaves at 16 bits (``quantization_config``)."""
    q = c.get("quantization_config")
    if not isinstance(q, dict):
        return {}
    method = str(q.get("quant_method") or "").lower()
    if method == "mxfp4":
        native = "mxfp4"
    elif method == "fp8":
        native = "fp8"
    elif method in ("awq", "gptq"):
        native = f"{method}-4bit" if int(q.get("bits", 4) or 4) == 4 else ""
    else:
        native = ""
    if not native:
        return {}
    skip = q.get("modules_to_not_convert") or q.get("ignored_layers") or q.get("ignore") or []
    parts = {part for module in skip for pattern, part in _MODULE_PARTS if pattern.search(str(module))}
    if native == "fp8" and not skip:
        parts = set(_FP8_KEEPS)
    return {"native_weights": native, "unquantized": tuple(sorted(parts))}
