"""Single-GPU decode and prefill, published over predicted per GPU, as modelled and with parts of
the model changed (docs/accuracy/llm.md)."""

from __future__ import annotations

from gpukit import llm

from .._report import table_head
from .pipeline import several_gpus_section
from .variants import engines, streaming_prompts, without_prefill_traffic


def decode_ratio_section(ref, cat) -> list[str]:
    """Single-GPU decode, published over predicted per GPU: as modelled, with every engine held to
    the per-SM cap, and with none."""
    out = [
        "",
        "## Decode, measured over predicted, per GPU",
        "",
        "Single-GPU text generation, every model, format and length: the median of published over predicted "
        "tokens/s as modelled (llama.cpp's decode held to the per-SM streaming cap, vLLM's not), then with "
        "every engine's decode held to the cap and with none. Ratios, not absolute speeds, are graded, so what "
        "matters is how alike they are across one source's GPUs.",
        "",
        *table_head(
            "| source | GPU | memory | configurations | as modelled | every engine capped | none capped |",
            "lllrrrr",
        ),
    ]
    single = ref[(ref["gpus"] == 1) & (ref["test"] == "tg")]
    modelled = single["throughput_tokens_s"] / llm.predict_reference(single)
    with engines("gemv_bytes_per_sm_cycle", llm.ENGINES["llama.cpp"].gemv_bytes_per_sm_cycle):
        capped = single["throughput_tokens_s"] / llm.predict_reference(single)
    with engines("gemv_bytes_per_sm_cycle", None):
        uncapped = single["throughput_tokens_s"] / llm.predict_reference(single)
    for source, gpu in sorted(set(zip(single["source"], single["gpu"]))):
        sel = (single["gpu"] == gpu) & (single["source"] == source)
        out.append(
            f"| {source} | {gpu} | {cat.loc[gpu, 'memory_type']} | {int(sel.sum())} | "
            f"{modelled[sel].median():.2f} | {capped[sel].median():.2f} | {uncapped[sel].median():.2f} |"
        )
    return out


def prefill_ratio_section(ref, cat) -> list[str]:
    """Single-GPU prompt processing, published over predicted per GPU at the shortest and longest
    prompt, with and without the memory traffic between the matrix multiplies."""
    single = ref[(ref["gpus"] == 1) & (ref["test"] == "pp")]
    if single.empty:
        return []
    with_traffic = single["throughput_tokens_s"] / llm.predict_reference(single)
    with streaming_prompts():
        uncapped = single["throughput_tokens_s"] / llm.predict_reference(single)
    with without_prefill_traffic():
        without = single["throughput_tokens_s"] / llm.predict_reference(single)
    short, long = single["tokens"].min(), single["tokens"].max()
    out = [
        "",
        "## Prefill, measured over predicted, per GPU",
        "",
        f"Single-GPU prompt processing, every model and format: the median of published over predicted tokens/s "
        f"at the shortest ({short}) and longest ({long}) prompt; then with the prompt's kernels other than the "
        "matrix multiplies at the streaming rate (no per-SM cap), and without the memory traffic "
        "between the matrix multiplies at all. Without the traffic the prediction barely slows as the prompt "
        "grows and the published speeds fall; with it the ratio stays level across prompt lengths. Without the "
        "cap, the HBM cards (the most bandwidth per SM) stand apart below the rest.",
        "",
        *table_head(
            f"| GPU | memory | rows | pp{short} | pp{long} | pp{short} no cap | pp{long} no cap | pp{short} no traffic "
            f"| pp{long} no traffic |",
            "llrrrrrrr",
        ),
    ]
    for gpu in sorted(single["gpu"].unique()):
        rows = single["gpu"] == gpu
        cells = [
            f"{frame[rows & (single['tokens'] == n)].median():.2f}"
            for frame in (with_traffic, uncapped, without)
            for n in (short, long)
        ]
        out.append(
            f"| {gpu} | {cat.loc[gpu, 'memory_type']} | {int(rows.sum())} | " + " | ".join(cells) + " |"
        )
    within = lambda r: f"{((r - 1).abs() <= llm.RATIO_TOLERANCE).mean():.0%}"  # noqa: E731
    out += [
        "",
        f"Absolute speeds within ±{llm.RATIO_TOLERANCE:.0%} of the published ones: {within(with_traffic)} "
        f"of these rows ({within(uncapped)} without the cap, {within(without)} without the traffic term).",
    ]
    return out + several_gpus_section(ref)
