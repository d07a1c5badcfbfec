"""The cost rows of a comparison: dollars per peak TFLOP, purchase price, TCO, cloud price, and
per unit of the first workload's work, each row noting whose price it is and when it was read."""

from __future__ import annotations

import math

import pandas as pd

from .. import specs
from ..prices import book as prices
from ..prices import cost
from .numbers import num, ratio


def _both_notes(a: str, note_a: str, b: str, note_b: str) -> str:
    """Two cards' notes on one row, each named; empty where neither has one."""
    return "; ".join(f"{g}: {n}" for g, n in ((a, note_a), (b, note_b)) if n)


def _dated(row: pd.Series, what: str, note: str, label: str) -> str:
    """``label``, when a cost-table row's ``what`` price (``price`` or ``cloud``) was read and
    whether it is stale; the row's ``note`` where it has no such price (it says why)."""
    if num(row["price_usd" if what == "price" else "cloud_usd_per_hour"]) is None:
        return row[note]
    return f"{label}, {row[f'{what}_date']}" + (", stale" if row[f"{what}_stale"] else "")


def _cloud_note(row: pd.Series) -> str:
    """Whose cloud price a row is and when it was read: rates differ far more between kinds of
    provider (a marketplace, a hyperscaler) than between cards."""
    offer = " ".join(str(x) for x in (row["cloud_provider"], row["cloud_offering"]) if x)
    return _dated(row, "cloud", "cloud_note", offer)


def common_price_kind(a: specs.GPU, b: specs.GPU, book: prices.Prices, price_kind: str) -> str:
    """``price_kind``, or for ``any`` a kind of purchase price both cards have: a comparison
    compares like with like (a used price against a new one compares nothing)."""
    if price_kind == "any":
        return cost.common_kind(book, [a.name, b.name]) or price_kind
    return price_kind


def price_table(
    a: specs.GPU,
    b: specs.GPU,
    book: prices.Prices,
    price_kind: str,
    electricity_usd_per_kwh: float,
    years: float,
    utilization: float,
    cat: pd.DataFrame,
) -> pd.DataFrame:
    """:func:`gpukit.prices.cost.cost_table` of the two cards at fp32 and fp16, at ``price_kind``."""
    return cost.cost_table(
        book, [a, b], ["fp32", "fp16"], price_kind, electricity_usd_per_kwh, years, utilization, catalogue=cat
    )


def cost_rows(
    a: specs.GPU,
    b: specs.GPU,
    book: prices.Prices,
    throughput: pd.DataFrame,
    price_kind: str,
    electricity_usd_per_kwh: float,
    years: float,
    utilization: float,
    cat: pd.DataFrame,
    table: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The cost rows of ``a`` against ``b`` (``item``, ``a``, ``b``, ``a_over_b``, ``note``): the
    prices of each (:func:`_price_rows`) and, where there is a throughput, the cost and energy of
    the first workload's work (:func:`_work_rows`). ``table``: :func:`price_table` of the two at
    the kind :func:`common_price_kind` picks, where the caller has it already."""
    price_kind = common_price_kind(a, b, book, price_kind)
    if table is None:
        table = price_table(a, b, book, price_kind, electricity_usd_per_kwh, years, utilization, cat)
    rows = _price_rows(a.name, b.name, table, years)
    if not throughput.empty:  # the first workload's work, its fp16 row where it has one
        mixed = throughput[throughput["precision"] == "fp16"]
        first = (mixed if len(mixed) else throughput).iloc[0]
        speeds = pd.DataFrame(
            {
                "gpu": [a.name, b.name],
                "throughput": [first["throughput_a"], first["throughput_b"]],
                "throughput_unit": [first["unit"]] * 2,
            }
        )
        work = cost.work_cost_table(
            book, speeds, price_kind, electricity_usd_per_kwh, years, utilization, catalogue=cat
        ).set_index("gpu")
        rows += _work_rows(a, b, first, work, table)
    return pd.DataFrame(rows)


def _row(item: str, va, vb, note: str = "") -> dict:
    return {"item": item, "a": va, "b": vb, "a_over_b": ratio(va, vb), "note": note}


def _price_rows(a: str, b: str, table: pd.DataFrame, years: float) -> list[dict]:
    """USD per peak TFLOPS, the purchase price, the TCO and the cloud price of each card, from
    its rows of the cost table."""
    kinds = {g: table.loc[table["gpu"] == g, "price_kind"].iloc[0] for g in (a, b)}
    kind_label = kinds[a] if kinds[a] == kinds[b] else f"{a} {kinds[a]}, {b} {kinds[b]}"
    rows = []
    for p in ("fp32", "fp16"):
        ta = table[(table["gpu"] == a) & (table["precision"] == p)].iloc[0]
        tb = table[(table["gpu"] == b) & (table["precision"] == p)].iloc[0]
        rows.append(
            _row(
                f"USD per peak {p} TFLOPS (purchase)",
                num(ta["usd_per_tflop"]),
                num(tb["usd_per_tflop"]),
                _both_notes(a, ta["purchase_note"], b, tb["purchase_note"]),
            )
        )
    ta = table[(table["gpu"] == a)].iloc[0]
    tb = table[(table["gpu"] == b)].iloc[0]
    bought = _both_notes(
        a,
        _dated(ta, "price", "purchase_note", f"{kinds[a]} price"),
        b,
        _dated(tb, "price", "purchase_note", f"{kinds[b]} price"),
    )
    if kinds[a] != kinds[b]:
        bought += ("; " if bought else "") + "different kinds of price: no kind both cards have"
    return rows + [
        _row(f"purchase price (USD, {kind_label})", num(ta["price_usd"]), num(tb["price_usd"]), bought),
        _row(f"TCO over {years:g} years (USD)", num(ta["tco_usd"]), num(tb["tco_usd"])),
        _row(
            "cloud price (USD per GPU-hour)",
            num(ta["cloud_usd_per_hour"]),
            num(tb["cloud_usd_per_hour"]),
            _both_notes(a, _cloud_note(ta), b, _cloud_note(tb)),
        ),
    ]


def _work_rows(
    a: specs.GPU, b: specs.GPU, first: pd.Series, work: pd.DataFrame, table: pd.DataFrame
) -> list[dict]:
    """USD per million items renting and owning (``work``, by GPU), items per second per watt and
    per 1000 USD of purchase, on the throughput row ``first``."""
    unit = first["unit"].split("/")[0]
    label = f"{first['workload']} {first['precision']}"
    ta, tb = table[(table["gpu"] == a.name)].iloc[0], table[(table["gpu"] == b.name)].iloc[0]

    def of(gpu: str, column: str):  # a GPU with no predicted throughput has no work cost
        return num(work.loc[gpu, column]) if gpu in work.index else None

    return [
        _row(
            f"USD per million {unit}, renting ({label})",
            of(a.name, "cloud_usd_per_million_items"),
            of(b.name, "cloud_usd_per_million_items"),
        ),
        _row(
            f"USD per million {unit}, owning ({label})",
            of(a.name, "owned_usd_per_million_items"),
            of(b.name, "owned_usd_per_million_items"),
        ),
        _row(
            f"{unit} per second per watt ({label})",
            ratio(first["throughput_a"], a["tdp_w"]),
            ratio(first["throughput_b"], b["tdp_w"]),
            "board power at full load",
        ),
        _row(
            f"{unit} per second per 1000 USD of purchase ({label})",
            ratio(first["throughput_a"], (num(ta["price_usd"]) or math.nan) / 1000),
            ratio(first["throughput_b"], (num(tb["price_usd"]) or math.nan) / 1000),
        ),
    ]
