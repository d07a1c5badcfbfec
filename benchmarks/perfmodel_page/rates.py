"""The published matmul rates and streaming bandwidths the model runs each GPU at, and the grading
with and without them (docs/accuracy/perfmodel.md)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from gpukit import perfmodel
from gpukit.specs import bandwidth_rates, matmul_rates

from .._report import table_head


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
    """Published measurements of one rate per GPU (``rates``: ``gpukit.specs.matmul_rates`` or
    ``gpukit.specs.bandwidth_rates``), and the grading with the model's ``flag`` off and on."""
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
        *table_head(
            f"| GPU | runs | sources | lowest–highest {unit} | median {unit} | {datasheet} | share |",
            "lrrlrrr",
        ),
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
        *table_head(f"| family | within ±15 %, {without_label} | within ±15 %, {with_label} |", "lrr"),
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


def sustained_section(ref: pd.DataFrame, table: pd.DataFrame, scaling: pd.DataFrame, cat) -> list[str]:
    """The measured matmul rates the tensor cores run at, and the grading with and without them."""
    rates = matmul_rates.rates(catalogue=cat)
    intro = (
        "A datasheet's tensor peak assumes the boost clock on every SM; under a long matrix multiply a GPU "
        "runs at the clock its board power limit and cooling allow. `data/matmul_rates.csv` holds published "
        "measurements of the largest dense FP16/BF16 matmul rate (two maximum-achievable-matmul shape "
        "searches and one crowd-sourced square-matmul harness, every run with its source, harness and "
        "software); a GPU's rate is the median of its runs, and the model runs its tensor cores at that "
        "share of the datasheet (`gpukit.specs.matmul_rates`). These are measurements of other publications, "
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


def bandwidth_section(ref: pd.DataFrame, table: pd.DataFrame, scaling: pd.DataFrame, cat) -> list[str]:
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
        "bandwidth times the memory and stream efficiencies (`gpukit.specs.bandwidth_rates`). These are "
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
