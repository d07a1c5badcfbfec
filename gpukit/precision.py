"""Precisions: one vocabulary for every command, notebook, data file and results record.

One meaning per spelling (docs/reference/precisions.md shows what each runs where):

========== ===================================================== =====================
spelling   means                                                 accepted aliases
========== ===================================================== =====================
float32    the Keras policy, TensorFlow's default: matmuls and   —
           convolutions as TF32 on tensor cores on Ampere and
           later GPUs, FP32 everywhere else
fp32       strict IEEE FP32: TF32 turned off                     float, single
tf32       float32 with TF32 on; an error where the GPU has none tensorfloat32
fp16       Keras ``mixed_float16`` (FP32 master weights)         mixed_float16, float16, half
bf16       Keras ``mixed_bfloat16`` (FP32 master weights)        mixed_bfloat16, bfloat16
fp64       double precision (catalogue figures only)             float64, double
int8       8-bit integer tensor ops (catalogue figures only)     —
========== ===================================================== =====================

:func:`math_of` says which math an op runs at on a catalogue GPU, :func:`device_math` on the
attached device; :func:`math_unit` gives the unit and its datasheet peak. Nothing else in gpukit
defines a precision.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from .errors import GpukitError, ParameterError
from .units import missing


@dataclass(frozen=True)
class Precision:
    """One spelling of the vocabulary and what it means."""

    name: str
    keras_policy: str | None  # the Keras mixed-precision policy; None: not a training precision
    tf32: bool | None  # TF32 for float32 matmuls: on, off, or None for "not a float32 math"
    dtype: str  # TensorFlow dtype of a matmul's or convolution's operands
    itemsize: int  # bytes per operand and activation element
    meaning: str


_TABLE = (
    Precision("fp64", None, None, "float64", 8, "double precision (catalogue figures)"),
    Precision(
        "float32",
        "float32",
        True,
        "float32",
        4,
        "TensorFlow's default: TF32 tensor cores on Ampere and later, FP32 elsewhere",
    ),
    Precision("fp32", "float32", False, "float32", 4, "strict IEEE FP32 (TF32 off)"),
    Precision("tf32", "float32", True, "float32", 4, "float32 with TF32 on (Ampere and later only)"),
    Precision("fp16", "mixed_float16", None, "float16", 2, "mixed precision, FP16 with FP32 master weights"),
    Precision(
        "bf16", "mixed_bfloat16", None, "bfloat16", 2, "mixed precision, BF16 with FP32 master weights"
    ),
    Precision("int8", None, None, "int8", 1, "8-bit integer tensor ops (catalogue figures)"),
    Precision(
        "fp8", None, None, "float8_e4m3fn", 1, "8-bit floating-point tensor ops (Ada, Hopper, Blackwell)"
    ),
    Precision(
        "fp4", None, None, "float4_e2m1fn", 1, "4-bit floating-point tensor ops, NVFP4/MXFP4 (Blackwell)"
    ),
)
#: Every precision by its canonical spelling, in the order reports list them.
PRECISIONS: dict[str, Precision] = {p.name: p for p in _TABLE}
#: Precisions a Keras model can train and infer in (benchmarks, memory, the performance model).
KERAS_PRECISIONS = tuple(p.name for p in _TABLE if p.keras_policy)

_ALIASES = {
    **{p: p for p in PRECISIONS},
    "float64": "fp64",
    "double": "fp64",
    "float": "fp32",
    "single": "fp32",
    "tensorfloat32": "tf32",
    "float16": "fp16",
    "half": "fp16",
    "mixed_float16": "fp16",
    "bfloat16": "bf16",
    "mixed_bfloat16": "bf16",
}

#: The math a GPU runs, by label, and the catalogue column with its dense peak.
MATH_PEAK_COLUMN = {
    "FP32": "fp32_tflops",
    "TF32": "tf32_tensor_tflops",
    "FP16": "fp16_tensor_tflops",
    "BF16": "bf16_tensor_tflops",
    "FP64": "fp64_tflops",
    "INT8": "int8_tensor_tops",
    "FP8": "fp8_tensor_tflops",
    "FP4": "fp4_tensor_tflops",
}
#: Label of each math as tables and figures show it.
MATH_LABEL = {
    "FP32": "FP32 (CUDA cores)",
    "TF32": "TF32 tensor",
    "FP16": "FP16 tensor",
    "BF16": "BF16 tensor",
    "FP64": "FP64",
    "INT8": "INT8 tensor",
    "FP8": "FP8 tensor",
    "FP4": "FP4 tensor",
}
#: Which GPUs have each low-precision math, for the error where one has not.
_LOW_PRECISION_GPUS = {
    "FP8": "NVIDIA Ada, Hopper and Blackwell GPUs, AMD CDNA 3 and 4 and RDNA 4 GPUs",
    "FP4": "NVIDIA Blackwell and AMD CDNA 4 GPUs",
}


class Unsupported(GpukitError):
    """This device cannot run this precision natively (TF32 or BF16 on Volta, TF32 on a CPU)."""


def normalize(name: str) -> str:
    """The canonical spelling of a precision given in any accepted spelling (case-insensitive)."""
    key = str(name).strip().casefold().replace("-", "_")
    if key in _ALIASES:
        return _ALIASES[key]
    close = difflib.get_close_matches(key, list(_ALIASES), n=2)
    hint = f"did you mean {', '.join(close)}?" if close else f"use one of {', '.join(PRECISIONS)}"
    raise ParameterError(f"unknown precision {name!r}; {hint}")


def normalize_all(names) -> list[str]:
    """Canonical spellings of a list (or comma-separated string) of precisions, duplicates dropped."""
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    out: list[str] = []
    for n in names:
        p = normalize(n)
        if p not in out:
            out.append(p)
    return out


def get(name: str) -> Precision:
    """The :class:`Precision` of any accepted spelling."""
    return PRECISIONS[normalize(name)]


def trainable(name: str) -> str:
    """The canonical spelling of a precision a Keras model can run in, or a one-line error."""
    p = normalize(name)
    if p not in KERAS_PRECISIONS:
        raise ParameterError(
            f"precision {name!r} is a catalogue figure, not something a model runs in; "
            f"use one of {', '.join(KERAS_PRECISIONS)}"
        )
    return p


def itemsize(name: str) -> int:
    """Bytes per operand and activation element at this precision (weights stay float32 under
    mixed precision: see :mod:`gpukit.memory`)."""
    return get(name).itemsize


def keras_policy(name: str) -> str:
    """The Keras mixed-precision policy a model runs under at this precision."""
    return PRECISIONS[trainable(name)].keras_policy  # type: ignore[return-value]


def _present(value) -> bool:
    return value is not None and value == value and value != ""


def math_of(precision: str, has_tf32: bool, has_bf16: bool, where: str = "this GPU") -> str:
    """The math (``FP32``, ``TF32``, ``FP16``, ``BF16``, ``FP64``, ``INT8``) that matrix multiplies and
    convolutions run at; raises :class:`Unsupported` for ``tf32`` or ``bf16`` where there is none."""
    p = normalize(precision)
    if p == "tf32" and not has_tf32:
        raise Unsupported(
            f"{where} has no TF32 tensor cores (NVIDIA Ampere and later, AMD CDNA 3 have them); "
            "use float32 or fp32"
        )
    if p == "bf16" and not has_bf16:
        raise Unsupported(
            f"{where} has no BF16 tensor figure (NVIDIA Ampere and later, AMD CDNA 2 and later have one); "
            "use fp16 there"
        )
    return {
        "float32": "TF32" if has_tf32 else "FP32",
        "fp32": "FP32",
        "tf32": "TF32",
        "fp16": "FP16",
        "bf16": "BF16",
        "fp64": "FP64",
        "int8": "INT8",
        "fp8": "FP8",
        "fp4": "FP4",
    }[p]


def gpu_math(gpu, precision: str) -> str:
    """:func:`math_of` on a catalogue GPU (a row of :func:`gpukit.specs.load_catalogue`)."""
    where = f"{gpu['gpu']} ({gpu.get('architecture', '?')})"
    return math_of(
        precision, _present(gpu.get("tf32_tensor_tflops")), _present(gpu.get("bf16_tensor_tflops")), where
    )


def math_unit(gpu, precision: str, matmul: bool = True) -> tuple[str, float]:
    """(label of the math, dense peak TFLOPS) that runs an op on catalogue GPU ``gpu``.

    Matrix multiplies and convolutions run at :func:`gpu_math`; everything else (normalisation,
    activations, pooling, the optimizer update) on the FP32 CUDA cores. GeForce cards' FP16 rate
    with FP32 accumulate is what the catalogue records, so no special case is needed here.
    """
    if not matmul:
        return MATH_LABEL["FP32"], float(gpu["fp32_tflops"])
    math = gpu_math(gpu, precision)
    peak = gpu.get(MATH_PEAK_COLUMN[math])
    if not _present(peak) and math in _LOW_PRECISION_GPUS:
        raise Unsupported(
            f"{gpu['gpu']} ({gpu.get('architecture', '?')}) has no {MATH_LABEL[math]} cores "
            f"({_LOW_PRECISION_GPUS[math]} have them)"
        )
    if not _present(peak):
        raise Unsupported(f"{gpu['gpu']} has no {MATH_LABEL[math]} figure in the catalogue")
    return MATH_LABEL[math], float(peak)


def peak_tflops(gpu, precision: str) -> float | None:
    """The dense peak a precision's matrix multiplies reach on catalogue GPU ``gpu``; None where
    the GPU cannot run it."""
    try:
        return math_unit(gpu, precision, True)[1]
    except Unsupported:
        return None


def device_math(precision: str, kind: str, compute_capability: str | None = None) -> str:
    """The math a precision runs at on the attached device (``kind`` cpu or gpu): what a
    benchmark record says ran. TF32 and BF16 tensor cores need compute capability 8.0."""
    ampere = kind == "gpu" and compute_capability is not None and float(compute_capability) >= 8.0
    where = f"this {kind.upper()}" + (
        f" (compute capability {compute_capability})" if compute_capability else ""
    )
    has_bf16 = ampere or kind != "gpu"  # CPUs run bfloat16 in software or with AVX-512/AMX
    return math_of(precision, ampere, has_bf16, where)


def is_geforce(row) -> bool:
    """Whether a catalogue GPU is a GeForce card (by its name; a TITAN is not)."""
    return str(row["gpu"]).casefold().startswith("geforce")


#: Cards outside GeForce that run FP16 with FP32 accumulate at half rate, and the datasheet that
#: says so: the L40's lists "Peak FP16 Tensor TFLOPS with FP32 Accumulate 181.05 | 362.1" beside
#: 362.1 | 724.2 with FP16 accumulate (the L40S runs both at full rate).
HALF_RATE_FP32_ACCUMULATE = {
    "L40": "https://images.nvidia.com/content/Solutions/data-center/vgpu-L40-datasheet.pdf"
}


def half_rate_fp32_accumulate(row) -> bool:
    """Whether a card runs FP16 with FP32 accumulate at half its tensor cores' FP16 rate: GeForce
    cards (TITAN and workstation cards run it at full rate) and :data:`HALF_RATE_FP32_ACCUMULATE`.
    Volta's first tensor cores ran both at one rate, GeForce or not."""
    if str(row["compute_capability"]) == "7.0":
        return False
    return is_geforce(row) or row["gpu"] in HALF_RATE_FP32_ACCUMULATE


def fp16_accumulate_tflops(row) -> float | None:
    """Dense FP16 tensor TFLOPS with FP16 accumulation. The catalogue records FP32 accumulation;
    GeForce cards and the L40 run that at half their FP16-accumulate rate (the GA102, Ada and RTX
    Blackwell whitepapers' appendix tables and the L40's datasheet, quoted in the catalogue's
    notes: :func:`half_rate_fp32_accumulate`), every other card at the same."""
    base = row.get("fp16_tensor_tflops")
    if missing(base):
        return None
    return float(base) * (2 if half_rate_fp32_accumulate(row) else 1)
