"""Several GPUs: data-parallel training with a ring all-reduce of the gradients over the real link."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from .. import precision as prec
from .. import specs
from ..errors import ParameterError
from .profiles import Profile, profile
from .roofline import DEFAULT_EFFICIENCY, Efficiency, predict

#: Usable PCIe x16 bandwidth per direction, GB/s, by generation: 8, 16 and 32 GT/s per lane
#: (PCI-SIG base specifications 3.0, 4.0, 5.0) x 16 lanes x 128b/130b encoding.
PCIE_X16_GBS = {3: 15.75, 4: 31.5, 5: 63.0}
#: Fraction of a link's bandwidth an all-reduce reaches (NCCL's bus bandwidth on large messages).
LINK_EFFICIENCY = 0.8


def interconnect(gpu: pd.Series | dict, n: int) -> tuple[str, float]:
    """(name, GB/s per direction) of the link ``n`` of these GPUs exchange gradients over.

    NVLink where the GPU has it: on SXM boards for any count, on PCIe cards through a bridge
    that joins two cards only; PCIe of the GPU's generation otherwise. The catalogue's NVLink
    figure is the bidirectional total, so half of it flows each way.
    """
    nvlink = float(gpu.get("nvlink_gbs") or 0)
    if nvlink > 0 and (str(gpu.get("form_factor", "")).startswith("SXM") or n == 2):
        return "NVLink", nvlink / 2
    gen = int(gpu.get("pcie_gen") or 3)
    return f"PCIe {gen}.0", PCIE_X16_GBS.get(gen, PCIE_X16_GBS[3])


def predict_scaling(prof: Profile, gpu: pd.Series | dict, n: int,
                    efficiency: Efficiency = DEFAULT_EFFICIENCY, overlap: float = 0.0) -> dict:
    """Data-parallel training of ``prof`` on ``n`` of ``gpu``: each step adds a ring all-reduce of
    the float32 gradients, 2 (n-1)/n x gradient bytes over the link (``overlap``: the share hidden
    behind the backward pass; 0 by default, the pessimistic case)."""
    if n < 1:
        raise ParameterError(f"{n} GPUs: give at least 1")
    if prof.mode != "train" or not prof.trainable_params:
        raise ParameterError("scaling is predicted for training workloads with trainable weights")
    single = predict(prof, gpu, efficiency)
    link, gbs = interconnect(gpu, n)
    grad_bytes = prof.trainable_params * 4
    allreduce = 2 * (n - 1) / n * grad_bytes / (gbs * 1e9 * LINK_EFFICIENCY) if n > 1 else 0.0
    step = single.step_time_s + allreduce * (1 - overlap)
    return {"gpu": single.gpu, "gpus": n, "link": link, "link_gbs_per_direction": gbs,
            "gradient_mb": grad_bytes / 1e6, "allreduce_s": allreduce, "step_time_s": step,
            "throughput": n * prof.items_per_step / step, "throughput_unit": prof.throughput_unit,
            "scaling_efficiency": single.step_time_s / step}


def scaling_table(workload: str = "resnet50", precision: str = "fp16", batch: int | None = None,
                  gpus: Iterable[str] | str | None = None, counts: Sequence[int] = (1, 2, 4, 8),
                  efficiency: Efficiency = DEFAULT_EFFICIENCY, catalogue: pd.DataFrame | None = None) -> pd.DataFrame:
    """Predicted scaling per GPU and GPU count (GPUs that cannot run the precision are left out;
    a workload without trainable weights, such as matmul, gives an empty table)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    prof = profile(workload, batch, precision, "train")
    rows = []
    if prof.mode != "train" or not prof.trainable_params:
        return pd.DataFrame(rows)
    for _, gpu in specs.select(cat, gpus).iterrows():
        for n in counts:
            try:
                rows.append(predict_scaling(prof, gpu, n, efficiency))
            except prec.Unsupported:
                break
    return pd.DataFrame(rows)
