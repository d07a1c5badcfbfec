"""The results document: what a benchmark run measured, typed, versioned and upgraded in memory.

One JSON document per run (``gpukit bench --out FILE``, the benchmark notebook's
``bench-results.json``): the environment, the attached device and one record per
configuration (``kind: bench``), or per strategy and workload for several devices
(``kind: scaling``, :mod:`gpukit.bench.distributed`). :class:`Results` is the only code that reads or
writes its keys; everything else uses its attributes and methods.

Schema history (one migration per step, :data:`MIGRATIONS`; a file is upgraded in memory and
never rewritten):

1. First version: environment, device with its catalogue match, one record per configuration;
   ``math_mode`` as the run spelled it (``fp32``, ``mixed_float16``, ``float32 (TF32 math)``…).
2. One precision vocabulary (:mod:`gpukit.precision`): ``math_mode`` is the math that ran
   (``FP32``, ``TF32``, ``FP16``, ``BF16``) and every document names its ``kind``.

A document newer than this gpukit, or one that is not a gpukit results document, is refused
with the reason and what to do.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .. import _atomic
from .. import precision as prec
from ..errors import DataError, Problem

#: The version this gpukit writes; older ones are upgraded through :data:`MIGRATIONS`.
SCHEMA_VERSION = 2
KINDS = ("bench", "scaling")
STATUSES = ("ok", "oom", "error", "skipped")

#: Environment variable naming the folder a report run writes into (set by :mod:`gpukit.report`).
RUN_DIR_ENV = "GPUKIT_RUN_DIR"
#: The benchmark notebook's results document in a report run folder.
RESULTS_NAME = "bench-results.json"


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Record:
    """One benchmark configuration's result (``kind: bench``): every raw time and its summary."""

    workload: str
    precision: str
    params: dict
    status: str
    xla: bool = False
    label: str = ""
    error: str | None = None
    math_mode: str | None = None  # the math that ran: FP32, TF32, FP16, BF16
    warmup_s: list = field(default_factory=list)
    times_s: list = field(default_factory=list)
    loops: int | None = None
    median_s: float | None = None
    iqr_s: float | None = None
    mad_s: float | None = None
    cv: float | None = None
    noisy: bool | None = None
    throughput: float | None = None
    throughput_unit: str | None = None
    achieved_tflops: float | None = None
    flops_per_step: float | None = None
    bytes_per_step: float | None = None
    items_per_step: float | None = None
    peak: float | None = None
    peak_fraction: float | None = None

    REQUIRED = ("workload", "precision", "params", "status")

    @classmethod
    def from_dict(cls, data: dict) -> Record:
        """A record from its JSON form (unknown keys ignored; missing or bad ones refused)."""
        return _record_from(cls, data, "record", None)

    @property
    def ok(self) -> bool:
        return self.status == "ok" and bool(self.throughput)

    @property
    def batch(self) -> int | None:
        """Examples per step (matmul: its rows ``m``)."""
        return self.params.get("batch", self.params.get("m"))

    @property
    def mode(self) -> str:
        """train or infer (the synthetic kernels infer)."""
        return self.params.get("mode", "train" if self.workload == "transformer" else "infer")


@dataclass(frozen=True)
class ScalingRecord:
    """One workload trained under a strategy on several devices (``kind: scaling``)."""

    workload: str
    strategy: str
    replicas: int
    per_replica_batch: int
    status: str
    precision: str = "fp32"
    devices: list = field(default_factory=list)
    logical_devices: bool = False
    params: dict = field(default_factory=dict)
    error: str | None = None
    global_batch: int | None = None
    items_per_step: float | None = None
    throughput: float | None = None
    median_s: float | None = None
    iqr_s: float | None = None
    mad_s: float | None = None
    cv: float | None = None
    noisy: bool | None = None
    samples: int | None = None
    baseline_throughput: float | None = None
    speedup: float | None = None
    scaling_efficiency: float | None = None
    note: str = ""

    REQUIRED = ("workload", "strategy", "replicas", "per_replica_batch", "status")

    @classmethod
    def from_dict(cls, data: dict) -> ScalingRecord:
        """A record from its JSON form (unknown keys ignored; missing or bad ones refused)."""
        return _record_from(cls, data, "record", None)


@dataclass(frozen=True)
class Device:
    """The attached device a run measured, with its catalogue match (GPUs only)."""

    kind: str  # cpu | gpu
    name: str
    compute_capability: str | None = None
    catalogue_gpu: str | None = None
    catalogue_note: str | None = None
    details: dict = field(default_factory=dict)  # memory, driver, nvidia-smi's view, ...

    @classmethod
    def from_dict(cls, d: dict) -> Device:
        known = {f.name for f in fields(cls)} - {"details"}
        return cls(
            str(d.get("kind", "cpu")),
            str(d.get("name", "?")),
            None if d.get("compute_capability") is None else str(d["compute_capability"]),
            d.get("catalogue_gpu"),
            d.get("catalogue_note"),
            {k: v for k, v in d.items() if k not in known and k != "catalogue_row"},
        )

    def to_dict(self) -> dict:
        out = {
            "kind": self.kind,
            "name": self.name,
            "compute_capability": self.compute_capability,
            "catalogue_gpu": self.catalogue_gpu,
            "catalogue_note": self.catalogue_note,
        }
        return {**out, **self.details}

    def math(self, precision: str) -> str:
        """The math ``precision`` runs at on this device (:func:`gpukit.precision.device_math`)."""
        return prec.device_math(precision, self.kind, self.compute_capability)


def _record_from(cls, data: dict, where: str, path: Path | None):
    if not isinstance(data, dict):
        raise _bad(path, f"{where} is not an object; the file was edited or truncated")
    missing = [k for k in cls.REQUIRED if k not in data]
    if missing:
        raise _bad(path, f"{where} lacks {', '.join(missing)}; the file was edited or truncated")
    if data["status"] not in STATUSES:
        raise _bad(path, f"{where} has status {data['status']!r}; expected {', '.join(STATUSES)}")
    known = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in known})


def _bad(path: Path | None, message: str) -> DataError:
    return DataError([Problem(path or Path("<results>"), None, None, message)])


# --------------------------------------------------------------------------- migrations


#: v1 spelled the math that ran as the configuration's precision or the Keras policy.
_V1_MATH = {
    "fp32": "FP32",
    "float32": "FP32",
    "float32 (tf32 math)": "TF32",
    "tf32": "TF32",
    "fp16": "FP16",
    "mixed_float16": "FP16",
    "bf16": "BF16",
    "mixed_bfloat16": "BF16",
}


def _v1_to_v2(doc: dict) -> dict:
    """Name the document's kind; say the math each v1 record ran as one label. (v1 ran ``fp32``
    with TF32 off and ``tf32`` with it on, so its spelling says which math ran.)"""
    out = {**doc, "schema_version": 2, "kind": doc.get("kind") or "bench"}
    if out["kind"] == "bench":
        recs = []
        for r in doc.get("records", []):
            r = dict(r)
            mode = r.get("math_mode")
            if mode is not None:
                r["math_mode"] = _V1_MATH.get(str(mode).casefold(), str(mode))
            recs.append(r)
        out["records"] = recs
    return out


#: ``version -> function`` upgrading a document of that version to the next one.
MIGRATIONS = {1: _v1_to_v2}


def upgrade(doc: dict, path: Path | None = None) -> tuple[dict, int]:
    """``doc`` upgraded to :data:`SCHEMA_VERSION` (in memory), and the version it had."""
    if not isinstance(doc, dict) or ("schema_version" not in doc and "records" not in doc):
        raise _bad(
            path,
            "is not a gpukit results document (no schema_version); "
            "produce one with `gpukit bench --out FILE`",
        )
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _bad(
            path,
            f"schema_version {version!r} is not a version gpukit ever wrote; "
            "the file is not a gpukit results document",
        )
    if version > SCHEMA_VERSION:
        raise _bad(
            path,
            f"schema_version {version} is newer than this gpukit reads ({SCHEMA_VERSION}); upgrade gpukit",
        )
    original = version
    while version < SCHEMA_VERSION:
        doc = MIGRATIONS[version](doc)
        version = doc["schema_version"]
    return doc, original


# --------------------------------------------------------------------------- the document


@dataclass(frozen=True)
class Results:
    """A results document (see the module doc). ``file`` is where it was read from (never saved);
    ``upgraded_from`` the schema version it had, when older than :data:`SCHEMA_VERSION`."""

    kind: str
    created: str
    environment: dict
    device: Device
    records: tuple
    seconds: float = 0.0
    quick: bool = True
    isolation: str | None = None
    settings: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)  # a scaling run's strategy, device count, task
    file: str | None = None
    upgraded_from: int | None = None

    # ----------------------------------------------------------------- reading and writing

    @classmethod
    def from_dict(cls, doc: Any, path: str | os.PathLike | None = None) -> Results:
        """Validate and upgrade a parsed document; :class:`DataError` names the file and the fix."""
        p = Path(path) if path else None
        doc, original = upgrade(doc, p)
        for key in ("environment", "device", "records"):
            if key not in doc:
                raise _bad(p, f"lacks {key!r}; the file is truncated or not written by gpukit bench")
        kind = doc.get("kind", "bench")
        if kind not in KINDS:
            raise _bad(p, f"kind {kind!r} is not one of {', '.join(KINDS)}")
        if not isinstance(doc["records"], list):
            raise _bad(p, "records is not a list; the file was edited or truncated")
        rec_cls = ScalingRecord if kind == "scaling" else Record
        records = tuple(_record_from(rec_cls, r, f"record {i}", p) for i, r in enumerate(doc["records"]))
        core = {
            "schema_version",
            "kind",
            "created",
            "environment",
            "device",
            "records",
            "seconds",
            "quick",
            "isolation",
            "settings",
        }
        return cls(
            kind,
            str(doc.get("created", "")),
            dict(doc["environment"] or {}),
            Device.from_dict(doc["device"] or {}),
            records,
            float(doc.get("seconds") or 0.0),
            bool(doc.get("quick", True)),
            doc.get("isolation"),
            dict(doc.get("settings") or {}),
            {k: v for k, v in doc.items() if k not in core and not k.startswith("_")},
            str(p.name) if p else None,
            original if original != SCHEMA_VERSION else None,
        )

    def to_dict(self) -> dict:
        """The JSON form, at :data:`SCHEMA_VERSION`."""
        recs = [{f.name: getattr(r, f.name) for f in fields(r)} for r in self.records]
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": self.kind,
            "created": self.created,
            "seconds": self.seconds,
            "quick": self.quick,
            "isolation": self.isolation,
            "settings": self.settings,
            **self.extra,
            "environment": self.environment,
            "device": self.device.to_dict(),
            "records": recs,
        }

    def save(self, path: str | os.PathLike) -> Path:
        """Write atomically (a temporary file, then a rename)."""
        return _atomic.write_text(path, json.dumps(self.to_dict(), indent=1, allow_nan=False))

    # ----------------------------------------------------------------- what it says

    @property
    def source(self) -> str:
        """Where the measurements come from, for notes: the file, or ``this run``."""
        return self.file or "this run"

    @property
    def tensorflow(self) -> str:
        env = self.environment
        return (env.get("packages") or {}).get("tensorflow") or env.get("tensorflow") or "?"

    @property
    def environment_key(self) -> str:
        """What makes two runs comparable: the device (its catalogue name where matched) and TensorFlow."""
        name = self.device.catalogue_gpu or self.device.name
        return f"{self.device.kind.upper()} {name}, TensorFlow {self.tensorflow}"

    @property
    def catalogued_gpu(self) -> str | None:
        """The catalogue GPU this benchmark document measured, if it measured one."""
        if self.kind == "bench" and self.device.kind == "gpu":
            return self.device.catalogue_gpu
        return None

    def summary(self) -> dict:
        """What the report index says of the run."""
        return {
            "device": self.device.name,
            "kind": self.device.kind,
            "ok": sum(r.status == "ok" for r in self.records),
            "total": len(self.records),
            "workloads": sorted({r.workload for r in self.records}),
        }

    def frame(self):
        """One row per configuration (bench) or per workload and strategy (scaling)."""
        import pandas as pd

        if self.kind == "scaling":
            cols = [
                "workload",
                "strategy",
                "replicas",
                "logical_devices",
                "per_replica_batch",
                "global_batch",
                "status",
                "throughput",
                "baseline_throughput",
                "speedup",
                "scaling_efficiency",
                "note",
            ]
            return pd.DataFrame([{c: getattr(r, c) for c in cols} for r in self.records], columns=cols)
        rows = []
        for r in self.records:
            rows.append(
                {
                    "workload": r.workload,
                    "configuration": r.label,
                    "precision": r.precision,
                    "math_mode": r.math_mode,
                    "xla": r.xla,
                    "status": r.status,
                    "median_ms": r.median_s * 1e3 if r.median_s is not None else None,
                    "iqr_pct": 100 * r.iqr_s / r.median_s if r.median_s else None,
                    "samples": len(r.times_s),
                    "throughput": r.throughput,
                    "unit": r.throughput_unit,
                    "achieved_tflops": r.achieved_tflops,
                    "arithmetic_intensity": (
                        r.flops_per_step / r.bytes_per_step if r.flops_per_step and r.bytes_per_step else None
                    ),
                    "peak_fraction": r.peak_fraction,
                    "noisy": r.noisy,
                    "note": r.error or "",
                }
            )
        return pd.DataFrame(rows)

    def device_frame(self):
        """The device and environment of the run as a two-column table."""
        import pandas as pd

        dev, env = self.device, self.environment
        rows = [
            ("device", f"{dev.kind.upper()}: {dev.name}"),
            ("compute capability", dev.compute_capability),
            ("catalogue", dev.catalogue_gpu or "—"),
            ("catalogue note", dev.catalogue_note),
            ("TensorFlow", env.get("tensorflow")),
            ("Keras", env.get("keras")),
            ("CUDA / cuDNN build", f"{env.get('cuda_build')} / {env.get('cudnn_build')}"),
            ("XLA", "on" if env.get("xla_jit") else "off"),
            ("TF32 for float32 by default (Ampere+ GPUs)", env.get("tf32_default")),
            (
                "threads (intra / inter op; 0 = TensorFlow picks)",
                f"{env.get('intra_op_threads')} / {env.get('inter_op_threads')}",
            ),
            ("host", env.get("host")),
            ("CPU", f"{env.get('cpu')} ({env.get('cpu_count')} logical cores)"),
            ("Python", env.get("python")),
            (
                "run",
                f"{self.created}, {self.seconds:.0f} s, isolation {self.isolation}, "
                f"{'quick' if self.quick else 'full'} set",
            ),
        ]
        if self.upgraded_from:
            rows.append(("schema", f"read from version {self.upgraded_from}, upgraded in memory"))
        return pd.DataFrame(
            [(k, "" if v is None else str(v)) for k, v in rows if v is not None], columns=["what", "value"]
        )


def load(path: str | os.PathLike) -> Results:
    """Read a results document (upgraded in memory if older); :class:`DataError` says why not."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError([Problem(p, None, None, "file not found")]) from None
    except IsADirectoryError:
        raise DataError(
            [Problem(p, None, None, "is a folder; give a results file (or use --results DIR)")]
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError([Problem(p, None, None, f"is not valid JSON ({exc}); it may be truncated")]) from None
    return Results.from_dict(doc, p)


def as_documents(results: Results | dict | Iterable | None) -> list[Results]:
    """Any of: nothing, one document, a parsed dict, or a list of them, as a list of :class:`Results`."""
    if results is None:
        return []
    if isinstance(results, (Results, dict)):
        results = [results]
    return [r if isinstance(r, Results) else Results.from_dict(r) for r in results if r]


def save_for_report(results: Results, path: str | os.PathLike | None = None) -> Path | None:
    """Save ``results`` to ``path``; with no path, into the report run's folder when a report
    is rendering (``$GPUKIT_RUN_DIR``), else nowhere. Returns where it was written."""
    target = (
        Path(path)
        if path
        else (Path(os.environ[RUN_DIR_ENV]) / RESULTS_NAME if os.environ.get(RUN_DIR_ENV) else None)
    )
    return results.save(target) if target is not None else None


def load_for_report(
    path: str | os.PathLike | None = None, folder: str | os.PathLike | None = None
) -> Results | None:
    """The results document at ``path``; with no path, the one the benchmark notebook saved in
    ``folder`` (default: this report run's folder, ``$GPUKIT_RUN_DIR``), if there is one."""
    if path:
        return load(path)
    folder = folder or os.environ.get(RUN_DIR_ENV)
    if not folder or not (Path(folder) / RESULTS_NAME).exists():
        return None
    return load(Path(folder) / RESULTS_NAME)
