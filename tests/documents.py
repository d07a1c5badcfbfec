"""Documents for tests: valid, current-version results documents built from a few fields,
small notebooks with a parameters cell, and data files of given rows."""

from __future__ import annotations

import csv
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from gpukit.bench import results as res

GPU_A5000 = {
    "kind": "gpu",
    "name": "NVIDIA RTX A5000",
    "compute_capability": "8.6",
    "catalogue_gpu": "RTX A5000",
    "catalogue_note": "NVIDIA RTX A5000 matched to RTX A5000",
}
CPU = {
    "kind": "cpu",
    "name": "Test CPU (2 logical cores)",
    "compute_capability": None,
    "catalogue_gpu": None,
    "catalogue_note": "no GPU attached",
}


def record(workload: str = "matmul", precision: str = "fp32", status: str = "ok", **values) -> dict:
    """A bench record with every field (defaults as a run leaves them), ``values`` overriding."""
    rec = {
        "workload": workload,
        "precision": precision,
        "params": {},
        "status": status,
        "xla": False,
        "label": workload,
        "error": None,
        "math_mode": None,
        "warmup_s": [],
        "times_s": [],
        "loops": None,
        "median_s": None,
        "iqr_s": None,
        "mad_s": None,
        "cv": None,
        "noisy": None,
        "throughput": None,
        "throughput_unit": None,
        "achieved_tflops": None,
        "flops_per_step": None,
        "bytes_per_step": None,
        "items_per_step": None,
        "peak": None,
        "peak_fraction": None,
    }
    rec.update(values)
    return rec


def document(
    records=(),
    device: dict | None = None,
    created: str = "2026-11-29T00:00:00Z",
    tensorflow: str = "2.21.0",
    **extra,
) -> dict:
    """A bench results document at the current schema version, as JSON would hold it."""
    return {
        "schema_version": res.SCHEMA_VERSION,
        "kind": "bench",
        "created": created,
        "seconds": 1.0,
        "quick": True,
        "isolation": "process",
        "settings": {},
        "environment": {"tensorflow": tensorflow, "packages": {"tensorflow": tensorflow}},
        "device": dict(device or CPU),
        "records": [dict(r) for r in records],
        **extra,
    }


def results(records=(), device: dict | None = None, **kw) -> res.Results:
    return res.Results.from_dict(document(records, device, **kw))


def write_notebook(path: Path, params: str, *cells: str) -> Path:
    """A notebook at ``path`` with a ``parameters`` cell and ``cells``, on the gpukit kernel."""
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "gpukit", "display_name": "Python (gpukit)", "language": "python"}
    nb.cells = [new_code_cell(params, metadata={"tags": ["parameters"]})] + [new_code_cell(c) for c in cells]
    nbformat.write(nb, path)
    return path


def write_csv(path: Path, header: list[str], rows: list[dict]) -> Path:
    """A CSV data file at ``path`` with ``header`` and ``rows`` (dicts by column), as gpukit writes them."""
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


def first_row(path: Path) -> tuple[list[str], dict]:
    """The header and first row of the CSV data file at ``path``: a valid row to spoil in a test."""
    with Path(path).open(newline="") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames), next(reader)


def problems_text(error) -> str:
    """A :class:`gpukit.errors.DataError`'s problems, one a line, as a user reads them."""
    return "\n".join(str(p) for p in error.problems)
