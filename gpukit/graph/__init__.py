"""The Keras layer walk: what each layer of a model holds, computes and keeps for its backward pass.

:func:`graph_of` (:mod:`.keras_walk`) walks a functional Keras model in execution order and
returns a :class:`Graph` (:mod:`.records`): each layer as an :class:`Op` with its parameters, the
tensors it reads and writes (sizes per example, in elements), its forward FLOPs
(:func:`layer_flops`; a multiply-add counts two), whether it is a matrix multiply (tensor cores
where the precision allows), and which tensors its backward pass reads (a convolution or dense
layer its input, a ReLU its output, ...), by the per-kind tables of :mod:`.rules`. Multi-head
attention is walked as its kernels (:mod:`.attention`), and a built-in transformer shape is walked
without building it (:func:`transformer_graph`, :mod:`.transformer`); :mod:`.builder` holds what
both walks share.

The memory model (:mod:`gpukit.memory`) simulates a step over this walk, the performance model
(:mod:`gpukit.perfmodel`) turns it into per-op costs, and the benchmark workloads
(:mod:`gpukit.bench.workloads`) count a model's FLOPs with it. TensorFlow is needed only to build the
model that is walked.
"""

from .attention import attention_ops
from .keras_walk import activation_elements, forward_flops, graph_of, layer_flops
from .records import Graph, Op
from .rules import ACTIVATION_KEEPS, LOOP_PARALLEL_ITERATIONS, MATMUL_LAYERS, NORMS, RNN_KEEPS
from .transformer import HEADS, transformer_graph

__all__ = [
    "ACTIVATION_KEEPS",
    "HEADS",
    "LOOP_PARALLEL_ITERATIONS",
    "MATMUL_LAYERS",
    "NORMS",
    "RNN_KEEPS",
    "Graph",
    "Op",
    "activation_elements",
    "attention_ops",
    "forward_flops",
    "graph_of",
    "layer_flops",
    "transformer_graph",
]
