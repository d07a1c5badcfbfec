"""The comparison's tables: the specs side by side, the throughput of each per workload and
precision (measured where measured, predicted otherwise), and whether each model fits."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .. import memory, perfmodel, specs
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
        va = None if isinstance(va, float) and va != va else va
        vb = None if isinstance(vb, float) and vb != vb else vb
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


def throughput_table(
    a: specs.GPU,
    b: specs.GPU,
    workloads: Sequence[str],
    precisions: Sequence[str],
    batch_size: int | None,
    results: list | None,
    cat: pd.DataFrame,
) -> tuple[pd.DataFrame, str]:
    """Throughput of GPUs ``a`` and ``b`` per workload and precision (measured where a results
    document has it, else predicted), with the model's measured error for the workload's family
    and the published speedups of any variant the names given fit."""
    rows = []
    source = ""
    for w in workloads:
        for p in precisions:
            t = perfmodel.predict_table(w, p, batch_size, "train", [a, b], results=results, catalogue=cat)
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


def fit_table(
    a: specs.GPU,
    b: specs.GPU,
    models: Sequence[str],
    batches: Sequence[int],
    precision: str,
    optimizer: str,
    cat: pd.DataFrame,
) -> pd.DataFrame:
    frames = []
    for m in models:
        report = memory.fit_report([m], batches, [a, b], precision, optimizer, "train", catalogue=cat)
        # what the verdicts say they were estimated at: the precision, optimizer and one example's size
        frames.append(memory.fit_summary(report).assign(model=m, **{c: report[c] for c in FIT_CONDITIONS}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
