"""The model against two naive baselines on the same single-GPU decode pairs (docs/accuracy/llm.md)."""

from __future__ import annotations

from gpukit import grading, llm
from gpukit.llm import baselines
from gpukit.llm.grading import CONFIGURATION_PAIRED

from .._report import table_head


def _cells(table) -> str:
    s = grading.summarize(table)
    if not s["pairs"]:
        return "– | –"
    return (
        f"{s['within_tolerance']} ({s['within_tolerance'] / s['pairs']:.0%}) | "
        f"{s['winners_right']} of {s['decisive_pairs']}"
    )


def baselines_section(ref) -> list[str]:
    """Per source and in all: single-GPU decode pairs within the tolerance and winners right, for the
    model, a bare bandwidth ratio and bandwidth plus a fixed time per token fitted to those pairs."""
    rows = baselines.single_gpu_decode(ref)
    groups = CONFIGURATION_PAIRED
    out = [
        "",
        "## Against two naive baselines",
        "",
        "Single-GPU decode, on the pairs the model is graded on: the model, a bare ratio of datasheet memory "
        "bandwidths, and the weights' bytes over that bandwidth plus one fixed time per token, fitted to the "
        f"very pairs it is graded on (`gpukit.llm.baselines`; which flatters it). Within ±{llm.RATIO_TOLERANCE:.0%}, "
        "and the winner right where the published gap exceeds the winner margin.",
        "",
        *table_head(
            "| source | pairs | model within | model winners | bandwidth within | bandwidth winners "
            "| fixed time (µs) | bandwidth + fixed within | bandwidth + fixed winners |",
            "lrrrrrrrr",
        ),
    ]
    sources = [(s, rows[rows["source"] == s]) for s in sorted(rows["source"].unique())] + [("all", rows)]
    for source, part in sources:
        part = part.reset_index(drop=True)
        model = baselines.grade(part, llm.predict_reference(part).to_numpy(), groups)
        bare = baselines.grade(part, baselines.predictions(part, 0.0), groups)
        fixed = baselines.fit_fixed_cost(part, groups)
        plus = baselines.grade(part, baselines.predictions(part, fixed), groups)
        out.append(
            f"| {source} | {len(model)} | {_cells(model)} | {_cells(bare)} | {fixed * 1e6:.0f} | {_cells(plus)} |"
        )
    return out
