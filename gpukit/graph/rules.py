"""Per kind of layer, what the walk needs to know: what its backward pass reads and keeps, whether
it works in place, and whether it is a matrix multiply. Both walks (:mod:`.keras_walk` and
:mod:`.transformer`) read these tables.
"""

from __future__ import annotations

# Layers whose backward pass reads their inputs (matmul-like, normalisations, products).
NEEDS_INPUT = {
    "Conv1D",
    "Conv2D",
    "Conv3D",
    "DepthwiseConv2D",
    "SeparableConv2D",
    "Conv2DTranspose",
    "Dense",
    "EinsumDense",
    "BatchNormalization",
    "LayerNormalization",
    "GroupNormalization",
    "MaxPooling2D",
    "MaxPooling1D",
    "Multiply",
    "MultiHeadAttention",
    "Embedding",
}
# Layers whose backward reads their own output.
NEEDS_OUTPUT = {"ReLU", "MaxPooling2D", "MaxPooling1D", "Softmax"}
# Elementwise layers that can write over their input.
ELEMENTWISE = {
    "ReLU",
    "Activation",
    "BatchNormalization",
    "Add",
    "Rescaling",
    "Normalization",
    "Dropout",
    "LeakyReLU",
    "ELU",
    "Identity",
    "Subtract",
}
# Activations whose gradient reads the output; others (swish, gelu, ...) read the input.
OUTPUT_ACTIVATIONS = {"relu", "relu6", "sigmoid", "tanh", "softmax", "elu", "linear", None}

#: Layers whose work is a matrix multiply (tensor cores where the precision allows). A depthwise
#: convolution is not: cuDNN runs it on the CUDA cores.
MATMUL_LAYERS = {
    "Conv1D",
    "Conv2D",
    "Conv3D",
    "Conv2DTranspose",
    "SeparableConv2D",
    "Dense",
    "EinsumDense",
    "MultiHeadAttention",
    "BatchMatMul",
    "LSTM",
    "GRU",
    "SimpleRNN",
}

#: Tensors the gradient of an activation keeps, in multiples of its output, where it is not the
#: output itself (TensorFlow 2.21: exact GELU keeps ``erfc(-x/sqrt 2)``, ``x/2`` and ``-x/sqrt 2``;
#: SiLU its input). Read off TensorFlow's gradient graph; ``tests/test_memory_layers.py`` checks it.
ACTIVATION_KEEPS = {"gelu": 3}
#: Per time step and example, the elements a recurrent layer's backward pass keeps, as
#: (multiples of the units, multiples of the step's input width). TensorFlow 2.21's while-loop
#: implementation (the CPU path, and a GPU one when cuDNN cannot be used) pushes, each step:
#: LSTM the previous h and c, three gate sigmoids, the candidate tanh, tanh(c) and the input;
#: GRU (reset after) the previous h, two sigmoids, the candidate tanh, 1 - z, the recurrent
#: projection and the input; SimpleRNN the previous h, its tanh and the input. cuDNN's fused
#: kernel keeps a reserve space instead, which is not measured here (no GPU).
RNN_KEEPS = {"LSTM": (7, 1), "GRU": (6, 1), "SimpleRNN": (2, 1)}
#: Time steps of a recurrent layer's loop that may run at once: Keras runs the loop as a
#: ``tf.while_loop`` with ``parallel_iterations=32`` (``keras/src/backend/tensorflow/rnn.py``).
#: Work of a step that does not wait for the previous step's state (a 16-bit policy's cast of the
#: kernels) runs ahead by up to that many steps.
LOOP_PARALLEL_ITERATIONS = 32
#: Normalisations that compute in float32 whatever the policy and keep their input and the
#: normalised input (TensorFlow 2.21's gradient graph: ``Cast`` of the input and ``mul``).
NORMS = ("LayerNormalization", "RMSNormalization")
#: The recurrent layers (the keys of :data:`RNN_KEEPS`).
RNN = tuple(RNN_KEEPS)
