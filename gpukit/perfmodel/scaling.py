"""Several GPUs: data-parallel training with a ring all-reduce of the gradients over the real link.

Each step every GPU runs its own batch, then the GPUs average their gradients with a ring
all-reduce: each sends and receives 2 (n-1)/n of the gradient bytes over its link. The link is
the one the GPUs really have (:func:`interconnect`):

* ``nvlink``: NVLink on SXM boards (through NVSwitch or direct links, any count), AMD's Infinity
  Fabric between OAM modules (every GPU of the board linked to every other), or a bridge joining
  two PCIe cards (an accessory, so only when asked for);
* ``pcie``: peer-to-peer over PCIe of the GPU's generation (professional and data-centre cards);
* ``host``: no peer-to-peer path (NVIDIA's GeForce cards): the exchange is staged through host
  memory, so every byte crosses PCIe twice, out of one GPU and into the next.

An all-reduce reaches a fraction of the link's bandwidth (:data:`LINK_EFFICIENCY`, NCCL's bus
bandwidth on large messages). Frameworks overlap it with the backward pass
(PyTorch's DistributedDataParallel reduces each bucket of gradients as soon as the backward pass
has produced it): with ``overlap="backward"`` only what the backward pass cannot hide shows, plus
the last bucket, which has nothing left to hide behind; ``overlap="none"`` adds the whole
all-reduce to the step (Keras's MirroredStrategy reduces after the backward pass).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .. import precision as prec
from .. import specs
from ..errors import ParameterError
from ..units import MIB
from .profiles import Profile, profile
from .roofline import DEFAULT_EFFICIENCY, Efficiency, op_times, place, predict

#: Usable PCIe x16 bandwidth per direction, GB/s, by generation: 8, 16 and 32 GT/s per lane
#: (PCI-SIG base specifications 3.0, 4.0, 5.0) x 16 lanes x 128b/130b encoding.
PCIE_X16_GBS = {3: 15.75, 4: 31.5, 5: 63.0}
#: Fraction of a link's bandwidth per direction an all-reduce reaches (NCCL's bus bandwidth on
#: large messages, as its nccl-tests report it: about 80 % of NVLink and of PCIe peer-to-peer).
LINK_EFFICIENCY = 0.8
LINKS = ("nvlink", "pcie", "host")
#: Gradient bytes per all-reduce bucket: PyTorch DistributedDataParallel's default
#: ``bucket_cap_mb=25``. The last bucket is reduced after the backward pass ends.
BUCKET_BYTES = 25 * MIB
OVERLAPS = ("backward", "none")


#: Board forms whose GPUs are joined by their own fabric, any count of them: NVLink on SXM boards
#: and Grace superchips, Infinity Fabric on AMD's OAM boards.
FABRIC_FORMS = ("SXM", "Superchip", "OAM")


def fabric_name(gpu: pd.Series | dict) -> str:
    """What the catalogue's ``nvlink_gbs`` of a GPU is: NVLink, or AMD's Infinity Fabric."""
    return "Infinity Fabric" if gpu.get("vendor") == "AMD" else "NVLink"


def default_link(gpu: pd.Series | dict) -> str:
    """The link GPUs of this kind have without accessories: their fabric on SXM, superchip and OAM
    boards (:data:`FABRIC_FORMS`), none between consumer cards (no peer-to-peer), PCIe
    peer-to-peer otherwise."""
    if float(gpu.get("nvlink_gbs") or 0) > 0 and str(gpu.get("form_factor", "")).startswith(FABRIC_FORMS):
        return "nvlink"
    if str(gpu.get("segment", "")) == "consumer":
        return "host"
    return "pcie"


def interconnect(gpu: pd.Series | dict, n: int, link: str | None = None) -> tuple[str, float]:
    """(name, GB/s per direction an all-reduce moves at its best) of the link ``n`` of these GPUs
    exchange gradients over (``link``: one of :data:`LINKS`, default :func:`default_link`).

    The catalogue's NVLink figure is the bidirectional total, so half of it flows each way; a
    bridge joins two PCIe cards only. Through host memory each byte crosses PCIe twice.
    """
    kind = default_link(gpu) if link is None else str(link).lower()
    if kind not in LINKS:
        raise ParameterError(f"link {link!r}: use one of {', '.join(LINKS)}")
    gen = int(gpu.get("pcie_gen") or 3)
    pcie = PCIE_X16_GBS.get(gen, PCIE_X16_GBS[3])
    if kind == "nvlink":
        nvlink = float(gpu.get("nvlink_gbs") or 0)
        if nvlink <= 0:
            raise ParameterError(f"{gpu['gpu']} has no NVLink; use link pcie or host")
        if not str(gpu.get("form_factor", "")).startswith(FABRIC_FORMS) and n > 2:
            raise ParameterError(f"an NVLink bridge joins two {gpu['gpu']} cards, not {n}; use link pcie")
        return fabric_name(gpu), nvlink / 2
    if kind == "host":
        return f"PCIe {gen}.0 via host (no P2P)", pcie / 2
    return f"PCIe {gen}.0 P2P", pcie


def _backward_s(prof: Profile, gpu, efficiency: Efficiency) -> float:
    placed = place(prof, gpu)
    compute, memory = op_times(placed, efficiency)
    backward = np.array([o.phase == "backward" for o in prof.ops])
    return float(np.maximum(compute, memory)[backward].sum() / efficiency.scale)


def predict_scaling(
    prof: Profile,
    gpu: pd.Series | dict,
    n: int,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    link: str | None = None,
    overlap: str = "none",
) -> dict:
    """Data-parallel training of ``prof`` (the batch per GPU) on ``n`` of ``gpu``: each step adds
    the part of a ring all-reduce of the float32 gradients, 2 (n-1)/n x gradient bytes over the
    link, that the backward pass does not hide (``overlap``: see the module doc)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ParameterError(f"{n!r} GPUs: give a whole number of at least 1")
    if overlap not in OVERLAPS:
        raise ParameterError(f"overlap {overlap!r}: use one of {', '.join(OVERLAPS)}")
    if prof.mode != "train" or not prof.trainable_params:
        raise ParameterError("scaling is predicted for training workloads with trainable weights")
    single = predict(prof, gpu, efficiency)
    name, gbs = interconnect(gpu, n, link)
    grad_bytes = prof.trainable_params * 4
    rate = gbs * 1e9 * LINK_EFFICIENCY
    allreduce = 2 * (n - 1) / n * grad_bytes / rate if n > 1 else 0.0
    if overlap == "backward" and n > 1:
        last = 2 * (n - 1) / n * min(BUCKET_BYTES, grad_bytes) / rate
        exposed = max(allreduce - _backward_s(prof, gpu, efficiency), 0.0) + last
        exposed = min(exposed, allreduce)
    else:
        exposed = allreduce
    step = single.step_time_s + exposed
    return {
        "gpu": single.gpu,
        "gpus": n,
        "link": name,
        "link_gbs_per_direction": gbs,
        "gradient_mb": grad_bytes / 1e6,
        "allreduce_s": allreduce,
        "exposed_allreduce_s": exposed,
        "step_time_s": step,
        "throughput": n * prof.items_per_step / step,
        "throughput_unit": prof.throughput_unit,
        "scaling_efficiency": single.step_time_s / step,
    }


def scaling_table(
    workload: str = "resnet50",
    precision: str = "fp16",
    batch: int | None = None,
    gpus: Iterable[str] | str | None = None,
    counts: Sequence[int] = (1, 2, 4, 8),
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    catalogue: pd.DataFrame | None = None,
    link: str | None = None,
    overlap: str = "none",
    **params,
) -> pd.DataFrame:
    """Predicted scaling per GPU and GPU count (GPUs that cannot run the precision, or a count
    their link cannot join, are left out; a workload without trainable weights, such as matmul,
    gives an empty table)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    prof = profile(workload, batch, precision, "train", **params)
    rows = []
    if prof.mode != "train" or not prof.trainable_params:
        return pd.DataFrame(rows)
    for _, gpu in specs.select(cat, gpus).iterrows():
        for n in counts:
            try:
                rows.append(predict_scaling(prof, gpu, n, efficiency, link, overlap))
            except prec.Unsupported:
                break
            except ParameterError:
                if link is None:
                    raise
                continue
    return pd.DataFrame(rows)


def scaling_summary(table: pd.DataFrame) -> pd.DataFrame:
    """A :func:`scaling_table` as one row per GPU: its link, the scaling efficiency at each
    count and the throughput of the most GPUs."""
    if table.empty:
        return table
    eff = table.pivot(index="gpu", columns="gpus", values="scaling_efficiency")
    eff.columns = [f"efficiency_{n}_gpus" for n in eff.columns]
    top = table.sort_values("gpus").groupby("gpu", sort=False).last()
    out = pd.DataFrame(
        {"link": table[table["gpus"] > 1].groupby("gpu")["link"].first(), "gradient_mb": top["gradient_mb"]}
    ).join(eff)
    out[f"throughput_{int(top['gpus'].max())}_gpus"] = top["throughput"]
    out["throughput_unit"] = top["throughput_unit"]
    order = table.drop_duplicates("gpu")["gpu"]
    return out.loc[order].reset_index()
