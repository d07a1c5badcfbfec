"""How right the LLM speed predictions are: every row of the published runs predicted
(:func:`predict_reference`), every pair of GPU configurations one source measured graded on its
speedup (:func:`validation_table`, :func:`summarize`), the lines that quote the grading beside a
prediction, what the engines' speeds describe, and the prompts timed on another path set against the
model beside the grading. ``docs/llm-accuracy.md`` is the page these make."""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .. import cache, grading, specs
from .. import precision as prec
from ..errors import ParameterError
from . import reference
from .engines import ENGINES
from .models import resolve_model, weights_format
from .reference import (
    LLAMA_CPP_MMQ_BUILD,
    _engine_of,
    _graded_reference,
    by_configuration,
    llama_cpp_build,
    load_reference,
    other_prefill_flags,
    reference_shipped,
    screened,
)
from .speed import speeds

SETTINGS = ("one GPU each", "several GPUs")
#: Runs of one source graded against each other: the same model, weights, test and length.
CONFIGURATION_PAIRED = ("source", "model", "weights", "test", "tokens")
#: The tolerance of :data:`gpukit.grading.LLM_SPEED` under the names the accuracy page reads.
RATIO_TOLERANCE = grading.LLM_SPEED.speedup
WINNER_MARGIN = grading.LLM_SPEED.winner_margin


def predict_reference(
    reference: pd.DataFrame, catalogue: pd.DataFrame | None = None, efficiency=None
) -> pd.Series:
    """The model's tokens/s for every row of a reference table (NaN where the GPU cannot run it);
    ``efficiency``: the roofline's factors (default :func:`default_efficiency`)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    out = []
    for _, r in reference.iterrows():
        m = resolve_model(r["model"])
        # a prompt of n tokens is prefilled at context n; n generated tokens see n/2 of context on average
        context = int(r["tokens"]) if r["test"] == "pp" else max(1, int(r["tokens"]) // 2)
        engine = _engine_of(r["engine"])
        # a run's own micro-batch and pass sizes, where it set them (llama-bench -ub, -b)
        sizes = {
            k: int(r[c])
            for k, c in (("prompt_chunk", "n_ubatch"), ("prompt_batch", "n_batch"))
            if c in r and pd.notna(r[c])
        }
        try:
            s = speeds(
                m,
                r["gpu"],
                r["weights"],
                context,
                1,
                gpus=int(r["gpus"]),
                split=r["split"],
                prompt=int(r["tokens"]) if r["test"] == "pp" else None,
                engine=engine,
                efficiency=efficiency,
                catalogue=cat,
                **sizes,
            )
        except prec.Unsupported:
            out.append(math.nan)
            continue
        out.append(s["prefill_tokens_per_s"] if r["test"] == "pp" else s["decode_tokens_per_s"])
    return pd.Series(out, index=reference.index, dtype=float)


def validation_table(
    reference: pd.DataFrame | None = None,
    catalogue: pd.DataFrame | None = None,
    efficiency=None,
    include_screened: bool = False,
) -> pd.DataFrame:
    """Every pair of GPU configurations one source measured on the same model, weights, test and
    length: published and predicted speedup of the faster over the slower, the error, the winner.
    Rows :func:`screened` names are left out unless ``include_screened``."""
    if reference is None and catalogue is None and efficiency is None and not include_screened:
        return _shipped_validation().copy()
    ref = by_configuration(load_reference(catalogue=catalogue) if reference is None else reference)
    if not include_screened:
        ref = ref[screened(ref) == ""]
    ref = ref.reset_index(drop=True)
    ref = ref.assign(tokens=ref["tokens"].astype(int), gpus=ref["gpus"].astype(int))
    pred = predict_reference(ref, catalogue, efficiency).to_numpy()
    table = grading.grade_pairs(
        ref, CONFIGURATION_PAIRED, ref["throughput_tokens_s"], pred, grading.LLM_SPEED, each=("gpu", "gpus")
    )
    if table.empty:
        return table
    one_each = (table["gpus_a"] == 1) & (table["gpus_b"] == 1)
    return table.assign(setting=np.where(one_each, SETTINGS[0], SETTINGS[1]))


@functools.lru_cache(maxsize=1)
def _shipped_validation() -> pd.DataFrame:
    """The grading of the shipped runs, computed once for the code and data at hand (:mod:`gpukit.cache`)."""
    inputs = [*cache.data_files(), reference.REFERENCE_PATH]
    return cache.cached("llm-validation", inputs, lambda: validation_table(load_reference()))


def summarize(table: pd.DataFrame, test: str | None = None) -> dict:
    """:func:`gpukit.grading.summarize` of the pairs (of ``test``'s, ``tg`` or ``pp``, when given)."""
    if test is not None and len(table):
        table = table[table["test"] == test]
    return grading.summarize(table)


def summary_by_test(table: pd.DataFrame, by_setting: bool = False, by_source: bool = False) -> pd.DataFrame:
    """:func:`summarize` per test (decode, prefill) with whether each meets the target
    (:data:`gpukit.grading.LLM_SPEED`); with ``by_setting``, per test and :data:`SETTINGS` (a
    ``setting`` column); with ``by_source``, per source too (a ``source`` column, and only the
    tests a source has pairs in)."""
    sources = sorted(table["source"].unique()) if by_source and not table.empty else [None]
    tests = (("tg", "decode (text generation)"), ("pp", "prefill (prompt processing)"))
    rows = []
    for source, (test, label), setting in itertools.product(
        sources, tests, SETTINGS if by_setting else [None]
    ):
        part = table
        if source is not None:
            part = part[part["source"] == source]
        if setting is not None and not part.empty:
            part = part[part["setting"] == setting]
        s = summarize(part, test)
        if source is not None and not s["pairs"]:
            continue
        labels = {
            **({"source": source} if by_source else {}),
            "test": label,
            **({"setting": setting} if by_setting else {}),
        }
        rows.append({**labels, **grading.with_target(s, grading.LLM_SPEED)})
    return pd.DataFrame(rows)


def _single_gpu_decode() -> pd.DataFrame:
    """The graded decode pairs between single GPUs."""
    table = validation_table()
    return table[(table["setting"] == SETTINGS[0]) & (table["test"] == "tg")] if len(table) else table


def decode_summary() -> dict:
    """:func:`summarize` of the decode pairs between single GPUs (no pairs where nothing is shipped)."""
    return summarize(_single_gpu_decode() if reference_shipped() else pd.DataFrame(), "tg")


def decode_error_text(gpus: Sequence[str] = ()) -> str:
    """The decode model's measured error between single GPUs in a few words, for the sentence of a
    predicted speedup of one card over another; for each of ``gpus``, how its own published pairs
    went, or that it has none (outside what was graded)."""
    if not reference_shipped():
        return "decode speed not graded"
    one = _single_gpu_decode()
    s = summarize(one, "tg")
    if not s["pairs"]:
        return "decode speed not graded"
    text = (
        f"{s['within_tolerance'] / s['pairs']:.0%} of {s['pairs']} published single-GPU decode speedups "
        f"within ±{RATIO_TOLERANCE:.0%}, median error {s['median_abs_error_pct']:.0f}%"
    )
    for gpu in gpus:
        own = one[(one["gpu_a"] == gpu) | (one["gpu_b"] == gpu)]
        text += (
            f"; pairs with the {gpu}: {int(own['within_tolerance'].sum())} of {len(own)} within "
            f"±{RATIO_TOLERANCE:.0%}"
            if len(own)
            else f"; {gpu}: no published decode speed, outside what was graded"
        )
    return text


def grading_statement(
    gpus: int | Sequence[int] = 1, model: str | None = None, weights: str | None = None
) -> str:
    """One line: how right the speed predictions are against the published tables, over every
    pair and in each setting ``gpus`` asks for (a count of GPUs, or the counts a table's rows ran
    on: between single GPUs, or with several, where a layer split's pipeline is graded worse), and
    there for ``model`` in ``weights`` where the tables have it."""
    if not reference_shipped():
        return "Not graded: no published LLM speeds shipped"
    table = validation_table()
    counts = {gpus} if isinstance(gpus, int) else set(gpus) or {1}
    settings = [
        setting for setting, one in zip(SETTINGS, (True, False)) if any((n == 1) == one for n in counts)
    ]
    parts = []
    for test, label in (("tg", "decode"), ("pp", "prefill")):
        s = summarize(table, test)
        if not s["pairs"]:
            continue
        shares = []
        for setting in settings:
            where = "between single GPUs" if setting == SETTINGS[0] else "with several GPUs"
            here = table[table["setting"] == setting]
            one = summarize(here, test)
            alone = (
                f"{one['within_tolerance']} of the {one['pairs']} {where}"
                if one["pairs"]
                else f"none {where}"
            )
            if model is not None:
                mine = summarize(here[(here["model"] == model) & (here["weights"] == weights)], test)
                alone += (
                    f"; {mine['within_tolerance']} of the {mine['pairs']} of {model} {weights} there"
                    if mine["pairs"]
                    else f"; none of {model} {weights} there"
                )
            shares.append(alone)
        parts.append(
            f"{label} within ±{RATIO_TOLERANCE:.0%} in {s['within_tolerance']} of {s['pairs']} "
            f"published same-source speedups ({'; '.join(shares)}), winners right in {s['winners_right']} "
            f"of {s['decisive_pairs']}"
        )
    return (
        "Graded (docs/llm-accuracy.md): " + "; ".join(parts) if parts else "Not graded: no pairs to compare"
    )


def engine_versions(rows: pd.DataFrame) -> str:
    """The engine versions reference ``rows`` name, per source, as text: ``builds 2824-2843 and
    4753`` (one source's llama.cpp builds as a range), ``vLLM 0.22.1``."""
    named, count = [], 0
    for _, part in rows.groupby("source", sort=False):
        builds = sorted({b for b in map(llama_cpp_build, part["engine"]) if b is not None})
        count += len(builds)
        if builds:
            named.append(f"{builds[0]}" if len(builds) == 1 else f"{builds[0]}-{builds[-1]}")
    other = sorted({m.group(1) for m in (re.match(r"(vLLM [\d.]+)", str(e)) for e in rows["engine"]) if m})
    llama = [("builds " if count > 1 else "build ") + " and ".join(sorted(named))] if named else []
    return " and ".join(llama + other)


def engine_scope(engine: str, weights: str) -> str:
    """What the speeds of ``engine`` with ``weights`` describe, and where the published sources
    graded them (the engine versions their rows name, read off the shipped reference): llama.cpp's
    prefill of a quantised prompt is modelled as the builds before :data:`LLAMA_CPP_MMQ_BUILD` run
    it, which a current build does not."""
    if engine not in ENGINES:
        raise ParameterError(f"engine {engine!r}: use one of {', '.join(ENGINES)}")
    ref = _graded_reference()
    mine = ref[ref["engine"].map(_engine_of) == engine]
    decode = engine_versions(mine[mine["test"] == "tg"])
    prefill = engine_versions(mine[mine["test"] == "pp"])
    name = "llama.cpp" if engine == "llama.cpp" else "vLLM"
    text = f"{name}'s decode is graded on {decode}" if decode else f"{name}'s decode is not graded"
    if engine != "llama.cpp":
        graded_weights = ", ".join(sorted(set(mine["weights"]))) or "none"
        text += f" (weights {graded_weights})" if decode else ""
        return (
            text
            + (
                "; its prefill is not graded: no source here times a prompt apart from serving it"
                if not prefill
                else f", its prefill on {prefill}"
            )
            + "."
        )
    text += (
        f", its prefill on {prefill} only (flash attention off)" if prefill else "; its prefill is not graded"
    )
    if weights_format(weights).dequantized:
        text += (
            f". Its prefill of {weights} is modelled as those builds run it: every weight unpacked to FP16 and "
            f"multiplied by cuBLAS; from build {LLAMA_CPP_MMQ_BUILD} on llama.cpp multiplies a quantised "
            "prompt on the int8 tensor cores (MMQ) instead, a path the model does not follow, so prefill on a "
            "current build is outside what was graded"
        )
        beside = _other_path_summary()
        if beside:
            text += f" ({beside})"
    return text + "."


def _other_path_rows(everything: pd.DataFrame | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The configurations (``everything``: :func:`by_configuration` rows, the shipped ones by default)
    whose prompts :func:`other_prefill_flags` finds, and their flags."""
    if everything is None:
        everything = by_configuration(load_reference())
    flags = other_prefill_flags(everything)
    return everything.loc[flags.index], flags


def other_path_grading(everything: pd.DataFrame | None = None) -> dict:
    """The prompts :func:`other_prefill_path` leaves out of the grading, graded among themselves as the
    rest are (:func:`summarize` of their pairs)."""
    rows, _ = _other_path_rows(everything)
    return summarize(validation_table(rows, include_screened=True) if len(rows) else pd.DataFrame(), "pp")


def other_path_table(everything: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per GPU, the prompts :func:`other_prefill_path` leaves out of the grading set against the model:
    its compute capability, the path its prompts took, how many configurations, and published over
    predicted tokens/s at each prompt length (``pp512``, ...: the median over its models)."""
    rows, flags = _other_path_rows(everything)
    columns = ["gpu", "compute_capability", "path", "configurations"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    ratio = rows["throughput_tokens_s"] / predict_reference(rows)
    cc = specs.load_catalogue().set_index("gpu")["compute_capability"]
    lengths = sorted(rows["tokens"].astype(int).unique())
    out = []
    for gpu in sorted(rows["gpu"].unique()):
        mine = rows["gpu"] == gpu
        path = ("int8 kernels (MMQ)" if flags.loc[mine, "mmq"].any() else "unpacked to FP16 for cuBLAS") + (
            ", flash attention" if flags.loc[mine, "flash_attention"].any() else ""
        )
        cells = {f"pp{n}": ratio[mine & (rows["tokens"] == n)].median() for n in lengths}
        out.append(
            {
                "gpu": gpu,
                "compute_capability": cc[gpu],
                "path": path,
                "configurations": int(mine.sum()),
                **cells,
            }
        )
    return pd.DataFrame(out)


@functools.lru_cache(maxsize=1)
def _other_path_summary() -> str:
    """How the model fares, pair by pair, on the shipped prompts :func:`other_prefill_path` leaves out of
    the grading, as a clause ('' where there are none)."""
    if not reference_shipped():
        return ""
    rows, _ = _other_path_rows(None)
    if rows.empty:
        return ""
    s = other_path_grading()
    return (
        f"the published prompts of {engine_versions(rows)}, set against it beside the grading: "
        f"{s['within_tolerance']} of {s['pairs']} pairs within ±{RATIO_TOLERANCE:.0%}, docs/llm-accuracy.md"
    )
