"""The entry of a head-to-head comparison: :func:`compare` resolves the two GPUs, gathers the
tables and draws the verdicts from them."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .. import prices, specs
from ..errors import ParameterError
from .comparison import Comparison
from .costs import cost_rows
from .tables import fit_table, spec_table, throughput_table
from .verdicts import cost_verdicts, fit_verdicts, link_verdict, speed_verdicts

#: ResNet-50 and BERT-base fine-tuned on SQuAD (384 tokens): the CNN and the transformer that
#: publications measure across GPUs, so their speedups are graded (docs/perfmodel-accuracy.md).
DEFAULT_WORKLOADS = ("resnet50", "bert-base-squad")
DEFAULT_PRECISIONS = ("float32", "fp16")
DEFAULT_MODELS = ("ResNet50", "bert-base", "bert-large", "gpt2-medium", "keras-bert")
DEFAULT_FIT_BATCHES = (16, 64, 256)


def compare(
    a: str,
    b: str,
    workloads: Sequence[str] = DEFAULT_WORKLOADS,
    precisions: Sequence[str] = DEFAULT_PRECISIONS,
    batch_size: int | None = None,
    models: Sequence[str] = DEFAULT_MODELS,
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
) -> Comparison:
    """Everything gpukit knows about ``a`` against ``b``; see :mod:`gpukit.compare`."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ga, gb = specs.gpu(a, cat), specs.gpu(b, cat)  # resolved here, once
    if ga.name == gb.name:
        raise ParameterError(f"{a!r} and {b!r} are the same GPU ({ga}); compare two different ones")
    thr, source = throughput_table(ga, gb, list(workloads), list(precisions), batch_size, results, cat)
    fit = fit_table(ga, gb, list(models), list(fit_batch_sizes), fit_precision, optimizer, cat)
    book = prices.load_prices(price_files)
    costs = cost_rows(ga, gb, book, thr, price_kind, electricity_usd_per_kwh, years, utilization, cat)
    verdicts = [
        {**v, "kind": kind}
        for kind, found in (
            ("speed", speed_verdicts(ga, gb, thr)),
            ("memory", fit_verdicts(ga, gb, fit)),
            ("cost", cost_verdicts(ga, gb, costs)),
            ("scaling", link_verdict(ga, gb, thr)),
        )
        for v in found
    ]
    return Comparison(ga.name, gb.name, spec_table(ga, gb), thr, fit, costs, verdicts, source)
