"""Serving at batch graded on published max-throughput runs (a section of docs/accuracy/llm.md)."""

from __future__ import annotations

import numpy as np

from gpukit import grading, llm
from gpukit.llm import baselines as llm_baselines
from gpukit.llm import serving_reference as sr

from .._report import table_head


def summary_cells(s: dict) -> str:
    if not s["pairs"]:
        return "– | – | –"
    return (
        f"{s['within_tolerance']} of {s['pairs']} ({s['within_tolerance'] / s['pairs']:.0%}) | "
        f"{s['winners_right']} of {s['decisive_pairs']} | {s['median_abs_error_pct']:.1f}%"
    )


def peak_baseline(ref, column: str) -> dict:
    """The summary of serving's naive prediction (:func:`gpukit.llm.baselines.serving_ratio`)."""
    return grading.summarize(llm_baselines.serving_ratio(ref, column))


def _pair_line(r) -> str:
    """One graded pair as a list item: what ran, published and predicted ratio, the error."""
    return (
        f"- {r.source}, {r.model} {r.weights} at {r.input_tokens} + {r.output_tokens} tokens: "
        f"{r.gpus_a}x {r.gpu_a} over {r.gpus_b}x {r.gpu_b}, published {r.published_speedup:.2f}, "
        f"predicted {r.predicted_speedup:.2f} ({r.error_pct:+.0f}%)."
    )


def serving_section() -> list[str]:
    """The serving model against every same-source pair, per source and per GPU count, beside two
    naive baselines, with each source held out of the fit of the profile's serving constants."""
    ref = llm.load_serving_reference()
    table = llm.serving_validation(ref)
    e = llm.ENGINES["trt-llm"]
    out = [
        "",
        "## Serving at batch",
        "",
        f"`gpukit llm --batch max` against {len(ref)} published max-throughput runs of TensorRT-LLM "
        f"(`data/reference_serving.csv`: NVIDIA's performance overviews, {', '.join(sorted(set(ref['engine'])))}; "
        "all requests queued at once, in-flight batching, one tensor-parallel group). Each run is predicted at the "
        "largest batch its GPUs' memory holds, for the number of requests the page's dataset table gives, and every "
        "pair of GPU configurations one page version measured on the same model, weights and lengths is graded on "
        f"its ratio: within ±{sr.SERVING_TOLERANCE.speedup:.0%}, the winner called past a "
        f"{sr.SERVING_TOLERANCE.winner_margin:.0%} gap. The profile's serving constants "
        "(`gpukit.llm.TRT_LLM_SERVING`): "
        f"a scheduler cap of {e.max_batch} sequences and all-reduces at {e.link_share:g} of the link's bandwidth, with "
        f"each step's activations reserved for {e.step_tokens} tokens (the runtime limit the page's report prints).",
        "",
        *table_head("| prediction | pairs within ±25% | winners right | median error |", "lrrr"),
        f"| the model | {summary_cells(grading.summarize(table))} |",
        f"| GPUs x FP16 tensor peak | {summary_cells(peak_baseline(ref, 'fp16_tensor_tflops'))} |",
        f"| GPUs x memory bandwidth | {summary_cells(peak_baseline(ref, 'memory_bandwidth_gbs'))} |",
    ]
    plain = {"max_batch": None, "link_share": 1.0}
    with sr._with("trt-llm", plain):
        plain_summary = grading.summarize(sr.serving_validation(ref))
        out.append(f"| the model, no cap and full link bandwidth | {summary_cells(plain_summary)} |")
    out += [
        "",
        "Per source, and with the source held out of the fit (the grid "
        + ", ".join(
            f"{k} {', '.join('none' if v is None else f'{v:g}' for v in vals)}"
            for k, vals in sr.SERVING_GRID.items()
        )
        + ", fitted on the other sources, then this source's pairs graded):",
        "",
        *table_head(
            "| source | in sample | fitted without it | held out: within ±25% | winners right | median error |",
            "lllrrr",
        ),
    ]
    held = llm.held_out_sources(ref).set_index("source")
    for source in sorted(ref["source"].unique()):
        mine = grading.summarize(table[table["source"] == source])
        h = held.loc[source]
        values = ", ".join(f"{k} {'none' if v is None else f'{v:g}'}" for k, v in h["values"].items())
        inside = f"{mine['within_tolerance']} of {mine['pairs']}"
        out.append(f"| {source} | {inside} | {values} | {summary_cells(h.to_dict())} |")
    out += [
        "",
        "By the GPU counts of the pair (the faster first):",
        "",
        *table_head(
            "| GPUs, faster | GPUs, slower | pairs within ±25% | winners right | median error |", "rrrrr"
        ),
    ]
    for (a, b), part in table.groupby(["gpus_a", "gpus_b"]):
        out.append(f"| {a} | {b} | {summary_cells(grading.summarize(part))} |")
    wrong = table[(table["decisive"] == True) & (table["winner_right"] == False)]  # noqa: E712
    if len(wrong):
        out += ["", "Winners called wrong:", "", *map(_pair_line, wrong.itertuples())]
    worst = table.assign(abs_error=np.abs(table["error_pct"])).nlargest(5, "abs_error")
    out += ["", "The five largest errors:", "", *map(_pair_line, worst.itertuples())]
    return out
