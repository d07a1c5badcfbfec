"""LLMs on these GPUs: will it fit, how fast will it generate, and what will it cost.

A model is an open decoder architecture (:class:`LLM`, :mod:`.architecture`): layers, hidden
size, grouped-query or multi-head latent attention, local (sliding-window or chunked) layers, the
gated FFN, vocabulary and, for a mixture of experts, its routed, shared and dense layers. The
shipped table cites each model's configuration; a user brings a model's own Hugging Face
``config.json`` (:mod:`.hf_config`) or a JSON or YAML file of the same fields
(:func:`load_model_file`).

**Serving memory as the engines count it** (:mod:`.pool`): vLLM's KV pool from
``gpu_memory_utilization`` of the card less weights, the profiling step's peak and non-torch
memory; TensorRT-LLM's free-memory fraction; llama.cpp's cache of ``n_ctx`` and compute buffer.
:mod:`.pool_reference` grades vLLM's against published startup logs.

**Memory** (:func:`inference_memory`, :func:`finetune_memory`):

* inference: the weights at the format's published bits per weight (``data/llm_weights.csv``),
  the key-value cache (2 x layers x KV heads x head size per token, fp16 or 8-bit), the
  activations of one step (the prompt processed in chunks of :data:`PROMPT_CHUNK` tokens, as
  llama.cpp and vLLM do; without flash attention each chunk's attention scores too), and the
  runtime reserve (:data:`gpukit.memory.DEFAULT_RUNTIME_RESERVE_BYTES`);
* fine-tuning: full (mixed-precision AdamW: 16 bytes per parameter, 2 for the 16-bit weights,
  2 for their gradients, 12 for the float32 master weights and the two moments, as the ZeRO paper
  counts them), LoRA (16-bit frozen weights, 16 bytes per adapter parameter) and QLoRA (the
  frozen weights in 4-bit NormalFloat with double-quantised scales, 4.127 bits per weight as the
  QLoRA paper gives it), plus the activations the backward pass keeps (:func:`activation_bytes`,
  with and without activation checkpointing) and the float32 logits and their gradient.

**Speed** (:func:`speeds`), per GPU through the catalogue's peaks and the roofline's rules:

* prefill (prompt processing): 2 FLOPs per active weight and token plus the attention over the
  context, on the tensor cores at FP16 (a quantised format is dequantised to FP16 first), at the
  tensor efficiency of :data:`gpukit.perfmodel.DEFAULT_EFFICIENCY` and in waves of tiles over the
  SMs; plus the memory traffic of everything between the matrix multiplies — elementwise kernels,
  the engine's type conversions and, without flash attention, the attention scores
  (:func:`prefill_traffic_bytes`), which grows with the context and is what slows a long prompt;
* decode (generation) reads every active weight and the whole KV cache once per step: memory-bound
  at batch 1, turning compute-bound as the batch grows; a quantised format also pays the
  dequantisation on the CUDA cores (:data:`DEQUANT_OPS`), and every step pays a fixed cost per
  kernel it launches (:data:`LAUNCH_S` x the engine's kernels per layer x layers) — at batch 1 on a
  fast GPU that fixed cost is much of the step;
* on several GPUs, tensor parallel: each GPU holds 1/n of the weights and KV cache, and each
  layer all-reduces the hidden state twice over the link (:func:`gpukit.perfmodel.interconnect`),
  a latency-bound exchange of small messages (:data:`ALLREDUCE_LATENCY_S`).

**Cost** per million generated tokens, renting and owning, comes from the price tables
(:func:`gpukit.prices.cost.work_cost_table`).

The package's modules, one concern each: :mod:`.models` (the architectures and weights formats),
:mod:`.memory` (what serving and fine-tuning need), :mod:`.engines` (llama.cpp and vLLM as data),
:mod:`.speed` (prefill and decode speeds), :mod:`.tables` (the answers per GPU and per pair),
:mod:`.reference` (the published runs and the rules that screen them), :mod:`.grading` (the
predictions graded against them: ``docs/accuracy/llm.md``) and :mod:`.measure` (the benchmark
decoder's memory measured here).
"""

from __future__ import annotations

import importlib
import importlib.util

#: Each public name and the module of the package that defines it: a module is imported when one of
#: its names is first asked for (PEP 562), so a command that needs no LLM loads none of this package.
_EXPORTS = {
    "CONVERT_BYTES": "engines",
    "ENGINES": "engines",
    "GEMV_BYTES_PER_SM_CYCLE": "engines",
    "GGUF": "engines",
    "KERNELS_PER_LAYER": "engines",
    "LAUNCH_S": "engines",
    "LAYER_HOP_S": "engines",
    "LLAMA_CPP_2025": "engines",
    "LLAMA_CPP_2025_BUILD": "engines",
    "LLAMA_CPP_METAL": "engines",
    "LLAMA_CPP_ROCM": "engines",
    "LLAMA_CPP_VULKAN": "engines",
    "MMQ_COMPUTE_CAPABILITY": "engines",
    "PROMPT_BATCH": "engines",
    "PROMPT_CHUNK": "engines",
    "PYTORCH_WEIGHTS": "engines",
    "SCALAR_BYTES_PER_SM_S": "engines",
    "SCHED_COPIES": "engines",
    "SCORE_BYTES": "engines",
    "SPLITS": "engines",
    "TRT_KERNELS_PER_LAYER": "engines",
    "TRT_LLM_SERVING": "engines",
    "VLLM_KERNELS_PER_LAYER": "engines",
    "Engine": "engines",
    "check_engine_device": "engines",
    "default_efficiency": "engines",
    "default_engine": "engines",
    "engine_of_run": "engines",
    "for_device": "engines",
    "resolve_engine": "engines",
    "RATIO_TOLERANCE": "grading",
    "SETTINGS": "grading",
    "WINNER_MARGIN": "grading",
    "decode_error_text": "grading",
    "decode_summary": "grading",
    "engine_scope": "grading",
    "engine_versions": "grading",
    "grading_statement": "grading",
    "predict_reference": "grading",
    "summarize": "grading",
    "summary_by_test": "grading",
    "validation_table": "grading",
    "FAMILIES": "hf_config",
    "from_config": "hf_config",
    "read_config": "hf_config",
    "decoder_llm": "measure",
    "measure_decoder_child": "measure",
    "measure_decoder_memory": "measure",
    "ADAM_MIXED_BYTES": "memory",
    "FINETUNE_WEIGHTS": "memory",
    "LLM_MODES": "memory",
    "LORA_TARGETS": "memory",
    "NF4_BITS": "memory",
    "activation_bytes": "memory",
    "finetune_gpus_needed": "memory",
    "finetune_memory": "memory",
    "fits": "memory",
    "gpus_needed": "memory",
    "inference_memory": "memory",
    "lora_params": "memory",
    "DEFAULT_MODEL": "models",
    "FILE_FIELDS": "models",
    "KV_CACHE_BYTES": "models",
    "LLM": "models",
    "MODEL_SCHEMA": "models",
    "MODELS_PATH": "models",
    "WEIGHTS_PATH": "models",
    "WEIGHTS_SCHEMA": "models",
    "Weights": "models",
    "layout": "models",
    "load_model_file": "models",
    "load_models": "models",
    "load_weights": "models",
    "models_frame": "models",
    "resolve_model": "models",
    "weights_format": "models",
    "weights_frame": "models",
    "CUDA_VISIBLE_SHARE": "pool",
    "POOL_ENGINES": "pool",
    "VLLM_GPU_MEMORY_UTILIZATION": "pool",
    "VLLM_VERSIONS": "pool",
    "check_utilization": "pool",
    "engine_memory": "pool",
    "llamacpp_memory": "pool",
    "trtllm_pool": "pool",
    "visible_bytes": "pool",
    "vllm_pool": "pool",
    "POOL_REFERENCE_PATH": "pool_reference",
    "POOL_TOLERANCE": "pool_reference",
    "load_pool_reference": "pool_reference",
    "pool_validation": "pool_reference",
    "predict_pool": "pool_reference",
    "CONFIGURATION": "reference",
    "FLASH_ATTENTION_ON": "reference",
    "LLAMA_CPP_MMQ_BUILD": "reference",
    "POWER_LIMIT_SHARE": "reference",
    "REFERENCE_PATH": "reference",
    "REFERENCE_SCHEMA": "reference",
    "RISING_TOLERANCE": "reference",
    "UNPACKED_TOLERANCE": "reference",
    "board_power_w": "reference",
    "by_configuration": "reference",
    "fp16_against_unpacked": "reference",
    "graded_gpus": "reference",
    "llama_cpp_build": "reference",
    "load_reference": "reference",
    "power_capped": "reference",
    "screened": "reference",
    "MAX_BATCH": "serving",
    "MAX_GPUS": "serving",
    "SERVING_COLUMNS": "serving",
    "gpus_needed_for_one": "serving",
    "max_batch": "serving",
    "moe_note": "serving",
    "serve": "serving",
    "serving_bottom_line": "serving",
    "serving_costs": "serving",
    "serving_table": "serving",
    "SERVING_GRID": "serving_reference",
    "SERVING_REFERENCE_PATH": "serving_reference",
    "SERVING_SCHEMA": "serving_reference",
    "SERVING_TOLERANCE": "serving_reference",
    "fit_serving": "serving_reference",
    "held_out_sources": "serving_reference",
    "load_serving_reference": "serving_reference",
    "predict_serving": "serving_reference",
    "serving_error_text": "serving_reference",
    "serving_short_error": "serving_reference",
    "serving_summary": "serving_reference",
    "serving_validation": "serving_reference",
    "ALLREDUCE_LATENCY_S": "speed",
    "DEQUANT_OPS": "speed",
    "GEMM_TILE": "speed",
    "attention_window": "speed",
    "gemv_rate": "speed",
    "layer_hop_s": "speed",
    "layer_stages": "speed",
    "pipeline_makespan": "speed",
    "prefill_traffic_bytes": "speed",
    "speeds": "speed",
    "wave_utilization": "speed",
    "LLM_COLUMNS": "tables",
    "PUBLISHED_COLUMNS": "tables",
    "fit_matrix": "tables",
    "llm_table": "tables",
    "pair_answers": "tables",
    "published_check": "tables",
}

__all__ = [
    "DEFAULT_MODEL",
    "FAMILIES",
    "from_config",
    "read_config",
    "layout",
    "CUDA_VISIBLE_SHARE",
    "POOL_ENGINES",
    "VLLM_GPU_MEMORY_UTILIZATION",
    "VLLM_VERSIONS",
    "check_utilization",
    "engine_memory",
    "llamacpp_memory",
    "trtllm_pool",
    "visible_bytes",
    "vllm_pool",
    "POOL_REFERENCE_PATH",
    "POOL_TOLERANCE",
    "load_pool_reference",
    "pool_validation",
    "predict_pool",
    "MODELS_PATH",
    "WEIGHTS_PATH",
    "MODEL_SCHEMA",
    "WEIGHTS_SCHEMA",
    "KV_CACHE_BYTES",
    "LLM_MODES",
    "FINETUNE_WEIGHTS",
    "PROMPT_CHUNK",
    "NF4_BITS",
    "ADAM_MIXED_BYTES",
    "LORA_TARGETS",
    "KERNELS_PER_LAYER",
    "VLLM_KERNELS_PER_LAYER",
    "LAUNCH_S",
    "DEQUANT_OPS",
    "ALLREDUCE_LATENCY_S",
    "PROMPT_BATCH",
    "LAYER_HOP_S",
    "SCHED_COPIES",
    "GEMM_TILE",
    "GEMV_BYTES_PER_SM_CYCLE",
    "SCALAR_BYTES_PER_SM_S",
    "ENGINES",
    "SCORE_BYTES",
    "CONVERT_BYTES",
    "LLM",
    "load_models",
    "models_frame",
    "FILE_FIELDS",
    "load_model_file",
    "resolve_model",
    "Weights",
    "load_weights",
    "weights_format",
    "weights_frame",
    "inference_memory",
    "activation_bytes",
    "finetune_memory",
    "finetune_gpus_needed",
    "lora_params",
    "SPLITS",
    "wave_utilization",
    "layer_stages",
    "pipeline_makespan",
    "layer_hop_s",
    "attention_window",
    "prefill_traffic_bytes",
    "default_efficiency",
    "gemv_rate",
    "speeds",
    "fits",
    "gpus_needed",
    "PUBLISHED_COLUMNS",
    "LLM_COLUMNS",
    "GGUF",
    "check_engine_device",
    "default_engine",
    "for_device",
    "llm_table",
    "published_check",
    "pair_answers",
    "fit_matrix",
    "REFERENCE_PATH",
    "REFERENCE_SCHEMA",
    "SETTINGS",
    "RATIO_TOLERANCE",
    "WINNER_MARGIN",
    "load_reference",
    "CONFIGURATION",
    "by_configuration",
    "RISING_TOLERANCE",
    "LLAMA_CPP_MMQ_BUILD",
    "UNPACKED_TOLERANCE",
    "MMQ_COMPUTE_CAPABILITY",
    "LLAMA_CPP_2025",
    "LLAMA_CPP_METAL",
    "LLAMA_CPP_ROCM",
    "LLAMA_CPP_VULKAN",
    "LLAMA_CPP_2025_BUILD",
    "TRT_LLM_SERVING",
    "PYTORCH_WEIGHTS",
    "TRT_KERNELS_PER_LAYER",
    "Engine",
    "engine_of_run",
    "resolve_engine",
    "MAX_BATCH",
    "MAX_GPUS",
    "SERVING_COLUMNS",
    "gpus_needed_for_one",
    "max_batch",
    "moe_note",
    "serve",
    "serving_bottom_line",
    "serving_costs",
    "serving_table",
    "SERVING_GRID",
    "SERVING_REFERENCE_PATH",
    "SERVING_SCHEMA",
    "SERVING_TOLERANCE",
    "fit_serving",
    "held_out_sources",
    "load_serving_reference",
    "predict_serving",
    "serving_error_text",
    "serving_short_error",
    "serving_summary",
    "serving_validation",
    "FLASH_ATTENTION_ON",
    "POWER_LIMIT_SHARE",
    "llama_cpp_build",
    "board_power_w",
    "power_capped",
    "screened",
    "fp16_against_unpacked",
    "graded_gpus",
    "predict_reference",
    "validation_table",
    "summarize",
    "decode_error_text",
    "decode_summary",
    "grading_statement",
    "engine_versions",
    "engine_scope",
    "summary_by_test",
    "decoder_llm",
    "measure_decoder_memory",
    "measure_decoder_child",
]


def __getattr__(name: str):
    """A public name, from the module that defines it, or one of the package's modules, imported
    when first asked for."""
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f".{module}", __name__), name)
    elif importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
