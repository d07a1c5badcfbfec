"""FLOP and byte counts of one step of each benchmark workload: pure functions of the workload's
parameters (no TensorFlow), so they are tested exactly.

FLOPs count a multiply-add as two. Bytes are the least device-memory traffic a step needs
(every operand read once, every result written once); for a whole model (the encoder, the
decoder) they are an estimate whose terms each function lists.
"""

from __future__ import annotations

import math

from ..errors import ParameterError


def matmul_counts(m: int, n: int, k: int, itemsize: int) -> tuple[float, float]:
    """FLOPs and bytes of ``(m x k) @ (k x n)``: 2mnk; both operands read, the result written."""
    return 2.0 * m * n * k, float((m * k + k * n + m * n) * itemsize)


def bandwidth_counts(kernel: str, elements: int, itemsize: int) -> tuple[float, float]:
    """``scale`` (y = a x: read 1, write 1) or ``add`` (z = x + y: read 2, write 1)."""
    if kernel == "scale":
        return float(elements), 2.0 * elements * itemsize
    if kernel == "add":
        return float(elements), 3.0 * elements * itemsize
    raise ParameterError(f"unknown bandwidth kernel {kernel!r}; use scale or add")


def conv2d_out(size: int, stride: int) -> int:
    """Output size of a SAME-padded convolution."""
    return math.ceil(size / stride)


def conv2d_counts(
    batch: int,
    height: int,
    width: int,
    in_channels: int,
    out_channels: int,
    kernel: int,
    stride: int,
    itemsize: int,
) -> tuple[float, float]:
    """FLOPs and bytes of a SAME-padded 2-D convolution (NHWC)."""
    ho, wo = conv2d_out(height, stride), conv2d_out(width, stride)
    flops = 2.0 * batch * ho * wo * out_channels * kernel * kernel * in_channels
    elems = (
        batch * height * width * in_channels
        + kernel * kernel * in_channels * out_channels
        + batch * ho * wo * out_channels
    )
    return flops, float(elems * itemsize)


def transformer_counts(
    batch: int,
    seq_len: int,
    hidden: int,
    heads: int,
    ffn: int,
    layers: int,
    vocab: int,
    itemsize: int,
    training: bool = True,
) -> tuple[float, float]:
    """FLOPs and estimated bytes of a BERT-like encoder step with a token-level output head.

    Per layer and token: Q, K, V and output projections 4 x 2h^2; attention scores and the
    weighted sum 2 x 2 s h; the feed-forward block 2 x 2 h f. The head adds 2 h V per token.
    """
    tokens = batch * seq_len
    per_layer = tokens * (8 * hidden * hidden + 4 * seq_len * hidden + 4 * hidden * ffn)
    forward = layers * per_layer + tokens * 2 * hidden * vocab
    flops = forward * (3 if training else 1)
    params = layers * (4 * hidden * hidden + 2 * hidden * ffn) + 2 * vocab * hidden
    # Activations per layer and token: q, k, v, attention output, two norms, ffn in/out, plus
    # the s x heads attention weights.
    acts = layers * tokens * (8 * hidden + ffn + seq_len * heads) + tokens * vocab
    bytes_ = (2 * acts + params * (3 if training else 1)) * itemsize
    return float(flops), float(bytes_)


def decoder_counts(
    batch: int,
    prompt: int,
    context: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    ffn: int,
    layers: int,
    vocab: int,
    itemsize: int,
    phase: str,
) -> tuple[float, float]:
    """FLOPs and least bytes of one step of a LLaMA-shaped decoder (grouped-query attention, gated
    FFN, untied output head) serving ``batch`` sequences.

    ``prefill`` runs the ``prompt`` through every layer (Q, K, V and output projections, the full
    prompt x prompt attention scores and weighted sum, the three FFN matrices) and projects the
    last position to the vocabulary; ``decode`` runs one token per sequence attending over a full
    cache of ``context`` positions. Bytes: the weights read once, the KV cache written (prefill) or
    read whole and one position written (decode), the attention scores written and read, and the
    hidden states in and out of each layer.
    """
    if phase not in ("prefill", "decode"):
        raise ParameterError(f"decoder phase {phase!r}: use prefill or decode")
    head = hidden // heads
    kv = kv_heads * head
    layer_weights = hidden * (hidden + 2 * kv) + hidden * hidden + 3 * hidden * ffn
    tokens, span = (batch * prompt, prompt) if phase == "prefill" else (batch, context)
    flops = (
        2.0 * layers * layer_weights * tokens
        + 4.0 * layers * tokens * span * hidden
        + 2.0 * batch * hidden * vocab
    )
    cache = layers * 2 * batch * kv * (prompt if phase == "prefill" else context + 1)
    scores = layers * batch * heads * (prompt * prompt if phase == "prefill" else context) * 2
    hidden_io = layers * tokens * (4 * hidden + 2 * kv + 3 * ffn) + batch * vocab
    bytes_ = (
        layers * layer_weights + hidden * vocab + tokens * hidden + cache + scores + hidden_io
    ) * itemsize
    return float(flops), float(bytes_)
