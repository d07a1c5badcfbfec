"""Models by name: Keras applications, saved ``.keras`` files, the built-in transformer shapes,
the BERT-like encoder the benchmark trains, optimizers by name, the modes of a step (train or
infer) and one compiled training step.

Everything here that builds a model imports TensorFlow lazily; resolving a name to a
:class:`ModelSpec` needs it only for ``keras.applications`` names, and only until their list is
kept on disk (:func:`keras_application_names`).
"""

from __future__ import annotations

import collections
import contextlib
import difflib
import functools
import os
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import GpukitError, ParameterError
from . import walk_cache

#: Optimizers by gpukit's name, with the slot variables each keeps per trainable parameter.
OPTIMIZER_SLOTS = {
    "sgd": 0,
    "momentum": 1,
    "nesterov": 1,
    "adam": 2,
    "adamw": 2,
    "rmsprop": 1,
    "adagrad": 1,
    "adadelta": 2,
    "adamax": 2,
    "nadam": 2,
    "lion": 1,
}


#: What a step does: a training step (forward, backward, the optimizer's update) or an inference
#: step (forward only). The memory and performance models take one of these.
MODES = ("train", "infer")


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`MODES`, or a one-line error."""
    if mode not in MODES:
        raise ParameterError(f"mode {mode!r}: use train or infer")
    return mode


def check_optimizer(name: str) -> str:
    """gpukit's name of an optimizer (lower case), or a one-line error listing the known ones."""
    n = str(name).lower()
    if n not in OPTIMIZER_SLOTS:
        raise ParameterError(f"unknown optimizer {name!r}; use one of {', '.join(OPTIMIZER_SLOTS)}")
    return n


class UnknownModelError(GpukitError):
    """A model name matches no Keras application, saved file or built-in configuration."""


@dataclass(frozen=True)
class TransformerSpec:
    """A transformer by its shape; parameters and activations follow from it."""

    name: str
    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int
    seq_len: int
    decoder: bool
    gated_ffn: bool = False  # SwiGLU (three FFN matrices) as in LLaMA

    def params(self) -> int:
        h = self.hidden
        ffn = (3 if self.gated_ffn else 2) * h * self.ffn
        per_layer = 4 * h * h + ffn + 4 * h  # attention, FFN, two norms
        embeddings = self.vocab * h + (0 if self.gated_ffn else self.seq_len * h)
        head = self.vocab * h if self.gated_ffn else 0  # LLaMA does not tie its output head
        return self.layers * per_layer + embeddings + head


#: Built-in configurations (published model shapes).
TRANSFORMERS = {
    "bert-base": TransformerSpec("bert-base", 12, 768, 12, 3072, 30522, 512, decoder=False),
    "bert-large": TransformerSpec("bert-large", 24, 1024, 16, 4096, 30522, 512, decoder=False),
    "gpt2-small": TransformerSpec("gpt2-small", 12, 768, 12, 3072, 50257, 1024, decoder=True),
    "gpt2-medium": TransformerSpec("gpt2-medium", 24, 1024, 16, 4096, 50257, 1024, decoder=True),
    "llama-7b": TransformerSpec("llama-7b", 32, 4096, 32, 11008, 32000, 2048, decoder=True, gated_ffn=True),
}

#: Fine-tuning tasks a built-in encoder is named with (``bert-base-squad``): the output head
#: (:data:`gpukit.graph.HEADS`) and the default sequence length. SQuAD v1.1 fine-tuning as in
#: Google's BERT and NVIDIA's NGC scripts: a start and an end logit per token, 384 tokens.
TASKS = {"squad": ("span", 384)}


def transformer_task(name: str) -> tuple[TransformerSpec, str, int] | None:
    """``(shape, head, default sequence length)`` of a built-in transformer name, with or without
    a task suffix (``bert-large-squad``); None for any other name."""
    key = str(name).strip().lower()
    if key in TRANSFORMERS:
        spec = TRANSFORMERS[key]
        return spec, "lm", min(spec.seq_len, 512)
    base, _, task = key.rpartition("-")
    if task in TASKS and base in TRANSFORMERS and not TRANSFORMERS[base].decoder:
        head, seq_len = TASKS[task]
        return TRANSFORMERS[base], head, seq_len
    return None


def keras_application_names() -> list[str]:
    """Every model constructor in ``keras.applications`` (ResNet50, MobileNetV2, ...); kept on disk
    by Keras version (:mod:`gpukit.models.walk_cache`), so that naming a model need not load TensorFlow."""
    return list(_application_names_kept())


@functools.lru_cache(maxsize=1)
def _application_names_kept() -> tuple[str, ...]:
    return tuple(walk_cache.load_or_build("applications", {}, _application_names)["names"])


def _application_names() -> dict:
    from ..quiet import quiet_tensorflow

    quiet_tensorflow()
    import keras

    names = []
    for attr in dir(keras.applications):
        obj = getattr(keras.applications, attr)
        if attr[:1].isupper() and callable(obj):
            names.append(attr)
    return {"names": sorted(names)}


@dataclass(frozen=True)
class ModelSpec:
    """What to estimate: a Keras application (with input shape), a saved file, or a transformer."""

    name: str
    kind: str  # application | file | transformer | zoo
    input_shape: tuple[int, ...] | None = None
    classes: int = 1000
    sizes: tuple[tuple[str, int], ...] = ()  # a Keras-layer model's sizes other than its defaults

    def label(self) -> str:
        """The name with any sizes that differ from the defaults (``keras-encoder seq_len=512``)."""
        return " ".join([self.name] + [f"{k}={v}" for k, v in self.sizes])


def resolve_model(
    name: str, input_shape: Sequence[int] | None = None, classes: int = 1000, seq_len: int | None = None
) -> ModelSpec:
    """Turn a user's model name into a :class:`ModelSpec`, with suggestions for a typo.

    ``seq_len`` sets the sequence length of a Keras-layer model that reads tokens (its default
    otherwise); image models have none and ignore it (a built-in transformer's is set when it is
    estimated)."""
    text = str(name).strip()
    if not text:
        raise UnknownModelError("empty model name; give a keras.applications name such as ResNet50")
    if text.endswith(".keras") or os.path.sep in text:
        path = Path(text)
        if not path.exists():
            raise UnknownModelError(f"model file {path} not found")
        if path.suffix == ".keras" and not zipfile.is_zipfile(path):  # Keras would call it "not found"
            raise UnknownModelError(
                f"model file {path} is not a .keras archive; write one with model.save('{path.name}')"
            )
        return ModelSpec(str(path), "file")
    key = text.lower().replace("_", "-")
    if transformer_task(key) is not None:  # bert-base, or bert-base fine-tuned on SQuAD
        return ModelSpec(key, "transformer")
    from . import zoo

    if key in zoo.ZOO:
        if seq_len is not None and seq_len < 1:
            raise ParameterError(f"sequence length {seq_len} must be at least 1")
        given = (("seq_len", int(seq_len)),) if seq_len and "seq_len" in zoo.sizes(key) else ()
        return ModelSpec(key, "zoo", None, classes, given)
    apps = keras_application_names()
    by_lower = {a.lower(): a for a in apps}
    if text.lower() in by_lower:
        shape = tuple(input_shape) if input_shape else None
        if shape is not None and (len(shape) != 3 or min(shape) < 1):
            raise ParameterError(f"input shape {','.join(map(str, shape))} is not height,width,channels")
        return ModelSpec(by_lower[text.lower()], "application", shape, classes)
    choices = apps + list(TRANSFORMERS) + list(zoo.ZOO)
    close = difflib.get_close_matches(text, choices, n=3, cutoff=0.5) or [
        by_lower[c] for c in difflib.get_close_matches(text.lower(), list(by_lower), n=3, cutoff=0.5)
    ]
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise UnknownModelError(
        f"unknown model {name!r}; {hint}use a keras.applications name, a .keras file, "
        f"one of {', '.join(TRANSFORMERS)}, or one of the Keras-layer models {', '.join(zoo.ZOO)}"
    )


@contextlib.contextmanager
def keras_policy(name: str):
    """Keras's global dtype policy set to ``name`` for the block (models built in it compute in its
    types), and the one before restored, after an error too."""
    from ..quiet import quiet_tensorflow

    quiet_tensorflow()
    import keras

    before = keras.mixed_precision.global_policy().name
    keras.mixed_precision.set_global_policy(name)
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy(before)


def build_model(spec: ModelSpec):
    """The Keras model of a spec (random weights: gpukit never downloads weights)."""
    from ..quiet import quiet_tensorflow

    quiet_tensorflow()
    import keras

    if spec.kind == "zoo":
        from . import zoo

        return zoo.build(spec.name, **dict(spec.sizes))
    if spec.kind == "file":
        try:
            with warnings.catch_warnings():  # Keras's own NumPy 2 deprecation notice on load
                warnings.simplefilter("ignore", DeprecationWarning)
                return load_in_global_policy(spec.name)
        except Exception as exc:  # noqa: BLE001 -- any unreadable file is the user's to fix
            raise GpukitError(f"cannot load model file {spec.name}: {str(exc).splitlines()[0]}") from None
    ctor = getattr(keras.applications, spec.name)
    kwargs = {"weights": None, "classes": spec.classes}
    if spec.input_shape:
        kwargs["input_shape"] = tuple(spec.input_shape)
    try:
        return ctor(**kwargs)
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0]
        raise ParameterError(f"{spec.name} cannot take input shape {spec.input_shape}: {first}") from None


#: The classes of a Keras config's dtype policy that say what a layer computes in (a quantised
#: layer's policy says more, and is left as it is).
_FLOAT_POLICIES = frozenset({"DTypePolicy", "FloatDTypePolicy"})


def _float_policies(config):
    """The config of every float dtype policy named anywhere in a Keras config (nested layers' too)."""
    if isinstance(config, dict):
        if config.get("class_name") in _FLOAT_POLICIES and isinstance(config.get("config"), dict):
            yield config["config"]
        for value in config.values():
            yield from _float_policies(value)
    elif isinstance(config, list):
        for value in config:
            yield from _float_policies(value)


def load_in_global_policy(path: str):
    """The model of a saved ``.keras`` file as it computes under Keras's global dtype policy.

    A saved config pins every layer to the policy it was saved under (a model saved in float32
    loads in float32 under ``mixed_bfloat16``), so the layers that have the policy most of them
    have are built in the global one, as building the model under it would have made them; a layer
    saved in another (a float32 head of a mixed-precision model) keeps its own. The weights are
    loaded into the model so built, and no copy in the saved policy is made. Another kind of file,
    or a model already in the global policy, is loaded as it is."""
    import json

    import keras

    target = keras.mixed_precision.global_policy().name
    config = None
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            if "config.json" in archive.namelist():
                config = json.loads(archive.read("config.json"))
    policies = list(_float_policies(config))
    saved = collections.Counter(p.get("name") for p in policies).most_common(1)[0][0] if policies else target
    if saved == target:
        return keras.models.load_model(path, compile=False)
    for policy in policies:
        if policy.get("name") == saved:
            policy["name"] = target
    model = keras.saving.deserialize_keras_object(config)
    model.load_weights(path)
    return model


def default_input_shape(model) -> tuple[int, ...]:
    return tuple(int(d) for d in model.inputs[0].shape[1:])


def synthetic_batch(tf, model, batch: int):
    """Random inputs and integer labels of ``model``'s shapes: token ids below the first
    ``Embedding``'s vocabulary for integer inputs, one label per output position."""
    shape = default_input_shape(model)
    dtype = model.inputs[0].dtype
    if "int" in str(dtype):
        vocab = next(
            (int(layer.input_dim) for layer in model.layers if type(layer).__name__ == "Embedding"), 2
        )
        x = tf.random.uniform((batch, *shape), maxval=vocab, dtype=tf.int32)
    else:
        x = tf.random.uniform((batch, *shape))
    out = model.outputs[0].shape
    y = tf.random.uniform((batch, *[int(d) for d in out[1:-1]]), maxval=int(out[-1]), dtype=tf.int32)
    return x, y


def make_optimizer(name: str):
    """A Keras optimizer by gpukit's optimizer name."""
    import keras

    n = check_optimizer(name)
    makers = {
        "sgd": lambda: keras.optimizers.SGD(0.01),
        "momentum": lambda: keras.optimizers.SGD(0.01, momentum=0.9),
        "nesterov": lambda: keras.optimizers.SGD(0.01, momentum=0.9, nesterov=True),
        "adam": keras.optimizers.Adam,
        "adamw": keras.optimizers.AdamW,
        "rmsprop": keras.optimizers.RMSprop,
        "adagrad": keras.optimizers.Adagrad,
        "adadelta": keras.optimizers.Adadelta,
        "adamax": keras.optimizers.Adamax,
        "nadam": keras.optimizers.Nadam,
        "lion": keras.optimizers.Lion,
    }
    return makers[n]()


def transformer_model(hidden: int, heads: int, ffn: int, layers: int, seq_len: int, vocab: int):
    """A BERT-like encoder: token and position embeddings, ``layers`` post-norm blocks of
    multi-head self-attention and a GELU feed-forward, and a token-level output head."""
    import keras
    from keras import layers as L

    from .zoo import positions

    tokens = keras.Input((seq_len,), dtype="int32")
    x = L.Embedding(vocab, hidden)(tokens) + positions(keras, tokens, seq_len, hidden)
    for _ in range(layers):
        attn = L.MultiHeadAttention(num_heads=heads, key_dim=hidden // heads)(x, x)
        x = L.LayerNormalization(epsilon=1e-12)(x + attn)
        h = L.Dense(ffn, activation="gelu")(x)
        x = L.LayerNormalization(epsilon=1e-12)(x + L.Dense(hidden)(h))
    logits = L.Dense(vocab, dtype="float32")(x)
    return keras.Model(tokens, logits, name="bert_like_encoder")


def build_optimizer(model, optimizer) -> None:
    """Create ``optimizer``'s variables (its slots, a loss scale's state) for ``model``'s trainable
    variables now, outside any ``tf.function``. Left to the first step, Keras creates them while
    the step is being traced and the step is traced a second time: a few seconds per workload on
    one device, about twenty under a ``tf.distribute`` strategy here. A model whose variables do not
    exist yet (a ``Sequential`` never called) keeps the lazy build."""
    if not getattr(optimizer, "built", True) and getattr(model, "built", False) and model.trainable_variables:
        optimizer.build(model.trainable_variables)


def train_step(tf, model, loss_fn, optimizer, x, y, xla: bool, build_first: bool = True):
    """One compiled training step: forward, loss (scaled under a loss-scale optimizer),
    gradients, optimizer update; returns the loss. With ``build_first`` the optimizer's variables
    are made before the step is traced (:func:`build_optimizer`, as Keras's ``fit`` does), so it is
    traced once; without, its first call makes them."""
    if build_first:
        build_optimizer(model, optimizer)

    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
            scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
        grads = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return tf.function(step, jit_compile=True) if xla else tf.function(step)
