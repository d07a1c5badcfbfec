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

from ..errors import GpukitError


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


# Layers whose backward pass reads their inputs (matmul-like, normalisations, products).
_NEEDS_INPUT = {
    "Conv1D",
    "Conv2D",
    "Conv3D",
    "DepthwiseConv2D",
    "SeparableConv2D",
    "Conv2DTranspose",
    "Dense",
    "EinsumDense",
    "BatchNormalization",
    "LayerNormalization",
    "GroupNormalization",
    "MaxPooling2D",
    "MaxPooling1D",
    "Multiply",
    "MultiHeadAttention",
    "Embedding",
}
# Layers whose backward reads their own output.
_NEEDS_OUTPUT = {"ReLU", "MaxPooling2D", "MaxPooling1D", "Softmax"}
# Elementwise layers that can write over their input.
_ELEMENTWISE = {
    "ReLU",
    "Activation",
    "BatchNormalization",
    "Add",
    "Rescaling",
    "Normalization",
    "Dropout",
    "LeakyReLU",
    "ELU",
    "Identity",
    "Subtract",
}
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
MATMUL_LAYERS = {
    "Conv1D",
    "Conv2D",
    "Conv3D",
    "Conv2DTranspose",
    "SeparableConv2D",
    "Dense",
    "EinsumDense",
    "MultiHeadAttention",
    "BatchMatMul",
    "LSTM",
    "GRU",
    "SimpleRNN",
}


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


#: Tensors the gradient of an activation keeps, in multiples of its output, where it is not the
#: output itself (TensorFlow 2.21: exact GELU keeps ``erfc(-x/sqrt 2)``, ``x/2`` and ``-x/sqrt 2``;
#: SiLU its input). Read off TensorFlow's gradient graph; ``tests/test_walk_tensorflow.py`` checks it.
ACTIVATION_KEEPS = {"gelu": 3}
#: Per time step and example, the elements a recurrent layer's backward pass keeps, as
#: (multiples of the units, multiples of the step's input width). TensorFlow 2.21's while-loop
#: implementation (the CPU path, and a GPU one when cuDNN cannot be used) pushes, each step:
#: LSTM the previous h and c, three gate sigmoids, the candidate tanh, tanh(c) and the input;
#: GRU (reset after) the previous h, two sigmoids, the candidate tanh, 1 - z, the recurrent
#: projection and the input; SimpleRNN the previous h, its tanh and the input. cuDNN's fused
#: kernel keeps a reserve space instead, which is not measured here (no GPU).
RNN_KEEPS = {"LSTM": (7, 1), "GRU": (6, 1), "SimpleRNN": (2, 1)}
#: Time steps of a recurrent layer's loop that may run at once: Keras runs the loop as a
#: ``tf.while_loop`` with ``parallel_iterations=32`` (``keras/src/backend/tensorflow/rnn.py``).
#: Work of a step that does not wait for the previous step's state (a 16-bit policy's cast of the
#: kernels) runs ahead by up to that many steps.
LOOP_PARALLEL_ITERATIONS = 32
#: Normalisations that compute in float32 whatever the policy and keep their input and the
#: normalised input (TensorFlow 2.21's gradient graph: ``Cast`` of the input and ``mul``).
NORMS = ("LayerNormalization", "RMSNormalization")
_RNN = tuple(RNN_KEEPS)


class _Walk:
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
            _count(weights),
            _count(trainable),
            **kw,
        )
        self.ops.append(op)
        return op


def _count(weights) -> int:
    if isinstance(weights, int):
        return weights
    return sum(int(math.prod(w.shape)) for w in weights)


def _dense_like(
    walk: _Walk,
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
        if act in _OUTPUT_ACTIVATIONS:
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


def _norm_op(walk: _Walk, layer, kind: str, ins, outs, size: int, weights, trainable) -> Op:
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


def _dropout_op(walk: _Walk, layer, ins, outs, size: int) -> Op:
    """Dropout: keeps its mask (one byte an element), not its input."""
    return walk.add(layer, "Dropout", ins, outs, extra_saved_bytes=size, in_place=True)


def _attention(walk: _Walk, layer, node, ins: list[int], outs: list[int]) -> None:
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
        params=tuple(_count(sub.weights) for sub in subs),
        trainable=tuple(_count(sub.trainable_weights) for sub in subs),
    )


def attention_ops(
    walk: _Walk,
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
    for i, (src, dst, d_in) in enumerate(((q_in, q, d_q), (k_in, k, d_k), (v_in, v, d_v))):
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
    fused = not dropout
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


def _recurrent(
    walk: _Walk, rnn, kind: str, ins: list[int], outs: list[int], in_shape, out_shape, trainable: bool = True
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
    walk = _Walk()
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
            ins = [id(t) for t in node.input_tensors]
            outs = [id(t) for t in node.outputs]
            for t in node.outputs:
                sizes[id(t)] = _numel(t.shape)
            for t in node.input_tensors:
                sizes.setdefault(id(t), _numel(t.shape))
            sizes_w = [int(math.prod(w.shape)) for w in getattr(layer, "trainable_weights", [])]
            if kind == "Embedding":
                largest_embedding = max([largest_embedding] + sizes_w)
            else:
                largest = max([largest] + sizes_w)
            in_shapes = [t.shape for t in node.input_tensors]
            out_shapes = [t.shape for t in node.outputs]
            out_size = sum(sizes[o] for o in outs)
            steps = 0
            if kind == "TimeDistributed":  # the inner layer over every step: the same rules, plus
                layer, kind = layer.layer, type(layer.layer).__name__
                steps = int(in_shapes[0][1]) if in_shapes[0][1] is not None else 0
            if kind == "MultiHeadAttention":
                _attention(walk, layer, node, ins, outs)
            elif kind in _RNN:
                _recurrent(walk, layer, kind, ins, outs, in_shapes[0], out_shapes[0])
            elif kind == "Bidirectional" and type(layer.forward_layer).__name__ in _RNN:
                halves = []
                for direction in (layer.forward_layer, layer.backward_layer):
                    half_shape = (*out_shapes[0][:-1], int(direction.units))
                    half = walk.tensor(_numel(half_shape))
                    src = ins[0]
                    if direction is layer.backward_layer:  # the reversed copy of the sequence
                        src = walk.tensor(sizes[ins[0]])
                        walk.add(layer, "ReverseV2", [ins[0]], [src])
                    _recurrent(
                        walk, direction, type(direction).__name__, [src], [half], in_shapes[0], half_shape
                    )
                    halves.append(half)
                walk.add(layer, "Concatenate", halves, outs)
            elif kind in (
                "Dense",
                "EinsumDense",
                "Conv1D",
                "Conv2D",
                "Conv3D",
                "Conv2DTranspose",
                "SeparableConv2D",
                "DepthwiseConv2D",
            ):
                _dense_like(
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
                _dropout_op(walk, layer, ins, outs, out_size)
            elif kind in NORMS:
                _norm_op(walk, layer, kind, ins, outs, out_size, layer.weights, layer.trainable_weights)
            else:
                act = _activation_name(layer)
                needs_input = kind in _NEEDS_INPUT
                needs_output = kind in _NEEDS_OUTPUT
                extra = 0
                if kind == "Activation" or (act not in (None, "linear") and kind not in ("ReLU", "Softmax")):
                    if act in _OUTPUT_ACTIVATIONS:
                        needs_output = True
                    elif kind == "Activation":
                        needs_input = act not in ACTIVATION_KEEPS
                        extra = ACTIVATION_KEEPS.get(act, 0) * out_size
                    else:
                        extra = ACTIVATION_KEEPS.get(act, 1) * out_size
                walk.add(
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
                    in_place=kind in _ELEMENTWISE and len(ins) >= 1,
                    flops=layer_flops(layer, in_shapes, out_shapes),
                    matmul=kind in MATMUL_LAYERS,
                )
            if steps:
                # Keras runs a static time axis as a Python loop over slices of the input: each
                # slice is a copy kept for the backward pass, and each slice's gradient is a
                # full-size tensor (zeros but for its step), all added at once.
                walk.ops[-1].extra_saved += sizes[ins[0]]
                walk.ops[-1].extra_transient += steps * sizes[ins[0]]
                walk.ops[-1].kernel_casts = steps
    ops = walk.ops
    for op in ops:  # the output head computes in float32: it keeps a float32 copy of its input
        if any(t in walk.float32 and t in map(id, model.outputs) for t in op.outputs):
            op.float32 = True
            if op.needs_input:
                op.extra_saved_mixed += sum(sizes[t] for t in op.inputs)
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


#: Output heads of a built-in transformer shape: ``lm`` (the vocabulary projection: BERT's masked-LM
#: head, a decoder's next-token head) and ``span`` (extractive question answering as in SQuAD
#: fine-tuning: a start and an end logit per token, straight from the last layer).
HEADS = ("lm", "span")


def transformer_graph(
    spec, seq_len: int | None = None, tied_head: bool | None = None, head: str = "lm"
) -> Graph:
    """The walk of a built-in transformer shape (:class:`gpukit.models.TransformerSpec`) without
    building it: the ops TensorFlow runs for its equivalent made of Keras layers
    (:func:`gpukit.zoo.spec_model`), with the same per-op rules as :func:`graph_of`, so that a
    7-billion-parameter shape is walked in milliseconds. ``tests/test_memory_layers.py`` checks
    that the two walks agree.

    Encoders are BERT-shaped (learned positions, post-norm, GELU, dropout 0.1, a masked-LM head);
    decoders without a gated FFN GPT-2-shaped (pre-norm, causal, dropout 0.1); gated decoders
    LLaMA-shaped (RMS norms, SwiGLU, no biases, no dropout; the rotary position embedding's
    rotated Q and K are not walked: Keras has no layer for it). ``tied_head`` (default: tied
    unless the FFN is gated, as the published models) counts the output projection's kernel as
    the token embedding's. ``head="span"`` replaces the vocabulary head by the two-logit span
    head of SQuAD fine-tuning (:data:`HEADS`).
    """
    if head not in HEADS:
        raise ValueError(f"head {head!r}: use one of {', '.join(HEADS)}")
    s = int(seq_len or spec.seq_len)
    h, ffn, vocab, heads = spec.hidden, spec.ffn, spec.vocab, spec.heads
    tied = (not spec.gated_ffn) if tied_head is None else tied_head
    bias = not spec.gated_ffn
    drop = 0.0 if spec.gated_ffn else 0.1
    w = _Walk()
    tokens = w.tensor(s)
    seq = s * h

    def dense(name, x, d_in, d_out, act=None, params=None, float32=False):
        out = w.tensor(s * d_out, float32=float32)
        n = d_in * d_out + (d_out if bias else 0) if params is None else params
        _dense_like(
            w,
            name,
            "Dense",
            [x],
            [out],
            s * d_out,
            2.0 * s * d_out * d_in,
            act,
            n,
            float32=float32,
            extra_saved_mixed=s * d_in if float32 else 0,
        )
        return out

    def norm(name, x):
        out = w.tensor(seq)
        kind = "RMSNormalization" if spec.gated_ffn else "LayerNormalization"
        n = h if spec.gated_ffn else 2 * h
        _norm_op(w, name, kind, [x], [out], seq, n, n)
        return out

    def dropout(name, x):
        if not drop:
            return x
        out = w.tensor(seq)
        _dropout_op(w, name, [x], [out], seq)
        return out

    def add(name, a, b):
        out = w.tensor(seq)
        w.add(name, "Add", [a, b], [out], in_place=True)
        return out

    def attention(name, x):
        out = w.tensor(seq)
        proj = h * h + (h if bias else 0)
        attention_ops(
            w,
            name,
            x,
            x,
            x,
            [out],
            s_q=s,
            s_k=s,
            d_q=h,
            d_k=h,
            d_v=h,
            d_out=h,
            heads=heads,
            key_dim=h // heads,
            value_dim=h // heads,
            dropout=bool(drop),
            masked=spec.decoder,
            params=(proj, proj, proj, proj),
        )
        return out

    x = w.tensor(seq)
    w.add("token_embedding", "Embedding", [tokens], [x], vocab * h, vocab * h, needs_input=True)
    if not spec.gated_ffn:  # learned positions, computed from the token ids (zoo.positions)
        ids = tokens
        for kind in ("OnesLike", "Cumsum", "Subtract", "Cast"):
            nxt = w.tensor(s)
            w.add(f"positions/{kind}", kind, [ids], [nxt], in_place=kind in _ELEMENTWISE)
            ids = nxt
        pos = w.tensor(seq)
        w.add(
            "position_embedding",
            "Embedding",
            [ids],
            [pos],
            spec.seq_len * h,
            spec.seq_len * h,
            needs_input=True,
        )
        x = add("embeddings", x, pos)
    if not spec.decoder:
        x = dropout("embeddings/dropout", norm("embeddings/norm", x))
    else:
        x = dropout("embeddings/dropout", x)
    for i in range(spec.layers):
        n = f"layer{i}"
        if not spec.decoder:  # post-norm
            a = dropout(f"{n}/attention/dropout", attention(f"{n}/attention", x))
            x = norm(f"{n}/attention/norm", add(f"{n}/attention/add", x, a))
            f = dense(f"{n}/ffn/out", dense(f"{n}/ffn/in", x, h, ffn, "gelu"), ffn, h)
            x = norm(f"{n}/ffn/norm", add(f"{n}/ffn/add", x, dropout(f"{n}/ffn/dropout", f)))
            continue
        a = dropout(f"{n}/attention/dropout", attention(f"{n}/attention", norm(f"{n}/attention/norm", x)))
        x = add(f"{n}/attention/add", x, a)
        y = norm(f"{n}/ffn/norm", x)
        if spec.gated_ffn:
            gate, up = dense(f"{n}/ffn/gate", y, h, ffn, "silu"), dense(f"{n}/ffn/up", y, h, ffn)
            m = w.tensor(s * ffn)
            w.add(f"{n}/ffn/multiply", "Multiply", [gate, up], [m], needs_input=True)
            f = dense(f"{n}/ffn/down", m, ffn, h)
        else:
            f = dense(f"{n}/ffn/out", dense(f"{n}/ffn/in", y, h, ffn, "gelu"), ffn, h)
        x = add(f"{n}/ffn/add", x, dropout(f"{n}/ffn/dropout", f))
    if spec.decoder:
        x = norm("final/norm", x)
    if head == "span":
        logits = dense("span_head", x, h, 2, float32=True)
        tied = True  # no vocabulary projection: the largest dense kernel is the FFN's
    else:
        if not spec.decoder:  # BERT's masked-LM transform
            x = norm("mlm/norm", dense("mlm/dense", x, h, h, "gelu"))
        head_params = (0 if tied else vocab * h) + (vocab if bias else 0)
        logits = dense("head", x, h, vocab, params=head_params, float32=True)
    ops = w.ops
    params = sum(o.params for o in ops)
    return Graph(
        spec.name,
        ops,
        w.sizes,
        [tokens],
        s,
        params,
        params,
        w.float32,
        max(h * ffn, 0 if tied else vocab * h),
        [logits],
        vocab * h,
    )


def forward_flops(model) -> float:
    """Forward FLOPs of one example through a Keras model (the sum of :func:`layer_flops`)."""
    return float(sum(op.flops for op in graph_of(model).ops))


def activation_elements(model) -> int:
    """Elements of every layer output for one example (the activations a step writes)."""
    graph = graph_of(model)
    return sum(graph.sizes[t] for op in graph.ops for t in op.outputs)
