"""Predictions per GPU as tables: the roofline over the catalogue, merged with what was measured."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from .. import precision as prec
from .. import specs
from ..bench.results import Results, as_documents
from ..errors import UnknownGPUError
from ..specs.bandwidth_rates import bandwidth_share
from ..specs.matmul_rates import tensor_share
from .calibration import calibrate
from .profiles import Profile, profile
from .reference import family, graded_gpus
from .roofline import DEFAULT_EFFICIENCY, Efficiency, Prediction, predict
from .scaling import predict_scaling

PREDICTION_COLUMNS = (
    "gpu",
    "workload",
    "precision",
    "batch_size",
    "mode",
    "gpus",
    "link",
    "step_time_s",
    "throughput",
    "throughput_unit",
    "scaling_efficiency",
    "bound",
    "compute_bound_share",
    "math",
    "achieved_tflops",
    "arithmetic_intensity",
    "tensor_share",
    "tensor_share_measured",
    "bandwidth_share",
    "bandwidth_share_measured",
    "l2_cache_mib",
    "measured_throughput",
    "graded",
    "efficiency_source",
    "note",
)


def predict_table(
    workload: str = "resnet50",
    precision: str = "float32",
    batch: int | None = None,
    mode: str = "train",
    gpus: Iterable[str] | str | None = None,
    efficiency: Efficiency | None = None,
    catalogue: pd.DataFrame | None = None,
    results: Results | list | None = None,
    count: int = 1,
    link: str | None = None,
    overlap: str = "none",
    **params,
) -> pd.DataFrame:
    """One row per GPU (all catalogue GPUs by default), fastest first; GPUs that cannot run the
    precision natively get a row with no throughput and the reason in ``note``.

    ``count`` GPUs of each kind train data-parallel (``batch`` per GPU) over their real link
    (:func:`gpukit.perfmodel.predict_scaling`; ``link`` and ``overlap`` as there): ``throughput``
    is then all of them together and ``scaling_efficiency`` its share of ``count`` times one GPU.
    ``graded`` says whether published measurements of this GPU in the workload's family
    (:func:`gpukit.perfmodel.reference.family`) graded the model; ``tensor_share`` is the share of its
    datasheet tensor peak the GPU's tensor cores run at, and ``tensor_share_measured`` whether a
    published matmul run measured it (:func:`gpukit.specs.matmul_rates.tensor_share`; otherwise the median);
    ``bandwidth_share`` and ``bandwidth_share_measured`` the same of its datasheet memory bandwidth,
    as published streaming runs measured it (:func:`gpukit.specs.bandwidth_rates.bandwidth_share`);
    ``l2_cache_mib`` the L2 the cache term reads from (empty where the catalogue has none: the term
    then leaves the GPU out, ``Efficiency.l2_share``).

    ``results`` (a benchmark results document) calibrates the factors (:func:`calibrate`) unless
    ``efficiency`` is given, and where it measured this very configuration on a catalogued GPU,
    that GPU's row carries ``measured_throughput``.
    """
    cat = specs.load_catalogue() if catalogue is None else catalogue
    rows = specs.select(cat, gpus)
    prof = profile(workload, batch, precision, mode, **params)
    if efficiency is None:
        efficiency = calibrate(results, cat) if as_documents(results) else DEFAULT_EFFICIENCY
    measured = _measured(results, prof, cat) if count == 1 else {}
    fam = "scaling" if count > 1 else family(prof.workload)
    graded = graded_gpus(fam)
    out = []
    for _, gpu in rows.iterrows():
        try:
            pr = predict(prof, gpu, efficiency)
            many = predict_scaling(prof, gpu, count, efficiency, link, overlap) if count > 1 else None
        except prec.Unsupported as exc:
            out.append(_unsupported_row(prof, gpu, count, efficiency, gpu["gpu"] in graded, exc))
            continue
        out.append(_prediction_row(prof, gpu, pr, many, count, pr.gpu in graded, measured.get(pr.gpu)))
    frame = pd.DataFrame(out, columns=list(PREDICTION_COLUMNS))
    return frame.sort_values("throughput", ascending=False, na_position="last").reset_index(drop=True)


def _unsupported_row(prof: Profile, gpu, count: int, efficiency: Efficiency, graded: bool, exc) -> dict:
    """The row of a GPU that cannot run ``prof``: no throughput, the reason in ``note``."""
    return {
        "gpu": gpu["gpu"],
        "workload": prof.workload,
        "precision": prof.precision,
        "batch_size": prof.batch,
        "mode": prof.mode,
        "gpus": count,
        "throughput_unit": prof.throughput_unit,
        "efficiency_source": efficiency.source,
        "graded": graded,
        "note": str(exc),
    }


def _prediction_row(
    prof: Profile,
    gpu,
    pr: Prediction,
    many: dict | None,
    count: int,
    graded: bool,
    measured: tuple[float, str] | None,
) -> dict:
    """A GPU's row of :func:`predict_table`: the prediction ``pr`` of one GPU, the whole of ``count``
    where ``many`` (:func:`predict_scaling`) gives it, the measured rates the roofline read, and what
    this GPU's benchmark documents measured of the configuration, if anything."""
    row = {k: getattr(pr, k) for k in PREDICTION_COLUMNS if hasattr(pr, k)}
    row.update(gpus=count, link="", scaling_efficiency=1.0, graded=graded)
    if many:
        row.update(
            step_time_s=many["step_time_s"],
            throughput=many["throughput"],
            link=many["link"],
            scaling_efficiency=many["scaling_efficiency"],
            achieved_tflops=count * pr.flops / many["step_time_s"] / 1e12,
        )
    row["arithmetic_intensity"] = prof.intensity
    row["tensor_share"], row["tensor_share_measured"] = tensor_share(gpu)
    row["bandwidth_share"], row["bandwidth_share_measured"] = bandwidth_share(gpu)
    row["l2_cache_mib"] = gpu.get("l2_cache_mib")
    row["measured_throughput"] = measured[0] if measured else None
    row["note"] = measured[1] if measured else ""
    return row


def _measured(results, prof: Profile, catalogue: pd.DataFrame) -> dict[str, tuple[float, str]]:
    """{catalogue GPU: (measured throughput, note)} from the benchmark documents that ran ``prof``'s
    configuration on a catalogued GPU: same workload, batch and mode, and the same math there
    (:func:`gpukit.precision.gpu_math`: a ``fp32`` record is never merged with a ``float32``
    prediction on an Ampere GPU, where one ran FP32 and the other TF32). Several documents for
    one GPU are not averaged: the newest wins and the note says how many there were."""
    found: dict[str, list[tuple[str, float, str]]] = {}
    for doc in as_documents(results):
        gpu = doc.catalogued_gpu
        if not gpu:
            continue
        if gpu not in set(catalogue["gpu"]):
            continue
        row = specs.row(catalogue, gpu)
        try:
            want = prec.gpu_math(row, prof.precision)
        except prec.Unsupported:
            continue
        for r in doc.records:
            if r.workload != prof.workload or not r.ok or r.batch != prof.batch or r.mode != prof.mode:
                continue
            try:
                same = prec.gpu_math(row, r.precision) == want
            except prec.Unsupported:
                same = False
            if same:
                found.setdefault(gpu, []).append(
                    (doc.created, float(r.throughput), f"{doc.source}, {doc.environment_key}")
                )
                break
    out = {}
    for gpu, hits in found.items():
        hits.sort()
        created, value, source = hits[-1]
        note = f"measured ({source})" + (
            f"; newest of {len(hits)} runs, not averaged" if len(hits) > 1 else ""
        )
        out[gpu] = (value, note)
    return out


def speedup(table: pd.DataFrame, a: str, b: str, catalogue: pd.DataFrame | None = None) -> float | None:
    """Predicted throughput of GPU ``a`` over GPU ``b`` in a :func:`predict_table` frame."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ga, gb = specs.gpu(a, cat).name, specs.gpu(b, cat).name
    ta = table.loc[table["gpu"] == ga, "throughput"]
    tb = table.loc[table["gpu"] == gb, "throughput"]
    for name, t in ((ga, ta), (gb, tb)):
        if t.empty:
            raise UnknownGPUError(f"{name} is not in this prediction table; add it to the GPUs predicted")
    va, vb = ta.iloc[0], tb.iloc[0]
    if va != va or vb != vb:
        return None
    return float(va / vb)
