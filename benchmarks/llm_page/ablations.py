"""The grading with one part of the model changed at a time, a line each (docs/accuracy/llm.md)."""

from __future__ import annotations

from dataclasses import replace

from gpukit import llm
from gpukit.specs import bandwidth_rates

from .variants import PER_SECOND_CAP, decode_cap_per_second, streaming_prompts


def ablations_section(ref) -> list[str]:
    """The grading with one part of the model changed at a time, a line each (:func:`_ablation`)."""
    datasheet = llm.validation_table(ref, efficiency=replace(llm.default_efficiency(), sustained=False))
    own = llm.validation_table(ref, efficiency=replace(llm.default_efficiency(), measured_bandwidth=True))
    with decode_cap_per_second():
        per_second = llm.validation_table(ref)
    with streaming_prompts():
        streaming = llm.validation_table(ref)
    return [
        "",
        _ablation("With the tensor cores at their datasheet peaks instead of the measured rates", datasheet),
        "",
        _ablation(
            "With each GPU's memory at its own share of its datasheet bandwidth in published copy "
            "kernels (`gpukit.specs.bandwidth_rates`, as the performance model streams) instead of the "
            f"measured GPUs' median share ({bandwidth_rates.shipped_typical_share():.0%})",
            own,
        ),
        "",
        _ablation(
            f"With llama.cpp's decode cap a rate per second ({PER_SECOND_CAP / 1e9:g} GB/s per SM, "
            "its best fit as such) instead of per clock cycle",
            per_second,
        ),
        "",
        _ablation(
            "With llama.cpp's prompt kernels at the streaming rate instead of the per-SM cap", streaming
        ),
    ]


def _ablation(label: str, table) -> str:
    """One line: each test's pairs within the tolerance under a variant of the model, and between single GPUs."""
    by = llm.summary_by_test(table, by_setting=True)
    return (
        label
        + ": "
        + "; ".join(
            f"{test.split(' (')[0]} {int(part['within_tolerance'].sum())} of {int(part['pairs'].sum())} within "
            f"±{llm.RATIO_TOLERANCE:.0%} ({int(one['within_tolerance'])} of {int(one['pairs'])} between single GPUs)"
            for test, part in by.groupby("test", sort=False)
            if part["pairs"].sum()
            for one in [part[part["setting"] == llm.SETTINGS[0]].iloc[0]]
        )
        + "."
    )
