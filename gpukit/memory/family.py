"""The family of measured models a model belongs to, read from the layers it has.

Each family's error is measured by ``benchmarks/memory_accuracy.py``, which groups its grid by
:func:`family_of` too, so the band ``gpukit fit`` quotes for a model is the one measured on its kind.
"""

from __future__ import annotations

from ..graph import Graph
from ..models.registry import TransformerSpec

#: The family of ``keras.applications``-style image CNNs.
CNN_FAMILY = "CNN (keras.applications)"


def family_of(graph: Graph | None, spec: TransformerSpec | None = None) -> str | None:
    """The family of models whose measured error applies, from the layers a model has: the families
    of ``benchmarks/memory_accuracy.py``'s grid, which groups its models by this function too (a 1-D
    convolution ahead of a recurrent layer is its convolutional text model, keras-textcnn)."""
    if spec is not None:
        return "causal decoder" if spec.decoder else "transformer encoder"
    kinds = {op.kind for op in graph.ops}
    if kinds & {"LSTM", "GRU", "SimpleRNN"}:
        return "convolutional text" if "Conv1D" in kinds else "recurrent"
    if "Softmax" in kinds and "BatchMatMul" in kinds:
        causal = any(op.kind == "Softmax" and op.extra_saved_bytes for op in graph.ops)
        if causal:
            return "causal decoder"
        return "vision transformer" if kinds & {"Conv2D"} else "transformer encoder"
    if "Conv1D" in kinds:
        return "convolutional text"
    if kinds & {"Conv2D", "DepthwiseConv2D", "SeparableConv2D"}:
        return CNN_FAMILY
    return None
