"""Rankings as pages show them: the jobs the report asks about, a ranking's summary and its
answer (bottom line, basis, table), and what the report's index is left."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import date
from pathlib import Path

import pandas as pd

from .. import _atomic, cache
from ..bench.results import RUN_DIR_ENV
from ..llm.models import DEFAULT_MODEL
from ..present import tables
from .ranking import Job, LLMJob, Price, rank, rank_llm, with_budget
from .words import CHOICE_COLUMNS, CHOICE_HEADERS, basis, choice, headline

#: The jobs the report's front page ranks the GPUs for: a CNN, a transformer and an LLM.
FRONT_PAGE_JOBS = (
    Job("resnet50", "fp16"),
    Job("bert-base", "fp16", seq_len=128),
    LLMJob(DEFAULT_MODEL, "q4_k_m"),
)
#: The columns of a ranking the front page shows, buying and renting.
SUMMARY_COLUMNS = {
    False: (
        "rank",
        "gpu",
        "throughput",
        "batch_size",
        "price_usd",
        "price_date",
        "throughput_per_1k_usd",
        "error_pct",
        "within_error_of",
    ),
    True: (
        "rank",
        "gpu",
        "throughput",
        "batch_size",
        "cloud_usd_per_hour",
        "cloud_provider",
        "price_date",
        "usd_per_million_items",
        "error_pct",
        "within_error_of",
    ),
}


def summary(ranking: pd.DataFrame, top: int = 5) -> dict:
    """What a page shows of a ranking: its bottom line, what it assumed, and its best ``top``
    rows (JSON-ready)."""
    price: Price = ranking.attrs["price"]
    rows = ranking[ranking["standing"].isin(("ranked", "over budget"))].head(top)
    columns = list(SUMMARY_COLUMNS[price.renting])
    return {
        "job": ranking.attrs["job"].describe(),
        "price": price.describe(),
        "budget_usd": price.budget_usd,
        "unit": ranking.attrs["unit"],
        "headline": headline(ranking),
        "basis": basis(ranking),
        "columns": columns,
        "rows": json.loads(rows[columns].to_json(orient="records")),
    }


def for_your_money(
    jobs=FRONT_PAGE_JOBS,
    budgets: tuple[float | None, ...] = (None,),
    prices_asked: tuple[Price, ...] = (Price("street"), Price("cloud")),
    price_files=None,
) -> list[pd.DataFrame]:
    """Every ranking of ``jobs`` x ``prices_asked``, a purchase ranking once per budget of
    ``budgets`` (dollars; None: no budget); a job is predicted once per price, then cut. With the
    shipped prices only, kept between runs for the day (:mod:`gpukit.cache`: a price's age is
    reckoned from today)."""

    def compute() -> list[pd.DataFrame]:
        out = []
        for job in jobs:
            for price in prices_asked:
                ranked = (rank_llm if isinstance(job, LLMJob) else rank)(job, price, price_files)
                out += [ranked] if price.renting else [with_budget(ranked, b) for b in budgets]
        return out

    if price_files:
        return compute()
    asked = repr((tuple(jobs), tuple(budgets), tuple(prices_asked), date.today().isoformat()))
    digest = hashlib.sha256(asked.encode()).hexdigest()[:16]
    return cache.cached(f"rank-for-your-money-{digest}", cache.data_files(), compute)


def save_for_report(rankings: list[pd.DataFrame], top: int = 5) -> str | None:
    """Leave the rankings' summaries for the report's index (``$GPUKIT_RUN_DIR/summary-rank.json``)."""
    folder = os.environ.get(RUN_DIR_ENV)
    if not folder:
        return None
    path = Path(folder) / "summary-rank.json"
    doc = {"kind": "rank", "choices": choices(rankings), "rankings": [summary(r, top) for r in rankings]}
    _atomic.write_text(path, json.dumps(doc, indent=1))
    return str(path)


def choices(rankings: list[pd.DataFrame], runners_up: int = 2) -> list[dict]:
    """The rankings as a table of choices per job, in the order the jobs first appear: the job,
    its input, how right its predictions are, the columns (:data:`CHOICE_COLUMNS`) and their
    headers, and one row per ranking (:func:`choice`: a budget, buying or renting)."""
    jobs: dict = {}
    for ranking in rankings:
        job = ranking.attrs["job"]
        entry = jobs.setdefault(
            job,
            {
                "job": job.describe(),
                "input": ranking.attrs["input_label"],
                "accuracy": ranking.attrs["accuracy"],
                "columns": list(CHOICE_COLUMNS),
                "headers": list(CHOICE_HEADERS),
                "rows": [],
            },
        )
        entry["rows"].append(choice(ranking, runners_up))
    return list(jobs.values())


def answer(ranked: pd.DataFrame, top: int | None = None) -> tables.Answer:
    """A ranking as a page shows it: its bottom line, what it assumed, and its table under headers
    that carry the job's unit (the best ``top`` rows where given)."""
    unit = ranked.attrs["unit"]
    columns = list(SUMMARY_COLUMNS[ranked.attrs["price"].renting]) + ["note"]
    shown = ranked if top is None else ranked.head(top)
    frame = shown[columns].rename(
        columns={
            "throughput": f"throughput ({unit})",
            "throughput_per_1k_usd": f"{unit} per $1,000",
            "usd_per_million_items": f"USD per million {unit.split('/')[0]}",
        }
    )
    return tables.Answer(headline(ranked), basis(ranked), tables.show(frame))


def answers(rankings: list[pd.DataFrame], top: int | None = None) -> tables.Answers:
    """Several rankings, each as :func:`answer` shows it."""
    return tables.Answers(answer(r, top) for r in rankings)


def choices_table(rankings: list[pd.DataFrame], runners_up: int = 2) -> tables.Answers:
    """:func:`choices` as a page shows them: per job, its name and input, how right its
    predictions are, and its table of choices under readable headers."""
    out = tables.Answers()
    for job in choices(rankings, runners_up):
        frame = pd.DataFrame(job["rows"], columns=job["columns"])
        frame.columns = job["headers"]
        out.append(
            tables.Answer(
                f"{job['job']}, {job['input']}", f"Predicted: {job['accuracy']}.", tables.show(frame)
            )
        )
    return out


def whole(rankings: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """The purchase rankings without a budget (one a job, as :func:`for_your_money` makes them):
    every GPU, for a figure of throughput against price."""
    return [r for r in rankings if not r.attrs["price"].renting and r.attrs["price"].budget_usd is None]
