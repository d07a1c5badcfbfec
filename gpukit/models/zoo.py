"""Sequence and attention models built from plain Keras layers, by name.

The models people train today, in the shapes a user builds them with ``keras.layers``: a text
transformer encoder, a causal decoder, a small vision transformer, stacked and bidirectional
recurrent networks, a 1-D convolutional text model, a BERT-shaped encoder with a token-level
head, and a plain convolutional image classifier. ``gpukit fit --model keras-encoder`` estimates
them like any ``keras.applications`` name; the memory-accuracy benchmark measures them; a user's
own ``.keras`` file built from the same layers is walked the same way.

Every size is a keyword with a small default (a CPU measures each in seconds); :func:`sizes`
says which ones each model takes. TensorFlow is imported only when a model is built.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from ..errors import ParameterError


def _keras():
    from ..quiet import quiet_tensorflow

    quiet_tensorflow()
    import keras

    return keras


def positions(keras, like, length: int, width: int, name: str | None = None):
    """Learned position embeddings for a ``(batch, length, ...)`` tensor: an ``Embedding`` of the
    positions 0..length-1, computed from ``like`` so that it is a layer of the model (its table is
    trained; an embedding of a constant ``arange`` would be folded in as a constant)."""
    ids = keras.ops.cast(keras.ops.cumsum(keras.ops.ones_like(like, dtype="int32"), axis=1) - 1, "int32")
    return keras.layers.Embedding(length, width, name=name)(ids)


def _embedded_tokens(keras, seq_len: int, vocab: int, hidden: int):
    """Token ids and their embeddings plus learned positions."""
    tokens = keras.Input((seq_len,), dtype="int32", name="tokens")
    return tokens, keras.layers.Embedding(vocab, hidden)(tokens) + positions(keras, tokens, seq_len, hidden)


def _post_norm_blocks(
    keras, x, layers: int, heads: int, hidden: int, ffn: int, dropout: float, epsilon: float = 1e-3
):
    """BERT's encoder blocks: self-attention and a GELU feed-forward, each added back and normalised."""
    L = keras.layers
    for _ in range(layers):
        a = L.MultiHeadAttention(heads, hidden // heads, dropout=dropout)(x, x)
        x = L.LayerNormalization(epsilon=epsilon)(x + L.Dropout(dropout)(a))
        h = L.Dense(hidden)(L.Dense(ffn, activation="gelu")(x))
        x = L.LayerNormalization(epsilon=epsilon)(x + L.Dropout(dropout)(h))
    return x


def text_encoder(
    seq_len: int = 128,
    hidden: int = 128,
    heads: int = 4,
    ffn: int = 512,
    layers: int = 2,
    vocab: int = 8000,
    classes: int = 2,
    dropout: float = 0.1,
):
    """Post-norm transformer encoder over token ids, mean-pooled into a classifier."""
    keras = _keras()
    L = keras.layers
    tokens, x = _embedded_tokens(keras, seq_len, vocab, hidden)
    x = L.GlobalAveragePooling1D()(_post_norm_blocks(keras, x, layers, heads, hidden, ffn, dropout))
    return keras.Model(tokens, L.Dense(classes, dtype="float32")(x), name="keras_encoder")


def causal_decoder(
    seq_len: int = 128,
    hidden: int = 128,
    heads: int = 4,
    ffn: int = 512,
    layers: int = 2,
    vocab: int = 8000,
    dropout: float = 0.0,
):
    """Pre-norm GPT-style decoder: causal self-attention, GELU MLP, next-token logits over the vocabulary."""
    keras = _keras()
    L = keras.layers
    tokens, x = _embedded_tokens(keras, seq_len, vocab, hidden)
    for _ in range(layers):
        h = L.LayerNormalization()(x)
        x = x + L.MultiHeadAttention(heads, hidden // heads, dropout=dropout)(h, h, use_causal_mask=True)
        h = L.LayerNormalization()(x)
        x = x + L.Dense(hidden)(L.Dense(ffn, activation="gelu")(h))
    x = L.LayerNormalization()(x)
    return keras.Model(tokens, L.Dense(vocab, dtype="float32")(x), name="keras_decoder")


def vit(
    image: int = 32,
    patch: int = 4,
    hidden: int = 128,
    heads: int = 4,
    ffn: int = 256,
    layers: int = 2,
    classes: int = 10,
    dropout: float = 0.0,
):
    """A small vision transformer: convolutional patch embedding, pre-norm blocks, mean pooling."""
    keras = _keras()
    L = keras.layers
    if image % patch:
        raise ParameterError(f"image size {image} is not a multiple of the patch size {patch}")
    n = (image // patch) ** 2
    pixels = keras.Input((image, image, 3), name="pixels")
    x = L.Reshape((n, hidden))(L.Conv2D(hidden, patch, strides=patch)(pixels))
    x = x + positions(keras, x[..., 0], n, hidden)
    for _ in range(layers):
        h = L.LayerNormalization()(x)
        x = x + L.MultiHeadAttention(heads, hidden // heads, dropout=dropout)(h, h)
        h = L.LayerNormalization()(x)
        x = x + L.Dense(hidden)(L.Dense(ffn, activation="gelu")(h))
    x = L.GlobalAveragePooling1D()(L.LayerNormalization()(x))
    return keras.Model(pixels, L.Dense(classes, dtype="float32")(x), name="keras_vit")


def small_cnn(image: int = 64, classes: int = 10):
    """A plain image classifier as a user writes one: three ``Conv2D``-ReLU layers, the first two
    followed by max pooling, then global average pooling and two dense layers."""
    keras = _keras()
    L = keras.layers
    pixels = keras.Input((image, image, 3), name="pixels")
    x = L.MaxPooling2D()(L.Conv2D(32, 3, padding="same", activation="relu")(pixels))
    x = L.MaxPooling2D()(L.Conv2D(64, 3, padding="same", activation="relu")(x))
    x = L.GlobalAveragePooling2D()(L.Conv2D(128, 3, padding="same", activation="relu")(x))
    x = L.Dense(128, activation="relu")(x)
    return keras.Model(pixels, L.Dense(classes, dtype="float32")(x), name="keras_cnn")


def lstm(seq_len: int = 64, hidden: int = 256, vocab: int = 8000, embed: int = 128, classes: int = 2):
    """Two stacked LSTMs over embedded tokens, the last state into a classifier."""
    keras = _keras()
    L = keras.layers
    tokens = keras.Input((seq_len,), dtype="int32", name="tokens")
    x = L.Embedding(vocab, embed)(tokens)
    x = L.LSTM(hidden, return_sequences=True)(x)
    x = L.LSTM(hidden)(x)
    return keras.Model(tokens, L.Dense(classes, dtype="float32")(x), name="keras_lstm")


def bigru(seq_len: int = 64, hidden: int = 128, vocab: int = 8000, embed: int = 128, classes: int = 2):
    """A bidirectional GRU tagger: per-token scores through ``TimeDistributed``, mean-pooled."""
    keras = _keras()
    L = keras.layers
    tokens = keras.Input((seq_len,), dtype="int32", name="tokens")
    x = L.Embedding(vocab, embed)(tokens)
    x = L.Bidirectional(L.GRU(hidden, return_sequences=True))(x)
    x = L.TimeDistributed(L.Dense(hidden, activation="tanh"))(x)
    x = L.GlobalAveragePooling1D()(x)
    return keras.Model(tokens, L.Dense(classes, dtype="float32")(x), name="keras_bigru")


def text_cnn(seq_len: int = 128, vocab: int = 8000, embed: int = 128, filters: int = 256, classes: int = 2):
    """Convolutional text classifier: two ``Conv1D`` layers, a ``SimpleRNN`` over the result."""
    keras = _keras()
    L = keras.layers
    tokens = keras.Input((seq_len,), dtype="int32", name="tokens")
    x = L.Embedding(vocab, embed)(tokens)
    x = L.Conv1D(filters, 5, padding="same", activation="relu")(x)
    x = L.MaxPooling1D(2)(x)
    x = L.Conv1D(filters, 3, padding="same", activation="relu")(x)
    x = L.SimpleRNN(filters // 2)(x)
    return keras.Model(tokens, L.Dense(classes, dtype="float32")(x), name="keras_textcnn")


def bert_shaped(
    seq_len: int = 128,
    hidden: int = 128,
    heads: int = 2,
    ffn: int = 512,
    layers: int = 2,
    vocab: int = 8000,
    dropout: float = 0.1,
):
    """BERT's block shapes (post-norm, GELU, dropout 0.1) with a token-level masked-LM head."""
    keras = _keras()
    L = keras.layers
    tokens, x = _embedded_tokens(keras, seq_len, vocab, hidden)
    x = L.Dropout(dropout)(L.LayerNormalization(epsilon=1e-12)(x))
    x = _post_norm_blocks(keras, x, layers, heads, hidden, ffn, dropout, epsilon=1e-12)
    x = L.LayerNormalization(epsilon=1e-12)(L.Dense(hidden, activation="gelu")(x))
    return keras.Model(tokens, L.Dense(vocab, dtype="float32")(x), name="keras_bert")


def spec_model(spec, seq_len: int | None = None, head: str = "lm"):
    """The Keras-layer equivalent of a built-in transformer shape (:class:`gpukit.models.TransformerSpec`)
    at its sizes (use a small shape: every weight is allocated). What
    :func:`gpukit.graph.transformer_graph` walks without building: BERT-shaped encoders, GPT-2-shaped
    decoders, LLaMA-shaped gated decoders (see there). The output head is untied here; ``head="span"``
    is SQuAD fine-tuning's two logits per token instead."""
    keras = _keras()
    L = keras.layers
    s = seq_len or spec.seq_len
    h, gated = spec.hidden, spec.gated_ffn
    drop, bias = (0.0, False) if gated else (0.1, True)
    norm = (lambda: L.RMSNormalization()) if gated else (lambda: L.LayerNormalization())

    def dropout(x):
        return L.Dropout(drop)(x) if drop else x

    def attention(x):
        return L.MultiHeadAttention(spec.heads, h // spec.heads, dropout=drop, use_bias=bias)(
            x, x, use_causal_mask=spec.decoder
        )

    tokens = keras.Input((s,), dtype="int32", name="tokens")
    x = L.Embedding(spec.vocab, h)(tokens)
    if not gated:
        x = x + positions(keras, tokens, spec.seq_len, h)
    x = dropout(x if spec.decoder else norm()(x))
    for _ in range(spec.layers):
        if not spec.decoder:
            x = norm()(x + dropout(attention(x)))
            x = norm()(x + dropout(L.Dense(h)(L.Dense(spec.ffn, activation="gelu")(x))))
            continue
        x = x + dropout(attention(norm()(x)))
        y = norm()(x)
        if gated:
            f = L.Dense(spec.ffn, activation="silu", use_bias=False)(y) * L.Dense(spec.ffn, use_bias=False)(y)
            f = L.Dense(h, use_bias=False)(f)
        else:
            f = L.Dense(h)(L.Dense(spec.ffn, activation="gelu")(y))
        x = x + dropout(f)
    if spec.decoder:
        x = norm()(x)
    if head == "span":
        return keras.Model(tokens, L.Dense(2, dtype="float32", use_bias=bias)(x), name=spec.name)
    x = x if spec.decoder else norm()(L.Dense(h, activation="gelu")(x))
    return keras.Model(tokens, L.Dense(spec.vocab, dtype="float32", use_bias=bias)(x), name=spec.name)


#: The models by name: the builder and the recurrent layers the model has (which decide the CPU
#: kernels a measurement runs: :func:`gpukit.memory.measure_env`; tests check them against the
#: built models). The family whose measured error a model's estimate quotes comes from its layers
#: (:func:`gpukit.memory.family_of`), for these models as for any other.
ZOO: dict[str, tuple[Callable, frozenset[str]]] = {
    "keras-encoder": (text_encoder, frozenset()),
    "keras-decoder": (causal_decoder, frozenset()),
    "keras-vit": (vit, frozenset()),
    "keras-bert": (bert_shaped, frozenset()),
    "keras-lstm": (lstm, frozenset({"LSTM"})),
    "keras-bigru": (bigru, frozenset({"GRU"})),
    "keras-textcnn": (text_cnn, frozenset({"SimpleRNN"})),
    "keras-cnn": (small_cnn, frozenset()),
}


def recurrent_layers(name: str) -> frozenset[str]:
    """The Keras recurrent layer classes the zoo model ``name`` has (``LSTM``, ``GRU``, ``SimpleRNN``)."""
    return ZOO[name.lower()][1]


def sizes(name: str) -> tuple[str, ...]:
    """The size keywords the zoo model ``name`` takes (``seq_len`` for the token models)."""
    ctor = ZOO[name.lower()][0]
    return tuple(inspect.signature(ctor).parameters)


def build(name: str, **sizes):
    """The zoo model ``name`` with its default sizes, or those given."""
    ctor = ZOO[name.lower()][0]
    try:
        return ctor(**sizes)
    except TypeError as exc:
        raise ParameterError(f"{name}: {exc}") from None
