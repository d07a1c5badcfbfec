"""How right are gpukit's LLM speed predictions? Grade them against published measurements.

Predicts every row of ``data/reference_llm.csv`` (prompt processing at the prompt's length,
text generation at half the generated length of context on average, batch 1, on the source's
GPU count) and compares predicted with published speedups for every pair of GPU
configurations one source measured on the same model, weights and test; then measures the
benchmark decoder's memory on this device against the estimate. Writes Markdown, each section
of the page a function of ``llm_page`` (beside this script).

    .venv/bin/python -m benchmarks.llm_accuracy --write docs/accuracy/llm.md
"""

from __future__ import annotations

import argparse
import sys
import time

from gpukit import llm, specs
from gpukit.bench import device
from gpukit.bench import workloads as wl

from . import llm_page as page
from ._report import publish


def markdown(measure: bool = True) -> str:
    """The page: the published runs read and graded once, every section in its order, and with
    ``measure`` the benchmark decoder's memory measured here."""
    t0 = time.perf_counter()
    rows = llm.load_reference()
    everything = llm.by_configuration(rows)
    why = llm.screened(everything)
    ref = everything[why == ""]
    table = llm.validation_table(everything)
    out = page.intro_lines(rows, everything, why)
    out += page.summary_section(table)
    out += page.engines_section()
    out += page.serving_section()
    out += page.misses_section(table)
    out += page.ablations_section(ref)
    out += page.baselines_section(ref)
    out += page.screened_section(everything, why)
    out += page.largest_errors_section(table)
    cat = specs.load_catalogue().set_index("gpu")
    out += page.decode_ratio_section(ref, cat)
    out += page.prefill_ratio_section(ref, cat)
    out += page.seed_pairs_section(table)
    if measure:
        out += page.decoder_memory_section(device.describe_attached(), measure_decoder())
    out += ["", f"Total time: {time.perf_counter() - t0:.1f} s.", ""]
    return "\n".join(out)


def measure_decoder() -> list[tuple[dict, dict]]:
    """`gpukit bench`'s decoder at its quick and full CPU sizes and one larger batch, each measured in
    a fresh process (:func:`gpukit.llm.measure_decoder_memory`): each size with what it gave."""
    sizes = [
        wl.sizes("cpu", True)["decoder"],
        wl.sizes("cpu", False)["decoder"],
        {**wl.sizes("cpu", True)["decoder"], "batch": 4, "prompt": 256, "context": 1024},
    ]
    return [(p, llm.measure_decoder_memory(p, "fp32")) for p in sizes]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="FILE", help="write the Markdown here (default: print it)")
    parser.add_argument(
        "--no-measure", action="store_true", help="skip measuring the benchmark decoder's memory"
    )
    args = parser.parse_args(argv)
    text = markdown(not args.no_measure)
    publish(text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
