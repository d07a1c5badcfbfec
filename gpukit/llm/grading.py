"""How right the LLM speed predictions are: every row of the published runs predicted
(:func:`predict_reference`), every pair of GPU configurations one source measured graded on its
speedup (:func:`validation_table`, :func:`summarize`), the lines that quote the grading beside a
prediction and what each engine's speeds describe. ``docs/accuracy/llm.md`` is the page these make."""

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
from . import reference
from .engines import resolve_engine
from .models import resolve_model
from .reference import (
    _engine_of,
    _graded_reference,
    by_configuration,
    flash_attention_of,
    llama_cpp_build,
    load_reference,
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
    reference: pd.DataFrame, catalogue: pd.DataFrame | None = None, efficiency=None, engine=None
) -> pd.Series:
    """The model's tokens/s for every row of a reference table (NaN where the GPU cannot run it);
    ``efficiency``: the roofline's factors (default :func:`default_efficiency`); ``engine``: one
    profile for every row (default: the profile each row's engine names, :func:`engine_of_run`)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    out = []
    for _, r in reference.iterrows():
        m = resolve_model(r["model"])
        # a prompt of n tokens is prefilled at context n; n generated tokens see n/2 of context on average
        context = int(r["tokens"]) if r["test"] == "pp" else max(1, int(r["tokens"]) // 2)
        profile = _engine_of(r["engine"]) if engine is None else engine
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
                engine=profile,
                flash_attention=flash_attention_of(r["engine"]),
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
        "Graded (docs/accuracy/llm.md): " + "; ".join(parts) if parts else "Not graded: no pairs to compare"
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


def engine_scope(engine, weights: str | None = None) -> str:
    """What the speeds of ``engine`` (a name of :data:`ENGINES` or an :class:`Engine`) describe: the
    profile's versions and dates, and the engine versions of the shipped runs it was graded on,
    decode and prefill apart (read off the shipped reference); ``weights`` names the weights it
    was graded with where the engine serves more than one kind."""
    e = resolve_engine(engine)
    ref = _graded_reference()
    mine = ref[ref["engine"].map(_engine_of) == e.name]
    decode = engine_versions(mine[mine["test"] == "tg"])
    prefill = engine_versions(mine[mine["test"] == "pp"])
    text = f"The {e.name} profile describes {e.versions} ({e.dates}); "
    text += f"its decode is graded on {decode}" if decode else "its decode is not graded"
    if decode and weights is not None:
        text += f" (weights {', '.join(sorted(set(mine['weights'])))})"
    if prefill:
        text += f", its prefill on {prefill}"
    elif e.bandwidth_only:
        text += "; it predicts no prefill: the vendor states no compute peak for these devices"
    else:
        text += "; its prefill is not graded: no source here times a prompt apart from serving it"
    # (imported here: serving_reference builds on the tables, which build on this module)
    from .serving_reference import shipped_serving_reference

    served = sorted(set(shipped_serving_reference()["engine"][lambda s: s.map(_engine_of) == e.name]))
    if served:
        text += f"; its serving at batch is graded on {', '.join(served)}"
    return text + "."
