"""The comparison's tables: the specs side by side, the throughput of each per workload and
precision (measured where measured, predicted otherwise), and whether each model fits."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .. import memory, perfmodel, rank, specs
from ..errors import GpukitError, ParameterError
from ..models.registry import resolve_model, transformer_task
from ..perfmodel.reference import SYNTHETIC
from ..units import missing
from .numbers import num, ratio
from .published import published_speedups, published_text

#: Spec rows of the comparison: (column, label, unit).
SPEC_ROWS = (
    ("architecture", "architecture", ""),
    ("form_factor", "form factor", ""),
    ("fp32_tflops", "FP32 (CUDA cores)", "TFLOPS"),
    ("tf32_tensor_tflops", "TF32 tensor", "TFLOPS"),
    ("fp16_tensor_tflops", "FP16 tensor, dense", "TFLOPS"),
    ("bf16_tensor_tflops", "BF16 tensor, dense", "TFLOPS"),
    ("int8_tensor_tops", "INT8 tensor, dense", "TOPS"),
    ("memory_gb", "memory", "GB"),
    ("memory_type", "memory type", ""),
    ("memory_bandwidth_gbs", "memory bandwidth", "GB/s"),
    ("l2_cache_mib", "L2 cache", "MiB"),
    ("tdp_w", "board power", "W"),
    ("nvlink_gbs", "NVLink", "GB/s"),
    ("pcie_gen", "PCIe generation", ""),
)

#: The fit table's columns that say under what a memory verdict holds.
FIT_CONDITIONS = ("precision", "optimizer", "input")


def spec_table(ra: specs.GPU, rb: specs.GPU) -> pd.DataFrame:
    rows = []
    for col, label, unit in SPEC_ROWS:
        va, vb = ra[col], rb[col]
        va = None if missing(va) else va
        vb = None if missing(vb) else vb
        rows.append(
            {
                "spec": label,
                "unit": unit,
                "a": va,
                "b": vb,
                "a_over_b": ratio(va, vb) if not isinstance(va, str) else None,
            }
        )
    return pd.DataFrame(rows)


def sequence_lengths(workloads: Sequence[str], seq_len: int | None) -> dict[str, int | None]:
    """Each workload's tokens per sequence: ``seq_len`` for the transformers among them (their
    default where it is None), None for the others; ``seq_len`` given where no workload is a
    transformer is an error that says so."""
    takes = {w: transformer_task(w) is not None for w in workloads}
    if seq_len is not None:
        if seq_len < 1:
            raise ParameterError(f"sequence length {seq_len} must be at least 1")
        if not any(takes.values()):
            raise ParameterError(
                f"--seq-len applies to transformer workloads (bert-base, bert-base-squad, ...); "
                f"{', '.join(workloads)} take none"
            )
    return {w: seq_len if takes[w] else None for w in workloads}


def fit_models(workloads: Sequence[str], lengths: dict[str, int | None]) -> list[tuple[str, int | None]]:
    """The models the memory fit checks for the workloads asked, with their sequence lengths: the
    model each workload trains, where the memory estimate knows it (the synthetic kernels and the
    benchmark's own encoder are left out)."""
    out = []
    for w in workloads:
        if w.lower() in SYNTHETIC:
            continue
        try:
            resolve_model(w)  # a name the memory estimate knows
        except GpukitError:
            continue
        out.append((w, lengths.get(w)))
    return out


def throughput_table(
    a: specs.GPU,
    b: specs.GPU,
    workloads: Sequence[str],
    precisions: Sequence[str],
    batch_size: int | None,
    results: list | None,
    cat: pd.DataFrame,
    lengths: dict[str, int | None] | None = None,
) -> tuple[pd.DataFrame, str]:
    """Throughput of GPUs ``a`` and ``b`` per workload and precision (measured where a results
    document has it, else predicted), with the model's measured error for the workload's family
    and the published speedups of any variant the names given fit; ``lengths`` the tokens per
    sequence of the transformer workloads (:func:`sequence_lengths`)."""
    rows = []
    source = ""
    for w in workloads:
        given = (lengths or {}).get(w)
        extra = {"seq_len": given} if given is not None else {}
        for p in precisions:
            t = perfmodel.predict_table(
                w, p, batch_size, "train", [a, b], results=results, catalogue=cat, **extra
            )
            source = t["efficiency_source"].iloc[0]
            ra, rb = t[t["gpu"] == a.name].iloc[0], t[t["gpu"] == b.name].iloc[0]

            def pick(r):
                m = r["measured_throughput"]
                if m is not None and m == m:
                    return float(m), "measured"
                return num(r["throughput"]), "predicted"

            ta, basis_a = pick(ra)
            tb, basis_b = pick(rb)
            note = "; ".join(n for n in (ra["note"], rb["note"]) if n and not n.startswith("measured"))
            published = published_speedups(a, b, w, ra["precision"], cat)
            rows.append(
                {
                    "workload": w,
                    "precision": ra["precision"],
                    "batch_size": int(ra["batch_size"]),
                    "unit": ra["throughput_unit"],
                    "throughput_a": ta,
                    "throughput_b": tb,
                    "basis_a": basis_a,
                    "basis_b": basis_b,
                    "speedup_a_over_b": ratio(ta, tb),
                    "bound_a": ra["bound"] if ta is not None else "",
                    "bound_b": rb["bound"] if tb is not None else "",
                    "math_a": ra["math"],
                    "math_b": rb["math"],
                    "model_error": perfmodel.accuracy_text(perfmodel.family(w)),
                    "published": published_text(published),
                    "published_rows": published,
                    "note": note,
                }
            )
    return pd.DataFrame(rows), source


def value_table(
    a: specs.GPU,
    b: specs.GPU,
    thr: pd.DataFrame,
    lengths: dict[str, int | None],
    batch_size: int | None,
    cat: pd.DataFrame,
    prices: pd.DataFrame,
) -> pd.DataFrame:
    """Work per dollar of each card, one row per workload of ``thr`` (its fp16 row where it has
    one: what a buyer trains with): the throughput as a buyer would run it, at the largest batch
    that fits each card, capped where throughput stops growing (``gpukit rank``'s rule), or at
    ``batch_size`` (a workload the memory estimate does not know keeps ``thr``'s figures and
    batch); then each card's purchase price and throughput per $1,000 of it, and its cloud rate
    and dollars per million items (``prices``: the cards' rows of :func:`gpukit.prices.cost.cost_table`,
    whose kind, provider and date each row carries)."""
    pair = cat[cat["gpu"].isin([a.name, b.name])]
    held = prices.drop_duplicates("gpu").set_index("gpu")
    rows = []
    for _, r in _one_precision_each(thr).iterrows():
        row = {
            k: r[k] for k in ("workload", "precision", "unit", "throughput_a", "throughput_b", "model_error")
        }
        row["basis"] = "measured" if {r["basis_a"], r["basis_b"]} == {"measured"} else "predicted"
        row["batches"] = f"batch {r['batch_size']}"
        if row["basis"] == "predicted" and r["workload"].lower() not in SYNTHETIC:
            row.update(_buyers_batch(a, b, r, lengths, batch_size, pair))
        for side, gpu in (("a", a), ("b", b)):
            p, t = held.loc[gpu.name], num(row[f"throughput_{side}"])
            price, hourly = num(p["price_usd"]), num(p["cloud_usd_per_hour"])
            row.update(
                {
                    f"price_usd_{side}": price,
                    f"price_{side}": f"{p['price_kind']} price of {p['price_date']}" if price else "",
                    f"per_1k_usd_{side}": t / price * 1000 if t and price else None,
                    f"cloud_usd_per_hour_{side}": hourly,
                    f"cloud_{side}": f"{p['cloud_provider']} rate of {p['cloud_date']}" if hourly else "",
                    f"usd_per_million_{side}": hourly / (t * 3600) * 1e6 if t and hourly else None,
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def _one_precision_each(thr: pd.DataFrame) -> pd.DataFrame:
    """Each workload's fp16 row where it has one, else its first."""
    if thr.empty:
        return thr
    rank_of = thr["precision"].ne("fp16").astype(int)
    return (
        thr.assign(_r=rank_of)
        .sort_values("_r", kind="stable")
        .drop_duplicates("workload")
        .drop(columns="_r")
        .sort_index()
    )


def _buyers_batch(a, b, r, lengths, batch_size, pair) -> dict:
    """Each card's throughput at the batch a buyer would run (:func:`gpukit.rank.job_speeds`);
    nothing where the memory estimate does not know the workload."""
    job = rank.Job(r["workload"], r["precision"], seq_len=lengths.get(r["workload"]), batch=batch_size)
    try:
        speeds = rank.job_speeds(job, pair)
    except GpukitError:
        return {}
    sa, sb = speeds.loc[a.name], speeds.loc[b.name]
    batches = (
        f"batch {sa['batch_size']} on {a} and {sb['batch_size']} on {b}, the largest that fits each "
        "(capped where throughput stops growing)"
        if batch_size is None
        else f"batch {batch_size}"
    )
    return {"throughput_a": num(sa["throughput"]), "throughput_b": num(sb["throughput"]), "batches": batches}


def fit_table(
    a: specs.GPU,
    b: specs.GPU,
    models: Sequence[tuple[str, int | None]],
    batches: Sequence[int],
    precision: str,
    optimizer: str,
    cat: pd.DataFrame,
) -> pd.DataFrame:
    """Whether each model (with its tokens per sequence, where it has one) fits each card at each
    of ``batches``, and the largest batch on each."""
    frames = []
    for m, seq_len in models:
        report = memory.fit_report(
            [m], batches, [a, b], precision, optimizer, "train", catalogue=cat, seq_len=seq_len
        )
        # what the verdicts say they were estimated at: the precision, optimizer and one example's size
        frames.append(memory.fit_summary(report).assign(model=m, **{c: report[c] for c in FIT_CONDITIONS}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
