"""The estimate: one step of a model simulated over its layer walk, without TensorFlow's allocator.

Keras models are walked layer by layer (:func:`gpukit.graph.graph_of`): each layer's parameters
and output size, and which tensors its backward pass needs (a convolution or dense layer needs
its input, a ReLU its output, batch normalisation its input…). Layers TensorFlow runs as several
kernels (attention, recurrent layers, normalisations, dropout) are walked as those kernels; what
each keeps was read off TensorFlow's own gradient graph and is checked against it in the tests.
The walk simulates the step (:func:`simulate`): the forward pass keeps what backward needs and frees
the rest after its last use; the loss writes the logits' gradient into the logits' buffer; the
backward pass frees saved tensors as it goes and accumulates weight gradients. An optimizer's
temporaries that read no gradient (momentum's ``m * momentum``) run as the step starts and wait
through it (:data:`gpukit.memory.update.PENDING_UPDATE_TEMPORARIES`). The peak of that simulation,
plus the optimizer's other update temporaries (:data:`gpukit.memory.update.UPDATE_WORKSPACE_FIT`, the
one fitted part), is the estimate, unless the largest embedding's update, which runs after the
backward pass, holds more.
Built-in transformer shapes are walked the same way without building them
(:func:`gpukit.graph.transformer_graph`): what TensorFlow keeps for their Keras-layer
equivalent. That is more than Korthikanti et al. (2022) count for Megatron's fused kernels (34 s
b h + 5 a s² b bytes a layer at 16 bits): Keras's exact GELU keeps three tensors, its
normalisations keep float32 copies, its unfused attention keeps Q, K, V and both the
probabilities and their dropout.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

from .. import precision as prec
from ..errors import ParameterError
from ..graph import Graph, Op, graph_of, transformer_graph
from ..models import walk_cache
from ..models.registry import (
    OPTIMIZER_SLOTS,
    TransformerSpec,
    build_model,
    check_mode,
    check_optimizer,
    default_input_shape,
    keras_policy,
    resolve_model,
    transformer_task,
)
from ..search import largest_passing
from ..units import MIB
from .family import family_of
from .update import pending_update_bytes, update_terms, with_update

#: CUDA context plus cuDNN/cuBLAS workspaces that a GPU process holds besides tensors. A CUDA
#: context costs roughly 300-500 MiB on recent drivers; the rest is workspace. Override it
#: with ``runtime_reserve_bytes`` where you measured your own.
DEFAULT_RUNTIME_RESERVE_BYTES = 1024 * MIB

#: The steps an estimate is of: a training step or an inference call.

#: Working copies of their input that convolution kernels hold while they run during inference,
#: in multiples of the input (TensorFlow 2.21's CPU kernels hold a padded copy for a regular
#: convolution; the depthwise ones showed none consistent across batch sizes).
CONV_WORKSPACE = {"Conv2D": 1}


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
    #: the forward and backward passes' own peak (activations, gradients in flight, the temporaries
    #: that wait for a gradient), without the fitted update terms (:data:`~gpukit.memory.update.UPDATE_WORKSPACE_FIT`)
    step_peak_bytes: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _last_use(graph: Graph, mode: str) -> dict[int, int]:
    """Tensor id -> index of the last op that reads it (or, in training, holds it)."""
    last: dict[int, int] = {}
    for i, op in enumerate(graph.ops):
        for t in op.inputs + (op.holds if mode == "train" else []):
            last[t] = i
    return last


def _saved_tensors(graph: Graph) -> dict[int, int]:
    """Tensor id -> index of the earliest op whose backward reads it (freed after that op's backward)."""
    saved: dict[int, int] = {}
    for i, op in enumerate(graph.ops):
        needed = (op.inputs if op.needs_input else []) + (op.outputs if op.needs_output else []) + op.keeps
        for t in needed:
            if t not in graph.inputs:
                saved[t] = min(saved.get(t, i), i)
    return saved


def _extra_bytes(op, batch: int, item: int) -> int:
    """Bytes an op keeps for its backward pass beyond the tensors of the graph."""
    per_example = (
        op.extra_saved * item + op.extra_saved_bytes + (op.extra_saved_mixed * item if item == 2 else 0)
    )
    return per_example * batch + (op.cast_saved_bytes if item == 2 else 0)


class _Held(dict):
    """Tensor id -> bytes, with the running total (``total``) a step's walk reads after every op."""

    def __init__(self, *args):
        super().__init__(*args)
        self.total = sum(self.values())

    def __setitem__(self, key, value):
        self.total += value - self.get(key, 0)
        super().__setitem__(key, value)

    def pop(self, key, *default):
        if key in self:
            self.total -= self[key]
        return super().pop(key, *default)


def logits_bytes(graph: Graph, batch: int) -> int:
    """The model's outputs (the logits) at ``batch``, in float32: what the loss keeps for the backward
    pass, its gradient written into their buffer (a run that cannot do so holds this once more)."""
    return sum(graph.sizes[t] for t in graph.outputs) * batch * 4


@dataclass(frozen=True)
class _Step:
    """What a step's walk reads besides the op at hand: the graph, the batch, the bytes of an element
    under the policy (2 or 4) and each tensor's last reader (:func:`_last_use`)."""

    graph: Graph
    batch: int
    item: int
    last: dict[int, int]

    def nbytes(self, t: int) -> int:
        """Bytes of tensor ``t`` at the batch: float32 where its op computes in float32."""
        return self.graph.sizes[t] * self.batch * (4 if t in self.graph.float32_outputs else self.item)


@dataclass(frozen=True)
class _Forward:
    """A training step's forward pass and loss: their peak, and what the backward pass starts with."""

    peak: int
    kept: _Held  # the saved tensors, by id
    extra_kept: int  # kept beyond the graph's tensors (:func:`_extra_bytes`, the 16-bit kernel casts)
    loss_kept: int  # the logits the loss keeps, their gradient written into their buffer

    @property
    def activations(self) -> int:
        return self.kept.total + self.extra_kept + self.loss_kept


def simulate(
    graph: Graph, batch: int, precision: str, optimizer: str, mode: str, runtime_reserve_bytes: int = 0
) -> Estimate:
    """Peak bytes of one training or inference step of ``graph`` (see the module docstring)."""
    p = prec.normalize(precision)
    opt = optimizer.lower()
    step = _Step(graph, batch, prec.itemsize(p), _last_use(graph, mode))
    weights = graph.params * 4  # float32 master weights, also under mixed precision
    input_bytes = graph.input_elements * batch * 4
    if mode == "infer":
        peak_live = _inference_peak(step)
        tensor = weights + input_bytes + peak_live
        return Estimate(
            graph.name,
            batch,
            p,
            opt,
            mode,
            weights,
            0,
            0,
            peak_live,
            0,
            input_bytes,
            tensor,
            runtime_reserve_bytes,
            tensor + runtime_reserve_bytes,
            peak_live,
        )

    opt = check_optimizer(opt)
    grads_total = graph.trainable_params * 4
    slots = OPTIMIZER_SLOTS[opt] * graph.trainable_params * 4
    # the update's temporaries that read no gradient run as the step starts and wait for it
    pending = pending_update_bytes(opt, graph.trainable_params * 4)
    saved = _saved_tensors(graph)
    forward = _training_forward(step, saved, pending)
    peak_backward, transient_max = _training_backward(step, opt, saved, forward, pending)
    step_peak = max(forward.peak, peak_backward)
    tensor = int(
        with_update(
            weights + slots + input_bytes,
            step_peak,
            graph.trainable_params * 4,
            graph.largest_variable * 4,
            graph.largest_embedding * 4,
            update_terms(opt),
        )
    )
    return Estimate(
        graph.name,
        batch,
        p,
        opt,
        mode,
        weights,
        grads_total,
        slots,
        forward.activations,
        transient_max,
        input_bytes,
        tensor,
        runtime_reserve_bytes,
        tensor + runtime_reserve_bytes,
        step_peak,
    )


def _inference_peak(step: _Step) -> int:
    """The most an inference step holds at once besides its weights and input: the live tensors,
    the running op's working copies (:func:`_forward_workspace`) and the kernel casts still waiting."""
    graph, item, last = step.graph, step.item, step.last
    live = _Held()
    peak_live = 0
    # a 16-bit policy's kernel casts read only variables, so they run as soon as the step
    # starts (a recurrent loop's first steps too) and each lives until its layer has run
    casts = [op.cast_bytes + op.cast_forward_bytes if item == 2 else 0 for op in graph.ops]
    pending_casts = sum(casts)
    for i, op in enumerate(graph.ops):
        reuse = (
            op.in_place
            and len(op.outputs) == 1
            and op.inputs[0] in live
            and last.get(op.inputs[0]) == i
            and graph.sizes[op.inputs[0]] == graph.sizes[op.outputs[0]]
        )
        if reuse:
            live.pop(op.inputs[0])
        for t in op.outputs:
            live[t] = step.nbytes(t)
        peak_live = max(peak_live, live.total + _forward_workspace(step, op) + pending_casts)
        pending_casts -= casts[i]
        for t in op.inputs:
            if last.get(t) == i and t in live:
                live.pop(t)
    return peak_live


def _forward_workspace(step: _Step, op: Op) -> int:
    """Bytes ``op`` holds while it runs in inference besides its outputs: a convolution's working copy
    of its input (:data:`CONV_WORKSPACE`), the workspace the walk gives it, and under a 16-bit policy a
    float32 layer's copy of its input."""
    batch, item = step.batch, step.item
    workspace = (
        CONV_WORKSPACE.get(op.kind, 0) * sum(step.nbytes(t) for t in op.inputs)
        + op.forward_workspace * batch * (4 if op.forward_workspace_f32 else item)
        + (op.forward_workspace_mixed * batch * item if item == 2 else 0)
    )
    if item == 2 and op.float32_compute and not op.forward_workspace:  # its float32 copy of the input
        workspace += sum(step.graph.sizes[t] for t in op.inputs) * batch * 4
    return workspace


def _training_forward(step: _Step, saved: dict[int, int], pending: int) -> _Forward:
    """A training step's forward pass and loss, with ``pending`` bytes of update temporaries waiting
    throughout. Saved tensors (``saved``, :func:`_saved_tensors`) stay; others die after their last
    reader; elementwise ops may overwrite an input that nothing else reads."""
    graph, batch, item, last = step.graph, step.batch, step.item, step.last
    live, kept = _Held(), _Held()
    # A 16-bit policy keeps the 16-bit copy of every kernel for the backward pass.
    extra_kept = graph.cast_bytes if item == 2 else 0
    peak_forward = 0
    for i, op in enumerate(graph.ops):
        reuse = (
            op.in_place
            and len(op.outputs) == 1
            and op.inputs
            and op.inputs[0] in live
            and last.get(op.inputs[0]) == i
            and op.inputs[0] not in saved
            and graph.sizes[op.inputs[0]] == graph.sizes[op.outputs[0]]
        )
        if reuse:
            live.pop(op.inputs[0])
        for t in op.outputs + op.keeps:
            (kept if t in saved else live)[t] = step.nbytes(t)
        extra_kept += _extra_bytes(op, batch, item)
        peak_forward = max(peak_forward, live.total + kept.total + extra_kept + pending)
        for t in op.inputs + op.holds:
            if last.get(t) == i and t in live:
                live.pop(t)
    # The loss (TensorFlow's fused softmax cross-entropy) writes the gradient of the logits into
    # the logits' own buffer and keeps it for the backward pass. (At some sizes a run now and then
    # holds both: docs/accuracy/memory.md shows it in the token-level models' ranges.)
    loss_kept = logits_bytes(graph, batch)
    for t in graph.outputs:
        live.pop(t, None)
        kept.pop(t, None)
    peak_forward = max(peak_forward, live.total + kept.total + extra_kept + loss_kept + pending)
    return _Forward(peak_forward, kept, extra_kept, loss_kept)


def _training_backward(
    step: _Step, optimizer: str, saved: dict[int, int], forward: _Forward, pending: int
) -> tuple[int, int]:
    """A training step's backward pass, last op first: its peak and the most gradients of activations
    in flight at one op. The gradient of an op's output and of its input are alive together; weight
    gradients accumulate; saved tensors go once their earliest reader is done, and each layer's
    waiting update temporaries (``pending`` in all) once its gradients are ready."""
    graph, batch, item = step.graph, step.batch, step.item
    remaining = _Held(forward.kept)
    freed_after: dict[int, list[int]] = {}  # op index -> the saved tensors its backward reads last
    for t, first in saved.items():
        freed_after.setdefault(first, []).append(t)
    loss_kept = forward.loss_kept
    remaining_extra = forward.extra_kept + loss_kept
    peak_backward = 0
    transient_max = 0
    for i in range(len(graph.ops) - 1, -1, -1):
        op = graph.ops[i]
        transient = _backward_transient(step, op)
        peak_backward = max(peak_backward, remaining.total + remaining_extra + transient + pending)
        transient_max = max(transient_max, transient)
        casts = op.cast_bytes if item == 2 else 0
        remaining_extra -= _extra_bytes(op, batch, item) + casts
        if any(t in graph.outputs for t in op.outputs):
            remaining_extra -= loss_kept
            loss_kept = 0
        for t in freed_after.get(i, ()):
            remaining.pop(t, None)
        pending -= pending_update_bytes(
            optimizer, op.trainable_params * 4
        )  # its gradients are ready: its update runs
    return peak_backward, transient_max


def _backward_transient(step: _Step, op: Op) -> int:
    """The gradients ``op``'s backward pass has in flight: of its outputs and of its inputs (the
    gradient of the logits is the loss's kept gradient, scaled in place), in float32 too where the op
    computes in float32 under a 16-bit policy."""
    graph, batch, item = step.graph, step.batch, step.item
    transient = (
        sum(step.nbytes(t) for t in op.outputs if t not in graph.outputs)
        + sum(step.nbytes(t) for t in op.inputs if t not in graph.inputs)
        + op.extra_transient * batch * item
    )
    if item == 2 and op.float32_compute:  # its gradients are computed in float32 and cast back
        transient += sum(graph.sizes[t] for t in op.outputs + op.inputs if t not in graph.inputs) * batch * 4
    return transient


@functools.lru_cache(maxsize=32)
def _transformer_graph(spec: TransformerSpec, seq_len: int, head: str = "lm") -> Graph:
    return transformer_graph(spec, seq_len, head=head)


def estimate_transformer(
    spec: TransformerSpec,
    batch: int,
    precision: str,
    optimizer: str,
    mode: str,
    seq_len: int | None = None,
    runtime_reserve_bytes: int = 0,
    head: str = "lm",
) -> Estimate:
    """Bytes of a built-in transformer's step: the walk of its Keras-layer equivalent
    (:func:`gpukit.graph.transformer_graph`, with its language-model ``head`` or a task's, such
    as SQuAD's span head) simulated as any Keras model; in inference a decoder also holds its
    key-value cache (2 x layers x tokens x hidden), as a generating server does."""
    p = prec.normalize(precision)
    s = seq_len or spec.seq_len
    if s > spec.seq_len and not spec.decoder:
        raise ParameterError(f"{spec.name} takes sequences of at most {spec.seq_len} tokens, not {s}")
    est = simulate(_transformer_graph(spec, int(s), head), batch, p, optimizer, mode, runtime_reserve_bytes)
    if mode != "infer" or not spec.decoder:
        return est
    kv = 2 * spec.layers * batch * s * spec.hidden * prec.itemsize(p)
    return replace(
        est,
        activations_bytes=est.activations_bytes + kv,
        tensor_bytes=est.tensor_bytes + kv,
        total_bytes=est.total_bytes + kv,
        step_peak_bytes=est.step_peak_bytes + kv,
    )


#: The Keras policy an :class:`Estimator` builds its model under for the walk: a 16-bit one, under
#: which a layer made with ``dtype="float32"`` (a head, as Keras's mixed-precision guide advises)
#: computes in float32 and every other in 16 bits. Which 16-bit type does not matter to the walk.
WALK_POLICY = "mixed_float16"


def _walk(spec) -> tuple[Graph, tuple[int, ...]]:
    """The walk of a Keras model and the shape of one example. A named model's walk is kept on disk
    (:mod:`gpukit.models.walk_cache`: a later process reads it without loading TensorFlow); a model file's
    is not (its contents can change under the same name)."""
    if spec.kind == "file":
        return _build_and_walk(spec)
    key = {"spec": asdict(spec), "policy": WALK_POLICY}
    kept = walk_cache.load_or_build("memory", key, lambda: _walk_record(*_build_and_walk(spec)))
    return walk_cache.graph_from_dict(kept["graph"]), tuple(kept["input_shape"])


def _walk_record(graph: Graph, input_shape: tuple[int, ...]) -> dict:
    return {"graph": walk_cache.graph_to_dict(graph), "input_shape": list(input_shape)}


def _build_and_walk(spec) -> tuple[Graph, tuple[int, ...]]:
    # built under a 16-bit policy, so that each layer's own says what stays float32
    with keras_policy(WALK_POLICY):
        model = build_model(spec)
    return graph_of(model, policies=True), default_input_shape(model)


class Estimator:
    """Estimates for one model at any batch size (the model is built and walked once)."""

    def __init__(
        self,
        model_name: str,
        input_shape: Sequence[int] | None = None,
        seq_len: int | None = None,
        classes: int = 1000,
    ):
        self.spec = resolve_model(model_name, input_shape, classes, seq_len)
        self.seq_len = seq_len
        self._estimates: dict[tuple, Estimate] = {}
        self.graph: Graph | None = None
        self.transformer: TransformerSpec | None = None
        self.head = "lm"
        if self.spec.kind == "transformer":  # a built-in shape, or one fine-tuned on a task
            self.transformer, self.head, task_len = transformer_task(self.spec.name)
            self.seq_len = seq_len or (task_len if self.head != "lm" else None)
        else:
            self.graph, self.input_shape = _walk(self.spec)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def label(self) -> str:
        """The model's name with the sizes it was built at, where not its defaults."""
        return self.spec.label()

    @property
    def input_label(self) -> str:
        """What one example of the batch is: ``512 tokens``, ``224x224x3 images``."""
        if self.transformer is not None:
            return f"{self.seq_len or self.transformer.seq_len} tokens"
        shape = "x".join(map(str, self.input_shape))
        if len(self.input_shape) == 1 and self.graph.largest_embedding:
            return f"{shape} tokens"
        return f"{shape} images" if len(self.input_shape) == 3 else f"inputs of {shape}"

    @property
    def family(self) -> str | None:
        """The family whose measured error applies to this model (:func:`family_of`)."""
        return family_of(self.graph, self.transformer)

    def estimate(
        self,
        batch: int,
        precision: str = "fp32",
        optimizer: str = "adam",
        mode: str = "train",
        runtime_reserve_bytes: int = 0,
    ) -> Estimate:
        if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
            raise ParameterError(f"batch size {batch!r} must be a whole number of at least 1")
        check_mode(mode)
        key = (batch, precision, optimizer, mode, runtime_reserve_bytes)
        if key not in self._estimates:  # a fit table or a ranking asks the same batches again
            if self.transformer is not None:
                found = estimate_transformer(
                    self.transformer,
                    batch,
                    precision,
                    optimizer,
                    mode,
                    self.seq_len,
                    runtime_reserve_bytes,
                    self.head,
                )
            else:
                found = simulate(self.graph, batch, precision, optimizer, mode, runtime_reserve_bytes)
            self._estimates[key] = found
        return self._estimates[key]

    def largest_batch(
        self,
        capacity_bytes: int,
        precision: str = "fp32",
        optimizer: str = "adam",
        mode: str = "train",
        runtime_reserve_bytes: int = 0,
        limit: int = 1 << 20,
        tensor_scale: float = 1.0,
    ) -> int:
        """The largest batch whose ``total_bytes`` fits ``capacity_bytes`` (0 if not even one).

        ``tensor_scale`` multiplies the tensors (not the runtime reserve) before the comparison:
        ``1 / (1 + error)`` is the peak a run reaches when the estimate is off by ``error``
        (:func:`gpukit.memory.bands.largest_batch_band`)."""

        def fits(b: int) -> bool:
            e = self.estimate(b, precision, optimizer, mode, runtime_reserve_bytes)
            return e.total_bytes - e.tensor_bytes + e.tensor_bytes * tensor_scale <= capacity_bytes

        return largest_passing(fits, 1, limit)
