"""A fleet's results: a folder of documents merged, labelled by environment, never averaged, never changed."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from gpukit import bench, fleet, perfmodel, report

pytestmark = []


def _doc(gpu: str | None, throughput: float, created: str, tf: str = "2.21.0") -> dict:
    rec = {k: None for k in bench.RECORD_KEYS}
    rec.update({"workload": "resnet50", "precision": "fp16", "params": {"image_size": 224, "batch": 64, "mode": "train"},
                "xla": False, "label": "resnet50 train 224px batch 64", "status": "ok", "math_mode": "mixed_float16",
                "warmup_s": [0.5], "times_s": [64 / throughput], "throughput": throughput,
                "throughput_unit": "images/s", "median_s": 64 / throughput, "iqr_s": 0.0, "noisy": False})
    device = ({"kind": "gpu", "name": f"NVIDIA {gpu}", "catalogue_gpu": gpu} if gpu
              else {"kind": "cpu", "name": "some CPU", "catalogue_gpu": None})
    return {"schema_version": bench.SCHEMA_VERSION, "created": created, "environment": {"packages": {"tensorflow": tf}},
            "device": device, "settings": {}, "records": [rec]}


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "fleet"
    d.mkdir()
    (d / "a5000-old.json").write_text(json.dumps(_doc("RTX A5000", 600.0, "2026-11-01T00:00:00Z")))
    (d / "a5000-new.json").write_text(json.dumps(_doc("RTX A5000", 650.0, "2026-11-20T00:00:00Z")))
    (d / "a4000.json").write_text(json.dumps(_doc("RTX A4000", 400.0, "2026-11-20T00:00:00Z", tf="2.20.0")))
    good = json.dumps(_doc("A40", 500.0, "2026-11-21T00:00:00Z"))
    (d / "truncated.json").write_text(good[: len(good) // 2])
    old = _doc("A40", 500.0, "2026-11-21T00:00:00Z")
    old["schema_version"] = 0
    (d / "old-version.json").write_text(json.dumps(old))
    (d / "notes.json").write_text(json.dumps({"hello": "world"}))
    return d


def _fingerprint(d: Path) -> dict:
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in sorted(d.iterdir())}


def test_folder_is_merged_labelled_and_left_untouched(folder):
    before = _fingerprint(folder)
    f = fleet.load_folder(folder)
    assert _fingerprint(folder) == before  # nothing modified, nothing deleted
    assert sorted(d["_file"] for d in f.documents) == ["a4000.json", "a5000-new.json", "a5000-old.json"]
    rejected = dict(f.rejected)
    assert set(rejected) == {"truncated.json", "old-version.json", "notes.json"}
    assert "not valid JSON" in rejected["truncated.json"] and "truncated" in rejected["truncated.json"]
    assert "older than this gpukit reads" in rejected["old-version.json"]
    assert "not a gpukit results document" in rejected["notes.json"]
    groups = f.groups
    assert groups["GPU RTX A5000, TensorFlow 2.21.0"] == ["a5000-new.json", "a5000-old.json"]
    assert groups["GPU RTX A4000, TensorFlow 2.20.0"] == ["a4000.json"]
    records = f.records()
    assert len(records) == 3 and set(records["file"]) == {"a4000.json", "a5000-new.json", "a5000-old.json"}


def test_measured_rows_replace_predictions_newest_first_never_averaged(folder):
    docs = fleet.documents(None, folder)
    table = perfmodel.predict_table("resnet50", "mixed_float16", 64, "train", ["RTX A5000", "RTX A4000", "A40"],
                                    results=docs).set_index("gpu")
    assert table.loc["RTX A5000", "measured_throughput"] == 650.0  # the newest, not the mean 625
    assert "newest of 2 runs, not averaged" in table.loc["RTX A5000", "note"]
    assert table.loc["RTX A4000", "measured_throughput"] == 400.0
    assert table.loc["RTX A4000", "note"] == "measured (a4000.json, GPU RTX A4000, TensorFlow 2.20.0)"
    assert table.loc["A40", "measured_throughput"] != table.loc["A40", "measured_throughput"]  # none: predicted


def test_view_names_every_skipped_file(folder):
    html = fleet.view(folder)._repr_html_()
    for name in ("truncated.json", "old-version.json", "notes.json", "a5000-new.json"):
        assert name in html
    assert "No results folder" in fleet.view("")._repr_html_()
    with pytest.raises(Exception, match="does not exist"):
        fleet.load_folder(folder / "nope")


@pytest.mark.notebooks
def test_report_results_folder_reaches_the_performance_model_page(folder, tmp_path):
    run = report.render_report(out_dir=tmp_path / "out", only=["05"], progress=None,
                               cli_parameters={"results_dir": str(folder), "batch_size": "64",
                                               "gpus": "[RTX A5000, RTX A4000]"})
    page = (Path(run.path) / "05_performance_model.html").read_text()
    assert "measured (a5000-new.json, GPU RTX A5000, TensorFlow 2.21.0); newest of 2 runs, not averaged" in page
