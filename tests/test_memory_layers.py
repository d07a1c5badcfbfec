"""What the layer walk keeps per layer for the backward pass, pinned against hand counts and
against TensorFlow's own gradient graph (``tests/tfsaved.py``).

Each model here is one layer of interest between an input and a float32 output head, small
enough to count by hand. ``activations_bytes`` of a training estimate is everything kept from
the forward pass to the backward pass: the tensors the backward pass reads, the layers' own
internal tensors, masks, and the loss's gradient of the logits (float32). The model's input is
held as the input batch, not counted again.
"""

from __future__ import annotations

import inspect
from dataclasses import replace

import pytest
from tfsaved import loop_pushes, saved_bytes

from gpukit import graph as walk
from gpukit import memory
from gpukit.models import registry as models
from gpukit.models import zoo
from gpukit.quiet import quiet_tensorflow

pytestmark = pytest.mark.tensorflow

B = 4  # batch
S, D, H, K = 16, 32, 2, 8  # sequence, width, heads, key width
CLASSES = 10


def _keras():
    quiet_tensorflow()
    import keras

    return keras


@pytest.fixture(autouse=True)
def float32_policy():
    """Models are walked as built under the default policy; a test may switch it inside."""
    keras = _keras()
    keras.mixed_precision.set_global_policy("float32")
    yield
    keras.mixed_precision.set_global_policy("float32")


def _model(body, shape=(S, D), dtype="float32"):
    """Input -> body -> Dense(CLASSES, float32) per position (a token-level head)."""
    keras = _keras()
    inp = keras.Input(shape, dtype=dtype)
    out = keras.layers.Dense(CLASSES, dtype="float32", name="head")(body(keras, inp))
    return keras.Model(inp, out)


def _kept(model, precision="fp32"):
    return memory.simulate(walk.graph_of(model), B, precision, "sgd", "train").activations_bytes


def _head(tokens=S, width=D, item=4):
    """The head keeps its input (in float32: item 4) and the loss keeps the logits' gradient."""
    return B * tokens * width * item + B * tokens * CLASSES * 4


def test_self_attention_keeps_input_qkv_probabilities_and_heads_output():
    model = _model(lambda k, x: k.layers.MultiHeadAttention(H, K, name="mha")(x, x))
    # Q, K, V and the heads' output (S*H*K each); the softmax output (H*S*S); the attention
    # output is the head's input.
    per_example = 4 * S * H * K + H * S * S
    assert _kept(model) == B * per_example * 4 + _head()


def test_attention_dropout_and_causal_mask_add_their_masks():
    plain = _kept(_model(lambda k, x: k.layers.MultiHeadAttention(H, K)(x, x)))
    dropped = _kept(_model(lambda k, x: k.layers.MultiHeadAttention(H, K, dropout=0.1)(x, x)))
    causal = _kept(_model(lambda k, x: k.layers.MultiHeadAttention(H, K)(x, x, use_causal_mask=True)))
    scores = B * H * S * S
    assert dropped - plain == scores * 4 + scores  # the dropped-out probabilities and the 1-byte mask
    assert causal - plain == scores  # the 1-byte mask


def test_attention_under_a_16_bit_policy_keeps_float32_probabilities_and_their_cast():
    model = _model(lambda k, x: k.layers.MultiHeadAttention(H, K)(x, x))
    g = walk.graph_of(model)
    kernels = sum(op.params for op in g.ops if op.kind == "EinsumDense")  # cast to 16 bits and kept
    per_example = 4 * S * H * K * 2 + H * S * S * (4 + 2)
    assert _kept(model, "bf16") == B * per_example + kernels * 2 + _head(item=4)


def _infer(model, precision="fp32"):
    return memory.simulate(walk.graph_of(model), B, precision, "sgd", "infer").activations_bytes


def test_attention_inference_peaks_at_the_einsums_copies_and_a_softmax_in_place():
    """Inference: the scores einsum holds its operands' transposed copies beside the projections;
    scaling and softmax write over the scores (TensorFlow's ``forward_input_or_allocate_output``);
    Keras's own path (with dropout) transposes its product into a second tensor of scores."""
    fused = _model(lambda k, x: k.layers.MultiHeadAttention(H, K, name="mha")(x, x))
    own = _model(lambda k, x: k.layers.MultiHeadAttention(H, K, dropout=0.1, name="mha")(x, x))
    ops = {op.name: op for op in walk.graph_of(fused).ops}
    assert ops["mha/scale"].in_place and ops["mha/softmax"].in_place
    qkv, scores = S * H * K, H * S * S
    assert ops["mha/scores"].forward_workspace == 2 * qkv
    assert ops["mha/weighted"].forward_workspace == 2 * qkv
    assert {op.name: op for op in walk.graph_of(own).ops}["mha/scores"].forward_workspace == 2 * qkv + scores
    # at the scores einsum: the transposed Q, K, V, the input (the head reads the attention's
    # output, not it, so it is gone), the einsum's two operand copies and the scores
    assert _infer(fused) == B * 4 * (3 * qkv + 2 * qkv + scores)
    assert _infer(own) - _infer(fused) == B * 4 * scores


def test_16_bit_inference_holds_every_kernel_cast_until_its_layer_runs():
    """A cast reads only its variable: it runs as the step starts and lives until its layer has run."""
    model = _model(lambda k, x: k.layers.Dense(D, name="b")(k.layers.Dense(D, name="a")(x)))
    cast = 2 * (D * D + D)  # each of a and b; the float32 head casts nothing
    act = B * S * D * 2
    # at a: its output and both casts; at b: a's and b's outputs and b's cast; at the head: b's
    # output and the float32 logits
    assert (
        _infer(model, "fp16")
        == max(act + 2 * cast, 2 * act + cast, act + B * S * CLASSES * 4)
        == 2 * act + cast
    )
    td = walk.graph_of(_model(lambda k, x: k.layers.TimeDistributed(k.layers.Dense(D))(x)))
    assert td.ops[0].kernel_casts == S and td.cast_bytes == td.ops[0].cast_bytes == S * cast


def test_a_recurrent_loop_runs_its_kernel_casts_ahead_by_at_most_its_parallel_iterations():
    from keras.src.backend.tensorflow import rnn

    assert f'"parallel_iterations": {walk.LOOP_PARALLEL_ITERATIONS}' in inspect.getsource(rnn)
    units = 12
    for steps in (16, 64):
        model = _model(lambda k, x: k.layers.LSTM(units, return_sequences=True)(x), shape=(steps, D))
        (op,) = [o for o in walk.graph_of(model).ops if o.kind == "LSTM"]
        ahead = min(steps, walk.LOOP_PARALLEL_ITERATIONS)
        assert op.cast_forward_bytes == ahead * 4 * units * (D + units) * 2
        assert op.cast_saved_bytes == steps * 4 * units * (D + units) * 2  # training keeps every step's


def test_dropout_keeps_a_one_byte_mask_and_gelu_three_tensors():
    drop = _kept(_model(lambda k, x: k.layers.Dropout(0.2)(x)))
    gelu = _kept(_model(lambda k, x: k.layers.Dense(D, activation="gelu")(x)))
    # Dropout: its mask; the dropped output is the head's input.
    assert drop == B * S * D + _head()
    # Dense(gelu): three output-sized tensors of the exact GELU's gradient.
    assert gelu == B * S * D * 4 * 3 + _head()


def test_layer_norm_keeps_two_float32_tensors_in_every_policy():
    model = _model(lambda k, x: k.layers.LayerNormalization()(x))
    assert _kept(model) == 2 * B * S * D * 4 + _head()
    assert _kept(model, "fp16") == 2 * B * S * D * 4 + _head(item=4)


@pytest.mark.parametrize("layer, per_units", [("LSTM", 7), ("GRU", 6), ("SimpleRNN", 2)])
def test_recurrent_layers_keep_per_step_state(layer, per_units):
    units = 12
    model = _model(lambda k, x: getattr(k.layers, layer)(units, return_sequences=True)(x))
    per_step = per_units * units + D  # the step's state tensors and its input slice
    assert _kept(model) == B * S * per_step * 4 + _head(width=units)
    # the same counts as the tensors TensorFlow's loop pushes each step
    (pushes,) = loop_pushes(model, B).values()
    assert len(pushes) == per_units + 1
    assert [t for t, shape in pushes if shape and shape[-1] == D] == ["TensorListGetItem"]  # the input slice


def test_recurrent_kernel_casts_are_kept_per_step_under_a_16_bit_policy():
    units = 12
    model = _model(lambda k, x: k.layers.GRU(units, return_sequences=True)(x))
    kernels = 3 * units * (D + units)
    # 16-bit states (2 bytes less an element), the two kernels' 16-bit casts kept every step
    assert _kept(model, "fp16") - _kept(model, "fp32") == kernels * 2 * S - B * S * (6 * units + D) * 2
    # TensorFlow agrees: under mixed_float16 the loop pushes the two kernel casts each step
    keras = _keras()
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        mixed = _model(lambda k, x: k.layers.GRU(units, return_sequences=True)(x))
        (pushes,) = loop_pushes(mixed, B).values()
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert [t for t, _ in pushes].count("Cast") == 2


def test_bidirectional_runs_both_directions_over_a_reversed_copy():
    units = 12
    one = _kept(_model(lambda k, x: k.layers.GRU(units, return_sequences=True)(x)))
    both = _kept(_model(lambda k, x: k.layers.Bidirectional(k.layers.GRU(units, return_sequences=True))(x)))
    per_direction = B * S * (6 * units + D) * 4
    assert both == 2 * per_direction + _head(width=2 * units)
    assert one == per_direction + _head(width=units)


def test_time_distributed_keeps_the_slices_and_adds_their_full_size_gradients():
    model = _model(lambda k, x: k.layers.TimeDistributed(k.layers.Dense(D, activation="tanh"))(x))
    g = walk.graph_of(model)
    td = g.ops[0]
    assert td.kind == "Dense" and td.extra_saved == S * D and td.extra_transient == S * S * D
    # its input slices (S*D) and its tanh output (the head's input)
    assert _kept(model) == B * S * D * 4 + _head()


def test_batch_norm_keeps_a_float32_copy_under_a_16_bit_policy():
    def body(k, x):
        return k.layers.BatchNormalization()(k.layers.Dense(D, name="proj")(x))

    model = _model(body)
    proj = D * D + D  # the projection's kernel and bias, cast to 16 bits and kept
    assert _kept(model, "fp32") == B * S * D * 4 + _head()
    assert _kept(model, "fp16") == B * S * D * 4 + proj * 2 + _head(item=4)


@pytest.mark.parametrize("name", ["keras-encoder", "keras-decoder", "keras-vit", "keras-bert"])
@pytest.mark.parametrize("policy, precision", [("float32", "fp32"), ("mixed_bfloat16", "bf16")])
def test_transformers_keep_what_tensorflows_gradient_graph_keeps(name, policy, precision):
    """The walk's kept bytes against every forward tensor TensorFlow's backward pass reads."""
    keras = _keras()
    est = memory.Estimator(name)
    keras.mixed_precision.set_global_policy(policy)
    try:
        model = zoo.build(name)
        tf_bytes = sum(b for _, b in saved_bytes(model, B).values())
    finally:
        keras.mixed_precision.set_global_policy("float32")
    ours = est.estimate(B, precision, "sgd", "train").activations_bytes
    assert ours == pytest.approx(tf_bytes, rel=0.02)


@pytest.mark.parametrize("name", ["bert-base", "gpt2-small", "llama-7b"])
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_built_in_shapes_walk_as_their_keras_equivalents(name, precision):
    """The built-in transformers are walked without building them (transformer_graph); at small
    sizes that walk equals the walk of the same shape built from Keras layers (zoo.spec_model)."""
    spec = replace(models.TRANSFORMERS[name], layers=2, hidden=64, heads=4, ffn=256, vocab=500, seq_len=32)
    heads = ("lm", "span") if not spec.decoder else ("lm",)
    for head in heads:
        built = walk.graph_of(zoo.spec_model(spec, head=head))
        shaped = walk.transformer_graph(spec, tied_head=False, head=head)
        assert shaped.params == built.params, head
        for mode, optimizer in (("train", "adam"), ("infer", "sgd")):
            a = memory.simulate(built, B, precision, optimizer, mode)
            b = memory.simulate(shaped, B, precision, optimizer, mode)
            assert (b.activations_bytes, b.tensor_bytes) == (a.activations_bytes, a.tensor_bytes), (
                head,
                mode,
            )
            assert sum(o.flops for o in shaped.ops) == pytest.approx(sum(o.flops for o in built.ops)), head


def test_a_head_in_the_policys_type_casts_its_kernel_and_a_float32_head_does_not():
    """keras.applications' heads compute in the policy's 16-bit type (the model is walked as built
    under a 16-bit policy, ``memory.WALK_POLICY``); a head made with dtype="float32" computes in float32."""
    keras = _keras()
    params = D * CLASSES + CLASSES

    def build(head_dtype):
        inp = keras.Input((D,))
        out = keras.layers.Dense(CLASSES, dtype=head_dtype, name="head")(keras.layers.Dense(D)(inp))
        return keras.Model(inp, out)

    with models.keras_policy(memory.WALK_POLICY):
        own, f32 = build(None), build("float32")
    assert keras.mixed_precision.global_policy().name == "float32"  # restored
    heads = {
        name: [op for op in walk.graph_of(m, policies=True).ops if op.name == "head"][0]
        for name, m in (("own", own), ("f32", f32))
    }
    assert heads["own"].cast_bytes == 2 * params and not heads["own"].float32
    assert heads["f32"].cast_bytes == 0 and heads["f32"].float32
    # inference under bfloat16: the own head's kernel cast is held from the start, so at the first layer (the
    # peak: its output, its own cast and the head's) the walks differ by that cast
    infer = {
        name: memory.simulate(walk.graph_of(m, policies=True), B, "bf16", "sgd", "infer").activations_bytes
        for name, m in (("own", own), ("f32", f32))
    }
    assert infer["own"] == B * D * 2 + 2 * (D * D + D) + 2 * params
    assert infer["own"] - infer["f32"] == 2 * params
    # walked as built under float32 (no policies to read), a head is taken to be float32
    assert walk.graph_of(own).ops[-1].float32
    with pytest.raises(RuntimeError), models.keras_policy("mixed_bfloat16"):
        raise RuntimeError("the policy is restored after an error too")
    assert keras.mixed_precision.global_policy().name == "float32"
