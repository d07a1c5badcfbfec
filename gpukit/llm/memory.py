"""How much GPU memory an LLM needs: to serve it (weights, key-value cache, one step's activations,
the runtime's reserve) and to fine-tune it (full, LoRA or QLoRA: weights, trainable state, the
activations the backward pass keeps, the logits), and how many GPUs of a kind hold it."""

from __future__ import annotations

from .. import specs
from ..errors import ParameterError
from ..memory import DEFAULT_RUNTIME_RESERVE_BYTES
from .engines import PROMPT_CHUNK
from .models import LLM, _check_positive, weights_format

#: What an LLM is sized for (``gpukit llm --mode``): serving it, or full, LoRA or QLoRA fine-tuning;
#: not the train/infer modes of the benchmark workloads (:data:`gpukit.models.MODES`).
LLM_MODES = ("infer", "full", "lora", "qlora")
#: The weights each fine-tuning mode trains on (serving takes the format it is given).
FINETUNE_WEIGHTS = {"full": "bf16 + fp32 master", "lora": "bf16", "qlora": "nf4"}

#: Bits per weight of QLoRA's frozen base: 4-bit NormalFloat plus double-quantised block scales
#: (Dettmers et al. 2023, "QLoRA", section 3: 0.127 bits per parameter of quantisation constants).
NF4_BITS = 4.127
#: Bytes per trainable parameter under mixed-precision AdamW: 16-bit weight and gradient, float32
#: master weight, first and second moment (Rajbhandari et al. 2020, "ZeRO", section 3.1: 16 bytes).
ADAM_MIXED_BYTES = 16
#: Matrices LoRA adapts by default (all of a layer's linear maps: "all"; attention only: "attention").
LORA_TARGETS = ("attention", "all")


def inference_memory(
    model: LLM,
    weights: str = "f16",
    context: int = 4096,
    batch: int = 1,
    kv: str = "f16",
    flash_attention: bool = True,
    reserve_bytes: int | None = None,
    gpus: int = 1,
    chunk_tokens: int | None = None,
    key_span: int | None = None,
) -> dict:
    """Bytes to serve ``model`` at ``context`` tokens for ``batch`` sequences (per GPU when the
    model is split over ``gpus`` by tensor parallelism: weights and KV heads split n ways).

    A prompt is processed ``chunk_tokens`` at a time (default :data:`PROMPT_CHUNK`, or the context
    if shorter), attending over ``key_span`` keys (default: the context, the last chunk's case)."""
    _check_positive("context", context)
    _check_positive("batch", batch)
    _check_positive("gpus", gpus)
    w = weights_format(weights)
    reserve = DEFAULT_RUNTIME_RESERVE_BYTES if reserve_bytes is None else reserve_bytes
    weight_bytes = model.weight_bytes(w.bits_per_weight) / gpus
    kv_bytes = batch * model.kv_cache_bytes(context, kv, gpus)
    chunk = (
        min(PROMPT_CHUNK, context) if chunk_tokens is None else _check_positive("chunk_tokens", chunk_tokens)
    )
    span = context if key_span is None else _check_positive("key_span", key_span)
    # one chunk's working set in float32: the residual stream and norm, Q/K/V, the attention output,
    # the gated FFN's three inner tensors, and the last position's logits per sequence
    width = 2 * model.hidden + model.q_dim + 2 * model.kv_dim + model.q_dim + 3 * model.peak_ffn_width()
    act = 4 * (chunk * width / gpus + batch * model.vocab)
    if not flash_attention:
        act += 4 * chunk * span * model.heads / gpus  # the chunk's attention scores over its keys
    total = weight_bytes + kv_bytes + act + reserve
    return {
        "weights_bytes": weight_bytes,
        "kv_cache_bytes": kv_bytes,
        "activation_bytes": act,
        "reserve_bytes": reserve,
        "total_bytes": total,
    }


def activation_bytes(
    model: LLM,
    batch: int,
    seq_len: int,
    checkpointing: bool = False,
    flash_attention: bool = True,
    bytes_per_element: int = 2,
) -> float:
    """Bytes the backward pass keeps for ``batch`` sequences of ``seq_len`` tokens of 16-bit training.

    Per layer and token a LLaMA-shaped block keeps: the attention norm's input and output, Q, K
    and V, the attention output (flash attention keeps no scores; without it the scores and the
    probabilities, heads x sequence each per token, are kept as well), the FFN norm's input and
    output, and the gated FFN's gate, up, activated gate and product (ffn each, times the experts
    a token uses). With checkpointing only each layer's input is kept, and one layer's full set
    while it is recomputed.
    """
    per_layer = 4 * model.hidden + 2 * model.q_dim + 2 * model.kv_dim + 4 * model.ffn_width()
    if not flash_attention:
        per_layer += 2 * model.heads * seq_len
    tokens = batch * seq_len
    full = per_layer * tokens * bytes_per_element
    if checkpointing:
        return model.layers * model.hidden * tokens * bytes_per_element + full
    return model.layers * full


def finetune_memory(
    model: LLM,
    mode: str = "lora",
    seq_len: int = 2048,
    batch: int = 1,
    lora_rank: int = 16,
    lora_targets: str = "all",
    checkpointing: bool = True,
    flash_attention: bool = True,
    reserve_bytes: int | None = None,
) -> dict:
    """Bytes to fine-tune ``model`` on one GPU: weights, trainable state, activations, logits.

    ``weights_bytes`` are the weights as the forward pass reads them (16-bit for full fine-tuning
    and LoRA, NF4 for QLoRA); ``optimizer_state_bytes`` what training adds per trainable parameter
    beyond them (for full fine-tuning the gradient, the float32 master copy and Adam's two moments;
    for LoRA the adapters' own weights as well). ``shardable_bytes`` (both together) is what
    ZeRO-3/FSDP spreads over several GPUs (:func:`finetune_gpus_needed`)."""
    if mode not in ("full", "lora", "qlora"):
        raise ParameterError(f"fine-tuning mode {mode!r}: use full, lora or qlora")
    if lora_targets not in LORA_TARGETS:
        raise ParameterError(f"LoRA targets {lora_targets!r}: use one of {', '.join(LORA_TARGETS)}")
    _check_positive("sequence length", seq_len)
    _check_positive("batch", batch)
    _check_positive("LoRA rank", lora_rank)
    reserve = DEFAULT_RUNTIME_RESERVE_BYTES if reserve_bytes is None else reserve_bytes
    p = model.params()
    if mode == "full":  # the 16-bit weight of each parameter is the model's weights; the rest is state
        trainable = p
        weights, state = 2.0 * p, trainable * (ADAM_MIXED_BYTES - 2)
    else:
        weights = p * (2 if mode == "lora" else NF4_BITS / 8)
        trainable = lora_params(model, lora_rank, lora_targets)
        state = trainable * ADAM_MIXED_BYTES
    tokens = batch * seq_len
    act = activation_bytes(model, batch, seq_len, checkpointing, flash_attention)
    logits = (
        tokens * model.vocab * (2 + 4 + 4)
    )  # 16-bit logits, their float32 copy for the loss, its gradient
    total = weights + state + act + logits + reserve
    return {
        "weights_bytes": weights,
        "trainable_params": trainable,
        "optimizer_state_bytes": state,
        "activation_bytes": act,
        "logits_bytes": logits,
        "reserve_bytes": reserve,
        "shardable_bytes": weights + state,
        "total_bytes": total,
    }


def finetune_gpus_needed(need: dict, gpu_row, limit: int = 64) -> int | None:
    """The fewest GPUs of this kind (1, 2, 4, 8, ...) a fine-tuning run of ``need`` (a
    :func:`finetune_memory` result) fits on with its weights, gradients and optimizer state
    sharded over all of them (ZeRO stage 3 / FSDP: Rajbhandari et al. 2020, section 5), each GPU
    still holding its own batch's activations, logits and runtime reserve."""
    rest = need["total_bytes"] - need["shardable_bytes"]
    n = 1
    while n <= limit:
        if fits(need["shardable_bytes"] / n + rest, gpu_row):
            return n
        n *= 2
    return None


def _unshardable_note(need: dict, gpu_row, batch: int, at_batch_one: int | None, limit: int = 64) -> str:
    """Why a fine-tuning run of ``need`` fits on no number of these GPUs up to ``limit``, sharded as
    :func:`finetune_gpus_needed` shards it, and what batch 1 needs (``at_batch_one`` GPUs, or none)."""
    if not fits(need["shardable_bytes"] / limit, gpu_row):
        why = f"weights, gradients and optimizer state alone, sharded over {limit}, exceed one"
    else:
        why = f"each keeps its own batch's activations, at batch {batch} more than one holds"
    if batch > 1 and at_batch_one:
        why += f"; at batch 1 it needs {at_batch_one}" if at_batch_one > 1 else "; batch 1 fits on one"
    return f"does not fit on {limit} of these GPUs, even sharded: {why}"


def lora_params(model: LLM, rank: int, targets: str = "all") -> int:
    """Adapter weights: rank x (inputs + outputs) per adapted matrix and layer."""
    mats = model.matmuls(model.experts)  # q, k, v, o, then every FFN matrix, with their counts
    chosen = mats if targets == "all" else mats[:4]
    return int(round(rank * sum(n * (o + i) for o, i, n in chosen)))


def fits(total_bytes: float, gpu_row) -> bool:
    return total_bytes <= specs.gpu_memory_bytes(gpu_row)


def gpus_needed(
    model: LLM, gpu_row, weights: str, context: int, batch: int, kv: str = "f16", limit: int = 64
) -> int | None:
    """The fewest GPUs of this kind (1, 2, 4, 8, ...) the model fits on by tensor parallelism."""
    n = 1
    while n <= limit:
        if n <= model.kv_heads and fits(
            inference_memory(model, weights, context, batch, kv, gpus=n)["total_bytes"], gpu_row
        ):
            return n
        n *= 2
    return None
