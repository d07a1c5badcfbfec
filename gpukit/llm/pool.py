"""The key-value pool a serving engine allocates on each GPU, sized the way the engine sizes it.

* **vLLM** (:func:`vllm_pool`): ``gpu_memory_utilization`` of the memory CUDA reports, less the
  weights on each GPU, the peak of a profiling step (a forward pass of ``max_num_batched_tokens``
  tokens, or the sampler over ``max_num_seqs`` sequences' logits, whichever is higher), the memory
  outside PyTorch's allocator (cuBLAS workspaces, NCCL and custom all-reduce buffers) and, from
  the versions that count it first (0.20 on), the CUDA graphs. What is left is the KV pool; vLLM logs it as
  "Available KV cache memory" and the tokens it holds as "GPU KV cache size" (every layer counted
  as if it kept them all), and "Maximum concurrency" as the sequences of ``max_model_len`` it
  holds, a local layer needing only its window plus one step's tokens.
* **TensorRT-LLM** (:func:`trtllm_pool`): ``free_gpu_memory_fraction`` (0.9) of what is free after
  the weights, the activations' workspace and the runtime.
* **llama.cpp** (:func:`llamacpp_memory`): the cache of ``n_ctx`` tokens it allocates up front
  (its slots share it), a compute buffer sized for one micro-batch, and the CUDA context.

The constants are read off vLLM's code and published startup logs; ``docs/accuracy/llm.md``
grades :func:`vllm_pool` against the logs of ``data/reference_vllm_kv.csv``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import specs
from ..errors import ParameterError
from ..search import largest_passing
from ..units import GIB, MIB
from .architecture import LLM, _kv_bytes
from .models import weights_format

#: Share of a card's memory CUDA reports as its total (``torch.cuda.mem_get_info``): an H100 or
#: A100 of 80 GB reports 79.18-79.22 GiB in the published vLLM logs (``total_gpu_memory``).
CUDA_VISIBLE_SHARE = 0.99
#: Share of a GDDR data-centre card's memory its ECC (on by default) leaves usable: one sixteenth
#: holds the check bits (an L4's 24 GB shows 23,034 MiB in nvidia-smi, an L40S's 48 GB 46,068 MiB).
GDDR_ECC_SHARE = 15 / 16
#: vLLM's default ``gpu_memory_utilization``.
VLLM_GPU_MEMORY_UTILIZATION = 0.9
#: TensorRT-LLM's default ``free_gpu_memory_fraction`` (``KvCacheConfig``).
TRTLLM_FREE_GPU_MEMORY_FRACTION = 0.9
#: CUDA graphs, from the vLLM versions that subtract them before sizing the pool (0.20 on, where
#: ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` defaults to 1; earlier ones capture them after, from
#: the share left over): graph capture took 0.5 to 1.6 GiB in the 0.19 logs, 0.9 for Llama 3.1 8B.
CUDA_GRAPH_BYTES = 1.0 * GIB
#: vLLM's KV block (tokens a page holds).
VLLM_BLOCK_SIZE = 16


@dataclass(frozen=True)
class VllmVersion:
    """How a vLLM release sizes its pool, as its startup logs show it.

    * ``sampler_copies``: copies of the sampler's float32 logits (``max_num_seqs`` x vocabulary) at
      the peak of the profiling step (the logits, softmax, the sort's values and indices, masks);
    * ``non_torch``: memory outside PyTorch's allocator on one GPU, and on each GPU of a tensor-
      parallel group over NVLink (custom all-reduce buffers) or PCIe (NCCL's);
    * ``counts_cuda_graphs``: whether the CUDA graphs' memory is subtracted before the pool;
    * ``large``/``other``: ``vllm serve``'s (``max_num_batched_tokens``, ``max_num_seqs``) on a GPU
      of 70 GiB or more other than an A100, and on the rest."""

    name: str
    sampler_copies: float
    non_torch: float
    non_torch_nvlink: float
    non_torch_pcie: float
    counts_cuda_graphs: bool = False
    large: tuple[int, int] = (8192, 1024)
    other: tuple[int, int] = (2048, 256)

    def non_torch_bytes(self, link: str) -> float:
        """Memory outside PyTorch's allocator on each GPU: alone (``link`` empty), or in a
        tensor-parallel group over ``nvlink`` or ``pcie``."""
        return {"": self.non_torch, "nvlink": self.non_torch_nvlink, "pcie": self.non_torch_pcie}[link]


#: The releases the pool model knows, oldest first, each read off its published startup logs
#: (``data/reference_vllm_kv.csv``); the last is the current profile's.
VLLM_VERSIONS = (
    # 0.10-0.11: "peak activation" 4.76 GiB (Llama 3.1 8B), 5.56 (Qwen3 0.6B), 5.64 (Qwen3 32B),
    # 7.38 (gpt-oss) at 1024 sequences on an H100: 9.6-9.7 logit copies; non-torch 0.13-0.14 GiB,
    # 0.54-0.55 at TP 2 over NVLink
    VllmVersion(
        "0.10",
        sampler_copies=9.7,
        non_torch=0.14 * GIB,
        non_torch_nvlink=0.55 * GIB,
        non_torch_pcie=0.21 * GIB,
    ),
    # 0.19: "torch peak memory increase" 1.89 GiB (Llama 3.1 8B), 3.99 (Gemma 3 27B), 3.19 (Llama 4
    # Scout): 3.9-4.0 copies; "non-torch forward increase" 0.25-0.26 GiB, 2.07-2.17 at TP 2 and 4
    VllmVersion(
        "0.19", sampler_copies=4.0, non_torch=0.25 * GIB, non_torch_nvlink=2.1 * GIB, non_torch_pcie=2.1 * GIB
    ),
    # 0.20 on: as 0.19, with the CUDA graphs' estimate subtracted first
    VllmVersion(
        "0.20",
        sampler_copies=4.0,
        non_torch=0.25 * GIB,
        non_torch_nvlink=2.1 * GIB,
        non_torch_pcie=2.1 * GIB,
        counts_cuda_graphs=True,
    ),
)


def vllm_version(version: str | None = None) -> VllmVersion:
    """The :class:`VllmVersion` of a release such as ``"0.10.2"`` (the newest known at or before it);
    the current profile's when None."""
    if version is None:
        return VLLM_VERSIONS[-1]
    try:
        key = tuple(int(x) for x in str(version).split(".")[:2])
    except ValueError:
        raise ParameterError(f"vLLM version {version!r}: give it as 0.11 or 0.11.2") from None
    if key < (0, 10):
        raise ParameterError(
            f"vLLM {version} sizes its pool by rules the kit does not model; give 0.10 or later"
        )
    known = [v for v in VLLM_VERSIONS if tuple(int(x) for x in v.name.split(".")) <= key]
    return known[-1]


def visible_bytes(row) -> float:
    """Memory CUDA reports on one GPU of a catalogue row: the datasheet's, less ECC's share on a GDDR
    data-centre card, at :data:`CUDA_VISIBLE_SHARE`."""
    if specs.shared_memory(row) and row.get("vendor") != "NVIDIA":
        return float(specs.gpu_memory_bytes(row))  # macOS's working set, or AMD's graphics memory
    nominal = specs.memory_bytes(row["memory_gb"])
    ecc = str(row.get("memory_type", "")).upper().startswith("GDDR") and row.get("segment") == "datacenter"
    return nominal * (GDDR_ECC_SHARE if ecc else 1.0) * CUDA_VISIBLE_SHARE


def check_utilization(value: float) -> float:
    """``value`` as a share of a GPU's memory, refused unless above 0 and at most 1."""
    try:
        u = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"GPU memory utilization {value!r}: give a share such as 0.9") from None
    if not 0 < u <= 1:
        raise ParameterError(
            f"GPU memory utilization {value!r} must be above 0 and at most 1 (vLLM's default is 0.9)"
        )
    return u


def _token_width(model: LLM, gpus: int) -> float:
    """Elements one token's forward pass holds at its widest layer on one GPU: the residual and the
    normed hidden state, Q/K/V, the attention output, the gated FFN's gate-up output and product."""
    return (
        2 * model.hidden
        + (model.q_dim + 2 * model.kv_dim + model.value_dim + 3 * model.peak_ffn_width()) / gpus
    )


def profile_peak_bytes(
    model: LLM, max_num_batched_tokens: int, max_num_seqs: int, gpus: int = 1, version: str | None = None
) -> float:
    """Peak of vLLM's profiling step on one GPU: a forward pass of ``max_num_batched_tokens`` tokens
    in 16 bits, or the sampler's float32 logits over ``max_num_seqs`` sequences (the version's
    ``sampler_copies`` of them), whichever is higher."""
    forward = max_num_batched_tokens * _token_width(model, gpus) * 2
    sampler = vllm_version(version).sampler_copies * max_num_seqs * model.vocab * 4
    return max(forward, sampler)


def _link(row, gpus: int) -> str:
    if gpus == 1:
        return ""
    return "nvlink" if float(row.get("nvlink_gbs") or 0) > 0 and row.get("form_factor") != "PCIe" else "pcie"


def _local_need(model: LLM, context: int, step_tokens: int, block: int) -> int:
    """Tokens a local layer keeps for one sequence: its window less one plus a step's tokens, in
    whole blocks and one more (vLLM's sliding-window and chunked-local specs), at most the context."""
    return (math.ceil(min(model.local_window - 1 + step_tokens, context) / block) + 1) * block


def sequence_token_layers(model: LLM, context: int, step_tokens: int, block: int = VLLM_BLOCK_SIZE) -> int:
    """Token-layers of the pool one sequence of ``context`` tokens reserves in vLLM: every global
    layer the whole context in blocks, every local layer its window and a step's tokens."""
    full = math.ceil(context / block) * block
    local = _local_need(model, context, step_tokens, block) if model.local_layers else 0
    return model.global_layers * full + model.local_layers * min(local, full)


def vllm_pool(
    model: LLM,
    row,
    weights: str,
    gpus: int = 1,
    kv: str = "f16",
    context: int | None = None,
    gpu_memory_utilization: float = VLLM_GPU_MEMORY_UTILIZATION,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    version: str | None = None,
    block_size: int = VLLM_BLOCK_SIZE,
    total_bytes: float | None = None,
) -> dict:
    """vLLM's KV pool on each of ``gpus`` tensor-parallel GPUs of a catalogue ``row`` serving
    ``model`` in ``weights``, and what it holds: ``kv_cache_tokens`` (vLLM's "GPU KV cache size")
    and ``max_concurrency`` (sequences of ``context`` tokens, vLLM's "Maximum concurrency";
    default ``max_model_len``: the model's limit). ``total_bytes`` overrides the memory CUDA
    reports (:func:`visible_bytes`)."""
    u = check_utilization(gpu_memory_utilization)
    v = vllm_version(version)
    context = model.max_context if context is None else context
    total = visible_bytes(row) if total_bytes is None else total_bytes
    large = total >= 70 * GIB and "A100" not in str(row["gpu"]).upper()
    default_tokens, default_seqs = v.large if large else v.other
    tokens = max_num_batched_tokens or default_tokens
    seqs = max_num_seqs or default_seqs
    weight_bytes = model.weight_bytes(weights_format(weights).bits_per_weight) / gpus
    peak = profile_peak_bytes(model, tokens, seqs, gpus, v.name)
    non_torch = v.non_torch_bytes(_link(row, gpus))
    graphs = CUDA_GRAPH_BYTES if v.counts_cuda_graphs else 0.0
    pool = u * total - weight_bytes - peak - non_torch - graphs
    per_token_layer = model.kv_elements_per_layer() * _kv_bytes(kv) * model.kv_share(gpus)
    blocks = max(0, math.floor(pool / (per_token_layer * block_size * model.layers))) if pool > 0 else 0
    held = blocks * block_size
    need = sequence_token_layers(model, context, tokens, block_size)
    return {
        "total_bytes": total,
        "budget_bytes": u * total,
        "weights_bytes": weight_bytes,
        "activation_bytes": peak,
        "non_torch_bytes": non_torch,
        "cuda_graph_bytes": graphs,
        "pool_bytes": max(pool, 0.0),
        "kv_cache_tokens": held,
        "max_concurrency": held * model.layers / need if need else 0.0,
        "max_num_batched_tokens": tokens,
        "max_num_seqs": seqs,
        "context": context,
    }


def trtllm_pool(
    model: LLM,
    row,
    weights: str,
    gpus: int = 1,
    kv: str = "f16",
    context: int | None = None,
    free_gpu_memory_fraction: float = TRTLLM_FREE_GPU_MEMORY_FRACTION,
    max_num_tokens: int = 8192,
) -> dict:
    """TensorRT-LLM's KV pool on each GPU: ``free_gpu_memory_fraction`` of the memory free after the
    weights, the activations' workspace for ``max_num_tokens`` and the runtime (CUDA context,
    cuBLAS workspaces), and the sequences of ``context`` tokens it holds."""
    f = check_utilization(free_gpu_memory_fraction)
    context = model.max_context if context is None else context
    total = visible_bytes(row)
    weight_bytes = model.weight_bytes(weights_format(weights).bits_per_weight) / gpus
    workspace = max_num_tokens * _token_width(model, gpus) * 2
    # its runtime outside the allocators (cuBLAS workspaces, NCCL) taken as the current vLLM's: no
    # published TensorRT-LLM log here states it
    runtime = vllm_version().non_torch_bytes(_link(row, gpus))
    free = total - weight_bytes - workspace - runtime
    pool = max(free * f, 0.0)
    per_token = model.kv_bytes_per_token(kv) * model.kv_share(gpus)
    per_sequence = model.kv_cache_bytes(context, kv, gpus)
    return {
        "total_bytes": total,
        "budget_bytes": total,
        "weights_bytes": weight_bytes,
        "activation_bytes": workspace,
        "non_torch_bytes": runtime,
        "cuda_graph_bytes": 0.0,
        "pool_bytes": pool,
        "kv_cache_tokens": math.floor(pool / per_token),
        "max_concurrency": pool / per_sequence if per_sequence else 0.0,
        "max_num_batched_tokens": max_num_tokens,
        "max_num_seqs": None,
        "context": context,
    }


#: llama.cpp's micro-batch (``n_ubatch``): its compute buffer is sized for this many tokens.
LLAMA_CPP_UBATCH = 512
#: The CUDA context and cuBLAS workspace a llama.cpp process holds besides its buffers.
LLAMA_CPP_RUNTIME_BYTES = 300 * MIB


def llamacpp_memory(model: LLM, weights: str, n_ctx: int, kv: str = "f16", gpus: int = 1) -> dict:
    """What llama.cpp allocates on each of ``gpus`` GPUs (a layer split): the weights, the cache of
    ``n_ctx`` tokens (local layers keep their window and a micro-batch), the compute buffer of one
    micro-batch (its widest layer in float32 and the output logits) and the runtime."""
    weight_bytes = model.weight_bytes(weights_format(weights).bits_per_weight) / gpus
    local = min(n_ctx, model.local_window + LLAMA_CPP_UBATCH) if model.local_layers else 0
    token_layers = model.global_layers * n_ctx + model.local_layers * local
    kv_bytes = token_layers * model.kv_elements_per_layer() * _kv_bytes(kv) / gpus
    compute = LLAMA_CPP_UBATCH * (_token_width(model, 1) * 4 + model.vocab * 4)
    total = weight_bytes + kv_bytes + compute + LLAMA_CPP_RUNTIME_BYTES
    return {
        "weights_bytes": weight_bytes,
        "kv_cache_bytes": kv_bytes,
        "activation_bytes": compute,
        "non_torch_bytes": LLAMA_CPP_RUNTIME_BYTES,
        "total_bytes": total,
        "kv_cache_tokens": n_ctx,
    }


#: Engines whose KV pool is sized from what is left of the card (vLLM, TensorRT-LLM); llama.cpp
#: allocates the cache of the context it is given.
POOL_ENGINES = ("vllm", "trt-llm")
#: The most sequences a search for the largest batch tries.
MAX_SEQUENCES = 4096


def engine_memory(
    model: LLM,
    row,
    weights: str,
    engine: str,
    gpus: int = 1,
    kv: str = "f16",
    context: int = 4096,
    batch: int = 1,
    gpu_memory_utilization: float | None = None,
    with_max_batch: bool = True,
) -> dict:
    """Memory on each of ``gpus`` GPUs as ``engine`` (a name of :data:`gpukit.llm.ENGINES`) takes it
    to serve ``batch`` sequences of ``context`` tokens: whether they fit, what it holds
    (``total_bytes``: vLLM and TensorRT-LLM take their share of the card whatever the batch),
    the weights and one sequence's cache on each GPU, the pool, the tokens it holds
    (``kv_cache_tokens``) and the sequences of ``context`` it holds (``max_concurrency``; the
    largest batch ``max_batch`` under the scheduler's cap; for llama.cpp searched, and left 0 without
    ``with_max_batch``)."""
    name = engine
    if name == "vllm":
        util = VLLM_GPU_MEMORY_UTILIZATION if gpu_memory_utilization is None else gpu_memory_utilization
        p = vllm_pool(model, row, weights, gpus, kv, context, util)
        cap = p["max_num_seqs"]
        total = p["budget_bytes"]
    elif name == "trt-llm":
        frac = TRTLLM_FREE_GPU_MEMORY_FRACTION if gpu_memory_utilization is None else gpu_memory_utilization
        p = trtllm_pool(model, row, weights, gpus, kv, context, frac)
        cap = MAX_SEQUENCES
        total = p["weights_bytes"] + p["activation_bytes"] + p["non_torch_bytes"] + p["pool_bytes"]
    else:
        if gpu_memory_utilization is not None:
            raise ParameterError(
                "--gpu-memory-utilization is a vLLM and TensorRT-LLM setting; llama.cpp takes what its context needs"
            )
        visible = visible_bytes(row)

        def fits(b: int) -> bool:
            return llamacpp_memory(model, weights, b * context, kv, gpus)["total_bytes"] <= visible

        held = llamacpp_memory(model, weights, batch * context, kv, gpus)
        most = largest_passing(fits, 1, MAX_SEQUENCES) if with_max_batch else 0
        return {
            "fits": bool(held["total_bytes"] <= visible),
            "total_bytes": held["total_bytes"],
            "weights_bytes": held["weights_bytes"],
            "kv_cache_bytes": held["kv_cache_bytes"] / batch,
            "pool_bytes": held["kv_cache_bytes"],
            "kv_cache_tokens": batch * context,
            "max_concurrency": float(most),
            "max_batch": most,
        }
    per_sequence = model.kv_cache_bytes(context, kv, gpus)
    concurrency = p["max_concurrency"]
    return {
        "fits": bool(concurrency >= batch),
        "total_bytes": total,
        "weights_bytes": p["weights_bytes"],
        "kv_cache_bytes": per_sequence,
        "pool_bytes": p["pool_bytes"],
        "kv_cache_tokens": p["kv_cache_tokens"],
        "max_concurrency": concurrency,
        "max_batch": int(min(math.floor(concurrency), cap)),
    }


def gpus_needed(
    model: LLM,
    row,
    weights: str,
    engine: str,
    kv: str = "f16",
    context: int = 4096,
    batch: int = 1,
    gpu_memory_utilization: float | None = None,
    split: str = "tensor",
    limit: int = 64,
) -> int | None:
    """The fewest GPUs of this kind (1, 2, 4, ...) ``engine`` serves ``batch`` sequences of
    ``context`` on (:func:`engine_memory`); a tensor split needs the heads to split evenly. None
    where ``limit`` do not."""
    n = 1
    while n <= limit:
        if split != "tensor" or model.splits_over(n):
            m = engine_memory(
                model, row, weights, engine, n, kv, context, batch, gpu_memory_utilization, False
            )
            if m["fits"]:
                return n
        n *= 2
    return None
