"""A ranking in words: its bottom line (:func:`headline`), what it assumed (:func:`basis`), and
its answer as one row of a table of choices (:func:`choice`)."""

from __future__ import annotations

import pandas as pd

from ..units import figure
from .ranking import Job, Price


def _price_text(row: pd.Series) -> str:
    """What one row's price is: the amount, its kind or provider, and its date."""
    many = f" for {row['gpus']}" if row["gpus"] > 1 else ""
    if row["cloud_usd_per_hour"] is not None and row["cloud_usd_per_hour"] == row["cloud_usd_per_hour"]:
        each = row["cloud_usd_per_hour"] * row["gpus"]
        return f"${figure(each)}/hour{many} ({row['cloud_provider']}, {row['price_date']})"
    return f"${figure(row['price_usd'] * row['gpus'])}{many} ({row['price_kind']}, {row['price_date']})"


def headline(ranking: pd.DataFrame) -> str:
    """The bottom line of a ranking in one sentence: the best GPU per dollar, its speed, its price
    and its work per dollar; or why nothing could be ranked."""
    price: Price = ranking.attrs["price"]
    unit = ranking.attrs["unit"]
    ranked = ranking[ranking["standing"] == "ranked"]
    if ranked.empty:
        why = ranking.attrs.get("budget_note") or f"no GPU that runs this has a {price.describe()}"
        return f"Nothing to rank: {why}."
    best = ranked.iloc[0]
    rate = f"{figure(best['throughput'])} {unit} at batch {best['batch_size']}"
    per = (
        f"${figure(best['usd_per_million_items'])} per million {unit.split('/')[0]}"
        if price.renting
        else f"{figure(best['throughput_per_1k_usd'])} {unit} per $1,000"
    )
    line = f"Best per dollar: {best['gpu']}, {rate} for {_price_text(best)}: {per}."
    if len(ranked) > 1 and ranked.iloc[1].get("within_error_of") == best["gpu"]:
        line += (
            f" {ranked.iloc[1]['gpu']} is within error of it: the predictions cannot settle which is better."
        )
    if price.budget_usd is not None:
        fastest = ranked.loc[ranked["throughput"].astype(float).idxmax()]
        unit_budget = "/hour" if price.renting else ""
        line += (
            f" Fastest within ${figure(price.budget_usd)}{unit_budget}: {fastest['gpu']}, "
            f"{figure(fastest['throughput'])} {unit} for {_price_text(fastest)}."
        )
    return line


def basis(ranking: pd.DataFrame) -> str:
    """What a ranking assumed, in a sentence: the job, the batch, the price and the error."""
    job = ranking.attrs["job"]
    price: Price = ranking.attrs["price"]
    batch = (
        f"batch {job.batch}"
        if getattr(job, "batch", None)
        else "each GPU at the largest batch that fits, capped where throughput stops growing"
        if isinstance(job, Job)
        else "one sequence at a time"
    )
    budget = ranking.attrs.get("budget_note")
    return (
        f"{job.describe()}, {ranking.attrs['input_label']}; {batch}; ranked by {price.describe()}"
        + (f"; {budget}" if budget else "")
        + f". Predicted: {ranking.attrs['accuracy']}."
    )


def _asked(price: Price) -> str:
    """The question a ranking answers, in a few words: "buying, up to $2,000", "renting, spot" (the
    kind of price is beside each price)."""
    if price.renting:
        return f"renting, {price.cloud_kind}"
    within = f"up to ${figure(price.budget_usd)}" if price.budget_usd is not None else "any price"
    return f"buying, {within}"


def _per_dollar(row: pd.Series, price: Price, unit: str) -> str:
    if price.renting:
        text = f"${figure(row['usd_per_million_items'])} per million {unit.split('/')[0]}"
    else:
        text = f"{figure(row['throughput_per_1k_usd'])} {unit} per $1,000"
    served = row.get("usd_per_million_tokens_served")
    if served is not None and served == served:  # an LLM: the same price over the tokens served at batch
        paid = "renting" if price.renting else "owning"
        text += f"; ${figure(served)} per million tokens {paid}, served {int(row['served_batch'])} at once"
    return text


#: The columns of :func:`choice`'s row, and their headers on a page.
CHOICE_COLUMNS = ("asked", "best", "throughput", "price", "per_dollar", "next_best", "fastest", "error")
CHOICE_HEADERS = (
    "asked",
    "best per dollar",
    "its throughput",
    "its price",
    "work per dollar",
    "then",
    "fastest for the money",
    "measured error",
)


def choice(ranking: pd.DataFrame, runners_up: int = 2) -> dict:
    """A ranking as one row of a table of choices (:data:`CHOICE_COLUMNS`, all text): what was
    asked, the best GPU per dollar with its throughput, price and work per dollar, the next
    ``runners_up`` GPUs per dollar, the fastest GPU of those ranked (within the budget, where there
    is one) with its price, and the median error of the prediction. Where nothing could be ranked,
    ``best`` is empty and ``per_dollar`` says why."""
    price: Price = ranking.attrs["price"]
    unit = ranking.attrs["unit"]
    ranked = ranking[ranking["standing"] == "ranked"]
    if ranked.empty:
        why = headline(ranking).removeprefix("Nothing to rank: ")
        return dict.fromkeys(CHOICE_COLUMNS, "") | {"asked": _asked(price), "per_dollar": why}
    best = ranked.iloc[0]
    fastest = ranked.loc[ranked["throughput"].astype(float).idxmax()]
    error = best["error_pct"]
    return {
        "asked": _asked(price),
        "best": best["gpu"],
        "throughput": f"{figure(best['throughput'])} {unit} at batch {best['batch_size']}",
        "price": _price_text(best),
        "per_dollar": _per_dollar(best, price, unit),
        "next_best": ", ".join(ranked["gpu"].iloc[1 : 1 + runners_up]),
        "fastest": f"{fastest['gpu']}, {figure(fastest['throughput'])} {unit} for {_price_text(fastest)}",
        "error": (f"median {error:.1f}%" + ("" if best["graded"] else ", not graded on it"))
        if error == error and error is not None
        else "not graded",
    }
