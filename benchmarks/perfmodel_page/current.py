"""The GPUs people buy now (docs/accuracy/perfmodel.md): the model on the same-source pairs among
current-generation GPUs, single GPUs and whole systems, per publisher and beside the two naive
baselines; each current GPU's error when the fit never saw it; what the one stack that misses
needs; and the band a GPU no run graded is quoted with (:func:`gpukit.perfmodel.error_bands`)."""

from __future__ import annotations

import re
from dataclasses import replace

import pandas as pd

from gpukit import perfmodel

from .._report import table_head

#: The current architectures and how their pairs are judged: the performance model's.
CURRENT = perfmodel.grading.CURRENT_ARCHITECTURES
TOLERANCE = perfmodel.grading.CURRENT_TOLERANCE
#: The elementwise factors the stack scan tries (:data:`gpukit.perfmodel.FIT_GRID`'s).
STACK_GRID = perfmodel.FIT_GRID["elementwise"]


def publisher(source: str) -> str:
    """Who published a source's runs: MLPerf Training for every submitter's results (MLCommons
    publishes them, reviewed alike), else the source id without its year."""
    if "mlperf" in source:
        return "MLPerf Training"
    return re.sub(r"-\d{4}$", "", source)


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
    """The graded pairs (single GPUs or systems) whose two GPUs are both of a current architecture."""
    if table.empty:
        return table
    arch = dict(zip(cat["gpu"], cat["architecture"], strict=True))
    keep = table["gpu_a"].map(arch).isin(CURRENT) & table["gpu_b"].map(arch).isin(CURRENT)
    return table[keep]


def _pair_rows(pairs: pd.DataFrame, gpus: pd.DataFrame) -> list[str]:
    """One row per family and publisher (and the family's publishers together, where several): the
    model's share within the target, median error and winners, and each baseline's share within."""
    lines = [
        *table_head(
            f"| family | publisher | pairs | the model within ±{TOLERANCE.speedup:.0%} | median error | "
            f"winners right (gap > {TOLERANCE.winner_margin:.0%}) | tensor-peak ratio within | "
            "bandwidth ratio within |",
            "llrrrrrr",
        ),
    ]
    pairs = pairs.assign(publisher=pairs["source"].map(publisher))
    rows = []
    for fam, family_pairs in pairs.groupby("family", sort=True):
        groups = [(fam, name, group) for name, group in family_pairs.groupby("publisher", sort=True)]
        rows += groups + ([(fam, "all", family_pairs)] if len(groups) > 1 else [])
    if pairs["family"].nunique() > 1:
        rows.append(("all", "all", pairs))
    for fam, name, group in rows:
        published = group["published_speedup"].astype(float)
        model = _grade(published, group["predicted_speedup"].astype(float))
        peak = _grade(published, group.apply(perfmodel.grading.bare_ratio, axis=1, args=(gpus, None)))
        bandwidth = _grade(
            published, group.apply(perfmodel.grading.bare_ratio, axis=1, args=(gpus, "memory_bandwidth_gbs"))
        )
        n = len(group)
        lines.append(
            f"| {fam} | {name} | {n} | {model['within']} of {n} ({model['within'] / n:.1%}) | "
            f"{model['median']:.1f}% | {model['right']} of {model['decisive']} | "
            f"{peak['within']} of {n} | {bandwidth['within']} of {n} |"
        )
    return lines


def _bottom_line(name: str, pairs: pd.DataFrame) -> str:
    """One line of a kind of pair against the target: the share within, and the winners."""
    g = _grade(pairs["published_speedup"].astype(float), pairs["predicted_speedup"].astype(float))
    share = g["within"] / len(pairs)
    met = share >= TOLERANCE.target_share and g["right"] == g["decisive"]
    return (
        f"- **{name}:** {g['within']} of {len(pairs)} within ±{TOLERANCE.speedup:.0%} ({share:.1%}), winners right "
        f"in {g['right']} of {g['decisive']}: the target is {'met' if met else 'not met'}."
    )


def _misses(pairs: pd.DataFrame) -> str:
    """How many pairs land outside the target's band, and the GPUs in them, most often first."""
    out = pairs[
        ~TOLERANCE.within(pairs["published_speedup"].astype(float), pairs["predicted_speedup"].astype(float))
    ]
    if out.empty:
        return "Every pair lands within the band."
    counts = pd.concat([out["gpu_a"], out["gpu_b"]]).value_counts()
    named = ", ".join(f"{g} {n}" for g, n in counts.items())
    return (
        f"Outside ±{TOLERANCE.speedup:.0%}: {len(out)} of {len(pairs)} pairs; the GPUs in them, with how many: "
        f"{named}."
    )


def _sources(pairs: pd.DataFrame) -> str:
    graded = sorted(set(pairs["gpu_a"]) | set(pairs["gpu_b"]))
    return f"Graded in these pairs: {', '.join(graded)}; the sources: {', '.join(sorted(pairs['source'].unique()))}."


def current_section(
    table: pd.DataFrame,
    cat: pd.DataFrame,
    systems: pd.DataFrame | None = None,
    systems_held: pd.DataFrame | None = None,
) -> list[str]:
    """The current-generation section: single-GPU pairs (``table``, :func:`gpukit.perfmodel.validation_table`)
    and pairs of whole systems (``systems``, :func:`gpukit.perfmodel.system_validation`) among current
    GPUs with the baselines; each current GPU's error held out of the fit (``systems_held``,
    :func:`gpukit.perfmodel.held_out_systems` of the current system pairs); the bands."""
    arch = dict(zip(cat["gpu"], cat["architecture"], strict=True))
    current = [g for g in cat["gpu"] if arch[g] in CURRENT]
    pairs = current_pairs(table, cat)
    system_pairs = current_pairs(pd.DataFrame() if systems is None else systems, cat)
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
    if pairs.empty and system_pairs.empty:
        return [*lines, "No published source measured two of these GPUs the same way.", ""]
    lines += [
        _bottom_line(name, frame)
        for name, frame in (("One GPU against another", pairs), ("Whole systems", system_pairs))
        if not frame.empty
    ]
    lines.append("")
    if not pairs.empty:
        lines += [
            "### One GPU against another",
            "",
            *_pair_rows(pairs, gpus),
            "",
            _sources(pairs),
            "",
            _misses(pairs),
            "",
        ]
    if not system_pairs.empty:
        lines += [
            "### Whole systems against each other",
            "",
            "Servers of 4 or 8 GPUs of one kind against another kind's, by throughput per GPU, each "
            "predicted at its own GPU count, batch and link (`gpukit.perfmodel.system_validation`). The "
            "model is never fitted to a multi-GPU run, so every one of these pairs is outside its fit.",
            "",
            *_pair_rows(system_pairs, gpus),
            "",
            _sources(system_pairs),
            "",
            _misses(system_pairs),
            "",
        ]
    graded = set(pairs["gpu_a"]) | set(pairs["gpu_b"]) if not pairs.empty else set()
    held = {fam: perfmodel.held_out_errors(fam) for fam in ("CNN", "transformer")}
    held_sys = {}
    if systems_held is not None and not systems_held.empty:
        held_sys = {(r["held_out"], r["family"]): r for _, r in systems_held.iterrows()}
    lines += [
        "### Each GPU left out of the fit",
        "",
        "Each current GPU that published runs graded, left out of a fit to its family's other single-GPU "
        "pairs, then graded on its pairs with every GPU (`gpukit.perfmodel.held_out_errors`, what the bands "
        "below rest on) and on its current-generation system pairs (`gpukit.perfmodel.held_out_systems`):",
        "",
        *table_head(
            "| held out | family | single GPUs: median abs error | systems: median abs error | systems within ±15% |",
            "llrrr",
        ),
    ]
    for fam in ("CNN", "transformer"):
        for g in current:
            one, system = held[fam].get(g), held_sys.get((g, fam))
            if one is None and system is None:
                continue
            single_text = "—" if one is None else f"{one:.1f}%"
            system_text = "— | —"
            if system is not None:
                system_text = f"{system['median_abs_error_pct']:.1f}% | {system['within_15_pct']}"
            lines.append(f"| {g} | {fam} | {single_text} | {system_text} |")
    lines += [
        "",
        "The band each current GPU is quoted with (`gpukit.perfmodel.error_bands`): a graded GPU its "
        "family's median error or, where larger, its own held-out error; one no run graded the largest "
        "held-out error of its architecture's GPUs, or of any GPU where none of its architecture was graded.",
        "",
        *table_head("| GPU | CNN (ResNet-50) | transformer (BERT) |", "lll"),
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
    in_systems = set(system_pairs["gpu_a"]) | set(system_pairs["gpu_b"]) if not system_pairs.empty else set()
    alone = [g for g in current if g not in graded]
    if alone:
        only_systems = [g for g in alone if g in in_systems]
        lines += [
            f"In no graded single-GPU pair: {', '.join(alone)}. Their predictions are quoted with the wider "
            "band above"
            + (f"; {', '.join(only_systems)} only in the system pairs above." if only_systems else "."),
            "",
        ]
    return lines


def stack_section(
    systems: pd.DataFrame, ref: pd.DataFrame, cat: pd.DataFrame, source: str = "MLPerf"
) -> list[str]:
    """What the elementwise factor would have to be for ``source``'s system pairs (the publisher whose
    stack fuses its normalisation and activation kernels), and what each value does to the single-GPU
    grading the defaults were fitted on: the software term, measured."""
    mine = current_pairs(systems, cat)
    mine = mine[mine["source"].map(publisher).str.contains(source, case=False)]
    if mine.empty:
        return []
    multi = ref[ref["gpus"].fillna(1).astype(int) > 1]
    multi = multi[multi["source"].isin(mine["source"])]
    keys = ["source", "workload", "precision", "gpu_a", "gpus_a", "gpu_b", "gpus_b"]
    d = perfmodel.DEFAULT_EFFICIENCY
    lines = [
        f"### The {source} stack",
        "",
        f"{source}'s ResNet-50 recipe (MXNet, NHWC, batch normalisation fused with its activation and "
        "residual add, CUDA graphs) runs the normalisation and activation layers as few, fused kernels, "
        "where the eager PyTorch scripts the defaults were fitted to run each as its own. With the default "
        "elementwise factor the model rates the L40S (GDDR6 memory) too high against the HBM GPUs in these "
        "pairs. Each row re-grades with one elementwise factor (the share of the SMs' issue rate those layers "
        "reach), every other factor at its default:",
        "",
        *table_head(
            f"| elementwise | {source} system pairs within ±{TOLERANCE.speedup:.0%} | median error | "
            f"single-GPU pairs within ±{perfmodel.RATIO_TOLERANCE:.0%} (all GPUs) |",
            "rrrr",
        ),
    ]
    for value in sorted({*STACK_GRID, d.elementwise}):
        eff = replace(d, elementwise=value)
        again = perfmodel.system_validation(multi, eff, cat).merge(mine[keys])
        g = _grade(again["published_speedup"].astype(float), again["predicted_speedup"].astype(float))
        single = perfmodel.summarize_validation(perfmodel.validation_table(ref, eff, cat))
        mark = " (default)" if value == d.elementwise else ""
        lines.append(
            f"| {value:g}{mark} | {g['within']} of {len(again)} | {g['median']:.1f}% | "
            f"{single['within_tolerance']} of {single['pairs']} |"
        )
    lines += [
        "",
        "The factor describes the software, not the GPU: a buyer's own stack decides it, and the defaults "
        "stay fitted to the eager scripts most published single-GPU runs use. A fused, graph-captured stack "
        "is better predicted with `Efficiency(elementwise=...)` at the value that fits it above.",
        "",
    ]
    return lines
