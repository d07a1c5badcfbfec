"""Each single-GPU measurement over its prediction, per GPU, and how far one factor per GPU would
take the grading (docs/accuracy/perfmodel.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpukit import perfmodel

from .._report import table_head
from .rows import pair_rows


def ratio_section(ratios: pd.DataFrame) -> list[str]:
    """Each single-GPU measurement over its prediction, GPUs down and columns across."""
    return [
        "",
        "### Measured over predicted, per GPU",
        "",
        "Each single-GPU measurement over the model's prediction (`gpukit.perfmodel.throughput_ratios`). "
        "Pairs are graded, so what matters is how alike a column is: a GPU whose ratio stands apart from "
        "the rest of its column is one the model misjudges, whatever the workload.",
        "",
    ] + _ratio_table(ratios)


def _ratio_table(ratios: pd.DataFrame) -> list[str]:
    """GPUs down, (source, workload, precision) across: published over predicted throughput."""
    ratios = ratios.assign(
        column=ratios["source"].str.replace("lambda-", "")
        + " "
        + ratios["workload"]
        + " "
        + ratios["precision"]
    )
    grid = ratios.pivot_table(index="gpu", columns="column", values="ratio", aggfunc="median")
    grid = grid.loc[:, grid.notna().sum() >= 2].dropna(how="all")  # a column of one GPU pairs with nothing
    spread = grid.div(grid.median(axis=0), axis=1)  # each GPU against its column's median
    grid = grid.assign(_apart=spread.median(axis=1)).sort_values("_apart")
    cols = [c for c in grid.columns if c != "_apart"]
    out = [
        *table_head(
            "| GPU | " + " | ".join(cols) + " | median against its columns |", "l" + "r" * (len(cols) + 1)
        ),
    ]
    for gpu, r in grid.iterrows():
        cells = [f"{r[c]:.2f}" if pd.notna(r[c]) else "" for c in cols]
        out.append(f"| {gpu} | " + " | ".join(cells) + f" | {r['_apart']:.2f} |")
    return out


def gpu_factor_section(ref: pd.DataFrame, ratios: pd.DataFrame, table: pd.DataFrame, cat) -> list[str]:
    """How far one factor per GPU would take the grading: the ceiling of any GPU-only term."""
    factors = perfmodel.gpu_factors(ratios)
    furthest = factors.index[np.argmax(np.abs(np.log(factors.to_numpy())))]

    def graded(scale: pd.Series) -> pd.DataFrame:
        predicted = ratios["predicted"] * ratios["gpu"].map(scale).fillna(1.0)
        return perfmodel.validation_table(ref, catalogue=cat, predicted=predicted)

    left = graded(factors)
    now, one, every = (
        perfmodel.summarize_by_family(table),
        perfmodel.summarize_by_family(graded(factors[[furthest]])),
        perfmodel.summarize_by_family(left),
    )
    out = [
        "",
        "### How far a term of the GPU alone could go",
        "",
        "The columns above differ by a level that pairs never see; what is left is one factor per GPU "
        "(`gpukit.perfmodel.gpu_factors`: least squares on the logs, geometric mean 1). Multiplying each "
        "GPU's predictions by its factor and grading again gives the ceiling of any term that depends on "
        "the GPU alone (a sustained clock, an on-chip cache, a power limit); the factors are a diagnostic "
        "and are never applied to a prediction.",
        "",
        *table_head(
            f"| family | pairs | within ±15 % now | with the {furthest}'s factor alone | with every GPU's factor |",
            "lrrrr",
        ),
    ]
    for (_, a), (_, b), (_, c) in zip(now.iterrows(), one.iterrows(), every.iterrows()):
        out.append(
            f"| {a['family']} | {a['pairs']} | {a['within_tolerance']} ({a['within_share']:.0%}) | "
            f"{b['within_tolerance']} ({b['within_share']:.0%}) | "
            f"{c['within_tolerance']} ({c['within_share']:.0%}) |"
        )
    ranked = factors.sort_values()
    out += ["", "Factors, lowest to highest: " + ", ".join(f"{g} {f:.2f}" for g, f in ranked.items()) + "."]
    short = every[every["within_share"] < perfmodel.FAMILY_TARGET]["family"]
    for fam in short:
        part = left[left["family"] == fam]
        worst = part.assign(a=part["error_pct"].abs()).sort_values("a", ascending=False).head(6)
        out += [
            "",
            f"In {fam}, no term of the GPU alone reaches the target: what is left differs between "
            "workloads and precisions on the same GPU. Its largest errors with every GPU's factor applied:",
            "",
        ]
        out += pair_rows(worst)
    return out
