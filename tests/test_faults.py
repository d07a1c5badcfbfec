"""Faults injected on purpose: the kernel dying mid-report, two reports at once, a writer killed
mid-write. Each test fails if the behaviour in docs/explanation/robustness.md breaks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from gpukit import report
from gpukit.bench import results

pytestmark = pytest.mark.notebooks


def _notebook(path: Path, *cells: str) -> Path:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "gpukit", "display_name": "gpukit", "language": "python"}
    nb.cells = [new_code_cell("x = 1  # a number", metadata={"tags": ["parameters"]})] + [
        new_code_cell(c) for c in cells
    ]
    nbformat.write(nb, path)
    return path


def test_a_kernel_that_dies_mid_report_fails_the_run_and_keeps_everything(tmp_path):
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    _notebook(nbs / "01_ok.ipynb", "x + 1")
    out = tmp_path / "out"
    good = report.render_report(out_dir=out, notebooks_dir=nbs, progress=None)
    _notebook(nbs / "02_dies.ipynb", "x * 2", "import os\nos.kill(os.getpid(), 9)", "x * 3")
    proc = subprocess.run(
        [sys.executable, "-m", "gpukit", "report", "--notebooks", str(nbs), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    err = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(err) == 1 and "02_dies.ipynb failed" in err[0], proc.stderr
    assert os.readlink(out / "latest") == good.run_id  # the previous report is still the latest
    failed = [p for p in out.iterdir() if p.name.endswith(".failed")]
    assert len(failed) == 1 and (failed[0] / "01_ok.html").exists() and (failed[0] / "02_dies.ipynb").exists()
    assert (failed[0] / "run.json").exists() and (failed[0] / "index.html").exists()
    assert json.loads((failed[0] / "run.json").read_text())["notebooks"][1]["status"] == "failed"


def test_two_reports_at_once_write_separate_folders(tmp_path):
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "gpukit",
        "report",
        "--only",
        "01_specs",
        "--out",
        str(out),
        "-p",
        "gpus",
        "[A40]",
    ]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    results = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [r[1] for r in results]
    runs = sorted(p for p in out.iterdir() if p.is_dir() and not p.is_symlink())
    assert len(runs) == 2 and runs[0].name != runs[1].name
    for run in runs:
        assert (run / "index.html").exists() and (run / "01_specs.html").exists()
        assert json.loads((run / "run.json").read_text())["run_id"] == run.name
    assert os.readlink(out / "latest") in {r.name for r in runs}
    assert not [p for p in out.iterdir() if p.name.startswith(".") and not p.name.startswith(".latest")]


_WRITER = r"""
import sys
from dataclasses import replace
from gpukit import results
doc = results.Results.from_dict({"schema_version": results.SCHEMA_VERSION, "created": "x", "environment": {},
                                 "device": {"kind": "cpu"}, "records": [], "padding": "#" * 4_000_000})
i = 0
while True:
    replace(doc, created=str(i)).save(sys.argv[1])
    i += 1
"""


def _empty(created: str) -> results.Results:
    return results.Results.from_dict(
        {
            "schema_version": results.SCHEMA_VERSION,
            "created": created,
            "environment": {},
            "device": {"kind": "cpu"},
            "records": [],
        }
    )


def test_a_writer_killed_mid_write_never_leaves_a_half_file(tmp_path):
    target = tmp_path / "results.json"
    _empty("first").save(target)
    for delay in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2):
        child = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)])
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait()
        doc = results.load(target)  # always a whole, valid document: the old one or a new one
        assert doc.created == "first" or doc.created.isdigit()
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "results.json"]
    assert all(
        n.startswith(".results.json.") and n.endswith(".tmp") for n in leftovers
    )  # never the real name


_STUCK_WRITER = r"""
import os, sys, time
from gpukit import results

def stuck(fd):  # the new document is written but not yet renamed into place: kill us here
    print("IN-WRITE", flush=True)
    time.sleep(60)

os.fsync = stuck
results.Results.from_dict({"schema_version": results.SCHEMA_VERSION, "created": "second", "environment": {},
                           "device": {"kind": "cpu"}, "records": []}).save(sys.argv[1])
"""


def test_a_writer_killed_between_writing_and_renaming_leaves_the_old_file(tmp_path):
    target = tmp_path / "results.json"
    _empty("first").save(target)
    child = subprocess.Popen(
        [sys.executable, "-c", _STUCK_WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "IN-WRITE"
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert results.load(target).created == "first"
    (tmp,) = [p for p in tmp_path.iterdir() if p.name != "results.json"]
    assert (
        json.loads(tmp.read_text())["created"] == "second"
    )  # the new one was complete, yet never replaced it
