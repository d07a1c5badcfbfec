"""Published serving-at-batch runs and how right the serving model is on them: every run predicted
at its batch (:func:`predict_serving`), every pair of GPU configurations one source measured with
one engine on the same model, weights, lengths and concurrency graded on its ratio
(:func:`serving_validation`).

Two files share the schema: ``data/reference_serving.csv``, TensorRT-LLM's max-throughput runs
(all requests queued at once, the engine batching as many as fit), and
``data/reference_serving_rocm.csv``, vLLM and SGLang on AMD Instinct and NVIDIA GPUs at a fixed
number of requests in flight (``concurrency``)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import os
from collections.abc import Mapping
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from .. import cache, grading, specs
from .. import precision as prec
from .._csv import Field
from ..errors import ParameterError, Problem
from .engines import ENGINES, engine_of_run
from .models import KV_CACHE_BYTES, reference_problems
from .serving import serve

SERVING_REFERENCE_PATH = Path(__file__).resolve().parents[2] / "data" / "reference_serving.csv"
ROCM_SERVING_REFERENCE_PATH = SERVING_REFERENCE_PATH.with_name("reference_serving_rocm.csv")

SERVING_SCHEMA: tuple[Field, ...] = (
    Field("source", "text", help="one publication and version: its rows are compared with each other only"),
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("source_gpu_name", "text"),
    Field("gpus", "int", low=1, high=1024, help="GPUs of the group that served, tensor parallel"),
    Field("tensor_parallel", "int", low=1, high=1024),
    Field("engine", "text", help="the engine and version, e.g. TensorRT-LLM 0.17"),
    Field("model", "text", help="a model of data/llm_models.csv"),
    Field("weights", "text", help="a format of data/llm_weights.csv"),
    Field("kv_cache", "choice", choices=tuple(KV_CACHE_BYTES), help="the KV cache's format"),
    Field("input_tokens", "int", low=1, high=10_000_000),
    Field("output_tokens", "int", low=1, high=10_000_000),
    Field(
        "requests",
        "int",
        required=False,
        low=1,
        high=100_000_000,
        help="requests the run served, where the source gives it (blank: as many as a steady state needs)",
    ),
    Field(
        "concurrency",
        "int",
        required=False,
        default="",
        low=1,
        high=1_000_000,
        help="requests in flight at once (a benchmark's max concurrency); blank: all queued at once",
    ),
    Field("output_tokens_per_s", "float", low=1e-6, high=1e9, help="output tokens/s of the whole group"),
    Field("source_url", "url"),
    Field("retrieved", "date"),
    Field("quote", "text", required=False),
    Field("note", "text", required=False),
)
#: What makes one measured configuration of a source.
SERVING_CONFIGURATION = (
    "source",
    "gpu",
    "gpus",
    "engine",
    "model",
    "weights",
    "input_tokens",
    "output_tokens",
    "concurrency",
)
#: A source's configurations compared with each other: one engine (``engine_name``: vLLM on CUDA
#: and on ROCm alike), the same model, weights, lengths and requests in flight (``batching``).
SERVING_PAIRED = ("source", "engine_name", "model", "weights", "input_tokens", "output_tokens", "batching")
#: How near a predicted serving ratio must land: ±25 %, the winner called past a 15 % gap.
SERVING_TOLERANCE = grading.Tolerance(speedup=0.25, winner_margin=0.15)


def _one_group(path: Path, parsed: list[tuple[int, dict]]) -> list[Problem]:
    """A run's model serves one tensor-parallel group over all of its GPUs."""
    return [
        Problem(path, line, "tensor_parallel", "the model serves one tensor-parallel group: set it to gpus")
        for line, r in parsed
        if r["tensor_parallel"] != r["gpus"]
    ]


def load_serving_reference(
    path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None, today: date | None = None
) -> pd.DataFrame:
    """The published serving runs, validated: sourced, dated, naming catalogue GPUs, shipped models
    and formats, tensor parallel over every GPU of the group, one row per configuration."""
    frame = specs.load_measurements(
        Path(path) if path else SERVING_REFERENCE_PATH,
        SERVING_SCHEMA,
        lambda r: tuple(r[k] for k in SERVING_CONFIGURATION),
        "same source, GPU, count, model, weights and lengths",
        catalogue,
        today,
        checks=(reference_problems, _one_group),
    )
    return frame.assign(
        engine_name=frame["engine"].map(lambda text: str(text).split()[0].lower()),
        batching=frame["concurrency"].map(lambda c: "all queued" if pd.isna(c) else f"{int(c)} in flight"),
    )


def _engine(text: str) -> str:
    return engine_of_run(text)


def _serve_run(r: Mapping, batch: int | str, catalogue: pd.DataFrame) -> dict:
    """:func:`serve` of one published run at ``batch``."""
    return serve(
        r["model"],
        r["gpu"],
        r["weights"],
        _engine(r["engine"]),
        int(r["gpus"]),
        batch,
        int(r["input_tokens"]),
        int(r["output_tokens"]),
        r["kv_cache"],
        catalogue,
        requests=None if pd.isna(r["requests"]) else int(r["requests"]),
    )


def predict_serving(reference: pd.DataFrame, catalogue: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every row of a serving reference predicted at the largest batch its GPUs' memory allows, or
    at its ``concurrency`` where fewer requests were in flight (more than the KV cache holds wait
    in the engine's queue): the predicted output tokens/s (NaN where the model cannot serve it) and
    the batch."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    out = []
    for r in reference.to_dict("records"):  # plain dicts: a Series per row costs more than serving it
        try:
            s = _serve_run(r, "max", cat)
            if not pd.isna(r["concurrency"]) and int(r["concurrency"]) < s["batch"]:
                s = _serve_run(r, int(r["concurrency"]), cat)
            out.append({"predicted_tokens_per_s": s["serving_tokens_per_s"], "batch": s["batch"]})
        except (ParameterError, prec.Unsupported):
            out.append({"predicted_tokens_per_s": np.nan, "batch": np.nan})
    return pd.DataFrame(out, index=reference.index)


def serving_validation(
    reference: pd.DataFrame | None = None, catalogue: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Every pair of GPU configurations one source measured on the same model, weights and lengths:
    published and predicted ratio, the error, and whether the winner is right."""
    ref = shipped_serving_reference() if reference is None else reference
    pred = predict_serving(ref, catalogue)
    return grading.grade_pairs(
        ref,
        SERVING_PAIRED,
        ref["output_tokens_per_s"],
        pred["predicted_tokens_per_s"],
        SERVING_TOLERANCE,
        each=("gpu", "gpus"),
    )


@functools.lru_cache(maxsize=1)
def shipped_serving_reference() -> pd.DataFrame:
    """The shipped serving runs, loaded once."""
    return load_serving_reference()


@functools.lru_cache(maxsize=1)
def shipped_rocm_serving_reference() -> pd.DataFrame:
    """The shipped vLLM and SGLang runs on AMD Instinct and NVIDIA GPUs, loaded once."""
    return load_serving_reference(ROCM_SERVING_REFERENCE_PATH)


@functools.lru_cache(maxsize=1)
def rocm_serving_summary() -> dict:
    """:func:`gpukit.grading.summarize` of the vLLM and SGLang runs' AMD-against-NVIDIA pairs (kept
    between runs while the code and data are the same)."""
    return cache.cached(
        "llm-serving-rocm-summary",
        cache.data_files(),
        lambda: grading.summarize(serving_validation(shipped_rocm_serving_reference())),
    )


@functools.lru_cache(maxsize=1)
def serving_summary() -> dict:
    """:func:`gpukit.grading.summarize` of the shipped runs' pairs (kept between runs while the code
    and data are the same: every answer served at batch quotes it)."""
    return cache.cached(
        "llm-serving-summary", cache.data_files(), lambda: grading.summarize(serving_validation())
    )


def serving_error_text(engine: str = "trt-llm") -> str:
    """One line: how right the serving speeds are on the shipped runs, for every table that shows them
    (served by ``engine``: only TensorRT-LLM's serving is graded)."""
    s = serving_summary()
    graded = (
        f"{s['within_tolerance']} of {s['pairs']} same-source pairs of TensorRT-LLM's published max-throughput "
        f"runs within ±{SERVING_TOLERANCE.speedup:.0%}, winners right in {s['winners_right']} of "
        f"{s['decisive_pairs']}, median error {s['median_abs_error_pct']:.0f}% (docs/accuracy/llm.md)"
    )
    if engine == "trt-llm":
        return f"Serving at batch graded: {graded}."
    if engine == "vllm":
        return f"Serving at batch graded on TensorRT-LLM ({graded}), and {rocm_serving_text()}."
    return (
        f"Serving at batch is graded on TensorRT-LLM only ({graded}); {engine}'s serving at batch is outside "
        "what was graded."
    )


def rocm_serving_text() -> str:
    """A clause: how right vLLM's and SGLang's serving ratios between AMD and NVIDIA GPUs are."""
    s = rocm_serving_summary()
    return (
        f"on vLLM and SGLang between 8x MI300X and 8x H200 ({s['within_tolerance']} of {s['pairs']} same-engine "
        f"pairs within ±{SERVING_TOLERANCE.speedup:.0%}, docs/accuracy/llm-rocm.md)"
    )


def serving_short_error(engine: str = "trt-llm") -> str:
    """A clause for a line that already quotes the batch-1 error: how right serving at batch is."""
    s = serving_summary()
    share = s["within_tolerance"] / s["pairs"] if s["pairs"] else float("nan")
    tolerance = SERVING_TOLERANCE.speedup
    graded = f"{share:.0%} of {s['pairs']} published TensorRT-LLM serving ratios within ±{tolerance:.0%}"
    if engine == "trt-llm":
        return f"served at batch, {graded}"
    if engine == "vllm":
        return f"served at batch, graded on TensorRT-LLM ({graded}) and {rocm_serving_text()}"
    return f"served at batch, graded on TensorRT-LLM only ({graded}), not on {engine}"


#: The TensorRT-LLM profile's serving constants and the values :func:`fit_serving` tries; the shipped
#: values (:data:`gpukit.llm.engines.TRT_LLM_SERVING`) are its best point on every source.
SERVING_GRID = {"max_batch": (256, 512, 1024, None), "link_share": (0.4, 0.5, 0.6, 0.7, 1.0)}


def _with(engine: str, values: dict):
    """A context in which profile ``engine`` takes ``values``."""

    @contextlib.contextmanager
    def swapped():
        saved = ENGINES[engine]
        ENGINES[engine] = dataclasses.replace(saved, **values)
        try:
            yield
        finally:
            ENGINES[engine] = saved

    return swapped()


def fit_serving(
    reference: pd.DataFrame, grid: dict = SERVING_GRID, engine: str = "trt-llm"
) -> tuple[dict, dict]:
    """The point of ``grid`` whose profile puts the most pairs of ``reference`` within tolerance (the
    more winners right, then the lower median error, among equals), and its summary."""
    best = None
    for point in itertools.product(*grid.values()):
        values = dict(zip(grid, point))
        with _with(engine, values):
            s = grading.summarize(serving_validation(reference))
        key = (-s["within_tolerance"], -s["winners_right"], s["median_abs_error_pct"])
        if best is None or key < best[0]:
            best = (key, values, s)
    return best[1], best[2]


def held_out_sources(reference: pd.DataFrame | None = None, grid: dict = SERVING_GRID) -> pd.DataFrame:
    """Each source held out in turn: the grid fitted on the others, then the held-out source's pairs
    graded with those values."""
    ref = shipped_serving_reference() if reference is None else reference
    rows = []
    for source in sorted(ref["source"].unique()):
        values, _ = fit_serving(ref[ref["source"] != source].reset_index(drop=True), grid)
        with _with("trt-llm", values):
            s = grading.summarize(serving_validation(ref[ref["source"] == source].reset_index(drop=True)))
        rows.append({"source": source, "values": values, **s})
    return pd.DataFrame(rows)
