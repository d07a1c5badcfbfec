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

MODELS_PATH = DATA_DIR / "llm_models.csv"
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
KV_CACHE_BYTES = {"f32": 4.0, "f16": 2.0, "q8_0": 34 / 32, "fp8": 1.0}


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
                "kv_cache_mib_per_1k_tokens": m.kv_bytes_per_token() * 1024 / MIB,
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
