"""The benchmark decoder's memory measured here: its allocator peak over a prefill and a decode step,
in a fresh process, next to :func:`gpukit.llm.memory.inference_memory` of the same shape."""

from __future__ import annotations

from .. import precision as prec
from ..bench import runner
from ..bench.workloads import decoder_step
from ..memory import measure_env
from ..quiet import quiet_tensorflow
from .memory import inference_memory
from .models import LLM


def decoder_llm(params: dict) -> LLM:
    """The architecture of the benchmark's decoder workload (:func:`gpukit.bench.workloads.decoder_step`)."""
    return LLM(
        "bench-decoder",
        params["layers"],
        params["hidden"],
        params["heads"],
        params["kv_heads"],
        params["hidden"] // params["heads"],
        params["ffn"],
        params["vocab"],
        max_context=params["context"],
    )


def measure_decoder_memory(params: dict, precision: str = "fp32", timeout_s: float = 600) -> dict:
    """The benchmark decoder's allocator peak over a prefill and a decode step (in a fresh process,
    :func:`gpukit.bench.runner.run`), next to :func:`inference_memory` of the same shape: weights at the
    run's precision, its KV cache, one step's activations without flash attention (it has none),
    no runtime reserve (none is allocated through TensorFlow's allocator)."""
    p = prec.normalize(precision)
    child = runner.run(
        "gpukit.llm.measure:measure_decoder_child",
        {"params": params, "precision": p},
        timeout_s,
        env=measure_env(),
    )
    if not child.ok:
        return {"status": child.status, "error": child.error}
    weights = "f32" if prec.get(p).dtype == "float32" else "f16"
    # the decoder prefills every sequence's whole prompt at once: batch x prompt tokens, prompt keys
    est = inference_memory(
        decoder_llm(params),
        weights,
        params["context"],
        params["batch"],
        kv=weights,
        flash_attention=False,
        reserve_bytes=0,
        chunk_tokens=params["batch"] * params["prompt"],
        key_span=params["prompt"],
    )
    measured = child.value["measured_peak_bytes"]
    return {
        "status": "ok",
        **child.value,
        "estimated_bytes": est["total_bytes"],
        "estimate_error": est["total_bytes"] / measured - 1,
        **{f"estimated_{k}": v for k, v in est.items()},
    }


def measure_decoder_child(args: dict) -> dict:
    """Child side of :func:`measure_decoder_memory`."""
    tf = quiet_tensorflow()
    dev = "GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0"
    dtype = prec.get(args["precision"]).dtype
    with tf.device(dev):
        prefill, decode, _ = decoder_step(tf, args["params"], dtype)
        prefill_fn, decode_fn = tf.function(prefill), tf.function(decode)
        prefill_fn()
        decode_fn()  # compiled and warmed up; what stays allocated now is weights and cache
        tf.config.experimental.reset_memory_stats(dev)
        resident = tf.config.experimental.get_memory_info(dev)["current"]
        prefill_fn().numpy()
        decode_fn().numpy()
        info = tf.config.experimental.get_memory_info(dev)
    return {
        "device": dev,
        "precision": args["precision"],
        "measured_peak_bytes": int(info["peak"]),
        "resident_bytes": int(resident),
    }
