"""How wide each GPU's speed prediction is: the error band an answer quotes beside it.

A GPU that published runs graded (:func:`gpukit.perfmodel.graded_gpus`) takes its family's median
error on published same-source speedups, or, where larger, its own error when it was left out of a
fit to its family's other pairs (:func:`gpukit.perfmodel.leave_one_gpu_out`): a few pairs do not
earn a GPU the family's band. A GPU no run graded takes the largest of those held-out errors among
its architecture's GPUs, since a GPU the fit never saw is what each held-out GPU stood in for; where
no GPU of its architecture was graded either (a Turing T4, a B200 on BERT), the largest held-out
error of any GPU. A band is never narrower than the family's.

Two GPUs whose work per dollar differ by less than their bands allow are "within error of each
other": :func:`within_error` says so, and ``gpukit rank`` marks such neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .. import cache, specs
from .fitting import leave_one_gpu_out
from .grading import family_accuracy
from .reference import REFERENCE_PATH, cached_reference, family, graded_gpus


@dataclass(frozen=True)
class Band:
    """A prediction's error band: ``error_pct`` (a median absolute error, %; None: not graded at
    all), what it rests on (``basis``: graded, architecture, any architecture) and ``text``, the
    phrase an answer prints, and ``graded_on``, the GPUs it was graded on."""

    error_pct: float | None
    basis: str
    text: str
    #: The GPUs whose graded errors the band is: the GPU itself, its architecture's GPUs held out
    #: of the fit, or the held-out GPU of any architecture that erred most (empty: a family's band).
    graded_on: tuple[str, ...] = ()


#: The TensorFlow build another vendor's GPU trains on: no published run here graded either.
TENSORFLOW_BACKENDS = {"AMD": "ROCm", "Apple": "Metal"}
#: The families a single-GPU band is graded per; several GPUs are graded as one scaling family.
SINGLE_GPU_FAMILIES = ("CNN", "transformer")


def held_out_errors(family_name: str) -> dict[str, float]:
    """Each graded GPU's median error in ``family_name`` when it was left out of a fit to the
    family's other pairs. Fitted within the family, as the family's own grading is, so a
    transformer's band needs no TensorFlow (a CNN's walks ResNet-50); kept between runs."""

    def compute() -> dict[str, float]:
        ref = cached_reference(str(REFERENCE_PATH))
        ref = ref[[family(w) == family_name for w in ref["workload"]]]
        held = leave_one_gpu_out(reference=ref)
        rows = held[held["family"] == family_name]
        return dict(zip(rows["held_out"], rows["median_abs_error_pct"].astype(float), strict=True))

    return cache.cached(f"perfmodel-bands-{family_name}", [*cache.data_files(), REFERENCE_PATH], compute)


def error_bands(
    workload: str, gpus, catalogue: pd.DataFrame | None = None, count: int = 1
) -> dict[str, Band]:
    """Each of ``gpus``' error band for a prediction of ``workload`` on ``count`` GPUs."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    fam = "scaling" if count > 1 else family(workload)
    acc = family_accuracy(fam) if fam in (*SINGLE_GPU_FAMILIES, "scaling") else {"pairs": 0}
    if not acc.get("pairs"):
        return {g: Band(None, "not graded", "not graded") for g in gpus}
    median = float(acc["median_abs_error_pct"])
    if fam == "scaling":
        return {g: Band(median, "graded", f"±{median:.0f}% (N-GPU speedups)") for g in gpus}
    graded = graded_gpus(fam)  # what predict's `graded` column says
    held = held_out_errors(fam)
    arch = dict(zip(cat["gpu"], cat["architecture"], strict=True))
    vendor = dict(zip(cat["gpu"], cat["vendor"], strict=True)) if "vendor" in cat else {}
    worst = max(held.values(), default=median)
    worst_gpu = tuple(h for h, e in held.items() if e == worst)[:1]
    out = {}
    for g in gpus:
        if g in graded:
            e = max(held.get(g, median), median)
            how = "graded on it" if e == median else "graded; its held-out error"
            out[g] = Band(e, "graded", f"±{e:.0f}% ({how})", (g,))
            continue
        kin = {h: e for h, e in held.items() if arch.get(h) == arch.get(g)}
        if kin:
            e = max(max(kin.values()), median)
            text = f"±{e:.0f}% (not graded; {arch.get(g)} GPUs held out)"
            out[g] = Band(e, "architecture", text, tuple(sorted(kin)))
        else:
            e = max(worst, median)
            backend = TENSORFLOW_BACKENDS.get(vendor.get(g, "NVIDIA"))
            on = f", nor TensorFlow on {backend}" if backend else ""
            text = f"±{e:.0f}% (not graded, nor any {arch.get(g)} GPU{on})"
            out[g] = Band(e, "any architecture", text, worst_gpu)
    return out


def with_error_bands(frame: pd.DataFrame, workload: str, count: int = 1) -> pd.DataFrame:
    """A :func:`gpukit.perfmodel.predict_table` frame with each GPU's band beside its prediction:
    ``error_band_pct``, ``error_band`` (the phrase, saying what the band rests on) and
    ``graded_on`` (the GPUs whose graded errors it is; "" for a family's band)."""
    found = error_bands(workload, list(frame["gpu"]), count=count)
    out = frame.copy()
    out["error_band_pct"] = [found[g].error_pct for g in out["gpu"]]
    out["error_band"] = [found[g].text for g in out["gpu"]]
    out["graded_on"] = [", ".join(found[g].graded_on) for g in out["gpu"]]
    return out


def within_error(value_a: float, value_b: float, error_a: float | None, error_b: float | None) -> bool:
    """Whether two predicted figures (work per dollar, throughput) lie within their error bands
    (``error_a``, ``error_b``: %, a :attr:`Band.error_pct`) of each other: the larger over the
    smaller is no more than ``(1 + e_a)(1 + e_b)``. False where a figure or a band is missing."""
    if not (value_a > 0 and value_b > 0) or error_a is None or error_b is None:
        return False
    hi, lo = max(value_a, value_b), min(value_a, value_b)
    return hi / lo <= (1 + error_a / 100) * (1 + error_b / 100)


__all__ = ["Band", "error_bands", "held_out_errors", "with_error_bands", "within_error"]
