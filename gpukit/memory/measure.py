"""Measurement: one real step on the attached device, its allocator's peak read in a fresh process.

The only module of :mod:`gpukit.memory` that imports TensorFlow, and only inside the functions that run
a step (:func:`measure_peak` and what it calls), so that the estimate and its tables start fast. Also
what the measuring process runs with (:func:`measure_env`), what TensorFlow's profiler says the
allocator held at the peak (:func:`live_at_peak`), and the largest batch a GPU really runs
(:func:`bisect_largest_batch`).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Sequence

from .. import precision as prec
from ..bench import device, runner
from ..bench.device import cpu_native_16bit
from ..errors import GpukitError, ParameterError
from ..models import zoo
from ..models.registry import (
    build_model,
    keras_policy,
    make_optimizer,
    resolve_model,
    synthetic_batch,
    train_step,
)
from ..quiet import quiet_tensorflow
from ..search import largest_passing


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
    if not device.physical_gpus():
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
    tf = quiet_tensorflow()
    p = prec.normalize(precision)
    dev = device or ("GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0")
    spec = resolve_model(model_name, input_shape, classes, seq_len)
    if spec.kind == "transformer":
        raise ParameterError("--measure runs Keras models; the built-in transformers are estimated only")
    with keras_policy(prec.keras_policy(p)), tf.device(dev):
        model = build_model(spec)
        step, opt = _step_of(tf, model, batch, p, optimizer, mode)
        _warm_up(step, opt, p, mode)
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
        scopes = {o.name for o in (opt, getattr(opt, "inner_optimizer", None)) if o is not None}
        result["peak_profile"] = live_at_peak(_memory_events(trace["xspace"]), scopes, profile_top)
    return result


def _step_of(tf, model, batch: int, precision: str, optimizer: str, mode: str) -> tuple[Callable, object]:
    """The step :func:`measure_peak` measures, compiled, on a synthetic batch: one training step
    (forward, loss, gradients, update) or one inference call; and its optimizer (None in inference)."""
    import keras  # loads TensorFlow (measure_peak has quieted it first)

    x, y = synthetic_batch(tf, model, batch)
    if mode != "train":
        return tf.function(lambda: model(x, training=False)), None
    opt = make_optimizer(optimizer)
    if precision == "fp16":
        opt = keras.mixed_precision.LossScaleOptimizer(opt)
    # The optimizer's slots are made inside the first (untimed) step, as the grid of
    # docs/accuracy/memory.md was measured; made beforehand, as Keras's fit() does, some models peak
    # a few per cent lower (that page says which).
    return train_step(tf, model, loss_for(model), opt, x, y, xla=False, build_first=False), opt


def _warm_up(step: Callable, opt, precision: str, mode: str) -> None:
    """The untimed steps before the measured one: the first, which builds the optimizer's slots and
    traces, and under float16's dynamic loss scale those until one updates the weights."""
    step()  # builds optimizer slots and traces
    if mode == "train" and precision == "fp16":
        # A dynamic loss scale starts high and skips updates until the gradients are finite;
        # measure a step that updates, as every step of a real run but the first few does.
        for _ in range(MAX_SKIPPED_STEPS):
            if int(opt.inner_optimizer.iterations.numpy()) > 0:
                break
            step()


@contextlib.contextmanager
def _profiled(tf, enabled: bool):
    """TensorFlow's profiler over the block where ``enabled`` (``trace["xspace"]``: the bytes of its
    XSpace, read before its temporary folder goes)."""
    trace: dict = {}
    if not enabled:
        yield trace
        return
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
#: kernel-sized gradient, and peaks at several times what it does with two or more, at every
#: batch, more the larger its kernels (``benchmarks/rnn_runahead.py``, docs/accuracy/rnn-runahead.md).
#: Two or more is TensorFlow's default wherever there are two cores; a measurement takes at least
#: two so that a one-core machine measures the same.
MEASURE_INTER_OP_THREADS = 2

#: ``TF_ENABLE_ONEDNN_OPTS`` for a measurement: TensorFlow's CPU kernels through oneDNN. TensorFlow
#: turns them on by default only on x86 CPUs with AVX-512 VNNI/BF16, AVX-VNNI or AMX
#: (``DefaultOneDnnPolicy`` in ``tensorflow/core/util/util.cc``); elsewhere its Eigen kernels run,
#: and their convolution gradients hold buffers of their own that the estimate does not count and
#: a GPU does not allocate (docs/accuracy/memory.md compares the grid's cases under both kernels). A
#: measurement runs oneDNN wherever it runs, so that two machines measure the same kernels; models
#: with LSTM or GRU layers run Eigen's (:data:`MEASURE_ONEDNN_RECURRENT`).
MEASURE_ONEDNN = "1"

#: ``TF_ENABLE_ONEDNN_OPTS`` for a model with an LSTM or GRU layer (:data:`FUSED_RECURRENT_LAYERS`):
#: Eigen's kernels. With oneDNN's, the LSTM's backward loop runs its steps ahead of its
#: weight-gradient accumulation in some runs even with two inter-op threads, each step holding a
#: kernel-sized gradient, far above the estimate on a busy machine; with Eigen's it keeps up
#: (docs/accuracy/rnn-runahead.md measures both). A GPU runs these layers as one cuDNN kernel
#: and accumulates nothing per step; Eigen's kernels reproduce the loop that keeps up, which the
#: estimate counts.
MEASURE_ONEDNN_RECURRENT = "0"

#: Keras's recurrent layers a GPU runs as one cuDNN kernel (in their default configuration).
FUSED_RECURRENT_LAYERS = frozenset({"LSTM", "GRU"})


def has_fused_recurrent_layers(model_name: str) -> bool:
    """Whether a Keras-layer model (a :mod:`gpukit.models.zoo` name or a ``.keras`` file) has a layer of
    :data:`FUSED_RECURRENT_LAYERS`, wrapped (``Bidirectional``) or not; read without TensorFlow,
    so that a measuring process can be started with the kernels that suit it. False for anything
    else, an unreadable file included (the measurement then says what is wrong with it)."""
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
    """:func:`measure_peak` in a fresh Python (:func:`gpukit.bench.runner.run`, environment
    :func:`measure_env`), so nothing else shares the allocator. An out-of-memory, in any form
    TensorFlow raises it (:func:`gpukit.bench.runner.is_oom`), becomes ``{"status": "oom"}``; another
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
        "gpukit.memory.measure:measure_child", args, timeout_s, env=measure_env(inter_op_threads, model_name)
    )
    if child.ok:
        return {"status": "ok", **child.value}
    return {"status": child.status, "error": child.error}


def measure_child(args: dict) -> dict:
    """Child side of :func:`measure_in_subprocess`."""
    return measure_peak(**args)
