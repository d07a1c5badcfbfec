"""The GPUs people buy now (docs/accuracy/perfmodel.md): the model on the same-source pairs among
current-generation GPUs, beside the two naive baselines; each current GPU's held-out error; and the
band a GPU no run graded is quoted with (:func:`gpukit.perfmodel.error_bands`)."""

from __future__ import annotations

import pandas as pd

from gpukit import perfmodel
from gpukit import precision as prec
from gpukit.grading import Tolerance

#: The architectures a buyer sees at the top of most lists today.
CURRENT = ("Hopper", "Blackwell", "Ada Lovelace")
#: The target for current-generation pairs: 85% within ±20%, every winner right past a 15% gap.
TOLERANCE = Tolerance(speedup=0.20, winner_margin=0.15, target_share=0.85)


def _baseline(row: pd.Series, gpus: pd.DataFrame, column: str | None) -> float:
    """A pair's speedup by a bare ratio: of the tensor peak at the pair's precision (``column``
    None) or of a catalogue column."""
    a, b = gpus.loc[row["gpu_a"]], gpus.loc[row["gpu_b"]]
    if column is None:
        return prec.math_unit(a, row["precision"])[1] / prec.math_unit(b, row["precision"])[1]
    return float(a[column]) / float(b[column])


def _grade(published: pd.Series, predicted: pd.Series) -> dict:
    """``published`` speedups (the faster over the slower) against ``predicted`` ones."""
    decisive = TOLERANCE.decisive(published)
    return {
        "within": int(TOLERANCE.within(published, predicted).sum()),
        "median": float((predicted / published - 1).abs().median() * 100),
        "decisive": int(decisive.sum()),
        "right": int((decisive & (predicted > 1)).sum()),
    }


def current_pairs(table: pd.DataFrame, cat: pd.DataFrame) -> pd.DataFrame:
    """The graded single-GPU pairs whose two GPUs are both of a current architecture."""
    arch = dict(zip(cat["gpu"], cat["architecture"], strict=True))
    keep = table["gpu_a"].map(arch).isin(CURRENT) & table["gpu_b"].map(arch).isin(CURRENT)
    return table[keep]


def current_section(table: pd.DataFrame, cat: pd.DataFrame) -> list[str]:
    """The current-generation section: the pairs, the baselines, the held-out GPUs and the bands."""
    arch = dict(zip(cat["gpu"], cat["architecture"], strict=True))
    current = [g for g in cat["gpu"] if arch[g] in CURRENT]
    pairs = current_pairs(table, cat)
    gpus = cat.set_index("gpu", drop=False)
    lines = [
        "",
        "## The current generation",
        "",
        f"GPUs of the {', '.join(CURRENT)} architectures, graded on the same-source pairs whose two GPUs are "
        f"both of them. Target: {TOLERANCE.target_share:.0%} within ±{TOLERANCE.speedup:.0%}, and every winner "
        f"right where the published gap exceeds {TOLERANCE.winner_margin:.0%}. The baselines are a bare ratio "
        "of the datasheet tensor peaks at the pair's precision and a bare ratio of memory bandwidths.",
        "",
    ]
    if pairs.empty:
        return [*lines, "No published source measured two of these GPUs the same way.", ""]
    lines += [
        f"| family | pairs | predictor | within ±{TOLERANCE.speedup:.0%} | median error | winners right "
        f"(gap > {TOLERANCE.winner_margin:.0%}) |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for fam, group in pairs.groupby("family", sort=True):
        published = group["published_speedup"].astype(float)
        for name, predicted in (
            ("the model", group["predicted_speedup"].astype(float)),
            ("tensor-peak ratio", group.apply(_baseline, axis=1, args=(gpus, None))),
            ("bandwidth ratio", group.apply(_baseline, axis=1, args=(gpus, "memory_bandwidth_gbs"))),
        ):
            g = _grade(published, predicted)
            lines.append(
                f"| {fam} | {len(group)} | {name} | {g['within']} of {len(group)} | {g['median']:.1f}% | "
                f"{g['right']} of {g['decisive']} |"
            )
    graded = sorted(set(pairs["gpu_a"]) | set(pairs["gpu_b"]))
    lines += [
        "",
        f"Graded in these pairs: {', '.join(graded)}; the sources: "
        f"{', '.join(sorted(pairs['source'].unique()))}.",
        "",
        "Each current GPU that published runs graded, left out of a fit to its family's other pairs and "
        "graded on its pairs with every GPU (`gpukit.perfmodel.held_out_errors`, what the bands below rest "
        "on):",
        "",
        "| held out | family | median abs error |",
        "|---|---|---:|",
    ]
    for fam in ("CNN", "transformer"):
        held = perfmodel.held_out_errors(fam)
        lines += [f"| {g} | {fam} | {held[g]:.1f}% |" for g in current if g in held]
    lines += [
        "",
        "The band each current GPU is quoted with (`gpukit.perfmodel.error_bands`): a graded GPU its "
        "family's median error; one no run graded the largest held-out error of its architecture's GPUs, "
        "or of any GPU where none of its architecture was graded.",
        "",
        "| GPU | CNN (ResNet-50) | transformer (BERT) |",
        "|---|---|---|",
    ]
    cnn = perfmodel.error_bands("resnet50", current, cat)
    bert = perfmodel.error_bands("bert-base-squad", current, cat)
    lines += [f"| {g} | {cnn[g].text} | {bert[g].text} |" for g in current]
    lines += [
        "",
        "What the model does not hold, and no published run here lets it be measured: Blackwell's "
        "second-generation transformer engine and FP8 paths in training frameworks (every graded run "
        "trains in FP16 or TF32), and clocks under each board's power limit beyond the sustained "
        "matrix-multiply share.",
        "",
    ]
    alone = [g for g in current if g not in graded]
    if alone:
        lines += [
            f"In no graded pair: {', '.join(alone)}. Their predictions are quoted with the wider band above.",
            "",
        ]
    return lines
