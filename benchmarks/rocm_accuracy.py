"""How right are gpukit's LLM answers on AMD GPUs? Serving with vLLM and SGLang, decode with llama.cpp.

Grades the serving model on published vLLM and SGLang runs of one source on AMD Instinct and
NVIDIA GPUs (``data/reference_serving_rocm.csv``), same engine against same engine, beside the
bare bandwidth and tensor-peak ratios. Fits ``llama.cpp-rocm``'s two constants (the share of the
datasheet bandwidth its decode streams at, the GPU's rate of unpacking quantised weights) on the
published decode runs of its source (``data/reference_llm.csv``, ``kyuz0-strix-halo-rocm``: one
device), then fits again without each model and predicts that model's run, beside the bare
datasheet bandwidth.

    .venv/bin/python -m benchmarks.rocm_accuracy --write docs/accuracy/llm-rocm.md
"""

from __future__ import annotations

import sys

from gpukit import grading, llm
from gpukit.llm import calibrate
from gpukit.llm import serving_reference as sr

from ._report import held_out_table, page_main, table_head
from .llm_page.serving import peak_baseline, summary_cells


def serving_section() -> list[str]:
    ref = sr.shipped_rocm_serving_reference()
    table = sr.serving_validation(ref)
    s = grading.summarize(table)
    engines = ", ".join(sorted(set(ref["engine"])))
    lines = [
        "## Serving: vLLM and SGLang on Instinct against H200",
        "",
        f"**{s['within_tolerance']} of {s['pairs']} same-engine pairs within ±{sr.SERVING_TOLERANCE.speedup:.0%}**, "
        f"winners right in {s['winners_right']} of {s['decisive_pairs']} decided past a "
        f"{sr.SERVING_TOLERANCE.winner_margin:.0%} gap, median error {s['median_abs_error_pct']:.1f}%.",
        "",
        f"The runs: {len(ref)} runs of DeepSeek-R1 (FP8 weights) on 8x MI300X and 8x H200 SXM, tensor parallel 8, "
        "3200 prompt tokens, 800 to 6400 output tokens, 4 to 128 requests in flight, 500 requests a run "
        f"(dstack's benchmark of March 2025; `data/reference_serving_rocm.csv`). Engines: {engines}. Each run is "
        "predicted with the `vllm` profile at its requests in flight, or as many as the KV cache holds where "
        "fewer fit (`gpukit llm --engine vllm --batch N`), SGLang's "
        "as vLLM's; each pair is one engine on both GPUs at the same lengths and concurrency, the ratio graded.",
        "",
        *table_head("| prediction | pairs within ±25% | winners right | median error |", "lrrr"),
        f"| the model | {summary_cells(s)} |",
        f"| GPUs x FP16 tensor peak | {summary_cells(peak_baseline(ref, 'fp16_tensor_tflops'))} |",
        f"| GPUs x memory bandwidth | {summary_cells(peak_baseline(ref, 'memory_bandwidth_gbs'))} |",
        "",
        *table_head(
            "| engine | requests in flight | output tokens | faster | published | predicted | error |",
            "lrrlrrr",
        ),
    ]
    for r in table.sort_values(["engine_name", "output_tokens", "published_speedup"]).itertuples():
        flight = r.batching.split()[0]
        lines.append(
            f"| {r.engine_name} | {flight} | {r.output_tokens} | {r.gpu_a} | {r.published_speedup:.2f} "
            f"| {r.predicted_speedup:.2f} | {r.error_pct:+.0f}% |"
        )
    lines += [
        "",
        "The MI300X's eight GPUs talk over Infinity Fabric (AMD: 7 links of 128 GB/s each to the other GPUs), which "
        "the model takes as it takes NVLink. One source, one model and two GPU kinds are few: an MI325X or "
        "MI355X answer is not graded, and says so.",
        "",
    ]
    return lines


#: The llama.cpp profiles of AMD builds: the build's name, its runs' backend, the constant shipped.
DECODE_PROFILES = (
    ("llama.cpp-rocm", "ROCm", "ROCm 7.2.3", "LLAMA_CPP_ROCM"),
    ("llama.cpp-vulkan", "Vulkan", "Vulkan on Mesa's RADV driver", "LLAMA_CPP_VULKAN"),
)


def decode_section(name: str, backend: str, runtime: str, constant: str) -> list[str]:
    e = llm.ENGINES[name]
    fitted = calibrate.fit_bandwidth_profile(e)
    held = calibrate.held_out_bandwidth_profile(e, by="model")
    rows = calibrate.runs(e, "tg")
    runs = int(held["runs"].sum())
    within = int(held["within_20_pct"].sum())
    bare = int(held["bare_bandwidth_within_20_pct"].sum())
    devices = ", ".join(sorted(rows["gpu"].unique()))
    lines = [
        f"## Decode on one GPU: the llama.cpp {backend} profile (`{name}`)",
        "",
        f"**{within} of {runs} published decode runs within ±20% with their model held out of the fit** "
        f"(the bare datasheet bandwidth: {bare} of {runs}). The runs are of one device ({devices}), so no "
        "other AMD GPU is graded: a Radeon or Instinct answer says *not graded on this device* and carries "
        "the decode model's widest error. The profile predicts no prompt speed.",
        "",
        f"The runs: {runs} decode runs (tg128) of "
        + ", ".join(f"{r['model']} ({r['weights']})" for _, r in rows.iterrows())
        + f", llama.cpp build 9187 on {runtime} with flash attention (kyuz0's Strix Halo toolboxes; "
        "`data/reference_llm.csv`).",
        "",
        "### The fit",
        "",
        f"`gpukit.llm.calibrate.fit_bandwidth_profile`: decode streams at **{fitted.values['stream_share']:g}** of "
        f"the datasheet bandwidth, and the GPU's compute units unpack quantised weights at "
        f"**{fitted.values['core_ops_per_s']:.3g}** operations per second each (a step takes the longer of the "
        "two); the grid point with the most runs within ±20% of their published speed, then the lower median "
        f"error. `gpukit.llm.{constant}` ships it.",
        "",
        "### Each model held out",
        "",
        *held_out_table(held, "model", "a compute unit"),
    ]
    return [*lines, ""]


def markdown() -> str:
    lines = ["# LLMs on AMD GPUs", "", *serving_section()]
    for profile in DECODE_PROFILES:
        lines += decode_section(*profile)
    lines += [
        "## What the decode profiles can say",
        "",
        "Three runs on one integrated GPU are few: held out, each profile does no better than the bare "
        "datasheet bandwidth. No public table was found in primary form in which one llama.cpp build ran an "
        "AMD and an NVIDIA GPU, or two AMD GPUs, so no speedup between devices can be graded; and a discrete "
        "Radeon or an Instinct streams GDDR6 or HBM, not LPDDR5X. The profiles are the kit's best statement "
        "for those devices, not a graded one. `gpukit llm` takes the ROCm profile for llama.cpp on an AMD GPU; "
        "`--engine llama.cpp-vulkan` asks for the Vulkan one.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    return page_main(markdown, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
