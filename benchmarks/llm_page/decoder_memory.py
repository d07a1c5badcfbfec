"""The benchmark decoder's memory as measured on this device against the estimate (docs/accuracy/llm.md)."""

from __future__ import annotations

from .._report import table_head


def decoder_memory_section(info: dict, measured: list[tuple[dict, dict]]) -> list[str]:
    """The benchmark decoder's allocator peak on the device ``info`` describes
    (``gpukit.bench.device.describe_attached``) against the estimate of its shape: ``measured`` holds each
    size's parameters and what ``gpukit.llm.measure_decoder_memory`` gave for it."""
    out = [
        "",
        "## The benchmark decoder's memory, measured here",
        "",
        f"`gpukit bench`'s decoder workload (a LLaMA-shaped decoder with a KV cache), one prefill and one decode "
        f"step on {info['kind'].upper()} {info['name']}, each size in a fresh process: the allocator's peak "
        "against `gpukit.llm.inference_memory` of the same shape (its weights and KV cache at float32, the "
        "prompt's activations and attention scores; no runtime reserve).",
        "",
        *table_head(
            "| layers | hidden | batch | prompt | context | measured MiB | estimated MiB | error |",
            "rrrrrrrr",
        ),
    ]
    for p, got in measured:
        if got["status"] != "ok":
            out.append(
                f"| {p['layers']} | {p['hidden']} | {p['batch']} | {p['prompt']} | {p['context']} | "
                f"{got['status']} | | |"
            )
            continue
        out.append(
            f"| {p['layers']} | {p['hidden']} | {p['batch']} | {p['prompt']} | {p['context']} | "
            f"{got['measured_peak_bytes'] / 2**20:.1f} | {got['estimated_bytes'] / 2**20:.1f} | "
            f"{got['estimate_error']:+.1%} |"
        )
    return out
