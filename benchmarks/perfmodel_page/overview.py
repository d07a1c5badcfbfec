"""The head of docs/accuracy/perfmodel.md: what was graded, each family against its target, the pairs
the kit exists for, the largest errors and what they point to."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from gpukit import perfmodel

from .._report import table_head
from .rows import pair_rows


def overview(ref: pd.DataFrame, table: pd.DataFrame, fitted, cat) -> list[str]:
    """The page's title and what was graded: the measurements, the pairs, the default and refitted factors."""
    d = perfmodel.DEFAULT_EFFICIENCY
    single = ref[ref["gpus"] == 1]
    return [
        "# Performance model accuracy",
        "",
        f"Written by `benchmarks/perfmodel_accuracy.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. "
        "Nothing here ran on a GPU: the model predicts from the catalogue, and the published measurements it "
        "is graded against are in `data/reference_benchmarks.csv` (every row with its source, commit and what "
        "the source says of it).",
        "",
        f"- {len(single)} published single-GPU training throughputs "
        f"({', '.join(sorted(single['workload'].unique()))}), "
        f"{single['gpu'].nunique()} GPUs, {single['source'].nunique()} sources; {len(table)} pairs of GPUs measured by "
        "the same source on the same workload and precision.",
        f"- {int((ref['gpus'] > 1).sum())} published multi-GPU throughputs (2, 4 and 8 GPUs), each graded as its "
        "speedup over the same source's single GPU.",
        f"- Default efficiencies: tensor {d.tensor:g} (of the measured matmul rate), CUDA-core matmul {d.cuda:g}, "
        f"elementwise {d.elementwise:g}, memory {d.memory:g} and streaming {d.stream:g} (of the measured streaming "
        f"bandwidth), launch {d.launch_s * 1e6:g} µs per kernel, host {d.host_op_s * 1e6:g} µs per layer "
        "operation of a model's step.",
        f"- Refit on all single-GPU measurements today: tensor {fitted.tensor:g}, CUDA-core matmul {fitted.cuda:g}, "
        f"elementwise {fitted.elementwise:g}, memory {fitted.memory:g}" + _refit_verdict(ref, fitted, cat),
    ]


def _refit_verdict(ref: pd.DataFrame, fitted, cat) -> str:
    """How the refit line ends: the defaults themselves, or the verdict on moving to the refit."""
    d = perfmodel.DEFAULT_EFFICIENCY
    if (fitted.tensor, fitted.cuda, fitted.elementwise, fitted.memory) == (
        d.tensor,
        d.cuda,
        d.elementwise,
        d.memory,
    ):
        return " (the defaults)."
    return ": " + perfmodel.refit_verdict(ref, fitted, d, cat)[1] + "."


def family_section(fams: pd.DataFrame, scaling: pd.DataFrame) -> list[str]:
    """Each family's figures against its target, and the N-GPU speedups'."""
    target = f"≥ {perfmodel.FAMILY_TARGET:.0%} of speedups within ±{perfmodel.RATIO_TOLERANCE:.0%}"
    out = [
        "",
        "## Per workload family",
        "",
        f"Target per family: {target}, and every winner right where the publications differ by more than 10 %.",
        "",
        *table_head(
            "| family | pairs | within ±15 % | winners right (gap > 10 %) | median abs. error | largest abs. error "
            "| target |",
            "lrrrrrl",
        ),
    ]
    for _, r in fams.iterrows():
        out.append(
            f"| {r['family']} | {r['pairs']} | {r['within_tolerance']} ({r['within_share']:.0%}) | "
            f"{r['winners_right']} of {r['decisive_pairs']} | {r['median_abs_error_pct']:.1f}% | "
            f"{r['max_abs_error_pct']:.1f}% | {'met' if r['meets_target'] else 'not met'} |"
        )
    if not scaling.empty:
        share = scaling["within_tolerance"].mean()
        out.append(
            f"| scaling (N GPUs over 1) | {len(scaling)} | "
            f"{int(scaling['within_tolerance'].sum())} ({share:.0%}) | "
            f"— | {scaling['error_pct'].abs().median():.1f}% | {scaling['error_pct'].abs().max():.1f}% | "
            f"{'met' if share >= perfmodel.FAMILY_TARGET else 'not met'} |"
        )
    return out


def key_pairs_section(keys: pd.DataFrame) -> list[str]:
    """The pairs this kit exists for, graded (:func:`gpukit.perfmodel.key_pairs`)."""
    return ["", "### The pairs this kit exists for", ""] + pair_rows(keys)


def largest_errors(table: pd.DataFrame, fams: pd.DataFrame) -> list[str]:
    """Per family, the ten pairs furthest off, the GPUs in them, and the winners called wrong."""
    out = []
    for fam in fams["family"]:
        part = table[table["family"] == fam]
        worst = part.assign(a=part["error_pct"].abs()).sort_values("a", ascending=False).head(10)
        counts = pd.concat([worst["gpu_a"], worst["gpu_b"]]).value_counts()
        wrong = part[part["decisive"] & (part["winner_right"] == False)]  # noqa: E712 -- object column
        out += ["", f"### {fam}: the largest errors", ""] + pair_rows(worst)
        out += ["", "GPUs in these pairs: " + ", ".join(f"{g} ({n})" for g, n in counts.items()) + "."]
        if len(wrong):
            out += ["", f"Winners called wrong ({len(wrong)}):", ""] + pair_rows(wrong)
    return out


#: What the largest errors point to, before the sections that test each term of the model.
DIAGNOSIS = [
    "",
    "What the errors point to: they concentrate on GPUs, not on workloads. The model counts FLOPs and the "
    "least device-memory traffic per op; clocks held below boost by the board power limit enter through "
    "the measured matmul rates (below), but only where a step is bound by its matrix multiplies, and what "
    "each GPU's memory streams through the measured bandwidths (below); the on-chip cache enters where a "
    "kernel reads what the one before it wrote and that fits in the L2 (below: Ada's L2 is far larger "
    "than Ampere GA102's, but at the published batch sizes most layers' activations outgrow it, and the "
    "term moves few pairs). The model has no term for one harness's batch sizes running a card near its "
    "memory limit.",
    "",
]
