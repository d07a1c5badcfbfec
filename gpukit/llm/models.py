"""The open decoder architectures (:class:`LLM`) and the weights formats they are served in: the
shipped tables (``data/llm_models.csv``, ``data/llm_weights.csv``), validated with their sources, and
a user's own architecture file."""

from __future__ import annotations

import difflib
import functools
import json
import os
from dataclasses import asdict, dataclass, fields
from datetime import date
from pathlib import Path

import pandas as pd
import yaml

from .._csv import Field, parse_rows, to_frame
from ..errors import DataError, ParameterError, Problem
from ..resources import DATA_DIR
from ..units import MIB
from .architecture import KV_CACHE_BYTES, LLM, LOCAL_KINDS, PARTS, _kv_bytes  # noqa: F401
from .hf_config import from_config, is_hf_config

MODELS_PATH = DATA_DIR / "llm_models.csv"
#: The model the LLM answers take when none is named: a current dense model that fits a 16 GB card
#: quantised and serves on one data-centre GPU in BF16.
DEFAULT_MODEL = "qwen3-8b"
WEIGHTS_PATH = DATA_DIR / "llm_weights.csv"

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
    Field(
        "published_active_params_b",
        "float",
        required=False,
        low=0.001,
        high=100_000,
        help="a mixture's published activated parameters, in billions",
    ),
    Field("attention", "choice", required=False, choices=("gqa", "mla")),
    Field("q_lora_rank", "int", required=False, low=0, high=1_000_000),
    Field("kv_lora_rank", "int", required=False, low=0, high=1_000_000),
    Field("rope_dim", "int", required=False, low=0, high=100_000),
    Field("v_head_dim", "int", required=False, low=0, high=100_000),
    Field("local_kind", "choice", required=False, choices=("sliding", "chunked")),
    Field("local_window", "int", required=False, low=1, high=100_000_000),
    Field("local_layers", "int", required=False, low=1, high=1000),
    Field("dense_layers", "int", required=False, low=0, high=1000),
    Field("dense_ffn", "int", required=False, low=0, high=10_000_000),
    Field("shared_experts", "int", required=False, low=0, high=10_000),
    Field("native_weights", "text", required=False, help="the checkpoint's format: bf16, fp8 or mxfp4"),
    Field(
        "unquantized",
        "text",
        required=False,
        help="parts the checkpoint keeps at 16 bits, space-separated: " + " ".join(PARTS),
    ),
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


def _model_from_record(r: dict) -> LLM:
    def count(field: str) -> int:
        return r.get(field) or 0

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
        published_active_params_b=r.get("published_active_params_b"),
        config_url=r["config_url"],
        source_read=r["source_read"],
        attention=r.get("attention") or "gqa",
        q_lora_rank=count("q_lora_rank"),
        kv_lora_rank=count("kv_lora_rank"),
        rope_dim=count("rope_dim"),
        v_head_dim=count("v_head_dim"),
        local_kind=r.get("local_kind") or "",
        local_window=count("local_window"),
        local_layers=count("local_layers"),
        dense_layers=count("dense_layers"),
        dense_ffn=count("dense_ffn"),
        shared_experts=count("shared_experts"),
        native_weights=(r.get("native_weights") or "bf16").strip().lower(),
        unquantized=tuple((r.get("unquantized") or "").split()),
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


def reference_problems(path: Path, parsed: list[tuple[int, dict]]) -> list[Problem]:
    """A problem for each row of a published-runs file whose ``model`` or ``weights`` the kit does not
    ship (``data/llm_models.csv``, ``data/llm_weights.csv``), named by file, line and column."""
    models, formats = load_models(), load_weights()
    problems = []
    for line, r in parsed:
        if r["model"].lower() not in models:
            problems.append(
                Problem(path, line, "model", f"{r['model']!r} is not in data/llm_models.csv; add it there")
            )
        if r["weights"].lower() not in formats:
            problems.append(
                Problem(path, line, "weights", f"{r['weights']!r} is not in data/llm_weights.csv")
            )
    return problems


def load_models(path: str | os.PathLike | None = None, today: date | None = None) -> dict[str, LLM]:
    """The shipped architectures (or ``path``), validated: every row sourced and dated."""
    if path is None and today is None:
        return dict(_shipped("models"))
    return _load_keyed(
        Path(path) if path else MODELS_PATH,
        MODEL_SCHEMA,
        "name",
        "model",
        lambda _, r: _checked_native(_model_from_record(r)),
        today,
    )


def _checked_native(m: LLM) -> LLM:
    """``m``, refused where its checkpoint's own format is not one of ``data/llm_weights.csv``."""
    formats = load_weights()
    if m.native_weights not in formats:
        raise ParameterError(f"native_weights {m.native_weights!r}: use one of {', '.join(formats)}")
    return m


@functools.lru_cache(maxsize=2)
def _shipped(table: str) -> dict:
    """The shipped models or weights formats, read once per process."""
    return (
        load_models(MODELS_PATH, date.today())
        if table == "models"
        else load_weights(WEIGHTS_PATH, date.today())
    )


def layout(m: LLM) -> str:
    """The attention layout in a few words: "GQA 8 KV heads", "MLA 512+64", "+ 18 sliding 128"."""
    words = (
        f"MLA {m.kv_lora_rank}+{m.rope_dim}"
        if m.attention == "mla"
        else ("MHA" if m.kv_heads == m.heads else f"GQA {m.kv_heads} KV heads")
    )
    if m.local_layers:
        words += f", {m.local_layers} of {m.layers} layers {m.local_kind} {m.local_window}"
    return words


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
                "attention": layout(m),
                "params_b": m.params() / 1e9,
                "active_params_b": m.active_params() / 1e9,
                "published_params_b": m.published_params_b,
                "published_active_params_b": m.published_active_params_b,
                "native_weights": m.native_weights,
                "max_context": m.max_context,
                "kv_cache_mib_per_1k_tokens": m.kv_bytes_per_token() * 1024 / MIB,
                "config_url": m.config_url,
            }
        )
    return pd.DataFrame(rows)


#: The fields a user's architecture file must give (``name`` defaults to the file's, ``head_dim``
#: to hidden / heads, the rest as :class:`LLM` has them).
FILE_FIELDS = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab")


def load_model_file(path: str | os.PathLike) -> LLM:
    """A user's architecture: a Hugging Face ``config.json`` as the Hub ships it
    (:mod:`gpukit.llm.hf_config`), or a JSON or YAML file of :class:`LLM`'s fields (``name``, ``layers``,
    ``hidden``, ``heads``, ``kv_heads``, ``ffn``, ``vocab``; ``head_dim`` defaults to hidden/heads;
    ``experts``, ``experts_per_token``, ``tied_embeddings``, ``max_context`` optional)."""
    p = Path(path)
    if not p.is_file():
        raise ParameterError(f"{p}: no such file; give a JSON or YAML file of the model's shape")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix.lower() in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # noqa: BLE001 -- any parse error becomes one line
        raise ParameterError(
            f"{p}: not valid {p.suffix.lstrip('.').upper() or 'JSON'} ({exc.__class__.__name__}: "
            f"{str(exc).splitlines()[0]})"
        ) from None
    if is_hf_config(data):
        name = p.parent.name if p.stem == "config" and p.parent.name else p.stem
        return from_config(data, name.lower(), str(p))
    if not isinstance(data, dict):
        raise ParameterError(f"{p}: expected a mapping of fields such as layers: 32, or a config.json")
    known = {f.name for f in fields(LLM)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ParameterError(f"{p}: unknown field(s) {', '.join(unknown)}; use {', '.join(sorted(known))}")
    missing = [f for f in FILE_FIELDS if f not in data]
    if missing:
        raise ParameterError(f"{p}: missing field(s) {', '.join(missing)}")
    data = dict(data)
    data.setdefault("name", p.stem)
    if isinstance(data.get("unquantized"), list):
        data["unquantized"] = tuple(data["unquantized"])
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


def _check_positive(name: str, value) -> int:
    """``value``, refused unless a whole number of at least 1 (a count or a length)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ParameterError(f"{name} {value!r} must be a whole number of at least 1")
    return value
