"""How each source's software ran its runs, graded both ways (docs/accuracy/perfmodel.md): the
optimizer's update, the framework version of each run, TF32 in the float32 runs."""

from __future__ import annotations

import re

import pandas as pd

from gpukit import perfmodel

from .._report import table_head


def update_section(ref: pd.DataFrame, table: pd.DataFrame, cat) -> list[str]:
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
        *table_head(
            "| family | within ±15 %, every update per tensor | within ±15 %, as the scripts run it |", "lrr"
        ),
    ]
    for fam in now.index:
        out.append(
            f"| {fam} | {plain.loc[fam, 'within_tolerance']} of {plain.loc[fam, 'pairs']} | "
            f"{now.loc[fam, 'within_tolerance']} of {now.loc[fam, 'pairs']} |"
        )
    return out


#: Where a row's note names the framework it ran (the run folder's sys_pytorch.txt, as the notes
#: quote it: "reports PyTorch 1.9.0a0+df837d0"), the version; the grading itself never reads it.
_FRAMEWORK_VERSION = re.compile(r"PyTorch (\d+\.\d+)")


def software_section(ref: pd.DataFrame, table: pd.DataFrame) -> list[str]:
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
        *table_head(
            f"| source | family | PyTorch versions | within ±{perfmodel.RATIO_TOLERANCE * 100:.0f} %, same version | "
            "across versions | misses across versions |",
            "lllrrr",
        ),
    ] + rows


def tf32_section(single: pd.DataFrame, d, cat) -> list[str]:
    """The float32 runs graded with TF32 on and off: which the sources' runs used."""
    out = [
        "",
        "### Did the float32 runs use TF32?",
        "",
        "The sources' FP32 runs do not say whether PyTorch ran matrix multiplies as TF32 on Ampere and later "
        "(its default changed in 1.12; NVIDIA's containers may override it). Graded both ways, the "
        "measurements answer: the model with TF32 on (`float32`, the kit's rule) against TF32 off (`fp32`).",
        "",
        *table_head(
            "| source | workload | pairs | within ±15 %, TF32 on | within ±15 %, TF32 off | median error on / off |",
            "llrrrl",
        ),
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
