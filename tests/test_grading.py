"""gpukit.grading: pairs, the pair table and its summaries, on small frames worked out by hand."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from gpukit import grading, perfmodel
from gpukit.grading import LLM_SPEED, TRAINING_THROUGHPUT, Tolerance


def runs() -> pd.DataFrame:
    """Two sources' runs of one workload. Source s: A 100, B 50, C 105 published, predicted 100, 55,
    95. Source t: A 10 (no prediction), B 20, C 16, predicted 25 and 30. A non-range index, to show
    that pairs are positions."""
    return pd.DataFrame(
        {
            "source": ["s", "s", "s", "t", "t", "t"],
            "workload": ["w"] * 6,
            "gpu": ["A", "B", "C", "A", "B", "C"],
            "gpus": [1, 1, 1, 1, 2, 1],
            "published": [100.0, 50.0, 105.0, 10.0, 20.0, 16.0],
            "predicted": [100.0, 55.0, 95.0, math.nan, 25.0, 30.0],
        },
        index=[10, 11, 12, 13, 14, 15],
    )


def table(tolerance: Tolerance = TRAINING_THROUGHPUT, **kw) -> pd.DataFrame:
    r = runs()
    return grading.grade_pairs(r, ["source", "workload"], r["published"], r["predicted"], tolerance, **kw)


# by hand, the four pairs with a prediction on both sides, faster first by the published figure:
# (A, B) of s: published 100/50 = 2.0, predicted 100/55; (C, A) of s: 105/100 = 1.05 (no winner
# called: not more than 10 % apart), predicted 95/100; (C, B) of s: 105/50 = 2.1, predicted 95/55;
# (B, C) of t: 20/16 = 1.25, predicted 25/30 (the winner called wrong). t's pairs with A have no
# prediction.
PUBLISHED = [2.0, 1.05, 2.1, 1.25]
PREDICTED = [100 / 55, 0.95, 95 / 55, 25 / 30]
ERRORS = [100 * (p / q - 1) for p, q in zip(PREDICTED, PUBLISHED)]  # -9.1, -9.5, -17.7, -33.3


def test_pairs_are_positions_faster_first_within_each_group():
    r = runs()
    assert grading.faster_first(r, ["source"], r["published"]) == [
        (0, 1),
        (2, 0),
        (2, 1),
        (4, 3),
        (5, 3),
        (4, 5),
    ]
    # with predictions, a pair where either side has none is left out
    assert grading.faster_first(r, ["source"], r["published"], r["predicted"]) == [
        (0, 1),
        (2, 0),
        (2, 1),
        (4, 5),
    ]
    # groups sorted, or in order of appearance; of equal figures the earlier row comes first
    mixed = pd.DataFrame({"g": ["y", "x", "y", "x"], "v": [3.0, 1.0, 3.0, 2.0]})
    assert grading.faster_first(mixed, ["g"], mixed["v"]) == [(3, 1), (0, 2)]
    assert grading.faster_first(mixed, ["g"], mixed["v"], sort=False) == [(0, 2), (3, 1)]


def test_the_pair_table_by_hand():
    t = table()
    assert list(t.columns) == [
        "source",
        "workload",
        "gpu_a",
        "gpu_b",
        "published_speedup",
        "predicted_speedup",
        "error_pct",
        "decisive",
        "winner_right",
        "within_tolerance",
    ]
    assert list(zip(t["source"], t["gpu_a"], t["gpu_b"])) == [
        ("s", "A", "B"),
        ("s", "C", "A"),
        ("s", "C", "B"),
        ("t", "B", "C"),
    ]
    assert t["published_speedup"].tolist() == pytest.approx(PUBLISHED)
    assert t["predicted_speedup"].tolist() == pytest.approx(PREDICTED)
    assert t["error_pct"].tolist() == pytest.approx(ERRORS)
    assert t["decisive"].tolist() == [True, False, True, True]
    assert t["winner_right"].dtype == object and t["winner_right"].tolist() == [True, None, True, False]
    # ±15 %: 9.1 and 9.5 % are within, 17.7 and 33.3 % are not; ±20 % takes 17.7 % in too
    assert t["within_tolerance"].tolist() == [True, True, False, False]
    assert table(LLM_SPEED)["within_tolerance"].tolist() == [True, True, True, False]


def test_columns_carried_from_each_side_and_from_the_faster():
    t = table(shared=["source"], each=("gpu", "gpus"))
    assert list(t.columns[:5]) == ["source", "gpu_a", "gpus_a", "gpu_b", "gpus_b"]
    assert t["gpus_a"].tolist() == [1, 1, 1, 2] and t["gpus_b"].tolist() == [1, 1, 1, 1]


def test_pairs_without_a_prediction_can_be_kept():
    """Kept, they count as pairs that miss: NaN error, not within, and a called winner not right."""
    t = table(skip_missing=False)
    assert len(t) == 6
    missing = t[t["gpu_b"] == "A"].iloc[-2:]  # t's (B, A) and (C, A): published 2.0 and 1.6
    assert missing["published_speedup"].tolist() == pytest.approx([2.0, 1.6])
    assert missing["predicted_speedup"].isna().all() and missing["error_pct"].isna().all()
    assert missing["within_tolerance"].tolist() == [False, False]
    assert missing["winner_right"].tolist() == [False, False]


def test_summaries_by_hand():
    s = grading.summarize(table())
    assert list(s) == list(grading.SUMMARY_KEYS)
    assert s["pairs"] == 4 and s["within_tolerance"] == 2
    assert s["median_abs_error_pct"] == pytest.approx((abs(ERRORS[1]) + abs(ERRORS[2])) / 2)  # 13.6
    assert s["max_abs_error_pct"] == pytest.approx(100 / 3)
    assert s["decisive_pairs"] == 3 and s["winners_right"] == 2
    assert grading.summarize(table(LLM_SPEED))["within_tolerance"] == 3
    empty = grading.summarize(pd.DataFrame())
    assert empty["pairs"] == 0 and empty["winners_right"] == 0 and math.isnan(empty["median_abs_error_pct"])


def test_summaries_per_group_with_the_target():
    by = grading.summarize_by(table(), "source", TRAINING_THROUGHPUT)
    assert list(by.columns) == ["source", *grading.SUMMARY_KEYS, "within_share", "meets_target"]
    s, t = by.iloc[0], by.iloc[1]
    # s: 2 of 3 within ±15 % (below 90 %), both decisive winners right; t: none within, its one winner wrong
    assert (s["pairs"], s["within_tolerance"], s["decisive_pairs"], s["winners_right"]) == (3, 2, 2, 2)
    assert s["within_share"] == pytest.approx(2 / 3) and not s["meets_target"]
    assert (t["pairs"], t["within_tolerance"], t["winners_right"]) == (1, 0, 0) and not t["meets_target"]
    # at ±20 % all three of s land within and it meets the target; t still calls its winner wrong
    llm = grading.summarize_by(table(LLM_SPEED), ["source", "workload"], LLM_SPEED)
    assert llm["meets_target"].tolist() == [True, False] and llm["workload"].tolist() == ["w", "w"]
    # no pairs: no share, and no target met
    none = grading.with_target(grading.summarize(pd.DataFrame()), TRAINING_THROUGHPUT)
    assert math.isnan(none["within_share"]) and none["meets_target"] is False


def test_a_group_of_one_grades_nothing():
    r = runs().drop_duplicates("source")
    assert grading.faster_first(r, ["source"], r["published"]) == []
    assert grading.grade_pairs(r, ["source"], r["published"], r["predicted"], TRAINING_THROUGHPUT).empty


def test_tolerances_are_named_for_what_they_grade():
    assert (
        TRAINING_THROUGHPUT.speedup,
        TRAINING_THROUGHPUT.winner_margin,
        TRAINING_THROUGHPUT.target_share,
    ) == (
        0.15,
        0.10,
        0.90,
    )
    assert (LLM_SPEED.speedup, LLM_SPEED.winner_margin, LLM_SPEED.target_share) == (0.20, 0.10, 0.90)
    with pytest.raises(dataclasses.FrozenInstanceError):
        TRAINING_THROUGHPUT.speedup = 0.5  # type: ignore[misc]
    assert TRAINING_THROUGHPUT.decisive(np.array([1.1, 1.1001])).tolist() == [False, True]
    assert TRAINING_THROUGHPUT.within(2.0, np.array([1.72, 1.68])).tolist() == [True, False]
    # the performance model's names read the training tolerance
    assert perfmodel.RATIO_TOLERANCE == TRAINING_THROUGHPUT.speedup
    assert perfmodel.WINNER_MARGIN == TRAINING_THROUGHPUT.winner_margin
    assert perfmodel.FAMILY_TARGET == TRAINING_THROUGHPUT.target_share
