"""The results document: typed, round-tripped, upgraded from older versions in memory, refused
with the reason when unreadable."""

from __future__ import annotations

import json

import pytest
from documents import GPU_A5000, document, record

from gpukit.bench import results as res
from gpukit.errors import DataError


@pytest.fixture
def doc() -> dict:
    rec = record(
        "matmul",
        "fp32",
        params={"shape": "square", "m": 128, "n": 128, "k": 128},
        math_mode="FP32",
        median_s=0.01,
        times_s=[0.01],
        warmup_s=[0.1],
        throughput=0.42,
        throughput_unit="TFLOP/s",
    )
    return document([rec], GPU_A5000)


def test_round_trip_is_exact(tmp_path, doc):
    loaded = res.Results.from_dict(doc)
    path = loaded.save(tmp_path / "r.json")
    again = res.load(path)
    assert again.to_dict() == loaded.to_dict() == {**doc, "records": [dict(doc["records"][0])]}
    assert again.file == "r.json" and again.upgraded_from is None
    rec = again.records[0]
    assert (rec.workload, rec.precision, rec.math_mode, rec.batch, rec.mode) == (
        "matmul",
        "fp32",
        "FP32",
        128,
        "infer",
    )
    assert again.device.catalogue_gpu == "RTX A5000" and again.catalogued_gpu == "RTX A5000"
    assert again.environment_key == "GPU RTX A5000, TensorFlow 2.21.0"


def _v1(doc: dict, math_mode: str) -> dict:
    old = {k: v for k, v in doc.items() if k != "kind"}
    old["schema_version"] = 1
    old["records"] = [{**r, "math_mode": math_mode} for r in doc["records"]]
    return old


@pytest.mark.parametrize(
    "v1_math, precision, math",
    [
        ("fp32", "fp32", "FP32"),
        ("tf32", "tf32", "TF32"),
        ("float32", "fp32", "FP32"),
        ("float32 (TF32 math)", "tf32", "TF32"),
        ("mixed_float16", "fp16", "FP16"),
        ("mixed_bfloat16", "bf16", "BF16"),
    ],
)
def test_version_1_documents_are_upgraded_in_memory_never_rewritten(tmp_path, doc, v1_math, precision, math):
    doc["records"][0]["precision"] = precision
    path = tmp_path / "last-year.json"
    text = json.dumps(_v1(doc, v1_math))
    path.write_text(text)
    loaded = res.load(path)
    assert path.read_text() == text  # the file is left as it was
    assert loaded.upgraded_from == 1 and loaded.kind == "bench"
    assert loaded.records[0].math_mode == math
    assert "read from version 1" in loaded.device_frame().to_string()
    assert loaded.to_dict()["schema_version"] == res.SCHEMA_VERSION


def test_every_migration_step_exists_up_to_the_current_version():
    assert sorted(res.MIGRATIONS) == list(range(1, res.SCHEMA_VERSION))


@pytest.mark.parametrize(
    "edit, expected",
    [
        (
            lambda d: d.update(schema_version=res.SCHEMA_VERSION + 1),
            f"schema_version {res.SCHEMA_VERSION + 1} is newer than this gpukit reads "
            f"({res.SCHEMA_VERSION}); upgrade gpukit",
        ),
        (lambda d: d.update(schema_version=0), "schema_version 0 is not a version gpukit ever wrote"),
        (lambda d: d.update(schema_version="2"), "schema_version '2' is not a version gpukit ever wrote"),
        (lambda d: (d.pop("schema_version"), d.pop("records")), "not a gpukit results document"),
        (lambda d: d.pop("device"), "lacks 'device'"),
        (lambda d: d.update(kind="party"), "kind 'party' is not one of bench, scaling"),
        (lambda d: d["records"][0].pop("status"), "record 0 lacks status"),
        (lambda d: d["records"][0].update(status="fine"), "record 0 has status 'fine'"),
        (lambda d: d.update(records={"a": 1}), "records is not a list"),
    ],
)
def test_unreadable_documents_are_refused_with_the_reason(tmp_path, doc, edit, expected):
    edit(doc)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(DataError) as info:
        res.load(path)
    assert expected in str(info.value) and "r.json" in str(info.value)
    assert "\n" not in str(info.value)


def test_truncated_missing_and_folder_paths(tmp_path, doc):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc)[:50])
    with pytest.raises(DataError, match="is not valid JSON .* truncated"):
        res.load(path)
    with pytest.raises(DataError, match="file not found"):
        res.load(tmp_path / "none.json")
    with pytest.raises(DataError, match="is a folder"):
        res.load(tmp_path)


def test_unknown_keys_survive_and_private_ones_are_dropped(doc):
    doc["records"][0]["future_field"] = 1  # a newer writer's extra field is ignored, not fatal
    doc["_file"] = "x.json"
    loaded = res.Results.from_dict(doc)
    assert "_file" not in loaded.to_dict() and loaded.file is None


def test_save_and_load_for_report_use_the_run_folder(tmp_path, monkeypatch, doc):
    loaded = res.Results.from_dict(doc)
    monkeypatch.delenv(res.RUN_DIR_ENV, raising=False)
    assert res.save_for_report(loaded) is None and res.load_for_report() is None
    monkeypatch.setenv(res.RUN_DIR_ENV, str(tmp_path))
    assert res.save_for_report(loaded) == tmp_path / res.RESULTS_NAME
    assert res.load_for_report().records == loaded.records
    assert res.save_for_report(loaded, tmp_path / "x.json") == tmp_path / "x.json"
    assert res.load_for_report(folder=tmp_path).summary() == {
        "device": "NVIDIA RTX A5000",
        "kind": "gpu",
        "ok": 1,
        "total": 1,
        "workloads": ["matmul"],
    }


def test_scaling_documents_have_their_own_records():
    rec = {
        "workload": "resnet50",
        "strategy": "mirrored",
        "replicas": 2,
        "per_replica_batch": 2,
        "status": "ok",
        "throughput": 10.0,
        "baseline_throughput": 6.0,
        "speedup": 10 / 6,
        "scaling_efficiency": 10 / 12,
    }
    doc = document([rec], kind="scaling", strategy="mirrored", devices=2)
    loaded = res.Results.from_dict(doc)
    assert loaded.kind == "scaling" and loaded.extra == {"strategy": "mirrored", "devices": 2}
    assert loaded.frame().loc[0, "scaling_efficiency"] == pytest.approx(10 / 12)
    assert loaded.catalogued_gpu is None  # scaling runs never calibrate or stand in for predictions
    with pytest.raises(DataError, match="record 0 lacks strategy"):
        res.Results.from_dict(document([{k: v for k, v in rec.items() if k != "strategy"}], kind="scaling"))


def test_as_documents_takes_what_callers_have(doc):
    one = res.Results.from_dict(doc)
    assert res.as_documents(None) == []
    assert res.as_documents(one) == [one]
    assert [d.records for d in res.as_documents([doc, one])] == [one.records, one.records]
