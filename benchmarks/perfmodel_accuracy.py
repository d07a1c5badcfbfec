"""How right is gpukit's performance model? Grade it against published measurements.

Predicts every row of ``data/reference_benchmarks.csv`` at its source's batch size, sequence
length, precision and GPU count; compares predicted with published speedups for every pair of
GPUs from one source, per workload family (CNN, transformer), every N-GPU run with the same
source's single GPU (scaling), and every pair of multi-GPU systems of different GPUs; refits the
efficiency factors, and checks that fit by leaving each GPU out and each source out. Writes
Markdown, each section of the page a function of ``perfmodel_page`` (beside this script).

    .venv/bin/python -m benchmarks.perfmodel_accuracy --write docs/accuracy/perfmodel.md
"""

from __future__ import annotations

import argparse
import sys
import time

from gpukit import perfmodel, specs

from . import perfmodel_page as page
from ._report import publish


def markdown() -> str:
    """The page: the model graded once with its defaults, refitted and left out, then every section in
    its order (a section that grades a variant of the model runs it itself)."""
    t0 = time.perf_counter()
    cat = specs.load_catalogue()
    ref = perfmodel.load_reference(catalogue=cat)
    d = perfmodel.DEFAULT_EFFICIENCY
    table = perfmodel.validation_table(ref, d, cat)
    fams = perfmodel.summarize_by_family(table)
    scaling = perfmodel.scaling_validation(ref, d, cat)
    scaling_backward = perfmodel.scaling_validation(ref, d, cat, overlap="backward")
    systems = perfmodel.system_validation(ref, d, cat)
    systems_held = perfmodel.held_out_systems(page.current_pairs(systems, cat), ref, cat)
    fitted = perfmodel.fit_efficiency(ref, cat)
    logo = perfmodel.leave_one_gpu_out(ref, cat)
    loso = perfmodel.leave_one_source_out(ref, cat)
    keys = perfmodel.key_pairs(table)
    ratios = perfmodel.throughput_ratios(ref, d, cat)
    out = (
        page.overview(ref, table, fitted, cat)
        + page.family_section(fams, scaling)
        + page.key_pairs_section(keys)
        + page.current_section(table, cat, systems, systems_held)
        + page.stack_section(systems, ref, cat)
        + page.largest_errors(table, fams)
        + page.DIAGNOSIS
        + page.issue_section(ref, table, cat)
        + page.sm_bytes_section(ref, cat)
        + page.l2_section(ref, cat)
        + page.sustained_section(ref, table, scaling, cat)
        + page.bandwidth_section(ref, table, scaling, cat)
        + page.update_section(ref, table, cat)
        + page.ratio_section(ratios)
        + page.gpu_factor_section(ref, ratios, table, cat)
        + page.software_section(ref, table)
        + page.tf32_section(ref[ref["gpus"] == 1], d, cat)
        + page.host_section(ref, d, cat, fams)
        + page.several_gpus_section(ref, d, cat, scaling, scaling_backward)
        + page.systems_section(systems)
        + page.leave_out_sections(logo, loso)
    )
    out += ["", f"Total time: {time.perf_counter() - t0:.1f} s.", ""]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="FILE", help="write the Markdown here (default: print it)")
    args = parser.parse_args(argv)
    text = markdown()
    publish(text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
