"""The serving engines as data: how llama.cpp and vLLM multiply a prompt, what their activations
cost in memory traffic, how they spread a model over several GPUs, the kernels they launch and the
rates their kernels stream at (:data:`ENGINES` and the constants it draws on), which engine serves a
weights format by default, and the roofline's factors the LLM model takes."""

from __future__ import annotations

from dataclasses import replace

from ..perfmodel import DEFAULT_EFFICIENCY

#: Tokens of the prompt processed per step (llama.cpp's default micro-batch, vLLM's chunked prefill).
PROMPT_CHUNK = 512

#: Kernels a decoder layer launches per generated token (norms, Q/K/V, rotary, attention, output
#: projection, residual adds, gate/up/down and activation): llama.cpp's CUDA graph of a LLaMA
#: layer has this order of nodes.
KERNELS_PER_LAYER = 14
#: The same for vLLM, which fuses more: its ``LlamaDecoderLayer`` (``vllm/model_executor/models/llama.py``
#: at commit 0035bdf2) runs a residual add fused into each RMS norm (2), the merged QKV and gate-up
#: projections, rotary embedding, the output and down projections and a fused SiLU-and-multiply (6),
#: and its attention (``vllm/attention/backends/flash_attn.py`` at commit 00df3429) writes the new key
#: and value into the paged cache, runs the decode kernel and copies the result out (3).
VLLM_KERNELS_PER_LAYER = 11
#: Fixed cost per kernel launched in a decode step (launch and synchronisation).
LAUNCH_S = 5e-6

#: Tokens llama.cpp takes from a prompt per pass (``n_batch``, its default); each pass is split
#: into micro-batches of :data:`PROMPT_CHUNK` (``n_ubatch``) that fill a layer split's pipeline.
PROMPT_BATCH = 2048
#: Cost of handing a token's hidden state from one GPU to the next in a layer split (llama.cpp
#: synchronises the stream and copies between devices at each boundary): read off the published
#: one-to-N-GPU decode speeds of ``data/reference_llm.csv``, where each boundary adds 0.1 to 0.4 ms.
#: A prompt's micro-batch adds its hidden states' bytes over PCIe through host memory.
LAYER_HOP_S = 250e-6
#: Copies of each GPU's inputs llama.cpp's scheduler keeps for a layer split's pipeline
#: (``GGML_SCHED_MAX_COPIES`` in ``ggml-backend.c`` at build 2824; the published runs' logs print
#: ``pipeline parallelism enabled (n_copies=4)``): the host reuses a GPU's input buffers every this
#: many micro-batches, and waits for the GPU to be done with them first.
SCHED_COPIES = 4

#: Bytes one SM streams per clock cycle through llama.cpp's matrix-vector products (a decode step's
#: kernels): by Little's law, the loads it keeps in flight over the memory latency, the latency
#: counted in the SM's own cycles (most of a load's round trip, through the load units, the
#: on-chip network and L2, runs in the core clock's domain), so the rate rises with the clock. A
#: GPU whose streaming bandwidth (:func:`gpukit.bandwidth_rates.streaming_gbs`) exceeds SMs x boost
#: clock x this cannot reach it at batch 1 (the HBM data-centre cards). Read off the first source's
#: decode measurements (``xiongjiedai-llama3``), where it fits more pairs than half a byte either
#: side of it, and more than the best rate per second does (``docs/llm-accuracy.md`` grades the
#: model with that per-second form): the H100 PCIe (1755 MHz) then streams 25 % more per SM than the
#: A100 (1410 MHz), as SpareCores' measurements of both, which it was not fitted to, show. It belongs
#: to llama.cpp's kernels (``ENGINES[...]["gemv_per_sm"]``). A PyTorch engine's decode streams at the
#: streaming rate: vLLM's runs in ``data/reference_llm.csv`` decode on the HBM cards faster than
#: predicted with the cap (``docs/llm-accuracy.md``'s per-GPU decode table gives both).
GEMV_BYTES_PER_SM_CYCLE = 6.0
#: Bytes per second one SM streams through kernels that load one element a thread (``scalar_kernels``):
#: llama.cpp's conversions (``convert_unary``) and dequantisation (one warp a block) at the
#: benchmarked build, between a prompt's matrix multiplies. Read off the first source's prefill
#: measurements: as a rate per second it fits them better than the best rate per clock cycle, and
#: from 8 to 11 GB/s the fit moves without a trend, so the round figure stands
#: (``docs/llm-accuracy.md`` shows each GPU's prompts with and without it).
SCALAR_BYTES_PER_SM_S = 10e9
#: Engines: how they multiply in prefill, what their prompt's activations cost in memory traffic,
#: and how they spread a model over several GPUs.
#:
#: * llama.cpp (the build of ``data/reference_llm.csv``, 2824) dequantises to FP16 and calls cuBLAS
#:   with FP16 accumulation for prompts (``ggml_cuda_op_mul_mat_cublas``: ``CUBLAS_COMPUTE_16F``),
#:   keeps activations in float32 and so converts each matrix multiply's input to FP16 and its
#:   output back (``to_fp16_cuda``/``to_fp32_cuda``), runs attention without flash attention by
#:   default (the scores written, widened, soft-maxed and narrowed: :data:`SCORE_BYTES`) over the
#:   whole key-value window of the chunk, and splits a model by layer;
#: * PyTorch engines (vLLM, TensorRT-LLM) accumulate in FP32, keep FP16 activations, use flash
#:   attention (no scores in memory, the causal half of the window) and split by tensor.
#:
#: ``pipeline_across_passes``: whether a layer split's pipeline runs on from one pass of
#: :data:`PROMPT_BATCH` tokens into the next: llama-bench at build 2824 calls ``llama_decode`` once a
#: pass and synchronises only at the end of the prompt, so llama.cpp's does. ``sched_copies``: the
#: copies of each GPU's inputs llama.cpp's scheduler keeps (:data:`SCHED_COPIES`; the pipeline as
#: :func:`pipeline_makespan` runs it over :func:`layer_stages`), or None for an engine without it (m
#: micro-batches through n equal stages in m + n - 1 stage times). Graded with each part undone in
#: ``docs/llm-accuracy.md``: the published 8B runs pipeline about as the source allows, the 70B runs
#: less, which nothing read in the source explains.
ENGINES = {
    "llama.cpp": {
        "accumulate": "fp16",
        "split": "layer",
        "activation_bytes": 4,
        "converts": True,
        "flash_attention": False,
        "scalar_kernels": True,
        "gemv_per_sm": True,
        "kernels_per_layer": KERNELS_PER_LAYER,
        "pipeline_across_passes": True,
        "sched_copies": SCHED_COPIES,
    },
    "vllm": {
        "accumulate": "fp32",
        "split": "tensor",
        "activation_bytes": 2,
        "converts": False,
        "flash_attention": True,
        "scalar_kernels": False,
        "gemv_per_sm": False,
        "kernels_per_layer": VLLM_KERNELS_PER_LAYER,
        "pipeline_across_passes": False,
        "sched_copies": None,
    },
}
#: How several GPUs can share a model: a slice of every layer each (``tensor``) or whole layers each (``layer``).
SPLITS = ("tensor", "layer")
#: Bytes of memory traffic per attention score and head without flash attention (llama.cpp's
#: ``llm_build_kqv``): cuBLAS writes Q.K^T in FP16 (2), a kernel widens it to float32 (read 2,
#: write 4), the masked softmax reads and writes it (8), a kernel narrows it to FP16 for the
#: multiply by V (read 4, write 2), which reads it (2).
SCORE_BYTES = 24
#: Bytes a conversion kernel moves per element (float32 read and FP16 written, or the reverse).
CONVERT_BYTES = 6


#: Weights formats llama.cpp serves (GGUF); the others default to a PyTorch engine.
GGUF = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_k_m", "q5_k_m")


def default_engine(weights: str) -> str:
    """llama.cpp for GGUF quantisations, vLLM (a PyTorch engine) for 16-bit and GPTQ/AWQ weights."""
    key = str(weights).strip().lower()
    return "llama.cpp" if key in GGUF and key.startswith("q") else "vllm"


def default_efficiency():
    """The roofline's factors as the LLM model takes them: :data:`gpukit.perfmodel.DEFAULT_EFFICIENCY`
    with every GPU streaming at the measured GPUs' median share of its datasheet bandwidth
    (``measured_bandwidth`` off), not at its own copy share as the performance model does. A copy
    reads one array and writes another; decode reads its weights and writes next to nothing, and a
    GPU's read rate is not its copy rate (te42kyfo's gpu-stream in ``data/bandwidth_rates.csv``'s
    sources: an H100 PCIe reads at 1942 GB/s and scales at 1704, an A40 679 and 652). Graded both
    ways (``docs/llm-accuracy.md`` gives both counts), each GPU's copy share fits fewer pairs, in
    decode and in prefill."""
    return replace(DEFAULT_EFFICIENCY, measured_bandwidth=False)
