"""Performance model: measure here, predict every catalogue GPU, and grade the predictions.

A workload is profiled op by op (:func:`profile`): FLOPs, bytes moved through device memory
and the unit that does the work, for the forward pass, the backward pass and the optimizer
update. Keras models are profiled from the memory model's layer walk
(:func:`gpukit.memory.graph_of`, which records each layer's forward FLOPs); the synthetic
benchmark workloads (matmul, conv, bandwidth) are one op each, with the counts of
:mod:`gpukit.workloads`.

On a GPU (:func:`predict`) each op takes the longer of

* its compute time: FLOPs ÷ (the peak of the unit and precision it runs at × ``compute``
  efficiency), and
* its memory time: bytes ÷ (memory bandwidth × ``memory`` efficiency),

plus ``launch_s`` per kernel; the step time is the sum over ops. An op is compute-bound where
the first is longer; the workload is compute-bound when its compute-bound ops take most of
the step. Which unit runs an op (:func:`math_unit`):

* matrix multiplies and convolutions run on tensor cores in ``mixed_float16`` (FP16 rate with
  FP32 accumulate — half the FP16-accumulate rate on GeForce cards, as the catalogue records)
  and ``mixed_bfloat16`` (Ampere and later only: Volta and Turing have no BF16);
* in ``float32`` they run as TF32 on tensor cores where the GPU has TF32 (Ampere and later:
  TensorFlow enables it by default) and on the CUDA cores otherwise; ``fp32`` is ``float32``
  with TF32 turned off (``tf.config.experimental.enable_tensor_float_32_execution(False)``),
  as ``gpukit bench`` runs it;
* everything else (normalisation, activations, pooling, the optimizer update) runs on the CUDA
  cores and is, in practice, bound by memory.

Efficiency factors (:class:`Efficiency`) have documented defaults, are calibrated from a
results document when the attached device is a catalogued GPU (:func:`calibrate`; a CPU
cannot calibrate a GPU, and the result says which factors were used), and can be fitted to the
published measurements of ``data/reference_benchmarks.csv`` (:func:`fit_efficiency`), which
the report checks by leaving one GPU out at a time (:func:`leave_one_gpu_out`). Predictions
never read that file; it exists to grade them (:func:`validation_table`).
"""
from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from . import specs
from ._csv import Field, parse_rows, resolve_and_dedupe, to_frame
from .errors import DataError, GpukitError, ParameterError, Problem, UnknownGPUError

# --------------------------------------------------------------------------- precisions

#: Precisions the model knows, as Keras policies (``fp32`` = ``float32`` with TF32 off).
PRECISIONS = ("float32", "fp32", "mixed_float16", "mixed_bfloat16")
_PRECISION_ALIASES = {
    "float32": "float32", "tf32": "float32", "float": "float32",
    "fp32": "fp32", "strict_fp32": "fp32",
    "mixed_float16": "mixed_float16", "fp16": "mixed_float16", "float16": "mixed_float16",
    "mixed_bfloat16": "mixed_bfloat16", "bf16": "mixed_bfloat16", "bfloat16": "mixed_bfloat16",
}
MODES = ("train", "infer")


def normalize_precision(name: str) -> str:
    key = str(name).strip().casefold().replace("-", "_")
    if key in _PRECISION_ALIASES:
        return _PRECISION_ALIASES[key]
    raise ParameterError(f"unknown precision {name!r}; use one of {', '.join(PRECISIONS)}")


def _itemsize(precision: str) -> int:
    return 2 if precision in ("mixed_float16", "mixed_bfloat16") else 4


class Unsupported(GpukitError):
    """This GPU cannot run this precision natively (e.g. BF16 on Volta)."""


def math_unit(gpu: pd.Series | dict, precision: str, matmul: bool) -> tuple[str, float]:
    """(name of the math, peak TFLOPS) that runs an op on ``gpu`` at ``precision``; see the module doc."""
    p = normalize_precision(precision)
    fp32 = float(gpu["fp32_tflops"])
    if not matmul:
        return "FP32 (CUDA cores)", fp32
    if p == "mixed_float16":
        return "FP16 tensor", float(gpu["fp16_tensor_tflops"])
    if p == "mixed_bfloat16":
        bf16 = gpu.get("bf16_tensor_tflops")
        if bf16 is None or bf16 != bf16:
            raise Unsupported(f"{gpu['gpu']} ({gpu['architecture']}) has no BF16 tensor cores; "
                              "use mixed_float16 there")
        return "BF16 tensor", float(bf16)
    tf32 = gpu.get("tf32_tensor_tflops")
    if p == "float32" and tf32 is not None and tf32 == tf32:
        return "TF32 tensor", float(tf32)
    return "FP32 (CUDA cores)", fp32


# --------------------------------------------------------------------------- profiles


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

    @property
    def flops(self) -> float:
        return sum(o.flops for o in self.ops)

    @property
    def bytes(self) -> float:
        return sum(o.bytes for o in self.ops)

    @property
    def intensity(self) -> float:
        """Arithmetic intensity of the whole step (FLOP per byte)."""
        return self.flops / self.bytes if self.bytes else math.inf

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([o.__dict__ for o in self.ops])


#: Bytes per trainable parameter that an optimizer's update moves: read weight, gradient and
#: slots, write weight and slots (float32).
UPDATE_BYTES_PER_PARAM = {"sgd": 12, "momentum": 20, "adam": 28, "adamw": 28}
#: Multiples of an elementwise layer's output bytes moved by its forward and backward passes.
#: Forward: read the input(s), write the output; batch normalisation in training also reads its
#: input once more for the batch statistics. Backward: read the output gradient and the saved
#: tensor, write the input gradient (batch normalisation: two passes, a reduction, then the
#: input gradient).
_TRAFFIC = {"BatchNormalization": (3, 5), "LayerNormalization": (3, 5)}
#: Arithmetic per output element of the CUDA-core layers (forward, backward), counting the
#: index and reduction work as well as the maths: small, but on GPUs with few CUDA cores for
#: their bandwidth it, not memory, sets the pace.
ELEMENTWISE_FLOPS = {"BatchNormalization": (8, 14), "LayerNormalization": (10, 16), "Activation": (2, 2),
                     "ReLU": (1, 2), "Add": (1, 1), "MaxPooling2D": (9, 9), "GlobalAveragePooling2D": (1, 1),
                     "Softmax": (5, 5)}
_NO_TRAFFIC = {"InputLayer", "Flatten", "Reshape", "ZeroPadding2D", "Dropout", "Identity"}


def _graph_profile(graph, name: str, batch: int, precision: str, mode: str, optimizer: str,
                   unit: str, items_per_example: float) -> Profile:
    item = _itemsize(precision)
    train = mode == "train"
    ops: list[OpCost] = []
    for op in graph.ops:
        if op.kind in _NO_TRAFFIC and not op.flops:
            continue
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
        ops.append(OpCost(op.name, op.kind, "forward", flops, float(fwd_bytes), op.matmul or False))
        if train:
            ops.append(OpCost(op.name, op.kind, "backward", float(bwd_flops), float(bwd_bytes), op.matmul,
                              bwd_kernels))
            if op.trainable_params:
                per = UPDATE_BYTES_PER_PARAM.get(optimizer, 20) + (2 if item == 2 else 0)
                ops.append(OpCost(op.name, op.kind, "update", 2.0 * op.trainable_params,
                                  float(op.trainable_params * per), False))
    return Profile(name, precision, batch, mode, batch * items_per_example, unit, tuple(ops),
                   int(graph.trainable_params) if train else 0)


@functools.lru_cache(maxsize=16)
def _keras_graph(kind: str, key: tuple):
    """Build a Keras model once per configuration and keep only its walk."""
    from .device import quiet_tensorflow
    from .memory import build_model, graph_of, resolve_model

    quiet_tensorflow()
    if kind == "transformer":
        from .workloads import transformer_model

        hidden, heads, ffn, layers, seq_len, vocab = key
        model = transformer_model(hidden, heads, ffn, layers, seq_len, vocab)
    else:
        name, shape = key
        model = build_model(resolve_model(name, shape))
    graph = graph_of(model)
    del model
    return graph


#: Default sizes of the synthetic workloads (the full-size benchmark configurations on a GPU).
DEFAULT_PARAMS = {
    "matmul": {"m": 8192, "n": 8192, "k": 8192},
    "conv": {"batch": 64, "height": 56, "width": 56, "in_channels": 256, "out_channels": 256, "kernel": 3,
             "stride": 1},
    "bandwidth": {"kernel": "scale", "elements": 2**28},
    "resnet50": {"image_size": 224, "batch": 64},
    "transformer": {"hidden": 768, "heads": 12, "ffn": 3072, "layers": 12, "seq_len": 128, "vocab": 30522,
                    "batch": 32},
}
WORKLOADS = tuple(DEFAULT_PARAMS)


def profile(workload: str, batch: int | None = None, precision: str = "float32", mode: str = "train",
            optimizer: str = "momentum", **params) -> Profile:
    """Profile ``workload`` (a benchmark workload or any ``keras.applications`` name).

    ``batch`` overrides the workload's default batch (for matmul: the rows ``m``).
    """
    from . import workloads as wl

    p = normalize_precision(precision)
    if mode not in MODES:
        raise ParameterError(f"mode {mode!r}: use train or infer")
    if batch is not None and (not isinstance(batch, int) or isinstance(batch, bool) or batch < 1):
        raise ParameterError(f"batch size {batch!r} must be a whole number of at least 1")
    item = _itemsize(p)
    name = str(workload).strip()
    key = name.lower()
    if key in ("matmul", "conv", "bandwidth"):
        q = {**DEFAULT_PARAMS[key], **params}
        if key == "matmul":
            if batch:
                q["m"] = batch
            flops, nbytes = wl.matmul_counts(q["m"], q["n"], q["k"], item)
            op = OpCost("matmul", "MatMul", "forward", flops, nbytes, True)
            return Profile("matmul", p, q["m"], "infer", flops / 1e12, "TFLOP/s", (op,))
        if key == "conv":
            if batch:
                q["batch"] = batch
            flops, nbytes = wl.conv2d_counts(q["batch"], q["height"], q["width"], q["in_channels"],
                                             q["out_channels"], q["kernel"], q["stride"], item)
            op = OpCost("conv", "Conv2D", "forward", flops, nbytes, True)
            return Profile("conv", p, q["batch"], "infer", flops / 1e12, "TFLOP/s", (op,))
        flops, nbytes = wl.bandwidth_counts(q["kernel"], q["elements"], 4)
        op = OpCost("bandwidth", "Stream", "forward", flops, nbytes, False)
        return Profile("bandwidth", p, 1, "infer", nbytes / 1e9, "GB/s", (op,))
    if key == "transformer":
        q = {**DEFAULT_PARAMS["transformer"], **params}
        b = batch or q["batch"]
        graph = _keras_graph("transformer", (q["hidden"], q["heads"], q["ffn"], q["layers"], q["seq_len"],
                                             q["vocab"]))
        return _graph_profile(graph, "transformer", b, p, mode, "adam", "tokens/s", q["seq_len"])
    if key == "resnet50":
        q = {**DEFAULT_PARAMS["resnet50"], **params}
        b = batch or q["batch"]
        graph = _keras_graph("application", ("ResNet50", (q["image_size"], q["image_size"], 3)))
        return _graph_profile(graph, "resnet50", b, p, mode, optimizer, "images/s", 1)
    from .memory import UnknownModelError, keras_application_names

    shape = tuple(params["input_shape"]) if params.get("input_shape") else None
    if name.lower() not in {a.lower() for a in keras_application_names()}:
        import difflib

        close = difflib.get_close_matches(name, list(WORKLOADS) + keras_application_names(), n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise UnknownModelError(f"unknown workload {workload!r}; {hint}use {', '.join(WORKLOADS)} "
                                "or a keras.applications name")
    graph = _keras_graph("application", (name, shape))
    return _graph_profile(graph, name, batch or 32, p, mode, optimizer, "examples/s", 1)


# --------------------------------------------------------------------------- prediction


@dataclass(frozen=True)
class Efficiency:
    """How close real kernels come to the datasheet, and the fixed cost per kernel.

    * ``tensor``: fraction of the tensor-core peak reached by matmuls and convolutions;
    * ``cuda``: fraction of the FP32 CUDA-core peak reached by matmuls and convolutions without
      tensor cores (FP32 on Volta and Turing, or with TF32 off);
    * ``elementwise``: fraction of the FP32 CUDA-core peak at which normalisation, activation and
      pooling layers get through their nominal arithmetic (:data:`ELEMENTWISE_FLOPS`); small,
      because indexing, type conversion and reductions cost far more instructions than the
      maths they serve;
    * ``memory``: fraction of the datasheet bandwidth at which the model's minimal traffic
      (every operand read once, every result written once) moves; real kernels move more bytes
      than that minimum, so this is well under a streaming kernel's fraction;
    * ``stream``: fraction of the datasheet bandwidth a plain streaming kernel (the ``bandwidth``
      workload) reaches;
    * ``launch_s``: launch and framework dispatch per kernel;
    * ``scale``: throughput multiplier for the software stack as a whole (1 by default; set by
      :func:`calibrate` from a model measured on the attached GPU). It moves every GPU alike,
      so it changes absolute throughputs and never a speedup.

    The defaults are fitted to the published measurements of ``data/reference_benchmarks.csv``
    (:func:`fit_efficiency`; ``benchmarks/perfmodel_accuracy.py`` refits them and checks the fit by
    leaving each GPU out, in ``docs/perfmodel-accuracy.md``). ``source`` says where a set of
    factors came from.
    """

    tensor: float = 0.7
    cuda: float = 0.7
    elementwise: float = 0.02
    memory: float = 0.3
    stream: float = 0.85
    launch_s: float = 5e-6
    scale: float = 1.0
    source: str = "defaults"

    def __post_init__(self):
        for name in ("tensor", "cuda", "elementwise", "memory", "stream"):
            v = getattr(self, name)
            if not (0 < v <= 1):
                raise ParameterError(f"efficiency {name}={v!r} must be in (0, 1]")
        if self.launch_s < 0:
            raise ParameterError(f"launch_s={self.launch_s!r} must not be negative")
        if not self.scale > 0:
            raise ParameterError(f"scale={self.scale!r} must be positive")

    def for_op(self, math_label: str, matmul: bool) -> float:
        if "tensor" in math_label:
            return self.tensor
        return self.cuda if matmul else self.elementwise


DEFAULT_EFFICIENCY = Efficiency()


@dataclass(frozen=True)
class Prediction:
    gpu: str
    workload: str
    precision: str
    batch_size: int
    mode: str
    step_time_s: float
    throughput: float
    throughput_unit: str
    bound: str  # compute | memory
    compute_bound_share: float  # share of the step spent in compute-bound ops
    compute_s: float
    memory_s: float
    launch_s: float
    math: str
    flops: float
    bytes: float
    efficiency_source: str

    @property
    def achieved_tflops(self) -> float:
        return self.flops / self.step_time_s / 1e12


def predict(prof: Profile, gpu: pd.Series | dict, efficiency: Efficiency = DEFAULT_EFFICIENCY) -> Prediction:
    """Predicted step time of ``prof`` on one catalogue GPU (raises :class:`Unsupported`)."""
    bandwidth = float(gpu["memory_bandwidth_gbs"]) * 1e9
    compute_bound = memory_bound = launch = 0.0
    compute_total = memory_total = 0.0
    maths = set()
    for op in prof.ops:
        label, peak = math_unit(gpu, prof.precision, op.matmul)
        if op.matmul:
            maths.add(label)
        eff = efficiency.for_op(label, op.matmul)
        t_compute = op.flops / (peak * 1e12 * eff) if op.flops else 0.0
        t_memory = op.bytes / (bandwidth * (efficiency.stream if op.kind == "Stream" else efficiency.memory))
        compute_total += t_compute
        memory_total += t_memory
        if t_compute >= t_memory:
            compute_bound += t_compute
        else:
            memory_bound += t_memory
        launch += op.kernels * efficiency.launch_s
    step = (compute_bound + memory_bound + launch) / efficiency.scale
    math_name = ", ".join(sorted(maths)) or "FP32 (CUDA cores)"
    share = compute_bound / (compute_bound + memory_bound) if compute_bound + memory_bound else 0.0
    if prof.throughput_unit == "GB/s":
        throughput = prof.bytes / step / 1e9
    elif prof.throughput_unit == "TFLOP/s":
        throughput = prof.flops / step / 1e12
    else:
        throughput = prof.items_per_step / step
    return Prediction(str(gpu["gpu"]), prof.workload, prof.precision, prof.batch, prof.mode, step, throughput,
                      prof.throughput_unit, "compute" if share >= 0.5 else "memory", share, compute_total,
                      memory_total, launch, math_name, prof.flops, prof.bytes, efficiency.source)


PREDICTION_COLUMNS = ("gpu", "workload", "precision", "batch_size", "mode", "step_time_s", "throughput",
                      "throughput_unit", "bound", "compute_bound_share", "math", "achieved_tflops",
                      "arithmetic_intensity", "measured_throughput", "efficiency_source", "note")


def predict_table(workload: str = "resnet50", precision: str = "float32", batch: int | None = None,
                  mode: str = "train", gpus: Iterable[str] | str | None = None,
                  efficiency: Efficiency | None = None, catalogue: pd.DataFrame | None = None,
                  results: dict | None = None, **params) -> pd.DataFrame:
    """One row per GPU (all catalogue GPUs by default), fastest first; GPUs that cannot run the
    precision natively get a row with no throughput and the reason in ``note``.

    ``results`` (a benchmark results document) calibrates the factors (:func:`calibrate`) unless
    ``efficiency`` is given, and where it measured this very configuration on a catalogued GPU,
    that GPU's row carries ``measured_throughput``.
    """
    cat = specs.load_catalogue() if catalogue is None else catalogue
    rows = specs.select(cat, gpus)
    prof = profile(workload, batch, precision, mode, **params)
    if efficiency is None:
        efficiency = calibrate(results, cat) if _as_list(results) else DEFAULT_EFFICIENCY
    measured = _measured(results, prof)
    out = []
    for _, gpu in rows.iterrows():
        try:
            pr = predict(prof, gpu, efficiency)
        except Unsupported as exc:
            out.append({"gpu": gpu["gpu"], "workload": prof.workload, "precision": prof.precision,
                        "batch_size": prof.batch, "mode": prof.mode, "throughput_unit": prof.throughput_unit,
                        "efficiency_source": efficiency.source, "note": str(exc)})
            continue
        row = {k: getattr(pr, k) for k in PREDICTION_COLUMNS if hasattr(pr, k)}
        row["arithmetic_intensity"] = prof.intensity
        row["measured_throughput"] = measured[pr.gpu][0] if pr.gpu in measured else None
        row["note"] = measured[pr.gpu][1] if pr.gpu in measured else ""
        out.append(row)
    frame = pd.DataFrame(out, columns=list(PREDICTION_COLUMNS))
    return frame.sort_values("throughput", ascending=False, na_position="last").reset_index(drop=True)


def _as_list(results) -> list[dict]:
    if not results:
        return []
    return [results] if isinstance(results, dict) else [d for d in results if d]


def _measured(results, prof: Profile) -> dict[str, tuple[float, str]]:
    """{catalogue GPU: (measured throughput, note)} from the records of ``results`` (one document
    or a list, e.g. a fleet's) that ran ``prof``'s configuration (same workload, precision,
    batch and mode) on a catalogued GPU. Several documents for one GPU are not averaged: the
    newest wins and the note says how many there were."""
    found: dict[str, list[tuple[str, float, str]]] = {}
    for doc in _as_list(results):
        dev = doc.get("device") or {}
        gpu = dev.get("catalogue_gpu")
        if dev.get("kind") != "gpu" or not gpu or doc.get("kind") == "scaling":
            continue
        for r in doc.get("records", []):
            if r.get("workload") != prof.workload or r.get("status") != "ok" or not r.get("throughput"):
                continue
            params = r.get("params", {})
            batch = params.get("batch", params.get("m"))
            if BENCH_PRECISION.get(r.get("precision")) == prof.precision and batch == prof.batch \
                    and params.get("mode", "infer" if prof.mode == "infer" else "train") == prof.mode:
                from .fleet import environment_key

                found.setdefault(gpu, []).append((doc.get("created", ""), float(r["throughput"]),
                                                  f"{doc.get('_file', 'this run')}, {environment_key(doc)}"))
                break
    out = {}
    for gpu, hits in found.items():
        hits.sort()
        created, value, source = hits[-1]
        note = f"measured ({source})" + (f"; newest of {len(hits)} runs, not averaged" if len(hits) > 1 else "")
        out[gpu] = (value, note)
    return out


def speedup(table: pd.DataFrame, a: str, b: str, catalogue: pd.DataFrame | None = None) -> float | None:
    """Predicted throughput of GPU ``a`` over GPU ``b`` in a :func:`predict_table` frame."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ga, gb = specs.resolve(a, cat).gpu, specs.resolve(b, cat).gpu
    ta = table.loc[table["gpu"] == ga, "throughput"]
    tb = table.loc[table["gpu"] == gb, "throughput"]
    for name, t in ((ga, ta), (gb, tb)):
        if t.empty:
            raise UnknownGPUError(f"{name} is not in this prediction table; add it to the GPUs predicted")
    va, vb = ta.iloc[0], tb.iloc[0]
    if va != va or vb != vb:
        return None
    return float(va / vb)


# --------------------------------------------------------------------------- several GPUs

#: Usable PCIe x16 bandwidth per direction, GB/s, by generation: 8, 16 and 32 GT/s per lane
#: (PCI-SIG base specifications 3.0, 4.0, 5.0) x 16 lanes x 128b/130b encoding.
PCIE_X16_GBS = {3: 15.75, 4: 31.5, 5: 63.0}
#: Fraction of a link's bandwidth an all-reduce reaches (NCCL's bus bandwidth on large messages).
LINK_EFFICIENCY = 0.8


def interconnect(gpu: pd.Series | dict, n: int) -> tuple[str, float]:
    """(name, GB/s per direction) of the link ``n`` of these GPUs exchange gradients over.

    NVLink where the GPU has it: on SXM boards for any count, on PCIe cards through a bridge
    that joins two cards only; PCIe of the GPU's generation otherwise. The catalogue's NVLink
    figure is the bidirectional total, so half of it flows each way.
    """
    nvlink = float(gpu.get("nvlink_gbs") or 0)
    if nvlink > 0 and (str(gpu.get("form_factor", "")).startswith("SXM") or n == 2):
        return "NVLink", nvlink / 2
    gen = int(gpu.get("pcie_gen") or 3)
    return f"PCIe {gen}.0", PCIE_X16_GBS.get(gen, PCIE_X16_GBS[3])


def predict_scaling(prof: Profile, gpu: pd.Series | dict, n: int,
                    efficiency: Efficiency = DEFAULT_EFFICIENCY, overlap: float = 0.0) -> dict:
    """Data-parallel training of ``prof`` on ``n`` of ``gpu``: each step adds a ring all-reduce of
    the float32 gradients, 2 (n-1)/n x gradient bytes over the link (``overlap``: the share hidden
    behind the backward pass; 0 by default, the pessimistic case)."""
    if n < 1:
        raise ParameterError(f"{n} GPUs: give at least 1")
    if prof.mode != "train" or not prof.trainable_params:
        raise ParameterError("scaling is predicted for training workloads with trainable weights")
    single = predict(prof, gpu, efficiency)
    link, gbs = interconnect(gpu, n)
    grad_bytes = prof.trainable_params * 4
    allreduce = 2 * (n - 1) / n * grad_bytes / (gbs * 1e9 * LINK_EFFICIENCY) if n > 1 else 0.0
    step = single.step_time_s + allreduce * (1 - overlap)
    return {"gpu": single.gpu, "gpus": n, "link": link, "link_gbs_per_direction": gbs,
            "gradient_mb": grad_bytes / 1e6, "allreduce_s": allreduce, "step_time_s": step,
            "throughput": n * prof.items_per_step / step, "throughput_unit": prof.throughput_unit,
            "scaling_efficiency": single.step_time_s / step}


def scaling_table(workload: str = "resnet50", precision: str = "mixed_float16", batch: int | None = None,
                  gpus: Iterable[str] | str | None = None, counts: Sequence[int] = (1, 2, 4, 8),
                  efficiency: Efficiency = DEFAULT_EFFICIENCY, catalogue: pd.DataFrame | None = None) -> pd.DataFrame:
    """Predicted scaling per GPU and GPU count (GPUs that cannot run the precision are left out;
    a workload without trainable weights, such as matmul, gives an empty table)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    prof = profile(workload, batch, precision, "train")
    rows = []
    if prof.mode != "train" or not prof.trainable_params:
        return pd.DataFrame(rows)
    for _, gpu in specs.select(cat, gpus).iterrows():
        for n in counts:
            try:
                rows.append(predict_scaling(prof, gpu, n, efficiency))
            except Unsupported:
                break
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- calibration


#: gpukit bench precisions as the model's (bench ``fp32`` runs with TF32 off).
BENCH_PRECISION = {"fp32": "fp32", "tf32": "float32", "fp16": "mixed_float16", "bf16": "mixed_bfloat16"}


def calibrate(results: dict | None, catalogue: pd.DataFrame | None = None,
              base: Efficiency = DEFAULT_EFFICIENCY) -> Efficiency:
    """Efficiency factors from a benchmark results document of a catalogued GPU.

    ``tensor``: the best fraction of peak an FP16, BF16 or TF32 matmul reached; ``cuda``: the
    best FP32 (TF32 off) matmul; ``stream``: the best bandwidth kernel; ``scale``: measured over predicted throughput of the ResNet-50
    (else transformer) training step measured there. Factors without a measurement keep
    ``base``. A CPU, or a GPU the catalogue lacks, cannot calibrate a GPU: ``base`` comes back,
    its ``source`` saying why.
    """
    docs = _as_list(results)
    if not docs:
        return replace(base, source=f"{base.source} (no benchmark results to calibrate from)")
    results = next((d for d in docs if (d.get("device") or {}).get("kind") == "gpu"
                    and (d.get("device") or {}).get("catalogue_gpu") and d.get("kind") != "scaling"), docs[0])
    device = results.get("device") or {}
    if device.get("kind") != "gpu":
        return replace(base, source=f"{base.source} (the attached device is a CPU; a CPU cannot calibrate a GPU)")
    name = device.get("catalogue_gpu")
    if not name:
        return replace(base, source=f"{base.source} (the attached GPU {device.get('name', '?')} is not in the "
                                    "catalogue)")
    cat = specs.load_catalogue() if catalogue is None else catalogue
    best: dict[str, float] = {}
    for r in results.get("records", []):
        frac = r.get("peak_fraction")
        if r.get("status") != "ok" or r.get("workload") not in ("matmul", "bandwidth") or not frac or frac != frac:
            continue
        if r["workload"] == "bandwidth":
            key = "stream"
        else:  # gpukit bench runs fp32 with TF32 off, tf32 with it on
            key = "tensor" if r["precision"] in ("fp16", "bf16", "tf32") else "cuda"
        best[key] = max(best.get(key, 0.0), min(float(frac), 1.0))
    eff = replace(base, **best)
    used = sorted(best)
    for workload in ("resnet50", "transformer"):
        rec = next((r for r in results.get("records", []) if r.get("workload") == workload
                    and r.get("status") == "ok" and r.get("throughput")
                    and r.get("params", {}).get("mode", "train") == "train"), None)
        if rec is None:
            continue
        params = {k: v for k, v in rec["params"].items() if k not in ("batch", "mode")}
        prof = profile(workload, int(rec["params"]["batch"]), BENCH_PRECISION.get(rec["precision"], "float32"),
                       "train", **params)
        gpu = cat.loc[cat["gpu"] == name].iloc[0]
        predicted = predict(prof, gpu, replace(eff, scale=1.0)).throughput
        eff = replace(eff, scale=float(rec["throughput"]) / predicted)
        used.append(f"scale from {workload}")
        break
    if not used:
        return replace(base, source=f"{base.source} (the results of {name} have no matmul or model measurement)")
    return replace(eff, source=f"calibrated on {name} ({', '.join(used)})")


# --------------------------------------------------------------------------- published measurements

REFERENCE_PATH = specs.DATA_DIR / "reference_benchmarks.csv"
REFERENCE_SCHEMA: tuple[Field, ...] = (
    Field("source", "text", help="a short id; ratios are only taken within one source"),
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("source_gpu_name", "text", help="the GPU as the source names it"),
    Field("workload", "choice", choices=("resnet50", "transformer")),
    Field("precision", "choice", choices=PRECISIONS),
    Field("mode", "choice", choices=MODES),
    Field("batch_size", "int", low=1, high=1_000_000),
    Field("throughput", "float", low=1e-6, high=1e12),
    Field("throughput_unit", "choice", choices=("images/s", "tokens/s", "sequences/s")),
    Field("framework", "text"),
    Field("source_url", "url"),
    Field("measured", "date", required=False, help="when the source ran it, YYYY-MM-DD, if it says"),
    Field("retrieved", "date", help="when gpukit read the source, YYYY-MM-DD"),
    Field("note", "text", required=False),
)


def load_reference(path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None,
                   today: date | None = None) -> pd.DataFrame:
    """Published measurements, validated: every row sourced, dated and naming a catalogue GPU."""
    p = Path(path) if path else REFERENCE_PATH
    cat = specs.load_catalogue() if catalogue is None else catalogue
    parsed, problems = parse_rows(p, REFERENCE_SCHEMA, today or date.today(), "measurement")
    records = resolve_and_dedupe(p, parsed, cat, lambda r: (r["source"], r["gpu"], r["workload"],
                                                              r["precision"], r["mode"]),
                                 problems, "same source, GPU, workload, precision and mode")
    if problems:
        raise DataError(problems)
    return to_frame(records, REFERENCE_SCHEMA)


@dataclass
class _Case:
    """One reference row, profiled and placed on its GPU: arrays for fast re-prediction."""

    flops: np.ndarray
    bytes: np.ndarray
    peak: np.ndarray  # FLOP/s of the unit each op runs on
    unit: np.ndarray  # 0 tensor, 1 CUDA-core matmul, 2 elementwise
    kernels: int
    bandwidth: float  # bytes/s
    items: float


def _cases(reference: pd.DataFrame, catalogue: pd.DataFrame) -> list[_Case | None]:
    out: list[_Case | None] = []
    for _, r in reference.iterrows():
        prof = profile(r["workload"], int(r["batch_size"]), r["precision"], r["mode"])
        gpu = catalogue.loc[catalogue["gpu"] == r["gpu"]].iloc[0]
        try:
            units = [math_unit(gpu, prof.precision, o.matmul) for o in prof.ops]
        except Unsupported:
            out.append(None)
            continue
        out.append(_Case(np.array([o.flops for o in prof.ops]), np.array([o.bytes for o in prof.ops]),
                         np.array([u[1] * 1e12 for u in units]),
                         np.array([0 if "tensor" in u[0] else (1 if o.matmul else 2)
                                   for u, o in zip(units, prof.ops)]),
                         sum(o.kernels for o in prof.ops), float(gpu["memory_bandwidth_gbs"]) * 1e9,
                         prof.items_per_step))
    return out


def _throughputs(cases: list[_Case | None], eff: Efficiency) -> np.ndarray:
    factors = np.array([eff.tensor, eff.cuda, eff.elementwise])
    out = np.full(len(cases), np.nan)
    for i, c in enumerate(cases):
        if c is None:
            continue
        t = np.maximum(c.flops / (c.peak * factors[c.unit]), c.bytes / (c.bandwidth * eff.memory))
        out[i] = eff.scale * c.items / (t.sum() + c.kernels * eff.launch_s)
    return out


def _pairs(reference: pd.DataFrame) -> list[tuple[int, int]]:
    """Index pairs (faster first, by the published throughput) within one source, workload,
    precision and mode."""
    pairs = []
    ref = reference.reset_index(drop=True)
    for _, group in ref.groupby(["source", "workload", "precision", "mode"], sort=False):
        idx = list(group.index)
        for x in range(len(idx)):
            for y in range(x + 1, len(idx)):
                i, j = idx[x], idx[y]
                if ref.at[i, "throughput"] < ref.at[j, "throughput"]:
                    i, j = j, i
                pairs.append((i, j))
    return pairs


#: A winner is only called when the published results differ by more than this.
WINNER_MARGIN = 0.10
#: The target for predicted speedup ratios.
RATIO_TOLERANCE = 0.15


def validation_table(reference: pd.DataFrame | None = None, efficiency: Efficiency = DEFAULT_EFFICIENCY,
                     catalogue: pd.DataFrame | None = None, predicted: Sequence[float] | None = None) \
        -> pd.DataFrame:
    """Every pair of GPUs measured by the same source on the same workload, precision and mode:
    published and predicted speedup of the faster (``gpu_a``) over the slower (``gpu_b``), the
    error, and whether the predicted winner is right (judged where the published results differ
    by more than 10 %)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = (load_reference(catalogue=cat) if reference is None else reference).reset_index(drop=True)
    pred = _throughputs(_cases(ref, cat), efficiency) if predicted is None else np.asarray(predicted, float)
    rows = []
    for i, j in _pairs(ref):
        a, b = ref.iloc[i], ref.iloc[j]
        published = a["throughput"] / b["throughput"]
        ratio = pred[i] / pred[j]
        decisive = bool(published > 1 + WINNER_MARGIN)
        rows.append({
            "source": a["source"], "workload": a["workload"], "precision": a["precision"], "mode": a["mode"],
            "gpu_a": a["gpu"], "gpu_b": b["gpu"], "published_speedup": published, "predicted_speedup": ratio,
            "error_pct": 100 * (ratio / published - 1), "decisive": decisive,
            "winner_right": bool(ratio > 1) if decisive else None,
            "within_tolerance": bool(abs(ratio / published - 1) <= RATIO_TOLERANCE),
        })
    return pd.DataFrame(rows)


def summarize_validation(table: pd.DataFrame) -> dict:
    """Headline figures of a validation table."""
    if table.empty:
        return {"pairs": 0, "median_abs_error_pct": math.nan, "max_abs_error_pct": math.nan,
                "within_tolerance": 0, "decisive_pairs": 0, "winners_right": 0}
    err = table["error_pct"].abs()
    decisive = table[table["decisive"]]
    return {
        "pairs": int(len(table)),
        "median_abs_error_pct": float(err.median()),
        "max_abs_error_pct": float(err.max()),
        "within_tolerance": int(table["within_tolerance"].sum()),
        "decisive_pairs": int(len(decisive)),
        "winners_right": int((decisive["winner_right"] == True).sum()),  # noqa: E712 -- object column
    }


#: The pairs this kit exists for, as (faster-named, slower-named) natural names.
KEY_PAIRS = (("RTX A5000", "RTX A4000"), ("A40", "V100"))


def key_pairs(table: pd.DataFrame, pairs: Sequence[tuple[str, str]] = KEY_PAIRS) -> pd.DataFrame:
    """The rows of a validation table for the given pairs (any memory or form-factor variant)."""
    cat = specs.load_catalogue()
    keep = []
    for a, b in pairs:
        fa, fb = _variants(a, cat), _variants(b, cat)
        keep.append(table[(table["gpu_a"].isin(fa) & table["gpu_b"].isin(fb)) |
                          (table["gpu_a"].isin(fb) & table["gpu_b"].isin(fa))])
    return pd.concat(keep, ignore_index=True)


def _variants(name: str, catalogue: pd.DataFrame) -> set[str]:
    """Every catalogue variant a name fits (``V100`` -> all V100s)."""
    return set(specs.resolve(name, catalogue).matches)


#: The grid :func:`fit_efficiency` searches.
FIT_GRID = {"tensor": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0), "cuda": (0.5, 0.7, 0.9),
            "elementwise": (0.01, 0.015, 0.02, 0.03, 0.04, 0.06), "memory": (0.2, 0.3, 0.4, 0.5, 0.7)}


def _fit(cases, pairs, published, base: Efficiency, grid) -> tuple[Efficiency, float]:
    best, best_err = base, math.inf
    ia = np.array([p[0] for p in pairs])
    ib = np.array([p[1] for p in pairs])
    for t in grid["tensor"]:
        for c in grid["cuda"]:
            for e in grid["elementwise"]:
                for m in grid["memory"]:
                    eff = replace(base, tensor=t, cuda=c, elementwise=e, memory=m)
                    pred = _throughputs(cases, eff)
                    err = float(np.nanmean(np.abs(np.log(pred[ia] / pred[ib] / published))))
                    if err < best_err - 1e-12:
                        best, best_err = eff, err
    return best, best_err


def fit_efficiency(reference: pd.DataFrame, catalogue: pd.DataFrame | None = None,
                   base: Efficiency = DEFAULT_EFFICIENCY, grid: dict | None = None) -> Efficiency:
    """The efficiency factors on :data:`FIT_GRID` that minimise the mean absolute log error of the
    speedup ratios in ``reference`` (ratios do not see a common scale, so the fit fixes the
    balance between compute, elementwise work and memory, not absolute speed)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = reference.reset_index(drop=True)
    pairs = _pairs(ref)
    if not pairs:
        raise ParameterError("no pair of GPUs measured by the same source to fit to")
    published = np.array([ref.at[i, "throughput"] / ref.at[j, "throughput"] for i, j in pairs])
    eff, _ = _fit(_cases(ref, cat), pairs, published, base, grid or FIT_GRID)
    return replace(eff, source=f"fitted to {len(ref)} published measurements ({ref['gpu'].nunique()} GPUs)")


def leave_one_gpu_out(reference: pd.DataFrame | None = None, catalogue: pd.DataFrame | None = None,
                      base: Efficiency = DEFAULT_EFFICIENCY, grid: dict | None = None) -> pd.DataFrame:
    """For each GPU: fit on the pairs without it, then grade the pairs with it (which the fit never saw)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ref = (load_reference(catalogue=cat) if reference is None else reference).reset_index(drop=True)
    cases = _cases(ref, cat)
    pairs = _pairs(ref)
    published = np.array([ref.at[i, "throughput"] / ref.at[j, "throughput"] for i, j in pairs])
    rows = []
    for gpu in sorted(ref["gpu"].unique()):
        with_gpu = [k for k, (i, j) in enumerate(pairs) if gpu in (ref.at[i, "gpu"], ref.at[j, "gpu"])]
        without = [k for k in range(len(pairs)) if k not in set(with_gpu)]
        if not with_gpu or not without:
            continue
        eff, _ = _fit(cases, [pairs[k] for k in without], published[without], base, grid or FIT_GRID)
        held = validation_table(ref, eff, cat, predicted=_throughputs(cases, eff)).iloc[with_gpu]
        s = summarize_validation(held)
        rows.append({"held_out": gpu, "pairs": s["pairs"], "median_abs_error_pct": s["median_abs_error_pct"],
                     "max_abs_error_pct": s["max_abs_error_pct"],
                     "within_15_pct": f"{s['within_tolerance']}/{s['pairs']}",
                     "winners_right": f"{s['winners_right']}/{s['decisive_pairs']}",
                     "fitted": f"tensor {eff.tensor:g}, cuda {eff.cuda:g}, elementwise {eff.elementwise:g}, "
                               f"memory {eff.memory:g}"})
    return pd.DataFrame(rows)
