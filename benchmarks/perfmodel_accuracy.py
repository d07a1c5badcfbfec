"""How right is gpukit's performance model? Grade it against published measurements.

Predicts every row of ``data/reference_benchmarks.csv`` at its source's batch size, sequence
length, precision and GPU count; compares predicted with published speedups for every pair of
GPUs from one source, per workload family (CNN, transformer), and every N-GPU run with the same
source's single GPU (scaling); refits the efficiency factors, and checks that fit by leaving
each GPU out and each source out. Writes Markdown.

    .venv/bin/python benchmarks/perfmodel_accuracy.py --write docs/perfmodel-accuracy.md
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pandas as pd
from _report import publish

from gpukit import bandwidth_rates, matmul_rates, perfmodel, specs


def _pct(v: float) -> str:
    return f"{v:+.1f}%"


def _pair_rows(frame: pd.DataFrame) -> list[str]:
    out = [
        "| source | workload | precision | faster | slower | published | predicted | error |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for _, r in frame.iterrows():
        out.append(
            f"| {r['source']} | {r['workload']} | {r['precision']} | {r['gpu_a']} | {r['gpu_b']} | "
            f"{r['published_speedup']:.3f} | {r['predicted_speedup']:.3f} | {_pct(r['error_pct'])} |"
        )
    return out


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
        "| GPU | " + " | ".join(cols) + " | median against its columns |",
        "|---|" + "---:|" * (len(cols) + 1),
    ]
    for gpu, r in grid.iterrows():
        cells = [f"{r[c]:.2f}" if pd.notna(r[c]) else "" for c in cols]
        out.append(f"| {gpu} | " + " | ".join(cells) + f" | {r['_apart']:.2f} |")
    return out


def _gpu_factor_section(ref: pd.DataFrame, ratios: pd.DataFrame, table: pd.DataFrame, cat) -> list[str]:
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
        f"| family | pairs | within ±15 % now | with the {furthest}'s factor alone | with every GPU's factor |",
        "|---|---:|---:|---:|---:|",
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
        out += _pair_rows(worst)
    return out


#: Where a row's note names the framework it ran (the run folder's sys_pytorch.txt, as the notes
#: quote it: "reports PyTorch 1.9.0a0+df837d0"), the version; the grading itself never reads it.
_FRAMEWORK_VERSION = re.compile(r"PyTorch (\d+\.\d+)")


def _software_section(ref: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """Same-source pairs whose two runs used the same framework version, against pairs across
    versions: how much of the error one source's change of software between its runs carries."""
    single = ref[ref["gpus"].fillna(1).astype(int) == 1]
    version = {}
    for _, r in single.iterrows():
        m = _FRAMEWORK_VERSION.search(str(r["note"]))
        version[(r["source"], r["gpu"], r["workload"], r["precision"])] = m.group(1) if m else None
    keys = ["source", "workload", "precision"]
    pairs = table.assign(
        va=[
            version.get((r["source"], r["gpu_a"], r["workload"], r["precision"]))
            for _, r in table[keys + ["gpu_a"]].iterrows()
        ],
        vb=[
            version.get((r["source"], r["gpu_b"], r["workload"], r["precision"]))
            for _, r in table[keys + ["gpu_b"]].iterrows()
        ],
    )
    pairs = pairs[pairs["va"].notna() & pairs["vb"].notna()]
    rows = []
    for (src, fam), part in pairs.groupby(["source", "family"]):
        versions = sorted(set(part["va"]) | set(part["vb"]))
        if len(versions) < 2:
            continue
        cells = []
        for sub in (part[part["va"] == part["vb"]], part[part["va"] != part["vb"]]):
            cells.append(f"{int(sub['within_tolerance'].sum())} of {len(sub)}" if len(sub) else "none")
        missed = ~part["within_tolerance"]
        rows.append(
            f"| {src} | {fam} | {', '.join(versions)} | {cells[0]} | {cells[1]} | "
            f"{int((missed & (part['va'] != part['vb'])).sum())} of {int(missed.sum())} |"
        )
    if not rows:
        return []
    return [
        "",
        "### Pairs across software versions",
        "",
        "A same-source pair assumes the source ran both GPUs one way. Where the rows' notes name the "
        "PyTorch version of each run (the run folders' `sys_pytorch.txt`), a source that changed its software "
        "between runs splits its pairs in two: both runs on one version, or on two. A diagnostic: the "
        "grading above keeps every pair.",
        "",
        f"| source | family | PyTorch versions | within ±{perfmodel.RATIO_TOLERANCE * 100:.0f} %, same version | "
        "across versions | misses across versions |",
        "|---|---|---|---:|---:|---:|",
    ] + rows


def _refit_verdict(ref: pd.DataFrame, fitted, cat) -> str:
    d = perfmodel.DEFAULT_EFFICIENCY
    if (fitted.tensor, fitted.cuda, fitted.elementwise, fitted.memory) == (
        d.tensor,
        d.cuda,
        d.elementwise,
        d.memory,
    ):
        return " (the defaults)."
    return ": " + perfmodel.refit_verdict(ref, fitted, d, cat)[1] + "."


def _update_section(ref: pd.DataFrame, table: pd.DataFrame, cat) -> list[str]:
    """The grading with every source's optimizer update priced per tensor, against as the sources run it."""
    fused = ref[ref["update"] == "fused"]
    if fused.empty:
        return []
    plain = perfmodel.summarize_by_family(
        perfmodel.validation_table(ref.assign(update="per-tensor"), catalogue=cat)
    ).set_index("family")
    now = perfmodel.summarize_by_family(table).set_index("family")
    out = [
        "",
        "### The optimizer's update, as each script runs it",
        "",
        "A training step ends with the optimizer's update, which reads every weight, gradient and slot. "
        "`data/reference_benchmarks.csv` says how each source's script runs it (the `update` column): the "
        f"{len(fused)} rows of {', '.join(sorted(fused['workload'].unique()))} in "
        f"{', '.join(sorted(fused['precision'].unique()))} use a fused multi-tensor Adam (one pass at a streaming "
        "kernel's bandwidth, one dispatch), the rest one update per tensor (priced like any elementwise op).",
        "",
        "| family | within ±15 %, every update per tensor | within ±15 %, as the scripts run it |",
        "|---|---:|---:|",
    ]
    for fam in now.index:
        out.append(
            f"| {fam} | {plain.loc[fam, 'within_tolerance']} of {plain.loc[fam, 'pairs']} | "
            f"{now.loc[fam, 'within_tolerance']} of {now.loc[fam, 'pairs']} |"
        )
    return out


def _issue_section(ref: pd.DataFrame, table: pd.DataFrame, cat) -> list[str]:
    """The grading with elementwise work at the FP32 peak instead of the SMs' issue rate."""
    from gpukit.perfmodel import roofline

    saved = roofline.issue_tflops
    try:
        roofline.issue_tflops = lambda gpu: float(gpu["fp32_tflops"])
        fp32 = perfmodel.summarize_by_family(perfmodel.validation_table(ref, catalogue=cat)).set_index(
            "family"
        )
        fp32_error = perfmodel.fit_error(ref, catalogue=cat)
        refit = perfmodel.fit_efficiency(ref, cat)
        refit_error = perfmodel.fit_error(ref, refit, cat)
        refit_table = perfmodel.summarize_by_family(perfmodel.validation_table(ref, refit, cat)).set_index(
            "family"
        )
    finally:
        roofline.issue_tflops = saved
    now = perfmodel.summarize_by_family(table).set_index("family")
    out = [
        "",
        "### Elementwise work: the SMs' issue rate, not the FP32 peak",
        "",
        "Normalisation, activation and pooling kernels spend most of their instructions on indexing, "
        "conversions and reductions rather than FP32 arithmetic, so the model runs them at what the SMs "
        "issue (`gpukit.specs.issue_tflops`: SMs x 128 thread-instructions per clock x boost clock), not at "
        "the FP32 peak. The two are the same on Volta, Turing and GA100 (64 FP32 lanes per SM); GA10x, Ada "
        "and Hopper doubled their FP32 lanes, and their datasheet FP32 peak, without issuing more "
        "instructions. Graded both ways, with the same efficiencies and with the FP32 peak's own refit "
        f"({refit.tensor:g}, {refit.cuda:g}, {refit.elementwise:g}, {refit.memory:g} for tensor, CUDA-core, "
        f"elementwise, memory):",
        "",
        "| family | within ±15 %, FP32 peak | the same, refitted | within ±15 %, issue rate |",
        "|---|---:|---:|---:|",
    ]
    for fam in now.index:
        out.append(
            f"| {fam} | {fp32.loc[fam, 'within_tolerance']} of {fp32.loc[fam, 'pairs']} | "
            f"{refit_table.loc[fam, 'within_tolerance']} of {refit_table.loc[fam, 'pairs']} | "
            f"{now.loc[fam, 'within_tolerance']} of {now.loc[fam, 'pairs']} |"
        )
    out += [
        "",
        f"Mean absolute log error of the speedups: {fp32_error:.4f} at the FP32 peak ({refit_error:.4f} "
        f"refitted), {perfmodel.fit_error(ref, catalogue=cat):.4f} at the issue rate.",
    ]
    return out


#: The bytes per SM per clock cycle the elementwise term is graded at (0: without it).
SM_BYTES_SCAN = (0.0, 4.0, 8.0, 12.0, 16.0, 24.0, 32.0)


def _scan_rows(ref: pd.DataFrame, cat, name: str, values) -> tuple[list[str], dict, pd.Series]:
    """The grading with the efficiency field ``name`` at each of ``values`` (every other factor at its
    default): a table row per value, the pairs within ±15 % and the log error
    at each (:func:`gpukit.perfmodel.scan_error`, the quantity the efficiencies are fitted to)."""
    d = perfmodel.DEFAULT_EFFICIENCY
    errors = perfmodel.scan_error(ref, name, values, catalogue=cat)
    rows, within = [], {}
    for k in values:
        t = perfmodel.validation_table(ref, replace(d, **{name: k}), cat)
        by = perfmodel.summarize_by_family(t).set_index("family")
        within[k] = int(by["within_tolerance"].sum())
        text = "0 (without the term)" if not k else f"{k:g}" + (" (default)" if k == getattr(d, name) else "")
        rows.append(
            f"| {text} | "
            + " | ".join(
                f"{by.loc[f, 'within_tolerance']} of {by.loc[f, 'pairs']}" for f in ("CNN", "transformer")
            )
            + f" | {int(by['winners_right'].sum())} of {int(by['decisive_pairs'].sum())} | {errors[k]:.4f} |"
        )
    return rows, within, errors


def _scan_verdict(errors: pd.Series, name: str, unit: str) -> str:
    """Where the log error is lowest, and whether the default moves there (the efficiencies' rule:
    a constant moves only where that lowers the error by more than the margin)."""
    best, now = errors.idxmin(), errors[getattr(perfmodel.DEFAULT_EFFICIENCY, name)]
    if best == getattr(perfmodel.DEFAULT_EFFICIENCY, name):
        verdict = ", the default"
    else:
        verdict = (
            f"; the default's {now:.4f} is {(now - errors[best]) / now:.1%} higher, within "
            f"{perfmodel.REFIT_MARGIN:.0%}, so it stays"
        )
    return (
        f"The log error is lowest at {best:g} {unit} ({errors[best]:.4f}; {errors[0.0]:.4f} without the "
        f"term){verdict}."
    )


_SCAN_HEADER = "| {} | CNN: within ±15 % | transformer: within ±15 % | winners right | log error |"


def _sm_bytes_section(ref: pd.DataFrame, cat) -> list[str]:
    """The elementwise kernels' second limit, the SMs' loads and stores, scanned."""
    d = perfmodel.DEFAULT_EFFICIENCY
    values = sorted(set(SM_BYTES_SCAN) | {d.sm_bytes_per_cycle})
    rows, within, errors = _scan_rows(ref, cat, "sm_bytes_per_cycle", values)
    out = [
        "",
        "### Elementwise kernels: DRAM and the SMs' loads and stores",
        "",
        "A normalisation, activation or residual kernel moves its bytes from DRAM through the SMs' load and "
        "store path, with its indexing and conversions between. The model charges it both: its bytes over "
        "the bandwidth (x the memory efficiency) plus its bytes over SMs x boost clock x "
        "`sm_bytes_per_cycle` (`gpukit.perfmodel.Efficiency`). The two limits do not overlap fully, so the "
        "times add, as rates in series do (a hard cap, below, does less). A GPU with many fast SMs against "
        "its bandwidth (the RTX 4090: 128 SMs at 2.52 GHz "
        "over 1008 GB/s) gets through these kernels faster than its bandwidth alone says, and one with wide "
        "HBM against fewer SMs (the A100 and H100) slower. The grading scanned (every other factor at its "
        "default), with the mean absolute log error of the speedups, which the efficiencies are fitted to:",
        "",
        _SCAN_HEADER.format("bytes per SM per cycle"),
        "|---|---:|---:|---:|---:|",
    ] + rows
    most = max(within, key=within.get)
    capped = _capped_errors(ref, [k for k in values if k], cat)
    out += [
        "",
        _scan_verdict(errors, "sm_bytes_per_cycle", "bytes per SM per cycle") + " The most pairs land "
        f"within ±15 % at {most:g} ({within[most]}; {within[0.0]} without the term). As a hard cap instead "
        f"(the slower of the two limits alone), the lowest log error is {capped.min():.4f}, at "
        f"{capped.idxmin():g} bytes per SM per cycle.",
        "",
    ] + _left_out(ref, "sm_bytes_per_cycle", values, cat)
    return out


#: The shares of the L2 cache the on-chip cache term is graded at (0: without it).
L2_SHARE_SCAN = (0.0, 0.25, 0.5, 0.75, 1.0)


def _l2_section(ref: pd.DataFrame, cat) -> list[str]:
    """The on-chip cache term: what the L2 holds of the kernel before's output, scanned, with the
    catalogue's L2 sizes and where each comes from."""
    d = perfmodel.DEFAULT_EFFICIENCY
    values = sorted(set(L2_SHARE_SCAN) | {d.l2_share})
    rows, within, errors = _scan_rows(ref, cat, "l2_share", values)
    sized = cat.dropna(subset=["l2_cache_mib"]).sort_values(["l2_cache_mib", "gpu"])
    unsized = sorted(set(cat["gpu"]) - set(sized["gpu"]))
    most = max(within, key=within.get)
    out = [
        "",
        "### On-chip cache: what the L2 holds of the kernel before's output",
        "",
        "An elementwise kernel (a normalisation, an activation, a residual add, a softmax) mostly reads what "
        "the kernel before it has just written: a layer's input in the forward pass, its output gradient in "
        "the backward (`gpukit.perfmodel.OpCost.reread`). Where that tensor fits in a share of the GPU's L2 "
        "cache (`l2_share`, `gpukit.perfmodel.Efficiency`), the read comes from the L2 and moves no DRAM bytes; "
        "it still passes through the SMs' loads and stores, and the writes still reach DRAM, as the cache "
        "writes back what it evicts. The catalogue's L2 sizes (`l2_cache_mib`, `l2_source_url` in "
        "`data/gpus.csv`) are what each GPU's driver reports (CUDA's deviceQuery, `cudaDeviceProp.l2CacheSize`), "
        "in published logs that name the device:",
        "",
        "| L2 (MiB) | GPUs |",
        "|---:|---|",
    ]
    for mib, group in sized.groupby("l2_cache_mib", sort=True):
        out.append(f"| {mib:g} | {', '.join(group['gpu'])} |")
    if unsized:
        out += [
            "",
            f"No device report was reached for {', '.join(unsized)}: the term leaves them out (all their "
            "reads from DRAM).",
        ]
    out += [
        "",
        _l2_fits_text(ref, cat) + " The grading scanned:",
        "",
        _SCAN_HEADER.format("share of the L2"),
        "|---|---:|---:|---:|---:|",
    ] + rows
    out += [
        "",
        _scan_verdict(errors, "l2_share", "of the L2") + f" The most pairs land within ±15 % at {most:g} "
        f"({within[most]}; {within[0.0]} without the term).",
        "",
    ] + _left_out(ref, "l2_share", values, cat)
    return out


def _l2_fits_text(ref: pd.DataFrame, cat) -> str:
    """In how many published single-GPU BERT runs a layer's output (batch x tokens x hidden) fits in
    the GPU's L2, and on which GPUs: the batch sizes grow with the card's memory."""
    runs = ref[(ref["gpus"] == 1) & (ref["workload"].map(perfmodel.family) == "transformer")]
    l2 = cat.set_index("gpu")["l2_cache_mib"] * 2**20
    sizes = [
        (
            r["gpu"],
            perfmodel.hidden_state_bytes(
                r["workload"], int(r["batch_size"]), r["precision"], int(r["seq_len"])
            ),
        )
        for _, r in runs.iterrows()
    ]
    fits = sorted({gpu for gpu, size in sizes if size <= l2.get(gpu, 0)})
    largest = max(sizes, key=lambda item: item[1])
    return (
        f"The published runs' batch sizes grow with the card's memory, so a layer's output (batch x tokens x "
        f"hidden size) fits in the L2 in {sum(size <= l2.get(gpu, 0) for gpu, size in sizes)} of the "
        f"{len(sizes)} single-GPU BERT runs, on {', '.join(fits)}; the largest is {largest[1] / 1e6:.0f} MB "
        f"({largest[0]})."
    )


def _left_out(ref: pd.DataFrame, name: str, values, cat) -> list[str]:
    """The constant ``name`` chosen without each publication in turn, and graded on that publication's
    pairs with it and without the term: whether the choice carries to measurements it did not see."""
    d = perfmodel.DEFAULT_EFFICIENCY
    parts = []
    for source in sorted(ref["source"].unique()):
        held = ref[ref["source"] == source]
        without = perfmodel.validation_table(held, replace(d, **{name: 0.0}), cat)
        if without.empty:  # one GPU alone in that publication: no pair to grade
            continue
        k = perfmodel.scan_error(ref[ref["source"] != source], name, values, catalogue=cat).idxmin()
        chosen = perfmodel.validation_table(held, replace(d, **{name: k}), cat)
        parts.append(
            f"{source}: {k:g} chosen without it, {int(chosen['within_tolerance'].sum())} of {len(chosen)} "
            f"of its pairs within ±15 % with it, {int(without['within_tolerance'].sum())} without the term"
        )
    return ["Chosen on the other publications and graded on the one left out: " + "; ".join(parts) + "."]


def _capped_errors(ref: pd.DataFrame, values, cat) -> pd.Series:
    """The log error with the SMs' loads and stores as a hard cap on an elementwise kernel's memory
    time (the longer of the two) rather than a time of its own added to it."""
    from gpukit.perfmodel import roofline

    saved = roofline.op_times

    def capped(placed, eff):  # the model's own two times, the longer taken instead of their sum
        compute, added = saved(placed, eff)
        _, dram = saved(placed, replace(eff, sm_bytes_per_cycle=0.0))
        return compute, np.maximum(dram, added - dram)

    roofline.op_times = capped
    try:
        return perfmodel.scan_error(ref, "sm_bytes_per_cycle", values, catalogue=cat)
    finally:
        roofline.op_times = saved


def _rates_section(
    ref: pd.DataFrame,
    table: pd.DataFrame,
    scaling: pd.DataFrame,
    cat,
    *,
    title: str,
    intro: str,
    rates: pd.DataFrame,
    typical: float,
    value: str,
    unit: str,
    datasheet: str,
    flag: str,
    without_label: str,
    with_label: str,
) -> list[str]:
    """Published measurements of one rate per GPU (``rates``: ``gpukit.matmul_rates`` or
    ``gpukit.bandwidth_rates``), and the grading with the model's ``flag`` off and on."""
    plain = replace(perfmodel.DEFAULT_EFFICIENCY, **{flag: False})
    without = perfmodel.summarize_by_family(perfmodel.validation_table(ref, plain, cat)).set_index("family")
    with_ = perfmodel.summarize_by_family(table).set_index("family")
    scaling_without = perfmodel.scaling_validation(ref, plain, cat)
    unmeasured = sorted(set(cat["gpu"]) - set(rates["gpu"]))
    out = [
        "",
        f"### {title}",
        "",
        intro,
        "",
        f"| GPU | runs | sources | lowest–highest {unit} | median {unit} | {datasheet} | share |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for _, r in rates.sort_values("share").iterrows():
        out.append(
            f"| {r['gpu']} | {r['runs']} | {r['sources']} | {r['low']:g}–{r['high']:g} | {r[value]:.1f} | "
            f"{r[f'datasheet_{value}']:g} | {r['share']:.0%} |"
        )
    out += [
        "",
        f"The {len(unmeasured)} catalogue GPUs no run names ({', '.join(unmeasured)}) are taken at the "
        f"median share, {typical:.0%}.",
        "",
        f"| family | within ±15 %, {without_label} | within ±15 %, {with_label} |",
        "|---|---:|---:|",
    ]
    for fam in with_.index:
        out.append(
            f"| {fam} | {without.loc[fam, 'within_tolerance']} of {without.loc[fam, 'pairs']} | "
            f"{with_.loc[fam, 'within_tolerance']} of {with_.loc[fam, 'pairs']} |"
        )
    if not scaling.empty:
        out.append(
            f"| scaling | {int(scaling_without['within_tolerance'].sum())} of {len(scaling_without)} | "
            f"{int(scaling['within_tolerance'].sum())} of {len(scaling)} |"
        )
    return out


def _sustained_section(ref: pd.DataFrame, table: pd.DataFrame, scaling: pd.DataFrame, cat) -> list[str]:
    """The measured matmul rates the tensor cores run at, and the grading with and without them."""
    rates = matmul_rates.rates(catalogue=cat)
    intro = (
        "A datasheet's tensor peak assumes the boost clock on every SM; under a long matrix multiply a GPU "
        "runs at the clock its board power limit and cooling allow. `data/matmul_rates.csv` holds published "
        "measurements of the largest dense FP16/BF16 matmul rate (two maximum-achievable-matmul shape "
        "searches and one crowd-sourced square-matmul harness, every run with its source, harness and "
        "software); a GPU's rate is the median of its runs, and the model runs its tensor cores at that "
        "share of the datasheet (`gpukit.matmul_rates`). These are measurements of other publications, "
        "not fitted to the graded speeds."
    )
    return _rates_section(
        ref,
        table,
        scaling,
        cat,
        title="Sustained matmul rates",
        intro=intro,
        rates=rates,
        typical=matmul_rates.typical_share(rates),
        value="tflops",
        unit="TFLOPS",
        datasheet="datasheet dense FP16",
        flag="sustained",
        without_label="datasheet peaks",
        with_label="measured rates",
    )


def _bandwidth_section(ref: pd.DataFrame, table: pd.DataFrame, scaling: pd.DataFrame, cat) -> list[str]:
    """The measured streaming bandwidths memory moves at, and the grading with and without them."""
    rates = bandwidth_rates.rates(catalogue=cat)
    typical = bandwidth_rates.typical_share(rates)
    intro = (
        "A datasheet's bandwidth is the memory interface's peak, bus width times data rate; what a kernel "
        "streams depends on the memory technology, its controllers and the clocks. "
        "`data/bandwidth_rates.csv` holds published measurements of plain streaming kernels (BabelStream's "
        "Copy and Triad, CUDA's bandwidthTest device to device, PyTorch tensor copies, and SpareCores' "
        "nvbandwidth device-local copies on cloud machines, doubled as nvbandwidth counts the bytes copied "
        "once; each counting the bytes read and written, every run with its source, kernel and harness); a "
        "GPU's rate is the median of its runs, and the model moves bytes at that share of the datasheet "
        "bandwidth times the memory and stream efficiencies (`gpukit.bandwidth_rates`). These are "
        "measurements of other publications, not fitted to the graded speeds. A GDDR6 card's ECC costs it "
        "bandwidth: SpareCores' L40S streams 657 GB/s with ECC on and 763 with it off, its T4 235 and 284 "
        "(the rows say which); the cloud machines mostly run it on, so the medians are mostly ECC-on figures. "
        "Without the measurements (the left column) every GPU streams the measured GPUs' median share, "
        f"{typical:.0%}, so that the efficiencies keep their meaning."
    )
    return _rates_section(
        ref,
        table,
        scaling,
        cat,
        title="Measured memory bandwidth",
        intro=intro,
        rates=rates,
        typical=typical,
        value="gbs",
        unit="GB/s",
        datasheet="datasheet GB/s",
        flag="measured_bandwidth",
        without_label="the median share for every GPU",
        with_label="each GPU's measured share",
    )


def steady_section(ref, d, cat) -> list[str]:
    """The SQuAD runs the logs time, graded on the steady rate between two logged steps against the
    rate over the whole run (a diagnostic; both on the same runs, so no pair mixes the two)."""
    squad = ref["workload"].str.endswith("-squad")
    timed = ref[squad & ref["steady_throughput"].notna()]
    if timed.empty:
        return []
    steady = timed.assign(processed_throughput=timed["steady_throughput"])
    share = (timed["steady_throughput"] / timed["processed_throughput"] - 1) * 100
    now, then = (
        perfmodel.summarize_by_family(perfmodel.validation_table(r, d, cat)).set_index("family")
        for r in (timed, steady)
    )
    sc_now, sc_then = (perfmodel.scaling_validation(r, d, cat) for r in (timed, steady))
    keys_now, keys_then = (
        perfmodel.key_pairs(perfmodel.validation_table(r, d, cat)) for r in (timed, steady)
    )
    untimed = ref[squad & ref["steady_throughput"].isna()]
    steps = ref.loc[squad & ref["steps_run"].notna(), "steps_run"]
    out = [
        "",
        "#### Steady rates from the logs' timestamps",
        "",
        "The published time runs from the loop's start, so it includes the first steps' warm-up (autotuning, "
        f"memory allocation), a share that depends on how many steps the run took ({int(steps.min())} to "
        f"{int(steps.max())} here). `run_squad.py` logs a timestamped line every 50 steps and calls "
        "`loss.item()` every step, so two logged steps time the GPU: `timed_from`, `timed_to` and "
        "`timed_seconds` (the last two logged steps within one epoch, after the first step) give "
        f"`steady_throughput`, {share.median():+.1f} % against what the run processed over its whole time "
        f"(median; {share.min():+.1f} % to {share.max():+.1f} %). {len(untimed)} SQuAD rows have no such stretch "
        f"({', '.join(sorted(untimed['gpu'].unique()))}: no log, or runs too short). Graded on the {len(timed)} "
        "timed runs both ways, as a diagnostic (the grading above keeps the whole-run rates, which every row "
        "has):",
        "",
        "| family | pairs | within ±15 %, whole run | within ±15 %, steady | winners right, whole run | "
        "winners right, steady | median error, whole run | median error, steady |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for fam in now.index:
        a, b = now.loc[fam], then.loc[fam]
        out.append(
            f"| {fam} | {a['pairs']} | {a['within_tolerance']} | {b['within_tolerance']} | "
            f"{a['winners_right']} of {a['decisive_pairs']} | {b['winners_right']} of {b['decisive_pairs']} | "
            f"{a['median_abs_error_pct']:.1f}% | {b['median_abs_error_pct']:.1f}% |"
        )
    out.append(
        f"| scaling | {len(sc_now)} | {int(sc_now['within_tolerance'].sum())} | "
        f"{int(sc_then['within_tolerance'].sum())} | — | — | "
        f"{sc_now['error_pct'].abs().median():.1f}% | {sc_then['error_pct'].abs().median():.1f}% |"
    )
    if len(keys_now):
        out += [
            "",
            "The seed pairs among them:",
            "",
            "| workload | precision | faster | slower | published, whole run | published, steady "
            "| error, whole run | error, steady |",
            "|---|---|---|---|---:|---:|---:|---:|",
        ]
        for (_, a), (_, b) in zip(keys_now.iterrows(), keys_then.iterrows()):
            out.append(
                f"| {a['workload']} | {a['precision']} | {a['gpu_a']} | {a['gpu_b']} | "
                f"{a['published_speedup']:.3f} | {b['published_speedup']:.3f} | {_pct(a['error_pct'])} | "
                f"{_pct(b['error_pct'])} |"
            )
    return out


def squad_loop_section(ref, d, cat, scaling) -> list[str]:
    """The SQuAD runs whose figure counts steps the run never took, and the grading without the correction."""
    short = ref[ref["steps_run"].notna() & (ref["steps_run"] < ref["counted_steps"])]
    if short.empty:
        return []
    as_printed = perfmodel.scaling_validation(ref.assign(processed_throughput=ref["throughput"]), d, cat)
    out = [
        "",
        "### What the SQuAD runs processed",
        "",
        "Lambda's BERT figures are `run_squad.py`'s `training_sequences_per_second`: `train_batch_size x "
        "max_steps x world_size / e2e_train_time`. Its loop stops after `max_steps + 1` steps, or earlier when "
        "`--num_train_epochs` (2) passes over the process's shard of the 88 641 SQuAD features run out; at a "
        "large global batch they run out first, and the figure counts steps the run never took. Each row's "
        "`counted_steps`, `epochs` and `train_examples` are read from its log, and the grading uses what the run "
        "processed (`gpukit.perfmodel.grading.squad_steps`). The runs that stopped early:",
        "",
        "| source | GPU | workload | precision | GPUs | batch a GPU | steps counted | steps run | published "
        "seq/s | processed seq/s |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for _, r in short.sort_values(["source", "gpu", "workload", "precision", "gpus"]).iterrows():
        out.append(
            f"| {r['source']} | {r['gpu']} | {r['workload']} | {r['precision']} | {r['gpus']} | "
            f"{r['batch_size']} | {r['counted_steps']} | {r['steps_run']} | {r['throughput']:.0f} | "
            f"{r['processed_throughput']:.0f} |"
        )
    unlogged = ref[ref["workload"].str.endswith("-squad") & ref["steps_run"].isna()]
    if len(unlogged):
        out += [
            "",
            f"{len(unlogged)} SQuAD rows have no log to read ("
            + ", ".join(sorted(unlogged["gpu"].unique()))
            + "): they are graded as printed; had they run "
            "`max_steps + 1` steps, as the logged single-GPU runs did, they read up to 1 % low.",
        ]
    out += steady_section(ref, d, cat)
    out += [
        "",
        f"Graded on the figures as printed instead: {int(as_printed['within_tolerance'].sum())} of "
        f"{len(as_printed)} within ±15 % (highest published efficiency "
        f"{as_printed['published_efficiency'].max():.2f}); on what the runs processed: "
        f"{int(scaling['within_tolerance'].sum())} of {len(scaling)} (highest "
        f"{scaling['published_efficiency'].max():.2f}).",
    ]
    return out


def _overview(ref: pd.DataFrame, table: pd.DataFrame, fitted, cat) -> list[str]:
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


def _family_section(fams: pd.DataFrame, scaling: pd.DataFrame) -> list[str]:
    """Each family's figures against its target, and the N-GPU speedups'."""
    target = f"≥ {perfmodel.FAMILY_TARGET:.0%} of speedups within ±{perfmodel.RATIO_TOLERANCE:.0%}"
    out = [
        "",
        "## Per workload family",
        "",
        f"Target per family: {target}, and every winner right where the publications differ by more than 10 %.",
        "",
        "| family | pairs | within ±15 % | winners right (gap > 10 %) | median abs. error | largest abs. error "
        "| target |",
        "|---|---:|---:|---:|---:|---:|---|",
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


def _largest_errors(table: pd.DataFrame, fams: pd.DataFrame) -> list[str]:
    """Per family, the ten pairs furthest off, the GPUs in them, and the winners called wrong."""
    out = []
    for fam in fams["family"]:
        part = table[table["family"] == fam]
        worst = part.assign(a=part["error_pct"].abs()).sort_values("a", ascending=False).head(10)
        counts = pd.concat([worst["gpu_a"], worst["gpu_b"]]).value_counts()
        wrong = part[part["decisive"] & (part["winner_right"] == False)]  # noqa: E712 -- object column
        out += ["", f"### {fam}: the largest errors", ""] + _pair_rows(worst)
        out += ["", "GPUs in these pairs: " + ", ".join(f"{g} ({n})" for g, n in counts.items()) + "."]
        if len(wrong):
            out += ["", f"Winners called wrong ({len(wrong)}):", ""] + _pair_rows(wrong)
    return out


#: What the largest errors point to, before the sections that test each term of the model.
_DIAGNOSIS = [
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


def _ratio_section(ratios: pd.DataFrame) -> list[str]:
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


def _tf32_section(single: pd.DataFrame, d, cat) -> list[str]:
    """The float32 runs graded with TF32 on and off: which the sources' runs used."""
    out = [
        "",
        "### Did the float32 runs use TF32?",
        "",
        "The sources' FP32 runs do not say whether PyTorch ran matrix multiplies as TF32 on Ampere and later "
        "(its default changed in 1.12; NVIDIA's containers may override it). Graded both ways, the "
        "measurements answer: the model with TF32 on (`float32`, the kit's rule) against TF32 off (`fp32`).",
        "",
        "| source | workload | pairs | within ±15 %, TF32 on | within ±15 %, TF32 off | median error on / off |",
        "|---|---|---:|---:|---:|---|",
    ]
    fp32_rows = single[single["precision"] == "float32"]
    for (src, wl), sub in fp32_rows.groupby(["source", "workload"], sort=True):
        on = perfmodel.summarize_validation(perfmodel.validation_table(sub, d, cat))
        if not on["pairs"]:  # one GPU alone in this source: nothing to compare
            continue
        off = perfmodel.summarize_validation(perfmodel.validation_table(sub.assign(precision="fp32"), d, cat))
        out.append(
            f"| {src} | {wl} | {on['pairs']} | {on['within_tolerance']} | {off['within_tolerance']} | "
            f"{on['median_abs_error_pct']:.1f}% / {off['median_abs_error_pct']:.1f}% |"
        )
    return out


def _host_section(ref: pd.DataFrame, d, cat, fams: pd.DataFrame) -> list[str]:
    """The host's time per layer operation, scanned."""
    out = [
        "",
        "### The host's time per layer operation",
        "",
        "A framework dispatches every layer's forward, backward and update from the host; the device waits "
        "for what it cannot overlap, and on a fast GPU that is a large share of the step. The model adds "
        "`host_op_s` per layer operation (single-kernel benchmarks pay only a launch). The grading with "
        "it scanned (every other factor at its default):",
        "",
        "| host time per layer op | " + " | ".join(f"{f}: within ±15 %" for f in fams["family"]) + " |",
        "|---|" + "---:|" * len(fams),
    ]
    within = {}
    for host in sorted({0.0, 25e-6, 50e-6, d.host_op_s, 200e-6, 400e-6}):
        t = perfmodel.validation_table(ref, replace(d, host_op_s=host), cat)
        by = perfmodel.summarize_by_family(t).set_index("family")
        within[host] = int(by["within_tolerance"].sum())
        out.append(
            f"| {host * 1e6:g} µs{' (default)' if host == d.host_op_s else ''} | "
            + " | ".join(f"{by.loc[f, 'within_tolerance']} of {by.loc[f, 'pairs']}" for f in fams["family"])
            + " |"
        )
    best = max(within, key=within.get)
    return out + [
        "",
        f"The most pairs land within ±15 % at {best * 1e6:g} µs ({within[best]}; "
        f"{within[0.0]} without the term).",
    ]


def _several_gpus_section(
    ref: pd.DataFrame, d, cat, scaling: pd.DataFrame, scaling_backward: pd.DataFrame
) -> list[str]:
    """The N-GPU speedups: with and without the all-reduce overlapped, the largest errors, the SQuAD loop."""
    out = [
        "",
        "## Several GPUs",
        "",
        "Each multi-GPU measurement against the same source's single GPU of that kind: published and predicted "
        "speedup of N GPUs over one, as scaling efficiency (speedup / N). The model's link is the one the GPUs "
        "have (NVLink on SXM boards, no peer-to-peer between GeForce cards, PCIe peer-to-peer otherwise), or "
        "host memory where the source's harness disabled NCCL's peer-to-peer transport.",
        "",
    ]
    if scaling.empty:
        return out
    for name, frame in (
        ("the all-reduce after the backward pass (the default)", scaling),
        ("the all-reduce overlapped with the backward pass", scaling_backward),
    ):
        out.append(
            f"- With {name}: {int(frame['within_tolerance'].sum())} of {len(frame)} within ±15 %, "
            f"median error {frame['error_pct'].abs().median():.1f}%."
        )
    out += [
        "",
        "The default follows the measurements: these runs scale as if the exchange were not hidden "
        "behind the backward pass.",
        "",
        "| source | GPU | workload | precision | GPUs | model's link | published efficiency | "
        "predicted efficiency | error |",
        "|---|---|---|---|---:|---|---:|---:|---:|",
    ]
    worst = scaling.assign(a=scaling["error_pct"].abs()).sort_values("a", ascending=False)
    for _, r in worst.head(20).iterrows():
        out.append(
            f"| {r['source']} | {r['gpu']} | {r['workload']} | {r['precision']} | {r['gpus']} | "
            f"{r['link']} | {r['published_efficiency']:.2f} | {r['predicted_efficiency']:.2f} | "
            f"{_pct(r['error_pct'])} |"
        )
    out += [
        "",
        f"The {min(20, len(worst))} largest errors of {len(worst)}. GeForce RTX 3090 runs slower on "
        "8 GPUs than on one are what the source published (their notes in `data/reference_benchmarks.csv` "
        "flag them); no link or overlap explains them.",
    ]
    return out + squad_loop_section(ref, d, cat, scaling)


def _left_out_rows(frame: pd.DataFrame) -> list[str]:
    """A leave-one-out frame (:func:`gpukit.perfmodel.leave_one_gpu_out`) as table rows."""
    return [
        f"| {r['held_out']} | {r['family']} | {r['pairs']} | {r['median_abs_error_pct']:.1f}% | "
        f"{r['max_abs_error_pct']:.1f}% | {r['within_15_pct']} | {r['winners_right']} | {r['fitted']} |"
        for _, r in frame.iterrows()
    ]


def _leave_out_sections(logo: pd.DataFrame, loso: pd.DataFrame) -> list[str]:
    """The fit checked on a GPU, then on a publication, it never saw."""
    return (
        [
            "",
            "## Leave one GPU out",
            "",
            "The factors refitted without one GPU's measurements, then graded on the pairs with that GPU only.",
            "",
            "| held out | family | pairs | median abs error | max abs error | within ±15 % | winners right "
            "| refitted factors |",
            "|---|---|---|---|---|---|---|---|",
        ]
        + _left_out_rows(logo)
        + [
            "",
            "## Leave one source out",
            "",
            "The factors fitted without one publication, then graded on its pairs (another harness, "
            "framework version and batch sizes).",
            "",
            "| graded on | family | pairs | median abs error | max abs error | within ±15 % | winners right "
            "| fitted on the others |",
            "|---|---|---|---|---|---|---|---|",
        ]
        + _left_out_rows(loso)
    )


def markdown() -> str:
    t0 = time.perf_counter()
    cat = specs.load_catalogue()
    ref = perfmodel.load_reference(catalogue=cat)
    d = perfmodel.DEFAULT_EFFICIENCY
    table = perfmodel.validation_table(ref, d, cat)
    fams = perfmodel.summarize_by_family(table)
    scaling = perfmodel.scaling_validation(ref, d, cat)
    scaling_backward = perfmodel.scaling_validation(ref, d, cat, overlap="backward")
    fitted = perfmodel.fit_efficiency(ref, cat)
    logo = perfmodel.leave_one_gpu_out(ref, cat)
    loso = perfmodel.leave_one_source_out(ref, cat)
    keys = perfmodel.key_pairs(table)
    ratios = perfmodel.throughput_ratios(ref, d, cat)
    out = (
        _overview(ref, table, fitted, cat)
        + _family_section(fams, scaling)
        + ["", "### The pairs this kit exists for", ""]
        + _pair_rows(keys)
        + _largest_errors(table, fams)
        + _DIAGNOSIS
        + _issue_section(ref, table, cat)
        + _sm_bytes_section(ref, cat)
        + _l2_section(ref, cat)
        + _sustained_section(ref, table, scaling, cat)
        + _bandwidth_section(ref, table, scaling, cat)
        + _update_section(ref, table, cat)
        + _ratio_section(ratios)
        + _gpu_factor_section(ref, ratios, table, cat)
        + _software_section(ref, table)
        + _tf32_section(ref[ref["gpus"] == 1], d, cat)
        + _host_section(ref, d, cat, fams)
        + _several_gpus_section(ref, d, cat, scaling, scaling_backward)
        + _leave_out_sections(logo, loso)
    )
    out += ["", f"Total time: {time.perf_counter() - t0:.1f} s.", ""]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="FILE", help="write the Markdown here (default: print it)")
    args = parser.parse_args(argv)
    text = markdown()
    publish(text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
