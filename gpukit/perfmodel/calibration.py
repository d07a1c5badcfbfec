"""Calibration: efficiency factors from what a catalogued GPU measured with ``gpukit bench``."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from .. import specs
from ..bench.results import Results, as_documents
from .profiles import profile
from .roofline import DEFAULT_EFFICIENCY, Efficiency, predict

#: The maths that run on tensor cores (a record's ``math_mode``).
TENSOR_MATHS = ("TF32", "FP16", "BF16")


def calibrate(
    results: Results | list | dict | None,
    catalogue: pd.DataFrame | None = None,
    base: Efficiency = DEFAULT_EFFICIENCY,
) -> Efficiency:
    """Efficiency factors from a benchmark results document of a catalogued GPU.

    ``tensor``: the best fraction of peak a matmul on tensor cores (TF32, FP16 or BF16, as the
    record says ran) reached; ``cuda``: the best FP32 matmul; ``stream``: the best bandwidth
    kernel; ``scale``: measured over predicted throughput of the ResNet-50 (else transformer)
    training step measured there. Factors without a measurement keep ``base``. A CPU, or a GPU
    the catalogue lacks, cannot calibrate a GPU: ``base`` comes back, its ``source`` saying why.
    """
    docs = as_documents(results)
    if not docs:
        return replace(base, source=f"{base.source} (no benchmark results to calibrate from)")
    doc = next((d for d in docs if d.catalogued_gpu), docs[0])
    if doc.device.kind != "gpu":
        return replace(
            base, source=f"{base.source} (the attached device is a CPU; a CPU cannot calibrate a GPU)"
        )
    name = doc.catalogued_gpu
    if not name:
        return replace(
            base, source=f"{base.source} (the attached GPU {doc.device.name} is not in the catalogue)"
        )
    cat = specs.load_catalogue() if catalogue is None else catalogue
    best: dict[str, float] = {}
    for r in doc.records:
        frac = r.peak_fraction
        if r.status != "ok" or r.workload not in ("matmul", "bandwidth") or not frac or frac != frac:
            continue
        key = "stream" if r.workload == "bandwidth" else ("tensor" if r.math_mode in TENSOR_MATHS else "cuda")
        best[key] = max(best.get(key, 0.0), min(float(frac), 1.0))
    eff = replace(base, **best)
    used = sorted(best)
    for workload in ("resnet50", "transformer"):
        rec = next((r for r in doc.records if r.workload == workload and r.ok and r.mode == "train"), None)
        if rec is None:
            continue
        params = {k: v for k, v in rec.params.items() if k not in ("batch", "mode")}
        prof = profile(workload, int(rec.batch), rec.precision, "train", **params)
        gpu = specs.row(cat, name)
        predicted = predict(prof, gpu, replace(eff, scale=1.0)).throughput
        eff = replace(eff, scale=float(rec.throughput) / predicted)
        used.append(f"scale from {workload}")
        break
    if not used:
        return replace(
            base, source=f"{base.source} (the results of {name} have no matmul or model measurement)"
        )
    return replace(eff, source=f"calibrated on {name} ({', '.join(used)})")
