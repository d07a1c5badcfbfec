"""benchmarks/memory_accuracy.py keeps what a long run measured: its --raw file is written after
every case, and --resume measures only the cases the file lacks. The measurement and the estimate
are stand-ins here (a real case takes minutes); the script's bookkeeping is what is tested."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpukit import memory
from gpukit.memory import bands

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def script(monkeypatch):
    module = importlib.import_module("benchmarks.memory_accuracy")
    monkeypatch.setattr(module, "markdown", lambda rows, *sections: f"{len(rows)} rows")
    return module


@pytest.fixture
def page(monkeypatch):
    return importlib.import_module("benchmarks.memory_page")


class FakeEstimator:
    """Stands in for gpukit.memory.Estimator. The script reaches every name of gpukit.memory through the
    package (``memory.Estimator``, ``memory.measure_in_subprocess``), so that is where the tests put their
    stand-ins."""

    family = "fake family"

    def __init__(self, name, shape=None, seq_len=None):
        self.label = name
        self.graph = SimpleNamespace(trainable_params=1000, largest_variable=100, largest_embedding=0)

    def estimate(self, batch, precision, optimizer, mode):
        return SimpleNamespace(
            tensor_bytes=batch * 2**20,
            step_peak_bytes=batch * 2**19,
            weights_bytes=4000,
            optimizer_bytes=0,
            input_bytes=0,
        )


def test_a_stopped_run_keeps_its_cases_and_resume_measures_only_the_rest(
    script, monkeypatch, tmp_path, capsys
):
    raw = tmp_path / "runs.json"
    measured = []

    def measure(name, batch, precision, optimizer, mode, shape, seq_len=None):
        if stop_after is not None and len(measured) == stop_after:
            raise KeyboardInterrupt
        measured.append((batch, optimizer if mode == "train" else "none", mode))  # inference runs as sgd
        return {
            "status": "ok",
            "measured_peak_bytes": batch * 2**20 + 2**18,
            "inter_op_threads": 2,
            "onednn": True,
        }

    monkeypatch.setattr(memory, "Estimator", FakeEstimator)
    monkeypatch.setattr(memory, "measure_in_subprocess", measure)
    argv = [
        "--models",
        "fake-net",
        "--batches",
        "2",
        "8",
        "--optimizers",
        "sgd",
        "adam",
        "--no-mixed",
        "--repeats",
        "1",
        "--raw",
        str(raw),
    ]
    grid = script.cases(["fake-net"], [2, 8], ["sgd", "adam"], ())
    assert len(grid) == 6  # each batch: both optimizers and inference

    stop_after = 3
    with pytest.raises(KeyboardInterrupt):
        script.main(argv)
    kept = json.loads(raw.read_text())["rows"]
    assert (
        [(r["batch"], r["optimizer"], r["mode"]) for r in kept]
        == measured
        == [(b, o, m) for _, b, _, o, m in grid[:3]]
    )
    assert kept[0]["measured"] == 2 * 2**20 + 2**18 and kept[0]["error"] == pytest.approx(2 / 2.25 - 1)

    stop_after, before = None, len(measured)
    assert script.main(argv + ["--resume"]) == 0
    assert measured[before:] == [(b, o, m) for _, b, _, o, m in grid[3:]]  # nothing measured twice
    rows = json.loads(raw.read_text())["rows"]
    assert [(r["batch"], r["optimizer"], r["mode"]) for r in rows] == [(b, o, m) for _, b, _, o, m in grid]
    assert rows[:3] == kept
    assert "6 rows" in capsys.readouterr().out

    # resumed again with nothing left to measure: the file and its rows stay as they are
    assert script.main(argv + ["--resume"]) == 0
    assert len(measured) == 6 and json.loads(raw.read_text())["rows"] == rows


def test_a_resumed_file_from_an_earlier_version_is_reported_with_this_versions_estimates(
    script, monkeypatch, tmp_path
):
    """Rows an earlier version wrote (its estimate, none of the fields a refit of the update terms now
    reads) are kept in the file as measured and estimated again for the report."""
    raw = tmp_path / "runs.json"
    old_row = {
        "model": "fake-net",
        "input": "",
        "seq_len": None,
        "batch": 2,
        "precision": "fp32",
        "optimizer": "sgd",
        "mode": "train",
        "runs": [3 * 2**20],
        "family": "fake family",
        "predicted": 1,
        "measured": 3 * 2**20,
        "low": 3 * 2**20,
        "high": 3 * 2**20,
        "workspace": 7,
        "error": -1.0,
    }
    raw.write_text(json.dumps({"repeats": 1, "rows": [old_row]}))
    reported = []
    monkeypatch.setattr(script, "markdown", lambda rows, *sections: reported.extend(rows) or "")
    monkeypatch.setattr(memory, "Estimator", FakeEstimator)
    monkeypatch.setattr(
        memory, "measure_in_subprocess", lambda *a, **k: {"status": "ok", "measured_peak_bytes": 2**20}
    )
    assert (
        script.main(
            [
                "--models",
                "fake-net",
                "--batches",
                "2",
                "--optimizers",
                "sgd",
                "--no-mixed",
                "--repeats",
                "1",
                "--raw",
                str(raw),
                "--resume",
            ]
        )
        == 0
    )
    assert json.loads(raw.read_text())["rows"][0] == old_row  # the file keeps what was measured
    again = reported[0]
    assert again["predicted"] == 2 * 2**20 and again["step_peak_bytes"] == 2**20 and "workspace" not in again
    assert again["error"] == pytest.approx(2 / 3 - 1)
    assert len(reported) == 2 and all("resident_bytes" in r for r in reported)


def test_models_outside_the_grid_are_reported_apart_from_its_figures(script, page):
    """keras-cnn is measured like the grid's models, not among them, and its cases get a section of
    their own with their own summary."""
    assert "keras-cnn" in script.OUTSIDE_GRID and "keras-cnn" not in script.MODELS
    mib = 2**20
    rows = [
        {
            "model": "keras-cnn",
            "input": "",
            "batch": 8,
            "precision": p,
            "optimizer": "adam",
            "mode": "train",
            "predicted": 10 * mib,
            "measured": m * mib,
            "low": m * mib,
            "high": (m + 1) * mib,
            "error": 10 / m - 1,
            "family": "CNN",
        }
        for p, m in (("fp32", 11), ("fp16", 100))
    ]
    lines = page.outside_section(
        rows,
        "runs.json",
        {
            ("CNN", "train"): {"error_low": -0.2, "error_high": 0.1},
            ("CNN", "infer"): {"error_low": -0.5, "error_high": 0.5},
        },
    )
    assert lines[1] == "## Outside the grid"
    # the first case's runs lie -9.1% and -16.7% from the estimate, inside the band; the second's not
    assert "`gpukit fit` quotes and uses each one's own band in each precision" in lines[3]
    assert lines[3].endswith(
        "its family's. 2 cases: median |error| 49.5%, 1 within ±15%, worst 90.0%; 1 of the 2 "
        "CNN cases have runs outside the band `gpukit fit` quotes for that family in their mode "
        "(training -20.0% to +10.0%)."
    )
    assert lines[-2:] == [
        "| keras-cnn |  | 8 | fp32 | adam | train | 10.0 | 11.0 | 11.0–12.0 | -9.1% |",
        "| keras-cnn |  | 8 | fp16 | adam | train | 10.0 | 100.0 | 100.0–101.0 | -90.0% |",
    ]
    assert page.outside_section([{**rows[0], "error": None}], "runs.json") == []


def _band_case(model, family, precision, mode, predicted, low, high, measured) -> dict:
    """A measured case as the script's rows hold it, sizes in MiB."""
    mib = 2**20
    return {
        "model": model,
        "input": "",
        "batch": 8,
        "precision": precision,
        "optimizer": "adam",
        "mode": mode,
        "predicted": predicted * mib,
        "measured": measured * mib,
        "low": low * mib,
        "high": high * mib,
        "error": predicted / measured - 1,
        "family": family,
    }


def _read_back(text: str, path_attr: str, reader, monkeypatch, tmp_path) -> dict:
    """What gpukit.memory's ``reader`` makes of ``text`` as the bands file ``path_attr`` names."""
    path = tmp_path / "bands.csv"
    path.write_text(text)
    monkeypatch.setattr(bands, path_attr, path)  # where the readers look the path up
    reader.cache_clear()
    try:
        return reader()
    finally:
        reader.cache_clear()


def test_models_outside_the_grid_get_bands_of_their_own_per_precision(page, monkeypatch, tmp_path):
    """--model-bands writes each outside model's band in each precision, over every run, in the form
    gpukit.memory reads back; it needs --outside to have anything to write."""

    def row(precision, mode, predicted, low, high, measured):
        return _band_case("keras-cnn", "CNN", precision, mode, predicted, low, high, measured)

    rows = [
        row("fp32", "train", 10, 11, 13, 12),
        row("fp32", "infer", 5, 4, 5, 5),
        row("fp16", "train", 10, 90, 100, 95),
    ]
    text = page.bands_csv(rows, "2026-12-02", "CPU test", ("model", "precision"))
    lines = text.splitlines()
    assert lines[0] == (
        "model,precision,cases,median_abs_error,worst_abs_error,error_low,error_high,measured_on,date,source"
    )
    where = ",CPU test,2026-12-02,benchmarks/memory_accuracy.py"
    # fp16: one case, 10/95 - 1 = -89.5%; its runs 10/100 - 1 = -90% to 10/90 - 1 = -88.9%
    assert lines[1] == "keras-cnn,fp16,1,0.8947,0.8947,-0.9000,-0.8889" + where
    # fp32: errors -16.7% (10/12) and 0% -> median 8.3%; runs 10/13 - 1 = -23.1% to 5/4 - 1 = +25.0%
    assert lines[2] == "keras-cnn,fp32,2,0.0833,0.1667,-0.2308,0.2500" + where
    read = _read_back(text, "MODEL_BANDS_PATH", memory.model_error_bands, monkeypatch, tmp_path)
    assert set(read) == {("keras-cnn", "fp32"), ("keras-cnn", "fp16")}
    assert read[("keras-cnn", "fp32")]["error_low"] == pytest.approx(-0.2308)
    assert read[("keras-cnn", "fp32")]["cases"] == 2


def test_the_grids_bands_are_per_family_and_mode_and_read_back_by_gpukit(page, monkeypatch, tmp_path):
    """--bands writes a band per family and mode (a training fit is judged by the training cases, an
    inference fit by the inference cases), in the form gpukit.memory.error_bands reads back."""

    def row(mode, predicted, low, high, measured):
        return _band_case(
            "keras-encoder", "transformer encoder", "fp32", mode, predicted, low, high, measured
        )

    rows = [row("train", 10, 10, 11, 10), row("train", 10, 8, 9, 8), row("infer", 5, 6, 8, 7)]
    text = page.bands_csv(rows, "2026-12-02", "CPU test")
    lines = text.splitlines()
    assert lines[0].startswith("family,mode,cases,median_abs_error,")
    where = ",CPU test,2026-12-02,benchmarks/memory_accuracy.py"
    # inference: 5/7 - 1 = -28.6%; its runs 5/8 - 1 = -37.5% to 5/6 - 1 = -16.7%
    assert lines[1] == "transformer encoder,infer,1,0.2857,0.2857,-0.3750,-0.1667" + where
    # training: 0% and 10/8 - 1 = +25% -> median 12.5%; runs 10/11 - 1 = -9.1% to 10/8 - 1 = +25%
    assert lines[2] == "transformer encoder,train,2,0.1250,0.2500,-0.0909,0.2500" + where
    read = _read_back(text, "ERROR_BANDS_PATH", memory.error_bands, monkeypatch, tmp_path)
    assert set(read) == {("transformer encoder", "train"), ("transformer encoder", "infer")}
    assert read[("transformer encoder", "infer")]["error_low"] == pytest.approx(-0.375)


def test_model_bands_need_the_outside_runs(script, capsys):
    with pytest.raises(SystemExit):
        script.main(["--from-raw", "x.json", "--model-bands", "y.csv"])
    assert "name their runs with --outside" in capsys.readouterr().err


def test_resume_needs_the_raw_file_named(script, capsys):
    with pytest.raises(SystemExit):
        script.main(["--models", "fake-net", "--resume"])
    assert "--resume continues a --raw FILE" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["{half a file", '{"repeats": 2}', '{"rows": [{"model": "x"}]}'])
def test_resume_names_a_raw_file_it_cannot_read_and_leaves_it_alone(script, tmp_path, capsys, text):
    raw = tmp_path / "runs.json"
    raw.write_text(text)
    with pytest.raises(SystemExit):
        script.main(["--models", "fake-net", "--raw", str(raw), "--resume"])
    err = capsys.readouterr().err
    assert f"--resume: {raw} is not a --raw file of this script" in err and "Traceback" not in err
    assert raw.read_text() == text


def test_precisions_measures_one_policy_again_into_the_grid(script, monkeypatch, tmp_path):
    """--precisions bf16 --merge-into: the bfloat16 cases measured again (on a CPU with other 16-bit
    instructions, say), each row saying which the CPU has, the rest of the grid left as it was."""
    measured = []

    def measure(name, batch, precision, optimizer, mode, shape, seq_len=None):
        measured.append((batch, precision, mode))
        return {
            "status": "ok",
            "measured_peak_bytes": batch * 2**20,
            "inter_op_threads": 2,
            "onednn": True,
            "native_16bit": ["bf16"],
        }

    monkeypatch.setattr(memory, "Estimator", FakeEstimator)
    monkeypatch.setattr(memory, "measure_in_subprocess", measure)
    grid = tmp_path / "grid.json"
    old = [
        {
            "model": "fake-net",
            "input": "",
            "seq_len": None,
            "batch": b,
            "precision": p,
            "optimizer": o,
            "mode": m,
            "runs": [3 * 2**20],
            "measured": 3 * 2**20,
            "note": "old",
        }
        for _, b, p, o, m in script.cases(["fake-net"], [8], ["adam"])
    ]
    grid.write_text(json.dumps({"repeats": 1, "rows": old}))
    assert (
        script.main(
            [
                "--models",
                "fake-net",
                "--batches",
                "8",
                "--optimizers",
                "adam",
                "--precisions",
                "bf16",
                "--repeats",
                "1",
                "--merge-into",
                str(grid),
            ]
        )
        == 0
    )
    assert measured == [(8, "bf16", "train"), (8, "bf16", "infer")]
    rows = json.loads(grid.read_text())["rows"]
    assert [(r["precision"], r["mode"]) for r in rows] == [(r["precision"], r["mode"]) for r in old]
    fresh = [r for r in rows if r["note"] != "old"]
    assert [(r["precision"], r["native_16bit"], r["measured"]) for r in fresh] == [
        ("bf16", ["bf16"], 8 * 2**20)
    ] * 2
    assert all(r["measured"] == 3 * 2**20 for r in rows if r["precision"] != "bf16")


def test_other_cpu_section_pairs_each_case_with_its_run_on_the_other_cpu(page):
    def row(precision, measured, native, note=""):
        return {
            "model": "fake-net",
            "input": "",
            "seq_len": None,
            "batch": 8,
            "precision": precision,
            "optimizer": "none",
            "mode": "infer",
            "measured": measured,
            "low": measured,
            "high": measured,
            "predicted": 10 * 2**20,
            "error": 10 * 2**20 / measured - 1,
            "native_16bit": native,
        }

    grid = [row("bf16", 9 * 2**20, ["bf16"]), row("fp16", 12 * 2**20, ["bf16"])]
    other = {
        "cpu": "an AVX2 CPU",
        "rows": [
            row("bf16", 13 * 2**20, []),
            row("fp16", 12.5 * 2**20, None),
            {**row("bf16", 20 * 2**20, ["bf16"]), "batch": 2},
        ],
    }
    text = "\n".join(page.other_cpu_section(grid, other, "other.json"))
    # float16 pairs too (other CPU: not recorded); the batch-2 case is not in the grid
    assert "2 of the cases above" in text and "(an AVX2 CPU; the runs: `other.json`)" in text
    assert (
        "| fake-net |  | 8 | bf16 | none | infer | 10.0 | 9.0 (9.0–9.0) | bf16 | 13.0 (13.0–13.0) | none | "
        "0.69 | +11.1% | -23.1% |" in text
    )
    assert "| 12.0 (12.0–12.0) | bf16 | 12.5 (12.5–12.5) | not recorded | 0.96 |" in text
    assert (
        page.other_cpu_section(grid, {"cpu": "same", "rows": grid}, "x.json") == []
    )  # same CPU: nothing to say


def test_memory_peaks_reads_its_cases_and_names_a_bad_one(monkeypatch):
    peaks = importlib.import_module("benchmarks.memory_peaks")
    assert peaks.parse_case("VGG16:8:fp32:momentum:train:64x64x3") == {
        "model": "VGG16",
        "batch": 8,
        "precision": "fp32",
        "optimizer": "momentum",
        "mode": "train",
        "input_shape": (64, 64, 3),
    }
    assert peaks.parse_case("keras-vit:2:bf16:none:infer")["input_shape"] is None
    with pytest.raises(
        SystemExit, match="case 'VGG16:eight:fp32': write model:batch:precision:optimizer:mode"
    ):
        peaks.parse_case("VGG16:eight:fp32")
    assert all(peaks.parse_case(case) for case, _ in peaks.CASES)


def test_conditions_are_said_per_family_or_once_when_every_family_agrees(page):
    conditions = importlib.import_module("benchmarks.memory_page.conditions")
    rows = [
        {"family": "a", "inter_op_threads": [2], "precision": "bf16", "native_16bit": ["bf16"]},
        {"family": "b", "inter_op_threads": [2], "precision": "bf16", "native_16bit": []},
        {"family": "b", "precision": "bf16"},
    ]  # a run from before anything was recorded
    assert conditions._per_family(rows[:2], conditions._recorded("inter_op_threads")) == "2 in every family"
    assert (
        conditions._per_family(rows, conditions._recorded("inter_op_threads"))
        == "a: 2; b: 2 and not recorded"
    )
    assert conditions._per_family(rows, conditions._native_label) == "a: bf16; b: none and not recorded"


@pytest.mark.slow  # every committed run re-estimated: a few hundred cases
@pytest.mark.tensorflow  # a case whose model's walk is not cached builds it
def test_the_error_bands_gpukit_reads_are_what_the_committed_runs_give():
    """data/memory_error.csv and data/memory_error_models.csv, which `gpukit fit` quotes, are written by
    `make accuracy` from the runs under benchmarks/runs/; re-estimated by this version, the runs give
    the same figures (the file's own device and date are kept: the figures are what is checked)."""
    module = importlib.import_module("benchmarks.memory_accuracy")
    pages = importlib.import_module("benchmarks.memory_page")
    runs = ROOT / "benchmarks" / "runs"

    def rows(*files):
        return module.reestimate([r for f in files for r in json.loads(f.read_text())["rows"]])

    for path, found, keys in (
        (
            ROOT / "data" / "memory_error.csv",
            rows(*sorted(runs.glob("memory-accuracy-runs-*.json"))),
            pages.BAND_KEYS,
        ),
        (
            ROOT / "data" / "memory_error_models.csv",
            rows(runs / "memory-outside-grid-runs.json"),
            ("model", "precision"),
        ),
    ):
        shipped = path.read_text()
        first = dict(zip(shipped.splitlines()[0].split(","), shipped.splitlines()[1].split(",")))
        written = pages.bands_csv(found, first["date"], first["measured_on"], keys)
        assert written == shipped, f"{path.name} is stale: run make accuracy"
    assert (
        module.measured_date([{"measured_on": "2026-12-01"}, {"measured_on": "2026-12-02"}, {}])
        == "2026-12-02"
    )
