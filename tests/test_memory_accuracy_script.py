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

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def script(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    module = importlib.import_module("memory_accuracy")
    monkeypatch.setattr(module, "markdown", lambda rows, kernels=None: f"{len(rows)} rows")
    return module


class FakeEstimator:
    def __init__(self, name, shape=None, seq_len=None):
        self.label = name
        self.graph = SimpleNamespace(trainable_params=1000, largest_variable=100, largest_embedding=0)

    def estimate(self, batch, precision, optimizer, mode):
        return SimpleNamespace(tensor_bytes=batch * 2**20)


def test_a_stopped_run_keeps_its_cases_and_resume_measures_only_the_rest(script, monkeypatch, tmp_path, capsys):
    raw = tmp_path / "runs.json"
    measured = []

    def measure(name, batch, precision, optimizer, mode, shape, seq_len=None):
        if stop_after is not None and len(measured) == stop_after:
            raise KeyboardInterrupt
        measured.append((batch, optimizer if mode == "train" else "none", mode))  # inference runs as sgd
        return {"status": "ok", "measured_peak_bytes": batch * 2**20 + 2**18, "inter_op_threads": 2, "onednn": True}

    monkeypatch.setattr(memory, "Estimator", FakeEstimator)
    monkeypatch.setattr(memory, "measure_in_subprocess", measure)
    argv = ["--models", "fake-net", "--batches", "2", "8", "--optimizers", "sgd", "adam", "--no-mixed",
            "--repeats", "1", "--raw", str(raw)]
    grid = script.cases(["fake-net"], [2, 8], ["sgd", "adam"], ())
    assert len(grid) == 6  # each batch: both optimizers and inference

    stop_after = 3
    with pytest.raises(KeyboardInterrupt):
        script.main(argv)
    kept = json.loads(raw.read_text())["rows"]
    assert [(r["batch"], r["optimizer"], r["mode"]) for r in kept] == measured == \
        [(b, o, m) for _, b, _, o, m in grid[:3]]
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
