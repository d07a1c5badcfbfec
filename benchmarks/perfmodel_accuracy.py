"""How right is gpukit's performance model? Grade it against published measurements.

Predicts every row of ``data/reference_benchmarks.csv`` at its source's batch size and
precision, compares predicted with published speedups for every pair of GPUs from one source,
refits the efficiency factors, and checks that fit by leaving each GPU out. Writes Markdown.

    .venv/bin/python benchmarks/perfmodel_accuracy.py --write docs/perfmodel-accuracy.md
"""
from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone

import pandas as pd

from gpukit import _atomic, perfmodel, specs


def _pct(v: float) -> str:
    return f"{v:+.1f}%"


def markdown(seconds_budget: float | None = None) -> str:
    t0 = time.perf_counter()
    cat = specs.load_catalogue()
    ref = perfmodel.load_reference(catalogue=cat)
    d = perfmodel.DEFAULT_EFFICIENCY
    table = perfmodel.validation_table(ref, d, cat)
    s = perfmodel.summarize_validation(table)
    fitted = perfmodel.fit_efficiency(ref, cat)
    logo = perfmodel.leave_one_gpu_out(ref, cat)
    keys = perfmodel.key_pairs(table)
    out = [
        "# Performance model accuracy",
        "",
        f"Written by `benchmarks/perfmodel_accuracy.py` on "
        f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} "
        f"({time.perf_counter() - t0:.1f} s). Nothing here ran on a GPU: the model predicts from the "
        "catalogue, and the published measurements it is graded against are in "
        "`data/reference_benchmarks.csv` (every row with its source).",
        "",
        f"- {len(ref)} published ResNet-50 training throughputs, {ref['gpu'].nunique()} GPUs, "
        f"{ref['source'].nunique()} sources; {s['pairs']} pairs of GPUs measured by the same source "
        "at the same precision.",
        f"- Default efficiencies: tensor {d.tensor:g}, CUDA-core matmul {d.cuda:g}, elementwise {d.elementwise:g}, "
        f"memory {d.memory:g}, launch {d.launch_s * 1e6:g} µs per kernel.",
        f"- Refit on all measurements today: tensor {fitted.tensor:g}, CUDA-core matmul {fitted.cuda:g}, "
        f"elementwise {fitted.elementwise:g}, memory {fitted.memory:g}"
        + (" (the defaults)." if (fitted.tensor, fitted.cuda, fitted.elementwise, fitted.memory)
           == (d.tensor, d.cuda, d.elementwise, d.memory) else " (differs from the defaults: update them)."),
        "",
        "## With the default efficiencies",
        "",
        "| figure | value |",
        "|---|---|",
        f"| winner right where the publications differ by > 10 % | {s['winners_right']} of {s['decisive_pairs']} |",
        f"| speedups within ±15 % | {s['within_tolerance']} of {s['pairs']} |",
        f"| median absolute speedup error | {s['median_abs_error_pct']:.1f}% |",
        f"| largest absolute speedup error | {s['max_abs_error_pct']:.1f}% |",
        "",
        "### The pairs this kit exists for",
        "",
        "| source | precision | faster | slower | published | predicted | error |",
        "|---|---|---|---|---|---|---|",
    ]
    for _, r in keys.iterrows():
        out.append(f"| {r['source']} | {r['precision']} | {r['gpu_a']} | {r['gpu_b']} | "
                   f"{r['published_speedup']:.3f} | {r['predicted_speedup']:.3f} | {_pct(r['error_pct'])} |")
    out += ["", "### The largest errors", "",
            "| source | precision | faster | slower | published | predicted | error |", "|---|---|---|---|---|---|---|"]
    worst = table.assign(a=table["error_pct"].abs()).sort_values("a", ascending=False).head(12)
    for _, r in worst.iterrows():
        out.append(f"| {r['source']} | {r['precision']} | {r['gpu_a']} | {r['gpu_b']} | "
                   f"{r['published_speedup']:.3f} | {r['predicted_speedup']:.3f} | {_pct(r['error_pct'])} |")
    counts = pd.concat([worst["gpu_a"], worst["gpu_b"]]).value_counts()
    out += ["", "GPUs in these pairs: " + ", ".join(f"{g} ({n})" for g, n in counts.items()) + ".", "",
            "The model counts FLOPs and the least device-memory traffic per layer; it knows nothing of "
            "cache sizes (the Ada Lovelace cards carry a far larger L2 cache than Ampere's GeForce and workstation cards), clocks under power "
            "limits, or how much of a step a newer GPU spends waiting on the host. Errors concentrated "
            "on a few GPUs point there rather than at the roofline itself."]
    out += ["", "## Leave one GPU out", "",
            "The factors refitted without one GPU's measurements, then graded on the pairs with that GPU only.", "",
            "| held out | pairs | median abs error | max abs error | within ±15 % | winners right | refitted factors |",
            "|---|---|---|---|---|---|---|"]
    for _, r in logo.iterrows():
        out.append(f"| {r['held_out']} | {r['pairs']} | {r['median_abs_error_pct']:.1f}% | "
                   f"{r['max_abs_error_pct']:.1f}% | {r['within_15_pct']} | {r['winners_right']} | {r['fitted']} |")
    out += ["", f"Total time: {time.perf_counter() - t0:.1f} s.", ""]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="FILE", help="write the Markdown here (default: print it)")
    args = parser.parse_args(argv)
    text = markdown()
    if args.write:
        _atomic.write_text(args.write, text)
        print(f"written to {args.write}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
