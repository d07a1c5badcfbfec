"""Grading predicted speedups against published ones, pair by pair, for every model the kit grades.

A publication's absolute figures carry its harness, software and clocks, so the kit grades speedups:
within a group of runs one source measured alike (the same workload, precision and mode for a
training throughput; the same model, weights, test and length for an LLM's speed), every pair of
runs, the faster first by the published figure, with the published and predicted speedup of the
faster over the slower. A :class:`Tolerance` says how near a predicted speedup must land, from
what gap on a winner is called, and what share of a group's pairs must land near for it to meet
its target; :data:`TRAINING_THROUGHPUT` and :data:`LLM_SPEED` are the two the kit grades with
(docs/accuracy/perfmodel.md and docs/accuracy/llm.md report them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Tolerance:
    """How a grading judges a predicted speedup: ``speedup``, the largest error (a share of the
    published speedup) a prediction may have and still land near; ``winner_margin``, the gap
    between two published results above which a winner is called; ``target_share``, the share of a
    group's pairs that must land near (with every called winner right) for it to meet its target."""

    speedup: float
    winner_margin: float = 0.10
    target_share: float = 0.90

    def decisive(self, published):
        """Whether a published speedup is large enough to call a winner."""
        return published > 1 + self.winner_margin

    def within(self, published, predicted):
        """Whether a predicted speedup lands within :attr:`speedup` of the published one."""
        return np.abs(predicted / published - 1) <= self.speedup


#: Training throughputs of CNNs and transformers, on one GPU and on several.
TRAINING_THROUGHPUT = Tolerance(speedup=0.15)
#: LLM decode and prefill speeds (tokens per second).
LLM_SPEED = Tolerance(speedup=0.20)

#: The figures :func:`summarize` gives, in this order unless asked for another.
SUMMARY_KEYS = (
    "pairs",
    "within_tolerance",
    "median_abs_error_pct",
    "max_abs_error_pct",
    "decisive_pairs",
    "winners_right",
)


def faster_first(
    frame: pd.DataFrame,
    groups: Sequence[str],
    published: Sequence[float],
    predicted: Sequence[float] | None = None,
    *,
    sort: bool = True,
) -> list[tuple[int, int]]:
    """Every pair of rows within each group of the ``groups`` columns of ``frame``, as positions
    ``(i, j)`` with row ``i`` the faster by ``published`` (one figure per row; of equal figures the
    earlier row first). Groups come in sorted order with ``sort``, else in order of appearance.
    With ``predicted`` (one per row), a pair where either row has no prediction (NaN) is skipped."""
    pub = np.asarray(published, float)
    pred = None if predicted is None else np.asarray(predicted, float)
    pairs = []
    for _, group in frame.reset_index(drop=True).groupby(list(groups), sort=sort):
        idx = list(group.index)
        for x in range(len(idx)):
            for y in range(x + 1, len(idx)):
                i, j = idx[x], idx[y]
                if pub[i] < pub[j]:
                    i, j = j, i
                if pred is not None and (np.isnan(pred[i]) or np.isnan(pred[j])):
                    continue
                pairs.append((i, j))
    return pairs


def pair_table(
    frame: pd.DataFrame,
    pairs: Sequence[tuple[int, int]],
    published: Sequence[float],
    predicted: Sequence[float],
    tolerance: Tolerance,
    *,
    shared: Sequence[str] = (),
    each: Sequence[str] = (),
) -> pd.DataFrame:
    """One row per pair of positions of ``frame`` (:func:`faster_first`): the ``shared`` columns
    (taken from the faster row), each of the ``each`` columns of the faster and the slower row
    (``gpu_a``, ``gpus_a``, then ``gpu_b``, ``gpus_b``), then ``published_speedup`` and
    ``predicted_speedup`` of the faster over the slower, ``error_pct``, ``decisive`` (the published
    gap calls a winner), ``winner_right`` (True or False where decisive, None elsewhere: an object
    column) and ``within_tolerance``. An empty frame, without columns, when there is no pair."""
    if not len(pairs):
        return pd.DataFrame()
    i, j = (np.array(side) for side in zip(*pairs))
    pub, pred = np.asarray(published, float), np.asarray(predicted, float)
    published_speedup, predicted_speedup = pub[i] / pub[j], pred[i] / pred[j]
    decisive = tolerance.decisive(published_speedup)
    a, b = frame.iloc[i].reset_index(drop=True), frame.iloc[j].reset_index(drop=True)
    carried = {c: a[c] for c in shared}
    carried.update({f"{c}_{side}": rows[c] for side, rows in (("a", a), ("b", b)) for c in each})
    return pd.DataFrame(
        {
            **carried,
            "published_speedup": published_speedup,
            "predicted_speedup": predicted_speedup,
            "error_pct": 100 * (predicted_speedup / published_speedup - 1),
            "decisive": decisive,
            "winner_right": pd.Series(
                [bool(r > 1) if d else None for r, d in zip(predicted_speedup, decisive)], dtype=object
            ),
            "within_tolerance": tolerance.within(published_speedup, predicted_speedup),
        }
    )


def grade_pairs(
    frame: pd.DataFrame,
    groups: Sequence[str],
    published: Sequence[float],
    predicted: Sequence[float],
    tolerance: Tolerance,
    *,
    shared: Sequence[str] | None = None,
    each: Sequence[str] = ("gpu",),
    sort: bool = True,
    skip_missing: bool = True,
) -> pd.DataFrame:
    """:func:`pair_table` of the :func:`faster_first` pairs of ``frame``'s ``groups``: ``shared``
    defaults to the group columns; with ``skip_missing``, pairs without a prediction are left out."""
    pairs = faster_first(frame, groups, published, predicted if skip_missing else None, sort=sort)
    return pair_table(
        frame,
        pairs,
        published,
        predicted,
        tolerance,
        shared=list(groups) if shared is None else shared,
        each=each,
    )


def summarize(table: pd.DataFrame) -> dict:
    """Headline figures of a pair table (:data:`SUMMARY_KEYS`, in that order): pairs,
    those within tolerance, median and largest absolute error, decisive pairs and the winners
    called right among them (NaN errors and zero counts for an empty table)."""
    if table.empty:
        figures = {
            "pairs": 0,
            "within_tolerance": 0,
            "median_abs_error_pct": np.nan,
            "max_abs_error_pct": np.nan,
            "decisive_pairs": 0,
            "winners_right": 0,
        }
    else:
        err = table["error_pct"].abs()
        decisive = table[table["decisive"]]
        figures = {
            "pairs": int(len(table)),
            "within_tolerance": int(table["within_tolerance"].sum()),
            "median_abs_error_pct": float(err.median()),
            "max_abs_error_pct": float(err.max()),
            "decisive_pairs": int(len(decisive)),
            "winners_right": int(decisive["winner_right"].eq(True).sum()),  # an object column
        }
    return {k: figures[k] for k in SUMMARY_KEYS}


def with_target(summary: dict, tolerance: Tolerance) -> dict:
    """``summary`` (:func:`summarize`) with ``within_share``, the share of its pairs within
    tolerance (NaN without pairs), and ``meets_target``: pairs, at least the tolerance's target
    share of them within, and every called winner right."""
    pairs = summary["pairs"]
    share = summary["within_tolerance"] / pairs if pairs else np.nan
    meets = bool(
        pairs and share >= tolerance.target_share and summary["winners_right"] == summary["decisive_pairs"]
    )
    return {**summary, "within_share": share, "meets_target": meets}


def summarize_by(table: pd.DataFrame, by: str | Sequence[str], tolerance: Tolerance) -> pd.DataFrame:
    """:func:`with_target` of :func:`summarize` for each group of ``table``'s ``by`` columns (sorted;
    only groups with pairs), one row each, the group's columns first."""
    columns = [by] if isinstance(by, str) else list(by)
    rows = []
    for labels, group in table.groupby(columns, sort=True):
        rows.append({**dict(zip(columns, labels)), **with_target(summarize(group), tolerance)})
    return pd.DataFrame(rows)
