"""Cloud prices brought up to date from a live catalogue: ``gpukit prices refresh``.

The offers come from gpuhunt (the multi-provider GPU offer catalogue dstack maintains: every
provider's instances with their GPUs, region, on-demand or spot, and hourly price). Each offer of
a catalogue GPU becomes a dated row of the cloud price schema (:data:`gpukit.prices.CLOUD_SCHEMA`)
at its per-GPU rate, written to a user-level file (:func:`refreshed_path`) that
:func:`gpukit.prices.load_prices` merges over the shipped ``data/cloud_prices.csv``; the shipped
file is never rewritten. gpuhunt names a GPU by its chip and memory (``A100`` with 80 GB); where
that is not one catalogue GPU (an A100 or H100 that could be PCIe or SXM), the offer's instance
name decides, and an offer it cannot place is left out and counted (:func:`catalogue_gpu`).
"""

from __future__ import annotations

import csv
import io
import logging
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import date
from pathlib import Path

from .. import _atomic, specs
from ..errors import GpukitError
from ..resources import refreshed_path

#: Where the offers come from, for each row's ``source_url``.
GPUHUNT_URL = "https://github.com/dstackai/gpuhunt"

#: gpuhunt's name and memory (GB) of each GPU it knows that is one catalogue GPU whatever the offer.
GPUHUNT_NAMES: dict[tuple[str, int], str] = {
    ("A10", 24): "A10",
    ("A40", 48): "A40",
    ("A4000", 16): "RTX A4000",
    ("A5000", 24): "RTX A5000",
    ("A6000", 48): "RTX A6000",
    ("H100NVL", 94): "H100 NVL",
    ("H200", 141): "H200 SXM",
    ("B200", 180): "B200",
    ("L4", 24): "L4",
    ("L40S", 48): "L40S",
    ("T4", 16): "T4",
    ("RTX3080", 10): "GeForce RTX 3080",
    ("RTX3090", 24): "GeForce RTX 3090",
    ("RTX4090", 24): "GeForce RTX 4090",
    ("RTX5090", 32): "GeForce RTX 5090",
    ("RTX6000Ada", 48): "RTX 6000 Ada Generation",
    ("RTXPRO6000", 96): "RTX PRO 6000 Blackwell Workstation Edition",
    ("MI300X", 192): "Instinct MI300X",
    # gpuhunt's list of AMD GPUs gives the MI325X the pre-launch 288 GB; its Vultr offers carry the
    # 256 GB AMD shipped
    ("MI325X", 256): "Instinct MI325X",
    ("MI325X", 288): "Instinct MI325X",
    ("MI355X", 288): "Instinct MI355X",
}
#: The vendors whose offers are kept (gpuhunt's ``gpu_vendor``): the catalogue's with cloud offers.
OFFER_VENDORS = ("nvidia", "amd")
#: gpuhunt names of chips the catalogue has in several forms: the form by the instance name's
#: word for it, and the hyperscalers' (which rent only the SXM boards of these) by provider.
FORMS: dict[tuple[str, int], dict[str, str]] = {
    ("A100", 40): {"pcie": "A100 PCIe 40GB", "sxm": "A100 SXM4 40GB"},
    ("A100", 80): {"pcie": "A100 PCIe 80GB", "sxm": "A100 SXM4 80GB"},
    ("H100", 80): {"pcie": "H100 PCIe", "sxm": "H100 SXM5"},
    ("V100", 16): {"pcie": "V100 PCIe 16GB", "sxm": "V100 SXM2 16GB"},
    ("V100", 32): {"sxm": "V100 SXM2 32GB"},
}
#: Providers whose instances of those chips are SXM boards (AWS p4d/p4de/p5/p3, GCP a2/a3, Azure ND).
SXM_PROVIDERS = ("aws", "gcp", "azure", "oci")


class NoNetwork(GpukitError):
    """The live catalogue could not be reached."""


def catalogue_gpu(
    provider: str, gpu_name: str | None, gpu_memory: float | None, instance_name: str
) -> str | None:
    """The catalogue GPU of one gpuhunt offer, or None where it names none or cannot be placed."""
    if not gpu_name or not gpu_memory:
        return None
    key = (str(gpu_name), int(round(float(gpu_memory))))
    if key in GPUHUNT_NAMES:
        return GPUHUNT_NAMES[key]
    forms = FORMS.get(key)
    if not forms:
        return None
    name = instance_name.lower()
    if "pcie" in name and "pcie" in forms:
        return forms["pcie"]
    if "sxm" in name or provider.lower() in SXM_PROVIDERS:
        return forms.get("sxm")
    return forms["sxm"] if len(forms) == 1 else None


def offers_to_rows(items: Iterable, today: date, catalogue=None) -> tuple[list[dict], Counter]:
    """gpuhunt offers (``CatalogItem``-like: provider, instance_name, location, price, gpu_count,
    gpu_name, gpu_memory, spot) as cloud price rows dated ``today``, one per catalogue GPU's offer
    at its per-GPU rate; and a count of the offers left out, by reason."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    known = set(cat["gpu"])
    rows, skipped, seen = [], Counter(), set()
    for item in items:
        count = int(item.gpu_count or 0)
        vendor = getattr(item, "gpu_vendor", None)
        vendor = getattr(vendor, "value", vendor)
        if count < 1 or (vendor and str(vendor).lower() not in OFFER_VENDORS):
            skipped["not an NVIDIA or AMD GPU offer"] += 1
            continue
        gpu = catalogue_gpu(item.provider, item.gpu_name, item.gpu_memory, item.instance_name)
        if gpu is None:
            skipped[f"{item.gpu_name} {item.gpu_memory:g} GB: not one catalogue GPU"] += 1
            continue
        if gpu not in known:
            skipped[f"{gpu}: not in this catalogue"] += 1
            continue
        kind = "spot" if item.spot else "on-demand"
        key = (gpu, item.provider, item.instance_name, kind, item.location)
        if key in seen:
            skipped["the same offer twice"] += 1
            continue
        seen.add(key)
        rows.append(
            {
                "gpu": gpu,
                "provider": item.provider,
                "offering": item.instance_name,
                "kind": kind,
                "gpus_per_offering": count,
                "usd_per_hour": round(float(item.price) / count, 6),
                "date": today.isoformat(),
                "source_url": GPUHUNT_URL,
                "note": f"gpuhunt catalogue, {item.provider} {item.instance_name} in {item.location}: "
                f"${float(item.price):g}/hour for {count} GPU{'s' if count > 1 else ''}",
                "region": item.location,
            }
        )
    return rows, skipped


def fetch_offers() -> list:
    """Every GPU offer in gpuhunt's published catalogue (the providers it collects offline: AWS, Azure,
    GCP, OCI, Lambda, RunPod, Nebius and more); :class:`NoNetwork` where it cannot be reached. gpuhunt's
    own log of each provider it could not load is kept quiet: the one line that says so is enough."""
    try:
        from gpuhunt import Catalog
    except ImportError as exc:  # pragma: no cover - a pinned requirement
        raise GpukitError("gpuhunt is not installed; run make setup") from exc
    log = logging.getLogger("gpuhunt")
    level = log.level
    log.setLevel(logging.CRITICAL + 1)
    try:
        catalog = Catalog(balance_resources=False, auto_reload=False)
        catalog.load()
        return list(catalog.query(min_gpu_count=1))
    except Exception as exc:  # gpuhunt wraps urllib's errors in its own
        raise NoNetwork(f"could not reach gpuhunt's catalogue ({type(exc).__name__})") from exc
    finally:
        log.setLevel(level)


def write_rows(rows: list[dict], path: Path) -> Path:
    """``rows`` as a cloud price file at ``path``, written whole or not at all."""
    from .book import CLOUD_SCHEMA

    columns = [f.name for f in CLOUD_SCHEMA]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(
        sorted(rows, key=lambda r: (r["gpu"], r["provider"], r["offering"], r["kind"], r["region"]))
    )
    return _atomic.write_bytes(path, out.getvalue().encode())


def refresh(
    fetch: Callable[[], Iterable] | None = None,
    path: Path | None = None,
    today: date | None = None,
    catalogue=None,
) -> dict:
    """Fetch the live offers (``fetch``, default :func:`fetch_offers`) and write them as the user-level
    cloud prices: the file, how many rows for how many GPUs and providers, and what was left out.
    Raises :class:`NoNetwork` offline, and then writes nothing (the file already there stays)."""
    items = (fetch or fetch_offers)()
    rows, skipped = offers_to_rows(items, today or date.today(), catalogue)
    target = write_rows(rows, path or refreshed_path())
    return {
        "path": target,
        "rows": len(rows),
        "gpus": len({r["gpu"] for r in rows}),
        "providers": len({r["provider"] for r in rows}),
        "skipped": skipped,
    }
