"""Memory fit: how many bytes a model needs to train or infer at a batch size, and where it fits.

Two figures, in bytes:

* ``tensor_bytes`` — the peak of TensorFlow's allocator for this step's tensors: weights,
  gradients, optimizer slots, the activations kept for the backward pass, the transient
  gradients of activations, the input batch. It is what
  ``tf.config.experimental.get_memory_info(device)["peak"]`` reports, and what
  :func:`measure_peak` measures.
* ``total_bytes`` — ``tensor_bytes`` plus the runtime's own reserve on a GPU (CUDA context,
  cuDNN and cuBLAS workspaces), :data:`DEFAULT_RUNTIME_RESERVE_BYTES` unless overridden.

Keras models are walked layer by layer (:func:`gpukit.graph.graph_of`): each layer's parameters and output
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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from . import precision as prec
from . import runner
from .errors import GpukitError, ParameterError
from .graph import Graph, graph_of
from .models import (OPTIMIZER_SLOTS, TRANSFORMERS, TransformerSpec, build_model, check_optimizer,
                     default_input_shape, make_optimizer, resolve_model, train_step)

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

    def as_dict(self) -> dict:
        return dict(self.__dict__)


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
    item = prec.itemsize(p)

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

    opt = check_optimizer(opt)
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


def estimate_transformer(spec: TransformerSpec, batch: int, precision: str, optimizer: str, mode: str,
                         seq_len: int | None = None, runtime_reserve_bytes: int = 0) -> Estimate:
    """Closed-form bytes of a transformer step (see the module docstring for the source)."""
    p = prec.normalize(precision)
    s = seq_len or spec.seq_len
    if s > spec.seq_len and not spec.decoder:
        raise ParameterError(f"{spec.name} takes sequences of at most {spec.seq_len} tokens, not {s}")
    item = prec.itemsize(p)
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
    opt = check_optimizer(opt)
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
                         input_shape: Sequence[int] | None = None, start: int = 1, limit: int = 4096,
                         probe: Callable[..., dict] | None = None) -> dict:
    """The largest batch that really runs on the attached GPU, by bisection on out-of-memory.

    GPU only: a CPU allocates from host memory and swaps before it fails, so there is nothing
    honest to bisect there (:class:`ParameterError`). Each probe is
    :func:`measure_in_subprocess` (a fresh process) unless ``probe`` replaces it; an out-of-memory
    in any of TensorFlow's forms means "too large", any other failure stops the bisection.
    """
    from .device import physical_gpus

    if not physical_gpus():
        raise ParameterError("bisecting on out-of-memory needs a GPU; this machine computes on its CPU")
    probes = []
    probe = probe or measure_in_subprocess

    def ok(b: int) -> bool:
        r = probe(model_name, b, precision, optimizer, mode, input_shape)
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

    tf = quiet_tensorflow()
    import keras

    p = prec.normalize(precision)
    dev = device or ("GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0")
    keras.mixed_precision.set_global_policy(prec.keras_policy(p))
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


#: The measuring process uses TensorFlow's BFC allocator on the CPU too, the allocator GPUs
#: use: the CPU's default allocator leaves allocations under 256 KiB out of its statistics.
MEASURE_ENV = {"TF_CPU_ALLOCATOR_USE_BFC": "true"}


def measure_in_subprocess(model_name: str, batch: int, precision: str = "fp32", optimizer: str = "adam",
                          mode: str = "train", input_shape: Sequence[int] | None = None, classes: int = 1000,
                          timeout_s: float = 900) -> dict:
    """:func:`measure_peak` in a fresh Python (:func:`gpukit.runner.run`), so nothing else shares
    the allocator. An out-of-memory, in any form TensorFlow raises it (:func:`gpukit.runner.is_oom`),
    becomes ``{"status": "oom"}``; another failure ``{"status": "error"}``."""
    args = {"model_name": model_name, "batch": batch, "precision": precision, "optimizer": optimizer,
            "mode": mode, "input_shape": list(input_shape) if input_shape else None, "classes": classes}
    child = runner.run("gpukit.memory:measure_child", args, timeout_s, env=MEASURE_ENV)
    if child.ok:
        return {"status": "ok", **child.value}
    return {"status": child.status, "error": child.error}


def measure_child(args: dict) -> dict:
    """Child side of :func:`measure_in_subprocess`."""
    return measure_peak(**args)
