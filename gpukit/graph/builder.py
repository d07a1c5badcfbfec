"""Building a :class:`~.records.Graph` op by op: the :class:`Walk` that numbers tensors and
appends ops, and the ops both walks make alike (a matrix multiply with its fused activation, a
normalisation, dropout).
"""

from __future__ import annotations

import math

from .records import Op
from .rules import ACTIVATION_KEEPS, MATMUL_LAYERS, OUTPUT_ACTIVATIONS


class Walk:
    """Builds a :class:`Graph`: ops in execution order, sizes of real and internal tensors."""

    def __init__(self):
        self.sizes: dict[int, int] = {}
        self.ops: list[Op] = []
        self.float32: set[int] = set()
        self._next = -1

    def tensor(self, elements: int, float32: bool = False) -> int:
        """A tensor inside a layer (attention scores, a projection): an id of its own."""
        tid, self._next = self._next, self._next - 1
        self.sizes[tid] = int(elements)
        if float32:
            self.float32.add(tid)
        return tid

    def add(self, layer, kind: str, ins: list[int], outs: list[int], weights=(), trainable=(), **kw) -> Op:
        """Append an op; ``weights`` and ``trainable`` are Keras weights or parameter counts."""
        op = Op(
            layer if isinstance(layer, str) else getattr(layer, "name", kind),
            kind,
            ins,
            outs,
            count_params(weights),
            count_params(trainable),
            **kw,
        )
        self.ops.append(op)
        return op


def count_params(weights) -> int:
    """Parameters in Keras weights, or a count passed as it is."""
    if isinstance(weights, int):
        return weights
    return sum(int(math.prod(w.shape)) for w in weights)


def dense_like(
    walk: Walk,
    layer,
    kind: str,
    ins,
    outs,
    sizes_out: int,
    flops: float,
    act: str | None,
    weights=None,
    trainable=None,
    **kw,
) -> Op:
    """A matrix-multiply op with its fused activation (``layer`` a Keras layer or a name, with
    ``weights``/``trainable`` as parameter counts)."""
    needs_output, extra = False, 0
    if act not in (None, "linear"):
        if act in OUTPUT_ACTIVATIONS:
            needs_output = True
        else:  # its gradient reads tensors computed from the pre-activation
            extra = ACTIVATION_KEEPS.get(act, 1) * sizes_out
    if weights is None:
        weights, trainable = layer.weights, layer.trainable_weights
    elif trainable is None:
        trainable = weights
    # a fused activation that is not computed in place holds the pre-activation beside its output
    return walk.add(
        layer,
        kind,
        ins,
        outs,
        weights,
        trainable,
        needs_input=True,
        needs_output=needs_output,
        extra_saved=extra,
        flops=flops,
        matmul=kind in MATMUL_LAYERS,
        forward_workspace=sizes_out if extra else 0,
        **kw,
    )


def norm_op(walk: Walk, layer, kind: str, ins, outs, size: int, weights, trainable) -> Op:
    """A normalisation: keeps its input and the normalised input in float32 and computes in float32."""
    keeps = [walk.tensor(size, float32=True), walk.tensor(size, float32=True)]
    return walk.add(
        layer,
        kind,
        ins,
        outs,
        weights,
        trainable,
        keeps=keeps,
        forward_workspace=size,
        forward_workspace_f32=True,
        float32_compute=True,
    )


def dropout_op(walk: Walk, layer, ins, outs, size: int) -> Op:
    """Dropout: keeps its mask (one byte an element), not its input."""
    return walk.add(layer, "Dropout", ins, outs, extra_saved_bytes=size, in_place=True)
