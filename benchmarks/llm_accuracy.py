"""How right are gpukit's LLM speed predictions? Grade them against published measurements.

Predicts every row of ``data/reference_llm.csv`` (prompt processing at the prompt's length,
text generation at half the generated length of context on average, batch 1, on the source's
GPU count) and compares predicted with published speedups for every pair of GPU
configurations one source measured on the same model, weights and test; then measures the
benchmark decoder's memory on this device against the estimate. Writes Markdown.

    .venv/bin/python benchmarks/llm_accuracy.py --write docs/llm-accuracy.md
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime

import pandas as pd
from _report import publish

from gpukit import bandwidth_rates, device, llm, specs
from gpukit import workloads as wl


def _rows(frame) -> list[str]:
    out = [
        "| model | weights | test | faster | slower | published | predicted | error |",
        "|---|---|---|---|---|---:|---:|---:|",
    ]
    for _, r in frame.iterrows():
        a = f"{r['gpus_a']}x {r['gpu_a']}" if r["gpus_a"] > 1 else r["gpu_a"]
        b = f"{r['gpus_b']}x {r['gpu_b']}" if r["gpus_b"] > 1 else r["gpu_b"]
        out.append(
            f"| {r['model']} | {r['weights']} | {r['test']} | {a} | {b} | {r['published_speedup']:.2f} | "
            f"{r['predicted_speedup']:.2f} | {r['error_pct']:+.1f}% |"
        )
    return out


def markdown(measure: bool = True) -> str:
    t0 = time.perf_counter()
    rows = llm.load_reference()
    everything = llm.by_configuration(rows)
    why = llm.screened(everything)
    ref = everything[why == ""]
    table = llm.validation_table(everything)
    out = intro_lines(rows, everything, why)
    out += summary_section(table)
    out += misses_section(table)
    out += ablations_section(ref)
    out += screened_section(everything, why)
    out += current_build_section(everything)
    out += largest_errors_section(table)
    cat = specs.load_catalogue().set_index("gpu")
    out += decode_ratio_section(ref, cat)
    out += prefill_ratio_section(ref, cat)
    out += seed_pairs_section(table)
    if measure:
        out += decoder_memory_section()
    out += ["", f"Total time: {time.perf_counter() - t0:.1f} s.", ""]
    return "\n".join(out)


def intro_lines(rows, everything, why) -> list[str]:
    """The page's title and what it grades: the published speeds and their sources, the model's
    constants and where each was read, what the second source's rows grade out of sample."""
    return [
        "# LLM speed accuracy",
        "",
        f"Written by `benchmarks/llm_accuracy.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Nothing here "
        "ran on a GPU: `gpukit.llm` predicts from the catalogue, and the published measurements it is graded "
        "against are in `data/reference_llm.csv` (every row with its source, engine and test conditions).",
        "",
        f"- {len(rows)} published speeds, {len(everything)} configurations ({int((why != '').sum())} left out, "
        f"below): {everything['gpu'].nunique()} GPUs, "
        f"models {', '.join(sorted(everything['model'].unique()))}, "
        f"weights {', '.join(sorted(everything['weights'].unique()))}, "
        f"sources {', '.join(sorted(everything['source'].unique()))}.",
        *source_lines(everything),
        f"- The model's constants: {llm.KERNELS_PER_LAYER} kernels per layer for llama.cpp and "
        f"{llm.VLLM_KERNELS_PER_LAYER} for vLLM (counted in its source), at {llm.LAUNCH_S * 1e6:g} µs each per "
        f"decode step, {llm.DEQUANT_OPS} CUDA-core operations to unpack a quantised weight, prompts in chunks of "
        f"{llm.PROMPT_CHUNK} tokens in passes of {llm.PROMPT_BATCH} (llama.cpp's defaults; a run's own where "
        f"it set them: {own_sizes(everything)} of the configurations, in `n_ubatch` and `n_batch`), llama.cpp's FP16 "
        "accumulation in prefill (GeForce cards at their FP16-accumulate rate), matrix multiplies in waves of "
        f"{llm.GEMM_TILE[0]} x {llm.GEMM_TILE[1]} tiles over the GPU's SMs, the prompt's memory traffic between "
        f"the matrix multiplies (llama.cpp's float32 activations, their conversions to FP16 and back, and "
        f"{llm.SCORE_BYTES} bytes per attention score without flash attention, read in its source at the "
        "benchmarked build), a layer split's prompt pipelined as llama.cpp's scheduler runs it (its layers per "
        f"GPU, {llm.SCHED_COPIES} copies of each GPU's inputs, the hand-offs through host memory; below); "
        "the roofline's tensor, CUDA-core and "
        "streaming efficiencies (`gpukit.perfmodel.DEFAULT_EFFICIENCY`, fitted to training benchmarks, not to "
        "these), the tensor cores at the share of their datasheet peak each GPU sustains in a large matrix "
        "multiply (`gpukit.matmul_rates`: published measurements, the median share where none names the GPU), "
        "memory at the median share of their datasheet bandwidth published copy kernels reach "
        "(`gpukit.bandwidth_rates`; not each GPU's own, `llm.default_efficiency`). "
        "Three constants were read off the first source's measurements (`xiongjiedai-llama3`): "
        f"{llm.GEMV_BYTES_PER_SM_CYCLE:g} bytes per SM per clock cycle (at the boost clock) that llama.cpp's "
        "matrix-vector products stream (Little's law: the loads an SM keeps in flight over the memory "
        "latency, counted in the SM's cycles), which caps the HBM data-centre cards' decode below their "
        f"datasheet bandwidth; {llm.SCALAR_BYTES_PER_SM_S / 1e9:g} GB/s per SM for their prompts' conversions, "
        "elementwise kernels and dequantisation, llama.cpp's kernels loading one element a thread (the "
        "tables below show each GPU with and without it); and "
        f"{llm.LAYER_HOP_S * 1e6:g} µs per GPU boundary of a layer split.",
        "- The SpareCores rows grade the model out of sample: the same constants on other builds, GPUs (the T4, "
        "L4, A10 and three V100s among them) and models, and vLLM (`sparecores-vllm`: 16-bit weights, one request "
        "at a time, tensor parallel on several GPUs) where the first source has only llama.cpp. Only their text "
        "generation is graded. llama.cpp's prompt runs are in the data and left out of the grading (`gpukit.llm."
        "other_prefill_path`; a section below sets them against the model): at build 4753 it multiplies a quantised "
        "prompt on the int8 tensor cores of Turing and later GPUs (its MMQ kernels: `ggml_cuda_should_use_mmq` in "
        "`ggml/src/ggml-cuda/mmq.cu`, read at build 4748; on the V100 a prompt still goes to cuBLAS), unpacking each "
        "tile on chip and rescaling every 32-value block of the result on the CUDA cores, and these runs had flash "
        "attention on, a path the model does not follow (it unpacks the weights to FP16 for cuBLAS and sends the "
        "attention scores through memory, the first source's path). vLLM's prompt timings are not in the data: its "
        "benchmark times the first token of a request served over HTTP, which adds the server's handling to the "
        "prompt.",
        "- The per-SM cap belongs to llama.cpp's kernels: vLLM's decode is predicted at the streaming rate, "
        "as its runs show (the per-GPU decode table below gives both).",
        "",
    ]


def summary_section(table) -> list[str]:
    """The target, and the pairs graded against it: per test, per setting (single GPUs or several),
    and per source."""
    summary = llm.summary_by_test(table)
    out = [
        f"Target: ≥ 90% of speedups within ±{llm.RATIO_TOLERANCE:.0%}, every winner right where the published "
        f"results differ by more than {llm.WINNER_MARGIN:.0%}.",
        "",
        "| test | pairs | within ±20 % | winners right | median abs. error | largest abs. error | target |",
        "|---|---:|---:|---:|---:|---:|---|",
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
        "| test | compared | pairs | within ±20 % | winners right | median abs. error |",
        "|---|---|---:|---:|---:|---:|",
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
        "Per source (only `xiongjiedai-llama3` set a constant of the model; `sparecores-vllm` on several GPUs "
        "splits by tensor, the others by layer):",
        "",
        "| source | test | compared | pairs | within ±20 % | winners right | median abs. error |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for _, r in llm.summary_by_test(table, by_setting=True, by_source=True).iterrows():
        out.append(
            f"| {r['source']} | {r['test'].split(' (')[0]} | {r['setting']} | {r['pairs']} | "
            f"{r['within_tolerance']} ({r['within_share']:.1%}) | {r['winners_right']} of "
            f"{r['decisive_pairs']} | {r['median_abs_error_pct']:.1f}% |"
        )
    return out


def ablations_section(ref) -> list[str]:
    """The grading with one part of the model changed at a time, a line each (:func:`_ablation`)."""
    datasheet = llm.validation_table(ref, efficiency=replace(llm.default_efficiency(), sustained=False))
    own = llm.validation_table(ref, efficiency=replace(llm.default_efficiency(), measured_bandwidth=True))
    with _decode_cap_per_second():
        per_second = llm.validation_table(ref)
    with _streaming_prompts():
        streaming = llm.validation_table(ref)
    return [
        "",
        _ablation("With the tensor cores at their datasheet peaks instead of the measured rates", datasheet),
        "",
        _ablation(
            "With each GPU's memory at its own share of its datasheet bandwidth in published copy "
            "kernels (`gpukit.bandwidth_rates`, as the performance model streams) instead of the "
            f"measured GPUs' median share ({bandwidth_rates.shipped_typical_share():.0%})",
            own,
        ),
        "",
        _ablation(
            f"With llama.cpp's decode cap a rate per second ({PER_SECOND_CAP / 1e9:g} GB/s per SM, "
            "its best fit as such) instead of per clock cycle",
            per_second,
        ),
        "",
        _ablation(
            "With llama.cpp's prompt kernels at the streaming rate instead of the per-SM cap", streaming
        ),
    ]


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
        "| source | GPU | memory | configurations | as modelled | every engine capped | none capped |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    single = ref[(ref["gpus"] == 1) & (ref["test"] == "tg")]
    modelled = single["throughput_tokens_s"] / llm.predict_reference(single)
    with _engines("gemv_per_sm", True):
        capped = single["throughput_tokens_s"] / llm.predict_reference(single)
    with _engines("gemv_per_sm", False):
        uncapped = single["throughput_tokens_s"] / llm.predict_reference(single)
    for source, gpu in sorted(set(zip(single["source"], single["gpu"]))):
        sel = (single["gpu"] == gpu) & (single["source"] == source)
        out.append(
            f"| {source} | {gpu} | {cat.loc[gpu, 'memory_type']} | {int(sel.sum())} | "
            f"{modelled[sel].median():.2f} | {capped[sel].median():.2f} | {uncapped[sel].median():.2f} |"
        )
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
        "| test | model | weights | compared | pairs | within ±20 % | misses | share of the test's misses |",
        "|---|---|---|---|---:|---:|---:|---:|",
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


def own_sizes(everything) -> int:
    """How many configurations name the run's own micro-batch or pass size (llama-bench -ub, -b)."""
    return int((everything["n_ubatch"].notna() | everything["n_batch"].notna()).sum())


def source_lines(everything) -> list[str]:
    """What each source is and how its rows were read (one line each)."""
    out = []
    for source, part in everything.groupby("source", sort=True):
        hosts = part[part["hosts"] > 1]
        line = (
            f"- `{source}`: {part['engine'].iloc[0]}; {len(part)} configurations on "
            f"{part['gpu'].nunique()} GPUs, tests {', '.join(sorted(part['test'].unique()))}."
        )
        if len(hosts):
            line += (
                f" It ran {int(hosts['gpu'].nunique())} of its GPUs on several machines (cloud instance types, "
                f"`host`): each configuration is graded at the median of its hosts "
                f"(`gpukit.llm.by_configuration`), which lie {hosts['host_low'].min():+.1%} to "
                f"{hosts['host_high'].max():+.1%} from it."
            )
        out.append(line)
    return out


def _spread(note) -> float | None:
    """llama-bench's standard deviation over its repetitions, as a share of the mean, from a row's note."""
    m = re.search(r"t/s '([\d.]+) ± ([\d.]+)'", str(note))
    return float(m.group(2)) / float(m.group(1)) if m else None


def _spread_text(everything, out_) -> str:
    every = everything["note"].map(_spread).dropna()
    left = out_["note"].map(_spread).dropna()
    if every.empty or left.empty:
        return ""
    return (
        f" Their repetitions spread {left.min():.1%} to {left.max():.1%} of the mean (llama-bench's ± in each "
        f"row's note), against a median of {every.median():.1%} over the whole table."
    )


def _unpacked_text(everything) -> str:
    """How many runs with both an FP16 and an unpacked quantised prefill have the FP16 one nowhere
    slower beyond the tolerance: what the second screening rule rests on."""
    runs = llm.fp16_against_unpacked(everything)
    if runs.empty:
        return ""
    slower = int(runs["slower"].sum())
    return (
        f" Of the {len(runs)} runs with both (one source's GPU configuration and model), "
        f"{len(runs) - slower} have the FP16 prompt nowhere more than {llm.UNPACKED_TOLERANCE:.0%} slower; "
        f"the {slower} others are in the table below."
    )


def _power_text(everything) -> str:
    """The power-cap rule, with the decode of the capped runs it keeps against their GPU's other runs."""
    capped = llm.power_capped(everything)
    if not capped.any():
        return ""
    board = llm.board_power_w(everything)
    ratio = everything["throughput_tokens_s"] / llm.predict_reference(everything)
    decode = everything["test"] == "tg"
    gpus = sorted(everything.loc[capped, "gpu"].unique())
    kin = decode & ~capped & everything["gpu"].isin(gpus) & everything["power_limit_w"].notna()
    runs = everything[capped].groupby(["gpu", "gpus"])["power_limit_w"].min()
    tdp = board.groupby(everything["gpu"]).first()
    return (
        f" And the prefill of a run whose GPUs were power-capped below {llm.POWER_LIMIT_SHARE:.0%} of the "
        "board's datasheet power (`power_limit_w`: the lowest cap the notebook's nvidia-smi shows among the run's "
        "GPUs): "
        + ", ".join(f"{n}x {gpu} at {w:g} W" for (gpu, n), w in runs.items())
        + ", against "
        + ", ".join(f"{tdp[g]:g} W for the {g}" for g in gpus)
        + " on the datasheet. Under the cap a "
        "prompt's multiplies run at the clock it allows, which a model of a stock board does not know; a "
        "memory-bound decode step draws less and keeps its clocks, so the same runs' decode stays in: their "
        f"published over predicted decode, median {ratio[decode & capped].median():.2f}, against "
        f"{ratio[kin].median():.2f} for the same GPUs' uncapped runs."
    )


def screened_section(everything, why) -> list[str]:
    """The series left out of the grading, why, and the grading with them."""
    out_ = everything[why != ""]
    if out_.empty:
        return []
    lines = [
        "",
        "## Left out of the grading",
        "",
        "Four rules leave a series (one run, one test, every length) out whole (`gpukit.llm.screened`). "
        f"On one GPU, a series that rises by more than {llm.RISING_TOLERANCE:.0%} with the length: llama.cpp "
        "prefills a prompt in 512-token micro-batches one after another, each attending to more context, and "
        "decodes each token over a longer cache, so one GPU's speed can only fall."
        + _spread_text(everything, out_.loc[out_["gpus"] == 1])
        + f" On one GPU or several, an FP16 prefill series slower than the same run's quantised one by more than "
        f"{llm.UNPACKED_TOLERANCE:.0%} at some length: before build {llm.LLAMA_CPP_MMQ_BUILD} llama.cpp unpacks "
        "a quantised prompt's weights to FP16 and multiplies them as FP16 (`ggml_cuda_op_mul_mat_cublas`), so "
        "the FP16 prompt has less to do."
        + _unpacked_text(everything)
        + _power_text(everything)
        + " And a llama.cpp prompt timed on a path the model's prefill does not follow "
        "(`gpukit.llm.other_prefill_path`: flash attention on, or a quantised prompt in the int8 kernels of a "
        f"build from {llm.LLAMA_CPP_MMQ_BUILD} on, on compute capability {llm.MMQ_COMPUTE_CAPABILITY:g} and "
        "later), set against the model in the section after the table.",
        "",
        "| GPU | cards | model | weights | test | published tokens/s, shortest to longest | why |",
        "|---|---:|---|---|---|---|---|",
    ]
    for (gpu, n, model, weights, test), series in out_.groupby(
        ["gpu", "gpus", "model", "weights", "test"], sort=True
    ):
        speeds = ", ".join(f"{v:g}" for v in series.sort_values("tokens")["throughput_tokens_s"])
        lines.append(f"| {gpu} | {n} | {model} | {weights} | {test} | {speeds} | {why[series.index[0]]} |")
    with_them = llm.summary_by_test(llm.validation_table(everything, include_screened=True))
    lines += [
        "",
        "Graded with them: "
        + "; ".join(
            f"{r['test'].split(' (')[0]} {r['within_tolerance']} of {r['pairs']} within ±{llm.RATIO_TOLERANCE:.0%}, "
            f"winners {r['winners_right']} of {r['decisive_pairs']}"
            for _, r in with_them.iterrows()
            if r["pairs"]
        )
        + ".",
    ]
    kin = everything[why == ""].merge(
        out_[["source", "gpu", "model", "weights", "test"]].drop_duplicates(),
        on=["source", "gpu", "model", "weights", "test"],
    )
    kin = kin[kin["gpus"] > 1]
    if len(kin):
        lines += [
            "",
            "The same source's runs of these GPUs, models, formats and tests on several cards stay in: a "
            "layer split may speed up as the prompt grows, so the first rule cannot judge them. Their tokens/s, "
            "shortest to longest: "
            + "; ".join(
                f"{n}x {gpu} {model} {weights} {test} "
                + ", ".join(f"{v:g}" for v in series.sort_values("tokens")["throughput_tokens_s"])
                for (gpu, n, model, weights, test), series in kin.groupby(
                    ["gpu", "gpus", "model", "weights", "test"], sort=True
                )
            )
            + ".",
        ]
    return lines


def current_build_section(everything) -> list[str]:
    """The prompts timed on a path the model does not follow (``llm.other_prefill_path``: a current
    llama.cpp's int8 kernels, flash attention), set against the model: what grading them would give
    (``llm.other_path_grading``), and each GPU's published over predicted speed at the shortest and
    longest prompt (``llm.other_path_table``)."""
    table = llm.other_path_table(everything)
    if table.empty:
        return []
    rows = everything.loc[llm.other_prefill_flags(everything).index]
    g = llm.other_path_grading(everything)
    short, long = rows["tokens"].min(), rows["tokens"].max()
    out = [
        "",
        "## Prompts on a current llama.cpp, beside the grading",
        "",
        f"{len(rows)} configurations' prompts from llama.cpp {llm.engine_versions(rows)} "
        f"({', '.join(sorted(rows['source'].unique()))}), left out of the grading "
        "above because the model's prefill follows build 2824's path. Graded as the rest are, among themselves: "
        f"{g['within_tolerance']} of {g['pairs']} pairs within ±{llm.RATIO_TOLERANCE:.0%}, winners right in "
        f"{g['winners_right']} of {g['decisive_pairs']}, median error {g['median_abs_error_pct']:.1f}%. Published "
        "over predicted tokens/s per GPU (the median over its models; `gpukit.llm.other_path_table` gives every "
        "length), and the path the run's prompt took there:",
        "",
        f"| GPU | compute capability | path | configurations | pp{short} | pp{long} |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for _, r in table.iterrows():
        cells = [r[f"pp{n}"] for n in (short, long)]
        out.append(
            f"| {r['gpu']} | {r['compute_capability']} | {r['path']} | {r['configurations']} | "
            + " | ".join("—" if c != c else f"{c:.2f}" for c in cells)
            + " |"
        )
    return out


def _ablation(label: str, table) -> str:
    """One line: each test's pairs within the tolerance under a variant of the model, and between single GPUs."""
    by = llm.summary_by_test(table, by_setting=True)
    return (
        label
        + ": "
        + "; ".join(
            f"{test.split(' (')[0]} {int(part['within_tolerance'].sum())} of {int(part['pairs'].sum())} within "
            f"±{llm.RATIO_TOLERANCE:.0%} ({int(one['within_tolerance'])} of {int(one['pairs'])} between single GPUs)"
            for test, part in by.groupby("test", sort=False)
            if part["pairs"].sum()
            for one in [part[part["setting"] == llm.SETTINGS[0]].iloc[0]]
        )
        + "."
    )


@contextlib.contextmanager
def _engines(flag: str, value, names=None):
    """``flag`` of :data:`gpukit.llm.ENGINES` set to ``value`` for ``names`` (every engine by default)
    while the block runs: ``gemv_per_sm`` holds decode to the per-SM streaming cap, ``scalar_kernels``
    the prompt's other kernels, ``pipeline_across_passes`` and ``sched_copies`` a layer split's pipeline."""
    chosen = list(llm.ENGINES) if names is None else list(names)
    saved = {name: llm.ENGINES[name][flag] for name in chosen}
    for name in chosen:
        llm.ENGINES[name][flag] = value
    try:
        yield
    finally:
        for name, old in saved.items():
            llm.ENGINES[name][flag] = old


#: The decode cap as a rate per second per SM that fits the first source best (the model's form before
#: it counted cycles), for the ablation.
PER_SECOND_CAP = 9e9


@contextlib.contextmanager
def _decode_cap_per_second():
    """llama.cpp's decode cap at :data:`PER_SECOND_CAP` per SM whatever the GPU's clock."""
    saved = llm.speed.gemv_rate
    llm.speed.gemv_rate = lambda row: specs.sm_count(row) * PER_SECOND_CAP
    try:
        yield
    finally:
        llm.speed.gemv_rate = saved


def _streaming_prompts():
    """llama.cpp's prompt kernels at the streaming rate, as if they loaded several elements a thread."""
    return _engines("scalar_kernels", False, ["llama.cpp"])


def prefill_ratio_section(ref, cat) -> list[str]:
    """Single-GPU prompt processing, published over predicted per GPU at the shortest and longest
    prompt, with and without the memory traffic between the matrix multiplies."""
    single = ref[(ref["gpus"] == 1) & (ref["test"] == "pp")]
    if single.empty:
        return []
    with_traffic = single["throughput_tokens_s"] / llm.predict_reference(single)
    with _streaming_prompts():
        uncapped = single["throughput_tokens_s"] / llm.predict_reference(single)
    saved = llm.speed.prefill_traffic_bytes
    try:
        llm.speed.prefill_traffic_bytes = lambda *args, **kwargs: 0.0
        without = single["throughput_tokens_s"] / llm.predict_reference(single)
    finally:
        llm.speed.prefill_traffic_bytes = saved
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
        f"| GPU | memory | rows | pp{short} | pp{long} | pp{short} no cap | pp{long} no cap | pp{short} no traffic "
        f"| pp{long} no traffic |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
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


def several_gpus_section(ref) -> list[str]:
    """Prompt processing on several GPUs: published over predicted at the shortest and longest
    prompt. A layer split gains nothing on one micro-batch and pipelines the micro-batches of a longer
    prompt, so the change from the short to the long prompt shows how much of that pipelining happened."""
    pp = ref[(ref["test"] == "pp") & (ref["gpus"] > 1)]
    if pp.empty:
        return []
    pp = pp.assign(predicted=llm.predict_reference(pp))
    pp = pp.assign(ratio=pp["throughput_tokens_s"] / pp["predicted"])
    short, long = pp["tokens"].min(), pp["tokens"].max()
    second = 2 * llm.PROMPT_CHUNK
    out = [
        "",
        "## Prefill on several GPUs, measured over predicted",
        "",
        f"A layer split (llama.cpp's) gains nothing on a single {llm.PROMPT_CHUNK}-token micro-batch and pipelines "
        "the micro-batches of a longer prompt as llama.cpp's scheduler runs them (`gpukit.llm.pipeline_makespan`); "
        f"the ratio at pp{short} and at pp{long} shows whether the published runs pipelined as much. The next two "
        f"columns isolate the overlap: what the second micro-batch of a pp{second} adds to the time of the first "
        f"(pp{short}), as a share of it, published and predicted; 1 where the cards run one micro-batch at a time, "
        "1/N where N cards overlap two perfectly. The last two set the cards' single micro-batch (pp"
        f"{short}) against one card of the same GPU on the same model, where the source ran one: the cards run "
        "their layers one after another and hand the hidden state on, so no more than 1 is predicted; a "
        "published figure above it is cards running faster than the one card did.",
        "",
        f"| GPU | cards | model | weights | pp{short} | pp{long} | second micro-batch, published | predicted "
        f"| pp{short} over one card, published | predicted |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    keys = ["gpu", "gpus", "model", "weights"]
    grid = pp.pivot_table(index=keys, columns="tokens", values="ratio", aggfunc="median")
    rates = {
        col: pp.pivot_table(index=keys, columns="tokens", values=col, aggfunc="median")
        for col in ("throughput_tokens_s", "predicted")
    }
    one = ref[(ref["test"] == "pp") & (ref["gpus"] == 1) & (ref["tokens"] == short)]
    one = one.assign(predicted=llm.predict_reference(one))
    alone = {
        col: one.groupby(["gpu", "model", "weights"])[col].median()
        for col in ("throughput_tokens_s", "predicted")
    }
    for key, r in grid.iterrows():
        added = [
            f"{2 * t.loc[key, short] / t.loc[key, second] - 1:.2f}" if second in t.columns else ""
            for t in rates.values()
        ]
        solo = (key[0], key[2], key[3])
        against = [
            f"{rates[col].loc[key, short] / alone[col][solo]:.2f}" if solo in alone[col].index else ""
            for col in ("throughput_tokens_s", "predicted")
        ]
        out.append(
            "| {} | {} | {} | {} | ".format(*key)
            + f"{r[short]:.2f} | {r[long]:.2f} | "
            + " | ".join(added + against)
            + " |"
        )
    return out + _pipeline_variants(ref, grid, short, long)


@contextlib.contextmanager
def _equal_layers():
    """Every GPU of a layer split holding the same share of the layers."""
    saved = llm.speed.layer_stages
    llm.speed.layer_stages = lambda layers, gpus: [layers / gpus] * gpus
    try:
        yield
    finally:
        llm.speed.layer_stages = saved


@contextlib.contextmanager
def _hop_latency_only():
    """A layer split's hand-off at ``LAYER_HOP_S`` alone: its bytes through the host take no time."""
    saved = llm.speed.layer_hop_s
    llm.speed.layer_hop_s = lambda *args, **kwargs: llm.LAYER_HOP_S
    try:
        yield
    finally:
        llm.speed.layer_hop_s = saved


@contextlib.contextmanager
def _earlier_rule():
    """A layer split's pipeline as the model ran it before it followed llama.cpp's scheduler."""
    with (
        _engines("sched_copies", None, ["llama.cpp"]),
        _engines("pipeline_across_passes", False, ["llama.cpp"]),
    ):
        yield


def _pipeline_variants(ref, grid, short, long) -> list[str]:
    """The layer split's pipeline as the model runs it, graded beside each of its parts undone."""
    rise = (grid[long] / grid[short]).groupby(level="model").median()

    def several(table):
        return table[(table["test"] == "pp") & (table["setting"] == llm.SETTINGS[1])]

    variants = [
        ("the model", contextlib.nullcontext()),
        (
            "each pass of the prompt drained before the next",
            _engines("pipeline_across_passes", False, ["llama.cpp"]),
        ),
        ("no wait for the scheduler's copies", _engines("sched_copies", 10**6, ["llama.cpp"])),
        ("the same number of layers on every GPU", _equal_layers()),
        (f"each hand-off {llm.LAYER_HOP_S * 1e6:.0f} µs whatever its bytes", _hop_latency_only()),
        (
            "the earlier rule: each pass drained, m micro-batches through n equal stages in m + n - 1 stage "
            "times",
            _earlier_rule(),
        ),
    ]
    tables = []
    for label, context in variants:
        with context:
            tables.append((label, several(llm.validation_table(ref))))
    models = sorted(tables[0][1]["model"].unique())
    out = [
        "",
        f"The model follows llama.cpp's source at the benchmarked build (2824). Each GPU holds the layers "
        "`llm_load_tensors` gives it (`gpukit.llm.layer_stages`: the extra layer on the first GPU, the output "
        "layer on the last; Llama 3 8B on four GPUs 9, 8, 8 and 7 layers, as a published run's log shows in its "
        "KV-cache buffers, 288, 256, 256 and 224 MiB). The hidden state passes to the next GPU on the sending "
        "GPU's stream, through host memory, as llama.cpp enables peer access only for row-split weights "
        f"(`LAYER_HOP_S` plus its float32 bytes over PCIe through the host). llama-bench calls `llama_decode` once "
        f"a pass of {llm.PROMPT_BATCH} tokens and synchronises only when the prompt is done, so the pipeline runs "
        f"on from one pass into the next; and the scheduler keeps {llm.SCHED_COPIES} copies of each GPU's inputs "
        "(`GGML_SCHED_MAX_COPIES`; the runs' logs print `pipeline parallelism enabled (n_copies=4)`), so before "
        f"it copies a micro-batch's inputs to a GPU the host waits until that GPU has finished the micro-batch "
        f"{llm.SCHED_COPIES} earlier (`ggml_backend_sched_compute_splits`), which on more GPUs than copies paces "
        "the pipeline. Prefill pairs with several GPUs within ±20 %, with each part undone in turn:",
        "",
        "| pipeline | " + " | ".join(models) + " | all | winners right |",
        "|---|" + "---:|" * (len(models) + 2),
    ]
    for label, table in tables:
        cells = [
            f"{int(table[table['model'] == m]['within_tolerance'].sum())} of {int((table['model'] == m).sum())}"
            for m in models
        ]
        decisive = table[table["decisive"]]
        out.append(
            f"| {label} | "
            + " | ".join(cells)
            + f" | {int(table['within_tolerance'].sum())} of {len(table)} "
            f"| {int(decisive['winner_right'].sum())} of {len(decisive)} |"
        )
    return out + [
        "",
        "Over the table above, published over predicted from the shortest to the longest prompt "
        "changes by a median factor of "
        + ", ".join(f"{rise[m]:.2f} for {m}" for m in rise.index)
        + "; below 1, the runs pipelined less than the model lets them. The 70B runs on two to four GPUs "
        "in Q4_K_M hardly pipeline at all, and nothing read in that build's source (the scheduler, the graph "
        "allocator's reserve for the largest graph, `llama_decode_internal`, the CUDA backend's memory "
        "pools and peer access) tells them apart, so the model keeps one rule for both and the "
        "difference stays in these errors.",
    ]


def decoder_memory_section() -> list[str]:
    """The benchmark decoder's allocator peak on this device against the estimate of its shape."""
    info = device.describe_attached()
    out = [
        "",
        "## The benchmark decoder's memory, measured here",
        "",
        f"`gpukit bench`'s decoder workload (a LLaMA-shaped decoder with a KV cache), one prefill and one decode "
        f"step on {info['kind'].upper()} {info['name']}, each size in a fresh process: the allocator's peak "
        "against `gpukit.llm.inference_memory` of the same shape (its weights and KV cache at float32, the "
        "prompt's activations and attention scores; no runtime reserve).",
        "",
        "| layers | hidden | batch | prompt | context | measured MiB | estimated MiB | error |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    sizes = [
        wl.sizes("cpu", True)["decoder"],
        wl.sizes("cpu", False)["decoder"],
        {**wl.sizes("cpu", True)["decoder"], "batch": 4, "prompt": 256, "context": 1024},
    ]
    for p in sizes:
        got = llm.measure_decoder_memory(p, "fp32")
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
