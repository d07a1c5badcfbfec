"""The published LLM runs the speed model is graded against (``data/reference_llm.csv``): the file's
schema and loading, one row per measured configuration, and the rules that screen a run out of the
grading (a single GPU speeding up with the length, an FP16 prompt slower than its unpacked quantised
one, power-capped GPUs, a prompt timed on a path the model does not follow)."""

from __future__ import annotations

import functools
import os
import re
from datetime import date
from pathlib import Path

import pandas as pd

from .. import specs
from .._csv import Field
from ..resources import DATA_DIR
from .engines import engine_of_run
from .models import reference_problems, weights_format

REFERENCE_PATH = DATA_DIR / "reference_llm.csv"
REFERENCE_SCHEMA: tuple[Field, ...] = (
    Field("source", "text"),
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("source_gpu_name", "text"),
    Field("gpus", "int", low=1, high=1024),
    Field(
        "split",
        "choice",
        choices=("layer", "tensor"),
        help="how several GPUs shared the model: layer (llama.cpp's default) or tensor parallel",
    ),
    Field("model", "text", help="a model of data/llm_models.csv"),
    Field("weights", "text", help="a format of data/llm_weights.csv"),
    Field(
        "test", "choice", choices=("pp", "tg"), help="pp: prompt processing (prefill), tg: text generation"
    ),
    Field("tokens", "int", low=1, high=10_000_000),
    Field("throughput_tokens_s", "float", low=1e-6, high=1e9),
    Field("engine", "text"),
    Field("source_url", "url"),
    Field("measured", "date", required=False),
    Field("retrieved", "date"),
    Field("note", "text", required=False),
    Field(
        "host",
        "text",
        required=False,
        help="the machine of a run, where one source measured the same GPU on several (a cloud instance type)",
    ),
    Field(
        "n_batch",
        "int",
        required=False,
        low=1,
        high=1_000_000,
        help="llama.cpp's prompt tokens per pass where the run set it (blank: its default, 2048)",
    ),
    Field(
        "n_ubatch",
        "int",
        required=False,
        low=1,
        high=1_000_000,
        help="llama.cpp's tokens per micro-batch where the run set it (blank: its default, 512)",
    ),
    Field(
        "power_limit_w",
        "float",
        required=False,
        low=1,
        high=10_000,
        help="the lowest power limit nvidia-smi showed among the run's GPUs, in W (blank: not recorded)",
    ),
)
#: What a pair compares: one GPU against one, or several GPUs on at least one side (a layer
#: split's pipeline is the least certain part of the model: docs/accuracy/llm.md).


def reference_shipped() -> bool:
    """Whether the published runs are here (:data:`REFERENCE_PATH`): without them nothing is graded."""
    return REFERENCE_PATH.exists()


def load_reference(
    path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None, today: date | None = None
) -> pd.DataFrame:
    """Published LLM speeds, validated: sourced, dated, naming catalogue GPUs, shipped models and formats."""
    return specs.load_measurements(
        Path(path) if path else REFERENCE_PATH,
        REFERENCE_SCHEMA,
        lambda r: (*(r[k] for k in CONFIGURATION if k != "split"), r.get("host") or ""),
        "same source, GPU, count, model, weights, test, length and host",
        catalogue,
        today,
        checks=(reference_problems,),
    )


#: What makes one measured configuration: a source's rows that differ only in ``host`` are the same
#: GPU configuration measured on several machines.
CONFIGURATION = ("source", "gpu", "gpus", "split", "model", "weights", "test", "tokens")


def by_configuration(reference: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration (:data:`CONFIGURATION`): where a source measured it on several hosts
    (cloud instance types with the same GPU), the median of their speeds, with ``hosts`` counting
    them and ``host_low``/``host_high`` the slowest and fastest host against the median (shares);
    the other columns are the first host's. The grading compares configurations, so machines with
    the same GPU never pair up. A frame it made already (with ``hosts``) comes back as it is."""
    if "hosts" in reference:
        return reference
    grouped = reference.groupby(list(CONFIGURATION), sort=False, dropna=False)["throughput_tokens_s"]
    median = grouped.transform("median")
    out = reference.assign(
        throughput_tokens_s=median,
        hosts=grouped.transform("size").astype(int),
        host_low=grouped.transform("min") / median - 1,
        host_high=grouped.transform("max") / median - 1,
    )
    return out.drop_duplicates(list(CONFIGURATION)).reset_index(drop=True)


#: One GPU's speeds in one run and test fall as the length grows, never rise: llama.cpp prefills a
#: prompt in 512-token micro-batches one after another, each attending to more context, and decodes
#: every token over a longer cache. A single-GPU series rising by more than this share was disturbed
#: by something outside the model, and :func:`screened` leaves it out of the grading (on several GPUs a
#: series may rise: a layer split pipelines a long prompt's micro-batches).
RISING_TOLERANCE = 0.02
#: llama.cpp's first build whose CUDA backend multiplies a quantised prompt with its own int8 kernels
#: (MMQ) by default instead of unpacking the weights to FP16 for cuBLAS: commit a818f302, "CUDA: use
#: MMQ instead of cuBLAS by default" (#8075), build 3216.
LLAMA_CPP_MMQ_BUILD = 3216
#: Before that build a quantised prompt does the FP16 prompt's work and more (``ggml_cuda_op_mul_mat_cublas``
#: unpacks every weight to FP16 first), so one source's FP16 prefill of a GPU configuration and model
#: is the faster of the two. An FP16 series slower than a quantised one of the same run by more than
#: this share at some length was disturbed, and :func:`screened` leaves it out.
UNPACKED_TOLERANCE = 0.10
#: What a published llama.cpp run's ``engine`` text says when it ran with flash attention on
#: (:func:`flash_attention_of`); the prediction of that row follows it.
FLASH_ATTENTION_ON = "flash attention on"
#: A run whose GPUs' power limit (``power_limit_w``: the lowest nvidia-smi showed among them) sat below
#: this share of the board's datasheet power (the catalogue's ``tdp_w``) ran its compute-bound prompts
#: at the clock the cap allowed, which the model of a stock board does not know; :func:`screened`
#: leaves its prefill out. A memory-bound decode step draws less than the cap and keeps its clocks,
#: so it stays in. (The H100 PCIe's datasheet lets its power be set from 300 to 350 W: 310 W is a
#: stock setting, inside this share.)
POWER_LIMIT_SHARE = 0.85


def flash_attention_of(engine) -> bool | None:
    """Whether a reference row's ``engine`` text says flash attention was on (True), off (False),
    or neither (None: the engine's default)."""
    text = str(engine)
    if FLASH_ATTENTION_ON in text:
        return True
    return False if "flash attention off" in text else None


def llama_cpp_build(engine) -> int | None:
    """The build number a reference row's ``engine`` names (``llama.cpp build 2824 ...``), if any."""
    found = re.search(r"llama\.cpp build (\d+)", str(engine))
    return int(found.group(1)) if found else None


def board_power_w(reference: pd.DataFrame) -> pd.Series:
    """The datasheet power (the catalogue's ``tdp_w``) of each reference row's GPU."""
    return reference["gpu"].map(specs.load_catalogue().set_index("gpu")["tdp_w"].astype(float))


def power_capped(reference: pd.DataFrame) -> pd.Series:
    """Which reference rows ran on GPUs power-capped below :data:`POWER_LIMIT_SHARE` of their
    board's datasheet power (``power_limit_w``; a row that records none was not)."""
    if "power_limit_w" not in reference:
        return pd.Series(False, index=reference.index)
    return reference["power_limit_w"] < POWER_LIMIT_SHARE * board_power_w(reference)


def screened(reference: pd.DataFrame) -> pd.Series:
    """Why each row of ``reference`` is left out of the grading: ``""`` for a row graded, else the
    reason. Two rules, each leaving out a whole series (one source, GPUs, model, weights and test,
    every length), since the run is in doubt, not one length: a single-GPU series that rises with
    length by more than :data:`RISING_TOLERANCE`, and an FP16 prefill series of llama.cpp before
    :data:`LLAMA_CPP_MMQ_BUILD` slower than the same configuration's quantised prefill by more than
    :data:`UNPACKED_TOLERANCE` (on one GPU or several). A third leaves out the prefill of a run whose
    GPUs were power-capped below :data:`POWER_LIMIT_SHARE` of the board's datasheet power."""
    reason = pd.Series("", index=reference.index, dtype=object)
    board = board_power_w(reference)
    for i in reference.index[power_capped(reference) & (reference["test"] == "pp")]:
        reason[i] = (
            f"its GPUs ran power-capped ({reference.at[i, 'power_limit_w']:g} W at the lowest, against "
            f"the board's {board[i]:g} W): a prompt's multiplies run at the clock the cap allows, which "
            "the model of a stock board does not know (the same run's decode, memory-bound, stays in)"
        )
    for r in fp16_against_unpacked(reference).query("slower").itertuples():
        reason[list(r.fp16_rows)] = (
            f"its FP16 prefill is slower than its {r.weights}'s ({r.fp16_tokens_s:g} against {r.unpacked_tokens_s:g} "
            f"tokens/s at {r.tokens} tokens); llama.cpp before build {LLAMA_CPP_MMQ_BUILD} unpacks {r.weights} to "
            "FP16 and multiplies the same way, so the FP16 prompt can only be faster"
        )
    one = reference[reference["gpus"].astype(int) == 1]
    hosts = one["host"].fillna("") if "host" in one else pd.Series("", index=one.index)
    for _, series in one.groupby(
        [one["source"], one["gpu"], one["model"], one["weights"], one["test"], hosts], sort=False
    ):
        speeds = series.sort_values("tokens")
        rate, tokens = speeds["throughput_tokens_s"].to_numpy(float), speeds["tokens"].to_numpy(int)
        rises = [
            (tokens[k], tokens[k + 1], rate[k + 1] / rate[k] - 1)
            for k in range(len(rate) - 1)
            if rate[k + 1] > rate[k] * (1 + RISING_TOLERANCE)
        ]
        if rises:
            a, b, up = max(rises, key=lambda x: x[2])
            reason[series.index] = (
                f"one GPU's {'prefill' if series['test'].iloc[0] == 'pp' else 'decode'} speed "
                f"rises {up:.0%} from {a} to {b} tokens; it can only fall as the length grows"
            )
    return reason


def fp16_against_unpacked(reference: pd.DataFrame) -> pd.DataFrame:
    """Every llama.cpp run before :data:`LLAMA_CPP_MMQ_BUILD` (one source, GPU, number of cards,
    model and host) with both an FP16 and an unpacked quantised prefill series: one row per quantised
    format, at the length where FP16 fares worst against it (``tokens``, both speeds), whether FP16
    is slower there by more than :data:`UNPACKED_TOLERANCE` (``slower``), and the FP16 series' rows
    (``fp16_rows``, index labels of ``reference``). :func:`screened` leaves out the slower ones."""
    columns = [
        "source",
        "gpu",
        "gpus",
        "model",
        "weights",
        "tokens",
        "fp16_tokens_s",
        "unpacked_tokens_s",
        "slower",
        "fp16_rows",
    ]
    if "engine" not in reference:
        return pd.DataFrame(columns=columns)
    builds = reference["engine"].map(llama_cpp_build)
    pp = reference[(reference["test"] == "pp") & (builds.fillna(LLAMA_CPP_MMQ_BUILD) < LLAMA_CPP_MMQ_BUILD)]
    hosts = pp["host"].fillna("") if "host" in pp else pd.Series("", index=pp.index)
    rows = []
    for (source, gpu, n, model, _), run in pp.groupby(
        [pp["source"], pp["gpu"], pp["gpus"].astype(int), pp["model"], hosts], sort=False
    ):
        fp16 = run[run["weights"] == "f16"]
        by_length = fp16.set_index("tokens")["throughput_tokens_s"]
        for weights, other in run[run["weights"].map(lambda w: weights_format(w).dequantized)].groupby(
            "weights"
        ):
            unpacked = other.set_index("tokens")["throughput_tokens_s"]
            common = by_length.index.intersection(unpacked.index)
            if common.empty:
                continue
            t = max(common, key=lambda k: unpacked[k] / by_length[k])
            rows.append(
                (
                    source,
                    gpu,
                    n,
                    model,
                    weights,
                    int(t),
                    float(by_length[t]),
                    float(unpacked[t]),
                    bool(by_length[t] < unpacked[t] * (1 - UNPACKED_TOLERANCE)),
                    tuple(fp16.index),
                )
            )
    return pd.DataFrame(rows, columns=columns)


def graded_gpus(path: str | os.PathLike | None = None) -> set[str]:
    """Catalogue GPUs with a published LLM speed."""
    if path is None:
        return set(_shipped_validation_gpus())
    return set(load_reference(path)["gpu"])


@functools.lru_cache(maxsize=1)
def _shipped_validation_gpus() -> frozenset:
    return frozenset(load_reference()["gpu"]) if reference_shipped() else frozenset()


@functools.lru_cache(maxsize=1)
def _graded_reference() -> pd.DataFrame:
    """The shipped measurements as graded: one row per configuration, screened rows left out."""
    if not reference_shipped():
        return pd.DataFrame(columns=[*CONFIGURATION, "engine", "throughput_tokens_s"])
    ref = by_configuration(load_reference())
    return ref[screened(ref) == ""].reset_index(drop=True)


def _engine_of(published_engine: str) -> str:
    """The engine of :data:`gpukit.llm.engines.ENGINES` a reference row's ``engine`` names."""
    return engine_of_run(published_engine)
