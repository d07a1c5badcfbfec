"""The bottom line of a comparison: a few rows a buyer can act on, each with the measured error of
what it rests on. What | GPU A | GPU B | which wins, by how much | how far to trust it.

The rows, in order: work per dollar buying and renting (per workload), speed (per workload, at
the comparison's batch), the largest batch each model trains at, and the purchase price. Where a
prediction's own published check (a source that measured this very pair) misses by more than the
tolerance its family is graded at, the row says so beside the family's usual error.

:func:`save_for_report` leaves the bottom line, its figure and the verdicts for the report's index.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pandas as pd

from .. import _atomic, perfmodel
from ..bench.results import RUN_DIR_ENV
from ..units import figure, missing
from .comparison import Comparison
from .llms import serving_error
from .numbers import num
from .tables import _one_precision_each
from .verdicts import SAME_SPEED

#: The columns a page shows. Each row also carries ``advantage``: A's figure over B's, turned so
#: that above 1 means A is better, for a figure's bar.
COLUMNS = ("what", "a", "b", "wins", "error")
#: What a page heads the last two columns with (the first is blank, the next two name the GPUs).
HEADERS = ("which wins, by how much", "measured error")


def _compared(names: tuple[str, str], values: tuple[float | None, float | None], higher: bool = True) -> dict:
    """Which of two figures wins and by how much (``wins``: "A40, 1.25×", "about even (A40 by
    1.05×)", or "" without both) and A's advantage as a number (``advantage``: above 1 where A is
    better, whether better is higher or lower; None without both)."""
    x, y = (num(v) for v in values)
    if x is None or y is None or x <= 0 or y <= 0:
        return {"wins": "", "advantage": None}
    advantage = x / y if higher else y / x
    k = max(advantage, 1 / advantage)
    winner = names[0] if advantage >= 1 else names[1]
    wins = f"about even ({winner} by {k:.2f}×)" if k < SAME_SPEED else f"{winner}, {k:.2f}×"
    return {"wins": wins, "advantage": advantage}


def _model_error(workload: str, basis: str, gpus: tuple[str, str]) -> str:
    """How far to trust a throughput, in a few words: measured, or the model's median error on the
    published speedups of the workload's family, and the wider band of a GPU no published run
    graded, or one that erred more when held out of the fit (:func:`gpukit.perfmodel.error_bands`)."""
    if basis == "measured":
        return "measured"
    family = perfmodel.family(workload)
    acc = perfmodel.family_accuracy(family)
    if not acc.get("pairs"):
        return "predicted, not graded"
    text = f"predicted: median error {acc['median_abs_error_pct']:.1f}% on {acc['pairs']} published {family} speedups"
    bands = perfmodel.error_bands(workload, list(gpus))
    median = float(acc["median_abs_error_pct"])
    wider = [f"{g} {bands[g].text}" for g in gpus if (bands[g].error_pct or 0) > median]
    return "; ".join([text, *wider])


def _published_check(row: pd.Series) -> str:
    """What sources that measured this very pair published, and how far the model's prediction
    for their runs lands from it; a miss beyond the family's tolerance is said as one."""
    tolerance = perfmodel.RATIO_TOLERANCE
    parts = []
    for found in row.get("published_rows") or []:
        miss = found["predicted"] / found["published"] - 1
        said = f"{found['source']} published {found['published']:.2f}×, the model gives {found['predicted']:.2f}×"
        if abs(miss) > tolerance:
            said += f": {abs(miss):.0%} off, more than the ±{tolerance:.0%} it is graded at"
        parts.append(said)
    return "; ".join(parts)


def _value_rows(c: Comparison) -> list[dict]:
    rows = []
    for _, r in c.value.iterrows():
        unit, items = r["unit"], r["unit"].split("/")[0]
        error = _model_error(r["workload"], r["basis"], (c.a, c.b))
        rows.append(
            {
                "what": f"{r['workload']} {r['precision']}: {unit} per $1,000, buying",
                "a": _amount(r["per_1k_usd_a"]),
                "b": _amount(r["per_1k_usd_b"]),
                **_compared((c.a, c.b), (r["per_1k_usd_a"], r["per_1k_usd_b"])),
                "error": f"{error}; {r['price_a'] or 'no price'} and {r['price_b'] or 'no price'}",
            }
        )
        rows.append(
            {
                "what": f"{r['workload']} {r['precision']}: dollars per million {items}, renting",
                "a": _amount(r["usd_per_million_a"], "$"),
                "b": _amount(r["usd_per_million_b"], "$"),
                **_compared((c.a, c.b), (r["usd_per_million_a"], r["usd_per_million_b"]), higher=False),
                "error": f"{error}; {r['cloud_a'] or 'no rate'} and {r['cloud_b'] or 'no rate'}",
            }
        )
    return rows


def _speed_rows(c: Comparison) -> list[dict]:
    rows = []
    for _, r in _one_precision_each(c.throughput).iterrows():
        basis = "measured" if {r["basis_a"], r["basis_b"]} == {"measured"} else "predicted"
        error = _model_error(r["workload"], basis, (c.a, c.b))
        check = _published_check(r)
        rows.append(
            {
                "what": f"{r['workload']} training {r['precision']}: {r['unit']} at batch {r['batch_size']}",
                "a": _amount(r["throughput_a"]),
                "b": _amount(r["throughput_b"]),
                **_compared((c.a, c.b), (r["throughput_a"], r["throughput_b"])),
                "error": f"{error}; {check}" if check else error,
            }
        )
    return rows


def _fit_rows(c: Comparison) -> list[dict]:
    rows = []
    if c.fit.empty:
        return rows
    for model, g in c.fit.groupby("model", sort=False):
        ga, gb = g[g["gpu"] == c.a].iloc[0], g[g["gpu"] == c.b].iloc[0]
        rows.append(
            {
                "what": f"largest {model} training batch ({ga['precision']}, {ga['input']})",
                "a": _batch(ga),
                "b": _batch(gb),
                **_compared((c.a, c.b), (ga["largest_batch"], gb["largest_batch"])),
                "error": f"estimated; {ga['estimate_error']}" if ga.get("estimate_error") else "estimated",
            }
        )
    return rows


def _serving_rows(c: Comparison) -> list[dict]:
    """Each LLM served on both: output tokens/s on the server, and a million output tokens' rent."""
    rows = []
    if c.serving.empty:
        return rows
    for model, g in c.serving.groupby("model", sort=False):
        ra, rb = g[g["gpu"] == c.a].iloc[0], g[g["gpu"] == c.b].iloc[0]
        engine = str(ra.get("engine_name") if not missing(ra.get("engine_name")) else rb.get("engine_name"))
        where = f"{model} {ra['weights']}, {int(ra['gpus'])} GPUs"
        error = serving_error(engine)
        for column, what, prefix, higher, basis in (
            ("serving_tokens_per_s", "output tokens/s served", "", True, error),
            (
                "usd_per_million_tokens",
                "dollars per million output tokens, renting",
                "$",
                False,
                f"{error}; the median fresh on-demand rate of each",
            ),
        ):
            x, y = ra.get(column), rb.get(column)
            rows.append(
                {
                    "what": f"{where}: {what}",
                    "a": _amount(x, prefix),
                    "b": _amount(y, prefix),
                    **_compared((c.a, c.b), (x, y), higher=higher),
                    "error": basis,
                }
            )
    return rows


def _price_row(c: Comparison) -> list[dict]:
    first = c.value.iloc[0] if len(c.value) else None
    if first is None:
        return []
    return [
        {
            "what": "purchase price, dollars",
            "a": _amount(first["price_usd_a"], "$"),
            "b": _amount(first["price_usd_b"], "$"),
            **_compared((c.a, c.b), (first["price_usd_a"], first["price_usd_b"]), higher=False),
            "error": f"{first['price_a'] or 'no price'} and {first['price_b'] or 'no price'}",
        }
    ]


def _amount(value, prefix: str = "") -> str:
    v = num(value)
    return "—" if v is None else f"{prefix}{figure(v)}"


def _batch(row: pd.Series) -> str:
    low, high = num(row.get("largest_batch_low")), num(row.get("largest_batch_high"))
    text = str(int(row["largest_batch"]))
    return f"{text} ({int(low)}–{int(high)})" if low is not None and high is not None else text


def bottom_line(c: Comparison) -> pd.DataFrame:
    """The comparison's answers as rows of :data:`COLUMNS` (``a`` and ``b`` are the two cards'
    figures as text; ``wins`` names the winner and by how much) and ``advantage``."""
    rows = _value_rows(c) + _speed_rows(c) + _fit_rows(c) + _serving_rows(c) + _price_row(c)
    return pd.DataFrame(rows, columns=[*COLUMNS, "advantage"])


def headers(c: Comparison) -> list[str]:
    """The headers a page shows over :data:`COLUMNS`: blank, the two GPUs, then :data:`HEADERS`."""
    return ["", c.a, c.b, *HEADERS]


def bottom_line_table(c: Comparison, line: pd.DataFrame | None = None) -> pd.DataFrame:
    """The bottom line (``line``, else :func:`bottom_line` of ``c``) under the headers a page
    shows (:func:`headers`), for :func:`gpukit.present.tables.show`."""
    frame = (bottom_line(c) if line is None else line)[list(COLUMNS)]
    return frame.set_axis(headers(c), axis="columns")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def save_for_report(result: Comparison, figure=None, line: pd.DataFrame | None = None) -> str | None:
    """Leave the comparison for the report's index: its bottom line (:data:`COLUMNS`), verdicts
    and, where given, ``figure`` (a Matplotlib figure, :func:`gpukit.plots.advantage_figure`) as a
    PNG beside it, in ``$GPUKIT_RUN_DIR/summary-compare-<a>-vs-<b>.json`` and ``.png``; ``line``:
    :func:`bottom_line` of ``result``, where the caller has it already. Outside a report run,
    nothing (``None``)."""
    folder = os.environ.get(RUN_DIR_ENV)
    if not folder:
        return None
    stem = f"summary-compare-{_slug(result.a)}-vs-{_slug(result.b)}"
    image = None
    if figure is not None:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
        image = _atomic.write_bytes(Path(folder) / f"{stem}.png", buffer.getvalue()).name
    line = (bottom_line(result) if line is None else line)[list(COLUMNS)]
    doc = {
        "kind": "compare",
        "a": result.a,
        "b": result.b,
        "efficiency_source": result.efficiency_source,
        "headers": headers(result),
        "bottom_line": json.loads(line.to_json(orient="records")),
        "figure": image,
        "verdicts": result.verdicts,
    }
    path = _atomic.write_text(Path(folder) / f"{stem}.json", json.dumps(doc, indent=1))
    return str(path)
