"""What a reader sees of a table: a header with its unit for each column name, and a cell's text.

The kit's column names carry their units by convention (``memory_gb``, ``fp32_tflops``,
``step_time_s``, ``usd_per_million_tokens``): :func:`label` reads the unit off the name's suffix
and spells the words (``gpu`` as GPU, ``kv`` as KV), so ``memory_bandwidth_gbs`` shows as
"memory bandwidth (GB/s)". Names the rules cannot make readable are in :data:`EXPLICIT`.
:func:`cell` is a value as text: yes/no, numbers to three significant figures. The notebook tables
(:mod:`gpukit.present.tables`) and the command's text tables (:mod:`gpukit.cli.formatting`) both use them;
data, CSV and JSON keep the names and the full values.
"""

from __future__ import annotations

import math
import numbers
import re

import numpy as np
import pandas as pd

#: Headers for names the rules below would not make readable.
EXPLICIT = {
    "a_over_b": "a / b",
    "speedup_a_over_b": "speedup, A over B",
    "gpu_a": "GPU A",
    "gpu_b": "GPU B",
    "gpus_a": "cards, GPU A",
    "gpus_b": "cards, GPU B",
    "usd": "price (USD)",
    "throughput_unit": "unit",
    "arithmetic_intensity": "arithmetic intensity (FLOP/byte)",
    "peak_fraction": "share of peak",
    "estimate_error": "estimate's error",
    "within_15_pct": "within ±15 %",
    "within_share": "share within tolerance",
    "source_gpu_name": "GPU as the source names it",
    "published_tokens": "published at (tokens)",
    "per_replica_batch": "batch per replica",
    "hidden": "hidden size",
    "fitted": "fitted factors",
    "context": "context (tokens)",
    "max_context": "max context (tokens)",
    "serving_tokens_per_s": "served (tokens/s)",
    "batch1_tokens_per_s": "batch 1 (tokens/s)",
    "usd_per_million_tokens_batch1": "USD per million tokens, batch 1",
    "usd_per_million_tokens_served": "USD per million tokens, served",
    "ttft_s": "first token (s)",
    "tpot_ms": "per output token (ms)",
    "max_batch": "max batch",
    "times_cheaper_served": "served, times cheaper",
}

#: How single words of a name are spelled in a header: acronyms, and abbreviations spelled out.
WORDS = {
    "abs": "absolute",
    "bf16": "BF16",
    "cuda": "CUDA",
    "dtype": "data type",
    "fp16": "FP16",
    "fp32": "FP32",
    "fp64": "FP64",
    "fp8": "FP8",
    "fp4": "FP4",
    "gpu": "GPU",
    "gpus": "GPUs",
    "int8": "INT8",
    "iqr": "IQR",
    "kv": "KV",
    "l2": "L2",
    "llm": "LLM",
    "msrp": "MSRP",
    "nvlink": "NVLink",
    "params": "parameters",
    "pcie": "PCIe",
    "tco": "TCO",
    "tdp": "board power",
    "tf32": "TF32",
    "tflop": "TFLOP",
    "tflops": "TFLOPS",
    "tops": "TOPS",
    "url": "link",
    "usd": "USD",
    "xla": "XLA",
    "1k": "1,000",
}

#: Runs of words a header spells differently from their words one by one.
PHRASES = {
    "break even": "break-even",
    "compute bound": "compute-bound",
    "pcie gen": "PCIe generation",
    "seq len": "sequence length",
}

#: A name's last word as the unit it stands for.
UNITS = {
    "b": "billions",  # params_b: parameters in billions ("_b" after anything else is GPU B)
    "bits": "bits",
    "bytes": "bytes",
    "days": "days",
    "gb": "GB",
    "gbps": "Gbit/s",
    "gbs": "GB/s",
    "gib": "GiB",
    "mb": "MB",
    "mhz": "MHz",
    "mib": "MiB",
    "months": "months",
    "ms": "ms",
    "pct": "%",
    "s": "s",
    "tflops": "TFLOPS",
    "tops": "TOPS",
    "usd": "USD",
    "w": "W",
}

#: Things counted per second: ``throughput_tokens_s`` is a rate, not a time.
COUNTED = {"images", "items", "samples", "sequences", "tokens"}

#: A name's last word that qualifies the rest: ``throughput_a`` is "throughput, GPU A".
QUALIFIERS = {"a": "GPU A", "b": "GPU B", "low": "low end", "high": "high end", "owned": "owned"}

#: Denominators written after a slash ("tokens/s", "USD/hour"); others read "per ...".
SLASHED = {"s", "hour"}


def label(name) -> str:
    """The header for column ``name``: its words spelled out and its unit in parentheses."""
    text = str(name)
    if text in EXPLICIT:
        return EXPLICIT[text]
    if not re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", text):
        return text  # already words (or not a name of the kit's): as it is
    prompt = re.fullmatch(r"pp(\d+)", text)
    if prompt:
        return f"{int(prompt[1]):,}-token prompt"
    cards = re.fullmatch(r"(.+)_(\d+)_gpus", text)
    if cards:
        return f"{label(cards[1])}, {cards[2]} GPU{'' if cards[2] == '1' else 's'}"
    tokens = text.split("_")
    qualifier = None
    if len(tokens) > 1 and tokens[-1] in QUALIFIERS and tokens[-2] != "params":
        qualifier = QUALIFIERS[tokens.pop()]
    head = _header(tokens)
    return f"{head}, {qualifier}" if qualifier else head


def _header(tokens: list[str]) -> str:
    """Words and unit of a name split at its underscores (its qualifier taken off)."""
    if tokens[0] == "per" and len(tokens) > 1:  # per_1k_usd: a rate of the row's throughput
        return " ".join(["per", *(UNITS.get(t) or WORDS.get(t, t) for t in tokens[1:])])
    if "per" in tokens[1:]:
        k = tokens.index("per", 1)
        quantity, unit = tokens[: k - 1], _rate(tokens[k - 1], tokens[k + 1 :])
    elif len(tokens) > 2 and tokens[-2] in COUNTED and tokens[-1] == "s":
        quantity, unit = tokens[:-2], f"{tokens[-2]}/s"
    elif len(tokens) > 1 and tokens[-1] in UNITS:
        quantity, unit = tokens[:-1], UNITS[tokens[-1]]
    else:
        quantity, unit = tokens, None
    words = _words(quantity)
    if unit is None:
        return words
    return f"{words} ({unit})" if words else unit


def _rate(numerator: str, denominator: list[str]) -> str:
    """``usd`` per ``million tokens`` as "USD per million tokens"; per second or hour after a slash."""
    top = UNITS.get(numerator) or WORDS.get(numerator, numerator)
    if len(denominator) == 1 and denominator[0] in SLASHED:
        return f"{top}/{denominator[0]}"
    below = [WORDS.get(t, t) for t in denominator]
    if len(below) > 1 and below[-1] == "hour":  # a TFLOP-hour: one unit, not TFLOP per hour
        below[-2:] = [f"{below[-2]}-hour"]
    return f"{top} per {' '.join(below)}"


def _words(tokens: list[str]) -> str:
    text = " ".join(tokens)
    for phrase, spelled in PHRASES.items():
        text = re.sub(rf"\b{phrase}\b", spelled, text)
    return " ".join(WORDS.get(t, t) for t in text.split(" ")) if text else ""


def labels(columns) -> dict:
    """``{name: header}`` for ``columns``."""
    return {c: label(c) for c in columns}


def missing(value) -> bool:
    """Whether ``value`` is an empty cell: None, NaN, pandas' NA or NaT."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and value != value


def cell(value, empty: str = "—") -> str:
    """``value`` as a reader takes it in: yes or no for a truth value (numpy's too), a number to three
    significant figures with thousands separators (whole digits kept: 1,235 not 1,230), ``empty`` for
    a missing value, text as it is."""
    if missing(value):
        return empty
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return number(float(value))
    return str(value)


def number(x: float) -> str:
    """``x`` to three significant figures, never rounding away a digit before the decimal point;
    below 0.0001 in scientific notation (1.23e-05) rather than a run of zeros."""
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == 0:
        return "0"
    if abs(x) < 1e-4:
        return f"{x:.3g}"
    decimals = max(0, 2 - math.floor(math.log10(abs(x))))
    text = f"{x:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
