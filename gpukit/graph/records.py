"""The records a walk produces: an :class:`Op` per kernel TensorFlow runs, with what it holds,
computes and keeps for its backward pass, and the :class:`Graph` of a model's ops in execution
order with the per-example size of every tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .rules import RNN_KEEPS


@dataclass
class Op:
    """One layer of a model as the memory walk sees it (sizes per example, in elements)."""

    name: str
    kind: str
    inputs: list[int]  # tensor ids
    outputs: list[int]  # tensor ids
    params: int = 0
    trainable_params: int = 0
    needs_input: bool = False  # its backward reads its inputs
    needs_output: bool = False  # its backward reads its outputs
    extra_saved: int = 0  # elements of internal tensors its backward reads (pre-activation, RNN steps)
    extra_saved_bytes: int = 0  # bytes of its one-byte masks (dropout, attention mask) kept for backward
    extra_saved_mixed: int = 0  # elements kept only under a 16-bit policy (the cast of a float32 result)
    keeps: list[int] = field(default_factory=list)  # its own internal tensors (ids) kept for backward
    holds: list[int] = field(default_factory=list)  # tensors (ids) it keeps alive until it runs, in training
    extra_transient: int = 0  # elements its backward pass allocates besides the gradients of its tensors
    cast_saved_bytes: int = (
        0  # under a 16-bit policy: bytes of kernel casts kept for backward, whatever the batch
    )
    cast_forward_bytes: int = (
        0  # under a 16-bit policy: bytes of a loop's kernel casts running ahead (inference)
    )
    kernel_casts: int = (
        1  # times a call casts its kernel under a 16-bit policy (a static time axis: once a step)
    )
    float32: bool = False  # computes in float32 under a 16-bit policy (the output head)
    forward_workspace: int = 0  # elements it holds besides its input and output while it runs forward
    forward_workspace_f32: bool = False  # ... in float32 whatever the policy
    forward_workspace_mixed: int = (
        0  # elements it holds besides while it runs forward, only under a 16-bit policy
    )
    float32_compute: bool = False  # computes in float32 under a 16-bit policy (normalisations)
    in_place: bool = False  # elementwise: may write over its input when nothing else reads it
    flops: float = 0.0  # forward FLOPs per example (a multiply-add counts two)
    matmul: bool = False  # a matrix multiply or convolution: runs on tensor cores where the precision allows

    @property
    def cast_bytes(self) -> int:
        """Bytes of the 16-bit copies of its kernel a call makes under a 16-bit policy (once per
        call, once per step over a static time axis; a recurrent loop's are its own fields)."""
        if not self.matmul or self.float32 or self.kind in RNN_KEEPS:
            return 0
        return 2 * self.params * self.kernel_casts


@dataclass
class Graph:
    """A model's ops in execution order and the per-example size of every tensor."""

    name: str
    ops: list[Op]
    sizes: dict[int, int]  # tensor id -> elements per example
    inputs: list[int]
    input_elements: int
    params: int
    trainable_params: int
    float32_outputs: set[int] = field(default_factory=set)  # tensors kept in float32 under mixed precision
    largest_variable: int = 0  # elements of the largest trainable variable with a dense gradient
    outputs: list[int] = field(default_factory=list)  # the model's outputs (what the loss reads)
    largest_embedding: int = 0  # elements of the largest trainable embedding table (a sparse gradient)

    @property
    def cast_bytes(self) -> int:
        """Bytes of the 16-bit kernel casts a step makes outside recurrent loops (:attr:`Op.cast_bytes`)."""
        return sum(o.cast_bytes for o in self.ops)
