"""Published measurements of one rate of a GPU against its datasheet figure: what
:mod:`gpukit.specs.matmul_rates` (tensor-core matrix multiplies) and :mod:`gpukit.specs.bandwidth_rates`
(device-memory streaming) share. A table holds one row per published run with its source; a
GPU's rate is the median of its runs, and its share is that over the datasheet figure; a GPU
no run names is taken at the median share of those measured."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from .. import specs
from .._csv import Field, parse_rows, to_frame
from ..errors import DataError, Problem


def run_schema(*measured: Field) -> tuple[Field, ...]:
    """The columns of a table of published runs: the source and the GPU, then ``measured`` (what the
    run measured and how), then where it was published and when."""
    return (
        Field("source", "text", help="a short id of the harness and where it was published"),
        Field("gpu", "text", help="a GPU name the catalogue knows"),
        Field("source_gpu_name", "text", help="the GPU as the source names it"),
        *measured,
        Field("software", "text", required=False),
        Field("source_url", "url"),
        Field(
            "measured", "date", required=False, help="when the run was made, YYYY-MM-DD, if the source says"
        ),
        Field("retrieved", "date", help="when gpukit read the source, YYYY-MM-DD"),
        Field("note", "text", required=False),
    )


def load_runs(
    path: str | os.PathLike,
    schema: tuple[Field, ...],
    value: str,
    catalogue: pd.DataFrame,
    datasheet: Callable[[pd.Series, dict], tuple[str, float | None, str, str]],
    share_range: tuple[float, float],
    what_is_wrong: str,
    today: date | None = None,
    key: tuple[str, ...] = ("source", "gpu", "source_url"),
) -> pd.DataFrame:
    """The runs of the CSV at ``path``, validated: each cell against ``schema``, each row naming a
    catalogue GPU (once per ``key``) whose datasheet figure exists and whose
    share of it, ``value`` over the figure, lies within ``share_range``. ``datasheet(gpu, run)``
    gives the catalogue column, its figure (None where the GPU has none) and, for that case, the
    file's column to blame and the fix; ``what_is_wrong`` says what to check when a share is out of
    range. Problems name the file, line, column and the fix, and are raised together."""
    p = Path(path)
    parsed, problems = parse_rows(p, schema, today or date.today(), "measurement")
    records = specs.resolve_rows(
        p,
        parsed,
        catalogue,
        lambda r: tuple(r[k] for k in key),
        problems,
        "same " + ", ".join(k.replace("source_url", "address") for k in key),
    )
    lines = {id(r): line for line, r in parsed}
    kept = []
    for r in records:
        gpu = specs.row(catalogue, r["gpu"])
        column, figure, blame, missing = datasheet(gpu, r)
        line = lines.get(id(r))
        if figure is None or pd.isna(figure) or not float(figure) > 0:
            problems.append(Problem(p, line, blame, missing, r["gpu"]))
            continue
        share = r[value] / float(figure)
        if not share_range[0] <= share <= share_range[1]:
            problems.append(
                Problem(
                    p,
                    line,
                    value,
                    f"{r[value]:g} is {share:.0%} of {r['gpu']}'s datasheet "
                    f"{float(figure):g} ({column}); expected {share_range[0]:.0%} to "
                    f"{share_range[1]:.0%} ({what_is_wrong})",
                    r["gpu"],
                )
            )
            continue
        kept.append(r)
    if problems:
        raise DataError(problems)
    return to_frame(kept, schema)


def per_gpu(runs: pd.DataFrame, value: str, datasheet: pd.Series) -> pd.DataFrame:
    """One row per measured GPU: its runs and sources, the median, lowest and highest ``value``,
    the datasheet figure (``datasheet``, indexed by GPU) and the share, median over datasheet."""
    out = (
        runs.groupby("gpu", sort=True)
        .agg(
            runs=(value, "size"),
            sources=("source", "nunique"),
            rate=(value, "median"),
            low=(value, "min"),
            high=(value, "max"),
        )
        .reset_index()
    )
    out["datasheet"] = out["gpu"].map(datasheet).astype(float)
    out["share"] = out["rate"] / out["datasheet"]
    return out


def typical_share(table: pd.DataFrame) -> float:
    """The median share over the measured GPUs of a :func:`per_gpu` table: what an unmeasured GPU
    is taken at."""
    return float(np.median(table["share"]))


def shares(table: pd.DataFrame) -> tuple[dict[str, float], float]:
    """(each measured GPU's share by name, the median share) of a :func:`per_gpu` table: what
    :func:`share_of` looks up."""
    return dict(zip(table["gpu"], table["share"])), typical_share(table)


def share_of(shares: dict[str, float], typical: float, gpu) -> tuple[float, bool]:
    """(share of ``gpu``'s datasheet figure it reaches, whether a run measured it): the share
    :func:`per_gpu` found for the GPU's name, or ``typical`` where no run names it. The share
    goes with the name, so a row changed by hand (a what-if) keeps its GPU's share."""
    share = shares.get(str(gpu["gpu"]))
    return (typical, False) if share is None else (float(share), True)
