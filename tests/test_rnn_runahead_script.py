"""benchmarks/rnn_runahead.py writes one page from several sets of runs: a section per --raw
document, each with its own conditions, and the excess counted in kernel-sized gradients."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MIB = 2**20


@pytest.fixture
def script(monkeypatch):
    module = importlib.import_module("benchmarks.rnn_runahead")
    monkeypatch.setattr(module.device, "describe_attached", lambda: {"kind": "cpu", "name": "Test CPU"})
    return module


def _set(optimizer, busy, onednn, one, default):
    row = {
        "hidden": 256,
        "batch": 2,
        "kernel_bytes": 4 * MIB,
        "predicted": 20 * MIB,
        "one": one,
        "default": default,
        "one_threads": [1],
        "default_threads": [2],
        "one_onednn": [onednn],
        "default_onednn": [onednn],
    }
    return {"optimizer": optimizer, "busy": busy, "measured_on": "2026-12-01", "rows": [row]}


def test_one_page_holds_a_section_per_set_of_runs(script, tmp_path, capsys):
    idle = _set("sgd", 0, True, [60 * MIB], [20 * MIB, 36 * MIB])  # +10 kernels; 0 and +4
    busy = _set("adam", 2, False, [28 * MIB], [24 * MIB])  # +2 kernels; +1
    files = []
    for name, doc in (("idle.json", idle), ("busy.json", busy)):
        (tmp_path / name).write_text(json.dumps(doc))
        files.append(str(tmp_path / name))
    page = tmp_path / "page.md"
    assert script.main(["--from-raw", *files, "--write", str(page)]) == 0
    text = page.read_text()
    assert text.count("# Recurrent layers") == 1 and text.count("## Reading it") == 1
    assert "## oneDNN's kernels, sgd, an idle machine" in text
    assert "## Eigen's kernels, adam, 2 busy-looping processes" in text
    assert "| 256 | 2 | 4.0 | 20.0 | 60.0 | +10.0 to +10.0 | 20.0, 36.0 | +0.0 to +4.0 |" in text
    # more than RUN_AHEAD_KERNELS (2) extra kernels counts as running ahead: +4 does, 0 and +1 do not
    assert "kept up in 1 of 2 runs (1 hold more than 2 extra kernels)" in text
    assert "kept up in 1 of 1 runs (0 hold more than 2 extra kernels)" in text
    assert text.index("sgd, an idle") < text.index("adam, 2 busy")
