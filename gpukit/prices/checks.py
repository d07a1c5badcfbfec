"""Sanity checks on prices as they load: a price that cannot be what its row says is kept, with the
reason, and never used silently (:func:`flag_purchase`, :func:`flag_cloud`; every answer that
leaves one out says how many).

* a purchase price many times its variant siblings' of the same kind and year
  (:data:`SIBLING_MULTIPLE`; the V100 SXM2 beside the V100 PCIe);
* a used price above the same GPU's new (street) price of the same year;
* a used price above the new (street) price a newer card had in the :data:`RIVAL_DAYS` before it,
  where that card is at least as good on every figure a buyer weighs: dense tensor (or FP32)
  throughput, memory and bandwidth (a used A100 PCIe 80GB dearer than a new H100 PCIe);
* a kind that does not fit its source: a benchmark script's price per GPU for a performance-per-dollar
  chart, or a share of a whole system's price, is not what one card sells for on the street;
* an hourly rate above what a new card costs to buy over :data:`RENT_HOURS` hours.
"""

from __future__ import annotations

import re

import pandas as pd

from ..specs.names import _family

#: A purchase price more than this many times the median of its variant siblings' (same family,
#: kind and year) is flagged.
SIBLING_MULTIPLE = 3.0
#: An hourly rate that, over this many hours, costs more than the card does to buy is flagged.
RENT_HOURS = 300
#: What a purchase row's note says when its price is a chart's input or a system's share.
NOT_STREET = re.compile(r"performance-per-dollar chart|system price|share of a system|per-GPU share", re.I)


def _money(x: float) -> str:
    return f"${x:,.0f}" if x >= 100 else f"${x:,.2f}"


def flag_purchase(purchase: pd.DataFrame, catalogue: pd.DataFrame | None = None) -> pd.Series:
    """Why each purchase row is not to be used ("" where it passes), by the checks above (the one
    across cards with ``catalogue``)."""
    reason = pd.Series("", index=purchase.index, dtype=object)
    if purchase.empty:
        return reason
    notes = purchase["note"].fillna("").astype(str)
    chart = (purchase["kind"] == "street") & notes.str.contains(NOT_STREET)
    reason[chart] = (
        "a benchmark script's price per GPU for a performance-per-dollar chart, not a street price"
    )
    year = pd.to_datetime(purchase["date"]).dt.year
    frame = purchase.assign(_year=year, _family=purchase["gpu"].map(_family), _ok=reason == "")
    usable = frame[frame["_ok"]]
    # many times the variant siblings' prices of the same kind and year
    for _, group in usable.groupby(["_family", "kind", "_year"]):
        if group["gpu"].nunique() < 2:
            continue
        for i, row in group.iterrows():
            siblings = group.loc[group["gpu"] != row["gpu"], "usd"]
            if row["usd"] > SIBLING_MULTIPLE * siblings.median():
                reason[i] = (
                    f"{row['usd'] / siblings.median():.0f}x its variant siblings' {row['kind']} prices of "
                    f"{row['_year']} (median {_money(siblings.median())})"
                )
    # used above new: a used price above the same GPU's highest street price of that year
    street = usable[usable["kind"] == "street"].groupby(["gpu", "_year"])["usd"].idxmax()
    for i, row in usable[(usable["kind"] == "used")].iterrows():
        top = street.get((row["gpu"], row["_year"]))
        if top is not None and reason[i] == "" and row["usd"] > purchase.at[top, "usd"]:
            reason[i] = (
                f"used above new: {_money(row['usd'])} used against {_money(purchase.at[top, 'usd'])} street "
                f"on {purchase.at[top, 'date']}"
            )
    if catalogue is not None:
        _flag_dominated(purchase, usable[reason[usable.index] == ""], catalogue, reason)
    return reason


#: How many days before a used price a newer card's street price may be to still be what it sold for.
RIVAL_DAYS = 365
#: The figures a newer card must match or beat for its new price to cap an older card's used one.
_BUYER_FIGURES = ("memory_gb", "memory_bandwidth_gbs")


def _better_newer(catalogue: pd.DataFrame) -> dict[str, list[str]]:
    """For each GPU, the newer GPUs of the same vendor at least as good on throughput (dense tensor
    FP16, else FP32 for a card without tensor cores), memory and bandwidth: another vendor's cheaper
    card runs other software, and says nothing of what a buyer pays for this one."""
    figures = catalogue[["launch", *_BUYER_FIGURES]].assign(
        throughput=catalogue["fp16_tensor_tflops"].fillna(catalogue["fp32_tflops"])
    )
    gpus = catalogue["gpu"].to_numpy()
    better = figures["launch"].to_numpy()[None, :] > figures["launch"].to_numpy()[:, None]
    vendor = catalogue["vendor"].to_numpy()
    better &= vendor[None, :] == vendor[:, None]
    for column in ("throughput", *_BUYER_FIGURES):
        values = figures[column].to_numpy(float)
        better &= values[None, :] >= values[:, None]
    return {gpu: list(gpus[row]) for gpu, row in zip(gpus, better)}


def _flag_dominated(purchase: pd.DataFrame, usable: pd.DataFrame, catalogue: pd.DataFrame, reason) -> None:
    """Flag a used price above a street price of the :data:`RIVAL_DAYS` before it (what the card sold
    for then) of a newer card at least as good on every figure (:func:`_better_newer`); the cheapest
    such street price is named."""
    better = _better_newer(catalogue)
    street = usable[usable["kind"] == "street"]
    days = pd.to_datetime(purchase["date"])
    for i, row in usable[usable["kind"] == "used"].iterrows():
        before = (days[i] - days[street.index]).dt.days
        near = (before >= 0) & (before <= RIVAL_DAYS)
        rivals = street[near & street["gpu"].isin(better.get(row["gpu"], []))]
        rivals = rivals[rivals["usd"] < row["usd"]]
        if rivals.empty:
            continue
        j = rivals["usd"].idxmin()
        reason[i] = (
            f"used above a newer, faster card's new price: {_money(row['usd'])} used against the "
            f"{purchase.at[j, 'gpu']}'s {_money(purchase.at[j, 'usd'])} street on {purchase.at[j, 'date']}"
        )


def flag_cloud(cloud: pd.DataFrame, purchase: pd.DataFrame) -> pd.Series:
    """Why each cloud row is not to be used ("" where it passes): a rate that over
    :data:`RENT_HOURS` hours costs more than a new card: its newest usable street price, else its
    launch price."""
    reason = pd.Series("", index=cloud.index, dtype=object)
    if cloud.empty or purchase.empty:
        return reason
    ok = purchase[purchase.get("flag", pd.Series("", index=purchase.index)).fillna("") == ""]
    # what a new card costs: its street price, else its launch price (a used card is another market)
    street = ok[ok["kind"] == "street"].sort_values("date").groupby("gpu").tail(1).set_index("gpu")
    launch = ok[ok["kind"] == "msrp"].sort_values("date").groupby("gpu").tail(1).set_index("gpu")
    for i, row in cloud.iterrows():
        if row["gpu"] in street.index:
            buy = street.loc[row["gpu"]]
        elif row["gpu"] in launch.index:
            buy = launch.loc[row["gpu"]]
        else:
            continue
        if row["usd_per_hour"] * RENT_HOURS > buy["usd"]:
            reason[i] = (
                f"{RENT_HOURS} hours at {_money(row['usd_per_hour'])}/hour cost more than buying the card "
                f"({_money(buy['usd'])} {buy['kind']} on {buy['date']})"
            )
    return reason


def left_out_note(count: int) -> str:
    """What an answer says of the flagged prices it left out ("" for none)."""
    if not count:
        return ""
    return f"{count} flagged price{'s' if count > 1 else ''} left out (gpukit prices check)"
