"""LLMs on these GPUs: will it fit, how fast will it generate, and what will it cost.

A model is an open decoder architecture (:class:`LLM`): layers, hidden size, query and key-value
heads (grouped-query attention), the FFN (gated, as every model of ``data/llm_models.csv`` has
it), vocabulary and, for a mixture of experts, how many experts there are and how many each
token uses. The shipped table cites each model's configuration; a user's own architecture is a
JSON or YAML file of the same fields (:func:`load_model_file`).

**Memory** (:func:`inference_memory`, :func:`finetune_memory`):

* inference: the weights at the format's published bits per weight (``data/llm_weights.csv``),
  the key-value cache (2 x layers x KV heads x head size per token, fp16 or 8-bit), the
  activations of one step (the prompt processed in chunks of :data:`PROMPT_CHUNK` tokens, as
  llama.cpp and vLLM do; without flash attention each chunk's attention scores too), and the
  runtime reserve (:data:`gpukit.memory.DEFAULT_RUNTIME_RESERVE_BYTES`);
* fine-tuning: full (mixed-precision AdamW: 16 bytes per parameter, 2 for the 16-bit weights,
  2 for their gradients, 12 for the float32 master weights and the two moments, as the ZeRO paper
  counts them), LoRA (16-bit frozen weights, 16 bytes per adapter parameter) and QLoRA (the
  frozen weights in 4-bit NormalFloat with double-quantised scales, 4.127 bits per weight as the
  QLoRA paper gives it), plus the activations the backward pass keeps (:func:`activation_bytes`,
  with and without activation checkpointing) and the float32 logits and their gradient.

**Speed** (:func:`speeds`), per GPU through the catalogue's peaks and the roofline's rules:

* prefill (prompt processing): 2 FLOPs per active weight and token plus the attention over the
  context, on the tensor cores at FP16 (a quantised format is dequantised to FP16 first), at the
  tensor efficiency of :data:`gpukit.perfmodel.DEFAULT_EFFICIENCY` and in waves of tiles over the
  SMs; plus the memory traffic of everything between the matrix multiplies — elementwise kernels,
  the engine's type conversions and, without flash attention, the attention scores
  (:func:`prefill_traffic_bytes`), which grows with the context and is what slows a long prompt;
* decode (generation) reads every active weight and the whole KV cache once per step: memory-bound
  at batch 1, turning compute-bound as the batch grows; a quantised format also pays the
  dequantisation on the CUDA cores (:data:`DEQUANT_OPS`), and every step pays a fixed cost per
  kernel it launches (:data:`LAUNCH_S` x the engine's kernels per layer x layers) — at batch 1 on a
  fast GPU that fixed cost is much of the step;
* on several GPUs, tensor parallel: each GPU holds 1/n of the weights and KV cache, and each
  layer all-reduces the hidden state twice over the link (:func:`gpukit.perfmodel.interconnect`),
  a latency-bound exchange of small messages (:data:`ALLREDUCE_LATENCY_S`).

**Cost** per million generated tokens, renting and owning, comes from the price tables
(:func:`gpukit.cost.work_cost_table`).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from .. import precision as prec
from .. import specs
from .._csv import Field, parse_rows, to_frame
from ..bandwidth_rates import streaming_gbs
from ..errors import DataError, ParameterError, Problem
from ..matmul_rates import tensor_share
from ..resources import DATA_DIR
from ..search import largest_passing

MODELS_PATH = DATA_DIR / "llm_models.csv"
WEIGHTS_PATH = DATA_DIR / "llm_weights.csv"
GIB = 2**30

MODEL_SCHEMA: tuple[Field, ...] = (
    Field("name", "text", help="a short lower-case name such as llama-3-8b"),
    Field("family", "text"),
    Field("layers", "int", low=1, high=1000),
    Field("hidden", "int", low=1, high=1_000_000),
    Field("heads", "int", low=1, high=10_000),
    Field(
        "kv_heads",
        "int",
        low=1,
        high=10_000,
        help="key-value heads; equal to heads without grouped-query attention",
    ),
    Field("head_dim", "int", low=1, high=100_000),
    Field("ffn", "int", low=1, high=10_000_000, help="the FFN's inner size (per expert)"),
    Field("vocab", "int", low=1, high=10_000_000),
    Field("experts", "int", low=1, high=10_000),
    Field("experts_per_token", "int", low=1, high=10_000),
    Field("tied_embeddings", "choice", choices=("true", "false")),
    Field("max_context", "int", low=1, high=100_000_000),
    Field("published_params_b", "float", required=False, low=0.001, high=100_000),
    Field("config_url", "url"),
    Field("source_read", "url", help="where the configuration's figures were read"),
    Field("retrieved", "date"),
    Field("note", "text", required=False),
)

WEIGHTS_SCHEMA: tuple[Field, ...] = (
    Field("weights", "text", help="the name --weights takes, lower case"),
    Field("bits_per_weight", "float", low=1, high=64),
    Field(
        "dequantized",
        "choice",
        choices=("true", "false"),
        help="true where kernels unpack the weights to FP16 before or while multiplying",
    ),
    Field("basis", "text"),
    Field("source_url", "url"),
    Field("quote", "text", required=False),
    Field("retrieved", "date"),
)

#: Bytes per element of the key-value cache.
KV_CACHE_BYTES = {"f32": 4.0, "f16": 2.0, "q8_0": 34 / 32}
MODES = ("infer", "full", "lora", "qlora")
#: The weights each fine-tuning mode trains on (serving takes the format it is given).
FINETUNE_WEIGHTS = {"full": "bf16 + fp32 master", "lora": "bf16", "qlora": "nf4"}
#: Tokens of the prompt processed per step (llama.cpp's default micro-batch, vLLM's chunked prefill).
PROMPT_CHUNK = 512
#: Bits per weight of QLoRA's frozen base: 4-bit NormalFloat plus double-quantised block scales
#: (Dettmers et al. 2023, "QLoRA", section 3: 0.127 bits per parameter of quantisation constants).
NF4_BITS = 4.127
#: Bytes per trainable parameter under mixed-precision AdamW: 16-bit weight and gradient, float32
#: master weight, first and second moment (Rajbhandari et al. 2020, "ZeRO", section 3.1: 16 bytes).
ADAM_MIXED_BYTES = 16
#: Matrices LoRA adapts by default (all of a layer's linear maps: "all"; attention only: "attention").
LORA_TARGETS = ("attention", "all")
#: Kernels a decoder layer launches per generated token (norms, Q/K/V, rotary, attention, output
#: projection, residual adds, gate/up/down and activation): llama.cpp's CUDA graph of a LLaMA
#: layer has this order of nodes.
KERNELS_PER_LAYER = 14
#: The same for vLLM, which fuses more: its ``LlamaDecoderLayer`` (``vllm/model_executor/models/llama.py``
#: at commit 0035bdf2) runs a residual add fused into each RMS norm (2), the merged QKV and gate-up
#: projections, rotary embedding, the output and down projections and a fused SiLU-and-multiply (6),
#: and its attention (``vllm/attention/backends/flash_attn.py`` at commit 00df3429) writes the new key
#: and value into the paged cache, runs the decode kernel and copies the result out (3).
VLLM_KERNELS_PER_LAYER = 11
#: Fixed cost per kernel launched in a decode step (launch and synchronisation).
LAUNCH_S = 5e-6
#: CUDA-core operations per weight to unpack and scale a quantised weight during a matrix-vector
#: product (shift, mask, scale, offset and the multiply-add it feeds).
DEQUANT_OPS = 6
#: Latency of one all-reduce of a small message (one token's hidden state) between GPUs.
ALLREDUCE_LATENCY_S = {"nvlink": 8e-6, "pcie": 20e-6, "host": 40e-6}
#: Tokens llama.cpp takes from a prompt per pass (``n_batch``, its default); each pass is split
#: into micro-batches of :data:`PROMPT_CHUNK` (``n_ubatch``) that fill a layer split's pipeline.
PROMPT_BATCH = 2048
#: Cost of handing a token's hidden state from one GPU to the next in a layer split (llama.cpp
#: synchronises the stream and copies between devices at each boundary): read off the published
#: one-to-N-GPU decode speeds of ``data/reference_llm.csv``, where each boundary adds 0.1 to 0.4 ms.
#: A prompt's micro-batch adds its hidden states' bytes over PCIe through host memory.
LAYER_HOP_S = 250e-6
#: Copies of each GPU's inputs llama.cpp's scheduler keeps for a layer split's pipeline
#: (``GGML_SCHED_MAX_COPIES`` in ``ggml-backend.c`` at build 2824; the published runs' logs print
#: ``pipeline parallelism enabled (n_copies=4)``): the host reuses a GPU's input buffers every this
#: many micro-batches, and waits for the GPU to be done with them first.
SCHED_COPIES = 4
#: Output tile a tensor-core GEMM kernel gives each SM (rows x columns of the result; cuBLAS's
#: common 128 x 128 tile): a matrix multiply runs in waves of one tile per SM, and the last wave
#: leaves SMs idle (wave quantisation), which at a prompt chunk's 512 columns costs a large GPU
#: a share of its peak that a smaller one does not lose.
GEMM_TILE = (128, 128)
#: Bytes one SM streams per clock cycle through llama.cpp's matrix-vector products (a decode step's
#: kernels): by Little's law, the loads it keeps in flight over the memory latency, the latency
#: counted in the SM's own cycles (most of a load's round trip, through the load units, the
#: on-chip network and L2, runs in the core clock's domain), so the rate rises with the clock. A
#: GPU whose streaming bandwidth (:func:`gpukit.bandwidth_rates.streaming_gbs`) exceeds SMs x boost
#: clock x this cannot reach it at batch 1 (the HBM data-centre cards). Read off the first source's
#: decode measurements (``xiongjiedai-llama3`` in ``docs/llm-accuracy.md``), where it fits best
#: (2603 of 2676 pairs within ±20 %, against 2560 at 5.5 and 2555 at 6.5 bytes; as a rate per
#: second instead, at its best, 9 GB/s per SM, 2529): the H100 PCIe (1755 MHz) then streams 25 % more per
#: SM than the A100 (1410 MHz), as SpareCores' measurements of both, which it was not fitted to,
#: show. It belongs to llama.cpp's kernels (``ENGINES[...]["gemv_per_sm"]``). A PyTorch engine's
#: decode streams at the streaming rate: vLLM's runs in ``data/reference_llm.csv`` decode on the
#: HBM cards up to 2.3 times as fast as predicted with the cap.
GEMV_BYTES_PER_SM_CYCLE = 6.0
#: Bytes per second one SM streams through kernels that load one element a thread (``scalar_kernels``):
#: llama.cpp's conversions (``convert_unary``) and dequantisation (one warp a block) at the
#: benchmarked build, between a prompt's matrix multiplies. Read off the first source's prefill
#: measurements when it was set (2026-12-01); per second it fits them better than per cycle (1408
#: of 2364 pairs within ±20 % at 10 GB/s, 1353 at the best rate per cycle, 7 bytes; from 8 to 11 GB/s
#: the count moves between 1408 and 1426 without a trend, 1417 at 9 and 1420 at 11, so the constant
#: was not moved).
SCALAR_BYTES_PER_SM_S = 10e9
#: Engines: how they multiply in prefill, what their prompt's activations cost in memory traffic,
#: and how they spread a model over several GPUs.
#:
#: * llama.cpp (the build of ``data/reference_llm.csv``, 2824) dequantises to FP16 and calls cuBLAS
#:   with FP16 accumulation for prompts (``ggml_cuda_op_mul_mat_cublas``: ``CUBLAS_COMPUTE_16F``),
#:   keeps activations in float32 and so converts each matrix multiply's input to FP16 and its
#:   output back (``to_fp16_cuda``/``to_fp32_cuda``), runs attention without flash attention by
#:   default (the scores written, widened, soft-maxed and narrowed: :data:`SCORE_BYTES`) over the
#:   whole key-value window of the chunk, and splits a model by layer;
#: * PyTorch engines (vLLM, TensorRT-LLM) accumulate in FP32, keep FP16 activations, use flash
#:   attention (no scores in memory, the causal half of the window) and split by tensor.
#:
#: ``pipeline_across_passes``: whether a layer split's pipeline runs on from one pass of
#: :data:`PROMPT_BATCH` tokens into the next: llama-bench at build 2824 calls ``llama_decode`` once a
#: pass and synchronises only at the end of the prompt, so llama.cpp's does. ``sched_copies``: the
#: copies of each GPU's inputs llama.cpp's scheduler keeps (:data:`SCHED_COPIES`; the pipeline as
#: :func:`pipeline_makespan` runs it over :func:`layer_stages`), or None for an engine without it (m
#: micro-batches through n equal stages in m + n - 1 stage times). Graded with each part undone in
#: ``docs/llm-accuracy.md``: the published 8B runs pipeline about as the source allows, the 70B runs
#: less, which nothing read in the source explains.
ENGINES = {
    "llama.cpp": {
        "accumulate": "fp16",
        "split": "layer",
        "activation_bytes": 4,
        "converts": True,
        "flash_attention": False,
        "scalar_kernels": True,
        "gemv_per_sm": True,
        "kernels_per_layer": KERNELS_PER_LAYER,
        "pipeline_across_passes": True,
        "sched_copies": SCHED_COPIES,
    },
    "vllm": {
        "accumulate": "fp32",
        "split": "tensor",
        "activation_bytes": 2,
        "converts": False,
        "flash_attention": True,
        "scalar_kernels": False,
        "gemv_per_sm": False,
        "kernels_per_layer": VLLM_KERNELS_PER_LAYER,
        "pipeline_across_passes": False,
        "sched_copies": None,
    },
}
#: Bytes of memory traffic per attention score and head without flash attention (llama.cpp's
#: ``llm_build_kqv``): cuBLAS writes Q.K^T in FP16 (2), a kernel widens it to float32 (read 2,
#: write 4), the masked softmax reads and writes it (8), a kernel narrows it to FP16 for the
#: multiply by V (read 4, write 2), which reads it (2).
SCORE_BYTES = 24
#: Bytes a conversion kernel moves per element (float32 read and FP16 written, or the reverse).
CONVERT_BYTES = 6


@dataclass(frozen=True)
class LLM:
    """An open decoder architecture (gated FFN, grouped-query attention, optional experts)."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    experts: int = 1
    experts_per_token: int = 1
    tied_embeddings: bool = False
    max_context: int = 4096
    family: str = ""
    published_params_b: float | None = None
    config_url: str = ""
    source_read: str = ""

    def __post_init__(self):
        for f in (
            "layers",
            "hidden",
            "heads",
            "kv_heads",
            "head_dim",
            "ffn",
            "vocab",
            "experts",
            "experts_per_token",
            "max_context",
        ):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ParameterError(
                    f"model {self.name!r}: {f} must be a whole number of at least 1, not {v!r}"
                )
        if self.heads % self.kv_heads:
            raise ParameterError(
                f"model {self.name!r}: {self.heads} heads do not split into {self.kv_heads} "
                "key-value groups; heads must be a multiple of kv_heads"
            )
        if self.experts_per_token > self.experts:
            raise ParameterError(
                f"model {self.name!r}: {self.experts_per_token} experts per token of "
                f"{self.experts}; use at most experts"
            )

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def layer_params(self, experts: int | None = None) -> int:
        """Weights of one layer: Q, K, V and output projections, ``experts`` gated FFNs (three
        matrices each), the router of a mixture, two norms."""
        e = self.experts if experts is None else experts
        attention = self.hidden * (self.q_dim + 2 * self.kv_dim) + self.q_dim * self.hidden
        ffn = e * 3 * self.hidden * self.ffn
        router = self.hidden * self.experts if self.experts > 1 else 0
        return attention + ffn + router + 2 * self.hidden

    def params(self) -> int:
        """Every weight: the token embedding, the layers, the final norm and (untied) the output head."""
        head = 0 if self.tied_embeddings else self.vocab * self.hidden
        return self.vocab * self.hidden + self.layers * self.layer_params() + self.hidden + head

    def active_params(self) -> int:
        """Weights one token's forward pass multiplies (the experts it is routed to; the embedding
        is a look-up, the output head a matmul)."""
        return self.layers * self.layer_params(self.experts_per_token) + self.vocab * self.hidden

    def kv_bytes_per_token(self, kv: str = "f16") -> float:
        return 2 * self.layers * self.kv_dim * _kv_bytes(kv)


def _kv_bytes(kv: str) -> float:
    key = str(kv).strip().lower()
    if key not in KV_CACHE_BYTES:
        raise ParameterError(f"KV cache {kv!r}: use one of {', '.join(KV_CACHE_BYTES)}")
    return KV_CACHE_BYTES[key]


# --------------------------------------------------------------------------- data


def _model_from_record(r: dict) -> LLM:
    return LLM(
        name=r["name"].strip().lower(),
        family=r["family"],
        layers=r["layers"],
        hidden=r["hidden"],
        heads=r["heads"],
        kv_heads=r["kv_heads"],
        head_dim=r["head_dim"],
        ffn=r["ffn"],
        vocab=r["vocab"],
        experts=r["experts"],
        experts_per_token=r["experts_per_token"],
        tied_embeddings=r["tied_embeddings"] == "true",
        max_context=r["max_context"],
        published_params_b=r.get("published_params_b"),
        config_url=r["config_url"],
        source_read=r["source_read"],
    )


def _load_keyed(
    path: Path, schema: tuple[Field, ...], key_field: str, what: str, build, today: date | None = None
) -> dict:
    """A data file as ``{key: build(row)}``, every problem named by file, line and column: a
    key that repeats, a row ``build`` refuses (:class:`gpukit.errors.ParameterError`)."""
    parsed, problems = parse_rows(path, schema, today or date.today(), what)
    out: dict = {}
    for line, r in parsed:
        key = r[key_field].strip().lower()
        if key in out:
            problems.append(
                Problem(path, line, key_field, f"{key!r} appears twice; keep one row per {what}", key)
            )
            continue
        try:
            out[key] = build(key, r)
        except ParameterError as exc:
            problems.append(Problem(path, line, None, str(exc), key))
    if problems:
        raise DataError(problems)
    return out


def load_models(path: str | os.PathLike | None = None, today: date | None = None) -> dict[str, LLM]:
    """The shipped architectures (or ``path``), validated: every row sourced and dated."""
    if path is None and today is None:
        return dict(_shipped("models"))
    return _load_keyed(
        Path(path) if path else MODELS_PATH,
        MODEL_SCHEMA,
        "name",
        "model",
        lambda _, r: _model_from_record(r),
        today,
    )


@functools.lru_cache(maxsize=2)
def _shipped(table: str) -> dict:
    """The shipped models or weights formats, read once per process."""
    return (
        load_models(MODELS_PATH, date.today())
        if table == "models"
        else load_weights(WEIGHTS_PATH, date.today())
    )


def models_frame(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """The architecture table with parameters counted from the shapes next to the published count."""
    rows = []
    for m in load_models(path).values():
        rows.append(
            {
                "model": m.name,
                "family": m.family,
                "layers": m.layers,
                "hidden": m.hidden,
                "heads": m.heads,
                "kv_heads": m.kv_heads,
                "experts": m.experts,
                "params_b": m.params() / 1e9,
                "active_params_b": m.active_params() / 1e9,
                "published_params_b": m.published_params_b,
                "max_context": m.max_context,
                "kv_cache_mib_per_1k_tokens": m.kv_bytes_per_token() * 1024 / 2**20,
                "config_url": m.config_url,
            }
        )
    return pd.DataFrame(rows)


#: The fields a user's architecture file must give (``name`` defaults to the file's, ``head_dim``
#: to hidden / heads, the rest as :class:`LLM` has them).
FILE_FIELDS = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab")


def load_model_file(path: str | os.PathLike) -> LLM:
    """A user's architecture from a JSON or YAML file of :class:`LLM`'s fields (``name``, ``layers``,
    ``hidden``, ``heads``, ``kv_heads``, ``ffn``, ``vocab``; ``head_dim`` defaults to hidden/heads;
    ``experts``, ``experts_per_token``, ``tied_embeddings``, ``max_context`` optional)."""
    p = Path(path)
    if not p.is_file():
        raise ParameterError(f"{p}: no such file; give a JSON or YAML file of the model's shape")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # noqa: BLE001 -- any parse error becomes one line
        raise ParameterError(
            f"{p}: not valid {p.suffix.lstrip('.').upper() or 'JSON'} ({exc.__class__.__name__}: "
            f"{str(exc).splitlines()[0]})"
        ) from None
    if not isinstance(data, dict):
        raise ParameterError(f"{p}: expected a mapping of fields such as layers: 32")
    known = {f.name for f in fields(LLM)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ParameterError(f"{p}: unknown field(s) {', '.join(unknown)}; use {', '.join(sorted(known))}")
    missing = [f for f in FILE_FIELDS if f not in data]
    if missing:
        raise ParameterError(f"{p}: missing field(s) {', '.join(missing)}")
    data = dict(data)
    data.setdefault("name", p.stem)
    if "head_dim" not in data:
        if not isinstance(data.get("heads"), int) or not data["heads"] or data["hidden"] % data["heads"]:
            raise ParameterError(
                f"{p}: give head_dim (hidden {data.get('hidden')} is not a multiple of heads)"
            )
        data["head_dim"] = data["hidden"] // data["heads"]
    return LLM(**data)


def resolve_model(name: str, models: dict[str, LLM] | None = None) -> LLM:
    """A shipped model by name, or a user's ``.json``/``.yaml`` file."""
    text = str(name).strip()
    if text.lower().endswith((".json", ".yaml", ".yml")):
        return load_model_file(text)
    table = load_models() if models is None else models
    key = text.lower()
    if key in table:
        return table[key]
    import difflib

    close = difflib.get_close_matches(key, list(table), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise ParameterError(f"unknown model {name!r}; {hint}use one of {', '.join(table)} or a .json/.yaml file")


@dataclass(frozen=True)
class Weights:
    name: str
    bits_per_weight: float
    dequantized: bool
    basis: str
    source_url: str


def load_weights(path: str | os.PathLike | None = None, today: date | None = None) -> dict[str, Weights]:
    """The weights formats (or ``path``), validated: bits per weight, each with its source."""
    if path is None and today is None:
        return dict(_shipped("weights"))
    return _load_keyed(
        Path(path) if path else WEIGHTS_PATH,
        WEIGHTS_SCHEMA,
        "weights",
        "weights format",
        lambda key, r: Weights(
            key, r["bits_per_weight"], r["dequantized"] == "true", r["basis"], r["source_url"]
        ),
        today,
    )


def weights_format(name: str, table: dict[str, Weights] | None = None) -> Weights:
    table = load_weights() if table is None else table
    key = str(name).strip().lower()
    if key not in table:
        raise ParameterError(f"weights {name!r}: use one of {', '.join(table)}")
    return table[key]


def weights_frame() -> pd.DataFrame:
    return to_frame(
        [{**asdict(w), "weights": w.name} for w in load_weights().values()],
        (
            Field("weights", "text"),
            Field("bits_per_weight", "float"),
            Field("dequantized", "text"),
            Field("basis", "text"),
            Field("source_url", "text"),
        ),
    )


# --------------------------------------------------------------------------- memory


def _check_positive(name: str, value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ParameterError(f"{name} {value!r} must be a whole number of at least 1")
    return value


def inference_memory(
    model: LLM,
    weights: str = "f16",
    context: int = 4096,
    batch: int = 1,
    kv: str = "f16",
    flash_attention: bool = True,
    reserve_bytes: int | None = None,
    gpus: int = 1,
    chunk_tokens: int | None = None,
    key_span: int | None = None,
) -> dict:
    """Bytes to serve ``model`` at ``context`` tokens for ``batch`` sequences (per GPU when the
    model is split over ``gpus`` by tensor parallelism: weights and KV heads split n ways).

    A prompt is processed ``chunk_tokens`` at a time (default :data:`PROMPT_CHUNK`, or the context
    if shorter), attending over ``key_span`` keys (default: the context, the last chunk's case)."""
    from ..memory import DEFAULT_RUNTIME_RESERVE_BYTES

    _check_positive("context", context)
    _check_positive("batch", batch)
    _check_positive("gpus", gpus)
    w = weights_format(weights)
    reserve = DEFAULT_RUNTIME_RESERVE_BYTES if reserve_bytes is None else reserve_bytes
    weight_bytes = model.params() * w.bits_per_weight / 8 / gpus
    kv_bytes = batch * context * model.kv_bytes_per_token(kv) / gpus
    chunk = (
        min(PROMPT_CHUNK, context) if chunk_tokens is None else _check_positive("chunk_tokens", chunk_tokens)
    )
    span = context if key_span is None else _check_positive("key_span", key_span)
    # one chunk's working set in float32: the residual stream and norm, Q/K/V, the attention output,
    # the gated FFN's three inner tensors, and the last position's logits per sequence
    width = (
        2 * model.hidden
        + model.q_dim
        + 2 * model.kv_dim
        + model.q_dim
        + 3 * model.ffn * model.experts_per_token
    )
    act = 4 * (chunk * width / gpus + batch * model.vocab)
    if not flash_attention:
        act += 4 * chunk * span * model.heads / gpus  # the chunk's attention scores over its keys
    total = weight_bytes + kv_bytes + act + reserve
    return {
        "weights_bytes": weight_bytes,
        "kv_cache_bytes": kv_bytes,
        "activation_bytes": act,
        "reserve_bytes": reserve,
        "total_bytes": total,
    }


def activation_bytes(
    model: LLM,
    batch: int,
    seq_len: int,
    checkpointing: bool = False,
    flash_attention: bool = True,
    bytes_per_element: int = 2,
) -> float:
    """Bytes the backward pass keeps for ``batch`` sequences of ``seq_len`` tokens of 16-bit training.

    Per layer and token a LLaMA-shaped block keeps: the attention norm's input and output, Q, K
    and V, the attention output (flash attention keeps no scores; without it the scores and the
    probabilities, heads x sequence each per token, are kept as well), the FFN norm's input and
    output, and the gated FFN's gate, up, activated gate and product (ffn each, times the experts
    a token uses). With checkpointing only each layer's input is kept, and one layer's full set
    while it is recomputed.
    """
    per_layer = (
        4 * model.hidden + 2 * model.q_dim + 2 * model.kv_dim + 4 * model.ffn * model.experts_per_token
    )
    if not flash_attention:
        per_layer += 2 * model.heads * seq_len
    tokens = batch * seq_len
    full = per_layer * tokens * bytes_per_element
    if checkpointing:
        return model.layers * model.hidden * tokens * bytes_per_element + full
    return model.layers * full


def finetune_memory(
    model: LLM,
    mode: str = "lora",
    seq_len: int = 2048,
    batch: int = 1,
    lora_rank: int = 16,
    lora_targets: str = "all",
    checkpointing: bool = True,
    flash_attention: bool = True,
    reserve_bytes: int | None = None,
) -> dict:
    """Bytes to fine-tune ``model`` on one GPU: weights, trainable state, activations, logits.

    ``weights_bytes`` are the weights as the forward pass reads them (16-bit for full fine-tuning
    and LoRA, NF4 for QLoRA); ``optimizer_state_bytes`` what training adds per trainable parameter
    beyond them (for full fine-tuning the gradient, the float32 master copy and Adam's two moments;
    for LoRA the adapters' own weights as well). ``shardable_bytes`` (both together) is what
    ZeRO-3/FSDP spreads over several GPUs (:func:`finetune_gpus_needed`)."""
    from ..memory import DEFAULT_RUNTIME_RESERVE_BYTES

    if mode not in ("full", "lora", "qlora"):
        raise ParameterError(f"fine-tuning mode {mode!r}: use full, lora or qlora")
    if lora_targets not in LORA_TARGETS:
        raise ParameterError(f"LoRA targets {lora_targets!r}: use one of {', '.join(LORA_TARGETS)}")
    _check_positive("sequence length", seq_len)
    _check_positive("batch", batch)
    _check_positive("LoRA rank", lora_rank)
    reserve = DEFAULT_RUNTIME_RESERVE_BYTES if reserve_bytes is None else reserve_bytes
    p = model.params()
    if mode == "full":  # the 16-bit weight of each parameter is the model's weights; the rest is state
        trainable = p
        weights, state = 2.0 * p, trainable * (ADAM_MIXED_BYTES - 2)
    else:
        weights = p * (2 if mode == "lora" else NF4_BITS / 8)
        trainable = lora_params(model, lora_rank, lora_targets)
        state = trainable * ADAM_MIXED_BYTES
    tokens = batch * seq_len
    act = activation_bytes(model, batch, seq_len, checkpointing, flash_attention)
    logits = (
        tokens * model.vocab * (2 + 4 + 4)
    )  # 16-bit logits, their float32 copy for the loss, its gradient
    total = weights + state + act + logits + reserve
    return {
        "weights_bytes": weights,
        "trainable_params": trainable,
        "optimizer_state_bytes": state,
        "activation_bytes": act,
        "logits_bytes": logits,
        "reserve_bytes": reserve,
        "shardable_bytes": weights + state,
        "total_bytes": total,
    }


def finetune_gpus_needed(need: dict, gpu_row, limit: int = 64) -> int | None:
    """The fewest GPUs of this kind (1, 2, 4, 8, ...) a fine-tuning run of ``need`` (a
    :func:`finetune_memory` result) fits on with its weights, gradients and optimizer state
    sharded over all of them (ZeRO stage 3 / FSDP: Rajbhandari et al. 2020, section 5), each GPU
    still holding its own batch's activations, logits and runtime reserve."""
    rest = need["total_bytes"] - need["shardable_bytes"]
    n = 1
    while n <= limit:
        if fits(need["shardable_bytes"] / n + rest, gpu_row):
            return n
        n *= 2
    return None


def _unshardable_note(need: dict, gpu_row, batch: int, at_batch_one: int | None, limit: int = 64) -> str:
    """Why a fine-tuning run of ``need`` fits on no number of these GPUs up to ``limit``, sharded as
    :func:`finetune_gpus_needed` shards it, and what batch 1 needs (``at_batch_one`` GPUs, or none)."""
    if not fits(need["shardable_bytes"] / limit, gpu_row):
        why = f"weights, gradients and optimizer state alone, sharded over {limit}, exceed one"
    else:
        why = f"each keeps its own batch's activations, at batch {batch} more than one holds"
    if batch > 1 and at_batch_one:
        why += f"; at batch 1 it needs {at_batch_one}" if at_batch_one > 1 else "; batch 1 fits on one"
    return f"does not fit on {limit} of these GPUs, even sharded: {why}"


def lora_params(model: LLM, rank: int, targets: str = "all") -> int:
    """Adapter weights: rank x (inputs + outputs) per adapted matrix and layer."""
    attention = (model.hidden + model.q_dim) * 2 + (model.hidden + model.kv_dim) * 2  # q, o, k, v
    ffn = 3 * (model.hidden + model.ffn) * model.experts
    return model.layers * rank * (attention + (ffn if targets == "all" else 0))


# --------------------------------------------------------------------------- speed


def _gpu_row(gpu, catalogue: pd.DataFrame | None):
    if isinstance(gpu, (pd.Series, dict)):
        return gpu
    cat = specs.load_catalogue() if catalogue is None else catalogue
    exact = cat[cat["gpu"] == gpu]
    if len(exact):
        return exact.iloc[0]
    name = specs.resolve(gpu, cat).gpu
    return cat[cat["gpu"] == name].iloc[0]


def _compute_precision(weights: str) -> str:
    """The math a format's matrix multiplies run at: quantised formats are unpacked to FP16, and
    ``int8`` (LLM.int8()) is taken at the FP16 rate too, not the catalogue's INT8 tensor rate: its
    outlier columns multiply in FP16 and its activations are quantised on the fly, and no published
    int8 speed grades a faster rule."""
    key = weights.strip().lower()
    return {"bf16": "bf16", "f32": "float32"}.get(key, "fp16")


SPLITS = ("tensor", "layer")


def wave_utilization(rows: int, cols: int, sms: int, tile: tuple[int, int] = GEMM_TILE) -> float:
    """Share of ``sms`` SMs a (rows x cols) result keeps busy over its waves of tiles."""
    tiles = math.ceil(rows / tile[0]) * math.ceil(cols / tile[1])
    return tiles / (math.ceil(tiles / sms) * sms)


def _layer_gemms(model: LLM) -> list[tuple[int, int]]:
    """(output features, input features) of each matrix a token passes through in one layer."""
    h, f = model.hidden, model.ffn
    mats = [(model.q_dim, h), (model.kv_dim, h), (model.kv_dim, h), (h, model.q_dim)]
    return mats + [(f, h), (f, h), (h, f)] * model.experts_per_token


def layer_stages(layers: int, gpus: int) -> list[int]:
    """Layers each of ``gpus`` GPUs holds in llama.cpp's layer split (``llm_load_tensors`` at build
    2824, GPUs of equal memory, every layer offloaded): split points at k/n of the layers plus the
    output layer, layer i on the first GPU whose point lies above i / (layers + 1), in float32 as
    there. The first GPU gets the extra layer, the last the output layer: 8B on four GPUs 9, 8, 8
    and 7 layers, as the KV-cache buffers of a published run's log show (288, 256, 256 and 224 MiB)."""
    points = np.cumsum(np.ones(gpus, dtype=np.float32)) / np.float32(gpus)
    where = np.searchsorted(
        points, np.arange(layers, dtype=np.float32) / np.float32(layers + 1), side="right"
    )
    return np.bincount(np.minimum(where, gpus - 1), minlength=gpus).tolist()


def pipeline_makespan(stage_s: Sequence[float], microbatches: int, copies: int = SCHED_COPIES) -> float:
    """Seconds until the last of ``microbatches`` leaves a layer split's last GPU, each GPU taking
    ``stage_s`` (its layers and its hand-off to the next). As llama.cpp's scheduler runs it
    (``ggml_backend_sched_compute_splits``): a GPU works through micro-batches in order, each after
    the previous GPU is done with it; the host launches GPU after GPU, micro-batch after
    micro-batch, and before it copies a micro-batch's inputs (the mask, the positions) to a GPU it
    waits until that GPU finished the micro-batch ``copies`` earlier, which used the same input
    buffers. With more GPUs than copies that wait, not the GPUs, paces the pipeline."""
    done: list[list[float]] = []
    host = 0.0
    for j in range(microbatches):
        row: list[float] = []
        for s, t in enumerate(stage_s):
            if j >= copies:
                host = max(host, done[j - copies][s])
            row.append(max(host, done[j - 1][s] if j else 0.0, row[s - 1] if s else 0.0) + t)
        done.append(row)
    return done[-1][-1]


def layer_hop_s(model: LLM, row, gpus: int, tokens: int, engine: str = "llama.cpp") -> float:
    """Seconds to hand ``tokens`` tokens' hidden states from one GPU of a layer split to the next:
    :data:`LAYER_HOP_S`, plus their bytes over PCIe through host memory (llama.cpp copies between
    devices without peer access, which it enables only for row-split weights)."""
    from ..perfmodel import interconnect

    _, host_gbs = interconnect(row, gpus, "host")
    return LAYER_HOP_S + tokens * model.hidden * ENGINES[engine]["activation_bytes"] / (host_gbs * 1e9)


def attention_window(prompt: int, engine: str = "llama.cpp", chunk: int = PROMPT_CHUNK) -> float:
    """Mean key-value positions a prompt token's attention covers. llama.cpp without flash attention
    multiplies each ``chunk``'s queries by the whole cache filled so far (``kv_self.n``: the cells in
    use, padded to 256) and masks the rest; flash attention skips the masked half."""
    if ENGINES[engine]["flash_attention"]:
        return prompt / 2
    total = 0
    for start in range(0, prompt, chunk):
        end = min(start + chunk, prompt)
        total += (end - start) * math.ceil(end / 256) * 256
    return total / prompt


def prefill_traffic_bytes(model: LLM, engine: str = "llama.cpp", window: float = 0.0) -> float:
    """Bytes of memory traffic per prompt token outside the matrix multiplies, over every layer.

    Elementwise passes over the activations (each element read or written once, at the engine's
    activation size): two RMS norms and their weight multiply, rotary embedding of Q and K, two
    residual adds, the gated FFN's SiLU and product, merging the heads. Where the engine keeps
    float32 activations (llama.cpp), each matrix multiply's input is converted to FP16 and its
    output back, and the new keys and values are converted into the FP16 cache; without flash
    attention, ``window`` scores per head go through memory (:data:`SCORE_BYTES`)."""
    e = ENGINES[engine]
    h, q, kv, f, x = model.hidden, model.q_dim, model.kv_dim, model.ffn, model.experts_per_token
    passes = 8 * h + 2 * (q + kv) + 6 * h + 5 * f * x + 2 * q
    converts = 0
    if e["converts"]:
        inputs = 3 * h + q + q + (2 * h + f) * x  # Q/K/V, output projection, Q into Q.K^T, gate/up/down
        outputs = q + 2 * kv + h + q + (2 * f + h) * x  # the same multiplies' results, and P.V's
        converts = inputs + outputs + 2 * kv  # and the new keys and values into the cache
    scores = 0 if e["flash_attention"] else model.heads * window * SCORE_BYTES
    return model.layers * (passes * e["activation_bytes"] + converts * CONVERT_BYTES + scores)


def default_efficiency():
    """The roofline's factors as the LLM model takes them: :data:`gpukit.perfmodel.DEFAULT_EFFICIENCY`
    with every GPU streaming at the measured GPUs' median share of its datasheet bandwidth
    (``measured_bandwidth`` off), not at its own copy share as the performance model does. A copy
    reads one array and writes another; decode reads its weights and writes next to nothing, and a
    GPU's read rate is not its copy rate (te42kyfo's gpu-stream in ``data/bandwidth_rates.csv``'s
    sources: an H100 PCIe reads at 1942 GB/s and scales at 1704, an A40 679 and 652). Graded both
    ways (``docs/llm-accuracy.md`` gives both counts), each GPU's copy share fits fewer pairs, in
    decode and in prefill."""
    from ..perfmodel import DEFAULT_EFFICIENCY

    return replace(DEFAULT_EFFICIENCY, measured_bandwidth=False)


def gemv_rate(row) -> float:
    """Bytes per second llama.cpp's matrix-vector products stream on a GPU at batch 1, before the
    streaming bandwidth caps them: SMs x boost clock x :data:`GEMV_BYTES_PER_SM_CYCLE`."""
    return specs.sm_count(row) * float(row["boost_clock_mhz"]) * 1e6 * GEMV_BYTES_PER_SM_CYCLE


def speeds(
    model: LLM,
    gpu,
    weights: str = "f16",
    context: int = 4096,
    batch: int = 1,
    kv: str = "f16",
    gpus: int = 1,
    link: str | None = None,
    split: str | None = None,
    prompt: int | None = None,
    engine: str = "llama.cpp",
    efficiency=None,
    catalogue: pd.DataFrame | None = None,
    prompt_chunk: int = PROMPT_CHUNK,
    prompt_batch: int = PROMPT_BATCH,
) -> dict:
    """Predicted prefill and decode tokens per second of ``model`` on ``gpus`` x ``gpu``; raises
    :class:`gpukit.precision.Unsupported` where the GPU cannot run the weights' math (BF16 on Volta).

    ``split`` says how several GPUs share the model: ``tensor`` parallel (each GPU holds a slice of
    every layer and works on every token; vLLM, TensorRT-LLM) or by ``layer`` (each GPU holds
    whole layers and the token passes from one to the next: llama.cpp's default), which adds
    memory but no speed to a decode step, and lets a prompt of several micro-batches fill a pipeline
    (llama.cpp's: :func:`layer_stages`, :func:`pipeline_makespan`).
    ``prompt``: the prompt's length, for the prefill rate (default: the context); ``prompt_chunk`` and
    ``prompt_batch``: its tokens per micro-batch and per pass (llama.cpp's ``n_ubatch`` and
    ``n_batch``; as llama.cpp does, a micro-batch is never larger than a pass)."""
    if engine not in ENGINES:
        raise ParameterError(f"engine {engine!r}: use one of {', '.join(ENGINES)}")
    split = ENGINES[engine]["split"] if split is None else split
    if split not in SPLITS:
        raise ParameterError(f"split {split!r}: use tensor or layer")
    from ..perfmodel import interconnect
    from ..perfmodel.scaling import default_link

    eff = default_efficiency() if efficiency is None else efficiency
    row = _gpu_row(gpu, catalogue)
    w = weights_format(weights)
    math_label, peak_tflops = prec.math_unit(row, _compute_precision(weights), True)
    if ENGINES[engine]["accumulate"] == "fp16" and math_label.startswith("FP16"):
        peak_tflops = prec.fp16_accumulate_tflops(row) or peak_tflops
    peak = peak_tflops * 1e12 * eff.tensor * (tensor_share(row)[0] if eff.sustained else 1.0)
    cuda = float(row["fp32_tflops"]) * 1e12 * eff.cuda
    sms = specs.sm_count(row)
    # a streaming kernel's rate: the datasheet at the share published copies measured (gpukit.bandwidth_rates;
    # by default the measured GPUs' median, default_efficiency says why)
    stream = streaming_gbs(row, eff.measured_bandwidth) * 1e9 * eff.stream
    # what decode's matrix-vector products reach: llama.cpp's at the per-SM rate (GEMV_BYTES_PER_SM_CYCLE at
    # the boost clock), a PyTorch engine's at the streaming rate
    bandwidth = min(stream, gemv_rate(row)) if ENGINES[engine]["gemv_per_sm"] else stream
    # what the prompt's kernels other than tiled matrix multiplies reach
    elementwise = min(stream, sms * SCALAR_BYTES_PER_SM_S) if ENGINES[engine]["scalar_kernels"] else stream
    n = _check_positive("gpus", gpus)
    active = model.active_params()
    attention_flops = 4 * model.layers * model.q_dim  # per token and context position (QK^T and PV)
    prompt = context if prompt is None else _check_positive("prompt", prompt)
    nbatch = _check_positive("prompt_batch", prompt_batch)
    ubatch = min(_check_positive("prompt_chunk", prompt_chunk), nbatch)
    # tensor parallel divides every step's work n ways; a layer split runs the layers one GPU after
    # another (a prompt of several chunks keeps up to that many GPUs busy at once)
    decode_n = n if split == "tensor" else 1
    m = math.ceil(prompt / ubatch)  # micro-batches of the prompt
    if not ENGINES[engine]["pipeline_across_passes"]:
        m = min(m, nbatch // ubatch)
    # prefill, per chunk of the prompt: a quantised format is first unpacked to FP16 (read the packed
    # weights of every expert a chunk routes to, write FP16 ones), then each matrix multiply reads
    # its FP16 weights once and runs on the tensor cores; the activations' elementwise kernels,
    # conversions and attention scores stream through memory; the output head multiplies only the
    # prompt's last token (one matrix-vector product per pass)
    chunk = min(ubatch, prompt)
    layer_weights = model.layers * model.layer_params()
    unpack_s = layer_weights * (w.bits_per_weight / 8 + 2) / elementwise if w.dequantized else 0.0
    layer_s = sum(
        2 * o * i * chunk / (peak * wave_utilization(o, chunk, sms)) for o, i in _layer_gemms(model)
    )
    window = attention_window(prompt, engine, ubatch)
    matmul_s = model.layers * layer_s + chunk * attention_flops * window / peak
    gemm_s = max(matmul_s, model.layers * model.layer_params(model.experts_per_token) * 2 / stream)
    traffic_s = chunk * prefill_traffic_bytes(model, engine, window) / elementwise
    head_s = model.vocab * model.hidden * w.bits_per_weight / 8 / bandwidth / min(prompt, nbatch)
    one_s = unpack_s + gemm_s + traffic_s + head_s * chunk  # one micro-batch through every layer on one GPU
    # decode: one token per sequence per step
    weight_bytes = active * w.bits_per_weight / 8
    kv_bytes = batch * context * model.kv_bytes_per_token(kv)
    memory_s = (weight_bytes + kv_bytes) / (bandwidth * decode_n)
    compute_s = batch * (2 * active + attention_flops * context) / (peak * decode_n)
    dequant_s = active * DEQUANT_OPS / (cuda * decode_n) if w.dequantized else 0.0
    launch_s = model.layers * ENGINES[engine]["kernels_per_layer"] * LAUNCH_S
    comm_s = 0.0
    link_name = ""
    if n > 1:
        kind = default_link(row) if link is None else link
        link_name, _ = interconnect(row, n, kind)
        # tensor parallel: two all-reduces of the hidden state per layer; layer split: one hop per GPU boundary
        comm_s = 2 * model.layers * ALLREDUCE_LATENCY_S[kind] if split == "tensor" else (n - 1) * LAYER_HOP_S
    if n == 1:
        prefill_s = one_s / chunk
    elif split == "tensor":
        prefill_s = (one_s / n + comm_s) / chunk
    elif ENGINES[engine]["sched_copies"]:
        # llama.cpp's scheduler: each GPU's layers as llama.cpp assigns them, each hand-off on the sending GPU's stream
        hop_s = layer_hop_s(model, row, n, chunk, engine)
        stage_s = [
            k * one_s / model.layers + (hop_s if s < n - 1 else 0.0)
            for s, k in enumerate(layer_stages(model.layers, n))
        ]
        prefill_s = pipeline_makespan(stage_s, m, ENGINES[engine]["sched_copies"]) / (m * chunk)
    else:  # m micro-batches through an n-stage pipeline take m + n - 1 stage times, not m x n
        prefill_s = (one_s * (m + n - 1) / (m * n) + comm_s) / chunk
    step = max(memory_s, compute_s, dequant_s) + launch_s + comm_s
    bound = max(
        (("memory", memory_s), ("compute", compute_s), ("dequantization", dequant_s)), key=lambda t: t[1]
    )[0]
    return {
        "gpu": row["gpu"],
        "gpus": n,
        "link": link_name,
        "prefill_tokens_per_s": 1 / prefill_s,
        "decode_tokens_per_s": batch / step,
        "decode_step_s": step,
        "decode_bound": bound,
        "decode_fixed_share": (launch_s + comm_s) / step,
    }


# --------------------------------------------------------------------------- tables


def fits(total_bytes: float, gpu_row) -> bool:
    return total_bytes <= specs.memory_bytes(gpu_row["memory_gb"])


def gpus_needed(
    model: LLM, gpu_row, weights: str, context: int, batch: int, kv: str = "f16", limit: int = 64
) -> int | None:
    """The fewest GPUs of this kind (1, 2, 4, 8, ...) the model fits on by tensor parallelism."""
    n = 1
    while n <= limit:
        if n <= model.kv_heads and fits(
            inference_memory(model, weights, context, batch, kv, gpus=n)["total_bytes"], gpu_row
        ):
            return n
        n *= 2
    return None


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


#: Weights formats llama.cpp serves (GGUF); the others default to a PyTorch engine.
GGUF = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_k_m", "q5_k_m")


def default_engine(weights: str) -> str:
    """llama.cpp for GGUF quantisations, vLLM (a PyTorch engine) for 16-bit and GPTQ/AWQ weights."""
    key = str(weights).strip().lower()
    return "llama.cpp" if key in GGUF and key.startswith("q") else "vllm"


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
    engine: str | None = None,
    catalogue: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per GPU: does ``model`` fit (``mode`` infer, full, lora or qlora), with what, the
    largest context and batch, how many GPUs it needs (fine-tuning: sharded, :func:`finetune_gpus_needed`),
    and to serve it how fast it prefills and decodes and what a million generated tokens cost
    renting and owning (decode at ``batch``; fine-tuning rows answer memory only). ``engine``
    (:data:`ENGINES`; default :func:`default_engine`) decides how prompts multiply and how several
    GPUs share a model."""
    from .. import cost, prices

    if mode not in MODES:
        raise ParameterError(f"mode {mode!r}: use one of {', '.join(MODES)}")
    m = model if isinstance(model, LLM) else resolve_model(model)
    weights_format(weights)
    engine = default_engine(weights) if engine is None else engine
    if engine not in ENGINES:
        raise ParameterError(f"engine {engine!r}: use one of {', '.join(ENGINES)}")
    split = ENGINES[engine]["split"]
    _check_positive("context", context)
    _check_positive("batch", batch)
    if context > m.max_context:
        raise ParameterError(f"{m.name} takes up to {m.max_context} tokens of context, not {context}")
    cat = specs.load_catalogue() if catalogue is None else catalogue
    graded = graded_gpus()
    shipped = load_models().get(m.name) == m  # a user's own shape under a shipped name was never measured
    if mode == "infer":

        def total(c: int, b: int) -> float:
            return inference_memory(m, weights, c, b, kv, gpus=count)["total_bytes"]
    else:

        def total(c: int, b: int) -> float:
            return finetune_memory(m, mode, c, b, lora_rank, lora_targets, checkpointing)["total_bytes"]

    rows = []
    for _, g in specs.select(cat, gpus).iterrows():
        cap = specs.memory_bytes(g["memory_gb"])
        if mode == "infer":
            need = inference_memory(m, weights, context, batch, kv, gpus=count)
            wb, kvb = need["weights_bytes"], need["kv_cache_bytes"]
            needed = gpus_needed(m, g, weights, context, batch, kv)
        else:
            need = finetune_memory(m, mode, context, batch, lora_rank, lora_targets, checkpointing)
            wb, kvb, needed = need["weights_bytes"], 0.0, finetune_gpus_needed(need, g)
        max_ctx = largest_passing(lambda c: total(c, batch) <= cap, 1, m.max_context)  # noqa: B023 -- called here
        max_b = largest_passing(lambda b: total(context, b) <= cap, 1, 4096)  # noqa: B023
        fit = bool(need["total_bytes"] <= cap)
        row = {
            "gpu": g["gpu"],
            "model": m.name,
            "mode": mode,
            "weights": weights if mode == "infer" else FINETUNE_WEIGHTS[mode],
            "context": context,
            "batch": batch,
            "fits": fit,
            "total_gib": need["total_bytes"] / GIB,
            "weights_gib": wb / GIB,
            "kv_cache_gib": kvb / GIB,
            "max_context": max_ctx,
            "max_batch": max_b,
            "gpus_needed": needed,
            "graded": g["gpu"] in graded if mode == "infer" else False,
            "note": "",
        }
        if mode != "infer":  # a memory answer: serving speed and cost belong to --mode infer
            if not fit:
                if needed:
                    row["note"] = (
                        f"needs {needed} GPUs with weights, gradients and optimizer state sharded "
                        "(ZeRO-3/FSDP)"
                    )
                else:
                    one = finetune_memory(m, mode, context, 1, lora_rank, lora_targets, checkpointing)
                    row["note"] = _unshardable_note(need, g, batch, finetune_gpus_needed(one, g))
            rows.append(row)
            continue
        # where it does not fit, the speed (and cost) are those of the fewest cards that hold it
        cards = count if fit or not needed else max(needed, count)
        if not fit and not needed:
            row["note"] = "does not fit on 64 of these GPUs"
            rows.append(row)
            continue
        try:
            s = speeds(m, g, weights, context, batch, kv, cards, engine=engine, catalogue=cat)
            row.update(
                prefill_tokens_per_s=s["prefill_tokens_per_s"],
                decode_tokens_per_s=s["decode_tokens_per_s"],
                decode_bound=s["decode_bound"],
                cards=cards,
            )
            if (
                kv == "f16" and shipped
            ):  # the published runs kept their cache in FP16, and ran the shipped shapes
                row.update(
                    published_check(m.name, weights, g["gpu"], cards, context, engine, decode=batch == 1)
                )
            if cards != count:
                row["note"] = (
                    f"speed and cost on {cards} GPUs ({engine}, split by {split}): one holds "
                    f"{cap / GIB:.0f} GiB"
                )
        except prec.Unsupported as exc:
            row["note"] = str(exc)
        rows.append(row)
    frame = pd.DataFrame(
        rows,
        columns=[
            c for c in LLM_COLUMNS if c not in ("usd_per_million_tokens", "usd_per_million_tokens_owned")
        ]
        + ["cards"],
    )
    book = prices.load_prices(price_files)
    speed = frame.dropna(subset=["decode_tokens_per_s"]).rename(columns={"decode_tokens_per_s": "throughput"})
    # dollars per token: each card's price over its share of the tokens
    speed = speed.assign(throughput_unit="tokens/s", throughput=speed["throughput"] / speed["cards"])
    work = (
        cost.work_cost_table(book, speed[["gpu", "throughput", "throughput_unit"]], catalogue=cat)
        if len(speed)
        else pd.DataFrame(columns=["gpu", "cloud_usd_per_million_items", "owned_usd_per_million_items"])
    )
    by_gpu = work.set_index("gpu") if len(work) else work
    frame["usd_per_million_tokens"] = [
        by_gpu.loc[g, "cloud_usd_per_million_items"] * 1 if len(by_gpu) and g in by_gpu.index else None
        for g in frame["gpu"]
    ]
    frame["usd_per_million_tokens_owned"] = [
        by_gpu.loc[g, "owned_usd_per_million_items"] if len(by_gpu) and g in by_gpu.index else None
        for g in frame["gpu"]
    ]
    cards = sorted({int(c) for c in frame["cards"].dropna()})
    frame = frame[list(LLM_COLUMNS)]
    frame["published_tokens"] = frame["published_tokens"].astype("Int64")
    frame.attrs["cards"] = cards  # the GPU counts the speeds ran on (one, or the fewest that hold the model)
    if mode == "infer":
        frame.attrs["bytes_per_token"] = m.active_params() * weights_format(
            weights
        ).bits_per_weight / 8 + batch * context * m.kv_bytes_per_token(kv)
    return frame


@functools.lru_cache(maxsize=1)
def _graded_reference() -> pd.DataFrame:
    """The shipped measurements as graded: one row per configuration, screened rows left out."""
    if not REFERENCE_PATH.exists():
        return pd.DataFrame(columns=[*CONFIGURATION, "engine", "throughput_tokens_s"])
    ref = by_configuration(load_reference())
    return ref[screened(ref) == ""].reset_index(drop=True)


def _engine_of(published_engine: str) -> str:
    return "llama.cpp" if str(published_engine).startswith("llama.cpp") else "vllm"


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


def pair_answers(
    pairs,
    models,
    weights: str = "q4_k_m",
    context: int = 4096,
    batch: int = 1,
    catalogue: pd.DataFrame | None = None,
    price_files=None,
) -> tuple[pd.DataFrame, list[str]]:
    """For each pair of GPUs, model and GPU (one row each): does it fit, how many cards it needs,
    at what decode speed and cost per million tokens; and one verdict per pair computed from
    those rows."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    rows, verdicts = [], []
    for a, b in pairs:
        ga, gb = specs.resolve(a, cat).gpu, specs.resolve(b, cat).gpu
        only = {ga: [], gb: []}
        both, published = [], []
        for name in models:
            m = resolve_model(name)
            ctx = min(context, m.max_context)
            t = llm_table(m, weights, ctx, batch, [ga, gb], price_files=price_files, catalogue=cat).set_index(
                "gpu"
            )
            ra, rb = t.loc[ga], t.loc[gb]
            for g, r in ((ga, ra), (gb, rb)):
                rows.append(
                    {
                        "pair": f"{ga} vs {gb}",
                        "model": m.name,
                        "context": ctx,
                        "gpu": g,
                        "fits": bool(r["fits"]),
                        "total_gib": r["total_gib"],
                        "gpus_needed": r["gpus_needed"],
                        "decode_tokens_per_s": r["decode_tokens_per_s"] if r["fits"] else None,
                        "usd_per_million_tokens": r["usd_per_million_tokens"] if r["fits"] else None,
                        "usd_per_million_tokens_owned": r["usd_per_million_tokens_owned"]
                        if r["fits"]
                        else None,
                    }
                )
            if ra["fits"] and rb["fits"]:
                both.append((m.name, ra["decode_tokens_per_s"] / rb["decode_tokens_per_s"]))
                if (
                    pd.notna(ra["published_decode_tokens_per_s"])
                    and pd.notna(rb["published_decode_tokens_per_s"])
                    and ra["published_source"] == rb["published_source"]
                    and ra["published_tokens"] == rb["published_tokens"]
                ):
                    published.append(
                        (
                            m.name,
                            ra["published_source"],
                            int(ra["published_tokens"]),
                            ra["published_decode_tokens_per_s"] / rb["published_decode_tokens_per_s"],
                        )
                    )
            elif ra["fits"]:
                only[ga].append(m.name)
            elif rb["fits"]:
                only[gb].append(m.name)
        parts = [f"At {weights}, {context} tokens of context, batch {batch}:"]
        for g in (ga, gb):
            if only[g]:
                parts.append(f"only {g} holds {', '.join(only[g])}.")
        if both:
            lo, hi = min(r for _, r in both), max(r for _, r in both)
            faster = ga if hi >= 1 and lo >= 1 else (gb if hi <= 1 else None)
            graded = decode_error_text((ga, gb))

            def span(x: float, y: float) -> str:
                return f"{x:.2f}" if f"{x:.2f}" == f"{y:.2f}" else f"{x:.2f}-{y:.2f}"

            if faster == ga:
                parts.append(
                    f"Where both fit ({len(both)} models), {ga} generates {span(lo, hi)}x as fast "
                    f"(predicted; {graded})."
                )
            elif faster == gb:
                parts.append(
                    f"Where both fit ({len(both)} models), {gb} generates {span(1 / hi, 1 / lo)}x as "
                    f"fast (predicted; {graded})."
                )
            else:
                parts.append(
                    f"Where both fit ({len(both)} models), neither is always faster ({lo:.2f}-{hi:.2f}x)."
                )
            if published:
                parts.append(
                    "Published by one source for both: "
                    + "; ".join(
                        f"{source} measured {ga if r >= 1 else gb} at {max(r, 1 / r):.2f}x on {name} "
                        f"(generating {tokens} tokens)"
                        for name, source, tokens, r in published
                    )
                    + "."
                )
        if not both and not only[ga] and not only[gb]:
            parts.append("neither holds any of these models on one card.")
        verdicts.append(f"{ga} vs {gb}: " + " ".join(parts))
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
) -> pd.DataFrame:
    """Models x GPUs: the share of each GPU's memory the model needs (above 1: it does not fit)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    chosen = specs.select(cat, gpus)
    out = {}
    for name in models:
        m = resolve_model(name)
        ctx = min(context, m.max_context)
        if mode == "infer":
            need = inference_memory(m, weights, ctx, batch, kv)["total_bytes"]
        else:
            need = finetune_memory(m, mode, ctx, batch)["total_bytes"]
        out[m.name] = {g["gpu"]: need / specs.memory_bytes(g["memory_gb"]) for _, g in chosen.iterrows()}
    return pd.DataFrame(out).T


# --------------------------------------------------------------------------- grading

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
#: split's pipeline is the least certain part of the model: docs/llm-accuracy.md).
SETTINGS = ("one GPU each", "several GPUs")
#: The target for predicted LLM speed ratios, and the gap above which a winner is called.
RATIO_TOLERANCE = 0.20
WINNER_MARGIN = 0.10


def load_reference(
    path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None, today: date | None = None
) -> pd.DataFrame:
    """Published LLM speeds, validated: sourced, dated, naming catalogue GPUs, shipped models and formats."""
    p = Path(path) if path else REFERENCE_PATH
    cat = specs.load_catalogue() if catalogue is None else catalogue
    parsed, problems = parse_rows(p, REFERENCE_SCHEMA, today or date.today(), "measurement")
    models, formats = load_models(), load_weights()
    for line, r in parsed:
        if r["model"].lower() not in models:
            problems.append(
                Problem(p, line, "model", f"{r['model']!r} is not in data/llm_models.csv; add it there")
            )
        if r["weights"].lower() not in formats:
            problems.append(Problem(p, line, "weights", f"{r['weights']!r} is not in data/llm_weights.csv"))
    records = specs.resolve_rows(
        p,
        parsed,
        cat,
        lambda r: (*(r[k] for k in CONFIGURATION if k != "split"), r.get("host") or ""),
        problems,
        "same source, GPU, count, model, weights, test, length and host",
    )
    if problems:
        raise DataError(problems)
    return to_frame(records, REFERENCE_SCHEMA)


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
#: The first CUDA compute capability whose GPUs llama.cpp from :data:`LLAMA_CPP_MMQ_BUILD` on gives a
#: quantised prompt to its int8 kernels (MMQ) at any size (``new_mma_available``: Turing's int8 mma);
#: on Volta a prompt of 64 tokens or more still goes to cuBLAS unpacked (``ggml_cuda_should_use_mmq``
#: in ``ggml/src/ggml-cuda/mmq.cu``, read at build 4748).
MMQ_COMPUTE_CAPABILITY = 7.5
#: What the model's llama.cpp prefill follows: build 2824's path, flash attention off, a quantised
#: prompt unpacked to FP16 for cuBLAS. A prompt a run timed another way is published beside the
#: graded ones and left out of the grading (:func:`screened`).
FLASH_ATTENTION_ON = "flash attention on"
#: A run whose GPUs' power limit (``power_limit_w``: the lowest nvidia-smi showed among them) sat below
#: this share of the board's datasheet power (the catalogue's ``tdp_w``) ran its compute-bound prompts
#: at the clock the cap allowed, which the model of a stock board does not know; :func:`screened`
#: leaves its prefill out. A memory-bound decode step draws less than the cap and keeps its clocks,
#: so it stays in. (The H100 PCIe's datasheet lets its power be set from 300 to 350 W: 310 W is a
#: stock setting, inside this share.)
POWER_LIMIT_SHARE = 0.85


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
    for i, why in other_prefill_path(reference).items():
        reason[i] = why
    return reason


def other_prefill_flags(reference: pd.DataFrame) -> pd.DataFrame:
    """The llama.cpp prompts of ``reference`` timed on a path the model's prefill does not follow, one
    row each (index labels of ``reference``) with what differs: ``mmq``, a quantised prompt given to
    the int8 kernels of a build from :data:`LLAMA_CPP_MMQ_BUILD` on, on a GPU of compute capability
    :data:`MMQ_COMPUTE_CAPABILITY` or later; ``flash_attention``, :data:`FLASH_ATTENTION_ON` in the
    run's ``engine``; and the ``build``. The model's prefill is build 2824's, with neither."""
    columns = ["build", "mmq", "flash_attention"]
    if "engine" not in reference:
        return pd.DataFrame(columns=columns)
    pp = reference[(reference["test"] == "pp") & reference["engine"].astype(str).str.startswith("llama.cpp")]
    cc = pp["gpu"].map(specs.load_catalogue().set_index("gpu")["compute_capability"].astype(float))
    build = pp["engine"].map(llama_cpp_build)
    quantised = pp["weights"].map(lambda w: weights_format(w).dequantized).astype(bool)
    mmq = (build.fillna(0) >= LLAMA_CPP_MMQ_BUILD) & (cc >= MMQ_COMPUTE_CAPABILITY) & quantised
    fa = pp["engine"].astype(str).str.contains(FLASH_ATTENTION_ON, regex=False)
    flags = pd.DataFrame(
        {"build": build, "mmq": mmq.astype(bool), "flash_attention": fa.astype(bool)}, index=pp.index
    )
    return flags[flags["mmq"] | flags["flash_attention"]]


def other_prefill_path(reference: pd.DataFrame) -> pd.Series:
    """Why each prompt :func:`other_prefill_flags` finds is left out of the grading (:func:`screened`),
    as text; ``docs/llm-accuracy.md`` sets them against the model apart."""
    out = pd.Series(dtype=object)
    for i, r in other_prefill_flags(reference).iterrows():
        how = " and ".join(
            part
            for part, on in (
                (
                    f"its {reference.at[i, 'weights']} weights in llama.cpp's int8 kernels (MMQ, from build "
                    f"{LLAMA_CPP_MMQ_BUILD} on, on compute capability {MMQ_COMPUTE_CAPABILITY:g} and later)",
                    r["mmq"],
                ),
                ("flash attention on", r["flash_attention"]),
            )
            if on
        )
        out[i] = (
            f"build {r['build']:g} ran this prompt with {how}; the model follows build 2824 (weights unpacked to "
            "FP16 for cuBLAS, attention scores through memory)"
        )
    return out


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
    return frozenset(load_reference()["gpu"]) if REFERENCE_PATH.exists() else frozenset()


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
    pred = predict_reference(ref, catalogue, efficiency).to_numpy()
    thr = ref["throughput_tokens_s"].to_numpy(float)
    rows = []
    for _, group in ref.groupby(["source", "model", "weights", "test", "tokens"], sort=True):
        idx = group.index.to_numpy()
        for x in range(len(idx)):
            for y in range(x + 1, len(idx)):
                i, j = (idx[x], idx[y]) if thr[idx[x]] >= thr[idx[y]] else (idx[y], idx[x])
                if pred[i] != pred[i] or pred[j] != pred[j]:
                    continue
                rows.append((i, j))
    if not rows:
        return pd.DataFrame()
    i, j = (np.array(v) for v in zip(*rows))
    published, predicted = thr[i] / thr[j], pred[i] / pred[j]
    decisive = published > 1 + WINNER_MARGIN
    a, b = ref.iloc[i].reset_index(drop=True), ref.iloc[j].reset_index(drop=True)
    return pd.DataFrame(
        {
            "source": a["source"],
            "model": a["model"],
            "weights": a["weights"],
            "test": a["test"],
            "tokens": a["tokens"].astype(int),
            "gpu_a": a["gpu"],
            "gpus_a": a["gpus"].astype(int),
            "gpu_b": b["gpu"],
            "gpus_b": b["gpus"].astype(int),
            "published_speedup": published,
            "predicted_speedup": predicted,
            "error_pct": 100 * (predicted / published - 1),
            "decisive": decisive,
            "winner_right": pd.Series(
                [bool(r > 1) if d else None for r, d in zip(predicted, decisive)], dtype=object
            ),
            "within_tolerance": np.abs(predicted / published - 1) <= RATIO_TOLERANCE,
            "setting": np.where(
                (a["gpus"].to_numpy() == 1) & (b["gpus"].to_numpy() == 1), SETTINGS[0], SETTINGS[1]
            ),
        }
    )


@functools.lru_cache(maxsize=1)
def _shipped_validation() -> pd.DataFrame:
    return validation_table(load_reference())


def summarize(table: pd.DataFrame, test: str | None = None) -> dict:
    """Pairs, share within ±20 %, median and largest error, winners right (of ``test``'s pairs,
    ``tg`` or ``pp``, when given)."""
    if test is not None and len(table):
        table = table[table["test"] == test]
    if table.empty:
        return {
            "pairs": 0,
            "within_tolerance": 0,
            "median_abs_error_pct": math.nan,
            "max_abs_error_pct": math.nan,
            "decisive_pairs": 0,
            "winners_right": 0,
        }
    decisive = table[table["decisive"]]
    err = table["error_pct"].abs()
    return {
        "pairs": int(len(table)),
        "within_tolerance": int(table["within_tolerance"].sum()),
        "median_abs_error_pct": float(err.median()),
        "max_abs_error_pct": float(err.max()),
        "decisive_pairs": int(len(decisive)),
        "winners_right": int(decisive["winner_right"].eq(True).sum()),  # an object column
    }


def decode_error_text(gpus: Sequence[str] = ()) -> str:
    """The decode model's measured error between single GPUs in a few words, for the sentence of a
    predicted speedup of one card over another; for each of ``gpus``, how its own published pairs
    went, or that it has none (outside what was graded)."""
    if not REFERENCE_PATH.exists():
        return "decode speed not graded"
    table = validation_table()
    one = table[(table["setting"] == SETTINGS[0]) & (table["test"] == "tg")] if len(table) else table
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
    if not REFERENCE_PATH.exists():
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
    if not REFERENCE_PATH.exists():
        return ""
    rows, _ = _other_path_rows(None)
    if rows.empty:
        return ""
    s = other_path_grading()
    return (
        f"the published prompts of {engine_versions(rows)}, set against it beside the grading: "
        f"{s['within_tolerance']} of {s['pairs']} pairs within ±{RATIO_TOLERANCE:.0%}, docs/llm-accuracy.md"
    )


def save_for_report(verdicts: list[str], weights: str, context: int) -> str | None:
    """Leave the seed pairs' LLM verdicts for the report's index (``$GPUKIT_RUN_DIR/summary-llm.json``)."""
    from .. import _atomic
    from ..results import RUN_DIR_ENV

    folder = os.environ.get(RUN_DIR_ENV)
    if not folder:
        return None
    path = Path(folder) / "summary-llm.json"
    _atomic.write_text(
        path,
        json.dumps(
            {"kind": "llm", "weights": weights, "context": context, "verdicts": list(verdicts)}, indent=1
        ),
    )
    return str(path)


def summary_by_test(table: pd.DataFrame, by_setting: bool = False, by_source: bool = False) -> pd.DataFrame:
    """:func:`summarize` per test (decode, prefill) with whether each meets the target; with
    ``by_setting``, per test and :data:`SETTINGS` (a ``setting`` column); with ``by_source``, per
    source too (a ``source`` column, and only the tests a source has pairs in)."""
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
        share = s["within_tolerance"] / s["pairs"] if s["pairs"] else math.nan
        rows.append(
            {
                **({"source": source} if by_source else {}),
                "test": label,
                **({"setting": setting} if by_setting else {}),
                **s,
                "within_share": share,
                "meets_target": bool(
                    s["pairs"] and share >= 0.9 and s["winners_right"] == s["decisive_pairs"]
                ),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- measured here


def decoder_llm(params: dict) -> LLM:
    """The architecture of the benchmark's decoder workload (:func:`gpukit.workloads.decoder_step`)."""
    return LLM(
        "bench-decoder",
        params["layers"],
        params["hidden"],
        params["heads"],
        params["kv_heads"],
        params["hidden"] // params["heads"],
        params["ffn"],
        params["vocab"],
        max_context=params["context"],
    )


def measure_decoder_memory(params: dict, precision: str = "fp32", timeout_s: float = 600) -> dict:
    """The benchmark decoder's allocator peak over a prefill and a decode step (in a fresh process,
    :func:`gpukit.runner.run`), next to :func:`inference_memory` of the same shape: weights at the
    run's precision, its KV cache, one step's activations without flash attention (it has none),
    no runtime reserve (none is allocated through TensorFlow's allocator)."""
    from .. import runner
    from ..memory import measure_env

    p = prec.normalize(precision)
    child = runner.run(
        "gpukit.llm:measure_decoder_child", {"params": params, "precision": p}, timeout_s, env=measure_env()
    )
    if not child.ok:
        return {"status": child.status, "error": child.error}
    weights = "f32" if prec.get(p).dtype == "float32" else "f16"
    # the decoder prefills every sequence's whole prompt at once: batch x prompt tokens, prompt keys
    est = inference_memory(
        decoder_llm(params),
        weights,
        params["context"],
        params["batch"],
        kv=weights,
        flash_attention=False,
        reserve_bytes=0,
        chunk_tokens=params["batch"] * params["prompt"],
        key_span=params["prompt"],
    )
    measured = child.value["measured_peak_bytes"]
    return {
        "status": "ok",
        **child.value,
        "estimated_bytes": est["total_bytes"],
        "estimate_error": est["total_bytes"] / measured - 1,
        **{f"estimated_{k}": v for k, v in est.items()},
    }


def measure_decoder_child(args: dict) -> dict:
    """Child side of :func:`measure_decoder_memory`."""
    from ..device import quiet_tensorflow
    from ..workloads import decoder_step

    tf = quiet_tensorflow()
    dev = "GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0"
    dtype = prec.get(args["precision"]).dtype
    with tf.device(dev):
        prefill, decode, _ = decoder_step(tf, args["params"], dtype)
        prefill_fn, decode_fn = tf.function(prefill), tf.function(decode)
        prefill_fn()
        decode_fn()  # compiled and warmed up; what stays allocated now is weights and cache
        tf.config.experimental.reset_memory_stats(dev)
        resident = tf.config.experimental.get_memory_info(dev)["current"]
        prefill_fn().numpy()
        decode_fn().numpy()
        info = tf.config.experimental.get_memory_info(dev)
    return {
        "device": dev,
        "precision": args["precision"],
        "measured_peak_bytes": int(info["peak"]),
        "resident_bytes": int(resident),
    }
