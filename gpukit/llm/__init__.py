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

from .engines import (
    CONVERT_BYTES,
    ENGINES,
    GEMV_BYTES_PER_SM_CYCLE,
    GGUF,
    KERNELS_PER_LAYER,
    LAUNCH_S,
    LAYER_HOP_S,
    LLAMA_CPP_2025,
    LLAMA_CPP_2025_BUILD,
    LLAMA_CPP_METAL,
    LLAMA_CPP_ROCM,
    LLAMA_CPP_VULKAN,
    MMQ_COMPUTE_CAPABILITY,
    PROMPT_BATCH,
    PROMPT_CHUNK,
    PYTORCH_WEIGHTS,
    SCALAR_BYTES_PER_SM_S,
    SCHED_COPIES,
    SCORE_BYTES,
    SPLITS,
    TRT_KERNELS_PER_LAYER,
    TRT_LLM_SERVING,
    VLLM_KERNELS_PER_LAYER,
    Engine,
    check_engine_device,
    default_efficiency,
    default_engine,
    engine_of_run,
    for_device,
    resolve_engine,
)
from .grading import (
    RATIO_TOLERANCE,
    SETTINGS,
    WINNER_MARGIN,
    decode_error_text,
    decode_summary,
    engine_scope,
    engine_versions,
    grading_statement,
    predict_reference,
    summarize,
    summary_by_test,
    validation_table,
)
from .hf_config import FAMILIES, from_config, read_config
from .measure import (
    decoder_llm,
    measure_decoder_child,
    measure_decoder_memory,
)
from .memory import (
    ADAM_MIXED_BYTES,
    FINETUNE_WEIGHTS,
    LLM_MODES,
    LORA_TARGETS,
    NF4_BITS,
    activation_bytes,
    finetune_gpus_needed,
    finetune_memory,
    fits,
    gpus_needed,
    inference_memory,
    lora_params,
)
from .models import (
    DEFAULT_MODEL,
    FILE_FIELDS,
    KV_CACHE_BYTES,
    LLM,
    MODEL_SCHEMA,
    MODELS_PATH,
    WEIGHTS_PATH,
    WEIGHTS_SCHEMA,
    Weights,
    layout,
    load_model_file,
    load_models,
    load_weights,
    models_frame,
    resolve_model,
    weights_format,
    weights_frame,
)
from .pool import (
    CUDA_VISIBLE_SHARE,
    POOL_ENGINES,
    VLLM_GPU_MEMORY_UTILIZATION,
    VLLM_VERSIONS,
    check_utilization,
    engine_memory,
    llamacpp_memory,
    trtllm_pool,
    visible_bytes,
    vllm_pool,
)
from .pool_reference import (
    POOL_REFERENCE_PATH,
    POOL_TOLERANCE,
    load_pool_reference,
    pool_validation,
    predict_pool,
)
from .reference import (
    CONFIGURATION,
    FLASH_ATTENTION_ON,
    LLAMA_CPP_MMQ_BUILD,
    POWER_LIMIT_SHARE,
    REFERENCE_PATH,
    REFERENCE_SCHEMA,
    RISING_TOLERANCE,
    UNPACKED_TOLERANCE,
    board_power_w,
    by_configuration,
    fp16_against_unpacked,
    graded_gpus,
    llama_cpp_build,
    load_reference,
    power_capped,
    screened,
)
from .serving import (
    MAX_BATCH,
    MAX_GPUS,
    SERVING_COLUMNS,
    gpus_needed_for_one,
    max_batch,
    moe_note,
    serve,
    serving_bottom_line,
    serving_costs,
    serving_table,
)
from .serving_reference import (
    SERVING_GRID,
    SERVING_REFERENCE_PATH,
    SERVING_SCHEMA,
    SERVING_TOLERANCE,
    fit_serving,
    held_out_sources,
    load_serving_reference,
    predict_serving,
    serving_error_text,
    serving_short_error,
    serving_summary,
    serving_validation,
)
from .speed import (
    ALLREDUCE_LATENCY_S,
    DEQUANT_OPS,
    GEMM_TILE,
    attention_window,
    gemv_rate,
    layer_hop_s,
    layer_stages,
    pipeline_makespan,
    prefill_traffic_bytes,
    speeds,
    wave_utilization,
)
from .tables import (
    LLM_COLUMNS,
    PUBLISHED_COLUMNS,
    fit_matrix,
    llm_table,
    pair_answers,
    published_check,
)

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
