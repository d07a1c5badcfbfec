"""Training on several devices with TensorFlow's own distribution, and its scaling efficiency.

``gpukit bench --devices N`` runs the training workloads (ResNet-50, the BERT-like encoder)
under ``tf.distribute.MirroredStrategy`` on N devices, after the same step on one device, and
records per-replica and global batch, throughput and the scaling efficiency (throughput on N
devices ÷ N × throughput on one). On a GPU machine the devices are the first N GPUs. Without
GPUs the CPU is split into N *logical* devices
(``tf.config.set_logical_device_configuration``), so the code path runs anywhere; the record says
so, and its scaling says nothing about GPUs (the logical devices share the same cores).

``--strategy multiworker`` uses ``tf.distribute.MultiWorkerMirroredStrategy`` across the
processes named in ``TF_CONFIG`` (one per machine, or several on one machine on loopback); the
chief (worker 0) writes the results. The baseline is one device of the chief, measured in a
separate process before the workers join.

Each run happens in a child process (``python -m gpukit.bench.distributed``), because logical
devices and a multi-worker strategy must be configured before TensorFlow starts its runtime.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from datetime import UTC, datetime

from ..errors import GpukitError, ParameterError
from . import runner
from .harness import Settings, measure, summarize
from .results import Device, Results, ScalingRecord

STRATEGIES = ("mirrored", "multiworker")
WORKLOADS = ("resnet50", "transformer")


def workload_params(workload: str, gpu: bool, quick: bool) -> dict:
    """Per-replica sizes (:func:`gpukit.bench.workloads.sizes`): real ones on GPUs, small ones on a CPU
    (the code path is what is tested there)."""
    from .workloads import sizes

    if workload not in WORKLOADS:
        raise ParameterError(f"workload {workload!r} does not train; use {' or '.join(WORKLOADS)}")
    return dict(sizes("gpu" if gpu else "cpu", quick)["scaling"][workload])


def check(devices: int, strategy: str, workloads) -> list[str]:
    if not isinstance(devices, int) or devices < 1:
        raise ParameterError(f"--devices {devices!r}: give a whole number of at least 1")
    if strategy not in STRATEGIES:
        raise ParameterError(f"strategy {strategy!r}: use {' or '.join(STRATEGIES)}")
    names = list(workloads) if workloads else list(WORKLOADS)
    for w in names:
        if w not in WORKLOADS:
            raise ParameterError(f"workload {w!r} does not train; --devices runs {', '.join(WORKLOADS)}")
    if strategy == "multiworker":
        cfg = os.environ.get("TF_CONFIG")
        if not cfg:
            raise ParameterError(
                "--strategy multiworker needs TF_CONFIG (the cluster's workers and this "
                "process's index); see docs/how-to/fleet.md"
            )
        try:
            doc = json.loads(cfg)
            doc["cluster"]["worker"], doc["task"]["index"]
        except (ValueError, KeyError, TypeError):
            raise ParameterError("TF_CONFIG is not JSON with cluster.worker and task.index; fix it") from None
    return names


# --------------------------------------------------------------------------- child side


def _devices(tf, n: int, strategy: str) -> tuple[list[str], bool]:
    gpus = tf.config.list_physical_devices("GPU")
    if strategy == "multiworker":
        return ([f"/gpu:{i}" for i in range(len(gpus))] or ["/cpu:0"]), False
    if gpus:
        if len(gpus) < n:
            raise GpukitError(f"--devices {n}: only {len(gpus)} GPU(s) attached")
        return [f"/gpu:{i}" for i in range(n)], False
    cpu = tf.config.list_physical_devices("CPU")[0]
    if n > 1:
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * n)
    return [f"/cpu:{i}" for i in range(n)], n > 1


def _build(tf, strategy_obj, workload: str, params: dict, precision: str):
    """Model, optimizer, distributed input and a compiled step under ``strategy_obj``."""
    import keras

    from .. import precision as prec
    from ..models.registry import build_optimizer, keras_policy, transformer_model

    replicas = strategy_obj.num_replicas_in_sync
    per = params["batch"]
    global_batch = per * replicas
    with keras_policy(prec.keras_policy(precision)), strategy_obj.scope():
        if workload == "resnet50":
            size = params["image_size"]
            model = keras.applications.ResNet50(weights=None, input_shape=(size, size, 3), classes=1000)
            x = tf.random.uniform((global_batch, size, size, 3))
            y = tf.random.uniform((global_batch,), maxval=1000, dtype=tf.int32)
            optimizer = keras.optimizers.SGD(learning_rate=0.01, momentum=0.9)
            loss_obj = keras.losses.SparseCategoricalCrossentropy(reduction="none")
            items = global_batch
        else:
            p = params
            model = transformer_model(
                p["hidden"], p["heads"], p["ffn"], p["layers"], p["seq_len"], p["vocab"]
            )
            x = tf.random.uniform((global_batch, p["seq_len"]), maxval=p["vocab"], dtype=tf.int32)
            y = tf.random.uniform((global_batch, p["seq_len"]), maxval=p["vocab"], dtype=tf.int32)
            optimizer = keras.optimizers.AdamW(learning_rate=1e-4)
            loss_obj = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
            items = global_batch * p["seq_len"]
        if precision == "fp16":
            optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
        build_optimizer(model, optimizer)  # mirrored slots made here, not while tracing the step
    data = tf.data.Dataset.from_tensors((x, y)).repeat()
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    iterator = iter(strategy_obj.experimental_distribute_dataset(data.with_options(options)))

    def replica_step(xb, yb):
        with tf.GradientTape() as tape:
            per_example = loss_obj(yb, model(xb, training=True))
            loss = (
                tf.reduce_sum(tf.cast(per_example, tf.float32))
                / tf.cast(tf.size(per_example), tf.float32)
                / replicas
            )
            scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
        grads = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def step():
        xb, yb = next(iterator)
        losses = strategy_obj.run(replica_step, args=(xb, yb))
        return strategy_obj.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    return step, items, global_batch


def _agreement(tf, strategy_obj):
    """For workers in lockstep: the largest of a value over every worker (a collective all-reduce),
    so that they time the same number of steps (:func:`gpukit.bench.measure`)."""

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def largest(value):
        per_replica = strategy_obj.run(lambda: tf.reshape(value, [1]))
        return tf.reduce_max(strategy_obj.gather(per_replica, axis=0))  # ReduceOp has no MAX

    return lambda value: float(largest(tf.constant(value, tf.float32)))


def _measure_one(tf, strategy_obj, workload, params, precision, settings, multiworker=False) -> dict:
    step, items, global_batch = _build(tf, strategy_obj, workload, params, precision)
    timing = measure(step, settings, agree=_agreement(tf, strategy_obj) if multiworker else None)
    stats = summarize(timing.times_s)
    return {
        "status": "ok",
        "global_batch": global_batch,
        "items_per_step": items,
        "throughput": items / stats["median_s"],
        **stats,
        "samples": len(timing.times_s),
    }


def child_main(request: dict) -> dict:
    """Run one strategy over the workloads; returns the records (in the child process)."""
    from ..quiet import QUIET_ENV, stderr_redirected

    for k, v in QUIET_ENV.items():
        os.environ.setdefault(k, v)
    with stderr_redirected():
        import tensorflow as tf

        tf.get_logger().setLevel("ERROR")
        n, strategy = request["devices"], request["strategy"]
        devices, logical = _devices(tf, n, strategy)
        if strategy == "multiworker":
            strat = tf.distribute.MultiWorkerMirroredStrategy()
        else:
            strat = tf.distribute.MirroredStrategy(
                devices=devices,
                cross_device_ops=tf.distribute.ReductionToOneDevice()
                if devices[0].startswith("/cpu")
                else None,
            )
    settings = Settings(**request["settings"])
    gpu = devices[0].startswith("/gpu")
    records = []
    for workload in request["workloads"]:
        params = workload_params(workload, gpu, request["quick"])
        rec = {
            "workload": workload,
            "strategy": strategy,
            "precision": request["precision"],
            "replicas": strat.num_replicas_in_sync,
            "devices": devices,
            "logical_devices": logical,
            "per_replica_batch": params["batch"],
            "params": params,
        }
        try:
            with stderr_redirected():
                rec.update(
                    _measure_one(
                        tf,
                        strat,
                        workload,
                        params,
                        request["precision"],
                        settings,
                        multiworker=strategy == "multiworker",
                    )
                )
        except Exception as exc:  # noqa: BLE001 -- a failing configuration is a result
            status, message = runner.classify(exc)
            rec.update({"status": status, "error": message})
        records.append(rec)
    return {
        "records": records,
        "tensorflow": tf.__version__,
        "task": json.loads(os.environ.get("TF_CONFIG", "{}")).get("task"),
    }


# --------------------------------------------------------------------------- parent side


def _in_child(request: dict, env: dict | None = None, timeout_s: float = 3600) -> dict:
    """:func:`child_main` in a fresh Python (``env`` given: without the parent's ``TF_CONFIG``
    unless ``env`` names one)."""
    unset = ("TF_CONFIG",) if env is not None and "TF_CONFIG" not in env else ()
    child = runner.run("gpukit.bench.distributed:child_main", request, timeout_s, env=env, unset=unset)
    if not child.ok:
        raise GpukitError(f"the distributed run failed: {child.error}")
    return child.value


def run_scaling(
    devices: int = 2,
    strategy: str = "mirrored",
    workloads=None,
    precision: str = "fp32",
    quick: bool = True,
    settings: Settings | None = None,
) -> Results:
    """Measure the training workloads on one device and under ``strategy``; a results document."""
    from .device import bench_environment, describe_attached

    names = check(devices, strategy, workloads)
    settings = settings or Settings.for_run(quick)
    started = datetime.now(UTC)
    base_req = {
        "devices": 1,
        "strategy": "mirrored",
        "workloads": names,
        "precision": precision,
        "quick": quick,
        "settings": asdict(settings),
    }
    baseline = _in_child(base_req, env={})  # one device, no cluster
    req = {**base_req, "devices": devices, "strategy": strategy}
    multi = _in_child(req)
    by_workload = {r["workload"]: r for r in baseline["records"]}
    records = []
    for rec in multi["records"]:
        one = by_workload.get(rec["workload"], {})
        rec = dict(rec)
        rec["baseline_throughput"] = one.get("throughput")
        if rec.get("status") == "ok" and one.get("status") == "ok":
            rec["speedup"] = rec["throughput"] / one["throughput"]
            rec["scaling_efficiency"] = rec["speedup"] / rec["replicas"]
        else:
            rec["speedup"] = rec["scaling_efficiency"] = None
        on_cpu = not any(str(d).startswith("/gpu") for d in rec.get("devices", []))
        if rec.get("logical_devices"):
            rec["note"] = (
                f"{rec['replicas']} logical devices split from one CPU: the code path of "
                "multi-GPU training, not a measure of GPU scaling"
            )
        elif on_cpu and strategy == "multiworker":
            rec["note"] = (
                f"{rec['replicas']} worker processes on CPUs: the code path of multi-worker "
                "training, not a measure of GPU scaling"
            )
        else:
            rec.setdefault("note", "")
        records.append(rec)
    return Results(
        "scaling",
        started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        bench_environment(),
        Device.from_dict(describe_attached()),
        tuple(ScalingRecord.from_dict(r) for r in records),
        (datetime.now(UTC) - started).total_seconds(),
        quick,
        None,
        asdict(settings),
        {"strategy": strategy, "devices": devices, "task": multi.get("task")},
    )
