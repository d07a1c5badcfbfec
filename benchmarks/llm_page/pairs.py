"""The graded pairs of docs/accuracy/llm.md: per test, setting and source against the target, where
the misses are, the largest errors, and the pairs with the seed cards."""

from __future__ import annotations

import pandas as pd

from gpukit import llm

from .._report import table_head


def _rows(frame) -> list[str]:
    out = [
        *table_head(
            "| model | weights | test | faster | slower | published | predicted | error |", "lllllrrr"
        ),
    ]
    for _, r in frame.iterrows():
        a = f"{r['gpus_a']}x {r['gpu_a']}" if r["gpus_a"] > 1 else r["gpu_a"]
        b = f"{r['gpus_b']}x {r['gpu_b']}" if r["gpus_b"] > 1 else r["gpu_b"]
        out.append(
            f"| {r['model']} | {r['weights']} | {r['test']} | {a} | {b} | {r['published_speedup']:.2f} | "
            f"{r['predicted_speedup']:.2f} | {r['error_pct']:+.1f}% |"
        )
    return out


def summary_section(table) -> list[str]:
    """The target, and the pairs graded against it: per test, per setting (single GPUs or several),
    and per source."""
    summary = llm.summary_by_test(table)
    out = [
        f"Target: ≥ 90% of speedups within ±{llm.RATIO_TOLERANCE:.0%}, every winner right where the published "
        f"results differ by more than {llm.WINNER_MARGIN:.0%}.",
        "",
        *table_head(
            "| test | pairs | within ±20 % | winners right | median abs. error | largest abs. error | target |",
            "lrrrrrl",
        ),
    ]
    for _, r in summary.iterrows():
        if not r["pairs"]:
            continue
        out.append(
            f"| {r['test']} | {r['pairs']} | {r['within_tolerance']} ({r['within_share']:.0%}) | "
            f"{r['winners_right']} of {r['decisive_pairs']} | {r['median_abs_error_pct']:.1f}% | "
            f"{r['max_abs_error_pct']:.1f}% | {'met' if r['meets_target'] else 'not met'} |"
        )
    by = llm.summary_by_test(table, by_setting=True)
    out += [
        "",
        "Between single GPUs, and in pairs with several GPUs on at least one side (a layer split's pipeline, "
        "where the largest errors below are):",
        "",
        *table_head(
            "| test | compared | pairs | within ±20 % | winners right | median abs. error |", "llrrrr"
        ),
    ]
    for _, r in by.iterrows():
        if r["pairs"]:
            out.append(
                f"| {r['test'].split(' (')[0]} | {r['setting']} | {r['pairs']} | {r['within_tolerance']} "
                f"({r['within_share']:.1%}) | {r['winners_right']} of {r['decisive_pairs']} | "
                f"{r['median_abs_error_pct']:.1f}% |"
            )
    out += [
        "",
        "Per source (each sets the constants of its own engine profile: `xiongjiedai-llama3` llama.cpp-2024's, "
        "`sparecores-llamacpp` llama.cpp's, with a family held out in the next section; `sparecores-vllm` on "
        "several GPUs "
        "splits by tensor, the others by layer):",
        "",
        *table_head(
            "| source | test | compared | pairs | within ±20 % | winners right | median abs. error |",
            "lllrrrr",
        ),
    ]
    for _, r in llm.summary_by_test(table, by_setting=True, by_source=True).iterrows():
        out.append(
            f"| {r['source']} | {r['test'].split(' (')[0]} | {r['setting']} | {r['pairs']} | "
            f"{r['within_tolerance']} ({r['within_share']:.1%}) | {r['winners_right']} of "
            f"{r['decisive_pairs']} | {r['median_abs_error_pct']:.1f}% |"
        )
    return out


def misses_section(table) -> list[str]:
    """Where the pairs outside the tolerance are: per test, model, format and setting, and the
    configurations that take part in the most of them."""
    if table.empty:
        return []
    out = [
        "",
        "## Where the misses are",
        "",
        f"Pairs outside ±{llm.RATIO_TOLERANCE:.0%} per test, model, weights format and setting, and the share of "
        "the test's misses each slice holds:",
        "",
        *table_head(
            "| test | model | weights | compared | pairs | within ±20 % | misses | share of the test's misses |",
            "llllrrrr",
        ),
    ]
    for test, part in table.groupby("test", sort=False):
        missed = int((~part["within_tolerance"]).sum())
        if not missed:
            continue
        for (model, weights, setting), sub in part.groupby(["model", "weights", "setting"], sort=True):
            miss = int((~sub["within_tolerance"]).sum())
            out.append(
                f"| {test} | {model} | {weights} | {setting} | {len(sub)} | "
                f"{int(sub['within_tolerance'].sum())} ({sub['within_tolerance'].mean():.0%}) | {miss} | "
                f"{miss / missed:.0%} |"
            )
    out += [
        "",
        "The configurations (a GPU and number of cards) that take part in the most misses, per test:",
        "",
    ]
    for test, part in table.groupby("test", sort=False):
        bad = part[~part["within_tolerance"]]
        sides = (
            pd.concat(
                [
                    bad["gpus_a"].astype(str) + "x " + bad["gpu_a"],
                    bad["gpus_b"].astype(str) + "x " + bad["gpu_b"],
                ]
            )
            .value_counts()
            .head(5)
        )
        label = "decode" if test == "tg" else "prefill"
        out.append(
            f"- {label}, {len(bad)} misses: " + "; ".join(f"{k} in {v}" for k, v in sides.items()) + "."
        )
    return out


def largest_errors_section(table) -> list[str]:
    """Per test, the pairs with the largest errors, and the winners called wrong."""
    out = []
    for test, label in (("tg", "decode"), ("pp", "prefill")):
        part = table[table["test"] == test] if len(table) else table
        if part.empty:
            continue
        worst = part.assign(a=part["error_pct"].abs()).sort_values("a", ascending=False).head(12)
        out += ["", f"## {label}: the largest errors", ""] + _rows(worst)
        wrong = part[part["decisive"] & (part["winner_right"] == False)]  # noqa: E712 -- object column
        if len(wrong):
            out += ["", f"Winners called wrong ({len(wrong)}):", ""] + _rows(wrong.head(20))
    return out


def seed_pairs_section(table) -> list[str]:
    """The pairs with the seed cards, single GPUs at each source's shortest test of each kind."""
    seeds = ["A40", "RTX A5000", "RTX A4000", "V100 PCIe 16GB"]
    key = (
        table[
            (table["gpu_a"].isin(seeds) | table["gpu_b"].isin(seeds))
            & (table["gpus_a"] == 1)
            & (table["gpus_b"] == 1)
        ]
        if len(table)
        else table
    )
    if len(key):  # each source's shortest test of each kind
        key = key[key["tokens"] == key.groupby(["source", "test"])["tokens"].transform("min")]
    if not len(key):
        return []
    return [
        "",
        "## Pairs with the seed cards",
        "",
        "Single GPUs, at each source's shortest prompt or generation (the other lengths are in "
        "`gpukit.llm.validation_table()`):",
        "",
    ] + _rows(key)
