"""Predicted prefill and decode speeds of an LLM on a GPU (:func:`speeds`), through the catalogue's
peaks and the roofline's rules: a prompt's micro-batches as waves of tensor-core tiles plus the
memory traffic between the matrix multiplies, a decode step as the weights and key-value cache
streamed once plus a fixed cost per kernel, and several GPUs sharing a model by tensor or by layer
(a layer split's prompt pipelined as llama.cpp's scheduler runs it)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import precision as prec
from .. import specs
from ..errors import ParameterError
from ..perfmodel import interconnect
from ..perfmodel.scaling import default_link
from ..specs.bandwidth_rates import streaming_gbs
from ..specs.matmul_rates import tensor_share
from ..units import missing
from .engines import (
    CONVERT_BYTES,
    GEMV_BYTES_PER_SM_CYCLE,
    LAYER_HOP_S,
    MMQ_COMPUTE_CAPABILITY,
    PROMPT_BATCH,
    PROMPT_CHUNK,
    SCALAR_BYTES_PER_SM_S,
    SCHED_COPIES,
    SCORE_BYTES,
    SPLITS,
    Engine,
    check_engine_device,
    default_efficiency,
    resolve_engine,
)
from .models import LLM, Weights, _check_positive, weights_format

#: CUDA-core operations per weight to unpack and scale a quantised weight during a matrix-vector
#: product (shift, mask, scale, offset and the multiply-add it feeds).
DEQUANT_OPS = 6
#: Latency of one all-reduce of a small message (one token's hidden state) between GPUs.
ALLREDUCE_LATENCY_S = {"nvlink": 8e-6, "pcie": 20e-6, "host": 40e-6}

#: Output tile a tensor-core GEMM kernel gives each SM (rows x columns of the result; cuBLAS's
#: common 128 x 128 tile): a matrix multiply runs in waves of one tile per SM, and the last wave
#: leaves SMs idle (wave quantisation), which at a prompt chunk's 512 columns costs a large GPU
#: a share of its peak that a smaller one does not lose.
GEMM_TILE = (128, 128)


def _gpu_row(gpu, catalogue: pd.DataFrame | None):
    """A catalogue row as it is, or the row of a GPU record or natural name."""
    if isinstance(gpu, (pd.Series, dict)):
        return gpu
    return specs.gpu(gpu, catalogue).row


def _compute_precision(weights: str) -> str:
    """The math a format's matrix multiplies run at: FP8 and FP4 weights on their own tensor cores
    (activations quantised to match, as TensorRT-LLM and vLLM run them), quantised formats unpacked to FP16, and
    ``int8`` (LLM.int8()) is taken at the FP16 rate too, not the catalogue's INT8 tensor rate: its
    outlier columns multiply in FP16 and its activations are quantised on the fly, and no published
    int8 speed grades a faster rule."""
    key = weights.strip().lower()
    return {"bf16": "bf16", "f32": "float32", "fp8": "fp8", "fp4": "fp4"}.get(key, "fp16")


def wave_utilization(rows: int, cols: int, sms: int, tile: tuple[int, int] = GEMM_TILE) -> float:
    """Share of ``sms`` SMs a (rows x cols) result keeps busy over its waves of tiles."""
    tiles = math.ceil(rows / tile[0]) * math.ceil(cols / tile[1])
    return tiles / (math.ceil(tiles / sms) * sms)


def layer_stages(layers: int, gpus: int) -> list[int]:
    """Layers each of ``gpus`` GPUs holds in llama.cpp's layer split (``llm_load_tensors`` at build
    2824, GPUs of equal memory, every layer offloaded): split points at k/n of the layers plus the
    output layer, layer i on the first GPU whose point lies above i / (layers + 1), in float32 as
    there. The first GPU gets the extra layer, the last the output layer: 8B on four GPUs 9, 8, 8
    and 7 layers, as the KV-cache buffers of a published run's log show (288, 256, 256 and 224 MiB)."""
    points = np.cumsum(np.ones(gpus, dtype=np.float32)) / np.float32(gpus)
    where = np.searchsorted(
        points, np.arange(layers, dtype=np.float32) / np.float32(layers + 1), side="right"
    )
    return np.bincount(np.minimum(where, gpus - 1), minlength=gpus).tolist()


def pipeline_makespan(stage_s: Sequence[float], microbatches: int, copies: int = SCHED_COPIES) -> float:
    """Seconds until the last of ``microbatches`` leaves a layer split's last GPU, each GPU taking
    ``stage_s`` (its layers and its hand-off to the next). As llama.cpp's scheduler runs it
    (``ggml_backend_sched_compute_splits``): a GPU works through micro-batches in order, each after
    the previous GPU is done with it; the host launches GPU after GPU, micro-batch after
    micro-batch, and before it copies a micro-batch's inputs (the mask, the positions) to a GPU it
    waits until that GPU finished the micro-batch ``copies`` earlier, which used the same input
    buffers. With more GPUs than copies that wait, not the GPUs, paces the pipeline."""
    done: list[list[float]] = []
    host = 0.0
    for j in range(microbatches):
        row: list[float] = []
        for s, t in enumerate(stage_s):
            if j >= copies:
                host = max(host, done[j - copies][s])
            row.append(max(host, done[j - 1][s] if j else 0.0, row[s - 1] if s else 0.0) + t)
        done.append(row)
    return done[-1][-1]


def layer_hop_s(model: LLM, row, gpus: int, tokens: int, engine: str | Engine = "llama.cpp") -> float:
    """Seconds to hand ``tokens`` tokens' hidden states from one GPU of a layer split to the next:
    :data:`LAYER_HOP_S`, plus their bytes over PCIe through host memory (llama.cpp copies between
    devices without peer access, which it enables only for row-split weights)."""
    _, host_gbs = interconnect(row, gpus, "host")
    return LAYER_HOP_S + tokens * model.hidden * resolve_engine(engine).activation_bytes / (host_gbs * 1e9)


def attention_window(
    prompt: int, engine: str | Engine = "llama.cpp-2024", chunk: int = PROMPT_CHUNK
) -> float:
    """Mean key-value positions a prompt token's attention covers. llama.cpp without flash attention
    multiplies each ``chunk``'s queries by the whole cache filled so far (``kv_self.n``: the cells in
    use, padded to 256) and masks the rest; flash attention skips the masked half."""
    if resolve_engine(engine).flash_attention:
        return prompt / 2
    total = 0
    for start in range(0, prompt, chunk):
        end = min(start + chunk, prompt)
        total += (end - start) * math.ceil(end / 256) * 256
    return total / prompt


def prefill_traffic_bytes(model: LLM, engine: str | Engine = "llama.cpp-2024", window: float = 0.0) -> float:
    """Bytes of memory traffic per prompt token outside the matrix multiplies, over every layer.

    Elementwise passes over the activations (each element read or written once, at the engine's
    activation size): two RMS norms and their weight multiply, rotary embedding of Q and K, two
    residual adds, the gated FFN's SiLU and product, merging the heads. Where the engine keeps
    float32 activations (llama.cpp), each matrix multiply's input is converted to FP16 and its
    output back, and the new keys and values are converted into the FP16 cache; without flash
    attention, ``window`` scores per head go through memory (:data:`SCORE_BYTES`)."""
    e = resolve_engine(engine)
    h, q, kv, fx = model.hidden, model.q_dim, model.kv_dim, model.ffn_width()
    passes = 8 * h + 2 * (q + kv) + 6 * h + 5 * fx + 2 * q
    converts = 0
    if e.converts:
        # Q/K/V, output projection, Q into Q.K^T, gate/up/down (h and f per expert a token reaches)
        x = fx / model.ffn
        inputs = 3 * h + q + q + 2 * h * x + fx
        outputs = q + 2 * kv + h + q + 2 * fx + h * x  # the same multiplies' results, and P.V's
        converts = inputs + outputs + 2 * kv  # and the new keys and values into the cache
    scores = 0 if e.flash_attention else model.heads * window * SCORE_BYTES
    return model.layers * (passes * e.activation_bytes + converts * CONVERT_BYTES + scores)


def gemv_rate(row, bytes_per_sm_cycle: float = GEMV_BYTES_PER_SM_CYCLE) -> float:
    """Bytes per second llama.cpp's matrix-vector products stream on a GPU at batch 1, before the
    streaming bandwidth caps them: SMs x boost clock x ``bytes_per_sm_cycle`` (an engine's
    ``gemv_bytes_per_sm_cycle``; by default build 2824's, :data:`GEMV_BYTES_PER_SM_CYCLE`)."""
    return specs.sm_count(row) * float(row["boost_clock_mhz"]) * 1e6 * bytes_per_sm_cycle


@dataclass(frozen=True)
class _GpuRates:
    """What one GPU's kernels reach per second as the LLM model takes them: ``peak`` tensor-core FLOPs
    at the weights' math, ``cuda`` CUDA-core FLOPs, ``stream`` bytes of a streaming kernel,
    ``bandwidth`` bytes of decode's matrix-vector products, ``elementwise`` bytes of the prompt's
    kernels other than tiled matrix multiplies, ``int8`` int8 tensor-core operations (0 where the
    engine's quantised prompts do not run on them); and its ``sms``."""

    peak: float
    cuda: float
    sms: int
    stream: float
    bandwidth: float
    elementwise: float
    int8: float = 0.0


def _mmq_rate(row, weights: str, e: Engine, eff) -> float:
    """Int8 tensor-core operations per second a quantised prompt's MMQ kernels reach on ``row``:
    the datasheet's int8 rate at the share of it the GPU sustains in a large multiply and the
    engine's ``mmq_tensor_share``; 0 where the engine unpacks instead, for formats it does not
    unpack, and on GPUs before :data:`MMQ_COMPUTE_CAPABILITY` (which go to cuBLAS)."""
    if e.quantised_prefill != "mmq" or not weights_format(weights).dequantized:
        return 0.0
    cc = row.get("compute_capability")
    if cc is None or cc != cc or float(cc) < MMQ_COMPUTE_CAPABILITY or pd.isna(row.get("int8_tensor_tops")):
        return 0.0
    share = tensor_share(row)[0] if eff.sustained else 1.0
    return float(row["int8_tensor_tops"]) * 1e12 * share * e.mmq_tensor_share


def _gpu_rates(row, weights: str, e: Engine, eff) -> _GpuRates:
    """:class:`_GpuRates` of a catalogue row serving ``weights`` with ``engine``, at the roofline's factors
    ``eff``; raises :class:`gpukit.precision.Unsupported` where the GPU cannot run the weights' math.
    A bandwidth-only profile streams at its share of the datasheet bandwidth, with no compute bound."""
    if e.bandwidth_only:
        bw = float(row["memory_bandwidth_gbs"]) * 1e9 * e.stream_share
        cores = specs.sm_count(row)
        unpack = cores * e.core_ops_per_s if e.core_ops_per_s else math.inf
        return _GpuRates(math.inf, unpack, cores, bw, bw, bw)
    if specs.states_no_tensor_peak(row):
        peak = math.inf  # no compute bound to decode, and no prompt speed (speeds says so)
    else:
        math_label, peak_tflops = prec.math_unit(row, _compute_precision(weights), True)
        if e.accumulate == "fp16" and math_label.startswith("FP16"):
            peak_tflops = prec.fp16_accumulate_tflops(row) or peak_tflops
        peak = peak_tflops * 1e12 * eff.tensor * (tensor_share(row)[0] if eff.sustained else 1.0)
    fp32 = row.get("fp32_tflops")
    cuda = math.inf if missing(fp32) else float(fp32) * 1e12 * eff.cuda
    sms = specs.sm_count(row)
    # a streaming kernel's rate: the datasheet at the share published copies measured (gpukit.specs.bandwidth_rates;
    # by default the measured GPUs' median, default_efficiency says why)
    stream = streaming_gbs(row, eff.measured_bandwidth) * 1e9 * eff.stream
    # what decode's matrix-vector products reach: llama.cpp's at the per-SM rate (GEMV_BYTES_PER_SM_CYCLE at
    # the boost clock), a PyTorch engine's at the streaming rate
    per_sm = e.gemv_bytes_per_sm_cycle
    bandwidth = min(stream, gemv_rate(row, per_sm)) if per_sm else stream
    # what the prompt's kernels other than tiled matrix multiplies reach
    elementwise = min(stream, sms * SCALAR_BYTES_PER_SM_S) if e.scalar_kernels else stream
    return _GpuRates(peak, cuda, sms, stream, bandwidth, elementwise, _mmq_rate(row, weights, e, eff))


def _micro_batch_s(
    model: LLM, w: Weights, rates: _GpuRates, prompt: int, ubatch: int, nbatch: int, e: Engine
) -> float:
    """Seconds one micro-batch of a ``prompt``-token prompt (``ubatch`` tokens, or the whole prompt if
    shorter; passes of ``nbatch``) takes through every layer on one GPU. On the unpacking path a
    quantised format is first unpacked to FP16 (read the packed weights of every expert a
    micro-batch routes to, write FP16 ones), then each matrix multiply reads its FP16 weights once
    and runs on the tensor cores. On llama.cpp's MMQ path (``rates.int8``) the packed weights
    multiply on the int8 tensor cores, each weight unpacked and rescaled on the CUDA cores once per
    column tile of the result. The activations' elementwise kernels, conversions and attention
    scores stream through memory; the output head multiplies only the prompt's last token (one
    matrix-vector product per pass)."""
    chunk = min(ubatch, prompt)
    layer_weights = model.layers * model.layer_params()
    if rates.int8:
        tiles = math.ceil(chunk / GEMM_TILE[1])
        unpack_s = layer_weights * tiles * e.mmq_ops_per_weight / rates.cuda
        rate, weight_bytes = rates.int8, w.bits_per_weight / 8
    else:
        unpack_s = layer_weights * (w.bits_per_weight / 8 + 2) / rates.elementwise if w.dequantized else 0.0
        rate, weight_bytes = rates.peak, 2
    layers_s = sum(
        n * 2 * o * i * chunk / (rate * wave_utilization(o, chunk, rates.sms)) for o, i, n in model.matmuls()
    )
    window = attention_window(prompt, e, ubatch)
    matmul_s = layers_s + chunk * model.attention_flops(window) / rates.peak
    read_s = model.layers * model.layer_params(model.experts_per_token) * weight_bytes / rates.stream
    traffic_s = chunk * prefill_traffic_bytes(model, e, window) / rates.elementwise
    head_s = model.vocab * model.hidden * w.bits_per_weight / 8 / rates.bandwidth / min(prompt, nbatch)
    return unpack_s + max(matmul_s, read_s) + traffic_s + head_s * chunk


def _decode_terms(
    model: LLM, w: Weights, rates: _GpuRates, context: int, batch: int, kv: str, n: int, kv_share: float = 1.0
) -> dict[str, float]:
    """Seconds of a decode step (one token for each of ``batch`` sequences at ``context`` tokens), its
    work divided over ``n`` GPUs, by what bounds it: reading every active weight and the whole
    key-value cache (``memory``), the multiplies (``compute``) and unpacking a quantised format on
    the CUDA cores (``dequantization``)."""
    active = model.active_params()
    # a step reads the experts its tokens reach (a mixture's whole weights, nearly, at a large batch),
    # and the cache each layer keeps (a local layer its window)
    weight_bytes = model.active_weight_bytes(w.bits_per_weight, experts_touched(model, batch))
    kv_bytes = batch * model.kv_cache_bytes(context, kv)
    return {
        "memory": (weight_bytes + kv_bytes / kv_share) / (rates.bandwidth * n),
        "compute": batch * (2 * active + model.attention_flops(context)) / (rates.peak * n),
        "dequantization": active * DEQUANT_OPS / (rates.cuda * n) if w.dequantized else 0.0,
    }


def _communication(
    model: LLM,
    row,
    n: int,
    split: str,
    link: str | None,
    tokens: int = 1,
    activation_bytes: int = 2,
    link_share: float = 1.0,
) -> tuple[float, str]:
    """Seconds a step of ``tokens`` tokens spends passing the hidden state between ``n`` GPUs, and the
    link's name: tensor parallel all-reduces it twice per layer, each all-reduce a latency plus its
    bytes over the link (a ring moves 2(n-1)/n of them through each GPU); a layer split hands it on
    once per GPU boundary."""
    if n == 1:
        return 0.0, ""
    kind = default_link(row) if link is None else link
    link_name, link_gbs = interconnect(row, n, kind)
    if split != "tensor":
        return (n - 1) * LAYER_HOP_S, link_name
    moved = tokens * model.hidden * activation_bytes * 2 * (n - 1) / n
    return 2 * model.layers * (ALLREDUCE_LATENCY_S[kind] + moved / (link_gbs * 1e9 * link_share)), link_name


def experts_touched(model: LLM, tokens: int) -> float:
    """Experts of a layer that ``tokens`` tokens routed independently reach on average: each token
    picks ``experts_per_token`` of ``experts``, so a batch reads more of a mixture's weights than one
    token does (all of them, nearly, at a large batch); ``experts_per_token`` for a dense model."""
    e, k = model.experts, model.experts_per_token
    if e == 1:
        return 1.0
    return e * (1 - (1 - k / e) ** max(1, tokens))


def _micro_batches(prompt: int, ubatch: int, nbatch: int, e: Engine) -> int:
    """Micro-batches of the prompt one pipeline runs: all of them where the engine's pipeline runs on
    from one pass into the next, else one pass's."""
    m = math.ceil(prompt / ubatch)
    if not e.pipeline_across_passes:
        m = min(m, nbatch // ubatch)
    return m


def _prefill_token_s(
    model: LLM, row, one_s: float, chunk: int, m: int, n: int, split: str, comm_s: float, e: Engine
) -> float:
    """Seconds per prompt token on ``n`` GPUs, a micro-batch of ``chunk`` tokens taking ``one_s`` on
    one and the prompt ``m`` micro-batches: tensor parallel divides each micro-batch n ways; a layer
    split runs the layers one GPU after another, and a prompt of several micro-batches keeps up to
    that many GPUs busy at once."""
    if n == 1:
        return one_s / chunk
    if split == "tensor":
        return (one_s / n + comm_s) / chunk
    copies = e.sched_copies
    if copies:
        # llama.cpp's scheduler: each GPU's layers as llama.cpp assigns them, each hand-off on the sending GPU's stream
        hop_s = layer_hop_s(model, row, n, chunk, e)
        stage_s = [
            k * one_s / model.layers + (hop_s if s < n - 1 else 0.0)
            for s, k in enumerate(layer_stages(model.layers, n))
        ]
        return pipeline_makespan(stage_s, m, copies) / (m * chunk)
    # m micro-batches through an n-stage pipeline take m + n - 1 stage times, not m x n
    return (one_s * (m + n - 1) / (m * n) + comm_s) / chunk


def speeds(
    model: LLM,
    gpu,
    weights: str = "f16",
    context: int = 4096,
    batch: int = 1,
    kv: str = "f16",
    gpus: int = 1,
    link: str | None = None,
    split: str | None = None,
    prompt: int | None = None,
    engine: str | Engine = "llama.cpp",
    efficiency=None,
    catalogue: pd.DataFrame | None = None,
    prompt_chunk: int = PROMPT_CHUNK,
    prompt_batch: int = PROMPT_BATCH,
    flash_attention: bool | None = None,
) -> dict:
    """Predicted prefill and decode tokens per second of ``model`` on ``gpus`` x ``gpu``; raises
    :class:`gpukit.precision.Unsupported` where the GPU cannot run the weights' math (BF16 on Volta).

    ``split`` says how several GPUs share the model: ``tensor`` parallel (each GPU holds a slice of
    every layer and works on every token; vLLM, TensorRT-LLM) or by ``layer`` (each GPU holds
    whole layers and the token passes from one to the next: llama.cpp's default), which adds
    memory but no speed to a decode step, and lets a prompt of several micro-batches fill a pipeline
    (llama.cpp's: :func:`layer_stages`, :func:`pipeline_makespan`).
    ``prompt``: the prompt's length, for the prefill rate (default: the context); ``prompt_chunk`` and
    ``prompt_batch``: its tokens per micro-batch and per pass (llama.cpp's ``n_ubatch`` and
    ``n_batch``; as llama.cpp does, a micro-batch is never larger than a pass).
    ``engine``: a profile of :data:`gpukit.llm.ENGINES` (or its name), ``flash_attention`` overriding
    its default where given."""
    e = resolve_engine(engine, flash_attention)
    split = e.split if split is None else split
    if split not in SPLITS:
        raise ParameterError(f"split {split!r}: use tensor or layer")
    eff = default_efficiency() if efficiency is None else efficiency
    row = _gpu_row(gpu, catalogue)
    check_engine_device(e, row)
    w = weights_format(weights)
    rates = _gpu_rates(row, weights, e, eff)
    n = _check_positive("gpus", gpus)
    prompt = context if prompt is None else _check_positive("prompt", prompt)
    nbatch = _check_positive("prompt_batch", prompt_batch)
    ubatch = min(_check_positive("prompt_chunk", prompt_chunk), nbatch)
    one_s = _micro_batch_s(model, w, rates, prompt, ubatch, nbatch, e)
    # tensor parallel divides every decode step's work n ways; a layer split runs the layers one GPU
    # after another
    decode = _decode_terms(
        model, w, rates, context, batch, kv, n if split == "tensor" else 1, e.kv_read_share
    )
    launch_s = model.layers * e.kernels_per_layer * e.launch_s
    comm_s, link_name = _communication(model, row, n, split, link, batch, link_share=e.link_share)
    chunk_comm_s, _ = _communication(model, row, n, split, link, min(ubatch, prompt), link_share=e.link_share)
    m = _micro_batches(prompt, ubatch, nbatch, e)
    prefill_s = _prefill_token_s(model, row, one_s, min(ubatch, prompt), m, n, split, chunk_comm_s, e)
    step = max(decode.values()) + launch_s + comm_s
    return {
        "gpu": row["gpu"],
        "gpus": n,
        "link": link_name,
        "prefill_tokens_per_s": math.nan if e.bandwidth_only or math.isinf(rates.peak) else 1 / prefill_s,
        "decode_tokens_per_s": batch / step,
        "decode_step_s": step,
        "decode_bound": max(decode, key=decode.get),
        "decode_fixed_share": (launch_s + comm_s) / step,
    }
