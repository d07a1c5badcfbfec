"""Seaborn figures in one house style. Every figure has a title, units on its axes and a legend.

Functions return a :class:`matplotlib.figure.Figure` already closed in pyplot, so a notebook
shows it exactly once (as the cell's value) and scripts can ``savefig`` it. :mod:`.style` holds
the house style (colours, markers, point labels, log ticks); each other module holds one
domain's figures: :mod:`.specs` the datasheet catalogue, :mod:`.bench` what the device here
measured, :mod:`.memory` what fits in memory, :mod:`.cost` prices, :mod:`.perfmodel` the
performance model and its grading, :mod:`.llm` large language models, :mod:`.compare` two
GPUs head to head and :mod:`.rank` every GPU for one job by work per dollar.
"""

from .bench import WORKLOAD_MARKERS, achieved_figure, roofline_figure
from .compare import advantage_figure, claims_figure, spec_ratio_figure, throughput_comparison_figure
from .cost import (
    TFLOPS_BASES,
    break_even_figure,
    cost_per_tflop_figure,
    price_history_figure,
    price_performance_figure,
    work_cost_figure,
)
from .llm import PUBLISHED_DECODE_LABEL, llm_decode_figure, llm_fit_heatmap
from .memory import fit_heatmap, largest_batch_figure
from .perfmodel import (
    ROOFLINE_BOUND_NOTE,
    VALIDATION_KEY_GID,
    predicted_roofline_figure,
    predicted_throughput_figure,
    scaling_validation_figure,
    sustained_share_figure,
    validation_figure,
)
from .rank import rank_figure, rank_figures
from .specs import compute_figure, efficiency_figure, memory_figure
from .style import ARCHITECTURES, PALETTE, SEGMENT_MARKERS, apply_style

__all__ = [
    "ARCHITECTURES",
    "PALETTE",
    "SEGMENT_MARKERS",
    "apply_style",
    "compute_figure",
    "efficiency_figure",
    "memory_figure",
    "WORKLOAD_MARKERS",
    "achieved_figure",
    "roofline_figure",
    "fit_heatmap",
    "largest_batch_figure",
    "TFLOPS_BASES",
    "break_even_figure",
    "cost_per_tflop_figure",
    "price_history_figure",
    "price_performance_figure",
    "work_cost_figure",
    "ROOFLINE_BOUND_NOTE",
    "VALIDATION_KEY_GID",
    "predicted_roofline_figure",
    "predicted_throughput_figure",
    "scaling_validation_figure",
    "sustained_share_figure",
    "validation_figure",
    "PUBLISHED_DECODE_LABEL",
    "llm_decode_figure",
    "llm_fit_heatmap",
    "advantage_figure",
    "claims_figure",
    "spec_ratio_figure",
    "throughput_comparison_figure",
    "rank_figure",
    "rank_figures",
]
