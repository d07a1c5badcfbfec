"""The LLM answers as tables: per GPU, does a model fit, with what, how fast it prefills and decodes
and what a million generated tokens cost (:func:`llm_table`), beside what a source published of the
same configuration; verdicts for pairs of GPUs over several models; the models x GPUs memory matrix;
and the seed pairs' verdicts left for the report."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import precision as prec
from .. import specs
from ..errors import ParameterError
from ..prices import book as prices
from ..prices import cost
from ..search import largest_passing
from ..units import GIB
from .engines import Engine, check_engine_weights, default_engine, for_device, resolve_engine
from .grading import decode_error_text, predict_reference
from .memory import (
    FINETUNE_WEIGHTS,
    LLM_MODES,
    _unshardable_note,
    finetune_gpus_needed,
    finetune_memory,
    inference_memory,
)
from .models import LLM, _check_positive, load_models, resolve_model, weights_format
from .pool import POOL_ENGINES, engine_memory, visible_bytes
from .pool import gpus_needed as pool_gpus_needed
from .reference import _engine_of, _graded_reference, graded_gpus
from .speed import speeds

#: What a publication measured of a row's very configuration, and the prediction's error against it
#: (:func:`published_check`); empty where nothing was published.
PUBLISHED_COLUMNS = (
    "published_source",
    "published_tokens",
    "published_prefill_tokens_per_s",
    "prefill_error_pct",
    "published_decode_tokens_per_s",
    "decode_error_pct",
)
LLM_COLUMNS = (
    "gpu",
    "model",
    "mode",
    "weights",
    "context",
    "batch",
    "fits",
    "total_gib",
    "weights_gib",
    "kv_cache_gib",
    "kv_cache_tokens",
    "max_concurrency",
    "max_context",
    "max_batch",
    "gpus_needed",
    "prefill_tokens_per_s",
    "decode_tokens_per_s",
    "decode_bound",
    "usd_per_million_tokens",
    "usd_per_million_tokens_owned",
    "graded",
    "note",
) + PUBLISHED_COLUMNS


@dataclass(frozen=True)
class _Question:
    """What :func:`llm_table` asks of every GPU: a model in a mode, its weights, context and batch,
    and how it is served (cache format, GPUs, engine) or fine-tuned (LoRA rank and targets,
    activation checkpointing)."""

    model: LLM
    mode: str
    weights: str
    context: int
    batch: int
    kv: str
    lora_rank: int
    lora_targets: str
    checkpointing: bool
    count: int
    engine: Engine
    gpu_memory_utilization: float | None = None
    chosen: bool = False  # the engine was asked for (not the weights' usual one)

    def engine_for(self, g) -> Engine:
        """The profile that serves on GPU ``g``: the one asked for, or the usual engine's profile for
        that device (``llama.cpp-metal`` for ``llama.cpp`` on Apple silicon)."""
        return self.engine if self.chosen else for_device(self.engine, g)

    def serving(
        self, g, context: int, batch: int, count: int | None = None, with_max_batch: bool = True
    ) -> dict:
        """What the engine holds on each GPU to serve ``batch`` sequences of ``context`` on ``count``
        GPUs (default the question's): :func:`gpukit.llm.pool.engine_memory`."""
        return engine_memory(
            self.model,
            g,
            self.weights,
            self.engine_for(g).name,
            self.count if count is None else count,
            self.kv,
            context,
            batch,
            self.gpu_memory_utilization,
            with_max_batch,
        )

    def need(self, context: int, batch: int) -> dict:
        """The memory the question needs at ``context`` and ``batch``: :func:`inference_memory` on
        ``count`` GPUs, or :func:`finetune_memory`."""
        if self.mode == "infer":
            return inference_memory(self.model, self.weights, context, batch, self.kv, gpus=self.count)
        return finetune_memory(
            self.model, self.mode, context, batch, self.lora_rank, self.lora_targets, self.checkpointing
        )


def _memory_row(q: _Question, g, graded: set[str]) -> tuple[dict, dict, int | None]:
    """One GPU's memory answer as a row of :func:`llm_table` (its speeds still to come), what the
    question needs, and the fewest GPUs of the kind that hold it. Serving is counted as the engine
    counts it (:func:`gpukit.llm.pool.engine_memory`): ``weights_gib`` over all the GPUs,
    ``kv_cache_gib`` one sequence's cache at the context on all of them."""
    m = q.model
    row = {
        "gpu": g["gpu"],
        "model": m.name,
        "mode": q.mode,
        "weights": q.weights if q.mode == "infer" else FINETUNE_WEIGHTS[q.mode],
        "context": q.context,
        "batch": q.batch,
        "graded": g["gpu"] in graded if q.mode == "infer" else False,
        "note": "",
    }
    if q.mode == "infer":
        need = q.serving(g, q.context, q.batch)
        needed = pool_gpus_needed(
            m,
            g,
            q.weights,
            q.engine_for(g).name,
            q.kv,
            q.context,
            q.batch,
            q.gpu_memory_utilization,
            q.engine_for(g).split,
        )
        row.update(
            fits=need["fits"],
            total_gib=need["total_bytes"] / GIB,
            weights_gib=need["weights_bytes"] * q.count / GIB,
            kv_cache_gib=need["kv_cache_bytes"] * q.count / GIB,
            kv_cache_tokens=need["kv_cache_tokens"],
            max_concurrency=need["max_concurrency"],
            max_context=largest_passing(
                lambda c: q.serving(g, c, q.batch, with_max_batch=False)["fits"], 1, m.max_context
            ),
            max_batch=need["max_batch"],
            gpus_needed=needed,
        )
        return row, need, needed
    cap = specs.gpu_memory_bytes(g)
    need = q.need(q.context, q.batch)
    needed = finetune_gpus_needed(need, g)
    row.update(
        fits=bool(need["total_bytes"] <= cap),
        total_gib=need["total_bytes"] / GIB,
        weights_gib=need["weights_bytes"] / GIB,
        kv_cache_gib=0.0,
        max_context=largest_passing(lambda c: q.need(c, q.batch)["total_bytes"] <= cap, 1, m.max_context),
        max_batch=largest_passing(lambda b: q.need(q.context, b)["total_bytes"] <= cap, 1, 4096),
        gpus_needed=needed,
    )
    return row, need, needed


def _finetune_note(q: _Question, g, need: dict, needed: int | None) -> str:
    """Why a fine-tuning run does not fit one GPU: the GPUs it needs sharded, or why no number does."""
    if needed:
        return f"needs {needed} GPUs with weights, gradients and optimizer state sharded (ZeRO-3/FSDP)"
    return _unshardable_note(need, g, q.batch, finetune_gpus_needed(q.need(q.context, 1), g))


def _add_serving(q: _Question, g, row: dict, needed: int | None, cat: pd.DataFrame, shipped: bool) -> None:
    """A GPU's serving speeds on its ``row``, on the fewest cards that hold the model where one does not
    (``cards``), and what a source published of the same configuration; or a note why there are none."""
    if not row["fits"] and not needed:
        row["note"] = "does not fit on 64 of these GPUs"
        return
    # where it does not fit, the speed (and cost) are those of the fewest cards that hold it
    cards = q.count if row["fits"] else max(needed, q.count)
    try:
        e = q.engine_for(g)
        s = speeds(q.model, g, q.weights, q.context, q.batch, q.kv, cards, engine=e, catalogue=cat)
        notes = [f"with {e.label}"] if e is not q.engine else []  # the usual engine's profile for this device
        if specs.states_no_tensor_peak(g):
            notes.append("no prompt speed: the vendor states no dense compute peak")
        elif e.bandwidth_only:
            notes.append(f"no prompt speed: the {e.name} profile predicts decode only")
        if notes:
            row["note"] = "; ".join(notes)
        row.update(
            prefill_tokens_per_s=s["prefill_tokens_per_s"],
            decode_tokens_per_s=s["decode_tokens_per_s"],
            decode_bound=s["decode_bound"],
            cards=cards,
        )
        if (
            q.kv == "f16" and shipped
        ):  # the published runs kept their cache in FP16, and ran the shipped shapes
            row.update(
                published_check(
                    q.model.name, q.weights, g["gpu"], cards, q.context, e.name, decode=q.batch == 1
                )
            )
        if cards != q.count:
            row["note"] = (
                f"speed and cost on {cards} GPUs ({e.name}, split by {e.split}): "
                f"{q.count} hold{'s' if q.count == 1 else ''} no sequence of {q.context} tokens"
            )
    except prec.Unsupported as exc:
        row["note"] = str(exc)
        row["unsupported"] = True


def _add_costs(frame: pd.DataFrame, price_files, cat: pd.DataFrame) -> None:
    """What a million generated tokens cost on each row of ``frame`` (rows of :func:`llm_table` with
    the ``cards`` each speed ran on), renting and owning: each card's price over its share of the tokens."""
    book = prices.load_prices(price_files)
    speed = frame.dropna(subset=["decode_tokens_per_s"]).rename(columns={"decode_tokens_per_s": "throughput"})
    speed = speed.assign(throughput_unit="tokens/s", throughput=speed["throughput"] / speed["cards"])
    work = (
        cost.work_cost_table(book, speed[["gpu", "throughput", "throughput_unit"]], catalogue=cat)
        if len(speed)
        else pd.DataFrame(columns=["gpu", "cloud_usd_per_million_items", "owned_usd_per_million_items"])
    )
    by_gpu = work.set_index("gpu") if len(work) else work
    frame["usd_per_million_tokens"] = [
        by_gpu.loc[g, "cloud_usd_per_million_items"] if len(by_gpu) and g in by_gpu.index else None
        for g in frame["gpu"]
    ]
    frame["usd_per_million_tokens_owned"] = [
        by_gpu.loc[g, "owned_usd_per_million_items"] if len(by_gpu) and g in by_gpu.index else None
        for g in frame["gpu"]
    ]


def llm_table(
    model: str | LLM,
    weights: str = "q4_k_m",
    context: int = 4096,
    batch: int = 1,
    gpus=None,
    mode: str = "infer",
    kv: str = "f16",
    lora_rank: int = 16,
    lora_targets: str = "all",
    checkpointing: bool = True,
    count: int = 1,
    price_files=None,
    engine: str | Engine | None = None,
    catalogue: pd.DataFrame | None = None,
    flash_attention: bool | None = None,
    gpu_memory_utilization: float | None = None,
) -> pd.DataFrame:
    """One row per GPU: does ``model`` fit (``mode`` infer, full, lora or qlora), with what, the
    largest context and batch, how many GPUs it needs (fine-tuning: sharded, :func:`finetune_gpus_needed`),
    and to serve it how fast it prefills and decodes and what a million generated tokens cost
    renting and owning (decode at ``batch``; fine-tuning rows answer memory only). ``engine``
    (a profile of :data:`ENGINES`; default :func:`default_engine`) decides how prompts multiply and
    how several GPUs share a model; ``flash_attention`` overrides the profile's. The frame's
    ``engine`` attribute is the profile's label, which every table of these speeds shows.
    ``gpu_memory_utilization``: vLLM's share of each card (TensorRT-LLM's free memory fraction);
    default the engine's."""
    if mode not in LLM_MODES:
        raise ParameterError(f"mode {mode!r}: use one of {', '.join(LLM_MODES)}")
    m = model if isinstance(model, LLM) else resolve_model(model)
    weights_format(weights)
    chosen = engine is not None
    engine = resolve_engine(default_engine(weights) if engine is None else engine, flash_attention)
    if mode == "infer":
        check_engine_weights(engine, weights)
    _check_positive("context", context)
    _check_positive("batch", batch)
    if context > m.max_context:
        raise ParameterError(f"{m.name} takes up to {m.max_context} tokens of context, not {context}")
    cat = specs.load_catalogue() if catalogue is None else catalogue
    graded = graded_gpus()
    shipped = load_models().get(m.name) == m  # a user's own shape under a shipped name was never measured
    q = _Question(
        m,
        mode,
        weights,
        context,
        batch,
        kv,
        lora_rank,
        lora_targets,
        checkpointing,
        count,
        engine,
        gpu_memory_utilization,
        chosen,
    )
    rows = []
    for _, g in specs.select(cat, gpus).iterrows():
        row, need, needed = _memory_row(q, g, graded)
        if mode != "infer":  # a memory answer: serving speed and cost belong to --mode infer
            if not row["fits"]:
                row["note"] = _finetune_note(q, g, need, needed)
        else:
            _add_serving(q, g, row, needed, cat, shipped)
        rows.append(row)
    if mode == "infer" and rows and all(r.pop("unsupported", False) for r in list(rows)):
        # no GPU asked for can run it so (an engine or a math it lacks): the reason, once, as the error
        raise ParameterError(rows[0]["note"])
    for r in rows:
        r.pop("unsupported", None)
    costs = ("usd_per_million_tokens", "usd_per_million_tokens_owned")
    frame = pd.DataFrame(rows, columns=[c for c in LLM_COLUMNS if c not in costs] + ["cards"])
    _add_costs(frame, price_files, cat)
    cards = sorted({int(c) for c in frame["cards"].dropna()})
    frame = frame[list(LLM_COLUMNS)]
    frame["published_tokens"] = frame["published_tokens"].astype("Int64")
    frame.attrs["engine"] = engine.label
    frame.attrs["cards"] = cards  # the GPU counts the speeds ran on (one, or the fewest that hold the model)
    if mode == "infer":
        frame.attrs["bytes_per_token"] = m.active_params() * weights_format(
            weights
        ).bits_per_weight / 8 + batch * context * m.kv_bytes_per_token(kv)
    return frame


def published_check(
    model: str,
    weights: str,
    gpu: str,
    cards: int,
    context: int,
    engine: str,
    decode: bool = True,
    reference: pd.DataFrame | None = None,
) -> dict:
    """What a publication measured of this very configuration (``gpu``, number of ``cards``,
    ``model``, ``weights``, ``engine``), at the length nearest ``context`` (a run of several
    lengths: prompt tokens for prefill, generated tokens for decode), and the prediction's error
    there in percent (predicted over published, at the published length: :func:`predict_reference`).
    Decode is checked only at ``decode`` (the published runs serve one sequence at a time). Empty
    where nothing of the configuration was published; where several sources were, the one whose
    length is nearest, the first by name on a tie."""
    ref = _graded_reference() if reference is None else reference
    same = ref[
        (ref["model"] == model)
        & (ref["weights"] == weights)
        & (ref["gpu"] == gpu)
        & (ref["gpus"].astype(int) == int(cards))
        & (ref["engine"].map(_engine_of) == engine)
    ]
    if not decode:
        same = same[same["test"] == "pp"]
    if same.empty:
        return {}
    distance = (np.log(same["tokens"].astype(float)) - math.log(max(1, context))).abs()
    best = same.assign(distance=distance).sort_values(["distance", "source", "tokens"])
    source, tokens = best["source"].iloc[0], int(best["tokens"].iloc[0])
    chosen = same[(same["source"] == source) & (same["tokens"] == tokens)]
    predicted = predict_reference(chosen)
    out = {"published_source": source, "published_tokens": tokens}
    for (_, r), p in zip(chosen.iterrows(), predicted):
        label = "prefill" if r["test"] == "pp" else "decode"
        out[f"published_{label}_tokens_per_s"] = float(r["throughput_tokens_s"])
        out[f"{label}_error_pct"] = 100 * (p / float(r["throughput_tokens_s"]) - 1) if p == p else None
    return out


@dataclass
class _PairFindings:
    """What the models tell of one pair of GPUs ``a`` and ``b``: the models only one of them holds,
    each model both hold with the predicted decode speed of ``a`` over ``b``, and where one source
    published both (model, source, generated tokens, ``a`` over ``b``)."""

    a: str
    b: str
    only: dict[str, list[str]] = field(default_factory=dict)
    both: list[tuple[str, float]] = field(default_factory=list)
    published: list[tuple[str, str, int, float]] = field(default_factory=list)

    def add(self, model: str, ra: pd.Series, rb: pd.Series) -> None:
        """One model's :func:`llm_table` rows on ``a`` and ``b``."""
        if ra["fits"] and rb["fits"]:
            self.both.append((model, ra["decode_tokens_per_s"] / rb["decode_tokens_per_s"]))
            if (
                pd.notna(ra["published_decode_tokens_per_s"])
                and pd.notna(rb["published_decode_tokens_per_s"])
                and ra["published_source"] == rb["published_source"]
                and ra["published_tokens"] == rb["published_tokens"]
            ):
                self.published.append(
                    (
                        model,
                        ra["published_source"],
                        int(ra["published_tokens"]),
                        ra["published_decode_tokens_per_s"] / rb["published_decode_tokens_per_s"],
                    )
                )
        elif ra["fits"]:
            self.only[self.a].append(model)
        elif rb["fits"]:
            self.only[self.b].append(model)


def _pair_row(pair: str, model: str, context: int, gpu: str, r: pd.Series) -> dict:
    """One row of :func:`pair_answers`: a model on one GPU of a pair (speed and cost where it fits)."""
    return {
        "pair": pair,
        "model": model,
        "context": context,
        "gpu": gpu,
        "fits": bool(r["fits"]),
        "total_gib": r["total_gib"],
        "gpus_needed": r["gpus_needed"],
        "decode_tokens_per_s": r["decode_tokens_per_s"] if r["fits"] else None,
        "usd_per_million_tokens": r["usd_per_million_tokens"] if r["fits"] else None,
        "usd_per_million_tokens_owned": r["usd_per_million_tokens_owned"] if r["fits"] else None,
    }


def _span(x: float, y: float) -> str:
    return f"{x:.2f}" if f"{x:.2f}" == f"{y:.2f}" else f"{x:.2f}-{y:.2f}"


def _speed_sentence(f: _PairFindings) -> str:
    """Which GPU of the pair generates faster where both hold a model, by how much (predicted, with the
    decode model's measured error), or that neither always is."""
    ga, gb = f.a, f.b
    lo, hi = min(r for _, r in f.both), max(r for _, r in f.both)
    faster = ga if hi >= 1 and lo >= 1 else (gb if hi <= 1 else None)
    graded = decode_error_text((ga, gb))
    if faster == ga:
        return f"Where both fit ({len(f.both)} models), {ga} generates {_span(lo, hi)}x as fast (predicted; {graded})."
    if faster == gb:
        return (
            f"Where both fit ({len(f.both)} models), {gb} generates {_span(1 / hi, 1 / lo)}x as "
            f"fast (predicted; {graded})."
        )
    return f"Where both fit ({len(f.both)} models), neither is always faster ({lo:.2f}-{hi:.2f}x)."


def _verdict(f: _PairFindings, weights: str, context: int, batch: int) -> str:
    """One pair's verdict: the models only one GPU holds, the predicted speedup where both do, and
    what one source published of both."""
    parts = [f"At {weights}, {context} tokens of context, batch {batch}:"]
    for g in (f.a, f.b):
        if f.only[g]:
            parts.append(f"only {g} holds {', '.join(f.only[g])}.")
    if f.both:
        parts.append(_speed_sentence(f))
        if f.published:
            parts.append(
                "Published by one source for both: "
                + "; ".join(
                    f"{source} measured {f.a if r >= 1 else f.b} at {max(r, 1 / r):.2f}x on {name} "
                    f"(generating {tokens} tokens)"
                    for name, source, tokens, r in f.published
                )
                + "."
            )
    if not f.both and not f.only[f.a] and not f.only[f.b]:
        parts.append("neither holds any of these models on one card.")
    return f"{f.a} vs {f.b}: " + " ".join(parts)


def pair_answers(
    pairs,
    models,
    weights: str = "q4_k_m",
    context: int = 4096,
    batch: int = 1,
    catalogue: pd.DataFrame | None = None,
    price_files=None,
    engine: str | Engine | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """For each pair of GPUs, model and GPU (one row each): does it fit, how many cards it needs,
    at what decode speed and cost per million tokens (served by ``engine``, default
    :func:`default_engine`); and one verdict per pair computed from those rows."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    rows, verdicts = [], []
    for a, b in pairs:
        ga, gb = specs.resolve(a, cat).gpu, specs.resolve(b, cat).gpu
        found = _PairFindings(ga, gb, only={ga: [], gb: []})
        for name in models:
            m = resolve_model(name)
            ctx = min(context, m.max_context)
            t = llm_table(
                m, weights, ctx, batch, [ga, gb], price_files=price_files, engine=engine, catalogue=cat
            ).set_index("gpu")
            rows += [_pair_row(f"{ga} vs {gb}", m.name, ctx, g, t.loc[g]) for g in (ga, gb)]
            found.add(m.name, t.loc[ga], t.loc[gb])
        verdicts.append(_verdict(found, weights, context, batch))
    return pd.DataFrame(rows), verdicts


def fit_matrix(
    models,
    weights: str = "q4_k_m",
    context: int = 4096,
    batch: int = 1,
    gpus=None,
    mode: str = "infer",
    kv: str = "f16",
    catalogue: pd.DataFrame | None = None,
    engine: str | Engine | None = None,
) -> pd.DataFrame:
    """Models x GPUs: the share of each GPU's memory the model needs (above 1: it does not fit). To
    serve, as the engine (default: the weights' usual one) counts it against what it may use: its
    weights, workspace, runtime and ``batch`` sequences' cache over the memory CUDA reports (vLLM's
    utilization share of it); to fine-tune, :func:`finetune_memory` over the datasheet's memory."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    chosen = specs.select(cat, gpus)
    e = resolve_engine(default_engine(weights) if engine is None else engine)
    out = {}
    for name in models:
        m = resolve_model(name)
        ctx = min(context, m.max_context)
        shares = {}
        for _, g in chosen.iterrows():
            if mode != "infer":
                shares[g["gpu"]] = finetune_memory(m, mode, ctx, batch)[
                    "total_bytes"
                ] / specs.gpu_memory_bytes(g)
                continue
            held = engine_memory(m, g, weights, e.name, 1, kv, ctx, batch, with_max_batch=False)
            if (
                e.name in POOL_ENGINES
            ):  # the engine takes its share whatever the batch: count what is used of it
                used = held["total_bytes"] - held["pool_bytes"] + batch * held["kv_cache_bytes"]
                shares[g["gpu"]] = used / held["total_bytes"]
            else:
                shares[g["gpu"]] = held["total_bytes"] / visible_bytes(g)
        out[m.name] = shares
    return pd.DataFrame(out).T
