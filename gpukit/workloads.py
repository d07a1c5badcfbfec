"""TensorFlow workloads for the benchmark, each with its FLOP and byte counts per step.

A :class:`Config` names a workload, a precision and the workload's parameters; it is plain
data (JSON-able), so a configuration can run in a child process. :func:`build` turns it into
a :class:`Built` step: a compiled ``tf.function`` whose returned tensor depends on all of the
step's work, plus the counts the harness divides by. The counts are pure functions of the
parameters (no TensorFlow), so they are tested exactly.

FLOPs count a multiply-add as two. Bytes are the least device-memory traffic a step needs
(every operand read once, every result written once); for whole models they are an estimate:
each layer's output written once and read once, weights read once, and for training the
gradients and optimizer state too. Training FLOPs are 3 x forward (the backward pass computes
gradients for activations and for weights, each as costly as the forward pass).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from . import precision as prec
from .errors import ParameterError
from .graph import activation_elements, forward_flops
from .models import keras_policy, train_step, transformer_model

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
            return f"bandwidth {p['kernel']} {p['elements'] * 4 / 2**20:.0f} MiB"
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


# --------------------------------------------------------------------------- counts (no TensorFlow)


def matmul_counts(m: int, n: int, k: int, itemsize: int) -> tuple[float, float]:
    """FLOPs and bytes of ``(m x k) @ (k x n)``: 2mnk; both operands read, the result written."""
    return 2.0 * m * n * k, float((m * k + k * n + m * n) * itemsize)


def bandwidth_counts(kernel: str, elements: int, itemsize: int) -> tuple[float, float]:
    """``scale`` (y = a x: read 1, write 1) or ``add`` (z = x + y: read 2, write 1)."""
    if kernel == "scale":
        return float(elements), 2.0 * elements * itemsize
    if kernel == "add":
        return float(elements), 3.0 * elements * itemsize
    raise ParameterError(f"unknown bandwidth kernel {kernel!r}; use scale or add")


def conv2d_out(size: int, stride: int) -> int:
    """Output size of a SAME-padded convolution."""
    return math.ceil(size / stride)


def conv2d_counts(
    batch: int,
    height: int,
    width: int,
    in_channels: int,
    out_channels: int,
    kernel: int,
    stride: int,
    itemsize: int,
) -> tuple[float, float]:
    """FLOPs and bytes of a SAME-padded 2-D convolution (NHWC)."""
    ho, wo = conv2d_out(height, stride), conv2d_out(width, stride)
    flops = 2.0 * batch * ho * wo * out_channels * kernel * kernel * in_channels
    elems = (
        batch * height * width * in_channels
        + kernel * kernel * in_channels * out_channels
        + batch * ho * wo * out_channels
    )
    return flops, float(elems * itemsize)


def transformer_counts(
    batch: int,
    seq_len: int,
    hidden: int,
    heads: int,
    ffn: int,
    layers: int,
    vocab: int,
    itemsize: int,
    training: bool = True,
) -> tuple[float, float]:
    """FLOPs and estimated bytes of a BERT-like encoder step with a token-level output head.

    Per layer and token: Q, K, V and output projections 4 x 2h^2; attention scores and the
    weighted sum 2 x 2 s h; the feed-forward block 2 x 2 h f. The head adds 2 h V per token.
    """
    tokens = batch * seq_len
    per_layer = tokens * (8 * hidden * hidden + 4 * seq_len * hidden + 4 * hidden * ffn)
    forward = layers * per_layer + tokens * 2 * hidden * vocab
    flops = forward * (3 if training else 1)
    params = layers * (4 * hidden * hidden + 2 * hidden * ffn) + 2 * vocab * hidden
    # Activations per layer and token: q, k, v, attention output, two norms, ffn in/out, plus
    # the s x heads attention weights.
    acts = layers * tokens * (8 * hidden + ffn + seq_len * heads) + tokens * vocab
    bytes_ = (2 * acts + params * (3 if training else 1)) * itemsize
    return float(flops), float(bytes_)


def decoder_counts(
    batch: int,
    prompt: int,
    context: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    ffn: int,
    layers: int,
    vocab: int,
    itemsize: int,
    phase: str,
) -> tuple[float, float]:
    """FLOPs and least bytes of one step of a LLaMA-shaped decoder (grouped-query attention, gated
    FFN, untied output head) serving ``batch`` sequences.

    ``prefill`` runs the ``prompt`` through every layer (Q, K, V and output projections, the full
    prompt x prompt attention scores and weighted sum, the three FFN matrices) and projects the
    last position to the vocabulary; ``decode`` runs one token per sequence attending over a full
    cache of ``context`` positions. Bytes: the weights read once, the KV cache written (prefill) or
    read whole and one position written (decode), the attention scores written and read, and the
    hidden states in and out of each layer.
    """
    if phase not in ("prefill", "decode"):
        raise ParameterError(f"decoder phase {phase!r}: use prefill or decode")
    head = hidden // heads
    kv = kv_heads * head
    layer_weights = hidden * (hidden + 2 * kv) + hidden * hidden + 3 * hidden * ffn
    tokens, span = (batch * prompt, prompt) if phase == "prefill" else (batch, context)
    flops = (
        2.0 * layers * layer_weights * tokens
        + 4.0 * layers * tokens * span * hidden
        + 2.0 * batch * hidden * vocab
    )
    cache = layers * 2 * batch * kv * (prompt if phase == "prefill" else context + 1)
    scores = layers * batch * heads * (prompt * prompt if phase == "prefill" else context) * 2
    hidden_io = layers * tokens * (4 * hidden + 2 * kv + 3 * ffn) + batch * vocab
    bytes_ = (
        layers * layer_weights + hidden * vocab + tokens * hidden + cache + scores + hidden_io
    ) * itemsize
    return float(flops), float(bytes_)


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
    from .device import quiet_tensorflow

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
    L, h, heads, kvh, f, v = p["layers"], p["hidden"], p["heads"], p["kv_heads"], p["ffn"], p["vocab"]
    b, prompt, context = p["batch"], p["prompt"], p["context"]
    hd = h // heads
    group = heads // kvh

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
        for _ in range(L)
    ]
    out_head = weight(h, v)
    caches = [
        (
            tf.Variable(tf.zeros((b, context, kvh, hd), dtype), trainable=False),
            tf.Variable(tf.zeros((b, context, kvh, hd), dtype), trainable=False),
        )
        for _ in range(L)
    ]
    prompt_ids = tf.random.uniform((b, prompt), maxval=v, dtype=tf.int32)
    next_ids = tf.random.uniform((b, 1), maxval=v, dtype=tf.int32)

    def norm(x):
        x32 = tf.cast(x, tf.float32)
        return tf.cast(x32 * tf.math.rsqrt(tf.reduce_mean(x32 * x32, -1, keepdims=True) + 1e-6), dtype)

    def attend(q, k, vv, mask):
        # grouped-query attention: each key-value head serves ``group`` query heads
        k = tf.repeat(k, group, axis=2)
        vv = tf.repeat(vv, group, axis=2)
        scores = tf.einsum("bqhd,bkhd->bhqk", q, k) / tf.cast(hd**0.5, dtype)
        if mask is not None:
            scores += mask
        probs = tf.cast(tf.nn.softmax(tf.cast(scores, tf.float32), -1), dtype)
        return tf.einsum("bhqk,bkhd->bqhd", probs, vv)

    def block(x, w, layer, span, position):
        n = tf.shape(x)[1]
        y = norm(x)
        q = tf.reshape(y @ w["q"], (b, n, heads, hd))
        k = tf.reshape(y @ w["k"], (b, n, kvh, hd))
        vv = tf.reshape(y @ w["v"], (b, n, kvh, hd))
        keys, values = caches[layer]
        if position is None:  # prefill: write the prompt's keys and values, attend causally
            keys[:, :span].assign(k)
            values[:, :span].assign(vv)
            causal = tf.linalg.band_part(tf.ones((span, span)), -1, 0)
            mask = tf.cast((1.0 - causal) * -1e4, dtype)[None, None]
            a = attend(q, k, vv, mask)
        else:  # decode: write one position, attend over the whole cache
            keys[:, position : position + 1].assign(k)
            values[:, position : position + 1].assign(vv)
            a = attend(q, keys.read_value(), values.read_value(), None)
        x = x + tf.reshape(a, (b, n, h)) @ w["o"]
        y = norm(x)
        return x + (tf.nn.silu(y @ w["gate"]) * (y @ w["up"])) @ w["down"]

    def run(ids, span, position):
        x = tf.gather(embed, ids)
        for i, w in enumerate(layers):
            x = block(x, w, i, span, position)
        return tf.cast(norm(x[:, -1]) @ out_head, tf.float32)

    # named functions, not lambdas: AutoGraph reads a function's source to compile it
    def prefill():
        return run(prompt_ids, prompt, None)

    def decode():
        return run(next_ids, 1, context - 1)

    return prefill, decode, caches


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
