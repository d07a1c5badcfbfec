"""The Keras layer walk: what each layer of a model holds, computes and keeps for its backward pass.

:func:`graph_of` walks a functional Keras model in execution order and returns a :class:`Graph`:
each layer as an :class:`Op` with its parameters, the tensors it reads and writes (sizes per
example, in elements), its forward FLOPs (:func:`layer_flops`; a multiply-add counts two),
whether it is a matrix multiply (tensor cores where the precision allows), and which tensors its
backward pass reads (a convolution or dense layer its input, a ReLU its output, ...).

The memory model (:mod:`gpukit.memory`) simulates a step over this walk, the performance model
(:mod:`gpukit.perfmodel`) turns it into per-op costs, and the benchmark workloads
(:mod:`gpukit.workloads`) count a model's FLOPs with it. TensorFlow is needed only to build the
model that is walked.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .errors import GpukitError


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
    extra_saved: int = 0  # elements of an internal tensor its backward reads (pre-activation)
    in_place: bool = False  # elementwise: may write over its input when nothing else reads it
    flops: float = 0.0  # forward FLOPs per example (a multiply-add counts two)
    matmul: bool = False  # a matrix multiply or convolution: runs on tensor cores where the precision allows


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
    largest_variable: int = 0  # elements of the largest trainable variable



# Layers whose backward pass reads their inputs (matmul-like, normalisations, products).
_NEEDS_INPUT = {"Conv1D", "Conv2D", "Conv3D", "DepthwiseConv2D", "SeparableConv2D", "Conv2DTranspose",
                "Dense", "EinsumDense", "BatchNormalization", "LayerNormalization", "GroupNormalization",
                "MaxPooling2D", "MaxPooling1D", "Multiply", "MultiHeadAttention", "Embedding"}
# Layers whose backward reads their own output.
_NEEDS_OUTPUT = {"ReLU", "MaxPooling2D", "MaxPooling1D", "Softmax"}
# Elementwise layers that can write over their input.
_ELEMENTWISE = {"ReLU", "Activation", "BatchNormalization", "Add", "Rescaling", "Normalization", "Dropout",
                "LeakyReLU", "ELU", "Identity", "Subtract"}
# Activations whose gradient reads the output; others (swish, gelu, ...) read the input.
_OUTPUT_ACTIVATIONS = {"relu", "relu6", "sigmoid", "tanh", "softmax", "elu", "linear", None}


def _activation_name(layer) -> str | None:
    act = getattr(layer, "activation", None)
    if act is None:
        return None
    return getattr(act, "__name__", str(act)).lower()


def _numel(shape) -> int:
    return math.prod(int(d) for d in shape[1:] if d is not None)


#: Layers whose work is a matrix multiply (tensor cores where the precision allows). A depthwise
#: convolution is not: cuDNN runs it on the CUDA cores.
MATMUL_LAYERS = {"Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "SeparableConv2D", "Dense", "EinsumDense",
                 "MultiHeadAttention"}


def layer_flops(layer, input_shapes, output_shapes) -> float:
    """Forward FLOPs of one example through one layer (multiply-add = 2); 0 for layers whose
    arithmetic is negligible beside their memory traffic (normalisation, activations, pooling).

    Convolutions: 2 x output elements x kernel height x width x input channels / groups.
    Dense and EinsumDense: 2 x output elements x the contracted size (the kernel's first
    dimension). Multi-head self-attention over s tokens of width d with p = heads x key_dim:
    Q, K, V and output projections 2 s d p x 4, scores and weighted sum 2 x 2 s^2 p.
    """
    kind = type(layer).__name__
    out = sum(_numel(s) for s in output_shapes)
    if kind in ("Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose"):
        k = layer.kernel.shape
        groups = max(int(getattr(layer, "groups", 1) or 1), 1)
        macs = math.prod(int(d) for d in k[:-1]) // groups
        if kind == "Conv2DTranspose":  # the kernel's input and output channel axes are swapped
            macs = math.prod(int(d) for d in k[:-2]) * int(k[-1])
        return 2.0 * out * macs
    if kind == "DepthwiseConv2D":
        k = layer.kernel.shape
        return 2.0 * out * int(k[0]) * int(k[1])
    if kind == "SeparableConv2D":
        dk, pk = layer.depthwise_kernel.shape, layer.pointwise_kernel.shape
        ins = _numel(input_shapes[0])
        return 2.0 * ins * int(dk[0]) * int(dk[1]) * int(dk[3]) + 2.0 * out * int(pk[2])
    if kind in ("Dense", "EinsumDense"):
        return 2.0 * out * int(layer.kernel.shape[0])
    if kind == "MultiHeadAttention":
        shape = input_shapes[0]
        s, d = int(shape[-2]), int(shape[-1])
        proj = int(layer.num_heads) * int(layer.key_dim)
        return 2.0 * s * d * proj * 4 + 4.0 * s * s * proj
    return 0.0


def graph_of(model) -> Graph:
    """Walk a Keras functional model: ops in execution order, sizes per example."""
    sizes: dict[int, int] = {}
    ops: list[Op] = []
    float32_outputs: set[int] = set()
    largest = 0
    by_depth = getattr(model, "_nodes_by_depth", None)
    if not by_depth:
        raise GpukitError(f"model {model.name!r} is not a functional Keras model; gpukit walks functional models")
    inputs = [id(t) for t in model.inputs]
    for t in model.inputs:
        sizes[id(t)] = _numel(t.shape)
    for depth in sorted(by_depth, reverse=True):
        for node in by_depth[depth]:
            layer = node.operation
            kind = type(layer).__name__
            if kind == "InputLayer":
                continue
            ins = [id(t) for t in node.input_tensors]
            outs = [id(t) for t in node.outputs]
            for t in node.outputs:
                sizes[id(t)] = _numel(t.shape)
                if getattr(layer, "_gpukit_float32", False):  # kept in float32 under mixed precision
                    float32_outputs.add(id(t))
            for t in node.input_tensors:
                sizes.setdefault(id(t), _numel(t.shape))
            act = _activation_name(layer)
            needs_input = kind in _NEEDS_INPUT
            needs_output = kind in _NEEDS_OUTPUT
            extra = 0
            if kind == "Activation" or (act not in (None, "linear") and kind not in ("ReLU", "Softmax")):
                if act in _OUTPUT_ACTIVATIONS:
                    needs_output = True
                elif kind == "Activation":
                    needs_input = True
                else:  # a fused non-relu activation: its gradient reads the pre-activation
                    extra = sum(sizes[o] for o in outs)
            weights = getattr(layer, "weights", [])  # a keras.ops operation (x + y) has none
            trainable_weights = getattr(layer, "trainable_weights", [])
            params = sum(int(math.prod(w.shape)) for w in weights)
            trainable = sum(int(math.prod(w.shape)) for w in trainable_weights)
            largest = max([largest] + [int(math.prod(w.shape)) for w in trainable_weights])
            flops = layer_flops(layer, [t.shape for t in node.input_tensors], [t.shape for t in node.outputs])
            ops.append(Op(layer.name, kind, ins, outs, params, trainable, needs_input, needs_output, extra,
                          in_place=kind in _ELEMENTWISE and len(ins) >= 1, flops=flops,
                          matmul=kind in MATMUL_LAYERS))
    params = sum(o.params for o in ops)
    trainable = sum(o.trainable_params for o in ops)
    return Graph(model.name, ops, sizes, inputs, sum(sizes[i] for i in inputs), params, trainable,
                 float32_outputs, largest)



def forward_flops(model) -> float:
    """Forward FLOPs of one example through a Keras model (the sum of :func:`layer_flops`)."""
    return float(sum(op.flops for op in graph_of(model).ops))


def activation_elements(model) -> int:
    """Elements of every layer output for one example (the activations a step writes)."""
    graph = graph_of(model)
    return sum(graph.sizes[t] for op in graph.ops for t in op.outputs)
