"""The walk of a built Keras model: :func:`graph_of` reads a functional model in execution order
and makes each layer the ops TensorFlow runs for it, with its parameters, the tensors it reads and
writes (sizes per example, in elements), its forward FLOPs (:func:`layer_flops`) and what its
backward pass reads. TensorFlow is needed only to build the model that is walked.
"""

from __future__ import annotations

import math

from ..errors import GpukitError
from .attention import attention_ops
from .builder import Walk, count_params, dense_like, dropout_op, norm_op
from .records import Graph, Op
from .rules import (
    ACTIVATION_KEEPS,
    ELEMENTWISE,
    LOOP_PARALLEL_ITERATIONS,
    MATMUL_LAYERS,
    NEEDS_INPUT,
    NEEDS_OUTPUT,
    NORMS,
    OUTPUT_ACTIVATIONS,
    RNN,
    RNN_KEEPS,
)

#: Layers walked as one matrix multiply (or convolution) with its fused activation.
_DENSE_LIKE = (
    "Dense",
    "EinsumDense",
    "Conv1D",
    "Conv2D",
    "Conv3D",
    "Conv2DTranspose",
    "SeparableConv2D",
    "DepthwiseConv2D",
)


def _activation_name(layer) -> str | None:
    act = getattr(layer, "activation", None)
    if act is None:
        return None
    return getattr(act, "__name__", str(act)).lower()


def _numel(shape) -> int:
    return math.prod(int(d) for d in shape[1:] if d is not None)


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


def _attention(walk: Walk, layer, node, ins: list[int], outs: list[int]) -> None:
    """A Keras ``MultiHeadAttention`` call, walked as :func:`attention_ops`."""
    qs, vs = node.input_tensors[0].shape, node.input_tensors[1].shape
    ks = node.input_tensors[2].shape if len(node.input_tensors) > 2 else vs
    kwargs = node.arguments.kwargs
    masked = bool(kwargs.get("use_causal_mask")) or kwargs.get("attention_mask") is not None
    subs = (layer._query_dense, layer._key_dense, layer._value_dense, layer._output_dense)
    attention_ops(
        walk,
        layer.name,
        ins[0],
        ins[2] if len(ins) > 2 else ins[1],
        ins[1],
        outs,
        s_q=int(qs[-2]),
        s_k=int(ks[-2]),
        d_q=int(qs[-1]),
        d_k=int(ks[-1]),
        d_v=int(vs[-1]),
        d_out=int(node.outputs[0].shape[-1]),
        heads=int(layer.num_heads),
        key_dim=int(layer.key_dim),
        value_dim=int(layer.value_dim or layer.key_dim),
        dropout=bool(layer.dropout),
        masked=masked,
        params=tuple(count_params(sub.weights) for sub in subs),
        trainable=tuple(count_params(sub.trainable_weights) for sub in subs),
    )


def _recurrent(
    walk: Walk, rnn, kind: str, ins: list[int], outs: list[int], in_shape, out_shape, trainable: bool = True
) -> None:
    """A recurrent layer: per time step, the tensors its backward pass keeps (:data:`RNN_KEEPS`)."""
    steps, width = int(in_shape[-2]), int(in_shape[-1])
    units = int(rnn.units)
    per_units, per_input = RNN_KEEPS[kind]
    gates = {"LSTM": 4, "GRU": 3, "SimpleRNN": 1}[kind]
    kernels = gates * units * (width + units)
    # Under a 16-bit policy the loop casts both kernels every step and keeps each step's cast
    # for the backward pass (the 16-bit matmul's gradient reads it); in inference the casts of
    # the steps running ahead pile up while the loop runs (at most LOOP_PARALLEL_ITERATIONS).
    walk.add(
        rnn,
        kind,
        ins,
        outs,
        rnn.weights,
        rnn.trainable_weights if trainable else (),
        extra_saved=steps * (per_units * units + per_input * width),
        cast_saved_bytes=steps * kernels * 2,
        cast_forward_bytes=min(steps, LOOP_PARALLEL_ITERATIONS) * kernels * 2,
        # while it runs, the loop holds the step outputs it stacks and their time-major copy
        forward_workspace=steps * 2 * units,
        flops=2.0 * steps * kernels,
        matmul=True,
    )


def _functional(model):
    """A ``Sequential`` model as the functional model of its layers (the walk reads a functional
    model's graph); any other model as it is."""
    import keras

    if not isinstance(model, keras.Sequential):
        return model
    try:
        inputs = model.inputs
    except AttributeError:  # Keras: "Sequential model ... has no defined inputs yet"
        raise GpukitError(
            f"Sequential model {model.name!r} has no input shape; start it with keras.Input(shape) "
            f"and save it again"
        ) from None
    return keras.Model(inputs, model.outputs, name=model.name)


def graph_of(model, policies: bool = False) -> Graph:
    """Walk a Keras functional model: ops in execution order, sizes per example.

    Under a 16-bit policy the model's outputs are taken to be float32, as Keras's mixed-precision
    advice has a head made with ``dtype="float32"``; with ``policies`` the model was built under a
    16-bit policy and each output's own dtype says (a ``keras.applications`` head computes in
    the policy's type and casts its kernel like any other layer).

    Most layers are one op. Layers TensorFlow runs as several kernels with tensors of their
    own are walked as those kernels: ``MultiHeadAttention`` (projections, scores, softmax,
    dropout, weighted sum), ``Bidirectional`` (a layer each way and the concatenation),
    ``TimeDistributed`` (its inner layer over every step), the recurrent layers (what each time
    step keeps), ``Dropout`` (its mask), ``LayerNormalization`` (float32 copies under mixed
    precision).
    """
    walk = Walk()
    sizes = walk.sizes
    largest = largest_embedding = 0
    model = _functional(model)
    by_depth = getattr(model, "_nodes_by_depth", None)
    if not by_depth:
        raise GpukitError(
            f"model {model.name!r} is not a functional Keras model; gpukit walks functional models"
        )
    inputs = [id(t) for t in model.inputs]
    for t in model.inputs:
        sizes[id(t)] = _numel(t.shape)
    for t in model.outputs:  # the output head runs in float32 (Keras's mixed-precision advice)
        if not policies or str(getattr(t, "dtype", "float32")) == "float32":
            walk.float32.add(id(t))
    for depth in sorted(by_depth, reverse=True):
        for node in by_depth[depth]:
            layer = node.operation
            kind = type(layer).__name__
            if kind == "InputLayer":
                continue
            for t in node.outputs:
                sizes[id(t)] = _numel(t.shape)
            for t in node.input_tensors:
                sizes.setdefault(id(t), _numel(t.shape))
            sizes_w = [int(math.prod(w.shape)) for w in getattr(layer, "trainable_weights", [])]
            if kind == "Embedding":
                largest_embedding = max([largest_embedding] + sizes_w)
            else:
                largest = max([largest] + sizes_w)
            _node_ops(walk, node)
    _float32_head(walk, model)
    ops = walk.ops
    params = sum(o.params for o in ops)
    trainable = sum(o.trainable_params for o in ops)
    return Graph(
        model.name,
        ops,
        sizes,
        inputs,
        sum(sizes[i] for i in inputs),
        params,
        trainable,
        walk.float32,
        largest,
        [id(t) for t in model.outputs],
        largest_embedding,
    )


def _node_ops(walk: Walk, node) -> None:
    """The ops of one call of a layer (a node of the functional model), its tensors sized."""
    layer = node.operation
    kind = type(layer).__name__
    sizes = walk.sizes
    ins = [id(t) for t in node.input_tensors]
    outs = [id(t) for t in node.outputs]
    in_shapes = [t.shape for t in node.input_tensors]
    out_shapes = [t.shape for t in node.outputs]
    out_size = sum(sizes[o] for o in outs)
    steps = 0
    if kind == "TimeDistributed":  # the inner layer over every step: its rules, plus the loop's
        layer, kind = layer.layer, type(layer.layer).__name__
        steps = int(in_shapes[0][1]) if in_shapes[0][1] is not None else 0
    if kind == "MultiHeadAttention":
        _attention(walk, layer, node, ins, outs)
    elif kind in RNN:
        _recurrent(walk, layer, kind, ins, outs, in_shapes[0], out_shapes[0])
    elif kind == "Bidirectional" and type(layer.forward_layer).__name__ in RNN:
        _bidirectional(walk, layer, ins, outs, in_shapes[0], out_shapes[0])
    elif kind in _DENSE_LIKE:
        dense_like(
            walk,
            layer,
            kind,
            ins,
            outs,
            out_size,
            layer_flops(layer, in_shapes, out_shapes),
            _activation_name(layer),
        )
    elif kind == "Dropout":
        dropout_op(walk, layer, ins, outs, out_size)
    elif kind in NORMS:
        norm_op(walk, layer, kind, ins, outs, out_size, layer.weights, layer.trainable_weights)
    else:
        _layer_op(walk, layer, kind, ins, outs, out_size, layer_flops(layer, in_shapes, out_shapes))
    if steps:
        _over_static_time_axis(walk.ops[-1], sizes[ins[0]], steps)


def _bidirectional(walk: Walk, layer, ins: list[int], outs: list[int], in_shape, out_shape) -> None:
    """A recurrent layer each way (the backward one over a reversed copy) and their concatenation."""
    halves = []
    for direction in (layer.forward_layer, layer.backward_layer):
        half_shape = (*out_shape[:-1], int(direction.units))
        half = walk.tensor(_numel(half_shape))
        src = ins[0]
        if direction is layer.backward_layer:  # the reversed copy of the sequence
            src = walk.tensor(walk.sizes[ins[0]])
            walk.add(layer, "ReverseV2", [ins[0]], [src])
        _recurrent(walk, direction, type(direction).__name__, [src], [half], in_shape, half_shape)
        halves.append(half)
    walk.add(layer, "Concatenate", halves, outs)


def _layer_op(
    walk: Walk, layer, kind: str, ins: list[int], outs: list[int], out_size: int, flops: float
) -> Op:
    """Any other layer as one op: what its backward reads follows its kind and its activation."""
    needs_input, needs_output, extra = _activation_keeps(kind, _activation_name(layer), out_size)
    return walk.add(
        layer,
        kind,
        ins,
        outs,
        getattr(layer, "weights", []),
        getattr(layer, "trainable_weights", []),
        needs_input=needs_input,
        needs_output=needs_output,
        extra_saved=extra,
        # batch normalisation computes in float32: a 16-bit policy keeps a float32
        # copy of its input (two more bytes an element than the 16-bit input)
        extra_saved_mixed=out_size if kind == "BatchNormalization" else 0,
        float32_compute=kind == "BatchNormalization",
        in_place=kind in ELEMENTWISE and len(ins) >= 1,
        flops=flops,
        matmul=kind in MATMUL_LAYERS,
    )


def _activation_keeps(kind: str, act: str | None, out_size: int) -> tuple[bool, bool, int]:
    """Whether the backward of a ``kind`` layer with activation ``act`` reads its input, its
    output, and how many elements of internal tensors it keeps besides."""
    needs_input = kind in NEEDS_INPUT
    needs_output = kind in NEEDS_OUTPUT
    extra = 0
    if kind == "Activation" or (act not in (None, "linear") and kind not in ("ReLU", "Softmax")):
        if act in OUTPUT_ACTIVATIONS:
            needs_output = True
        elif kind == "Activation":
            needs_input = act not in ACTIVATION_KEEPS
            extra = ACTIVATION_KEEPS.get(act, 0) * out_size
        else:
            extra = ACTIVATION_KEEPS.get(act, 1) * out_size
    return needs_input, needs_output, extra


def _over_static_time_axis(op: Op, step_input: int, steps: int) -> None:
    """A layer run by ``TimeDistributed`` over ``steps`` steps of an input of ``step_input`` elements."""
    # Keras runs a static time axis as a Python loop over slices of the input: each
    # slice is a copy kept for the backward pass, and each slice's gradient is a
    # full-size tensor (zeros but for its step), all added at once.
    op.extra_saved += step_input
    op.extra_transient += steps * step_input
    op.kernel_casts = steps


def _float32_head(walk: Walk, model) -> None:
    """The output head computes in float32: it keeps a float32 copy of its input."""
    for op in walk.ops:
        if any(t in walk.float32 and t in map(id, model.outputs) for t in op.outputs):
            op.float32 = True
            if op.needs_input:
                op.extra_saved_mixed += sum(walk.sizes[t] for t in op.inputs)


def forward_flops(model) -> float:
    """Forward FLOPs of one example through a Keras model (the sum of :func:`layer_flops`)."""
    return float(sum(op.flops for op in graph_of(model).ops))


def activation_elements(model) -> int:
    """Elements of every layer output for one example (the activations a step writes)."""
    graph = graph_of(model)
    return sum(graph.sizes[t] for op in graph.ops for t in op.outputs)
