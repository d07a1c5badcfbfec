"""Fact-checking spec claims from articles against the sourced catalogue.

``data/claims.csv`` holds one claim per row: the article it comes from (``source``, a file name
in the project's seed articles), the ``gpu``, the catalogue ``field``, the ``relation`` and the
``claimed_value`` (or ``other_gpu`` for a comparison), and a short ``quote``. :func:`check`
computes each verdict from the catalogue — nothing is typed in:

* ``eq`` — the claimed value equals the field (numbers within 1 %, for rounded figures such as
  "1 TB/s"; text case-insensitively);
* ``max`` — "up to": the claimed value is the largest among the GPU's variants;
* ``gt`` / ``lt`` — the GPU's field is greater (less) than ``other_gpu``'s, or than
  ``claimed_value`` when there is no other GPU;
* ``approx`` — "similar": the GPU's figure is within ±20 % (:data:`APPROX_TOLERANCE`) of
  ``other_gpu``'s, or of ``claimed_value``.

Text fields (architecture, memory type, form factor) take ``eq`` only. ``launch`` is the
catalogue's ``YYYY-MM``; a claim gives a year (``2017``: any month of that year matches, and
``gt``/``lt`` compare years) or a month (``2017-06``); between two GPUs the months are compared.

A name that fits several variants (``V100``: PCIe 16GB, SXM2 16GB, SXM2 32GB) is checked on
every one: ``confirmed`` when the claim holds for all of them, ``wrong`` when for none, and
``unclear`` when for some only (the note says which). The note of a wrong figure says what it
probably is when the catalogue can tell: a 2:4-sparse tensor figure passed off as dense, or
another GPU's value of the same field.
"""

from __future__ import annotations

import itertools
import os
import re
from datetime import date
from pathlib import Path

import pandas as pd

from .. import specs
from .._csv import Field, parse_rows, to_frame
from ..errors import DataError, Problem, UnknownGPUError
from ..resources import DATA_DIR
from ..units import missing

CLAIMS_PATH = DATA_DIR / "claims.csv"
RELATIONS = ("eq", "max", "gt", "lt", "approx")
VERDICTS = ("confirmed", "wrong", "unclear")
#: Fields a claim can be about: every catalogue figure and a few descriptive ones.
FIELDS = (
    "architecture",
    "memory_type",
    "form_factor",
    "cuda_cores",
    "tensor_cores",
    "boost_clock_mhz",
    "memory_gb",
    "memory_bus_bits",
    "memory_bandwidth_gbs",
    "fp64_tflops",
    "fp32_tflops",
    "tf32_tensor_tflops",
    "fp16_tensor_tflops",
    "bf16_tensor_tflops",
    "int8_tensor_tops",
    "tdp_w",
    "nvlink_gbs",
    "pcie_gen",
    "launch",
)
_TEXT_FIELDS = {"architecture", "memory_type", "form_factor"}
_DATE_FIELDS = {"launch"}
_TENSOR_FIELDS = {"tf32_tensor_tflops", "fp16_tensor_tflops", "bf16_tensor_tflops", "int8_tensor_tops"}
RELATIVE_TOLERANCE = 0.01
#: How close two figures must be for ``approx`` ("similar", "comparable"): ±20 % of the other one.
APPROX_TOLERANCE = 0.20

SCHEMA: tuple[Field, ...] = (
    Field("source", "text", help="the article's file name"),
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("field", "choice", choices=FIELDS),
    Field("relation", "choice", choices=RELATIONS),
    Field("claimed_value", "text", required=False, help="the figure the article gives"),
    Field("other_gpu", "text", required=False, help="for gt/lt/approx: the GPU compared with"),
    Field("quote", "text", help="the claim as the article words it"),
)
COLUMNS = ("source", "gpu", "field", "claimed_value", "catalogue_value", "verdict", "note", "quote")


def load_claims(
    path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None, today: date | None = None
) -> pd.DataFrame:
    """The claims file, validated: fields exist, GPUs resolve, each relation has what it needs."""
    p = Path(path) if path else CLAIMS_PATH
    cat = specs.load_catalogue() if catalogue is None else catalogue
    parsed, problems = parse_rows(p, SCHEMA, today or date.today(), "claim")
    records = []
    for line, row in parsed:
        found = (
            _gpu_problems(p, line, row, cat)
            + _relation_problems(p, line, row)
            + _value_problems(p, line, row)
        )
        problems += found
        if not found:
            records.append(row)
    if problems:
        raise DataError(problems)
    return to_frame(records, SCHEMA)


def _gpu_problems(p: Path, line: int, row: dict, cat: pd.DataFrame) -> list[Problem]:
    """A claim's GPU and the GPU it is compared with, each one the catalogue knows."""
    out = []
    for col in ("gpu", "other_gpu"):
        if row[col]:
            try:
                specs.resolve(row[col], cat)
            except UnknownGPUError as exc:
                out.append(Problem(p, line, col, str(exc), row["gpu"]))
    return out


def _relation_problems(p: Path, line: int, row: dict) -> list[Problem]:
    """What a claim's relation needs: a value for ``eq`` and ``max``, exactly one of another GPU
    and a value for ``gt``, ``lt`` and ``approx``."""
    out = []
    value = row["claimed_value"]
    if row["relation"] in ("eq", "max") and not value:
        out.append(
            Problem(
                p,
                line,
                "claimed_value",
                f"relation {row['relation']} needs the claimed value; add it",
                row["gpu"],
            )
        )
    if row["relation"] in ("gt", "lt", "approx") and bool(value) == bool(row["other_gpu"]):
        out.append(
            Problem(
                p,
                line,
                "other_gpu",
                f"relation {row['relation']} compares with either "
                "another GPU or a value; give exactly one of other_gpu and claimed_value",
                row["gpu"],
            )
        )
    return out


def _value_problems(p: Path, line: int, row: dict) -> list[Problem]:
    """A relation the field takes (text fields ``eq`` only, dates no ``max`` or ``approx``), and
    a claimed value of the field's kind: a year or month for a date, a number for a figure."""
    value = row["claimed_value"]
    allowed = (
        ("eq",)
        if row["field"] in _TEXT_FIELDS
        else ("eq", "gt", "lt")
        if row["field"] in _DATE_FIELDS
        else RELATIONS
    )
    if row["relation"] not in allowed:
        return [
            Problem(
                p,
                line,
                "relation",
                f"{row['field']} takes {', '.join(allowed)} only, not {row['relation']}",
                row["gpu"],
            )
        ]
    if value and row["field"] in _DATE_FIELDS:
        if not re.fullmatch(r"\d{4}(-(0[1-9]|1[0-2]))?", value):
            return [
                Problem(
                    p,
                    line,
                    "claimed_value",
                    f"{value!r} is not a year or month; write 2017 or 2017-06",
                    row["gpu"],
                )
            ]
    elif value and row["field"] not in _TEXT_FIELDS:
        try:
            float(value)
        except ValueError:
            return [
                Problem(
                    p,
                    line,
                    "claimed_value",
                    f"{value!r} is not a number; {row['field']} is numeric (write 1000, not 1 TB/s)",
                    row["gpu"],
                )
            ]
    return []


def _values(name: str, field: str, cat: pd.DataFrame) -> dict[str, object]:
    """{variant: value of ``field``} for every variant the name fits (missing values left out)."""
    out = {}
    for gpu in specs.resolve(name, cat).matches:
        v = specs.row(cat, gpu)[field]
        if missing(v):
            continue
        out[gpu] = v
    return out


def _same(claimed, actual, field: str) -> bool:
    if field in _DATE_FIELDS:  # "2017" matches any month of 2017; "2017-06" only June
        return str(actual).startswith(str(claimed).strip())
    if field in _TEXT_FIELDS:
        return str(claimed).strip().casefold() == str(actual).strip().casefold()
    c, a = float(claimed), float(actual)
    return abs(c - a) <= RELATIVE_TOLERANCE * max(abs(a), 1e-9) or (a == 0 and c == 0)


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _show(values: dict[str, object]) -> str:
    """'14 (V100 PCIe 16GB); 15.7 (V100 SXM2 16GB, V100 SXM2 32GB)', or just the value."""
    by_value: dict[str, list[str]] = {}
    for gpu, v in values.items():
        by_value.setdefault(_fmt(v), []).append(gpu)
    if len(by_value) == 1:
        return next(iter(by_value))
    return "; ".join(f"{v} ({', '.join(g)})" for v, g in by_value.items())


def _explain_wrong(claimed, values: dict[str, object], field: str, cat: pd.DataFrame) -> str:
    c = claimed if field in _TEXT_FIELDS | _DATE_FIELDS else float(claimed)
    if field in _TENSOR_FIELDS and all(_same(c, 2 * float(v), field) for v in values.values()):
        return f"that is the 2:4-sparse figure; the dense figure is {_show(values)}"
    # a figure the catalogue leaves empty (NaN or pandas' NA) matches no claim
    others = [
        g for g, v in zip(cat["gpu"], cat[field]) if g not in values and not pd.isna(v) and _same(c, v, field)
    ]
    if others:
        return f"that is the {', '.join(others)}'s {field}; the datasheet says {_show(values)}"
    return f"the datasheet says {_show(values)}"


def _check_one(row: dict, cat: pd.DataFrame) -> dict:
    field, rel, claimed = row["field"], row["relation"], row["claimed_value"]
    values = _values(row["gpu"], field, cat)
    out = {k: row[k] for k in ("source", "gpu", "field", "quote")}
    sign = {"gt": "> ", "lt": "< ", "max": "up to ", "approx": "≈ "}.get(rel, "")
    out["claimed_value"] = f"{sign}{claimed if claimed else row['other_gpu']}"
    if not values:
        return {
            **out,
            "catalogue_value": "",
            "verdict": "unclear",
            "note": f"the catalogue has no {field} for {row['gpu']}",
        }
    out["catalogue_value"] = _show(values)
    if rel == "eq":
        hold = [g for g, v in values.items() if _same(claimed, v, field)]
        if len(hold) == len(values):
            note = "" if all(_fmt(v) == str(claimed) for v in values.values()) else "rounded"
            return {**out, "verdict": "confirmed", "note": note}
        if hold:
            return {**out, "verdict": "unclear", "note": f"true for {', '.join(hold)} only"}
        return {**out, "verdict": "wrong", "note": _explain_wrong(claimed, values, field, cat)}
    if rel == "max":
        top = max(float(v) for v in values.values())
        ok = _same(claimed, top, field)
        return {
            **out,
            "verdict": "confirmed" if ok else "wrong",
            "note": "the largest variant" if ok else f"the largest variant has {top:g}",
        }
    if row["other_gpu"]:
        right = _values(row["other_gpu"], field, cat)
        out["catalogue_value"] += f" vs {_show(right)} ({row['other_gpu']})"
    else:
        right = {str(claimed): claimed}
    if field in _DATE_FIELDS:  # YYYY-MM strings sort by date; a year claim compares years
        width = 4 if not row["other_gpu"] and len(str(claimed)) == 4 else 7
        key = lambda v: str(v)[:width]  # noqa: E731
    else:
        key = float
    combos = list(itertools.product(values.items(), right.items()))
    holds = [(a, b) for (a, va), (b, vb) in combos if _holds(rel, key(va), key(vb))]
    if len(holds) == len(combos):
        return {**out, "verdict": "confirmed", "note": ""}
    if not holds:
        if rel == "approx":
            ratios = [float(va) / float(vb) for (_, va), (_, vb) in combos if float(vb)]
            lo, hi = (min(ratios), max(ratios)) if ratios else (0.0, 0.0)
            span = f"{lo:.2g}" if f"{lo:.2g}" == f"{hi:.2g}" else f"{lo:.2g} to {hi:.2g}"
            return {
                **out,
                "verdict": "wrong",
                "note": f"not within ±{APPROX_TOLERANCE:.0%}: it is {span} times the other figure",
            }
        return {**out, "verdict": "wrong", "note": "the reverse holds" if row["other_gpu"] else ""}
    held = sorted({a for a, _ in holds})
    return {**out, "verdict": "unclear", "note": f"true for {', '.join(held)} only"}


def _holds(rel: str, a, b) -> bool:
    if rel == "gt":
        return a > b
    if rel == "lt":
        return a < b
    return abs(a - b) <= APPROX_TOLERANCE * abs(b)  # approx


def check(claims: pd.DataFrame | None = None, catalogue: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every claim with its catalogue value, computed verdict and a note (see the module doc)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    table = load_claims(catalogue=cat) if claims is None else claims
    records = [
        {k: (None if missing(v) else v) for k, v in r.items()} for r in table.to_dict(orient="records")
    ]
    rows = [_check_one(r, cat) for r in records]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def summary(checked: pd.DataFrame) -> pd.DataFrame:
    """Verdict counts per article."""
    counts = checked.groupby(["source", "verdict"]).size().unstack(fill_value=0)
    for v in VERDICTS:
        if v not in counts:
            counts[v] = 0
    return counts[list(VERDICTS)].reset_index()
