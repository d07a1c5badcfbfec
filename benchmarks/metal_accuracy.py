"""How right is gpukit's llama.cpp Metal profile? Fit it and hold each Apple chip out.

Fits ``llama.cpp-metal``'s two constants (the share of the datasheet bandwidth its decode streams
at, its GPU cores' rate of unpacking quantised weights) on the published decode runs of its source
(``data/reference_llm.csv``, ``xiongjiedai-llama3-apple``), then fits again without each chip and
predicts that chip's runs, beside the bare datasheet bandwidth.

    .venv/bin/python -m benchmarks.metal_accuracy --write docs/accuracy/llm-metal.md
"""

from __future__ import annotations

import sys

from gpukit import grading, llm
from gpukit.llm import calibrate

from ._report import held_out_table, page_main


def markdown() -> str:
    e = llm.ENGINES["llama.cpp-metal"]
    fitted = calibrate.fit_bandwidth_profile(e)
    held = calibrate.held_out_bandwidth_profile(e)
    runs = int(held["runs"].sum())
    within = int(held["within_20_pct"].sum())
    bare = int(held["bare_bandwidth_within_20_pct"].sum())
    pairs = grading.summarize(calibrate.grade(calibrate.runs(e, "tg"), fitted.engine, "tg"))
    lines = [
        "# LLM decode on Apple silicon: the llama.cpp Metal profile",
        "",
        f"**{within} of {runs} published decode runs within ±20% with their chip held out of the fit** "
        f"(the bare datasheet bandwidth: {bare} of {runs}); in sample, {pairs['within_tolerance']} of "
        f"{pairs['pairs']} same-source speedups within ±20%. Apple states no GPU compute peak for these "
        "chips, so the profile predicts no prompt speed.",
        "",
        f"The runs: {runs} decode runs of Llama 3 8B and 70B (Q4_K_M, F16) on the M1 Max, M2 Ultra and M3 Max, "
        "llama.cpp builds 2795-2797 on Metal (XiongjieDai's table, May 2024; `data/reference_llm.csv`).",
        "",
        "## The fit",
        "",
        f"`gpukit.llm.calibrate.fit_bandwidth_profile`: decode streams at **{fitted.values['stream_share']:g}** of the "
        f"datasheet bandwidth, and a chip's GPU cores unpack quantised weights at "
        f"**{fitted.values['core_ops_per_s']:.3g}** operations per second each (a step takes the longer of the "
        "two). The grid point with the most same-source speedups within ±20%, then the most runs within "
        "±20% of their published speed, then the lower median error; `gpukit.llm.LLAMA_CPP_METAL` ships it.",
        "",
        "## Each chip held out",
        "",
        *held_out_table(held, "gpu", "a core"),
    ]
    lines += [
        "",
        "Three chips of three generations are few: an M4 or an M3 Ultra answer carries this profile's "
        "error at best, and says it is not graded on that chip.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    return page_main(markdown, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
