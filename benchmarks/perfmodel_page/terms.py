"""The model's terms graded one at a time (docs/accuracy/perfmodel.md): elementwise work at the SMs'
issue rate, the SMs' loads and stores, the L2 cache and the host's time per layer operation, each
scanned or set against the model without it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from gpukit import perfmodel
from gpukit.perfmodel import roofline

from .._report import table_head


def issue_section(ref: pd.DataFrame, table: pd.DataFrame, cat) -> list[str]:
    """The grading with elementwise work at the FP32 peak instead of the SMs' issue rate."""
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
        *table_head(
            "| family | within ±15 %, FP32 peak | the same, refitted | within ±15 %, issue rate |", "lrrr"
        ),
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


def sm_bytes_section(ref: pd.DataFrame, cat) -> list[str]:
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
        *table_head(_SCAN_HEADER.format("bytes per SM per cycle"), "lrrrr"),
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


def l2_section(ref: pd.DataFrame, cat) -> list[str]:
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
        *table_head("| L2 (MiB) | GPUs |", "rl"),
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
        *table_head(_SCAN_HEADER.format("share of the L2"), "lrrrr"),
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


def host_section(ref: pd.DataFrame, d, cat, fams: pd.DataFrame) -> list[str]:
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
        *table_head(
            "| host time per layer op | " + " | ".join(f"{f}: within ±15 %" for f in fams["family"]) + " |",
            "l" + "r" * len(fams),
        ),
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
