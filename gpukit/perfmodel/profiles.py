"""Per-op profiles of a workload: FLOPs, device-memory bytes and whether each op is a matrix multiply.

Keras models (ResNet-50, the BERT-like encoder, any ``keras.applications`` name) are profiled
from the layer walk (:func:`gpukit.graph.graph_of`) for the forward pass, the backward pass
(2x the forward FLOPs of a matrix multiply: input and weight gradients) and the optimizer
update; the synthetic benchmark workloads (matmul, conv, bandwidth) are one op each, with the
counts of :mod:`gpukit.bench.workloads`. Sizes default to the benchmark's GPU sizes
(:func:`gpukit.bench.workloads.sizes`).
"""

from __future__ import annotations

import difflib
import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import precision as prec
from ..bench import workloads as wl
from ..errors import ParameterError
from ..graph import graph_of, transformer_graph
from ..models import walk_cache
from ..models.registry import (
    TASKS,
    TRANSFORMERS,
    UnknownModelError,
    build_model,
    check_mode,
    keras_application_names,
    resolve_model,
    transformer_model,
    transformer_task,
)
from ..quiet import quiet_tensorflow


@dataclass(frozen=True)
class OpCost:
    """One kernel-group of a step: its FLOPs, device-memory bytes and the unit that runs it."""

    name: str
    kind: str
    phase: str  # forward | backward | update
    flops: float
    bytes: float
    matmul: bool
    kernels: int = 1
    stream: bool = False  # one pass over its operands at a streaming kernel's bandwidth (a fused update)
    reread: float = (
        0.0  # bytes it reads of the tensor the kernel before it has just written (L2 may hold them)
    )


@dataclass(frozen=True)
class Profile:
    """A workload at a batch size, precision and mode, as a list of op costs."""

    workload: str
    precision: str
    batch: int
    mode: str
    items_per_step: float
    throughput_unit: str
    ops: tuple[OpCost, ...]
    trainable_params: int = 0  # whose gradients several GPUs exchange every step
    host_ops: int = 0  # layer operations a framework dispatches from the host each step (0: single kernels)

    @functools.cached_property
    def flops(self) -> float:
        return sum(o.flops for o in self.ops)

    @functools.cached_property
    def bytes(self) -> float:
        return sum(o.bytes for o in self.ops)

    @functools.cached_property
    def arrays(self) -> dict[str, np.ndarray]:
        """The ops' FLOPs, bytes, re-read bytes and whether each is a plain stream, as arrays (what
        placing the profile on each GPU reads; a profile is immutable, so they are made once)."""
        return {
            "flops": np.array([o.flops for o in self.ops], float),
            "bytes": np.array([o.bytes for o in self.ops], float),
            "reread": np.array([o.reread for o in self.ops], float),
            "stream": np.array([o.kind == "Stream" or o.stream for o in self.ops], bool),
            "matmul": np.array([bool(o.matmul) for o in self.ops], bool),
        }

    @functools.cached_property
    def kernels(self) -> int:
        return sum(o.kernels for o in self.ops)

    @property
    def intensity(self) -> float:
        """Arithmetic intensity of the whole step (FLOP per byte)."""
        return self.flops / self.bytes if self.bytes else math.inf

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([o.__dict__ for o in self.ops])


#: Bytes per trainable parameter that an optimizer's update moves: read weight, gradient and
#: slots, write weight and slots (float32).
UPDATE_BYTES_PER_PARAM = {"sgd": 12, "momentum": 20, "adam": 28, "adamw": 28}
#: How the framework runs the optimizer's update: ``per-tensor`` (each variable's update a few
#: elementwise kernels, each a pass over its operands: Keras, PyTorch's ``torch.optim`` loops,
#: BERT's ``BertAdam``), priced like any elementwise op; or ``fused`` (one multi-tensor kernel
#: reads every weight, gradient and slot once and writes them once, as apex's ``FusedAdam``
#: does), at a streaming kernel's bandwidth and with no per-layer dispatch.
UPDATES = ("per-tensor", "fused")
#: Multiples of an elementwise layer's output bytes moved by its forward and backward passes.
#: Forward: read the input(s), write the output; batch normalisation in training also reads its
#: input once more for the batch statistics. Backward: read the output gradient and the saved
#: tensor, write the input gradient (batch normalisation: two passes, a reduction, then the
#: input gradient).
_TRAFFIC = {"BatchNormalization": (3, 5), "LayerNormalization": (3, 5)}
#: Arithmetic per output element of the CUDA-core layers (forward, backward), counting the
#: index and reduction work as well as the maths: small, but on GPUs with few CUDA cores for
#: their bandwidth it, not memory, sets the pace.
ELEMENTWISE_FLOPS = {
    "BatchNormalization": (8, 14),
    "LayerNormalization": (10, 16),
    "Activation": (2, 2),
    "ReLU": (1, 2),
    "Add": (1, 1),
    "MaxPooling2D": (9, 9),
    "GlobalAveragePooling2D": (1, 1),
    "Softmax": (5, 5),
}
_NO_TRAFFIC = {"InputLayer", "Flatten", "Reshape", "ZeroPadding2D", "Dropout", "Identity"}


def hidden_state_bytes(workload: str, batch: int, precision: str, seq_len: int | None = None) -> float:
    """Bytes of one layer's output of a built-in transformer workload (batch x tokens x hidden size, in
    the precision's activations; ``seq_len`` defaults to the workload's): what the on-chip cache
    term asks to fit in a GPU's L2."""
    task = transformer_task(workload)
    if task is None:
        raise ParameterError(f"{workload!r} is not a built-in transformer workload")
    spec, _, default_len = task
    return float(batch * (seq_len or default_len) * spec.hidden * prec.itemsize(prec.trainable(precision)))


def _just_written(graph, costed) -> tuple[list[int], list[bool]]:
    """Per costed op of a walk: the elements per example of its inputs that the op before it has
    just written (its forward pass), and whether the op after it reads its outputs (then its
    backward pass reads an output gradient the kernel before it, the next op's backward, has just
    written). Ops that move nothing (a reshape, a dropout the profile does not price) pass their
    input on."""
    alias = {}
    for op in graph.ops:
        if op.kind in _NO_TRAFFIC and not op.flops and op.inputs:
            alias.update({t: op.inputs[0] for t in op.outputs})

    def root(t):
        while t in alias:
            t = alias[t]
        return t

    written = [{root(t) for t in op.outputs} for op in costed]
    forward = [0] + [
        sum(graph.sizes[t] for t in op.inputs if root(t) in before) for op, before in zip(costed[1:], written)
    ]
    backward = [any(root(t) in mine for t in after.inputs) for mine, after in zip(written, costed[1:])] + [
        False
    ]
    return forward, backward


def _graph_profile(
    graph,
    name: str,
    batch: int,
    precision: str,
    mode: str,
    optimizer: str,
    unit: str,
    items_per_example: float,
    update: str = "per-tensor",
) -> Profile:
    """A layer walk as a profile: each op's forward pass and, in training, its backward pass
    (:func:`_op_costs`) and its weights' update (:func:`_update_cost`)."""
    item = prec.itemsize(precision)
    train = mode == "train"
    fused = update == "fused"
    ops: list[OpCost] = []
    costed = [op for op in graph.ops if not (op.kind in _NO_TRAFFIC and not op.flops)]
    fresh_fwd, fresh_bwd = _just_written(graph, costed)
    for op, fwd_fresh, bwd_fresh in zip(costed, fresh_fwd, fresh_bwd):
        ops += _op_costs(graph, op, batch, item, train, fwd_fresh, bwd_fresh)
        if train and op.trainable_params:
            ops.append(_update_cost(op, optimizer, item, fused))
    # a fused update is one dispatch for every variable, not one per layer
    host_ops = sum(1 for o in ops if not (fused and o.phase == "update")) + (1 if fused and train else 0)
    return Profile(
        name,
        precision,
        batch,
        mode,
        batch * items_per_example,
        unit,
        tuple(ops),
        int(graph.trainable_params) if train else 0,
        host_ops=host_ops,
    )


def _op_costs(graph, op, batch: int, item: int, train: bool, fwd_fresh: int, bwd_fresh: bool) -> list[OpCost]:
    """One op of a walk at ``batch`` examples of ``item`` bytes: its forward pass and, in training,
    its backward pass. ``fwd_fresh`` and ``bwd_fresh`` are what :func:`_just_written` says of it."""
    ins = sum(graph.sizes[t] for t in op.inputs) * batch * item
    outs = sum(graph.sizes[t] for t in op.outputs) * batch * item
    weights = op.params * item
    flops = op.flops * batch
    if op.matmul or op.kind == "DepthwiseConv2D":
        fwd_bytes = ins + outs + weights
        # backward: input gradient (read dY and W, write dX) and weight gradient (read dY
        # and X, write dW): 2x the forward FLOPs
        bwd_bytes = 2 * outs + ins * 2 + weights * 2
        bwd_flops, bwd_kernels = 2 * flops, 2
    else:
        f, b = _TRAFFIC.get(op.kind, (None, None))
        fwd_bytes = (ins + outs) if f is None or not train else f * outs
        bwd_bytes = (2 * outs + ins) if b is None else b * outs
        elements = sum(graph.sizes[t] for t in op.outputs) * batch
        per_fwd, per_bwd = ELEMENTWISE_FLOPS.get(op.kind, (1, 2))
        flops = flops or float(elements * per_fwd)
        bwd_flops, bwd_kernels = float(elements * per_bwd), 1
    elementwise = not (op.matmul or op.kind == "DepthwiseConv2D")
    forward = OpCost(
        op.name,
        op.kind,
        "forward",
        flops,
        float(fwd_bytes),
        op.matmul or False,
        reread=float(fwd_fresh * batch * item) if elementwise else 0.0,
    )
    if not train:
        return [forward]
    backward = OpCost(
        op.name,
        op.kind,
        "backward",
        float(bwd_flops),
        float(bwd_bytes),
        op.matmul,
        bwd_kernels,
        reread=float(outs if bwd_fresh and elementwise else 0.0),
    )
    return [forward, backward]


def _update_cost(op, optimizer: str, item: int, fused: bool) -> OpCost:
    """The optimizer's update of an op's trainable weights: per tensor, or as part of one fused kernel."""
    per = UPDATE_BYTES_PER_PARAM.get(optimizer, 20) + (2 if item == 2 else 0)
    return OpCost(
        op.name,
        op.kind,
        "update",
        2.0 * op.trainable_params,
        float(op.trainable_params * per),
        False,
        0 if fused else 1,
        fused,
    )


@functools.lru_cache(maxsize=16)
def _keras_graph(kind: str, key: tuple):
    """The walk of a Keras model, built once per configuration and kept on disk
    (:mod:`gpukit.models.walk_cache`: a later process reads it without loading TensorFlow). Walked without
    policies, the walk does not depend on the policy the model is built under."""
    return walk_cache.graph(f"perfmodel-{kind}", {"model": key}, lambda: _build_and_walk(kind, key))


def _build_and_walk(kind: str, key: tuple):
    quiet_tensorflow()
    if kind == "transformer":
        hidden, heads, ffn, layers, seq_len, vocab = key
        model = transformer_model(hidden, heads, ffn, layers, seq_len, vocab)
    else:
        name, shape = key
        model = build_model(resolve_model(name, shape))
    graph = graph_of(model)
    del model
    return graph


def _default_params() -> dict:
    """The benchmark's GPU sizes (:func:`gpukit.bench.workloads.sizes`, quick set) as profile parameters."""
    size = wl.sizes("gpu", quick=True)
    n = max(size["square"])
    h, w, ci, co = wl.CONV_LAYERS[0]
    return {
        "matmul": {"m": n, "n": n, "k": n},
        "conv": {
            "batch": size["conv_batch"],
            "height": h,
            "width": w,
            "in_channels": ci,
            "out_channels": co,
            "kernel": 3,
            "stride": 1,
        },
        "bandwidth": {"kernel": "scale", "elements": size["bandwidth_elements"]},
        "resnet50": dict(size["resnet50"]),
        "transformer": dict(size["transformer"]),
    }


#: Default sizes of each workload: the full-size benchmark configurations on a GPU.
DEFAULT_PARAMS = _default_params()
WORKLOADS = tuple(DEFAULT_PARAMS)


def profile(
    workload: str,
    batch: int | None = None,
    precision: str = "float32",
    mode: str = "train",
    optimizer: str = "momentum",
    update: str = "per-tensor",
    **params,
) -> Profile:
    """Profile ``workload`` (a benchmark workload or any ``keras.applications`` name).

    ``batch`` overrides the workload's default batch (for matmul: the rows ``m``); ``update`` is how
    the framework runs the optimizer's update (:data:`UPDATES`).
    """
    p = prec.trainable(precision)
    _check_arguments(mode, update, batch)
    name = str(workload).strip()
    key = name.lower()
    if key in ("matmul", "conv", "bandwidth"):
        return _kernel_profile(key, batch, p, params)
    if key == "transformer":
        q = {**DEFAULT_PARAMS["transformer"], **params}
        b = batch or q["batch"]
        graph = _keras_graph(
            "transformer", (q["hidden"], q["heads"], q["ffn"], q["layers"], q["seq_len"], q["vocab"])
        )
        return _graph_profile(graph, "transformer", b, p, mode, "adam", "tokens/s", q["seq_len"], update)
    task = transformer_task(key)
    if task:  # a built-in shape (and fine-tuning head), walked as its Keras-layer equivalent
        return _task_profile(key, task, batch, p, mode, update, params.get("seq_len"))
    if params.get("seq_len") is not None:
        raise ParameterError(
            f"{name} has no sequence length; --seq-len applies to the transformer workloads "
            f"(transformer, {', '.join(TRANSFORMERS)}, and those fine-tuned on SQuAD such as bert-base-squad)"
        )
    if key == "resnet50":
        q = {**DEFAULT_PARAMS["resnet50"], **params}
        b = batch or q["batch"]
        graph = _keras_graph("application", ("ResNet50", (q["image_size"], q["image_size"], 3)))
        return _graph_profile(graph, "resnet50", b, p, mode, optimizer, "images/s", 1, update)
    shape = tuple(params["input_shape"]) if params.get("input_shape") else None
    if name.lower() not in {a.lower() for a in keras_application_names()}:
        raise _unknown_workload(name, workload)
    graph = _keras_graph("application", (name, shape))
    return _graph_profile(graph, name, batch or 32, p, mode, optimizer, "examples/s", 1, update)


def _check_arguments(mode: str, update: str, batch) -> None:
    """Raise :class:`ParameterError` for a mode, update or batch size :func:`profile` does not take."""
    check_mode(mode)
    if update not in UPDATES:
        raise ParameterError(f"update {update!r}: use {' or '.join(UPDATES)}")
    if batch is not None and (not isinstance(batch, int) or isinstance(batch, bool) or batch < 1):
        raise ParameterError(f"batch size {batch!r} must be a whole number of at least 1")


def _kernel_profile(key: str, batch: int | None, precision: str, params: dict) -> Profile:
    """One of the benchmark's single kernels (matmul, conv, bandwidth) as a profile of one op, with
    the counts of :mod:`gpukit.bench.workloads`; its throughput is TFLOP/s, or GB/s for bandwidth."""
    item = prec.itemsize(precision)
    q = {**DEFAULT_PARAMS[key], **params}
    if key == "matmul":
        if batch:
            q["m"] = batch
        flops, nbytes = wl.matmul_counts(q["m"], q["n"], q["k"], item)
        op = OpCost("matmul", "MatMul", "forward", flops, nbytes, True)
        return Profile("matmul", precision, q["m"], "infer", flops / 1e12, "TFLOP/s", (op,))
    if key == "conv":
        if batch:
            q["batch"] = batch
        flops, nbytes = wl.conv2d_counts(
            q["batch"],
            q["height"],
            q["width"],
            q["in_channels"],
            q["out_channels"],
            q["kernel"],
            q["stride"],
            item,
        )
        op = OpCost("conv", "Conv2D", "forward", flops, nbytes, True)
        return Profile("conv", precision, q["batch"], "infer", flops / 1e12, "TFLOP/s", (op,))
    flops, nbytes = wl.bandwidth_counts(q["kernel"], q["elements"], 4)
    op = OpCost("bandwidth", "Stream", "forward", flops, nbytes, False)
    return Profile("bandwidth", precision, 1, "infer", nbytes / 1e9, "GB/s", (op,))


def _task_profile(
    key: str, task: tuple, batch: int | None, precision: str, mode: str, update: str, seq_len: int | None
) -> Profile:
    """A built-in transformer (``task``: :func:`gpukit.models.transformer_task` of ``key``) at
    ``seq_len`` tokens (its default where None), walked as its Keras-layer equivalent."""
    spec, head, default_len = task
    seq_len = int(default_len if seq_len is None else seq_len)
    if seq_len < 1 or (seq_len > spec.seq_len and not spec.decoder):
        raise ParameterError(f"{key} takes sequences of 1 to {spec.seq_len} tokens, not {seq_len}")
    # fine-tuning on SQuAD: 32 sequences a step (the fine-tuning batch of the BERT paper's recipe)
    unit, per_example, default_batch = ("sequences/s", 1, 32) if head == "span" else ("tokens/s", seq_len, 8)
    return _graph_profile(
        transformer_graph(spec, seq_len, head=head),
        key,
        batch or default_batch,
        precision,
        mode,
        "adam",
        unit,
        per_example,
        update,
    )


def _unknown_workload(name: str, workload) -> UnknownModelError:
    """The error for a workload no one knows, with the closest names."""
    tasks = [f"{t}-{k}" for t, spec in TRANSFORMERS.items() if not spec.decoder for k in TASKS]
    close = difflib.get_close_matches(
        name, list(WORKLOADS) + list(TRANSFORMERS) + tasks + keras_application_names(), n=3, cutoff=0.5
    )
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return UnknownModelError(
        f"unknown workload {workload!r}; {hint}use {', '.join(WORKLOADS)}, "
        f"a built-in transformer ({', '.join(TRANSFORMERS)}) or a keras.applications name"
    )
