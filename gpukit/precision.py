"""Precision names: one canonical spelling each, the Keras policy spellings accepted everywhere.

``fp32`` = ``float32``, ``fp16`` = ``mixed_float16``, ``bf16`` = ``mixed_bfloat16``; ``tf32``
is ``float32`` math on tensor cores (Ampere and later, where TensorFlow enables it by default).
"""
from __future__ import annotations

import difflib

from .errors import ParameterError

#: Canonical precisions, in the order reports list them.
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "int8")

_ALIASES = {
    "fp64": "fp64", "float64": "fp64", "double": "fp64",
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "single": "fp32",
    "tf32": "tf32", "tensorfloat32": "tf32",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "mixed_float16": "fp16",
    "bf16": "bf16", "bfloat16": "bf16", "mixed_bfloat16": "bf16",
    "int8": "int8",
}

#: Keras mixed-precision policy of each precision a Keras model can train in.
KERAS_POLICY = {"fp32": "float32", "tf32": "float32", "fp16": "mixed_float16", "bf16": "mixed_bfloat16"}

#: TensorFlow dtype name of the operands of a matmul or convolution at each precision.
TF_DTYPE = {"fp64": "float64", "fp32": "float32", "tf32": "float32", "fp16": "float16", "bf16": "bfloat16"}

#: Catalogue column with the dense peak rate of each precision.
PEAK_COLUMN = {"fp64": "fp64_tflops", "fp32": "fp32_tflops", "tf32": "tf32_tensor_tflops",
               "fp16": "fp16_tensor_tflops", "bf16": "bf16_tensor_tflops", "int8": "int8_tensor_tops"}

#: Bytes per element of each precision's operands.
ITEMSIZE = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "int8": 1}


def normalize(name: str) -> str:
    """The canonical name of a precision given in either spelling (case-insensitive)."""
    key = str(name).strip().casefold().replace("-", "_")
    if key in _ALIASES:
        return _ALIASES[key]
    close = difflib.get_close_matches(key, list(_ALIASES), n=2)
    hint = f"did you mean {', '.join(close)}?" if close else f"use one of {', '.join(PRECISIONS)}"
    raise ParameterError(f"unknown precision {name!r}; {hint}")


def normalize_all(names) -> list[str]:
    """Canonical names of a list (or comma-separated string) of precisions, duplicates dropped."""
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    out: list[str] = []
    for n in names:
        p = normalize(n)
        if p not in out:
            out.append(p)
    return out
