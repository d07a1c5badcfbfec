"""Head-to-head comparison of two GPUs, with verdicts computed from the numbers.

:func:`compare` gathers, for GPUs ``a`` and ``b``:

* ``specs`` — each figure of both and the ratio a/b (compute per precision, memory, bandwidth,
  power, NVLink, form factor);
* ``throughput`` — per workload and precision, the throughput of each (measured where a
  results document measured that very configuration on one of them, predicted by
  :mod:`gpukit.perfmodel` otherwise; ``basis_a``/``basis_b`` say which), the speedup, and what
  bounds the step on each;
* ``fit`` — per model and batch size, whether it fits on each and the largest batch;
* ``cost`` — dollars per peak TFLOP, TCO, cloud price, dollars per million items of the first
  workload, throughput per watt and per dollar (only where a price exists);
* ``verdicts`` — sentences generated from those tables, each with its reason and the condition
  under which it turns (never hand-written conclusions).

:mod:`.entry` holds :func:`compare`; :mod:`.tables` the specs, throughput and fit tables,
:mod:`.published` the published speedups they quote, :mod:`.costs` the cost rows, :mod:`.verdicts`
the verdicts drawn from them, :mod:`.comparison` the :class:`Comparison` record and its forms
(CSV, JSON, Markdown, HTML), :mod:`.numbers` how numbers are read and written, and
:mod:`.bottom_line` the answers in a few rows, saved for the report's index.
"""

from .bottom_line import COLUMNS as bottom_line_columns
from .bottom_line import bottom_line, bottom_line_table, save_for_report
from .comparison import Comparison
from .costs import cost_rows
from .entry import DEFAULT_FIT_BATCHES, DEFAULT_PRECISIONS, DEFAULT_WORKLOADS, compare
from .published import published_speedups
from .tables import FIT_CONDITIONS, SPEC_ROWS, fit_table, spec_table, throughput_table
from .verdicts import COST_VERDICTS, SAME_SPEED

__all__ = [
    "COST_VERDICTS",
    "DEFAULT_FIT_BATCHES",
    "DEFAULT_PRECISIONS",
    "DEFAULT_WORKLOADS",
    "FIT_CONDITIONS",
    "SAME_SPEED",
    "SPEC_ROWS",
    "Comparison",
    "bottom_line",
    "bottom_line_table",
    "bottom_line_columns",
    "compare",
    "cost_rows",
    "fit_table",
    "published_speedups",
    "save_for_report",
    "spec_table",
    "throughput_table",
]
