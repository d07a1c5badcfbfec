"""The N-GPU speedups of docs/accuracy/perfmodel.md: their grading, the largest errors, and what the
SQuAD runs processed against what they printed."""

from __future__ import annotations

import pandas as pd

from gpukit import perfmodel

from .._report import table_head
from .rows import pct


def several_gpus_section(
    ref: pd.DataFrame, d, cat, scaling: pd.DataFrame, scaling_backward: pd.DataFrame
) -> list[str]:
    """The N-GPU speedups: with and without the all-reduce overlapped, the largest errors, the SQuAD loop."""
    out = [
        "",
        "## Several GPUs",
        "",
        "Each multi-GPU measurement against the same source's single GPU of that kind: published and predicted "
        "speedup of N GPUs over one, as scaling efficiency (speedup / N). The model's link is the one the GPUs "
        "have (NVLink on SXM boards, no peer-to-peer between GeForce cards, PCIe peer-to-peer otherwise), or "
        "host memory where the source's harness disabled NCCL's peer-to-peer transport.",
        "",
    ]
    if scaling.empty:
        return out
    for name, frame in (
        ("the all-reduce after the backward pass (the default)", scaling),
        ("the all-reduce overlapped with the backward pass", scaling_backward),
    ):
        out.append(
            f"- With {name}: {int(frame['within_tolerance'].sum())} of {len(frame)} within ±15 %, "
            f"median error {frame['error_pct'].abs().median():.1f}%."
        )
    out += [
        "",
        "The default follows the measurements: these runs scale as if the exchange were not hidden "
        "behind the backward pass.",
        "",
        *table_head(
            "| source | GPU | workload | precision | GPUs | model's link | published efficiency | "
            "predicted efficiency | error |",
            "llllrlrrr",
        ),
    ]
    worst = scaling.assign(a=scaling["error_pct"].abs()).sort_values("a", ascending=False)
    for _, r in worst.head(20).iterrows():
        out.append(
            f"| {r['source']} | {r['gpu']} | {r['workload']} | {r['precision']} | {r['gpus']} | "
            f"{r['link']} | {r['published_efficiency']:.2f} | {r['predicted_efficiency']:.2f} | "
            f"{pct(r['error_pct'])} |"
        )
    out += [
        "",
        f"The {min(20, len(worst))} largest errors of {len(worst)}. GeForce RTX 3090 runs slower on "
        "8 GPUs than on one are what the source published (their notes in `data/reference_benchmarks.csv` "
        "flag them); no link or overlap explains them.",
    ]
    return out + squad_loop_section(ref, d, cat, scaling)


def squad_loop_section(ref, d, cat, scaling) -> list[str]:
    """The SQuAD runs whose figure counts steps the run never took, and the grading without the correction."""
    short = ref[ref["steps_run"].notna() & (ref["steps_run"] < ref["counted_steps"])]
    if short.empty:
        return []
    as_printed = perfmodel.scaling_validation(ref.assign(processed_throughput=ref["throughput"]), d, cat)
    out = [
        "",
        "### What the SQuAD runs processed",
        "",
        "Lambda's BERT figures are `run_squad.py`'s `training_sequences_per_second`: `train_batch_size x "
        "max_steps x world_size / e2e_train_time`. Its loop stops after `max_steps + 1` steps, or earlier when "
        "`--num_train_epochs` (2) passes over the process's shard of the 88 641 SQuAD features run out; at a "
        "large global batch they run out first, and the figure counts steps the run never took. Each row's "
        "`counted_steps`, `epochs` and `train_examples` are read from its log, and the grading uses what the run "
        "processed (`gpukit.perfmodel.reference.squad_steps`). The runs that stopped early:",
        "",
        *table_head(
            "| source | GPU | workload | precision | GPUs | batch a GPU | steps counted | steps run | published "
            "seq/s | processed seq/s |",
            "llllrrrrrr",
        ),
    ]
    for _, r in short.sort_values(["source", "gpu", "workload", "precision", "gpus"]).iterrows():
        out.append(
            f"| {r['source']} | {r['gpu']} | {r['workload']} | {r['precision']} | {r['gpus']} | "
            f"{r['batch_size']} | {r['counted_steps']} | {r['steps_run']} | {r['throughput']:.0f} | "
            f"{r['processed_throughput']:.0f} |"
        )
    unlogged = ref[ref["workload"].str.endswith("-squad") & ref["steps_run"].isna()]
    if len(unlogged):
        out += [
            "",
            f"{len(unlogged)} SQuAD rows have no log to read ("
            + ", ".join(sorted(unlogged["gpu"].unique()))
            + "): they are graded as printed; had they run "
            "`max_steps + 1` steps, as the logged single-GPU runs did, they read up to 1 % low.",
        ]
    out += steady_section(ref, d, cat)
    out += [
        "",
        f"Graded on the figures as printed instead: {int(as_printed['within_tolerance'].sum())} of "
        f"{len(as_printed)} within ±15 % (highest published efficiency "
        f"{as_printed['published_efficiency'].max():.2f}); on what the runs processed: "
        f"{int(scaling['within_tolerance'].sum())} of {len(scaling)} (highest "
        f"{scaling['published_efficiency'].max():.2f}).",
    ]
    return out


def steady_section(ref, d, cat) -> list[str]:
    """The SQuAD runs the logs time, graded on the steady rate between two logged steps against the
    rate over the whole run (a diagnostic; both on the same runs, so no pair mixes the two)."""
    squad = ref["workload"].str.endswith("-squad")
    timed = ref[squad & ref["steady_throughput"].notna()]
    if timed.empty:
        return []
    steady = timed.assign(processed_throughput=timed["steady_throughput"])
    share = (timed["steady_throughput"] / timed["processed_throughput"] - 1) * 100
    now, then = (
        perfmodel.summarize_by_family(perfmodel.validation_table(r, d, cat)).set_index("family")
        for r in (timed, steady)
    )
    sc_now, sc_then = (perfmodel.scaling_validation(r, d, cat) for r in (timed, steady))
    keys_now, keys_then = (
        perfmodel.key_pairs(perfmodel.validation_table(r, d, cat)) for r in (timed, steady)
    )
    untimed = ref[squad & ref["steady_throughput"].isna()]
    steps = ref.loc[squad & ref["steps_run"].notna(), "steps_run"]
    out = [
        "",
        "#### Steady rates from the logs' timestamps",
        "",
        "The published time runs from the loop's start, so it includes the first steps' warm-up (autotuning, "
        f"memory allocation), a share that depends on how many steps the run took ({int(steps.min())} to "
        f"{int(steps.max())} here). `run_squad.py` logs a timestamped line every 50 steps and calls "
        "`loss.item()` every step, so two logged steps time the GPU: `timed_from`, `timed_to` and "
        "`timed_seconds` (the last two logged steps within one epoch, after the first step) give "
        f"`steady_throughput`, {share.median():+.1f} % against what the run processed over its whole time "
        f"(median; {share.min():+.1f} % to {share.max():+.1f} %). {len(untimed)} SQuAD rows have no such stretch "
        f"({', '.join(sorted(untimed['gpu'].unique()))}: no log, or runs too short). Graded on the {len(timed)} "
        "timed runs both ways, as a diagnostic (the grading above keeps the whole-run rates, which every row "
        "has):",
        "",
        *table_head(
            "| family | pairs | within ±15 %, whole run | within ±15 %, steady | winners right, whole run | "
            "winners right, steady | median error, whole run | median error, steady |",
            "lrrrrrrr",
        ),
    ]
    for fam in now.index:
        a, b = now.loc[fam], then.loc[fam]
        out.append(
            f"| {fam} | {a['pairs']} | {a['within_tolerance']} | {b['within_tolerance']} | "
            f"{a['winners_right']} of {a['decisive_pairs']} | {b['winners_right']} of {b['decisive_pairs']} | "
            f"{a['median_abs_error_pct']:.1f}% | {b['median_abs_error_pct']:.1f}% |"
        )
    out.append(
        f"| scaling | {len(sc_now)} | {int(sc_now['within_tolerance'].sum())} | "
        f"{int(sc_then['within_tolerance'].sum())} | — | — | "
        f"{sc_now['error_pct'].abs().median():.1f}% | {sc_then['error_pct'].abs().median():.1f}% |"
    )
    if len(keys_now):
        out += [
            "",
            "The seed pairs among them:",
            "",
            *table_head(
                "| workload | precision | faster | slower | published, whole run | published, steady "
                "| error, whole run | error, steady |",
                "llllrrrr",
            ),
        ]
        for (_, a), (_, b) in zip(keys_now.iterrows(), keys_then.iterrows()):
            out.append(
                f"| {a['workload']} | {a['precision']} | {a['gpu_a']} | {a['gpu_b']} | "
                f"{a['published_speedup']:.3f} | {b['published_speedup']:.3f} | {pct(a['error_pct'])} | "
                f"{pct(b['error_pct'])} |"
            )
    return out


def systems_section(systems: pd.DataFrame) -> list[str]:
    """Every pair of multi-GPU systems of different GPUs (:func:`gpukit.perfmodel.system_validation`),
    per source and family, with the single-GPU target."""
    if systems.empty:
        return []
    out = [
        "",
        "## Whole systems",
        "",
        "Every pair of multi-GPU systems of different GPUs one source measured alike, by throughput per GPU: "
        "the two at each GPU count both were run on, or the largest of each where they share none. A "
        "system's error holds its GPU's and its scaling's, so these grade the two together.",
        "",
        *table_head(
            f"| source | family | pairs | within ±{perfmodel.RATIO_TOLERANCE:.0%} | median abs error | winners right |",
            "llrrrr",
        ),
    ]
    for (source, fam), group in systems.groupby(["source", "family"], sort=True):
        s = perfmodel.summarize_validation(group)
        out.append(
            f"| {source} | {fam} | {s['pairs']} | {s['within_tolerance']} of {s['pairs']} "
            f"({s['within_tolerance'] / s['pairs']:.0%}) | {s['median_abs_error_pct']:.1f}% | "
            f"{s['winners_right']} of {s['decisive_pairs']} |"
        )
    return out
