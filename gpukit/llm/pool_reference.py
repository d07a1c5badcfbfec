"""Published vLLM startup logs (``data/reference_vllm_kv.csv``) and how right the pool model is on
them: each log's "GPU KV cache size" (or, where the log gives no token count, its "Available KV
cache memory") predicted by :func:`gpukit.llm.pool.vllm_pool` with the log's own settings and
vLLM version (:func:`predict_pool`), and the share within :data:`POOL_TOLERANCE`
(:func:`pool_validation`)."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from .. import specs
from .._csv import Field
from ..errors import ParameterError, Problem
from ..resources import DATA_DIR
from ..units import GIB
from .architecture import KV_CACHE_BYTES
from .models import load_models, reference_problems
from .pool import vllm_pool, vllm_version

POOL_REFERENCE_PATH = DATA_DIR / "reference_vllm_kv.csv"
#: How near a predicted pool must land on the logged one: ±20 %.
POOL_TOLERANCE = 0.20
#: Share of logs the pool model is to put within :data:`POOL_TOLERANCE`.
POOL_TARGET = 0.80

POOL_SCHEMA: tuple[Field, ...] = (
    Field("hub_model", "text", help="the Hugging Face repository the log served"),
    Field("model", "text", help="the model of data/llm_models.csv with its shape"),
    Field("weights", "text", help="a format of data/llm_weights.csv"),
    Field("kv_cache", "choice", choices=tuple(KV_CACHE_BYTES)),
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("gpus", "int", low=1, high=1024, help="tensor-parallel GPUs"),
    Field("gpu_memory_utilization", "float", low=0.01, high=1.0),
    Field("max_model_len", "int", low=1, high=100_000_000),
    Field("max_num_batched_tokens", "int", required=False, low=1, high=10_000_000),
    Field("max_num_seqs", "int", required=False, low=1, high=1_000_000),
    Field("block_size", "int", low=1, high=100_000),
    Field("vllm_version", "text", help="the release that wrote the log, e.g. 0.19.0"),
    Field(
        "total_gib",
        "float",
        required=False,
        low=0.1,
        high=100_000,
        help="the GPU's memory as the log gives it",
    ),
    Field("kv_cache_gib", "float", required=False, low=0.0, high=100_000),
    Field("kv_cache_tokens", "int", required=False, low=0, high=10_000_000_000),
    Field("max_concurrency", "float", required=False, low=0.0, high=1e9),
    Field(
        "calibrates",
        "choice",
        required=False,
        choices=("yes",),
        help="yes where the pool model's constants (logit copies, non-torch memory) were read off this log",
    ),
    Field("source_url", "url"),
    Field("quote", "text"),
    Field("retrieved", "date"),
    Field("note", "text", required=False),
)


#: What makes one log: its source and every setting the pool depends on.
_LOG_KEY = (
    "source_url",
    "hub_model",
    "weights",
    "kv_cache",
    "gpu",
    "gpus",
    "gpu_memory_utilization",
    "max_model_len",
    "max_num_batched_tokens",
    "block_size",
    "vllm_version",
)


def load_pool_reference(
    path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None, today: date | None = None
) -> pd.DataFrame:
    """The published startup logs, validated: sourced, dated, naming catalogue GPUs, shipped models and
    formats, a vLLM version the pool model knows, and a logged pool (tokens or GiB)."""
    return specs.load_measurements(
        Path(path) if path else POOL_REFERENCE_PATH,
        POOL_SCHEMA,
        lambda r: tuple(r[k] for k in _LOG_KEY),
        "same log, model, weights, cache, GPUs, settings and version",
        catalogue,
        today,
        checks=(reference_problems, _log_problems),
        kind="log",
    )


def _log_problems(path: Path, parsed: list[tuple[int, dict]]) -> list[Problem]:
    """A vLLM version the pool model knows, and a logged pool (tokens or GiB)."""
    problems = []
    for line, r in parsed:
        try:
            vllm_version(r["vllm_version"])
        except ParameterError as exc:
            problems.append(Problem(path, line, "vllm_version", str(exc), r["vllm_version"]))
        if r.get("kv_cache_tokens") is None and r.get("kv_cache_gib") is None:
            problems.append(Problem(path, line, "kv_cache_tokens", "give the logged token count or the GiB"))
    return problems


def predict_pool(
    reference: pd.DataFrame | None = None, catalogue: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Each log beside the pool model's prediction with the log's settings: the tokens (where the log
    gives them) or the GiB, and the error in percent."""
    ref = load_pool_reference(catalogue=catalogue) if reference is None else reference
    cat = specs.load_catalogue() if catalogue is None else catalogue
    models = load_models()
    rows = []
    for _, r in ref.iterrows():
        row = cat[cat["gpu"] == specs.resolve(r["gpu"], cat).gpu].iloc[0]
        total = r["total_gib"] * GIB if pd.notna(r["total_gib"]) else None
        p = vllm_pool(
            models[r["model"].lower()],
            row,
            r["weights"],
            int(r["gpus"]),
            r["kv_cache"],
            context=int(r["max_model_len"]),
            gpu_memory_utilization=float(r["gpu_memory_utilization"]),
            max_num_batched_tokens=_int(r["max_num_batched_tokens"]),
            max_num_seqs=_int(r["max_num_seqs"]),
            version=r["vllm_version"],
            block_size=int(r["block_size"]),
            total_bytes=total,
        )
        by_tokens = pd.notna(r["kv_cache_tokens"])
        logged = float(r["kv_cache_tokens"]) if by_tokens else float(r["kv_cache_gib"])
        predicted = float(p["kv_cache_tokens"]) if by_tokens else p["pool_bytes"] / GIB
        rows.append(
            {
                "model": r["model"],
                "hub_model": r["hub_model"],
                "weights": r["weights"],
                "kv_cache": r["kv_cache"],
                "gpu": r["gpu"],
                "gpus": int(r["gpus"]),
                "gpu_memory_utilization": float(r["gpu_memory_utilization"]),
                "max_model_len": int(r["max_model_len"]),
                "vllm_version": r["vllm_version"],
                "graded_on": "tokens" if by_tokens else "GiB",
                "logged": logged,
                "predicted": predicted,
                "error_pct": 100 * (predicted / logged - 1) if logged else np.nan,
                "logged_max_concurrency": r["max_concurrency"],
                "predicted_max_concurrency": p["max_concurrency"],
                "calibrates": r.get("calibrates") == "yes",
                "source_url": r["source_url"],
            }
        )
    return pd.DataFrame(rows)


def _int(value) -> int | None:
    return None if pd.isna(value) else int(value)


def pool_validation(predicted: pd.DataFrame | None = None, tolerance: float = POOL_TOLERANCE) -> dict:
    """How many logs the pool model puts within ``tolerance``, overall and per vLLM version."""
    frame = predict_pool() if predicted is None else predicted
    within = frame["error_pct"].abs() <= 100 * tolerance
    held_out = ~frame["calibrates"].astype(bool)
    versions = {
        v: (
            int(within[frame["vllm_version"].map(_minor) == v].sum()),
            int((frame["vllm_version"].map(_minor) == v).sum()),
        )
        for v in sorted(frame["vllm_version"].map(_minor).unique())
    }
    return {
        "logs": len(frame),
        "within": int(within.sum()),
        "share": float(within.mean()) if len(frame) else float("nan"),
        "median_abs_error_pct": float(frame["error_pct"].abs().median()) if len(frame) else float("nan"),
        "by_version": versions,
        "held_out_logs": int(held_out.sum()),
        "held_out_within": int((within & held_out).sum()),
        "target": POOL_TARGET,
        "tolerance": tolerance,
    }


def _minor(version: str) -> str:
    return ".".join(str(version).split(".")[:2])
