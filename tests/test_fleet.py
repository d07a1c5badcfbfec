"""A fleet's results: a folder of documents merged, labelled by environment, never averaged, never changed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from documents import document, record

from gpukit import perfmodel, report
from gpukit.bench import fleet

pytestmark = []


def _doc(gpu: str | None, throughput: float, created: str, tf: str = "2.21.0", cc: str | None = None) -> dict:
    rec = record(
        "resnet50",
        "fp16",
        params={"image_size": 224, "batch": 64, "mode": "train"},
        label="resnet50 train 224px batch 64",
        math_mode="FP16",
        warmup_s=[0.5],
        times_s=[64 / throughput],
        throughput=throughput,
        throughput_unit="images/s",
        median_s=64 / throughput,
        iqr_s=0.0,
        noisy=False,
    )
    device = (
        {"kind": "gpu", "name": f"NVIDIA {gpu}", "compute_capability": cc, "catalogue_gpu": gpu}
        if gpu
        else {"kind": "cpu", "name": "some CPU", "catalogue_gpu": None}
    )
    return document([rec], device, created=created, tensorflow=tf)


def _v1(doc: dict) -> dict:
    """The same document as schema version 1 wrote it (last year's gpukit)."""
    old = {k: v for k, v in doc.items() if k != "kind"}
    old["schema_version"] = 1
    old["records"] = [
        {**r, "math_mode": {"FP16": "mixed_float16", "FP32": "float32"}.get(r["math_mode"])}
        for r in doc["records"]
    ]
    return old


@pytest.fixture()
def folder(tmp_path: Path, gpu) -> Path:
    a5000, a4000, a40 = (gpu(n).compute_capability for n in ("RTX A5000", "RTX A4000", "A40"))
    d = tmp_path / "fleet"
    d.mkdir()
    (d / "a5000-old.json").write_text(
        json.dumps(_v1(_doc("RTX A5000", 600.0, "2026-11-01T00:00:00Z", cc=a5000)))
    )
    (d / "a5000-new.json").write_text(json.dumps(_doc("RTX A5000", 650.0, "2026-11-20T00:00:00Z", cc=a5000)))
    (d / "a4000.json").write_text(
        json.dumps(_doc("RTX A4000", 400.0, "2026-11-20T00:00:00Z", tf="2.20.0", cc=a4000))
    )
    good = json.dumps(_doc("A40", 500.0, "2026-11-21T00:00:00Z", cc=a40))
    (d / "truncated.json").write_text(good[: len(good) // 2])
    newer = _doc("A40", 500.0, "2026-11-21T00:00:00Z", cc=a40)
    newer["schema_version"] = 99
    (d / "newer-version.json").write_text(json.dumps(newer))
    never = dict(newer, schema_version=0)
    (d / "version-0.json").write_text(json.dumps(never))
    (d / "notes.json").write_text(json.dumps({"hello": "world"}))
    return d


def _fingerprint(d: Path) -> dict:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(d.iterdir())
    }


def test_folder_is_merged_labelled_and_left_untouched(folder):
    before = _fingerprint(folder)
    f = fleet.load_folder(folder)
    assert _fingerprint(folder) == before  # nothing modified, nothing deleted
    assert sorted(d.file for d in f.documents) == ["a4000.json", "a5000-new.json", "a5000-old.json"]
    old = next(d for d in f.documents if d.file == "a5000-old.json")
    assert old.upgraded_from == 1 and old.records[0].math_mode == "FP16"  # upgraded in memory only
    rejected = dict(f.rejected)
    assert set(rejected) == {"truncated.json", "newer-version.json", "version-0.json", "notes.json"}
    assert "not valid JSON" in rejected["truncated.json"] and "truncated" in rejected["truncated.json"]
    assert (
        "newer than this gpukit reads" in rejected["newer-version.json"]
        and "upgrade gpukit" in rejected["newer-version.json"]
    )
    assert "not a version gpukit ever wrote" in rejected["version-0.json"]
    assert "not a gpukit results document" in rejected["notes.json"]
    groups = f.groups
    assert groups["GPU RTX A5000, TensorFlow 2.21.0"] == ["a5000-new.json", "a5000-old.json"]
    assert groups["GPU RTX A4000, TensorFlow 2.20.0"] == ["a4000.json"]
    records = f.records()
    assert len(records) == 3 and set(records["file"]) == {"a4000.json", "a5000-new.json", "a5000-old.json"}


@pytest.mark.tensorflow
def test_measured_rows_replace_predictions_newest_first_never_averaged(folder):
    docs = fleet.documents(None, folder)
    table = perfmodel.predict_table(
        "resnet50", "mixed_float16", 64, "train", ["RTX A5000", "RTX A4000", "A40"], results=docs
    ).set_index("gpu")
    assert table.loc["RTX A5000", "measured_throughput"] == 650.0  # the newest, not the mean 625
    assert "newest of 2 runs, not averaged" in table.loc["RTX A5000", "note"]
    assert table.loc["RTX A4000", "measured_throughput"] == 400.0
    assert table.loc["RTX A4000", "note"] == "measured (a4000.json, GPU RTX A4000, TensorFlow 2.20.0)"
    assert (
        table.loc["A40", "measured_throughput"] != table.loc["A40", "measured_throughput"]
    )  # none: predicted


def test_view_names_every_skipped_file(folder):
    html = fleet.view(folder)._repr_html_()
    for name in ("truncated.json", "newer-version.json", "notes.json", "a5000-new.json"):
        assert name in html
    assert "No results folder" in fleet.view("")._repr_html_()
    with pytest.raises(Exception, match="does not exist"):
        fleet.load_folder(folder / "nope")


@pytest.mark.notebooks
def test_report_results_folder_reaches_the_performance_model_page(folder, tmp_path):
    run = report.render_report(
        out_dir=tmp_path / "out",
        only=["05"],
        progress=None,
        cli_parameters={"results_dir": str(folder), "batch_size": "64", "gpus": "[RTX A5000, RTX A4000]"},
    )
    page = (Path(run.path) / "05_performance_model.html").read_text()
    assert (
        "measured (a5000-new.json, GPU RTX A5000, TensorFlow 2.21.0); newest of 2 runs, not averaged" in page
    )


def test_a_command_takes_a_results_file_or_a_folder(folder, capsys):
    docs = fleet.load_results(folder)
    assert sorted(d.source for d in docs) == ["a4000.json", "a5000-new.json", "a5000-old.json"]
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 4 and all(line.startswith("gpukit: skipped ") for line in said)
    (one,) = fleet.load_results(folder / "a4000.json")
    assert one.source == "a4000.json"
