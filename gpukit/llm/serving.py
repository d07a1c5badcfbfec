"""Serving at batch: many sequences at once on one GPU or a tensor-parallel group, as vLLM,
TensorRT-LLM and SGLang serve them with continuous batching.

Each of ``batch`` sequences is prefilled (``input_tokens``) and then decoded (``output_tokens``), and
the engine keeps ``batch`` sequences in flight: when one finishes, the next request's prompt is
prefilled between decode steps. Over one sequence's life the group therefore runs ``output_tokens``
decode steps at ``batch`` (each over a cache of ``input_tokens + output_tokens / 2`` tokens on
average: :func:`gpukit.llm.speed.speeds`) and ``batch`` prompts:

* ``serving_tokens_per_s`` = batch x output_tokens / (output_tokens x step + batch x prompt time);
* time per output token (TPOT) = that cycle over ``output_tokens``: every decode step, plus each
  sequence's share of the prompts prefilled between them;
* time to first token (TTFT) = one prompt's prefill and one decode step, on a group not yet full
  (a queue in front of a full server adds its wait, which no model of the GPU knows).

The largest batch is the most sequences whose weights, KV cache at ``input_tokens + output_tokens``
and one step's activations fit each GPU (:func:`max_batch`); ``batch="max"`` serves at it. A
mixture of experts holds every expert in memory and a step reads the experts its tokens reach.
Cost: the GPUs' hourly price over the tokens they serve in that hour (:func:`serving_table`).
"""

from __future__ import annotations

import math

import pandas as pd

from .. import precision as prec
from .. import specs
from ..errors import ParameterError
from ..prices import book as prices
from ..prices import cost
from ..units import GIB, is_nan
from .engines import Engine, check_engine_weights, default_engine, resolve_engine
from .models import LLM, _check_positive, resolve_model, weights_format
from .pool import engine_memory
from .pool import gpus_needed as pool_gpus_needed
from .speed import speeds

#: The largest batch :func:`max_batch` searches (TensorRT-LLM's and vLLM's schedulers go past a
#: thousand sequences only for short ones).
MAX_BATCH = 4096
#: The most GPUs of a kind :func:`gpus_needed_for_one` tries.
MAX_GPUS = 64
#: Columns of :func:`serving_table`.
SERVING_COLUMNS = (
    "gpu",
    "model",
    "weights",
    "engine",
    "gpus",
    "input_tokens",
    "output_tokens",
    "batch",
    "max_batch",
    "serving_tokens_per_s",
    "ttft_s",
    "tpot_ms",
    "batch1_tokens_per_s",
    "usd_per_million_tokens",
    "usd_per_million_tokens_batch1",
    "weights_gib",
    "active_weights_gib",
    "kv_cache_gib",
    "kv_cache_tokens",
    "max_concurrency",
    "note",
)


def _gpu_row(gpu, catalogue: pd.DataFrame | None):
    if isinstance(gpu, str):
        return specs.lookup(gpu, specs.load_catalogue() if catalogue is None else catalogue)
    return gpu


def max_batch(
    model: LLM,
    gpu,
    weights: str,
    input_tokens: int,
    output_tokens: int,
    kv: str = "f16",
    gpus: int = 1,
    catalogue=None,
    engine: str | Engine = "vllm",
    gpu_memory_utilization: float | None = None,
) -> int:
    """The most sequences of ``input_tokens + output_tokens`` the engine holds on ``gpus`` GPUs
    (:func:`gpukit.llm.pool.engine_memory`: vLLM's and TensorRT-LLM's pool, llama.cpp's context),
    under its scheduler's cap; 0 where not even one fits."""
    e = resolve_engine(engine)
    row = _gpu_row(gpu, catalogue)
    tokens = input_tokens + output_tokens
    held = engine_memory(model, row, weights, e.name, gpus, kv, tokens, 1, gpu_memory_utilization)
    if not held["fits"]:
        return 0
    return min(held["max_batch"], e.max_batch or MAX_BATCH)


def gpus_needed_for_one(
    model: LLM,
    gpu,
    weights: str,
    tokens: int,
    kv: str = "f16",
    catalogue=None,
    engine: str | Engine = "vllm",
    gpu_memory_utilization: float | None = None,
) -> int | None:
    """The fewest GPUs of this kind the engine holds one sequence of ``tokens`` on; None where
    :data:`MAX_GPUS` do not."""
    e = resolve_engine(engine)
    row = _gpu_row(gpu, catalogue)
    return pool_gpus_needed(
        model, row, weights, e.name, kv, tokens, 1, gpu_memory_utilization, e.split, MAX_GPUS
    )


def serve(
    model: str | LLM,
    gpu,
    weights: str = "fp8",
    engine: str | Engine | None = None,
    gpus: int = 1,
    batch: int | str = "max",
    input_tokens: int = 1024,
    output_tokens: int = 256,
    kv: str = "f16",
    catalogue: pd.DataFrame | None = None,
    link: str | None = None,
    requests: int | None = None,
    gpu_memory_utilization: float | None = None,
) -> dict:
    """One GPU kind serving ``model``: the batch it serves at (``batch``, or ``"max"``: the largest
    the KV cache allows), output tokens per second of all sequences on all ``gpus`` together, time
    to first token and per output token, and the batch-1 decode speed beside them. Raises a one-line
    :class:`~gpukit.errors.ParameterError` where the batch cannot be served, and
    :class:`gpukit.precision.Unsupported` where the GPU has no math for the weights. ``requests``: a
    finite run of that many requests queued at once (a benchmark's), served in waves of the batch,
    the last wave partly empty; None: a steady state."""
    m = model if isinstance(model, LLM) else resolve_model(model)
    e = resolve_engine(default_engine(weights) if engine is None else engine)
    weights_format(weights)
    check_engine_weights(e, weights)
    n = _check_positive("gpus", gpus)
    i, o = _check_positive("input_tokens", input_tokens), _check_positive("output_tokens", output_tokens)
    if i + o > m.max_context:
        raise ParameterError(f"{m.name} takes up to {m.max_context} tokens of context, not {i} + {o}")
    row = _gpu_row(gpu, catalogue)
    held = engine_memory(m, row, weights, e.name, n, kv, i + o, 1, gpu_memory_utilization)
    largest = min(held["max_batch"], e.max_batch or MAX_BATCH) if held["fits"] else 0
    if largest == 0:
        need = gpus_needed_for_one(
            m, row, weights, i + o, kv, engine=e, gpu_memory_utilization=gpu_memory_utilization
        )
        how = f"it needs {need}" if need else f"not even {MAX_GPUS} hold it"
        raise ParameterError(
            f"{m.name} at {weights} with {i} + {o} tokens does not fit one sequence on {n} x {row['gpu']} "
            f"({row['memory_gb']:g} GB each): {how}"
        )
    if batch == "max":
        b = largest
    else:
        b = _check_positive("batch", int(batch))
        if b > largest:
            raise ParameterError(
                f"batch {b} does not fit {n} x {row['gpu']}: its KV cache holds at most {largest} sequences "
                f"of {i} + {o} tokens ({m.name}, {weights}); use --batch max or more --gpus"
            )
    context = i + o // 2
    at_batch = speeds(m, row, weights, context, b, kv, n, link=link, prompt=i, engine=e, catalogue=catalogue)
    one = speeds(m, row, weights, context, 1, kv, n, link=link, prompt=i, engine=e, catalogue=catalogue)
    prompt_s = i / at_batch["prefill_tokens_per_s"]
    cycle_s = o * at_batch["decode_step_s"] + b * prompt_s
    served_per_s = b * o / cycle_s
    if requests:
        full, rest = divmod(_check_positive("requests", requests), b)
        total_s = full * cycle_s
        if rest:
            last = speeds(
                m, row, weights, context, rest, kv, n, link=link, prompt=i, engine=e, catalogue=catalogue
            )
            total_s += o * last["decode_step_s"] + rest * prompt_s
        served_per_s = requests * o / total_s
    bits = weights_format(weights).bits_per_weight
    return {
        "gpu": row["gpu"],
        "model": m.name,
        "weights": weights,
        "engine": e.label,
        "gpus": n,
        "link": at_batch["link"],
        "input_tokens": i,
        "output_tokens": o,
        "batch": b,
        "max_batch": largest,
        "serving_tokens_per_s": served_per_s,
        "ttft_s": prompt_s + one["decode_step_s"],
        "tpot_ms": 1e3 * cycle_s / o,
        "batch1_tokens_per_s": one["decode_tokens_per_s"],
        "decode_bound": at_batch["decode_bound"],
        "weights_gib": held["weights_bytes"] * n / GIB,
        "active_weights_gib": m.active_weight_bytes(bits) / GIB,
        "kv_cache_gib": held["kv_cache_bytes"] * n / GIB,
        "kv_cache_tokens": held["kv_cache_tokens"],
        "max_concurrency": held["max_concurrency"],
    }


def moe_note(m: LLM) -> str:
    """How a mixture of experts is held and read, as a clause ("" for a dense model)."""
    if m.experts == 1:
        return ""
    return (
        f"mixture of experts: all {m.experts} experts held in memory ({m.params() / 1e9:.1f} B weights), "
        f"{m.experts_per_token} of them per token ({m.active_params() / 1e9:.1f} B active)"
    )


def serving_table(
    model: str | LLM,
    weights: str = "fp8",
    engine: str | Engine | None = None,
    gpus=None,
    count: int = 1,
    batch: int | str = "max",
    input_tokens: int = 1024,
    output_tokens: int = 256,
    kv: str = "f16",
    price_files=None,
    catalogue: pd.DataFrame | None = None,
    gpu_memory_utilization: float | None = None,
) -> pd.DataFrame:
    """:func:`serve` on every selected GPU kind (``count`` of each), and what a million output
    tokens cost there renting the GPUs (the median fresh on-demand rate the price book gives), at
    the serving batch and at batch 1. A GPU that cannot serve gets its reason in ``note`` and no
    speed; the frame's ``engine`` attribute is the profile's label."""
    m = model if isinstance(model, LLM) else resolve_model(model)
    e = resolve_engine(default_engine(weights) if engine is None else engine)
    check_engine_weights(e, weights)
    if batch != "max":
        _check_positive("batch", int(batch))
    cat = specs.load_catalogue() if catalogue is None else catalogue
    rows = []
    for _, g in specs.select(cat, gpus).iterrows():
        try:
            row = serve(
                m,
                g,
                weights,
                e,
                count,
                batch,
                input_tokens,
                output_tokens,
                kv,
                cat,
                gpu_memory_utilization=gpu_memory_utilization,
            )
            row["note"] = ""
        except (ParameterError, prec.Unsupported) as exc:
            row = {"gpu": g["gpu"], "model": m.name, "weights": weights, "engine": e.label, "gpus": count}
            row.update(input_tokens=input_tokens, output_tokens=output_tokens, note=str(exc))
        rows.append(row)
    frame = pd.DataFrame(rows).reindex(columns=list(SERVING_COLUMNS))
    _add_costs(frame, price_files, cat)
    frame.attrs["engine"] = e.label
    frame.attrs["engine_name"] = e.name
    frame.attrs["moe"] = moe_note(m)
    return frame


def _add_costs(frame: pd.DataFrame, price_files, cat: pd.DataFrame) -> None:
    """Dollars per million output tokens at the serving batch and at batch 1: each GPU's hourly
    rate (:func:`gpukit.prices.cost.work_cost_table`'s cloud figure) over its share of the tokens."""
    book = prices.load_prices(price_files)
    for column, speed in (
        ("usd_per_million_tokens", "serving_tokens_per_s"),
        ("usd_per_million_tokens_batch1", "batch1_tokens_per_s"),
    ):
        served = frame.dropna(subset=[speed])
        if served.empty:
            continue
        per_gpu = served.assign(throughput=served[speed] / served["gpus"], throughput_unit="tokens/s")
        work = cost.work_cost_table(book, per_gpu[["gpu", "throughput", "throughput_unit"]], catalogue=cat)
        by_gpu = work.set_index("gpu")["cloud_usd_per_million_items"] if len(work) else pd.Series(dtype=float)
        frame[column] = [
            by_gpu.get(g, math.nan) if not is_nan(s) else math.nan for g, s in zip(frame["gpu"], frame[speed])
        ]


def serving_bottom_line(frame: pd.DataFrame) -> str:
    """One sentence from a :func:`serving_table`: the GPU that serves a million output tokens
    cheapest renting, at what batch and speed, and what the same tokens cost at batch 1; the fastest
    where no GPU has a price."""
    served = frame.dropna(subset=["serving_tokens_per_s"])
    if served.empty:
        return "No GPU here can serve it: " + "; ".join(frame["gpu"] + ": " + frame["note"].astype(str)) + "."
    priced = served.dropna(subset=["usd_per_million_tokens"])
    if priced.empty:
        best = served.loc[served["serving_tokens_per_s"].idxmax()]
        return (
            f"Fastest: {best['gpu']} at {best['serving_tokens_per_s']:,.0f} output tokens/s "
            f"(batch {int(best['batch'])}); no rental price for these GPUs."
        )
    best = priced.loc[priced["usd_per_million_tokens"].idxmin()]
    text = (
        f"Cheapest per million output tokens: {best['gpu']} at ${best['usd_per_million_tokens']:.3g} renting, "
        f"serving {int(best['batch'])} sequences at once ({best['serving_tokens_per_s']:,.0f} tokens/s)"
    )
    one = best["usd_per_million_tokens_batch1"]
    if one == one:
        times = one / best["usd_per_million_tokens"]
        text += f"; one sequence at a time the same tokens cost ${one:.3g} ({times:.0f}x)"
    return text + "."


#: Columns of :func:`serving_costs`.
COST_COLUMNS = (
    "gpu",
    "batch",
    "serving_tokens_per_s",
    "usd_per_million_tokens",
    "batch1_tokens_per_s",
    "usd_per_million_tokens_batch1",
    "times_cheaper_served",
    "note",
)


def serving_costs(frame: pd.DataFrame) -> pd.DataFrame:
    """A :func:`serving_table` as the cost of a million output tokens served beside one sequence at a
    time, cheapest served first (GPUs without a price, then those that cannot serve, last)."""
    out = frame.assign(
        times_cheaper_served=frame["usd_per_million_tokens_batch1"] / frame["usd_per_million_tokens"],
        _serves=frame["serving_tokens_per_s"].notna(),
    )
    out = out.sort_values(["_serves", "usd_per_million_tokens"], ascending=[False, True], na_position="last")
    out = out[list(COST_COLUMNS)].reset_index(drop=True)
    out.attrs.update(frame.attrs)
    return out
