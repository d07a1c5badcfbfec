"""TensorFlow workloads for the benchmark, each with its FLOP and byte counts per step.

A :class:`Config` names a workload, a precision and the workload's parameters; it is plain
data (JSON-able), so a configuration can run in a child process. :func:`build` turns it into
a :class:`Built` step: a compiled ``tf.function`` whose returned tensor depends on all of the
step's work, plus the counts the harness divides by. The counts are pure functions of the
parameters (no TensorFlow, :mod:`gpukit.bench.counts`), so they are tested exactly.

FLOPs count a multiply-add as two. Bytes are the least device-memory traffic a step needs
(every operand read once, every result written once); for whole models they are an estimate:
each layer's output written once and read once, weights read once, and for training the
gradients and optimizer state too. Training FLOPs are 3 x forward (the backward pass computes
gradients for activations and for weights, each as costly as the forward pass).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import precision as prec
from ..errors import ParameterError
from ..graph import activation_elements, forward_flops
from ..models.registry import keras_policy, train_step, transformer_model
from ..units import MIB
from .counts import bandwidth_counts, conv2d_counts, decoder_counts, matmul_counts, transformer_counts

#: Workloads in report order, with the unit of their throughput.
UNITS = {
    "matmul": "TFLOP/s",
    "bandwidth": "GB/s",
    "conv": "TFLOP/s",
    "resnet50": "images/s",
    "transformer": "tokens/s",
    "decoder": "tokens/s",
}
WORKLOADS = tuple(UNITS)


@dataclass(frozen=True)
class Config:
    """One benchmark configuration: plain data, so it can cross a process boundary."""

    workload: str
    precision: str
    params: dict = field(default_factory=dict)
    xla: bool = False

    def label(self) -> str:
        p = self.params
        if self.workload == "matmul":
            shape = f"{p['m']}x{p['n']}x{p['k']}"
            return f"matmul {p.get('shape', '')} {shape}".replace("  ", " ")
        if self.workload == "bandwidth":
            return f"bandwidth {p['kernel']} {p['elements'] * 4 / MIB:.0f} MiB"
        if self.workload == "conv":
            return (
                f"conv {p['kernel']}x{p['kernel']} {p['height']}x{p['width']}x{p['in_channels']}"
                f"->{p['out_channels']} batch {p['batch']}"
            )
        if self.workload == "resnet50":
            return f"resnet50 {p['mode']} {p['image_size']}px batch {p['batch']}"
        if self.workload == "transformer":
            return f"transformer {p['layers']}L h{p['hidden']} seq {p['seq_len']} batch {p['batch']}"
        if self.workload == "decoder":
            return (
                f"decoder {p['phase']} {p['layers']}L h{p['hidden']} prompt {p['prompt']} "
                f"context {p['context']} batch {p['batch']}"
            )
        return f"{self.workload} {p}"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Config:
        return cls(
            data["workload"], data["precision"], dict(data.get("params", {})), bool(data.get("xla", False))
        )


@dataclass
class Built:
    """A ready-to-time step and what one step does."""

    step: Callable[[], Any]
    flops_per_step: float
    bytes_per_step: float
    items_per_step: float | None
    unit: str
    math_mode: str


# --------------------------------------------------------------------------- defaults


@dataclass(frozen=True)
class DeviceInfo:
    """What a workload needs to know of the device it runs on."""

    kind: str  # cpu | gpu
    compute_capability: str | None = None

    @property
    def ampere_or_later(self) -> bool:
        return (
            self.kind == "gpu"
            and self.compute_capability is not None
            and float(self.compute_capability) >= 8.0
        )


def default_precisions(device: DeviceInfo, quick: bool) -> list[str]:
    """fp32 on a CPU (plus bf16 in a full run); fp32 and fp16 on a GPU, with tf32 and bf16 on Ampere+."""
    if device.kind == "cpu":
        return ["fp32"] if quick else ["fp32", "bf16"]
    out = ["fp32", "fp16"]
    if device.ampere_or_later:
        out = ["fp32", "tf32", "fp16", "bf16"] if not quick else ["fp32", "fp16", "bf16"]
    return out


#: The BERT-like encoder's shape (BERT-base); only its depth and batch change with the device.
TRANSFORMER_SHAPE = {"hidden": 768, "heads": 12, "ffn": 3072, "seq_len": 128, "vocab": 30522}
#: The decoder's shape on a GPU: LLaMA-shaped, grouped-query attention, 1.3 B parameters' worth of
#: layers cut to 8 (a short run), a 2048-token cache.
DECODER_SHAPE = {"hidden": 2048, "heads": 16, "kv_heads": 4, "ffn": 5632, "vocab": 32000}
#: A small encoder for code-path runs on a CPU (several logical devices share its cores).
_TINY_TRANSFORMER = {"hidden": 128, "heads": 2, "ffn": 512, "seq_len": 32, "vocab": 1000}


def sizes(kind: str, quick: bool) -> dict:
    """Every workload size, defined once: what ``gpukit bench`` runs on a ``kind`` (cpu or gpu)
    device, quick or full; ``scaling`` is what ``gpukit bench --devices N`` trains per replica.
    The GPU quick sizes are also the performance model's defaults (:func:`model_defaults`)."""
    if kind == "gpu":
        resnet = {"image_size": 224, "batch": 64 if quick else 128}
        transformer = {**TRANSFORMER_SHAPE, "layers": 12, "batch": 32 if quick else 64}
        return {
            "square": [2048, 4096, 8192] if quick else [1024, 2048, 4096, 8192, 16384],
            "llm": [(4096, 16384, 4096)] if quick else [(2048, 11008, 4096), (4096, 16384, 4096)],
            "bandwidth_elements": 2**27,
            "conv_batch": 32 if quick else 64,
            "conv_layers": 4,
            "resnet50": resnet,
            "transformer": transformer,
            "decoder": {
                **DECODER_SHAPE,
                "layers": 8,
                "prompt": 512,
                "context": 2048,
                "batch": 1 if quick else 8,
            },
            "scaling": {"resnet50": resnet, "transformer": transformer},
        }
    return {
        "square": [1024, 2048] if quick else [1024, 2048, 4096],
        "llm": [(512, 4096, 1024)] if quick else [(2048, 4096, 1024)],
        "bandwidth_elements": 2**25,
        "conv_batch": 4 if quick else 8,
        "conv_layers": 2 if quick else 4,
        "resnet50": {"image_size": 128, "batch": 4} if quick else {"image_size": 224, "batch": 8},
        "transformer": {
            **TRANSFORMER_SHAPE,
            **({"layers": 2, "batch": 4} if quick else {"layers": 4, "batch": 8}),
        },
        "decoder": {
            "hidden": 512,
            "heads": 8,
            "kv_heads": 2,
            "ffn": 1408,
            "vocab": 8000,
            **(
                {"layers": 2, "prompt": 128, "context": 512, "batch": 1}
                if quick
                else {"layers": 4, "prompt": 256, "context": 1024, "batch": 4}
            ),
        },
        "scaling": {
            "resnet50": {"image_size": 64 if quick else 128, "batch": 2 if quick else 8},
            "transformer": {**_TINY_TRANSFORMER, "layers": 2, "batch": 2 if quick else 8},
        },
    }


#: ResNet-50 3x3 convolutions of each stage: (height, width, in_channels, out_channels).
CONV_LAYERS = [(56, 56, 64, 64), (28, 28, 128, 128), (14, 14, 256, 256), (7, 7, 512, 512)]


def check_selection(workloads=None, precisions=None) -> tuple[list[str], list[str] | None]:
    """Validated workload names and canonical precisions (``None``: the device's defaults)."""
    names = list(workloads) if workloads else list(WORKLOADS)
    for w in names:
        if w not in UNITS:
            raise ParameterError(f"unknown workload {w!r}; choose from {', '.join(WORKLOADS)}")
    precs = [prec.trainable(p) for p in prec.normalize_all(precisions)] if precisions else None
    return names, precs


def default_configs(
    device: DeviceInfo, quick: bool = True, workloads=None, precisions=None, xla: bool = False
) -> list[Config]:
    """The benchmark set for this device: every workload at every precision, sized for it."""
    names, precs = check_selection(workloads, precisions)
    precs = precs or default_precisions(device, quick)
    size = sizes(device.kind, quick)
    out: list[Config] = []
    for w in names:
        if w == "bandwidth":  # bytes per second do not depend on the arithmetic precision
            out += [
                Config("bandwidth", "fp32", {"kernel": k, "elements": size["bandwidth_elements"]}, xla)
                for k in ("scale", "add")
            ]
            continue
        for p in precs:
            if w == "matmul":
                out += [
                    Config("matmul", p, {"shape": "square", "m": n, "n": n, "k": n}, xla)
                    for n in size["square"]
                ]
                out += [
                    Config("matmul", p, {"shape": "llm", "m": m, "n": n, "k": k}, xla)
                    for m, n, k in size["llm"]
                ]
            elif w == "conv":
                out += [
                    Config(
                        "conv",
                        p,
                        {
                            "batch": size["conv_batch"],
                            "height": h,
                            "width": wd,
                            "in_channels": ci,
                            "out_channels": co,
                            "kernel": 3,
                            "stride": 1,
                        },
                        xla,
                    )
                    for h, wd, ci, co in CONV_LAYERS[: size["conv_layers"]]
                ]
            elif w == "resnet50":
                out += [
                    Config("resnet50", p, {"mode": mode, **size["resnet50"]}, xla)
                    for mode in ("train", "infer")
                ]
            elif w == "transformer":
                out.append(Config("transformer", p, dict(size["transformer"]), xla))
            elif w == "decoder":
                out += [
                    Config("decoder", p, {"phase": phase, **size["decoder"]}, xla)
                    for phase in ("prefill", "decode")
                ]
    return out


# --------------------------------------------------------------------------- building (TensorFlow)


def _tf():
    from ..quiet import quiet_tensorflow

    return quiet_tensorflow()


@contextlib.contextmanager
def precision_scope(config: Config, device: DeviceInfo) -> Iterator[str]:
    """Set TF32 and the Keras policy for ``config``; yield the math that will really run
    (:func:`gpukit.precision.device_math`: ``FP32``, ``TF32``, ``FP16`` or ``BF16``).

    TensorFlow runs float32 matmuls and convolutions as TF32 on Ampere and later unless told
    not to: ``fp32`` turns TF32 off so FP32 is FP32, ``tf32`` and ``float32`` leave it on (its
    default), and ``tf32`` or ``bf16`` where the device has none raise :class:`gpukit.precision.Unsupported`.
    Both settings are restored afterwards.
    """
    math = prec.device_math(config.precision, device.kind, device.compute_capability)
    tf = _tf()
    spec = prec.get(config.precision)
    old_tf32 = tf.config.experimental.tensor_float_32_execution_enabled()
    if spec.tf32 is not None:
        tf.config.experimental.enable_tensor_float_32_execution(spec.tf32)
    try:
        with keras_policy(spec.keras_policy):
            yield math
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(old_tf32)


def build(config: Config, math_mode: str) -> Built:
    """A compiled step for ``config`` (call inside :func:`precision_scope`)."""
    builders = {
        "matmul": _build_matmul,
        "bandwidth": _build_bandwidth,
        "conv": _build_conv,
        "resnet50": _build_resnet50,
        "transformer": _build_transformer,
        "decoder": _build_decoder,
    }
    try:
        builder = builders[config.workload]
    except KeyError:
        raise ParameterError(
            f"unknown workload {config.workload!r}; choose from {', '.join(WORKLOADS)}"
        ) from None
    return builder(config, math_mode)


def _function(tf, fn, xla: bool):
    return tf.function(fn, jit_compile=True) if xla else tf.function(fn)


def _build_matmul(config: Config, math_mode: str) -> Built:
    tf = _tf()
    p = config.params
    dtype = prec.get(config.precision).dtype
    a = tf.cast(tf.random.uniform((p["m"], p["k"])), dtype)
    b = tf.cast(tf.random.uniform((p["k"], p["n"])), dtype)
    flops, bytes_ = matmul_counts(p["m"], p["n"], p["k"], prec.itemsize(config.precision))
    step = _function(tf, lambda: tf.matmul(a, b), config.xla)
    return Built(step, flops, bytes_, None, UNITS["matmul"], math_mode)


def _build_bandwidth(config: Config, math_mode: str) -> Built:
    tf = _tf()
    p = config.params
    x = tf.random.uniform((p["elements"],), dtype=tf.float32)
    flops, bytes_ = bandwidth_counts(p["kernel"], p["elements"], 4)
    if p["kernel"] == "scale":
        fn = lambda: x * 1.0001  # noqa: E731
    else:
        y = tf.random.uniform((p["elements"],), dtype=tf.float32)
        fn = lambda: x + y  # noqa: E731
    return Built(_function(tf, fn, config.xla), flops, bytes_, None, UNITS["bandwidth"], math_mode)


def _build_conv(config: Config, math_mode: str) -> Built:
    tf = _tf()
    p = config.params
    dtype = prec.get(config.precision).dtype
    x = tf.cast(tf.random.uniform((p["batch"], p["height"], p["width"], p["in_channels"])), dtype)
    w = tf.cast(
        tf.random.uniform((p["kernel"], p["kernel"], p["in_channels"], p["out_channels"]), -0.1, 0.1), dtype
    )
    flops, bytes_ = conv2d_counts(
        p["batch"],
        p["height"],
        p["width"],
        p["in_channels"],
        p["out_channels"],
        p["kernel"],
        p["stride"],
        prec.itemsize(config.precision),
    )
    fn = lambda: tf.nn.conv2d(x, w, strides=p["stride"], padding="SAME")  # noqa: E731
    return Built(_function(tf, fn, config.xla), flops, bytes_, None, UNITS["conv"], math_mode)


def _model_bytes(model, batch: int, itemsize: int, training: bool) -> float:
    acts = activation_elements(model) * batch
    params = model.count_params()
    return float((2 * acts) * itemsize + params * 4 * (4 if training else 1))


def _build_resnet50(config: Config, math_mode: str) -> Built:
    tf = _tf()
    import keras

    p = config.params
    size, batch, training = p["image_size"], p["batch"], p["mode"] == "train"
    model = keras.applications.ResNet50(weights=None, input_shape=(size, size, 3), classes=1000)
    x = tf.random.uniform((batch, size, size, 3))
    forward = forward_flops(model) * batch
    itemsize = prec.itemsize(config.precision)
    bytes_ = _model_bytes(model, batch, itemsize, training)
    if training:
        y = tf.random.uniform((batch,), maxval=1000, dtype=tf.int32)
        optimizer = keras.optimizers.SGD(learning_rate=0.01, momentum=0.9)
        if config.precision == "fp16":
            optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
        step = train_step(
            tf, model, keras.losses.SparseCategoricalCrossentropy(), optimizer, x, y, config.xla
        )
        return Built(step, 3 * forward, bytes_, batch, UNITS["resnet50"], math_mode)
    step = _function(tf, lambda: model(x, training=False), config.xla)
    return Built(step, forward, bytes_, batch, UNITS["resnet50"], math_mode)


def _build_transformer(config: Config, math_mode: str) -> Built:
    tf = _tf()
    import keras

    p = config.params
    model = transformer_model(p["hidden"], p["heads"], p["ffn"], p["layers"], p["seq_len"], p["vocab"])
    x = tf.random.uniform((p["batch"], p["seq_len"]), maxval=p["vocab"], dtype=tf.int32)
    y = tf.random.uniform((p["batch"], p["seq_len"]), maxval=p["vocab"], dtype=tf.int32)
    optimizer = keras.optimizers.AdamW(learning_rate=1e-4)
    if config.precision == "fp16":
        optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    itemsize = prec.itemsize(config.precision)
    flops, bytes_ = transformer_counts(
        p["batch"],
        p["seq_len"],
        p["hidden"],
        p["heads"],
        p["ffn"],
        p["layers"],
        p["vocab"],
        itemsize,
        training=True,
    )
    step = train_step(tf, model, loss, optimizer, x, y, config.xla)
    return Built(step, flops, bytes_, p["batch"] * p["seq_len"], UNITS["transformer"], math_mode)


def decoder_step(tf, params: dict, dtype: str):
    """A LLaMA-shaped decoder with a key-value cache, in plain TensorFlow ops (Keras has no cached
    attention layer): returns ``(prefill, decode, caches)``, two compiled-ready functions and the
    cache variables (keys and values of each layer, each its own variable, so that writing one
    layer's never copies another's). ``prefill`` runs the prompt and writes its keys and values into
    the cache; ``decode`` generates one token per sequence attending over the whole cache."""
    p = params
    b, prompt, context = p["batch"], p["prompt"], p["context"]
    hd = p["hidden"] // p["heads"]
    embed, layers, out_head = _decoder_weights(tf, p, dtype)
    caches = [
        (
            tf.Variable(tf.zeros((b, context, p["kv_heads"], hd), dtype), trainable=False),
            tf.Variable(tf.zeros((b, context, p["kv_heads"], hd), dtype), trainable=False),
        )
        for _ in range(p["layers"])
    ]
    prompt_ids = tf.random.uniform((b, prompt), maxval=p["vocab"], dtype=tf.int32)
    next_ids = tf.random.uniform((b, 1), maxval=p["vocab"], dtype=tf.int32)

    def run(ids, span, position):
        x = tf.gather(embed, ids)
        for i, w in enumerate(layers):
            x = _decoder_block(tf, p, dtype, x, w, caches[i], span, position)
        return tf.cast(_rms_norm(tf, x[:, -1], dtype) @ out_head, tf.float32)

    # named functions, not lambdas: AutoGraph reads a function's source to compile it
    def prefill():
        return run(prompt_ids, prompt, None)

    def decode():
        return run(next_ids, 1, context - 1)

    return prefill, decode, caches


def _decoder_weights(tf, p: dict, dtype: str):
    """The decoder's frozen random weights: the token embedding, each layer's projections (Q, K, V,
    output, gate, up, down) and the untied output head."""
    h, heads, kvh, f, v = p["hidden"], p["heads"], p["kv_heads"], p["ffn"], p["vocab"]
    hd = h // heads

    def weight(*shape):
        return tf.Variable(tf.cast(tf.random.normal(shape, stddev=0.02), dtype), trainable=False)

    embed = weight(v, h)
    layers = [
        {
            "q": weight(h, h),
            "k": weight(h, kvh * hd),
            "v": weight(h, kvh * hd),
            "o": weight(h, h),
            "gate": weight(h, f),
            "up": weight(h, f),
            "down": weight(f, h),
        }
        for _ in range(p["layers"])
    ]
    out_head = weight(h, v)
    return embed, layers, out_head


def _rms_norm(tf, x, dtype: str):
    """RMS normalisation computed in float32, returned in ``dtype``."""
    x32 = tf.cast(x, tf.float32)
    return tf.cast(x32 * tf.math.rsqrt(tf.reduce_mean(x32 * x32, -1, keepdims=True) + 1e-6), dtype)


def _attend(tf, q, k, vv, mask, group: int, hd: int, dtype: str):
    """Grouped-query attention: each key-value head serves ``group`` query heads."""
    k = tf.repeat(k, group, axis=2)
    vv = tf.repeat(vv, group, axis=2)
    scores = tf.einsum("bqhd,bkhd->bhqk", q, k) / tf.cast(hd**0.5, dtype)
    if mask is not None:
        scores += mask
    probs = tf.cast(tf.nn.softmax(tf.cast(scores, tf.float32), -1), dtype)
    return tf.einsum("bhqk,bkhd->bqhd", probs, vv)


def _decoder_block(tf, p: dict, dtype: str, x, w: dict, cache, span, position):
    """One decoder layer over ``x``: attention through the layer's ``cache`` of keys and values
    (``position`` None: the prompt, written whole and attended causally; else one position,
    written there and attending over the whole cache), then the gated FFN."""
    b, h, heads, kvh = p["batch"], p["hidden"], p["heads"], p["kv_heads"]
    hd = h // heads
    group = heads // kvh
    n = tf.shape(x)[1]
    y = _rms_norm(tf, x, dtype)
    q = tf.reshape(y @ w["q"], (b, n, heads, hd))
    k = tf.reshape(y @ w["k"], (b, n, kvh, hd))
    vv = tf.reshape(y @ w["v"], (b, n, kvh, hd))
    keys, values = cache
    if position is None:  # prefill: write the prompt's keys and values, attend causally
        keys[:, :span].assign(k)
        values[:, :span].assign(vv)
        causal = tf.linalg.band_part(tf.ones((span, span)), -1, 0)
        mask = tf.cast((1.0 - causal) * -1e4, dtype)[None, None]
        a = _attend(tf, q, k, vv, mask, group, hd, dtype)
    else:  # decode: write one position, attend over the whole cache
        keys[:, position : position + 1].assign(k)
        values[:, position : position + 1].assign(vv)
        a = _attend(tf, q, keys.read_value(), values.read_value(), None, group, hd, dtype)
    x = x + tf.reshape(a, (b, n, h)) @ w["o"]
    y = _rms_norm(tf, x, dtype)
    return x + (tf.nn.silu(y @ w["gate"]) * (y @ w["up"])) @ w["down"]


def _build_decoder(config: Config, math_mode: str) -> Built:
    tf = _tf()
    p = config.params
    dtype = prec.get(config.precision).dtype
    prefill, decode, _ = decoder_step(tf, p, dtype)
    flops, bytes_ = decoder_counts(
        p["batch"],
        p["prompt"],
        p["context"],
        p["hidden"],
        p["heads"],
        p["kv_heads"],
        p["ffn"],
        p["layers"],
        p["vocab"],
        prec.itemsize(config.precision),
        p["phase"],
    )
    if p["phase"] == "prefill":
        return Built(
            _function(tf, prefill, config.xla),
            flops,
            bytes_,
            p["batch"] * p["prompt"],
            UNITS["decoder"],
            math_mode,
        )
    return Built(_function(tf, decode, config.xla), flops, bytes_, p["batch"], UNITS["decoder"], math_mode)
