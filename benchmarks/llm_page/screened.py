"""What docs/accuracy/llm.md leaves out of the grading and why (``gpukit.llm.screened``), and the
prompts of a current llama.cpp set against the model beside it."""

from __future__ import annotations

import re

from gpukit import llm

from .._report import table_head


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
        "Three rules leave a series (one run, one test, every length) out whole (`gpukit.llm.screened`). "
        f"On one GPU, a series that rises by more than {llm.RISING_TOLERANCE:.0%} with the length: llama.cpp "
        "prefills a prompt in 512-token micro-batches one after another, each attending to more context, and "
        "decodes each token over a longer cache, so one GPU's speed can only fall."
        + _spread_text(everything, out_.loc[out_["gpus"] == 1])
        + f" On one GPU or several, an FP16 prefill series slower than the same run's quantised one by more than "
        f"{llm.UNPACKED_TOLERANCE:.0%} at some length: before build {llm.LLAMA_CPP_MMQ_BUILD} llama.cpp unpacks "
        "a quantised prompt's weights to FP16 and multiplies them as FP16 (`ggml_cuda_op_mul_mat_cublas`), so "
        "the FP16 prompt has less to do." + _unpacked_text(everything) + _power_text(everything),
        "",
        *table_head(
            "| GPU | cards | model | weights | test | published tokens/s, shortest to longest | why |",
            "lrlllll",
        ),
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
