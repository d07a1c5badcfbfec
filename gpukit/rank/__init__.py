"""The buyer's question: every catalogue GPU for one job, ranked by work per dollar.

A job is a model trained or served at a precision (:class:`Job`), or an LLM served by an engine
(:class:`LLMJob`). For each GPU the ranking joins three things the kit already knows:

* the fit: the largest batch the memory estimate allows (what ``gpukit fit`` says);
* the speed: the performance model's throughput at the batch used (what ``gpukit predict`` says
  for the same arguments), by default the largest batch that fits, capped where a larger batch
  stops adding throughput (:data:`PLATEAU`);
* the price of one kind, never mixed: a purchase price (street, used or msrp) or a cloud rate
  (on-demand or spot), with its date and source.

Work per dollar is throughput per $1,000 of purchase price, or dollars per million items
(images, sequences, tokens) renting or owning. GPUs that do not fit, or have no price of the
kind asked for, are listed after the ranked ones and say why; none is dropped silently. Every
row carries the measured error of its prediction (its error band,
:func:`gpukit.perfmodel.error_bands`: ``docs/accuracy/perfmodel.md`` grades it).

:mod:`.ranking` ranks (the jobs, the prices, the join and the order), :mod:`.words` says a
ranking's bottom line and basis, :mod:`.pages` makes pages and the report's index of rankings.
"""

from ..bench.results import RUN_DIR_ENV
from .pages import (
    FRONT_PAGE_JOBS,
    SUMMARY_COLUMNS,
    answer,
    answers,
    choices,
    choices_table,
    for_your_money,
    save_for_report,
    summary,
    whole,
)
from .ranking import (
    CLOUD_KINDS,
    COLUMNS,
    PLATEAU,
    PRICE_KINDS,
    STANDINGS,
    Job,
    LLMJob,
    Price,
    job_speeds,
    rank,
    rank_llm,
    with_budget,
)
from .words import CHOICE_COLUMNS, CHOICE_HEADERS, basis, choice, headline

__all__ = [
    "CHOICE_COLUMNS",
    "CHOICE_HEADERS",
    "CLOUD_KINDS",
    "COLUMNS",
    "FRONT_PAGE_JOBS",
    "PLATEAU",
    "PRICE_KINDS",
    "RUN_DIR_ENV",
    "STANDINGS",
    "SUMMARY_COLUMNS",
    "Job",
    "LLMJob",
    "Price",
    "answer",
    "answers",
    "basis",
    "choice",
    "choices",
    "choices_table",
    "for_your_money",
    "headline",
    "job_speeds",
    "rank",
    "rank_llm",
    "save_for_report",
    "summary",
    "whole",
    "with_budget",
]
