"""Memory fit: how many bytes a model needs to train or infer at a batch size, and where it fits.

Two figures, in bytes:

* ``tensor_bytes`` — the peak of TensorFlow's allocator for this step's tensors: weights,
  gradients, optimizer slots, the activations kept for the backward pass, the transient
  gradients of activations, the input batch. It is what
  ``tf.config.experimental.get_memory_info(device)["peak"]`` reports, and what
  :func:`measure_peak` measures.
* ``total_bytes`` — ``tensor_bytes`` plus the runtime's own reserve on a GPU (CUDA context,
  cuDNN and cuBLAS workspaces), :data:`DEFAULT_RUNTIME_RESERVE_BYTES` unless overridden.

Keras models are walked layer by layer (:func:`gpukit.graph.graph_of`): each layer's parameters
and output size, and which tensors its backward pass needs (a convolution or dense layer needs
its input, a ReLU its output, batch normalisation its input…). Layers TensorFlow runs as several
kernels (attention, recurrent layers, normalisations, dropout) are walked as those kernels; what
each keeps was read off TensorFlow's own gradient graph and is checked against it in the tests.
The walk simulates the step: the forward pass keeps what backward needs and frees the rest after
its last use; the loss writes the logits' gradient into the logits' buffer; the backward pass
frees saved tensors as it goes and accumulates weight gradients. An optimizer's temporaries that
read no gradient (momentum's ``m * momentum``) run as the step starts and wait through it
(:data:`PENDING_UPDATE_TEMPORARIES`). The peak of that simulation, plus the optimizer's other
update temporaries (:data:`UPDATE_WORKSPACE_FIT`, the one fitted part), is the estimate, unless the
largest embedding's update, which runs after the backward pass, holds more.
Built-in transformer shapes are walked the same way without building them
(:func:`gpukit.graph.transformer_graph`): what TensorFlow keeps for their Keras-layer
equivalent. That is more than Korthikanti et al. (2022) count for Megatron's fused kernels (34 s
b h + 5 a s² b bytes a layer at 16 bits): Keras's exact GELU keeps three tensors, its
normalisations keep float32 copies, its unfused attention keeps Q, K, V and both the
probabilities and their dropout.

GPU memory is binary: a catalogue "24 GB" card holds 24 GiB (:func:`gpukit.specs.memory_bytes`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .. import precision as prec
from .. import runner
from ..errors import GpukitError, ParameterError
from ..graph import Graph, graph_of, transformer_graph
from ..models import (
    OPTIMIZER_SLOTS,
    TRANSFORMERS,
    TransformerSpec,
    build_model,
    check_optimizer,
    default_input_shape,
    keras_policy,
    make_optimizer,
    resolve_model,
    synthetic_batch,
    train_step,
)
from ..resources import DATA_DIR
from ..search import largest_passing

#: CUDA context plus cuDNN/cuBLAS workspaces that a GPU process holds besides tensors. A CUDA
#: context costs roughly 300-500 MiB on recent drivers; the rest is workspace. Override it
#: with ``runtime_reserve_bytes`` where you measured your own.
DEFAULT_RUNTIME_RESERVE_BYTES = 1024 * 2**20

MODES = ("train", "infer")

#: Working copies of their input that convolution kernels hold while they run during inference,
#: in multiples of the input (TensorFlow 2.21's CPU kernels hold a padded copy for a regular
#: convolution; the depthwise ones showed none consistent across batch sizes).
CONV_WORKSPACE = {"Conv2D": 1}


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
    #: the forward and backward passes' own peak (activations, gradients in flight, the temporaries
    #: that wait for a gradient), without the fitted update terms (:data:`UPDATE_WORKSPACE_FIT`)
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


def simulate(
    graph: Graph, batch: int, precision: str, optimizer: str, mode: str, runtime_reserve_bytes: int = 0
) -> Estimate:
    """Peak bytes of one training or inference step of ``graph`` (see the module docstring)."""
    p = prec.normalize(precision)
    opt = optimizer.lower()
    item = prec.itemsize(p)

    def nbytes(t: int) -> int:
        return graph.sizes[t] * batch * (4 if t in graph.float32_outputs else item)

    weights = graph.params * 4  # float32 master weights, also under mixed precision
    input_bytes = graph.input_elements * batch * 4
    last = _last_use(graph, mode)
    if mode == "infer":
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
                live[t] = nbytes(t)
            workspace = (
                CONV_WORKSPACE.get(op.kind, 0) * sum(nbytes(t) for t in op.inputs)
                + op.forward_workspace * batch * (4 if op.forward_workspace_f32 else item)
                + (op.forward_workspace_mixed * batch * item if item == 2 else 0)
            )
            if item == 2 and op.float32_compute and not op.forward_workspace:  # its float32 copy of the input
                workspace += sum(graph.sizes[t] for t in op.inputs) * batch * 4
            peak_live = max(peak_live, live.total + workspace + pending_casts)
            pending_casts -= casts[i]
            for t in op.inputs:
                if last.get(t) == i and t in live:
                    live.pop(t)
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
    # Forward: saved tensors stay; others die after their last reader; elementwise ops may
    # overwrite an input that nothing else reads.
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
            (kept if t in saved else live)[t] = nbytes(t)
        extra_kept += _extra_bytes(op, batch, item)
        peak_forward = max(peak_forward, live.total + kept.total + extra_kept + pending)
        for t in op.inputs + op.holds:
            if last.get(t) == i and t in live:
                live.pop(t)
    # The loss (TensorFlow's fused softmax cross-entropy) writes the gradient of the logits into
    # the logits' own buffer and keeps it for the backward pass. (At some sizes a run now and then
    # holds both: docs/memory-accuracy.md shows it in the token-level models' ranges.)
    loss_kept = logits_bytes(graph, batch)
    for t in graph.outputs:
        live.pop(t, None)
        kept.pop(t, None)
    peak_forward = max(peak_forward, live.total + kept.total + extra_kept + loss_kept + pending)
    activations = kept.total + extra_kept + loss_kept
    # Backward, last op first: the gradient of an op's output and of its input are alive
    # together; weight gradients accumulate; saved tensors go once their earliest reader is done.
    remaining = _Held(kept)
    freed_after: dict[int, list[int]] = {}  # op index -> the saved tensors its backward reads last
    for t, first in saved.items():
        freed_after.setdefault(first, []).append(t)
    remaining_extra = extra_kept + loss_kept
    peak_backward = 0
    transient_max = 0
    for i in range(len(graph.ops) - 1, -1, -1):
        op = graph.ops[i]
        # the gradient of the logits is the loss's kept gradient, scaled in place
        transient = (
            sum(nbytes(t) for t in op.outputs if t not in graph.outputs)
            + sum(nbytes(t) for t in op.inputs if t not in graph.inputs)
            + op.extra_transient * batch * item
        )
        if item == 2 and op.float32_compute:  # its gradients are computed in float32 and cast back
            transient += (
                sum(graph.sizes[t] for t in op.outputs + op.inputs if t not in graph.inputs) * batch * 4
            )
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
            opt, op.trainable_params * 4
        )  # its gradients are ready: its update runs
    step_peak = max(peak_forward, peak_backward)
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
        activations,
        transient_max,
        input_bytes,
        tensor,
        runtime_reserve_bytes,
        tensor + runtime_reserve_bytes,
        step_peak,
    )


#: Bytes the gradients and the optimizer's update hold at the peak, besides the temporaries that
#: wait for a gradient (:data:`PENDING_UPDATE_TEMPORARIES`), as (share of the trainable weights'
#: bytes, multiples of the largest dense-gradient variable's bytes, multiples of the largest
#: embedding table's bytes, multiples of the largest embedding table's bytes after the backward
#: pass). TensorFlow updates a variable as soon as its gradient is ready, so not every gradient is
#: alive at once, and each update makes temporaries of its variable's size; an embedding's gradient
#: is sparse (the rows a batch touched), and what an update makes of it depends on the optimizer
#: (SGD scatters it; Adam's moment updates densify it). The first three are added to the forward and
#: backward passes' peak. The last is a peak of its own: an embedding comes first in its model, so
#: its gradient is the backward pass's last and its update runs when the activations are gone. Where
#: the activations are small (small models, small batches) that is the step's peak: keras-textcnn at
#: batch 8 with Adam peaks at ``adam/UnsortedSegmentSum`` with its two table-sized densified
#: gradients alive and 0.5 MiB of the backward pass, and keras-encoder at batch 2 peaks in the
#: backward pass with none of the update's temporaries (TensorFlow's profiler, 2026-12-02,
#: ``benchmarks/memory_peaks.py``). The only fitted figures of the estimate: least squares on the
#: float32 training cases of ``benchmarks/memory_accuracy.py``, each term held within what the
#: update can physically hold (:func:`update_term_bounds`); docs/memory-accuracy.md prints the refit
#: of its last run and the error when a family is left out of the fit. Fitted on 2026-12-02 to the
#: grid whose every case records how it was measured (two inter-op threads; oneDNN's CPU kernels,
#: Eigen's for the LSTM and GRU; TensorFlow 2.21, Keras 3.15), with the waiting temporaries counted.
#: Only Adam's fit takes the update after the backward pass (3.58 tables: the two densified
#: gradients and the allocator's chunks around them); with it the grid has 234 of 242 cases within
#: 15% (232 with the first three terms alone), the median 3.9% either way: with Adam, keras-textcnn
#: at batch 2 moves from -12.8% to +2.3%, its bfloat16 training at batch 8 from +19.4% to +13.5%,
#: keras-encoder at batch 2 from +17.4% to +11.5%, and keras-bigru at batch 2 from -7.2% to -12.2%.
#: Held out (batch 4, not in the grid; Adam, two runs each, 2026-12-02): keras-encoder +7.4% (+11.8%
#: with the three terms), keras-bert +4.7% (+6.6%), keras-decoder +6.9% (+8.9%), keras-textcnn +12.5%
#: (-0.4%): its peak after the backward pass measured 26.5 to 32.7 MiB over batches 2 to 8 as the
#: allocator placed its chunks, which no term constant in the batch follows.
UPDATE_WORKSPACE_FIT = {
    "sgd": (0.51, 1.00, 0.60, 0.0),
    "momentum": (0.37, 1.17, 1.04, 0.0),
    "adam": (0.62, 1.49, 0.60, 3.58),
    "adamw": (1.61, 1.67, 0.0, 0.0),
    "rmsprop": (0.27, 2.69, 1.25, 0.0),
}
#: Variable-sized temporaries of an update that read no gradient, per trainable byte, counted in Keras
#: 3.15's ``update_step``: momentum's ``m * momentum`` (Nesterov's first one too) and RMSprop's
#: ``rho * velocity``; Adam, AdamW and plain SGD have none. TensorFlow runs them as soon as the step
#: starts and each waits for its variable's gradient, so all are alive through the forward pass and go
#: as the backward pass reaches each layer (:func:`simulate`). Measured (TensorFlow's profiler, the
#: allocator's live tensors at the peak, 2026-12-02): VGG16 at 64x64 and batch 8 with momentum holds
#: 167.8 MiB of ``sgd/Mul`` temporaries at its peak, its trainable weights' bytes to the tenth of a MiB;
#: keras-encoder at batch 8, with momentum or RMSprop, 5.48 MiB, its weights' bytes again.
PENDING_UPDATE_TEMPORARIES = {"momentum": 1, "rmsprop": 1}
#: The most variable-sized temporaries one variable's update keeps alive at once, counted in
#: Keras 3.15's ``update_step``: plain SGD makes one (``gradient * learning_rate``); momentum
#: three (``m * momentum``, ``gradient * learning_rate`` and their difference); Adam and AdamW
#: three (``m * alpha``, ``sqrt(v) + epsilon`` and their quotient; AdamW's decay first makes
#: two); RMSprop three (``rho * velocity``, ``square(gradient)`` scaled, their sum).
UPDATE_TEMPORARIES = {"sgd": 1, "momentum": 3, "adam": 3, "adamw": 3, "rmsprop": 3}


def update_term_bounds(optimizer: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Lower and upper bounds of the four :data:`UPDATE_WORKSPACE_FIT` terms: none below zero;
    at most every float32 gradient once plus each variable's temporaries (``1 + k``, were every
    update in flight together), the largest variable's ``k`` temporaries, and the largest
    embedding's densified gradient plus its ``k``, beside the backward pass or after it (``k`` from
    :data:`UPDATE_TEMPORARIES`)."""
    k = UPDATE_TEMPORARIES[_UPDATE_LIKE.get(optimizer, optimizer)]
    return (0.0, 0.0, 0.0, 0.0), (1.0 + k, float(k), 1.0 + k, 1.0 + k)


def bounded_least_squares(a, b, low, high):
    """``x`` minimising ``|a x - b|`` with ``low <= x <= high``, exactly, for a few unknowns: every
    split of them into held at a bound or free is solved and the best feasible one kept (a box
    least-squares optimum is the unconstrained optimum over its free unknowns)."""
    import itertools

    import numpy as np

    a, b = np.asarray(a, float), np.asarray(b, float)
    low, high = np.asarray(low, float), np.asarray(high, float)
    n = a.shape[1]
    if n > 8:
        raise ParameterError(f"bounded_least_squares enumerates 3^n cases; {n} unknowns is too many")
    best, best_x = None, None
    for state in itertools.product((0, 1, 2), repeat=n):  # at the low bound, free, at the high bound
        s = np.array(state)
        x = np.where(s == 0, low, np.where(s == 2, high, 0.0))
        if not np.all(np.isfinite(x)):
            continue  # no unknown is held at an infinite bound (an unbounded fit: high = inf)
        free = np.flatnonzero(s == 1)
        if free.size:
            x[free] = np.linalg.lstsq(a[:, free], b - a @ x, rcond=None)[0]
        if np.any(x < low - 1e-12) or np.any(x > high + 1e-12):
            continue
        cost = float(np.sum((a @ x - b) ** 2))
        if best is None or cost < best - 1e-15:
            best, best_x = cost, x
    return best_x


def fit_update_terms(sizes, measured, step_bytes, resident_bytes, low, high, resolution: float = 0.01):
    """The four :data:`UPDATE_WORKSPACE_FIT` terms of one optimizer, least squares on the relative
    error of ``resident + max(step + share T + largest L + sparse E, after E)`` over its cases.

    ``sizes`` holds each case's (trainable bytes T, largest variable's L, largest embedding's E);
    ``step_bytes`` its forward and backward passes' peak, ``resident_bytes`` its weights, slots and
    input. The terms beside the backward pass are fitted by :func:`bounded_least_squares` on the
    cases that peak there, the one after it by a search over its (finite) range in steps of
    ``resolution``; the two alternate, from the first three alone, until neither changes (each case's
    side follows from the terms: the result is a stationary point of the piecewise fit)."""
    import numpy as np

    a = np.asarray(sizes, float)
    y, step_peak = np.asarray(measured, float), np.asarray(step_bytes, float)
    resident = np.asarray(resident_bytes, float)
    base = step_peak + resident
    emb = a[:, 2]
    if not np.isfinite(high[3]):
        raise ParameterError(
            "fit_update_terms searches the update after the backward pass over its range: "
            "give it a finite upper bound"
        )
    grid = np.arange(low[3], high[3] + resolution / 2, resolution)
    after, x = float(low[3]), None
    for _ in range(100):
        beside = base + (a @ x if x is not None else 0.0)
        peaks_beside = beside >= resident + after * emb
        if peaks_beside.sum() < a.shape[1]:  # too few cases peak beside the backward pass to fit its terms
            peaks_beside[:] = True
        k = peaks_beside
        nx = bounded_least_squares(a[k] / y[k, None], (y[k] - base[k]) / y[k], low[:3], high[:3])
        costs = [
            float(np.sum(((with_update(resident, step_peak, *a.T, (*nx, g)) - y) / y) ** 2)) for g in grid
        ]
        nafter = float(grid[int(np.argmin(costs))])
        if x is not None and np.allclose(nx, x) and nafter == after:
            break
        x, after = nx, nafter
    return (*(float(v) for v in x), after)


#: Optimizers not measured take the closest measured one's terms.
_UPDATE_LIKE = {
    "nesterov": "momentum",
    "adagrad": "rmsprop",
    "lion": "momentum",
    "adadelta": "adam",
    "adamax": "adam",
    "nadam": "adam",
}


def pending_update_bytes(optimizer: str, trainable_bytes: int) -> int:
    """Bytes of ``optimizer``'s update temporaries that wait for the gradients of ``trainable_bytes``
    of weights (:data:`PENDING_UPDATE_TEMPORARIES`; an optimizer gpukit did not count, as the one it
    updates like)."""
    return PENDING_UPDATE_TEMPORARIES.get(_UPDATE_LIKE.get(optimizer, optimizer), 0) * trainable_bytes


def update_terms(optimizer: str) -> tuple[float, float, float, float]:
    """``optimizer``'s :data:`UPDATE_WORKSPACE_FIT` terms (an optimizer gpukit did not measure, those
    of the one it updates like)."""
    return UPDATE_WORKSPACE_FIT[_UPDATE_LIKE.get(optimizer, optimizer)]


def with_update(resident, step_peak, trainable, largest, embedding, terms):
    """A training step's peak with the optimizer's update: ``resident`` (weights, slots, input) plus the
    larger of the passes' peak with the update terms beside it and the largest embedding's update
    after it (``terms``: the four of :data:`UPDATE_WORKSPACE_FIT`; the sizes in bytes: trainable
    weights, largest variable, largest embedding table). Numbers or numpy arrays alike."""
    import numpy as np

    share, big, sparse, after = terms
    return resident + np.maximum(
        step_peak + share * trainable + big * largest + sparse * embedding, after * embedding
    )


# --------------------------------------------------------------------------- transformers (closed form)


@functools.lru_cache(maxsize=32)
def _transformer_graph(spec: TransformerSpec, seq_len: int) -> Graph:
    return transformer_graph(spec, seq_len)


def estimate_transformer(
    spec: TransformerSpec,
    batch: int,
    precision: str,
    optimizer: str,
    mode: str,
    seq_len: int | None = None,
    runtime_reserve_bytes: int = 0,
) -> Estimate:
    """Bytes of a built-in transformer's step: the walk of its Keras-layer equivalent
    (:func:`gpukit.graph.transformer_graph`) simulated as any Keras model; in inference a decoder
    also holds its key-value cache (2 x layers x tokens x hidden), as a generating server does."""
    p = prec.normalize(precision)
    s = seq_len or spec.seq_len
    if s > spec.seq_len and not spec.decoder:
        raise ParameterError(f"{spec.name} takes sequences of at most {spec.seq_len} tokens, not {s}")
    est = simulate(_transformer_graph(spec, int(s)), batch, p, optimizer, mode, runtime_reserve_bytes)
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


# --------------------------------------------------------------------------- the public estimate


#: The Keras policy an :class:`Estimator` builds its model under for the walk: a 16-bit one, under
#: which a layer made with ``dtype="float32"`` (a head, as Keras's mixed-precision guide advises)
#: computes in float32 and every other in 16 bits. Which 16-bit type does not matter to the walk.
WALK_POLICY = "mixed_float16"


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
        self.graph: Graph | None = None
        self.transformer: TransformerSpec | None = None
        if self.spec.kind == "transformer":
            self.transformer = TRANSFORMERS[self.spec.name]
        else:
            # built under a 16-bit policy, so that each layer's own says what stays float32
            with keras_policy(WALK_POLICY):
                model = build_model(self.spec)
            self.graph = graph_of(model, policies=True)
            self.input_shape = default_input_shape(model)
            del model

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
        if mode not in MODES:
            raise ParameterError(f"mode {mode!r}: use train or infer")
        if self.transformer is not None:
            return estimate_transformer(
                self.transformer, batch, precision, optimizer, mode, self.seq_len, runtime_reserve_bytes
            )
        return simulate(self.graph, batch, precision, optimizer, mode, runtime_reserve_bytes)

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
        (:func:`largest_batch_band`)."""

        def fits(b: int) -> bool:
            e = self.estimate(b, precision, optimizer, mode, runtime_reserve_bytes)
            return e.total_bytes - e.tensor_bytes + e.tensor_bytes * tensor_scale <= capacity_bytes

        return largest_passing(fits, 1, limit)


#: Per family of models, the estimate's measured error band (``benchmarks/memory_accuracy.py``
#: writes it): the fit verdict is "borderline" where a GPU's memory falls inside it.
ERROR_BANDS_PATH = DATA_DIR / "memory_error.csv"
CNN_FAMILY = "CNN (keras.applications)"


def family_of(graph: Graph | None, spec: TransformerSpec | None = None) -> str | None:
    """The family of models whose measured error applies, from the layers a model has: the families
    of ``benchmarks/memory_accuracy.py``'s grid, which groups its models by this function too (a 1-D
    convolution ahead of a recurrent layer is its convolutional text model, keras-textcnn)."""
    if spec is not None:
        return "causal decoder" if spec.decoder else "transformer encoder"
    kinds = {op.kind for op in graph.ops}
    if kinds & {"LSTM", "GRU", "SimpleRNN"}:
        return "convolutional text" if "Conv1D" in kinds else "recurrent"
    if "Softmax" in kinds and "BatchMatMul" in kinds:
        causal = any(op.kind == "Softmax" and op.extra_saved_bytes for op in graph.ops)
        if causal:
            return "causal decoder"
        return "vision transformer" if kinds & {"Conv2D"} else "transformer encoder"
    if "Conv1D" in kinds:
        return "convolutional text"
    if kinds & {"Conv2D", "DepthwiseConv2D", "SeparableConv2D"}:
        return CNN_FAMILY
    return None


def _band_row(r: dict) -> dict:
    return {
        "cases": int(r["cases"]),
        "median_abs_error": float(r["median_abs_error"]),
        "worst_abs_error": float(r["worst_abs_error"]),
        "error_low": float(r["error_low"]),
        "error_high": float(r["error_high"]),
        "measured_on": r["measured_on"],
        "date": r["date"],
    }


def _band_rows(path: Path) -> list[dict]:
    import csv

    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@functools.lru_cache(maxsize=1)
def error_bands() -> dict[tuple[str, str], dict]:
    """``data/memory_error.csv`` by (family, mode): cases, median and worst |error|, the band
    (estimate / measured - 1 over every measured run), where and when it was measured. A family's
    training and inference are banded apart: an inference step holds less, and other things, than
    a training step (the grid's inference errors run wider), so a training fit is judged by the
    family's training cases alone."""
    return {(r["family"], r["mode"]): _band_row(r) for r in _band_rows(ERROR_BANDS_PATH)}


#: Zoo models measured as the grid's cases are but kept out of its figures and families' bands
#: (``benchmarks/memory_accuracy.py --outside``): each one's own measured error, per precision
#: (``--model-bands`` writes it). Where a model has one, ``gpukit fit`` quotes and uses it in place of
#: its family's, which was measured on other models and does not cover it.
MODEL_BANDS_PATH = DATA_DIR / "memory_error_models.csv"


@functools.lru_cache(maxsize=1)
def model_error_bands() -> dict[tuple[str, str], dict]:
    """``data/memory_error_models.csv`` by (zoo model, precision): the band of :func:`error_bands`,
    measured on that model itself."""
    return {(r["model"], r["precision"]): _band_row(r) for r in _band_rows(MODEL_BANDS_PATH)}


#: How the error scope names a mode.
MODE_WORDS = {"train": "training", "infer": "inference"}


def error_band(estimator: Estimator, precision: str, mode: str = "train") -> tuple[str | None, dict | None]:
    """The measured error that applies to ``estimator``'s model in ``precision`` and ``mode``, and
    what it was measured on: the model's own where it was measured apart from the grid
    (:func:`model_error_bands`), else its family's in that mode (:func:`error_bands`: "transformer
    encoder, training"), else ``(family, None)``."""
    if mode not in MODES:
        raise ParameterError(f"mode {mode!r}: use train or infer")
    p = prec.normalize(precision)
    p = "fp32" if prec.itemsize(p) == 4 else p  # TF32 or not, the tensors hold the same bytes
    own = model_error_bands().get((estimator.name.lower(), p))
    if own is not None:
        return f"{estimator.name} itself in {p} (measured outside the grid)", own
    family = estimator.family
    if not family:
        return None, None
    band = error_bands().get((family, mode))
    return (f"{family}, {MODE_WORDS[mode]}" if band else family), band


def verdict(total_bytes: int, tensor_bytes: int, capacity_bytes: int, band: dict | None) -> str:
    """``fits``, ``borderline`` or ``does not fit``: with the family's band, the peak a run may
    reach lies between ``tensor_bytes / (1 + error_high)`` and ``tensor_bytes / (1 + error_low)``
    (plus the runtime reserve); a GPU whose memory falls in that range is borderline."""
    reserve = total_bytes - tensor_bytes
    scales = band_scales(band)
    if scales is None:
        return "fits" if total_bytes <= capacity_bytes else "does not fit"
    most, least = (reserve + tensor_bytes * f for f in scales)
    if capacity_bytes >= max(most, total_bytes):
        return "fits"
    if capacity_bytes < min(least, total_bytes):
        return "does not fit"
    return "borderline"


def band_scales(band: dict | None) -> tuple[float, float] | None:
    """The factors from the estimate to the highest and the lowest peak a run may reach, given a
    family's error band (estimate / measured - 1 between ``error_low`` and ``error_high``); the
    estimate itself always lies between them. :func:`verdict` and :func:`largest_batch_band` use them."""
    if band is None or band.get("error_low") is None or band["error_low"] != band["error_low"]:
        return None
    return 1 / (1 + min(band["error_low"], 0.0)), 1 / (1 + max(band["error_high"], 0.0))


def largest_batch_band(
    estimator: Estimator,
    capacity_bytes: int,
    band: dict | None,
    precision: str = "fp32",
    optimizer: str = "adam",
    mode: str = "train",
    runtime_reserve_bytes: int = 0,
) -> tuple[int, int] | tuple[None, None]:
    """The largest batch within the family's measured error: the one that fits even if the run
    peaks as far above the estimate as any measured run did, and the one that fits only if it
    peaks as far below. ``(None, None)`` for a model whose family was never measured."""
    scales = band_scales(band)
    if scales is None:
        return None, None
    most, least = scales
    return (
        estimator.largest_batch(
            capacity_bytes, precision, optimizer, mode, runtime_reserve_bytes, tensor_scale=most
        ),
        estimator.largest_batch(
            capacity_bytes, precision, optimizer, mode, runtime_reserve_bytes, tensor_scale=least
        ),
    )


#: The columns of a fit table that :func:`error_note` reads after the scope, in its order.
ERROR_COLUMNS = ("error_low", "error_high", "median_abs_error", "error_cases")


def fit_table(
    estimator: Estimator,
    batches: Iterable[int],
    gpus,
    precision: str = "fp32",
    optimizer: str = "adam",
    mode: str = "train",
    runtime_reserve_bytes: int = DEFAULT_RUNTIME_RESERVE_BYTES,
):
    """One row per batch size x GPU: the estimate, the GPU's memory, fits, headroom, largest batch
    (and, where the model's family was measured, ``largest_batch_low`` to ``largest_batch_high``:
    the largest batch within the estimate's measured error, :func:`largest_batch_band`).

    ``gpus`` is a catalogue frame (e.g. :func:`gpukit.specs.select`).
    """
    import pandas as pd

    from ..specs import memory_bytes

    p = prec.normalize(precision)
    rows = []
    largest: dict[str, int] = {}
    largest_band: dict[str, tuple] = {}
    family = estimator.family
    scope, band = error_band(estimator, p, mode)
    for b in batches:
        est = estimator.estimate(b, p, optimizer, mode, runtime_reserve_bytes)
        for _, g in gpus.iterrows():
            capacity = memory_bytes(g["memory_gb"])
            if g["gpu"] not in largest:
                largest[g["gpu"]] = estimator.largest_batch(
                    capacity, p, optimizer, mode, runtime_reserve_bytes
                )
                largest_band[g["gpu"]] = largest_batch_band(
                    estimator, capacity, band, p, optimizer, mode, runtime_reserve_bytes
                )
            rows.append(
                {
                    "model": estimator.label,
                    "input": estimator.input_label,
                    "batch_size": b,
                    "precision": p,
                    "optimizer": optimizer if mode == "train" else "none",
                    "mode": mode,
                    "tensor_bytes": est.tensor_bytes,
                    "total_bytes": est.total_bytes,
                    "gpu": g["gpu"],
                    "gpu_memory_bytes": capacity,
                    "fits": est.total_bytes <= capacity,
                    "verdict": verdict(est.total_bytes, est.tensor_bytes, capacity, band),
                    "headroom_bytes": capacity - est.total_bytes,
                    "largest_batch": largest[g["gpu"]],
                    "largest_batch_low": largest_band[g["gpu"]][0],
                    "largest_batch_high": largest_band[g["gpu"]][1],
                    "family": family,
                    "error_scope": scope,
                    "error_low": band["error_low"] if band else None,
                    "error_high": band["error_high"] if band else None,
                    "median_abs_error": band["median_abs_error"] if band else None,
                    "error_cases": band["cases"] if band else None,
                }
            )
    return pd.DataFrame(rows)


def fit_report(
    models: Sequence[str],
    batch_sizes: Sequence[int],
    gpus: Sequence[str] | None = None,
    precision: str = "fp32",
    optimizer: str = "adam",
    mode: str = "train",
    input_shape: Sequence[int] | None = None,
    seq_len: int | None = None,
    runtime_reserve_mib: float = DEFAULT_RUNTIME_RESERVE_BYTES / 2**20,
    catalogue=None,
):
    """:func:`fit_table` for several models and the named GPUs (all catalogue GPUs by default)."""
    import pandas as pd

    from .. import specs

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
    frames = [
        fit_table(Estimator(m, input_shape, seq_len), batches, selection, precision, optimizer, mode, reserve)
        for m in models
    ]
    out = pd.concat(frames, ignore_index=True)
    out.attrs["runtime_reserve_bytes"] = reserve
    return out


def breakdown(
    models: Sequence[str],
    batch_sizes: Sequence[int],
    precision: str = "fp32",
    optimizer: str = "adam",
    mode: str = "train",
    input_shape: Sequence[int] | None = None,
    seq_len: int | None = None,
):
    """Where the bytes go, per model and batch size, in MiB."""
    import pandas as pd

    rows = []
    mib = 2**20
    for m in [models] if isinstance(models, str) else models:
        est = Estimator(m, input_shape, seq_len)
        for b in batch_sizes:
            e = est.estimate(int(b), precision, optimizer, mode)
            rows.append(
                {
                    "model": e.model,
                    "batch_size": b,
                    "weights_mib": e.weights_bytes / mib,
                    "gradients_mib": e.gradients_bytes / mib,
                    "optimizer_state_mib": e.optimizer_bytes / mib,
                    "activations_mib": e.activations_bytes / mib,
                    "input_mib": e.input_bytes / mib,
                    "tensor_mib": e.tensor_bytes / mib,
                }
            )
    return pd.DataFrame(rows)


def fit_summary(fit):
    """The fit table in GiB, for reading."""
    gib = 2**30
    band = [c for c in ("largest_batch_low", "largest_batch_high") if c in fit]
    out = fit[["model", "batch_size", "gpu", "fits", "largest_batch", *band]].copy()
    out.insert(2, "total_gib", fit["total_bytes"] / gib)
    out.insert(4, "gpu_memory_gib", fit["gpu_memory_bytes"] / gib)
    out.insert(5, "headroom_gib", fit["headroom_bytes"] / gib)
    verdicts = fit["verdict"] if "verdict" in fit else fit["fits"].map({True: "fits", False: "does not fit"})
    out["fits"] = verdicts.map({"fits": "yes", "does not fit": "no", "borderline": "borderline"})
    out["estimate_error"] = [
        error_note(*args)
        for args in zip(fit["error_scope"], *(fit.get(c, [None] * len(fit)) for c in ERROR_COLUMNS))
    ]
    return out


def batch_range(low, high) -> str:
    """``low`` to ``high`` largest batches as text ('' where the family was never measured)."""
    if low is None or high is None or low != low or high != high:
        return ""
    return f"{int(low)}" if int(low) == int(high) else f"{int(low)}–{int(high)}"


def error_note(
    family: str | None, low: float | None, high: float | None, median: float | None, cases: int | None = None
) -> str:
    """The measured error of a model's family (the scope :func:`error_band` names), for a table
    cell; with ``cases``, how many measured cases the band is drawn from."""
    if not family:
        return "not graded (no measured family)"
    if low is None or low != low:
        return f"{family}: not measured"
    over = (
        "" if cases is None or cases != cases else f" over {int(cases)} case{'s' if int(cases) != 1 else ''}"
    )
    return f"{family}: median {median:.0%}, {low:+.0%} to {high:+.0%}{over}"


def with_measurements(
    frame,
    estimator: Estimator,
    input_shape: Sequence[int] | None = None,
    repeats: int = 1,
    probe: Callable[..., dict] | None = None,
):
    """``frame`` (from :func:`fit_table`) with the measured peak of each model x batch on the
    attached device and the estimate's error. Each batch is measured ``repeats`` times, each run
    in a fresh process (``probe``, default :func:`measure_in_subprocess`): the allocator's peak
    moves from run to run (docs/memory-accuracy.md shows by how much), so the estimate is compared
    with the median run and the lowest and highest are shown (:func:`summarize_runs`)."""
    import pandas as pd

    if repeats < 1:
        raise ParameterError(f"--repeats {repeats} must be at least 1")
    probe = probe or measure_in_subprocess
    frame = frame.copy()
    measured: dict[int, dict] = {}
    for b in sorted(set(frame["batch_size"])):
        first = frame[frame["batch_size"] == b].iloc[0]
        measured[b] = summarize_runs(
            [
                probe(
                    estimator.name,
                    int(b),
                    first["precision"],
                    first["optimizer"] if first["mode"] == "train" else "sgd",
                    first["mode"],
                    input_shape,
                    seq_len=estimator.seq_len,
                )
                for _ in range(repeats)
            ]
        )
    for column in (
        "measured_peak_bytes",
        "measured_low_bytes",
        "measured_high_bytes",
        "measured_runs",
        "measured_status",
        "measured_device",
        "measured_native_16bit",
    ):
        frame[column] = [measured[b][column] for b in frame["batch_size"]]
    frame["estimate_error"] = [
        (t / m - 1) if m else None for t, m in zip(frame["tensor_bytes"], frame["measured_peak_bytes"])
    ]
    return pd.DataFrame(frame)


def summarize_runs(runs: Sequence[dict]) -> dict:
    """Several measurements of one case (:func:`measure_in_subprocess` results) as one: the median
    peak of the runs that completed, the lowest and highest, how many completed, and the status,
    ``ok`` when every run completed, else the first other status with the count
    (``oom in 1 of 3 runs``: a case that runs out of memory only sometimes is borderline)."""
    import statistics

    ok = [r for r in runs if r.get("status") == "ok"]
    peaks = [int(r["measured_peak_bytes"]) for r in ok]
    failed = [r for r in runs if r.get("status") != "ok"]
    status = (
        "ok"
        if not failed
        else (
            failed[0].get("status", "error")
            if len(failed) == len(runs)
            else f"{failed[0].get('status', 'error')} in {len(failed)} of {len(runs)} runs"
        )
    )
    return {
        "measured_peak_bytes": int(statistics.median(peaks)) if peaks else None,
        "measured_low_bytes": min(peaks) if peaks else None,
        "measured_high_bytes": max(peaks) if peaks else None,
        "measured_runs": len(peaks),
        "measured_status": status,
        "measured_device": ok[0].get("device") if ok else None,
        "measured_native_16bit": ok[0].get("native_16bit") if ok else None,
    }


def copies_note(precision: str, native_16bit: Sequence[str] | None) -> str | None:
    """What a measurement in a 16-bit ``precision`` on a CPU whose 16-bit instructions were
    ``native_16bit`` (:func:`gpukit.device.cpu_native_16bit`; None: not a CPU, or not recorded)
    holds that a GPU does not, in words; None where nothing."""
    p = prec.normalize(precision)
    if native_16bit is None or prec.itemsize(p) != 2 or p in native_16bit:
        return None
    return (
        f"this CPU has no {p} dot-product instructions, so TensorFlow multiplies through float32 copies "
        "a GPU does not hold"
    )


def _size(n: float, like: float | None = None, unit: bool = True) -> str:
    """``n`` bytes in the unit that reads best for ``like`` (default ``n``): GiB from 1 GiB up,
    MiB below (a small model's step); ``unit=False`` leaves the unit off (the low end of a range)."""
    scale, name, digits = (2**30, "GiB", 2) if (like or n) >= 2**30 else (2**20, "MiB", 1)
    return f"{n / scale:.{digits}f}" + (f" {name}" if unit else "")


def format_fit(frame) -> str:
    """A readable fit report: per model and batch, the estimate and where it fits."""
    lines = []
    gib = 2**30
    for (model, batch), part in frame.groupby(["model", "batch_size"], sort=False):
        first = part.iloc[0]
        head = (
            f"{model}, {first['input']}, batch {batch}, {first['mode']}, {first['precision']}"
            + (f", {first['optimizer']}" if first["mode"] == "train" else "")
            + f": tensors {_size(first['tensor_bytes'])}, total {_size(first['total_bytes'])}"
        )
        if "measured_peak_bytes" in part and first.get("measured_peak_bytes"):
            runs = int(first.get("measured_runs") or 1)
            low, high = first["measured_low_bytes"], first["measured_high_bytes"]
            spread = f" ({_size(low, high, unit=False)}–{_size(high)} over {runs} runs)" if runs > 1 else ""
            head += (
                f"; measured {_size(first['measured_peak_bytes'])}{spread} on {first['measured_device']} "
                f"(estimate {first['estimate_error']:+.1%}{' of the median' if runs > 1 else ''})"
            )
            if first["measured_status"] != "ok":
                head += f"; {first['measured_status']}"
            lacks = copies_note(first["precision"], first.get("measured_native_16bit"))
            if lacks:
                head += f"; {lacks}"
        elif "measured_status" in part:
            head += f"; measurement: {first['measured_status']}"
        lines.append(head)
        if first["error_scope"]:
            lines.append(
                "  estimate's measured error: "
                + error_note(first["error_scope"], *(first.get(c) for c in ERROR_COLUMNS))
            )
        verdicts = (
            part["verdict"] if "verdict" in part else part["fits"].map({True: "fits", False: "does not fit"})
        )
        fits = part[verdicts == "fits"]
        ranges = [
            batch_range(lo, hi)
            for lo, hi in zip(
                part.get("largest_batch_low", [None] * len(part)),
                part.get("largest_batch_high", [None] * len(part)),
            )
        ]
        within = {g: f"; {r} within the measured error" if r else "" for g, r in zip(part["gpu"], ranges)}
        lines.append(
            "  fits on: "
            + (
                ", ".join(
                    f"{g} ({h / gib:.1f} GiB spare, up to batch {lb}{within[g]})"
                    for g, h, lb in zip(fits["gpu"], fits["headroom_bytes"], fits["largest_batch"])
                )
                if len(fits)
                else "nowhere"
            )
        )
        close = part[verdicts == "borderline"]
        if len(close):
            lines.append(
                "  borderline (within the estimate's measured error): "
                + ", ".join(
                    f"{g} ({h / gib:+.1f} GiB)" for g, h in zip(close["gpu"], close["headroom_bytes"])
                )
            )
        misses = part[verdicts == "does not fit"]
        if len(misses):
            lines.append(
                "  too big for: "
                + ", ".join(
                    f"{g} ({-h / gib:.1f} GiB short, largest batch {lb})"
                    for g, h, lb in zip(misses["gpu"], misses["headroom_bytes"], misses["largest_batch"])
                )
            )
    return "\n".join(lines)


def bisect_largest_batch(
    model_name: str,
    precision: str = "fp32",
    optimizer: str = "adam",
    mode: str = "train",
    input_shape: Sequence[int] | None = None,
    start: int = 1,
    limit: int = 4096,
    probe: Callable[..., dict] | None = None,
    seq_len: int | None = None,
) -> dict:
    """The largest batch that really runs on the attached GPU, by bisection on out-of-memory.

    GPU only: a CPU allocates from host memory and swaps before it fails, so there is nothing
    honest to bisect there (:class:`ParameterError`). Each probe is
    :func:`measure_in_subprocess` (a fresh process) unless ``probe`` replaces it; an out-of-memory
    in any of TensorFlow's forms means "too large", any other failure stops the bisection.
    """
    from ..device import physical_gpus

    if not physical_gpus():
        raise ParameterError("bisecting on out-of-memory needs a GPU; this machine computes on its CPU")
    probes = []
    probe = probe or measure_in_subprocess

    def ok(b: int) -> bool:
        r = probe(
            model_name,
            b,
            precision,
            optimizer,
            mode,
            input_shape,
            **({"seq_len": seq_len} if seq_len else {}),
        )
        probes.append((b, r["status"]))
        if r["status"] not in ("ok", "oom"):
            raise GpukitError(f"probe at batch {b} failed: {r.get('error')}")
        return r["status"] == "ok"

    largest = largest_passing(ok, start, limit)
    found = {"largest_batch": largest, "probes": probes}
    if largest == limit:
        found["note"] = f"stopped at the limit {limit}"
    return found


# --------------------------------------------------------------------------- measuring


#: Warm-up steps a float16 measurement runs until the loss scale lets an update through.
MAX_SKIPPED_STEPS = 40


def loss_for(model):
    """The loss a user trains ``model`` with: sparse categorical cross-entropy, on the logits
    unless the model ends in a softmax."""
    import keras

    last = model.layers[-1]
    probabilities = getattr(getattr(last, "activation", None), "__name__", "") == "softmax"
    return keras.losses.SparseCategoricalCrossentropy(from_logits=not probabilities)


def measure_peak(
    model_name: str,
    batch: int,
    precision: str = "fp32",
    optimizer: str = "adam",
    mode: str = "train",
    input_shape: Sequence[int] | None = None,
    classes: int = 1000,
    device: str | None = None,
    seq_len: int | None = None,
    profile_top: int = 0,
) -> dict:
    """Run one real step on the attached device and read the allocator's peak.

    With ``profile_top`` the measured step runs under TensorFlow's profiler, and ``peak_profile``
    says what the allocator held at its peak (:func:`live_at_peak`: by phase, and the largest
    ``profile_top`` tensors by the op that made them).

    One training step of a ``tf.function``-compiled ``GradientTape`` loop (forward, loss,
    gradients, optimizer update) on synthetic data, or one inference call, after one untimed
    step; the peak is read from ``tf.config.experimental.get_memory_info`` after
    ``reset_memory_stats`` (this works for ``CPU:0`` too). Run it in a fresh process
    (:func:`measure_in_subprocess`) so earlier models do not share the allocator. On a CPU the
    peak moves by some percent from run to run (TensorFlow's thread pools free buffers in
    varying order); ``benchmarks/memory_accuracy.py`` shows by how much.
    """
    from ..device import cpu_native_16bit, quiet_tensorflow

    tf = quiet_tensorflow()
    import keras

    p = prec.normalize(precision)
    dev = device or ("GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0")
    spec = resolve_model(model_name, input_shape, classes, seq_len)
    if spec.kind == "transformer":
        raise ParameterError("--measure runs Keras models; the built-in transformers are estimated only")
    with keras_policy(prec.keras_policy(p)), tf.device(dev):
        model = build_model(spec)
        x, y = synthetic_batch(tf, model, batch)
        if mode == "train":
            opt = make_optimizer(optimizer)
            if p == "fp16":
                opt = keras.mixed_precision.LossScaleOptimizer(opt)
            # The optimizer's slots are made inside the first (untimed) step, as the shipped grid
            # was measured; made beforehand, as Keras's fit() does, some models peak a few per
            # cent lower (BERT-shaped bf16 Adam 93 against 97 MiB, MobileNetV2 fp16 150 against 156)
            step = train_step(tf, model, loss_for(model), opt, x, y, xla=False, build_first=False)
        else:
            step = tf.function(lambda: model(x, training=False))

        step()  # builds optimizer slots and traces
        if mode == "train" and p == "fp16":
            # A dynamic loss scale starts high and skips updates until the gradients are finite;
            # measure a step that updates, as every step of a real run but the first few does.
            for _ in range(MAX_SKIPPED_STEPS):
                if int(opt.inner_optimizer.iterations.numpy()) > 0:
                    break
                step()
        tf.config.experimental.reset_memory_stats(dev)
        before = tf.config.experimental.get_memory_info(dev)["current"]
        with _profiled(tf, profile_top) as trace:
            out = step()
            _ = out.numpy() if hasattr(out, "numpy") else out
        info = tf.config.experimental.get_memory_info(dev)
    threads = os.environ.get("TF_NUM_INTEROP_THREADS", "")
    result = {
        "model": spec.label(),
        "batch_size": batch,
        "precision": p,
        "optimizer": optimizer,
        "mode": mode,
        "device": dev,
        "measured_peak_bytes": int(info["peak"]),
        "resident_before_bytes": int(before),
        "inter_op_threads": int(threads) if threads.isdigit() else None,
        "onednn": onednn_enabled(),
        "native_16bit": cpu_native_16bit() if dev.startswith("CPU") else None,
    }
    if profile_top:
        scopes = (
            {o.name for o in (opt, getattr(opt, "inner_optimizer", None)) if o is not None}
            if mode == "train"
            else set()
        )
        result["peak_profile"] = live_at_peak(_memory_events(trace["xspace"]), scopes, profile_top)
    return result


@contextlib.contextmanager
def _profiled(tf, enabled: bool):
    """TensorFlow's profiler over the block where ``enabled`` (``trace["xspace"]``: the bytes of its
    XSpace, read before its temporary folder goes)."""
    trace: dict = {}
    if not enabled:
        yield trace
        return
    import glob
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gpukit-profile-") as logdir:
        options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=3)
        tf.profiler.experimental.start(logdir, options=options)
        try:
            yield trace
        finally:
            tf.profiler.experimental.stop()
            files = sorted(glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True))
            if files:
                with open(files[-1], "rb") as fh:
                    trace["xspace"] = fh.read()
            else:
                trace["xspace"] = b""


def _memory_events(xspace: bytes) -> list[tuple[int, str, dict]]:
    """The allocator's ``MemoryAllocation``/``MemoryDeallocation`` events of a profiler XSpace, in time
    order, as (picoseconds, name, stats)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(xspace)
    events = []
    for plane in space.planes:
        names, stat_names = plane.event_metadata, plane.stat_metadata
        for line in plane.lines:
            for ev in line.events:
                kind = names[ev.metadata_id].name
                if kind not in ("MemoryAllocation", "MemoryDeallocation"):
                    continue
                stats = {}
                for st in ev.stats:
                    which = st.WhichOneof("value")
                    value = getattr(st, which)
                    stats[stat_names[st.metadata_id].name] = (
                        stat_names[value].name if which == "ref_value" else value
                    )
                events.append((line.timestamp_ns * 1000 + ev.offset_ps, kind, stats))
    return sorted(events, key=lambda e: e[0])


#: The phases :func:`live_at_peak` sorts a step's tensors into, by the name scope of the op that made
#: them: the optimizer's update (its name), the backward pass (``gradient_tape``), the rest.
PEAK_PHASES = ("forward and other", "backward", "optimizer")


def live_at_peak(
    events: Sequence[tuple[int, str, dict]], optimizer_scopes: Iterable[str] = (), top: int = 10
) -> dict:
    """What the allocator held when its use peaked, from its allocation events (:func:`_memory_events`:
    stats ``addr``, ``bytes_allocated`` after the event, ``requested_bytes``, ``tf_op``, ``shape``).
    Only what the profiled step allocated: what was resident before it is not in the events.
    Returns the peak (the allocator's own count of bytes in use, ``bytes_allocated``), the op whose
    allocation reached it, the tensors' bytes by phase (:data:`PEAK_PHASES`), the bytes of the chunks
    the allocator held them in (``chunk_bytes``: its ``allocation_bytes``, a chunk being up to twice
    what was asked for) and the ``top`` largest (op, shape, bytes), a tensor's bytes summed over
    allocations of one op and shape."""
    scopes = tuple(s for s in optimizer_scopes if s)
    live: dict = {}
    peak, at, held = -1, None, {}
    for _, kind, stats in events:
        if kind == "MemoryAllocation":
            live[stats.get("addr")] = stats
        else:
            live.pop(stats.get("addr"), None)
        in_use = int(stats.get("bytes_allocated", 0))
        if in_use > peak:
            peak, at, held = in_use, stats.get("tf_op"), dict(live)
    phases = dict.fromkeys(PEAK_PHASES, 0)
    largest: dict = {}
    chunks = 0
    for stats in held.values():
        chunks += int(stats.get("allocation_bytes", stats.get("requested_bytes", 0)))
        op, nbytes = str(stats.get("tf_op", "")), int(stats.get("requested_bytes", 0))
        root = op.split("/", 1)[0]
        phase = (
            "optimizer" if root in scopes else "backward" if root == "gradient_tape" else "forward and other"
        )
        phases[phase] += nbytes
        key = (op, str(stats.get("shape", "")))
        largest[key] = largest.get(key, 0) + nbytes
    ranked = sorted(largest.items(), key=lambda kv: -kv[1])[:top]
    return {
        "peak_bytes": max(peak, 0),
        "at_op": at,
        "phases": phases,
        "chunk_bytes": chunks,
        "largest": [{"op": op, "shape": shape, "bytes": n} for (op, shape), n in ranked],
    }


def onednn_enabled() -> bool | None:
    """Whether this process's TensorFlow runs its CPU kernels through oneDNN (None where it cannot
    tell). TensorFlow decides once per process, from ``TF_ENABLE_ONEDNN_OPTS`` or, unset, from the
    CPU (:data:`MEASURE_ONEDNN`)."""
    try:
        from tensorflow.python.util import _pywrap_util_port
    except ImportError:  # a TensorFlow without the query
        return None
    return bool(_pywrap_util_port.IsMklEnabled())


#: The fewest inter-op threads (TensorFlow's executor pool) a measurement runs with. The count
#: decides the order a recurrent loop's ready steps run in: with one, an LSTM's backward loop
#: runs its time steps far ahead of its weight-gradient accumulation, each step holding a
#: kernel-sized gradient, and peaks at two to seven times what it does with two or more, at every
#: batch, more the larger its kernels (``benchmarks/rnn_runahead.py``). Two or more is TensorFlow's
#: default wherever there are two cores; a measurement takes at least two so that a one-core
#: machine measures the same.
MEASURE_INTER_OP_THREADS = 2

#: ``TF_ENABLE_ONEDNN_OPTS`` for a measurement: TensorFlow's CPU kernels through oneDNN. TensorFlow
#: turns them on by default only on x86 CPUs with AVX-512 VNNI/BF16, AVX-VNNI or AMX
#: (``DefaultOneDnnPolicy`` in ``tensorflow/core/util/util.cc``); elsewhere its Eigen kernels run,
#: and their convolution gradients hold buffers of their own that the estimate does not count and
#: a GPU does not allocate: on an AVX2 CPU the text CNN at batch 8 (plain SGD) peaks at 25-27 MiB
#: with Eigen against 11-16 MiB with oneDNN (estimate 16.9), the small ViT at batch 2 (adam) at
#: 12-13 MiB against 6.6-7.0 (estimate 7.0); docs/memory-accuracy.md compares every Keras-layer
#: case. A measurement runs oneDNN wherever it runs, so that two machines measure the same kernels;
#: models with LSTM or GRU layers run Eigen's (:data:`MEASURE_ONEDNN_RECURRENT`).
MEASURE_ONEDNN = "1"

#: ``TF_ENABLE_ONEDNN_OPTS`` for a model with an LSTM or GRU layer (:data:`FUSED_RECURRENT_LAYERS`):
#: Eigen's kernels. With oneDNN's, the LSTM's backward loop runs its steps ahead of its
#: weight-gradient accumulation in some runs even with two inter-op threads, each step holding a
#: kernel-sized gradient: keras-lstm at batch 2 (adam, estimate 35.9 MiB) with two busy processes
#: beside it measured 42-116 MiB with oneDNN's kernels (three of four runs more than two kernels
#: ahead) and 32.6-37.3 MiB with Eigen's (docs/memory-rnn-runahead-busy-*.md). A GPU runs these
#: layers as one cuDNN kernel and accumulates nothing per step; Eigen's kernels reproduce the loop
#: that keeps up, which the estimate counts.
MEASURE_ONEDNN_RECURRENT = "0"

#: Keras's recurrent layers a GPU runs as one cuDNN kernel (in their default configuration).
FUSED_RECURRENT_LAYERS = frozenset({"LSTM", "GRU"})


def has_fused_recurrent_layers(model_name: str) -> bool:
    """Whether a Keras-layer model (a :mod:`gpukit.zoo` name or a ``.keras`` file) has a layer of
    :data:`FUSED_RECURRENT_LAYERS`, wrapped (``Bidirectional``) or not; read without TensorFlow,
    so that a measuring process can be started with the kernels that suit it. False for anything
    else, an unreadable file included (the measurement then says what is wrong with it)."""
    from .. import zoo

    name = str(model_name).strip()
    key = name.lower().replace("_", "-")
    if key in zoo.ZOO:
        return bool(zoo.recurrent_layers(key) & FUSED_RECURRENT_LAYERS)
    if not name.endswith(".keras"):
        return False
    try:
        with zipfile.ZipFile(name) as archive:
            config = json.loads(archive.read("config.json"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return False
    return bool(_class_names(config) & FUSED_RECURRENT_LAYERS)


def _class_names(node) -> set[str]:
    """Every ``class_name`` in a Keras model config, nested layers (wrappers, sub-models) included."""
    if isinstance(node, list):
        return set().union(*map(_class_names, node)) if node else set()
    if not isinstance(node, dict):
        return set()
    own = {node["class_name"]} if isinstance(node.get("class_name"), str) else set()
    return own.union(*map(_class_names, node.values()))


def measure_env(inter_op_threads: int | None = None, model_name: str | None = None) -> dict[str, str]:
    """The measuring process's environment: TensorFlow's BFC allocator on the CPU too, the
    allocator GPUs use (the CPU's default one leaves allocations under 256 KiB out of its
    statistics), ``inter_op_threads`` executor threads (default: ``TF_NUM_INTEROP_THREADS``
    where the user set it, else the machine's cores, at least :data:`MEASURE_INTER_OP_THREADS`),
    and TensorFlow's CPU kernels: oneDNN's (:data:`MEASURE_ONEDNN`), Eigen's for a model with
    LSTM or GRU layers (:data:`MEASURE_ONEDNN_RECURRENT`), unless the user set ``TF_ENABLE_ONEDNN_OPTS``."""
    threads = (
        inter_op_threads
        or os.environ.get("TF_NUM_INTEROP_THREADS")
        or max(MEASURE_INTER_OP_THREADS, os.cpu_count() or 1)
    )
    kernels = (
        MEASURE_ONEDNN_RECURRENT if model_name and has_fused_recurrent_layers(model_name) else MEASURE_ONEDNN
    )
    return {
        "TF_CPU_ALLOCATOR_USE_BFC": "true",
        "TF_NUM_INTEROP_THREADS": str(threads),
        "TF_ENABLE_ONEDNN_OPTS": os.environ.get("TF_ENABLE_ONEDNN_OPTS") or kernels,
    }


def measure_in_subprocess(
    model_name: str,
    batch: int,
    precision: str = "fp32",
    optimizer: str = "adam",
    mode: str = "train",
    input_shape: Sequence[int] | None = None,
    classes: int = 1000,
    timeout_s: float = 900,
    seq_len: int | None = None,
    inter_op_threads: int | None = None,
    profile_top: int = 0,
) -> dict:
    """:func:`measure_peak` in a fresh Python (:func:`gpukit.runner.run`, environment
    :func:`measure_env`), so nothing else shares the allocator. An out-of-memory, in any form
    TensorFlow raises it (:func:`gpukit.runner.is_oom`), becomes ``{"status": "oom"}``; another
    failure ``{"status": "error"}``."""
    args = {
        "model_name": model_name,
        "batch": batch,
        "precision": precision,
        "optimizer": optimizer,
        "mode": mode,
        "input_shape": list(input_shape) if input_shape else None,
        "classes": classes,
        "seq_len": seq_len,
    }
    if profile_top:
        args["profile_top"] = profile_top
    child = runner.run(
        "gpukit.memory:measure_child", args, timeout_s, env=measure_env(inter_op_threads, model_name)
    )
    if child.ok:
        return {"status": "ok", **child.value}
    return {"status": child.status, "error": child.error}


def measure_child(args: dict) -> dict:
    """Child side of :func:`measure_in_subprocess`."""
    return measure_peak(**args)
