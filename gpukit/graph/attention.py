"""Multi-head attention as the kernels TensorFlow runs for Keras's ``MultiHeadAttention``: the
Q, K and V projections, the scores and their softmax, dropout, the weighted sum and the output
projection, each with what its backward pass keeps. Both walks use it.
"""

from __future__ import annotations

from .builder import Walk


def attention_ops(
    walk: Walk,
    name: str,
    q_in: int,
    k_in: int,
    v_in: int,
    outs: list[int],
    *,
    s_q: int,
    s_k: int,
    d_q: int,
    d_k: int,
    d_v: int,
    d_out: int,
    heads: int,
    key_dim: int,
    value_dim: int,
    dropout: bool,
    masked: bool,
    params: tuple[int, int, int, int],
    trainable: tuple[int, int, int, int] | None = None,
) -> None:
    """Multi-head attention as the ops TensorFlow runs for Keras's ``MultiHeadAttention``:
    Q, K and V projections, scores, softmax, dropout, weighted sum, output projection.

    Backward keeps the projections' inputs, Q, K, V, the softmax output, the dropped-out
    probabilities and their mask, a causal or padding mask, and the heads' output. Without
    dropout Keras computes attention with ``ops.dot_product_attention``, whose softmax runs in
    float32 under a 16-bit policy and is cast back (both kept); with dropout it runs its own
    softmax layer in the policy's 16-bit type. ``params`` are the four projections' parameters.
    """
    trainable = trainable or params
    scores_n = heads * s_q * s_k
    q = walk.tensor(s_q * heads * key_dim)
    k = walk.tensor(s_k * heads * key_dim)
    v = walk.tensor(s_k * heads * value_dim)
    _projections(walk, name, ((q_in, q, d_q), (k_in, k, d_k), (v_in, v, d_v)), params, trainable)
    probs = _softmax_scores(walk, name, q, k, scores_n, key_dim, fused=not dropout, masked=masked)
    if dropout:
        dropped = walk.tensor(scores_n)
        walk.add(f"{name}/dropout", "Dropout", [probs], [dropped], extra_saved_bytes=scores_n, in_place=True)
        probs = dropped
    heads_out = walk.tensor(s_q * heads * value_dim)
    walk.add(
        f"{name}/weighted",
        "BatchMatMul",
        [probs, v],
        [heads_out],
        needs_input=True,
        flops=2.0 * s_q * s_k * heads * value_dim,
        matmul=True,
        forward_workspace=walk.sizes[v] + walk.sizes[heads_out],
    )  # its operand and result copies
    walk.add(
        f"{name}/output",
        "EinsumDense",
        [heads_out],
        outs,
        params[3],
        trainable[3],
        needs_input=True,
        flops=2.0 * s_q * heads * value_dim * d_out,
        matmul=True,
    )


def _projections(walk: Walk, name: str, qkv, params, trainable) -> None:
    """The Q, K and V projections: ``qkv`` holds (input, projected tensor, input width) of each."""
    for i, (src, dst, d_in) in enumerate(qkv):
        # the projection writes (batch, tokens, heads, width); the attention einsums read a
        # transposed copy (batch, heads, tokens, width), which is what the backward pass keeps
        raw = walk.tensor(walk.sizes[dst])
        walk.add(
            f"{name}/{'qkv'[i]}",
            "EinsumDense",
            [src],
            [raw],
            params[i],
            trainable[i],
            needs_input=True,
            flops=2.0 * walk.sizes[dst] * d_in,
            matmul=True,
        )
        walk.add(f"{name}/{'qkv'[i]}/transpose", "Transpose", [raw], [dst])


def _softmax_scores(
    walk: Walk, name: str, q: int, k: int, scores_n: int, key_dim: int, fused: bool, masked: bool
) -> int:
    """The scores of queries ``q`` against keys ``k`` and their softmax (``fused``: as
    ``ops.dot_product_attention`` computes them, without dropout); returns the probabilities."""
    # ``ops.dot_product_attention`` (no dropout) computes the scores in float32 and scales them
    # into a new tensor; Keras's own path (dropout) scales Q instead and keeps the policy's type
    scores = walk.tensor(scores_n, float32=fused)
    # TensorFlow's einsum kernel transposes its operands into copies of its own while it runs (the
    # projections' outputs stay alive beside them); Keras's own path multiplies keys by queries
    # ("aecd,abcd->acbe"), whose product comes out with the key positions first and is transposed
    # into a second tensor of scores
    q_n, k_n = walk.sizes[q], walk.sizes[k]
    walk.add(
        f"{name}/scores",
        "BatchMatMul",
        [q, k],
        [scores],
        needs_input=True,
        flops=2.0 * scores_n * key_dim,
        matmul=True,
        forward_workspace=q_n + k_n + (0 if fused else scores_n),
    )
    softmax_in = [scores]
    holds = []
    if fused:
        scaled = walk.tensor(scores_n, float32=True)
        walk.add(f"{name}/scale", "Multiply", [scores], [scaled], in_place=True)
        softmax_in = [scaled]
        holds = [scores]  # measured: in training the unscaled scores stay alive until the softmax has run
    probs = walk.tensor(scores_n, float32=fused)
    # TensorFlow's softmax (and the scaling) write over their input when nothing else holds it
    # (``forward_input_or_allocate_output``); a mask first makes a masked copy of the scores, and
    # under a 16-bit policy the float32 probabilities are cast back beside themselves
    walk.add(
        f"{name}/softmax",
        "Softmax",
        softmax_in,
        [probs],
        needs_output=True,
        holds=holds,
        in_place=True,
        extra_saved_mixed=scores_n if fused else 0,
        extra_saved_bytes=scores_n if masked else 0,
        forward_workspace=scores_n if masked else 0,
        forward_workspace_f32=fused,
        forward_workspace_mixed=scores_n if fused else 0,
    )
    return probs
