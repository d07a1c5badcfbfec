"""Answers for the workshop notebook (``notebooks/09_workshop.ipynb``), computed, never typed in.

Each answer is built from the same package calls as the report: the catalogue, the
performance model and its published reference measurements, the memory model, the fact-check
and the cost model. Hidden unless the notebook runs with ``reveal_answers = True``.
"""

from __future__ import annotations

import pandas as pd

from .. import memory, perfmodel, specs
from ..compare import claims
from ..present.tables import Note
from ..prices import book as prices
from ..prices import cost
from ..units import MIB


class Answer(Note):
    """A revealed (or hidden) answer, shown as an escaped paragraph in a box."""

    def _repr_html_(self) -> str:
        import html

        return (
            "<div style='border-left:4px solid #55A868;padding:.3em .8em;background:#f3f8f4'>"
            f"{html.escape(self.text)}</div>"
        )


HIDDEN = "Answer hidden. Discuss first; then re-run with reveal_answers = True (papermill: -p reveal_answers true)."


def _published(a: str, b: str, precision: str) -> tuple[float, str] | None:
    from ..compare import published_speedups

    found = published_speedups(a, b, "resnet50", precision, specs.load_catalogue())
    if not found:
        return None
    f = found[0]
    return f["published"], f"{f['source']}, {f['a']} vs {f['b']}"


def _speed(a: str, b: str, precision: str = "fp16") -> str:
    table = perfmodel.predict_table("resnet50", precision, 256, "train", [a, b])
    ratio = perfmodel.speedup(table, a, b)
    ra = specs.lookup(a)
    rb = specs.lookup(b)
    bound = table.set_index("gpu").loc[ra["gpu"], "bound"]
    text = (
        f"Predicted ResNet-50 training ({precision}, batch 256): {ra['gpu']} runs at {ratio:.2f}× the speed "
        f"of {rb['gpu']}; the step is mostly {bound}-bound. Peak FP16 tensor: "
        f"{ra['fp16_tensor_tflops']:g} vs {rb['fp16_tensor_tflops']:g} TFLOPS "
        f"({ra['fp16_tensor_tflops'] / rb['fp16_tensor_tflops']:.2f}×); bandwidth "
        f"{ra['memory_bandwidth_gbs']:g} vs {rb['memory_bandwidth_gbs']:g} GB/s "
        f"({ra['memory_bandwidth_gbs'] / rb['memory_bandwidth_gbs']:.2f}×)."
    )
    pub = _published(a, b, precision)
    if pub:
        text += f" Published ({pub[1]}, data/reference_benchmarks.csv): {pub[0]:.2f}×."
    return text


def _fit() -> str:
    est = memory.Estimator("bert-large", seq_len=512)
    out = []
    for gpu in ("RTX A4000", "RTX A5000"):
        row = specs.lookup(gpu)
        cap = specs.gpu_memory_bytes(row) - memory.DEFAULT_RUNTIME_RESERVE_BYTES
        out.append(
            f"{row['gpu']} ({row['memory_gb']:g} GB): batch {est.largest_batch(cap, 'fp16', 'adam', 'train')}"
        )
    return (
        "Largest batch of BERT-large training at sequence length 512, mixed precision, Adam: "
        + "; ".join(out)
        + ". Memory decides what you can train at all; speed only how long it takes."
    )


def _claim() -> str:
    checked = claims.check()
    row = checked[(checked["gpu"] == "RTX A5000") & (checked["field"] == "fp16_tensor_tflops")].iloc[0]
    return (
        f"The article claims {row['claimed_value']} TFLOPS; the catalogue says {row['catalogue_value']}: "
        f"{row['verdict']} — {row['note']}. Over all four articles: "
        + ", ".join(f"{(checked['verdict'] == v).sum()} {v}" for v in claims.VERDICTS)
        + "."
    )


def _rent_or_buy() -> str:
    book = prices.load_prices()
    d = cost.DEFAULTS
    table = cost.cost_table(
        book,
        ["GeForce RTX 4090"],
        ["fp16"],
        "any",
        d["electricity_usd_per_kwh"],
        d["years"],
        d["utilization"],
    )
    r = table.iloc[0]
    if r["break_even_months"] is None or r["break_even_months"] != r["break_even_months"]:
        return f"No break-even for the RTX 4090 with the shipped prices ({r['note']})."
    return (
        f"RTX 4090 at USD {r['price_usd']:,.0f} ({r['price_kind']}, {r['price_date']}) against "
        f"USD {r['cloud_usd_per_hour']:.2f} an hour ({r['cloud_provider']}): buying pays off after "
        f"{r['break_even_months']:.1f} months at {d['utilization']:.0%} use and USD "
        f"{d['electricity_usd_per_kwh']:g}/kWh."
    )


def _llm() -> str:
    from .. import llm

    _, verdicts = llm.pair_answers(
        [("A40", "V100"), ("RTX A5000", "RTX A4000")],
        ["qwen3-8b", "gpt-oss-20b", "qwen3-14b", "llama-3.3-70b"],
        "q4_k_m",
        8192,
        1,
    )
    return " ".join(verdicts) + " " + llm.grading_statement() + "."


#: The GPUs of the datasheet-or-delivered question: one power-limited data-centre card, one
#: workstation-class card at 350 W for 142 SMs, one GeForce card that boosts above its rating.
SUSTAINED_GPUS = ("H100 PCIe", "L40S", "GeForce RTX 4090")


def _sustained() -> str:
    table = cost.cost_table(prices.load_prices(), list(SUSTAINED_GPUS), ["fp16"])
    parts = [
        f"{r['gpu']} {r['peak_tflops']:g} on the datasheet, {r['sustained_tflops']:.0f} in a large matrix "
        f"multiply ({r['sustained_tflops'] / r['peak_tflops']:.0%}, {r['sustained_basis']})"
        for _, r in table.iterrows()
    ]
    text = "Dense FP16 TFLOPS: " + "; ".join(parts) + "."
    rent = table.dropna(subset=["cloud_usd_per_hour"])
    if len(rent) > 1:
        by_peak = rent.sort_values("cloud_usd_per_tflop_hour")["gpu"].tolist()
        by_rate = rent.sort_values("cloud_usd_per_sustained_tflop_hour")["gpu"].tolist()
        text += (
            f" Renting, from cheapest to dearest per datasheet TFLOPS-hour: {', '.join(by_peak)}; per "
            f"delivered TFLOPS-hour: {', '.join(by_rate)}"
            + (" (the order changes)." if by_peak != by_rate else " (the same order, at other distances).")
            + " Per delivered TFLOPS-hour: "
            + ", ".join(
                f"{r['gpu']} USD {r['cloud_usd_per_sustained_tflop_hour']:.4f}"
                for _, r in rent.sort_values("cloud_usd_per_sustained_tflop_hour").iterrows()
            )
            + "."
        )
    return text + (
        " The measurements are other publications' (data/matmul_rates.csv); the performance model "
        "runs every GPU's tensor cores at them."
    )


#: The cards and batch sizes of the on-chip cache question: Ada's large L2 against GA102's small one,
#: at a small batch and at the batch Lambda's harness gave the RTX 4090 for BERT-base in fp16.
CACHE_GPUS = ("GeForce RTX 4090", "A40")
CACHE_BATCHES = (8, 96)
#: The workload of the cache question: BERT-base fine-tuned on SQuAD (384 tokens), in fp16.
CACHE_WORKLOAD = ("bert-base-squad", "fp16")


def cache_table(batches: tuple[int, ...] = CACHE_BATCHES) -> pd.DataFrame:
    """:data:`CACHE_GPUS` on :data:`CACHE_WORKLOAD` at each of ``batches``: each GPU's L2, a layer's
    output at that batch, and the predicted throughput with the performance model's on-chip cache
    term and without it (``l2_share`` 0)."""
    from dataclasses import replace

    workload, precision = CACHE_WORKLOAD
    off = replace(perfmodel.DEFAULT_EFFICIENCY, l2_share=0.0, source="without the cache term")
    rows = []
    for batch in batches:
        with_term, without = (
            perfmodel.predict_table(
                workload, precision, batch, "train", list(CACHE_GPUS), efficiency=eff
            ).set_index("gpu")
            for eff in (perfmodel.DEFAULT_EFFICIENCY, off)
        )
        for gpu in CACHE_GPUS:
            rows.append(
                {
                    "gpu": gpu,
                    "l2_cache_mib": with_term.loc[gpu, "l2_cache_mib"],
                    "batch": batch,
                    "layer_output_mib": perfmodel.hidden_state_bytes(workload, batch, precision) / MIB,
                    "throughput": with_term.loc[gpu, "throughput"],
                    "throughput_without_cache_term": without.loc[gpu, "throughput"],
                    "throughput_unit": with_term.loc[gpu, "throughput_unit"],
                }
            )
    return pd.DataFrame(rows)


def _cache() -> str:
    a, b = CACHE_GPUS
    workload, precision = CACHE_WORKLOAD
    table = cache_table()
    parts, gains = [], []
    for batch, rows in table.groupby("batch", sort=False):
        r = rows.set_index("gpu")
        with_term, without = (
            r.loc[a, col] / r.loc[b, col] for col in ("throughput", "throughput_without_cache_term")
        )
        parts.append(
            f"at batch {batch} a layer's output is {r.loc[a, 'layer_output_mib']:.1f} MiB, and {a} is "
            f"predicted {with_term:.2f}x as fast as {b} with the cache term, {without:.2f}x without it"
        )
        gains.append(
            f"{r.loc[a, 'throughput'] / r.loc[a, 'throughput_without_cache_term'] - 1:+.1%} at batch {batch}"
        )
    l2 = table.groupby("gpu")["l2_cache_mib"].first()
    return (
        f"L2: {a} {l2[a]:g} MiB, {b} {l2[b]:g} MiB, as their drivers report it. Training {workload} in "
        f"{precision}, "
        + "; ".join(parts)
        + f". The cache serves only the reads of what the kernel before has "
        f"just written, where that fits; the matrix multiplies and every write still go through DRAM, so "
        f"{l2[a] / l2[b]:.0f} times the L2 moves {a}'s prediction by " + " and ".join(gains) + ", not by its "
        "ratio. " + perfmodel.grading_statement(workload) + "."
    )


ANSWERS = {
    "q1": lambda: _speed("A40", "V100"),
    "q2": lambda: _speed("RTX A5000", "RTX A4000"),
    "q3": _fit,
    "q4": _claim,
    "q5": _rent_or_buy,
    "q6": _llm,
    "q7": _sustained,
    "q8": _cache,
}


def answer(question: str, reveal: bool) -> Answer:
    """The computed answer to ``question`` (``q1``…``q8``), or a reminder that it is hidden."""
    if question not in ANSWERS:
        raise KeyError(f"no workshop question {question!r}; questions: {', '.join(ANSWERS)}")
    return Answer(ANSWERS[question]() if reveal else HIDDEN)
