"""The report with real kernels: papermill runs, HTML with hidden code and the parameters, index,
failures and a hung cell kept apart. Planning, parameters and Ctrl-C without kernels: test_report_engine.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from documents import write_notebook

from gpukit import report
from gpukit.errors import ReportError

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.notebooks


@pytest.fixture(scope="module")
def specs_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("outputs")
    run = report.render_report(
        out_dir=out,
        only=["01_specs"],
        progress=None,
        cli_parameters={"gpus": "[A40, V100]", "rank_by": "fp32_tflops"},
    )
    return out, run


def test_run_folder_layout_and_latest_link(specs_run):
    out, run = specs_run
    latest = out / "latest"
    assert latest.is_symlink() and os.readlink(latest) == run.run_id
    assert sorted(p.name for p in latest.iterdir()) == [
        "01_specs.html",
        "01_specs.ipynb",
        "index.html",
        "kernel.log",
        "run.json",
    ]
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "no partial folders left behind"


def test_executed_notebook_records_parameters_and_is_clean(specs_run):
    out, _ = specs_run
    nb = nbformat.read(out / "latest" / "01_specs.ipynb", as_version=4)
    assert nb.metadata.papermill.parameters == {"gpus": ["A40", "V100"], "rank_by": "fp32_tflops"}
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "stream" and o.name == "stderr"], "log noise in report"
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 3, "compute, memory and per-watt figures, each shown once"


def test_html_hides_code_shows_parameters_and_the_selected_gpus(specs_run):
    out, run = specs_run
    page = (out / "latest" / "01_specs.html").read_text()
    assert 'id="gpukit-show-code"' in page
    assert (
        "body:not(:has(#gpukit-show-code:checked)) .jp-CodeCell .jp-Cell-inputWrapper{display:none}" in page
    )
    assert "<code>gpus</code></th><td><code>[&quot;A40&quot;, &quot;V100&quot;]</code>" in page
    assert run.run_id in page
    # The ranking table, one per segment (both are data-centre parts): A40 (37.4 TFLOPS FP32) ranks
    # above the default V100 variant (14).
    ranking = page[page.index("datacenter: 2 GPUs by fp32_tflops, largest first") :]
    assert ranking.index("A40") < ranking.index("V100 PCIe 16GB")
    assert "RTX A4000" not in ranking.split("</table>")[0]
    assert len(re.findall(r"<img [^>]*src=\"data:image/png;base64,", page)) == 3
    for noise in ("Traceback", "WARNING", "oneDNN", "cuda_drivers", "DeprecationWarning"):
        assert noise not in page


def test_index_lists_notebooks_parameters_time_and_environment(specs_run):
    out, run = specs_run
    index = (out / "latest" / "index.html").read_text()
    assert '<a href="01_specs.html">01_specs</a>' in index and '<a href="01_specs.ipynb">' in index
    assert "fp32_tflops" in index and re.search(r"\d+\.\d s", index)
    for package in ("tensorflow", "keras", "pandas", "papermill"):
        assert f"<th><code>{package}</code></th>" in index
    assert "attached device" in index
    manifest = json.loads((out / "latest" / "run.json").read_text())
    assert manifest["run_id"] == run.run_id
    assert manifest["notebooks"][0]["status"] == "ok" and manifest["notebooks"][0]["seconds"] > 0
    assert manifest["device"]["kind"] in ("cpu", "gpu")


def test_failing_notebook_names_cell_keeps_partial_output_and_latest(tmp_path):
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    write_notebook(nbs / "01_ok.ipynb", "x = 1  # a number", "x + 1")
    out = tmp_path / "out"
    good = report.render_report(out_dir=out, notebooks_dir=nbs, progress=None)
    write_notebook(nbs / "02_bad.ipynb", "y = 2  # a number", "y * 2", "raise ValueError('boom')")
    proc = subprocess.run(
        [sys.executable, "-m", "gpukit", "report", "--notebooks", str(nbs), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1, proc.stderr
    assert "02_bad.ipynb failed in cell" in err[0] and "ValueError: boom" in err[0]
    assert f"{out / 'latest'} unchanged" in err[0]
    assert os.readlink(out / "latest") == good.run_id
    failed = [p for p in out.iterdir() if p.name.endswith(".failed")]
    assert len(failed) == 1
    kept = nbformat.read(failed[0] / "02_bad.ipynb", as_version=4)
    assert any(o.output_type == "error" for c in kept.cells if c.cell_type == "code" for o in c.outputs)
    assert (failed[0] / "01_ok.html").exists() and (failed[0] / "index.html").exists()
    assert "[2/2] 02_bad.ipynb" in proc.stdout


def test_a_hung_cell_times_out_with_a_real_kernel(tmp_path):
    out = tmp_path / "out"
    t0 = time.perf_counter()
    with pytest.raises(ReportError) as err:
        report.render_report(
            out_dir=out, notebooks_dir=ROOT / "tests" / "notebooks_fixture", progress=None, cell_timeout_s=3
        )
    took = time.perf_counter() - t0
    (failed,) = [p for p in out.iterdir() if p.name.endswith(".failed")]
    # cell 0 is markdown, 1 the parameters, 2 a print, 3 the sleep (no parameters given: nothing injected)
    assert str(err.value) == (
        f"01_sleep.ipynb timed out in cell 3 (import time; time.sleep(30)) after 3 s; "
        f"partial output kept in {failed}; {out / 'latest'} unchanged"
    )
    assert took < 20, f"the 30 s cell was not cut off at 3 s ({took:.1f} s)"
    assert not (out / "latest").exists() and not [p for p in out.iterdir() if p.name.startswith(".")]
    kept = nbformat.read(failed / "01_sleep.ipynb", as_version=4)
    assert kept.cells[2].outputs[0]["text"] == "hang\n", "what ran before the hang is kept"
    assert not kept.cells[4].outputs, "nothing ran after the hung cell"
    assert (failed / "index.html").exists() and (failed / "kernel.log").exists()
    assert json.loads((failed / "run.json").read_text())["notebooks"][0]["status"] == "failed"


def test_benchmark_notebook_saves_results_into_the_run(tmp_path):
    from gpukit.bench import results

    run = report.render_report(
        out_dir=tmp_path,
        only=["02"],
        progress=None,
        parameters={"workloads": ["bandwidth", "decoder"], "time_budget_s": 1.0},
    )
    folder = tmp_path / "latest"
    doc = results.load(folder / results.RESULTS_NAME)
    assert [r.workload for r in doc.records] == ["bandwidth", "bandwidth", "decoder", "decoder"]
    assert [r.params["phase"] for r in doc.records[2:]] == ["prefill", "decode"] and all(
        r.ok for r in doc.records
    )
    nb = nbformat.read(folder / "02_benchmark.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    # no log lines in what the page shows (TensorFlow's AutoGraph prints its warnings to stdout)
    assert not [o for o in outputs if o.output_type == "stream" and "WARNING" in o.text]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 2
    page = (folder / "02_benchmark.html").read_text()
    assert "bandwidth scale 128 MiB" in page and ".partial" not in page
    assert run.notebooks[0].status == "ok"


def test_memory_fit_notebook(tmp_path):
    report.render_report(
        out_dir=tmp_path,
        only=["04"],
        progress=None,
        parameters={
            "models": ["MobileNetV2", "bert-base"],
            "batch_sizes": [8, 64],
            "gpus": ["A4000", "A40", "V100"],
            "input_shape": [96, 96, 3],
            "seq_len": 128,
        },
    )
    nb = nbformat.read(tmp_path / "latest" / "04_memory_fit.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 2
    page = (tmp_path / "latest" / "04_memory_fit.html").read_text()
    for text in ("MobileNetV2", "bert-base", "RTX A4000", "V100 PCIe 16GB", ">activations (MiB)<"):
        assert text in page


def test_cost_notebook(tmp_path):
    mine = tmp_path / "quotes.csv"
    mine.write_text(
        "gpu,kind,usd,date,source_url,note\nA40,street,<b>4500</b>,2026-11-01,https://example.com/q,\n"
    )
    with pytest.raises(ReportError, match="03_cost_per_tflop.ipynb failed in cell .*DataError"):
        report.render_report(
            out_dir=tmp_path / "bad", only=["03"], progress=None, parameters={"price_files": [str(mine)]}
        )
    mine.write_text(
        "gpu,kind,usd,date,source_url,note\nA40,street,4500,2026-11-01,https://example.com/q,"
        "<script>alert(1)</script>\n"
    )
    report.render_report(
        out_dir=tmp_path / "ok",
        only=["03"],
        progress=None,
        parameters={
            "gpus": ["A40", "V100", "RTX A4000", "RTX A5000", "H100 NVL"],
            "price_files": [str(mine)],
        },
    )
    nb = nbformat.read(tmp_path / "ok" / "latest" / "03_cost_per_tflop.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert (
        sum("image/png" in o.get("data", {}) for o in outputs) == 5
    )  # incl. prices over time, cost per million images
    assert (
        ">owned (USD per million items)<"
        in (tmp_path / "ok" / "latest" / "03_cost_per_tflop.html").read_text()
    )
    page = (tmp_path / "ok" / "latest" / "03_cost_per_tflop.html").read_text()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "no purchase price: NVIDIA sells the H100 NVL to system builders" in page and "RTX A5000" in page


def test_llm_notebook(tmp_path):
    report.render_report(
        out_dir=tmp_path,
        only=["08"],
        progress=None,
        parameters={
            "models": ["llama-3-8b", "llama-3-70b"],
            "gpus": ["A40", "V100", "RTX A4000"],
            "decode_model": "llama-3-8b",
        },
    )
    nb = nbformat.read(tmp_path / "latest" / "08_llm.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert (
        sum("image/png" in o.get("data", {}) for o in outputs) == 4
    )  # two fit matrices, decode speed, grading
    page = (tmp_path / "latest" / "08_llm.html").read_text()
    for text in (
        "A40 vs V100 PCIe 16GB:",
        "only A40 holds llama-3-70b",
        ">decode (tokens/s)<",
        "Graded (docs/accuracy/llm.md)",
    ):
        assert text in page
    index = (tmp_path / "latest" / "index.html").read_text()
    assert report.SECTIONS["llm"][1] in index  # the page listed with what it answers
    assert "only A40 holds llama-3-70b" not in index  # the pairs' LLM verdicts stay on the page
