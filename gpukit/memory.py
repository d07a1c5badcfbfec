"""Memory fit: how many bytes a model needs to train or infer at a batch size, and where it fits.

Two figures, in bytes:

* ``tensor_bytes`` — the peak of TensorFlow's allocator for this step's tensors: weights,
  gradients, optimizer slots, the activations kept for the backward pass, the transient
  gradients of activations, the input batch. It is what
  ``tf.config.experimental.get_memory_info(device)["peak"]`` reports, and what
  :func:`measure_peak` measures.
* ``total_bytes`` — ``tensor_bytes`` plus the runtime's own reserve on a GPU (CUDA context,
  cuDNN and cuBLAS workspaces), :data:`DEFAULT_RUNTIME_RESERVE_BYTES` unless overridden.

Keras models are walked layer by layer (:func:`graph_of`): each layer's parameters and output
size, and which tensors its backward pass needs (a convolution or dense layer needs its input,
a ReLU its output, batch normalisation its input…). The walk simulates the step: the forward
pass keeps what backward needs and frees the rest after its last use; the backward pass frees
saved tensors as it goes and accumulates weight gradients. The peak of that simulation is the
estimate. Built-in transformer configurations use closed-form counts instead (activations per
layer after Korthikanti et al., 2022, "Reducing Activation Recomputation in Large Transformer
Models", section 4: 34 s b h + 5 a s² b bytes at 16-bit).

GPU memory is binary: a catalogue "24 GB" card holds 24 GiB (:func:`gpukit.specs.memory_bytes`).
"""
from __future__ import annotations

import difflib
import math
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import precision as prec
from .errors import GpukitError, ParameterError

#: CUDA context plus cuDNN/cuBLAS workspaces that a GPU process holds besides tensors. A CUDA
#: context costs roughly 300-500 MiB on recent drivers; the rest is workspace. Override it
#: with ``runtime_reserve_bytes`` where you measured your own.
DEFAULT_RUNTIME_RESERVE_BYTES = 1024 * 2**20

#: Optimizer state: slot variables per trainable parameter.
OPTIMIZER_SLOTS = {"sgd": 0, "momentum": 1, "nesterov": 1, "adam": 2, "adamw": 2, "rmsprop": 1,
                   "adagrad": 1, "adadelta": 2, "adamax": 2, "nadam": 2, "lion": 1}

MODES = ("train", "infer")


class UnknownModelError(GpukitError):
    """A model name matches no Keras application, saved file or built-in configuration."""


# --------------------------------------------------------------------------- the graph


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


#: Working copies of their input that convolution kernels hold while they run during inference,
#: in multiples of the input (TensorFlow 2.21's CPU kernels hold a padded copy for a regular
#: convolution; the depthwise ones showed none consistent across batch sizes).
CONV_WORKSPACE = {"Conv2D": 1}

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


# --------------------------------------------------------------------------- simulation


@dataclass(frozen=True)
class Estimate:
    """Bytes of one step of a model at a batch size; see the module docstring."""

    model: str
    batch_size: int
    precision: str
    optimizer: str
    mode: str
    weights_bytes: int
    gradients_bytes: int
    optimizer_bytes: int
    activations_bytes: int  # saved for backward (train) or the largest live set (infer)
    transient_bytes: int
    input_bytes: int
    tensor_bytes: int
    runtime_reserve_bytes: int
    total_bytes: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _act_itemsize(precision: str) -> int:
    return 2 if precision in ("fp16", "bf16") else 4


def _last_use(graph: Graph) -> dict[int, int]:
    last: dict[int, int] = {}
    for i, op in enumerate(graph.ops):
        for t in op.inputs:
            last[t] = i
    return last


def _saved_tensors(graph: Graph) -> dict[int, int]:
    """Tensor id -> index of the earliest op whose backward reads it (freed after that op's backward)."""
    saved: dict[int, int] = {}
    for i, op in enumerate(graph.ops):
        needed = (op.inputs if op.needs_input else []) + (op.outputs if op.needs_output else [])
        for t in needed:
            if t not in graph.inputs:
                saved[t] = min(saved.get(t, i), i)
    return saved


def simulate(graph: Graph, batch: int, precision: str, optimizer: str, mode: str,
             runtime_reserve_bytes: int = 0) -> Estimate:
    """Peak bytes of one training or inference step of ``graph`` (see the module docstring)."""
    p = prec.normalize(precision)
    opt = optimizer.lower()
    item = _act_itemsize(p)

    def nbytes(t: int) -> int:
        return graph.sizes[t] * batch * (4 if t in graph.float32_outputs else item)

    weights = graph.params * 4  # float32 master weights, also under mixed precision
    input_bytes = graph.input_elements * batch * 4
    last = _last_use(graph)
    if mode == "infer":
        live: dict[int, int] = {}
        peak_live = 0
        for i, op in enumerate(graph.ops):
            reuse = op.in_place and len(op.outputs) == 1 and op.inputs[0] in live and last.get(op.inputs[0]) == i \
                and graph.sizes[op.inputs[0]] == graph.sizes[op.outputs[0]]
            if reuse:
                live.pop(op.inputs[0])
            for t in op.outputs:
                live[t] = nbytes(t)
            workspace = CONV_WORKSPACE.get(op.kind, 0) * sum(nbytes(t) for t in op.inputs)
            peak_live = max(peak_live, sum(live.values()) + workspace)
            for t in op.inputs:
                if last.get(t) == i and t in live:
                    live.pop(t)
        tensor = weights + input_bytes + peak_live
        return Estimate(graph.name, batch, p, opt, mode, weights, 0, 0, peak_live, 0, input_bytes, tensor,
                        runtime_reserve_bytes, tensor + runtime_reserve_bytes)

    if opt not in OPTIMIZER_SLOTS:
        raise ParameterError(f"unknown optimizer {optimizer!r}; use one of {', '.join(OPTIMIZER_SLOTS)}")
    grads_total = graph.trainable_params * 4
    slots = OPTIMIZER_SLOTS[opt] * graph.trainable_params * 4
    saved = _saved_tensors(graph)
    # Forward: saved tensors stay; others die after their last reader; elementwise ops may
    # overwrite an input that nothing else reads.
    live: dict[int, int] = {}
    kept: dict[int, int] = {}
    extra_kept = 0
    peak_forward = 0
    for i, op in enumerate(graph.ops):
        reuse = op.in_place and len(op.outputs) == 1 and op.inputs and op.inputs[0] in live \
            and last.get(op.inputs[0]) == i and op.inputs[0] not in saved \
            and graph.sizes[op.inputs[0]] == graph.sizes[op.outputs[0]]
        if reuse:
            live.pop(op.inputs[0])
        for t in op.outputs:
            (kept if t in saved else live)[t] = nbytes(t)
        extra_kept += op.extra_saved * batch * item
        peak_forward = max(peak_forward, sum(live.values()) + sum(kept.values()) + extra_kept)
        for t in op.inputs:
            if last.get(t) == i and t in live:
                live.pop(t)
    activations = sum(kept.values()) + extra_kept
    # Backward, last op first: the gradient of an op's output and of its input are alive
    # together; weight gradients accumulate; saved tensors go once their earliest reader is done.
    remaining = dict(kept)
    remaining_extra = extra_kept
    peak_backward = 0
    transient_max = 0
    for i in range(len(graph.ops) - 1, -1, -1):
        op = graph.ops[i]
        transient = sum(nbytes(t) for t in op.outputs) + sum(nbytes(t) for t in op.inputs
                                                            if t not in graph.inputs)
        peak_backward = max(peak_backward, sum(remaining.values()) + remaining_extra + transient)
        transient_max = max(transient_max, transient)
        remaining_extra -= op.extra_saved * batch * item
        for t in [t for t, first in saved.items() if first == i]:
            remaining.pop(t, None)
    workspace = update_workspace(opt, graph.trainable_params * 4, graph.largest_variable * 4)
    tensor = weights + slots + input_bytes + max(peak_forward, peak_backward) + workspace
    return Estimate(graph.name, batch, p, opt, mode, weights, grads_total, slots, activations, transient_max,
                    input_bytes, tensor, runtime_reserve_bytes, tensor + runtime_reserve_bytes)


#: Bytes the gradients and the optimizer's update hold at the peak, as (share of the trainable
#: weights' bytes, multiples of the largest variable's bytes). TensorFlow updates a variable as
#: soon as its gradient is ready, so not every gradient is alive at once, and each update makes
#: temporaries of its variable's size. Fitted to TensorFlow 2.21's measured peaks over the
#: keras.applications grid of ``benchmarks/memory_accuracy.py``.
UPDATE_WORKSPACE_FIT = {"sgd": (0.19, 2.3), "momentum": (1.34, 1.1), "adam": (0.42, 2.5)}
# Refitting on later runs moves these by some hundredths (docs/memory-accuracy.md prints the
# refit and a leave-one-family-out check); the largest-variable term is the noisiest, because
# whether two updates' temporaries overlap varies from run to run.
#: Optimizers not measured take the closest measured one's terms.
_UPDATE_LIKE = {"nesterov": "momentum", "rmsprop": "momentum", "adagrad": "momentum", "lion": "momentum",
                "adamw": "adam", "adadelta": "adam", "adamax": "adam", "nadam": "adam"}
UPDATE_WORKSPACE = {k: UPDATE_WORKSPACE_FIT[_UPDATE_LIKE.get(k, k)][0] for k in OPTIMIZER_SLOTS}


def update_workspace(optimizer: str, trainable_bytes: int, largest_variable_bytes: int) -> int:
    """Bytes of gradients and update temporaries alive at the peak (see :data:`UPDATE_WORKSPACE_FIT`)."""
    share, largest = UPDATE_WORKSPACE_FIT[_UPDATE_LIKE.get(optimizer, optimizer)]
    return int(share * trainable_bytes + largest * largest_variable_bytes)


# --------------------------------------------------------------------------- transformers (closed form)


@dataclass(frozen=True)
class TransformerSpec:
    """A transformer by its shape; parameters and activations follow from it."""

    name: str
    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int
    seq_len: int
    decoder: bool
    gated_ffn: bool = False  # SwiGLU (three FFN matrices) as in LLaMA

    def params(self) -> int:
        h = self.hidden
        ffn = (3 if self.gated_ffn else 2) * h * self.ffn
        per_layer = 4 * h * h + ffn + 4 * h  # attention, FFN, two norms
        embeddings = self.vocab * h + (0 if self.gated_ffn else self.seq_len * h)
        head = self.vocab * h if self.gated_ffn else 0  # LLaMA does not tie its output head
        return self.layers * per_layer + embeddings + head


#: Built-in configurations (published model shapes).
TRANSFORMERS = {
    "bert-base": TransformerSpec("bert-base", 12, 768, 12, 3072, 30522, 512, decoder=False),
    "bert-large": TransformerSpec("bert-large", 24, 1024, 16, 4096, 30522, 512, decoder=False),
    "gpt2-small": TransformerSpec("gpt2-small", 12, 768, 12, 3072, 50257, 1024, decoder=True),
    "gpt2-medium": TransformerSpec("gpt2-medium", 24, 1024, 16, 4096, 50257, 1024, decoder=True),
    "llama-7b": TransformerSpec("llama-7b", 32, 4096, 32, 11008, 32000, 2048, decoder=True, gated_ffn=True),
}


def estimate_transformer(spec: TransformerSpec, batch: int, precision: str, optimizer: str, mode: str,
                         seq_len: int | None = None, runtime_reserve_bytes: int = 0) -> Estimate:
    """Closed-form bytes of a transformer step (see the module docstring for the source)."""
    p = prec.normalize(precision)
    s = seq_len or spec.seq_len
    if s > spec.seq_len and not spec.decoder:
        raise ParameterError(f"{spec.name} takes sequences of at most {spec.seq_len} tokens, not {s}")
    item = _act_itemsize(p)
    params = spec.params()
    weights = params * 4
    input_bytes = batch * s * 4 * (2 if mode == "train" else 1)  # token ids (and labels)
    logits = batch * s * spec.vocab * 4  # the output head computes in float32
    if mode == "infer":
        # One layer's working set at a time, plus the KV cache of a decoder.
        kv = 2 * spec.layers * batch * s * spec.hidden * item if spec.decoder else 0
        working = batch * s * (4 * spec.hidden + spec.ffn) * item + batch * spec.heads * s * s * item
        activations = working + kv + logits
        tensor = weights + input_bytes + activations
        return Estimate(spec.name, batch, p, "none", mode, weights, 0, 0, activations, 0, input_bytes, tensor,
                        runtime_reserve_bytes, tensor + runtime_reserve_bytes)
    opt = optimizer.lower()
    if opt not in OPTIMIZER_SLOTS:
        raise ParameterError(f"unknown optimizer {optimizer!r}; use one of {', '.join(OPTIMIZER_SLOTS)}")
    # Korthikanti et al.: 34 s b h + 5 a s^2 b bytes per layer at 2 bytes per element; scale the
    # 2-byte terms to the activation item size (the 1-byte dropout masks stay 1 byte).
    per_layer_16bit = 34 * s * batch * spec.hidden + 5 * spec.heads * s * s * batch
    masks = 2 * s * batch * spec.hidden + spec.heads * s * s * batch  # the 1-byte dropout masks
    per_layer = (per_layer_16bit - masks) * item // 2 + masks
    if spec.gated_ffn:  # SwiGLU keeps its gate: + 3 ffn-sized tensors per token instead of 2 of 4h
        per_layer += (3 * spec.ffn - 8 * spec.hidden) * s * batch * item
    activations = spec.layers * per_layer + 2 * logits  # logits and their softmax
    grads = params * 4
    slots = OPTIMIZER_SLOTS[opt] * params * 4
    transient = 2 * logits
    tensor = weights + slots + input_bytes + activations + grads
    return Estimate(spec.name, batch, p, opt, mode, weights, grads, slots, activations, transient, input_bytes,
                    tensor, runtime_reserve_bytes, tensor + runtime_reserve_bytes)


# --------------------------------------------------------------------------- models by name


def keras_application_names() -> list[str]:
    """Every model constructor in ``keras.applications`` (ResNet50, MobileNetV2, ...)."""
    from .device import quiet_tensorflow

    quiet_tensorflow()
    import keras

    names = []
    for attr in dir(keras.applications):
        obj = getattr(keras.applications, attr)
        if attr[:1].isupper() and callable(obj):
            names.append(attr)
    return sorted(names)


@dataclass(frozen=True)
class ModelSpec:
    """What to estimate: a Keras application (with input shape), a saved file, or a transformer."""

    name: str
    kind: str  # application | file | transformer
    input_shape: tuple[int, ...] | None = None
    classes: int = 1000


def resolve_model(name: str, input_shape: Sequence[int] | None = None, classes: int = 1000) -> ModelSpec:
    """Turn a user's model name into a :class:`ModelSpec`, with suggestions for a typo."""
    text = str(name).strip()
    if not text:
        raise UnknownModelError("empty model name; give a keras.applications name such as ResNet50")
    if text.endswith(".keras") or os.path.sep in text:
        path = Path(text)
        if not path.exists():
            raise UnknownModelError(f"model file {path} not found")
        return ModelSpec(str(path), "file")
    key = text.lower().replace("_", "-")
    if key in TRANSFORMERS:
        return ModelSpec(key, "transformer")
    apps = keras_application_names()
    by_lower = {a.lower(): a for a in apps}
    if text.lower() in by_lower:
        shape = tuple(input_shape) if input_shape else None
        if shape is not None and (len(shape) != 3 or min(shape) < 1):
            raise ParameterError(f"input shape {','.join(map(str, shape))} is not height,width,channels")
        return ModelSpec(by_lower[text.lower()], "application", shape, classes)
    choices = apps + list(TRANSFORMERS)
    close = difflib.get_close_matches(text, choices, n=3, cutoff=0.5) or \
        [by_lower[c] for c in difflib.get_close_matches(text.lower(), list(by_lower), n=3, cutoff=0.5)]
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise UnknownModelError(f"unknown model {name!r}; {hint}use a keras.applications name, a .keras file, "
                            f"or one of {', '.join(TRANSFORMERS)}")


def build_model(spec: ModelSpec):
    """The Keras model of a spec (random weights: gpukit never downloads weights)."""
    from .device import quiet_tensorflow

    quiet_tensorflow()
    import keras

    if spec.kind == "file":
        try:
            with warnings.catch_warnings():  # Keras's own NumPy 2 deprecation notice on load
                warnings.simplefilter("ignore", DeprecationWarning)
                return keras.models.load_model(spec.name, compile=False)
        except Exception as exc:  # noqa: BLE001 -- any unreadable file is the user's to fix
            raise GpukitError(f"cannot load model file {spec.name}: {str(exc).splitlines()[0]}") from None
    ctor = getattr(keras.applications, spec.name)
    kwargs = {"weights": None, "classes": spec.classes}
    if spec.input_shape:
        kwargs["input_shape"] = tuple(spec.input_shape)
    try:
        return ctor(**kwargs)
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0]
        raise ParameterError(f"{spec.name} cannot take input shape {spec.input_shape}: {first}") from None


def default_input_shape(model) -> tuple[int, ...]:
    return tuple(int(d) for d in model.inputs[0].shape[1:])


# --------------------------------------------------------------------------- the public estimate


class Estimator:
    """Estimates for one model at any batch size (the model is built and walked once)."""

    def __init__(self, model_name: str, input_shape: Sequence[int] | None = None, seq_len: int | None = None,
                 classes: int = 1000):
        self.spec = resolve_model(model_name, input_shape, classes)
        self.seq_len = seq_len
        self.graph: Graph | None = None
        self.transformer: TransformerSpec | None = None
        if self.spec.kind == "transformer":
            self.transformer = TRANSFORMERS[self.spec.name]
        else:
            model = build_model(self.spec)
            self.graph = graph_of(model)
            self.input_shape = default_input_shape(model)
            del model

    @property
    def name(self) -> str:
        return self.spec.name

    def estimate(self, batch: int, precision: str = "fp32", optimizer: str = "adam", mode: str = "train",
                 runtime_reserve_bytes: int = 0) -> Estimate:
        if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
            raise ParameterError(f"batch size {batch!r} must be a whole number of at least 1")
        if mode not in MODES:
            raise ParameterError(f"mode {mode!r}: use train or infer")
        if self.transformer is not None:
            return estimate_transformer(self.transformer, batch, precision, optimizer, mode, self.seq_len,
                                        runtime_reserve_bytes)
        return simulate(self.graph, batch, precision, optimizer, mode, runtime_reserve_bytes)

    def largest_batch(self, capacity_bytes: int, precision: str = "fp32", optimizer: str = "adam",
                      mode: str = "train", runtime_reserve_bytes: int = 0, limit: int = 1 << 20) -> int:
        """The largest batch whose ``total_bytes`` fits ``capacity_bytes`` (0 if not even one)."""
        def fits(b: int) -> bool:
            return self.estimate(b, precision, optimizer, mode, runtime_reserve_bytes).total_bytes <= capacity_bytes

        if not fits(1):
            return 0
        lo, hi = 1, 2
        while hi <= limit and fits(hi):
            lo, hi = hi, hi * 2
        if hi > limit:
            return limit
        while hi - lo > 1:  # fits(lo), not fits(hi)
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        return lo


def fit_table(estimator: Estimator, batches: Iterable[int], gpus, precision: str = "fp32",
              optimizer: str = "adam", mode: str = "train",
              runtime_reserve_bytes: int = DEFAULT_RUNTIME_RESERVE_BYTES):
    """One row per batch size x GPU: the estimate, the GPU's memory, fits, headroom, largest batch.

    ``gpus`` is a catalogue frame (e.g. :func:`gpukit.specs.select`).
    """
    import pandas as pd

    from .specs import memory_bytes

    p = prec.normalize(precision)
    rows = []
    largest: dict[str, int] = {}
    for b in batches:
        est = estimator.estimate(b, p, optimizer, mode, runtime_reserve_bytes)
        for _, g in gpus.iterrows():
            capacity = memory_bytes(g["memory_gb"])
            if g["gpu"] not in largest:
                largest[g["gpu"]] = estimator.largest_batch(capacity, p, optimizer, mode, runtime_reserve_bytes)
            rows.append({"model": estimator.name, "batch_size": b, "precision": p,
                         "optimizer": optimizer if mode == "train" else "none", "mode": mode,
                         "tensor_bytes": est.tensor_bytes, "total_bytes": est.total_bytes, "gpu": g["gpu"],
                         "gpu_memory_bytes": capacity, "fits": est.total_bytes <= capacity,
                         "headroom_bytes": capacity - est.total_bytes, "largest_batch": largest[g["gpu"]]})
    return pd.DataFrame(rows)


def fit_report(models: Sequence[str], batch_sizes: Sequence[int], gpus: Sequence[str] | None = None,
               precision: str = "fp32", optimizer: str = "adam", mode: str = "train",
               input_shape: Sequence[int] | None = None, seq_len: int | None = None,
               runtime_reserve_mib: float = DEFAULT_RUNTIME_RESERVE_BYTES / 2**20, catalogue=None):
    """:func:`fit_table` for several models and the named GPUs (all catalogue GPUs by default)."""
    import pandas as pd

    from . import specs

    if isinstance(models, str):
        models = [models]
    if not models:
        raise ParameterError("no models given; name at least one, such as ResNet50 or bert-base")
    batches = list(batch_sizes)
    for b in batches:
        if not isinstance(b, int) or isinstance(b, bool) or b < 1:
            raise ParameterError(f"batch size {b!r} must be a whole number of at least 1")
    cat = specs.load_catalogue() if catalogue is None else catalogue
    selection = specs.select(cat, list(gpus) if gpus else None)
    reserve = int(runtime_reserve_mib * 2**20)
    frames = [fit_table(Estimator(m, input_shape, seq_len), batches, selection, precision, optimizer, mode, reserve)
              for m in models]
    out = pd.concat(frames, ignore_index=True)
    out.attrs["runtime_reserve_bytes"] = reserve
    return out


def breakdown(models: Sequence[str], batch_sizes: Sequence[int], precision: str = "fp32", optimizer: str = "adam",
              mode: str = "train", input_shape: Sequence[int] | None = None, seq_len: int | None = None):
    """Where the bytes go, per model and batch size, in MiB."""
    import pandas as pd

    rows = []
    mib = 2**20
    for m in ([models] if isinstance(models, str) else models):
        est = Estimator(m, input_shape, seq_len)
        for b in batch_sizes:
            e = est.estimate(int(b), precision, optimizer, mode)
            rows.append({"model": e.model, "batch_size": b, "weights_mib": e.weights_bytes / mib,
                         "gradients_mib": e.gradients_bytes / mib, "optimizer_state_mib": e.optimizer_bytes / mib,
                         "activations_mib": e.activations_bytes / mib, "input_mib": e.input_bytes / mib,
                         "tensor_mib": e.tensor_bytes / mib})
    return pd.DataFrame(rows)


def fit_summary(fit):
    """The fit table in GiB, for reading."""
    gib = 2**30
    out = fit[["model", "batch_size", "gpu", "fits", "largest_batch"]].copy()
    out.insert(2, "total_gib", fit["total_bytes"] / gib)
    out.insert(4, "gpu_memory_gib", fit["gpu_memory_bytes"] / gib)
    out.insert(5, "headroom_gib", fit["headroom_bytes"] / gib)
    out["fits"] = out["fits"].map({True: "yes", False: "no"})
    return out


def with_measurements(frame, estimator: "Estimator", input_shape: Sequence[int] | None = None):
    """``frame`` (from :func:`fit_table`) with the measured peak of each model x batch on the
    attached device, the estimate's error, and on a GPU the real largest batch found by
    bisecting on out-of-memory."""
    import pandas as pd

    frame = frame.copy()
    measured: dict[int, dict] = {}
    for b in sorted(set(frame["batch_size"])):
        first = frame[frame["batch_size"] == b].iloc[0]
        measured[b] = measure_in_subprocess(estimator.name, int(b), first["precision"],
                                            first["optimizer"] if first["mode"] == "train" else "sgd",
                                            first["mode"], input_shape)
    frame["measured_peak_bytes"] = [measured[b].get("measured_peak_bytes") for b in frame["batch_size"]]
    frame["measured_status"] = [measured[b]["status"] for b in frame["batch_size"]]
    frame["estimate_error"] = [
        (t / m - 1) if m else None for t, m in zip(frame["tensor_bytes"], frame["measured_peak_bytes"])]
    frame["measured_device"] = [measured[b].get("device") for b in frame["batch_size"]]
    return pd.DataFrame(frame)


def format_fit(frame) -> str:
    """A readable fit report: per model and batch, the estimate and where it fits."""
    lines = []
    gib = 2**30
    for (model, batch), part in frame.groupby(["model", "batch_size"], sort=False):
        first = part.iloc[0]
        head = (f"{model}, batch {batch}, {first['mode']}, {first['precision']}"
                + (f", {first['optimizer']}" if first["mode"] == "train" else "")
                + f": tensors {first['tensor_bytes'] / gib:.2f} GiB, total {first['total_bytes'] / gib:.2f} GiB")
        if "measured_peak_bytes" in part and first.get("measured_peak_bytes"):
            head += (f"; measured {first['measured_peak_bytes'] / gib:.2f} GiB on {first['measured_device']} "
                     f"(estimate {first['estimate_error']:+.1%})")
        elif "measured_status" in part:
            head += f"; measurement: {first['measured_status']}"
        lines.append(head)
        fits = part[part["fits"]]
        lines.append("  fits on: " + (", ".join(f"{g} ({h / gib:.1f} GiB spare, up to batch {lb})"
                                                  for g, h, lb in zip(fits["gpu"], fits["headroom_bytes"],
                                                                      fits["largest_batch"]))
                                       if len(fits) else "nowhere"))
        misses = part[~part["fits"]]
        if len(misses):
            lines.append("  too big for: " + ", ".join(
                f"{g} ({-h / gib:.1f} GiB short, largest batch {lb})"
                for g, h, lb in zip(misses["gpu"], misses["headroom_bytes"], misses["largest_batch"])))
    return "\n".join(lines)


def bisect_largest_batch(model_name: str, precision: str = "fp32", optimizer: str = "adam", mode: str = "train",
                         input_shape: Sequence[int] | None = None, start: int = 1, limit: int = 4096) -> dict:
    """The largest batch that really runs on the attached GPU, by bisection on out-of-memory.

    GPU only: a CPU allocates from host memory and swaps before it fails, so there is nothing
    honest to bisect there (:class:`ParameterError`). Each probe runs in a fresh process.
    """
    from .device import quiet_tensorflow

    if not quiet_tensorflow().config.list_physical_devices("GPU"):
        raise ParameterError("bisecting on out-of-memory needs a GPU; this machine computes on its CPU")
    probes = []

    def ok(b: int) -> bool:
        r = measure_in_subprocess(model_name, b, precision, optimizer, mode, input_shape)
        probes.append((b, r["status"]))
        if r["status"] not in ("ok", "oom"):
            raise GpukitError(f"probe at batch {b} failed: {r.get('error')}")
        return r["status"] == "ok"

    if not ok(start):
        return {"largest_batch": 0, "probes": probes}
    lo, hi = start, start * 2
    while hi <= limit and ok(hi):
        lo, hi = hi, hi * 2
    if hi > limit:
        return {"largest_batch": lo, "probes": probes, "note": f"stopped at the limit {limit}"}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return {"largest_batch": lo, "probes": probes}


# --------------------------------------------------------------------------- measuring


def measure_peak(model_name: str, batch: int, precision: str = "fp32", optimizer: str = "adam",
                 mode: str = "train", input_shape: Sequence[int] | None = None, classes: int = 1000,
                 device: str | None = None) -> dict:
    """Run one real step on the attached device and read the allocator's peak.

    One training step of a ``tf.function``-compiled ``GradientTape`` loop (forward, loss,
    gradients, optimizer update) on synthetic data, or one inference call, after one untimed
    step; the peak is read from ``tf.config.experimental.get_memory_info`` after
    ``reset_memory_stats`` (this works for ``CPU:0`` too). Run it in a fresh process
    (:func:`measure_in_subprocess`) so earlier models do not share the allocator. On a CPU the
    peak moves by some percent from run to run (TensorFlow's thread pools free buffers in
    varying order); ``benchmarks/memory_accuracy.py`` shows by how much.
    """
    from .device import quiet_tensorflow
    from .workloads import train_step

    tf = quiet_tensorflow()
    import keras

    p = prec.normalize(precision)
    dev = device or ("GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0")
    keras.mixed_precision.set_global_policy(prec.KERAS_POLICY[p])
    spec = resolve_model(model_name, input_shape, classes)
    if spec.kind == "transformer":
        raise ParameterError("--measure runs Keras models; the built-in transformers are estimated only")
    with tf.device(dev):
        model = build_model(spec)
        shape = default_input_shape(model)
        x = tf.random.uniform((batch, *shape))
        n_out = int(model.outputs[0].shape[-1])
        y = tf.random.uniform((batch,), maxval=n_out, dtype=tf.int32)
        if mode == "train":
            opt = make_optimizer(optimizer)
            if p == "fp16":
                opt = keras.mixed_precision.LossScaleOptimizer(opt)
            step = train_step(tf, model, keras.losses.SparseCategoricalCrossentropy(), opt, x, y, xla=False)
        else:
            step = tf.function(lambda: model(x, training=False))

        step()  # builds optimizer slots and traces
        tf.config.experimental.reset_memory_stats(dev)
        before = tf.config.experimental.get_memory_info(dev)["current"]
        out = step()
        _ = out.numpy() if hasattr(out, "numpy") else out
        info = tf.config.experimental.get_memory_info(dev)
    return {"model": spec.name, "batch_size": batch, "precision": p, "optimizer": optimizer, "mode": mode,
            "device": dev, "measured_peak_bytes": int(info["peak"]), "resident_before_bytes": int(before)}


def make_optimizer(name: str):
    """A Keras optimizer by gpukit's optimizer name."""
    import keras

    n = name.lower()
    makers = {"sgd": lambda: keras.optimizers.SGD(0.01), "momentum": lambda: keras.optimizers.SGD(0.01, momentum=0.9),
              "nesterov": lambda: keras.optimizers.SGD(0.01, momentum=0.9, nesterov=True),
              "adam": keras.optimizers.Adam, "adamw": keras.optimizers.AdamW, "rmsprop": keras.optimizers.RMSprop,
              "adagrad": keras.optimizers.Adagrad, "adadelta": keras.optimizers.Adadelta,
              "adamax": keras.optimizers.Adamax, "nadam": keras.optimizers.Nadam, "lion": keras.optimizers.Lion}
    if n not in makers:
        raise ParameterError(f"unknown optimizer {name!r}; use one of {', '.join(OPTIMIZER_SLOTS)}")
    return makers[n]()


_MEASURE_MARK = "GPUKIT-MEMORY "
#: The measuring process uses TensorFlow's BFC allocator on the CPU too, the allocator GPUs
#: use: the CPU's default allocator leaves allocations under 256 KiB out of its statistics.
MEASURE_ENV = {"TF_CPU_ALLOCATOR_USE_BFC": "true"}


def measure_in_subprocess(model_name: str, batch: int, precision: str = "fp32", optimizer: str = "adam",
                          mode: str = "train", input_shape: Sequence[int] | None = None, classes: int = 1000,
                          timeout_s: float = 900) -> dict:
    """:func:`measure_peak` in a fresh Python, so nothing else shares the allocator.
    An out-of-memory becomes ``{"status": "oom"}``; another failure ``{"status": "error"}``."""
    import json
    import subprocess
    import sys

    from .device import QUIET_ENV

    args = json.dumps({"model_name": model_name, "batch": batch, "precision": precision, "optimizer": optimizer,
                       "mode": mode, "input_shape": list(input_shape) if input_shape else None,
                       "classes": classes})
    try:
        proc = subprocess.run([sys.executable, "-m", "gpukit.memory"], input=args, capture_output=True, text=True,
                              timeout=timeout_s, env={**os.environ, **QUIET_ENV, **MEASURE_ENV})
    except subprocess.TimeoutExpired:
        return {"status": "error", "error": f"timed out after {timeout_s:g} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_MEASURE_MARK):
            return json.loads(line[len(_MEASURE_MARK):])
    text = proc.stderr
    tail = ([ln for ln in text.strip().splitlines() if ln.strip()] or ["no output"])[-1]
    status = "oom" if ("ResourceExhausted" in text or "out of memory" in text.lower()) else "error"
    return {"status": status, "error": tail.strip()[:400]}


def _worker_main() -> None:
    import json
    import sys

    args = json.loads(sys.stdin.read())
    try:
        result = {"status": "ok", **measure_peak(**args)}
    except GpukitError as exc:
        result = {"status": "error", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 -- reported to the parent as a result
        text = f"{type(exc).__name__}: {exc}"
        result = {"status": "oom" if "ResourceExhausted" in text else "error", "error": text.splitlines()[0][:400]}
    sys.stdout.write(_MEASURE_MARK + json.dumps(result) + "\n")


if __name__ == "__main__":
    _worker_main()
