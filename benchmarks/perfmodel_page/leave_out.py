"""The efficiency fit checked on what it never saw: one GPU, then one publication, left out
(docs/accuracy/perfmodel.md)."""

from __future__ import annotations

import pandas as pd

from .._report import table_head


def _left_out_rows(frame: pd.DataFrame) -> list[str]:
    """A leave-one-out frame (:func:`gpukit.perfmodel.leave_one_gpu_out`) as table rows."""
    return [
        f"| {r['held_out']} | {r['family']} | {r['pairs']} | {r['median_abs_error_pct']:.1f}% | "
        f"{r['max_abs_error_pct']:.1f}% | {r['within_15_pct']} | {r['winners_right']} | {r['fitted']} |"
        for _, r in frame.iterrows()
    ]


def leave_out_sections(logo: pd.DataFrame, loso: pd.DataFrame) -> list[str]:
    """The fit checked on a GPU, then on a publication, it never saw."""
    return (
        [
            "",
            "## Leave one GPU out",
            "",
            "The factors refitted without one GPU's measurements, then graded on the pairs with that GPU only.",
            "",
            *table_head(
                "| held out | family | pairs | median abs error | max abs error | within ±15 % | winners right "
                "| refitted factors |",
                "llllllll",
            ),
        ]
        + _left_out_rows(logo)
        + [
            "",
            "## Leave one source out",
            "",
            "The factors fitted without one publication, then graded on its pairs (another harness, "
            "framework version and batch sizes).",
            "",
            *table_head(
                "| graded on | family | pairs | median abs error | max abs error | within ±15 % | winners right "
                "| fitted on the others |",
                "llllllll",
            ),
        ]
        + _left_out_rows(loso)
    )
