"""The entry of a head-to-head comparison: :func:`compare` resolves the two GPUs, gathers the
tables and draws the verdicts from them."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .. import specs
from ..errors import ParameterError
from ..prices import book as prices
from .comparison import Comparison
from .costs import common_price_kind, cost_rows, price_table
from .llms import serving_frame, serving_verdicts
from .tables import fit_models, fit_table, sequence_lengths, spec_table, throughput_table, value_table
from .verdicts import cost_verdicts, fit_verdicts, link_verdict, speed_verdicts, value_verdicts

#: ResNet-50 and BERT-base fine-tuned on SQuAD (384 tokens): the CNN and the transformer that
#: publications measure across GPUs, so their speedups are graded (docs/accuracy/perfmodel.md).
DEFAULT_WORKLOADS = ("resnet50", "bert-base-squad")
DEFAULT_PRECISIONS = ("float32", "fp16")
DEFAULT_FIT_BATCHES = (16, 64, 256)


def compare(
    a: str,
    b: str,
    workloads: Sequence[str] = DEFAULT_WORKLOADS,
    precisions: Sequence[str] = DEFAULT_PRECISIONS,
    batch_size: int | None = None,
    models: Sequence[str] | None = None,
    fit_batch_sizes: Sequence[int] = DEFAULT_FIT_BATCHES,
    fit_precision: str = "fp16",
    optimizer: str = "adam",
    price_files=None,
    price_kind: str = "any",
    electricity_usd_per_kwh: float = 0.15,
    years: float = 3.0,
    utilization: float = 0.5,
    results: list | None = None,
    catalogue: pd.DataFrame | None = None,
    seq_len: int | None = None,
    llms: Sequence[str] = (),
    llm_weights: str | None = None,
    llm_engine: str | None = None,
    llm_gpus: int | None = None,
) -> Comparison:
    """Everything gpukit knows about ``a`` against ``b``; see :mod:`gpukit.compare`. ``seq_len`` is
    the tokens per sequence of the transformer workloads (an error where none is asked);
    ``models`` the models of the memory fit, by default (None or empty) those the workloads train;
    ``llms`` the LLMs served on each (:func:`gpukit.compare.llms.serving_frame`, at
    ``llm_weights``, by ``llm_engine``, on ``llm_gpus`` of each)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ga, gb = specs.gpu(a, cat), specs.gpu(b, cat)  # resolved here, once
    if ga.name == gb.name:
        raise ParameterError(f"{a!r} and {b!r} are the same GPU ({ga}); compare two different ones")
    lengths = sequence_lengths(workloads, seq_len)
    thr, source = throughput_table(
        ga, gb, list(workloads), list(precisions), batch_size, results, cat, lengths
    )
    fitted = fit_models(workloads, lengths) if not models else [(m, seq_len) for m in models]
    fit = fit_table(ga, gb, fitted, list(fit_batch_sizes), fit_precision, optimizer, cat)
    book = prices.load_prices(price_files)
    like = common_price_kind(ga, gb, book, price_kind)
    priced = price_table(ga, gb, book, like, electricity_usd_per_kwh, years, utilization, cat)
    costs = cost_rows(ga, gb, book, thr, like, electricity_usd_per_kwh, years, utilization, cat, priced)
    value = value_table(ga, gb, thr, lengths, batch_size, cat, priced)
    served = (
        serving_frame(ga, gb, llms, llm_weights, llm_engine, llm_gpus, price_files, cat) if llms else None
    )
    verdicts = [
        {**v, "kind": kind}
        for kind, found in (
            ("value", value_verdicts(ga, gb, value)),
            ("speed", speed_verdicts(ga, gb, thr)),
            ("memory", fit_verdicts(ga, gb, fit)),
            ("cost", cost_verdicts(ga, gb, costs)),
            ("scaling", link_verdict(ga, gb, thr)),
            ("serving", serving_verdicts(ga.name, gb.name, served) if served is not None else []),
        )
        for v in found
    ]
    notes = [g.variant_note for g in (ga, gb) if g.variant_note]
    return Comparison(
        ga.name,
        gb.name,
        spec_table(ga, gb),
        thr,
        fit,
        costs,
        verdicts,
        source,
        notes,
        value,
        pd.DataFrame() if served is None else served,
    )
