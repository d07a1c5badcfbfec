"""Report orchestration without kernels: a fake engine writes what papermill would, or fails on demand.

Run folders and ``latest``, pair renderings, the index, failures, cell timeouts and Ctrl-C are
checked here in a few seconds; ``test_report.py`` keeps the real papermill runs.
"""

from __future__ import annotations

import html
import json
import os
import signal
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import pytest
from documents import GPU_A5000, document, write_notebook
from nbformat.v4 import new_code_cell, new_notebook, new_output

from gpukit import cli, report
from gpukit.bench.results import RUN_DIR_ENV
from gpukit.errors import ParameterError, ReportError
from gpukit.report import kernel as report_kernel
from gpukit.report import run as report_run

DEVICE = {"kind": "cpu", "name": "Test CPU (2 logical cores)", "gpus": [], "nvidia_smi": []}


def _now() -> str:
    return datetime.now(UTC).isoformat()


class FakeEngine(report.Engine):
    """Writes the executed notebook papermill would write, with no kernel; fails on demand.

    ``faults`` maps an output stem (``01_a``, ``06_pair--a40-vs-v100``) to ``(kind, cell)``:
    ``error`` (the cell raises ValueError: boom), ``timeout`` (the cell hangs: nbclient's
    CellTimeoutError), ``interrupt`` (Ctrl-C) or ``sigterm`` (SIGTERM sent to this process).
    ``cell`` indexes the executed notebook, injected parameters cell included.
    """

    def __init__(self, faults: dict | None = None):
        self.faults = faults or {}
        self.calls: list[dict] = []

    def execute(self, notebook, output, parameters, kernel_name, cwd, cell_timeout_s):
        self.calls.append(
            {
                "notebook": Path(notebook).name,
                "stem": Path(output).stem,
                "parameters": dict(parameters),
                "kernel_name": kernel_name,
                "cwd": Path(cwd),
                "cell_timeout_s": cell_timeout_s,
                "run_dir": os.environ.get(RUN_DIR_ENV),
            }
        )
        nb = nbformat.read(notebook, as_version=4)
        nb.metadata["papermill"] = {
            "parameters": dict(parameters),
            "input_path": str(notebook),
            "output_path": str(output),
            "start_time": _now(),
            "end_time": None,
            "exception": None,
        }
        cells = list(nb.cells)
        tagged = [i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", [])]
        if parameters:
            injected = new_code_cell(
                "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in parameters.items()),
                metadata={"tags": ["injected-parameters"]},
            )
            cells.insert(tagged[0] + 1 if tagged else 0, injected)
        nb.cells = cells
        for cell in cells:
            cell.metadata["papermill"] = {
                "exception": None,
                "start_time": None,
                "end_time": None,
                "duration": None,
                "status": "pending",
            }
        kind, at = self.faults.get(Path(output).stem, (None, None))
        for i, cell in enumerate(cells):
            meta = cell.metadata["papermill"]
            meta.update(start_time=_now(), status="running", exception=False)
            if i == at:
                self._fail(kind, nb, cell, i, output, cell_timeout_s)
            if cell.cell_type == "code":
                cell.execution_count = i
                cell.outputs = [new_output("stream", name="stdout", text=f"ran cell {i}\n")]
            meta.update(end_time=_now(), status="completed")
        nbformat.write(nb, output)

    def _fail(self, kind, nb, cell, index, output, cell_timeout_s):
        from nbclient.exceptions import CellTimeoutError
        from papermill.exceptions import PapermillExecutionError

        if kind == "error":
            cell.outputs = [new_output("error", ename="ValueError", evalue="boom", traceback=[])]
            cell.metadata["papermill"].update(status="failed", exception=True)
            nbformat.write(nb, output)
            raise PapermillExecutionError(
                cell_index=index,
                exec_count=index,
                source=cell.source,
                ename="ValueError",
                evalue="boom",
                traceback=[],
            )
        if kind == "timeout":  # papermill marks the cell "completed" on the way out; later cells never start
            cell.metadata["papermill"].update(status="completed", end_time=_now())
            nbformat.write(nb, output)
            raise CellTimeoutError.error_from_timeout_and_cell(
                "Cell execution timed out", cell_timeout_s, cell
            )
        nbformat.write(nb, output)  # interrupted mid-cell: papermill saved it as "running"
        if kind == "interrupt":
            raise KeyboardInterrupt
        if kind == "sigterm":
            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                raise AssertionError(
                    "SIGTERM still has its default action during a run: it would kill the process"
                )
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises KeyboardInterrupt from here
            raise AssertionError("SIGTERM did not interrupt the run")
        raise AssertionError(f"unknown fault {kind!r}")


@pytest.fixture(autouse=True)
def fixed_device(monkeypatch):
    """No child process probing TensorFlow: the device is a fixed CPU."""
    monkeypatch.setattr(report_run, "detect_devices", lambda *a, **k: dict(DEVICE))


@pytest.fixture
def nbs(tmp_path):
    folder = tmp_path / "nbs"
    folder.mkdir()
    write_notebook(
        folder / "01_a.ipynb",
        "x = 1  # a number\nlabel = 'plain'  # text",
        "y = x + 1",
        "import time\ntime.sleep(3600)  # a hang",
        "print(y)",
    )
    write_notebook(
        folder / "06_pair.ipynb",
        "gpu_a = 'A40'  # first GPU\ngpu_b = 'V100'  # second GPU",
        "print(gpu_a, gpu_b)",
    )
    return folder


def _hidden(out: Path) -> list[str]:
    return [p.name for p in out.iterdir() if p.name.startswith(".")]


def test_run_folder_layout_and_latest_switching(nbs, tmp_path):
    out = tmp_path / "out"
    tf_before = "tensorflow" in sys.modules
    engine = FakeEngine()
    first = report.render_report(out_dir=out, notebooks_dir=nbs, only=["01"], progress=None, engine=engine)
    assert os.readlink(out / "latest") == first.run_id and first.path == str(out / first.run_id)
    assert sorted(p.name for p in (out / "latest").iterdir()) == [
        "01_a.html",
        "01_a.ipynb",
        "index.html",
        "run.json",
    ]
    call = engine.calls[0]
    assert (call["notebook"], call["kernel_name"], call["cwd"]) == (
        "01_a.ipynb",
        report.KERNEL_NAME,
        Path.cwd(),
    )
    assert call["cell_timeout_s"] == report.DEFAULT_CELL_TIMEOUT_S
    assert call["run_dir"] == str((out / f".{first.run_id}.partial").resolve()), (
        "notebooks are told the run folder"
    )
    second = report.render_report(
        out_dir=out, notebooks_dir=nbs, only=["01"], progress=None, engine=FakeEngine()
    )
    assert second.run_id != first.run_id and os.readlink(out / "latest") == second.run_id
    assert (out / first.run_id / "index.html").exists(), "the older run is kept"
    assert _hidden(out) == []
    manifest = json.loads((out / "latest" / "run.json").read_text())
    assert manifest["run_id"] == second.run_id and manifest["device"] == DEVICE
    assert [(n["name"], n["status"]) for n in manifest["notebooks"]] == [("01_a", "ok")]
    if not tf_before:
        assert "tensorflow" not in sys.modules, "rendering with a fake engine imported TensorFlow"


def test_pair_notebook_is_planned_and_rendered_once_per_pair(nbs, tmp_path):
    notebooks = report.discover_notebooks(nbs)
    plan = report.plan_parameters(notebooks, {"x": 2})
    jobs = report.plan_jobs(notebooks, plan, pairs=[("L4", "T4")])
    assert [(j[0].name, j[1], j[3]) for j in jobs] == [
        ("01_a.ipynb", "01_a", "01_a"),
        ("06_pair.ipynb", "06_pair--a40-vs-v100", "06_pair: A40 vs V100"),
        ("06_pair.ipynb", "06_pair--rtx-a4000-vs-rtx-a5000", "06_pair: RTX A4000 vs RTX A5000"),
        ("06_pair.ipynb", "06_pair--l4-vs-t4", "06_pair: L4 vs T4"),
    ]
    assert jobs[0][2] == {"x": 2}
    engine = FakeEngine()
    run = report.render_report(
        out_dir=tmp_path / "out", notebooks_dir=nbs, progress=None, engine=engine, pairs=[("L4", "T4")]
    )
    assert [(c["stem"], c["parameters"]) for c in engine.calls] == [
        ("01_a", {}),
        ("06_pair--a40-vs-v100", {"gpu_a": "A40", "gpu_b": "V100"}),
        ("06_pair--rtx-a4000-vs-rtx-a5000", {"gpu_a": "RTX A4000", "gpu_b": "RTX A5000"}),
        ("06_pair--l4-vs-t4", {"gpu_a": "L4", "gpu_b": "T4"}),
    ]
    folder = tmp_path / "out" / "latest"
    for call in engine.calls:
        kept = nbformat.read(folder / f"{call['stem']}.ipynb", as_version=4)
        assert kept.metadata.papermill.parameters == call["parameters"]
        assert (folder / f"{call['stem']}.html").exists()
    assert [n.status for n in run.notebooks] == ["ok"] * 4
    # -p gpu_a/gpu_b render that one pair instead of the defaults
    engine = FakeEngine()
    report.render_report(
        out_dir=tmp_path / "one",
        notebooks_dir=nbs,
        only=["06"],
        progress=None,
        engine=engine,
        cli_parameters={"gpu_a": "H100"},
    )
    assert [c["stem"] for c in engine.calls] == ["06_pair--h100-vs-v100"]


def test_index_lists_every_notebook_with_its_parameters(nbs, tmp_path):
    lines: list[str] = []
    report.render_report(
        out_dir=tmp_path / "out",
        notebooks_dir=nbs,
        progress=lines.append,
        engine=FakeEngine(),
        cli_parameters={"label": "from -p"},
    )
    index = (tmp_path / "out" / "latest" / "index.html").read_text()
    for stem in ("01_a", "06_pair--a40-vs-v100", "06_pair--rtx-a4000-vs-rtx-a5000"):
        assert f'<a href="{stem}.html">{stem}</a>' in index and f'<a href="{stem}.ipynb">' in index
    assert "<code>label</code></th><td><code>&quot;from -p&quot;</code>" in index
    assert "<code>gpu_a</code></th><td><code>&quot;RTX A4000&quot;</code>" in index
    assert '<a href="06_pair--a40-vs-v100.html">pair: A40 vs V100</a>' in index  # the sections list
    assert "Test CPU (2 logical cores)" in index
    page = (tmp_path / "out" / "latest" / "01_a.html").read_text()
    assert "ran cell 3" in page and "&quot;from -p&quot;" in page
    assert "[3/3] 06_pair.ipynb (RTX A4000 vs RTX A5000) ..." in "\n".join(lines)
    assert "<th>Logical CPU cores</th>" in index and "<th>cpu_count</th>" not in index
    assert "from the last run's times" not in lines[0]
    again: list[str] = []  # the second run estimates its time from the first's
    report.render_report(
        out_dir=tmp_path / "out", notebooks_dir=nbs, progress=again.append, engine=FakeEngine()
    )
    assert again[0].endswith("from the last run's times)")
    assert any(line.strip().startswith("done in") and line.endswith(" left") for line in again)


def _good_run_then_a_failing_engine(out, nbs, monkeypatch, notebook: str, failure: str):
    """A good run of 01 into ``out``, a sentinel run folder in the environment, and an engine whose
    ``notebook`` fails with ``failure`` (error or interrupt) in cell 2."""
    good = report.render_report(
        out_dir=out, notebooks_dir=nbs, only=["01"], progress=None, engine=FakeEngine()
    )
    monkeypatch.setenv(RUN_DIR_ENV, "/sentinel/run-dir")
    return good, FakeEngine({notebook: (failure, 2)})


def test_failing_notebook_keeps_partial_output_latest_and_environment(nbs, tmp_path, monkeypatch):
    out = tmp_path / "out"
    good, engine = _good_run_then_a_failing_engine(
        out, nbs, monkeypatch, "06_pair--rtx-a4000-vs-rtx-a5000", "error"
    )
    with pytest.raises(ReportError) as err:
        report.render_report(out_dir=out, notebooks_dir=nbs, progress=None, engine=engine)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(
        "06_pair.ipynb (06_pair: RTX A4000 vs RTX A5000) failed in cell 2 "
        "(execution count 2): ValueError: boom; partial output kept in "
    )
    assert message.endswith(f".failed; {out / 'latest'} unchanged")
    assert os.environ[RUN_DIR_ENV] == "/sentinel/run-dir"
    assert os.readlink(out / "latest") == good.run_id and _hidden(out) == []
    (failed,) = [p for p in out.iterdir() if p.name.endswith(".failed")]
    assert str(failed) in message
    assert {
        "01_a.html",
        "06_pair--a40-vs-v100.html",
        "06_pair--rtx-a4000-vs-rtx-a5000.ipynb",
        "index.html",
        "run.json",
    } <= {p.name for p in failed.iterdir()}
    notebooks = json.loads((failed / "run.json").read_text())["notebooks"]
    assert [n["status"] for n in notebooks] == ["ok", "ok", "failed"]
    assert "ValueError: boom" in (failed / "index.html").read_text()
    # without a previous value the variable is removed again
    monkeypatch.delenv(RUN_DIR_ENV)
    with pytest.raises(ReportError):
        report.render_report(
            out_dir=out,
            notebooks_dir=nbs,
            only=["01"],
            progress=None,
            engine=FakeEngine({"01_a": ("error", 1)}),
        )
    assert RUN_DIR_ENV not in os.environ


def test_hung_cell_times_out_naming_notebook_cell_and_source(nbs, tmp_path):
    out = tmp_path / "out"
    good = report.render_report(
        out_dir=out, notebooks_dir=nbs, only=["01"], progress=None, engine=FakeEngine()
    )
    engine = FakeEngine({"01_a": ("timeout", 3)})  # cell 0 parameters, 1 injected, 2 y = x + 1, 3 the hang
    with pytest.raises(ReportError) as err:
        report.render_report(
            out_dir=out,
            notebooks_dir=nbs,
            only=["01"],
            progress=None,
            engine=engine,
            cell_timeout_s=2.5,
            cli_parameters={"x": "5"},
        )
    assert engine.calls[0]["cell_timeout_s"] == 2.5
    (failed,) = [p for p in out.iterdir() if p.name.endswith(".failed")]
    assert str(err.value) == (
        f"01_a.ipynb timed out in cell 3 (import time) after 2.5 s; "
        f"partial output kept in {failed}; {out / 'latest'} unchanged"
    )
    assert os.readlink(out / "latest") == good.run_id and _hidden(out) == []
    entry = json.loads((failed / "run.json").read_text())["notebooks"][0]
    assert entry["status"] == "failed" and entry["error"] == "timed out in cell 3 (import time) after 2.5 s"
    assert (failed / "index.html").exists() and (failed / "01_a.ipynb").exists()


def test_the_running_cell_is_found_from_papermill_metadata(tmp_path):
    nb = new_notebook(
        cells=[
            new_code_cell("a = 1"),
            new_code_cell("\n\n  b = compute(a, " + "x" * 80 + ")"),
            new_code_cell("c = 3"),
        ]
    )
    states = [("completed", True), ("completed", True), ("pending", False)]
    for cell, (status, started) in zip(nb.cells, states):
        cell.metadata["papermill"] = {"status": status, "start_time": _now() if started else None}
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    index, line = report._running_cell(path)
    assert index == 1 and line.startswith("b = compute(a, xxx") and line.endswith("…") and len(line) == 60
    nb.cells[0].metadata["papermill"]["status"] = "running"
    nbformat.write(nb, path)
    assert report._running_cell(path) == (0, "a = 1")
    assert report._running_cell(tmp_path / "missing.ipynb") is None


def test_cell_timeout_none_or_zero_is_no_limit_and_a_negative_one_is_refused(nbs, tmp_path):
    for value in (None, 0, float("inf")):
        engine = FakeEngine()
        report.render_report(
            out_dir=tmp_path / "out",
            notebooks_dir=nbs,
            only=["01"],
            progress=None,
            engine=engine,
            cell_timeout_s=value,
        )
        assert engine.calls[0]["cell_timeout_s"] is None, value
    for bad in (-1, float("nan"), "soon"):
        with pytest.raises(ParameterError, match="cell timeout .* must be a number of seconds, at least 0"):
            report.render_report(
                out_dir=tmp_path / "bad",
                notebooks_dir=nbs,
                progress=None,
                engine=FakeEngine(),
                cell_timeout_s=bad,
            )
    assert not (tmp_path / "bad").exists(), "refused before any folder is made"


def test_ctrl_c_keeps_partial_output_restores_environment_and_latest(nbs, tmp_path, monkeypatch):
    out = tmp_path / "out"
    good, engine = _good_run_then_a_failing_engine(out, nbs, monkeypatch, "06_pair--a40-vs-v100", "interrupt")
    with pytest.raises(KeyboardInterrupt) as err:
        report.render_report(out_dir=out, notebooks_dir=nbs, progress=None, engine=engine)
    assert engine.calls[-1]["run_dir"] != "/sentinel/run-dir", "the run set its own folder"
    assert os.environ[RUN_DIR_ENV] == "/sentinel/run-dir"
    assert os.readlink(out / "latest") == good.run_id
    assert _hidden(out) == [], "no .partial folder left"
    (kept,) = [p for p in out.iterdir() if p.name.endswith(".interrupted")]
    assert str(err.value) == f"partial output kept in {kept}; {out / 'latest'} unchanged"
    assert {"01_a.html", "01_a.ipynb", "06_pair--a40-vs-v100.ipynb", "index.html", "run.json"} <= {
        p.name for p in kept.iterdir()
    }
    manifest = json.loads((kept / "run.json").read_text())
    assert [(n["name"], n["status"]) for n in manifest["notebooks"]] == [
        ("01_a", "ok"),
        ("06_pair--a40-vs-v100", "interrupted"),
    ]
    assert "interrupted" in (kept / "index.html").read_text()


def test_sigterm_is_handled_like_ctrl_c_and_its_default_action_restored(nbs, tmp_path):
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt, match="partial output kept in .*\\.interrupted"):
        report.render_report(
            out_dir=out,
            notebooks_dir=nbs,
            only=["01"],
            progress=None,
            engine=FakeEngine({"01_a": ("sigterm", 2)}),
        )
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert [p.name.endswith(".interrupted") for p in out.iterdir()] == [True]


def test_papermill_engine_passes_the_timeout_and_logs_beside_the_output(tmp_path, monkeypatch):
    import papermill
    from jupyter_client.manager import AsyncKernelManager

    seen = []
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: seen.append((a, k)))
    (tmp_path / "run").mkdir()
    engine = report.PapermillEngine()
    engine.execute(tmp_path / "in.ipynb", tmp_path / "run" / "out.ipynb", {"x": 1}, "k", tmp_path, 2.5)
    engine.execute(tmp_path / "in.ipynb", tmp_path / "run" / "out.ipynb", {}, "k", tmp_path, None)
    (args, kwargs), (_, no_limit) = seen
    assert args == (str(tmp_path / "in.ipynb"), str(tmp_path / "run" / "out.ipynb"))
    # each kernel's manager is one the engine knows, so that it can interrupt a notebook run at once
    assert issubclass(kwargs.pop("kernel_manager_class"), AsyncKernelManager)
    assert kwargs == {
        "parameters": {"x": 1},
        "kernel_name": "k",
        "progress_bar": False,
        "log_output": False,
        "cwd": str(tmp_path),
        "execution_timeout": 3,
    }  # nbclient takes whole seconds
    assert no_limit["execution_timeout"] is None
    assert (tmp_path / "run" / "kernel.log").exists()


def _cli(argv, capsys):
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, [ln for ln in captured.err.splitlines() if ln.strip()]


def test_cli_cell_timeout_option(nbs, tmp_path, monkeypatch, capsys):
    engines: list[FakeEngine] = []

    def make(faults=None):
        def factory():
            engines.append(FakeEngine(faults))
            return engines[-1]

        return factory

    base = ["report", "--notebooks", str(nbs), "--out", str(tmp_path / "out"), "--only", "01"]
    monkeypatch.setattr(report_run, "PapermillEngine", make())
    assert _cli(base + ["--cell-timeout", "45"], capsys) == (0, [])
    assert _cli(base, capsys) == (0, [])
    assert _cli(base + ["--cell-timeout", "0"], capsys) == (0, [])
    assert [e.calls[0]["cell_timeout_s"] for e in engines] == [45.0, report.DEFAULT_CELL_TIMEOUT_S, None]
    code, err = _cli(base + ["--cell-timeout", "-5"], capsys)
    assert code == 2 and len(err) == 1 and "cell timeout -5.0 must be a number of seconds" in err[0]
    with pytest.raises(SystemExit) as exit_:
        cli.main(base + ["--cell-timeout", "soon"])
    assert exit_.value.code == 2 and "invalid float value: 'soon'" in capsys.readouterr().err
    monkeypatch.setattr(report_run, "PapermillEngine", make({"01_a": ("timeout", 2)}))
    code, err = _cli(base + ["--cell-timeout", "7"], capsys)
    assert code == 2 and len(err) == 1
    assert err[0].startswith(
        "gpukit: error: 01_a.ipynb timed out in cell 2 (import time) after 7 s; partial output"
    )
    with pytest.raises(SystemExit):
        cli.main(["report", "--help"])
    assert f"(default: {report.DEFAULT_CELL_TIMEOUT_S}; 0: no limit)" in " ".join(
        capsys.readouterr().out.split()
    )


def test_cli_ctrl_c_is_one_line_and_exit_130(nbs, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(report_run, "PapermillEngine", lambda: FakeEngine({"01_a": ("interrupt", 1)}))
    out = tmp_path / "out"
    code, err = _cli(["report", "--notebooks", str(nbs), "--out", str(out)], capsys)
    (kept,) = list(out.iterdir())
    assert code == 130
    assert err == [f"gpukit: interrupted; partial output kept in {kept}; {out / 'latest'} unchanged"]
    assert kept.name.endswith(".interrupted")


# --------------------------------------------------------------------------- planning, no engine at all


def test_parameter_plan(tmp_path):
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    a = write_notebook(nbs / "01_a.ipynb", "gpus = []  # names\nyears = 3.0  # years")
    b = write_notebook(nbs / "02_b.ipynb", "gpus = []  # names\nlabel = 'x'  # text")
    plan = report.plan_parameters(
        [a, b], {"years": 5, "02_b": {"label": "only b"}}, {"gpus": "[A40, V100]", "label": "3"}
    )
    assert plan == {
        "01_a": {"years": 5.0, "gpus": ["A40", "V100"]},
        "02_b": {"label": "3", "gpus": ["A40", "V100"]},
    }
    with pytest.raises(ParameterError, match=r"no notebook takes a parameter 'yeers'; did you mean years\?"):
        report.plan_parameters([a, b], {"yeers": 2})
    with pytest.raises(ParameterError, match=r"parameter gpus of 01_a.ipynb expects list .* got str 'A40'"):
        report.plan_parameters([a, b], {"gpus": "A40"})
    with pytest.raises(ParameterError, match=r"expects float .* got bool True"):
        report.plan_parameters([a], None, {"years": "true"})


def test_params_file_errors(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("gpus: [A40\n")
    with pytest.raises(ParameterError, match="is not valid YAML/JSON"):
        report.load_params_file(bad)
    bad.write_text("- A40\n")
    with pytest.raises(ParameterError, match="must hold a mapping"):
        report.load_params_file(bad)
    with pytest.raises(ParameterError, match="not found"):
        report.load_params_file(tmp_path / "missing.yaml")


def test_only_names_an_existing_notebook():
    with pytest.raises(ReportError, match="no notebook 'nosuch'.*choose from 00_which_gpu, 01_specs"):
        report.discover_notebooks(only=["nosuch"])
    assert [p.name for p in report.discover_notebooks(only=["specs"])] == ["01_specs.ipynb"]


def test_untrusted_text_is_escaped_in_index_and_notebook_pages():
    evil = "<script>alert(1)</script>"
    run = report.Run(
        run_id="r1",
        started="now",
        notebooks=[report.NotebookRun(name="01_x", parameters={"label": evil}, status="ok", seconds=1.0)],
        environment={"host": evil, "packages": {"gpukit": evil}},
        device={"kind": "cpu", "name": evil},
    )
    page = report.index_html(run)
    assert evil not in page and "&lt;script&gt;" in page
    nb = new_notebook(cells=[new_code_cell("1")])
    page = report.notebook_html(nb, "01_x", {"label": evil}, "r1")
    assert evil not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_latest_refuses_to_replace_a_real_folder(tmp_path):
    (tmp_path / "latest").mkdir()
    (tmp_path / "run1").mkdir()
    with pytest.raises(ReportError, match="is a real folder"):
        report._switch_latest(tmp_path, tmp_path / "run1")


def _pair(a: str, b: str, figure: str | None = None) -> dict:
    """A pair's summary as the head-to-head page leaves it for the index."""
    rows = [
        {
            "what": "resnet50 fp16: images/s per $1,000, buying",
            "a": "250",
            "b": "125",
            "wins": f"{a}, 2.00×",
            "error": "median error 4.6%; street price of 2026-01-01 and street price of 2026-01-02",
        },
        {
            "what": "purchase price, dollars",
            "a": "$4,000",
            "b": "$<1>",
            "wins": f"{b}, 1.10×",
            "error": "street",
        },
    ]
    return {
        "kind": "compare",
        "a": a,
        "b": b,
        "headers": ["", a, b, "which wins, by how much", "measured error"],
        "bottom_line": rows,
        "figure": figure,
        "verdicts": [{"topic": "speed", "verdict": "faster", "kind": "speed"}],
    }


def test_the_index_opens_with_each_pairs_bottom_line_in_the_order_of_its_pages():
    pages = [
        report.NotebookRun(
            name=f"06_tradeoffs--{slug}",
            parameters={"gpu_a": a, "gpu_b": b},
            status="ok",
            html=f"06_tradeoffs--{slug}.html",
        )
        for slug, a, b in (
            ("a40-vs-v100", "A40", "V100"),
            ("rtx-a4000-vs-rtx-a5000", "RTX A4000", "RTX A5000"),
        )
    ]
    pairs = [
        _pair("RTX A4000", "RTX A5000"),
        _pair("A40", "V100 PCIe 16GB", "summary-compare-a40-vs-v100.png"),
    ]
    run = report.Run(run_id="r1", started="now", device=DEVICE, notebooks=pages, summary={"pairs": pairs})
    page = report.index_html(run)
    bottom, money, listed = (
        page.index(h) for h in ("The bottom line", "Which GPU for your money", "The pages")
    )
    assert bottom < money < listed
    first, second = (
        page.index("<h3>A40 or V100 PCIe 16GB?</h3>"),
        page.index("<h3>RTX A4000 or RTX A5000?</h3>"),
    )
    assert bottom < first < second < money  # as the pages run, not as the files sort
    assert (
        "<tr><th></th><th>A40</th><th>V100 PCIe 16GB</th><th>which wins, by how much</th>"
        "<th>measured error</th></tr>"
    ) in page
    assert (
        "<td>resnet50 fp16: images/s per $1,000, buying</td><td>250</td><td>125</td><td>A40, 2.00×</td>"
        in page
    )
    assert "<td>$&lt;1&gt;</td>" in page  # escaped
    assert page.count("<img ") == 1 and 'src="summary-compare-a40-vs-v100.png"' in page[first:second]
    assert '<a href="06_tradeoffs--a40-vs-v100.html">the head-to-head page</a>' in page[first:second]
    assert (
        "verdicts" not in page[bottom:money] or "faster" not in page
    )  # the verdicts stay on the pair's page


@pytest.mark.slow  # a second or more: the full tier's
def test_the_index_answers_which_gpu_for_your_money_from_the_ranking_page(tmp_path, monkeypatch):
    from gpukit import rank

    monkeypatch.setenv(RUN_DIR_ENV, str(tmp_path))
    rankings = [
        rank.rank(rank.Job("bert-base", "fp16", seq_len=128), rank.Price("street")),
        rank.rank(rank.Job("bert-base", "fp16", seq_len=128), rank.Price("street", budget_usd=2000)),
    ]
    rank.save_for_report(rankings)
    summary = report.run_summary(tmp_path)
    (job,) = rank.choices(rankings)
    assert summary["rank"]["choices"] == [job]
    ranking_page = report.NotebookRun(
        name="00_which_gpu", parameters={}, status="ok", html="00_which_gpu.html"
    )
    run = report.Run(run_id="r1", started="now", device=DEVICE, notebooks=[ranking_page], summary=summary)
    page = report.index_html(run)
    money = page[page.index("Which GPU for your money") : page.index("The pages")]
    assert f"<h3>{job['job']}, 128 tokens</h3>" in money
    assert "".join(f"<th>{h}</th>" for h in rank.CHOICE_HEADERS) in money
    for row in job["rows"]:
        assert "".join(f"<td>{html.escape(row[c])}</td>" for c in rank.CHOICE_COLUMNS) in money
    assert f"Predicted: {html.escape(job['accuracy'])}." in money
    assert '<a href="00_which_gpu.html">the ranking page</a>' in money


def test_an_index_without_the_answering_pages_says_which_page_would_answer():
    run = report.Run(run_id="r1", started="now", device=DEVICE, summary={"pairs": []})
    page = report.index_html(run)
    assert "the head-to-head page did not run" in page and "the ranking page did not run" in page


def test_the_pages_say_what_each_answers_and_the_workshop_comes_after_the_analysis():
    names = [p.stem for p in report.discover_notebooks()]
    assert names[0] == "00_which_gpu" and names[-1] == "09_workshop"
    assert {n[3:] for n in names} == set(report.SECTIONS)  # every page has its question
    notebooks = [
        report.NotebookRun(name=n, parameters={}, status="ok", html=f"{n}.html", seconds=1.5) for n in names
    ]
    notebooks[3].status, notebooks[3].html = "failed", None
    page = report.index_html(report.Run(run_id="r1", started="now", device=DEVICE, notebooks=notebooks))
    listed = page[page.index("The pages") : page.index("Run time")]
    title, answers = report.SECTIONS["which_gpu"]
    assert (
        f'<tr><td><a href="00_which_gpu.html">{title}</a></td><td>{answers}</td><td>1.5 s</td></tr>' in listed
    )
    failed_title = report.SECTIONS[names[3][3:]][0]
    assert f"<tr><td>{failed_title} (failed)</td>" in listed
    assert listed.index("Workshop") > listed.index("LLMs")


def test_the_gpukit_kernel_is_registered_on_first_use(monkeypatch):
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    installed = []
    monkeypatch.setattr(report_kernel, "install_kernel", lambda name: installed.append(name))

    def missing(self, name):
        raise NoSuchKernel(name)

    monkeypatch.setattr(KernelSpecManager, "get_kernel_spec", missing)
    report.ensure_kernel()
    assert installed == ["gpukit"]
    monkeypatch.setattr(KernelSpecManager, "get_kernel_spec", lambda self, name: object())
    report.ensure_kernel()
    assert installed == ["gpukit"]  # registered once, not again


# --------------------------------------------------------------------------- notebooks at once


class ConcurrentFake(FakeEngine):
    """A :class:`FakeEngine` that may run notebooks at once: each takes ``seconds`` (or its stem's
    entry in ``durations``), and records when it ran. ``hangs`` names output stems that run until
    :meth:`interrupt` (then they raise, as a kernel interrupted mid-cell does)."""

    concurrent = True

    def __init__(self, faults: dict | None = None, seconds: float = 0.3, hangs: tuple = (), durations=None):
        super().__init__(faults)
        self.seconds, self.hangs, self.durations = seconds, set(hangs), dict(durations or {})
        self.spans: dict[str, tuple[float, float]] = {}
        self.stopped = threading.Event()
        self.interrupts: list[bool] = []

    def interrupt(self, force=False):
        self.interrupts.append(force)
        self.stopped.set()

    def execute(self, notebook, output, parameters, kernel_name, cwd, cell_timeout_s):
        stem, t0 = Path(output).stem, time.perf_counter()
        try:
            if stem in self.hangs:
                self.stopped.wait(30)
                raise RuntimeError("KeyboardInterrupt in cell 2")
            time.sleep(self.durations.get(stem, self.seconds))
            super().execute(notebook, output, parameters, kernel_name, cwd, cell_timeout_s)
        finally:
            self.spans[stem] = (t0, time.perf_counter())


@pytest.fixture
def five(tmp_path):
    """Five notebooks; the second measures the machine, so it runs alone."""
    folder = tmp_path / "five"
    folder.mkdir()
    for name in ("01_a", "02_bench", "03_b", "04_c", "05_d"):
        write_notebook(folder / f"{name}.ipynb", "x = 1  # a number", "y = x + 1", "print(y)")
    bench = nbformat.read(folder / "02_bench.ipynb", as_version=4)
    bench.metadata["gpukit"] = {"runs_alone": True}
    nbformat.write(bench, folder / "02_bench.ipynb")
    return folder


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@pytest.mark.slow  # a second or more: the full tier's
def test_notebooks_run_two_at_a_time_and_one_that_measures_alone(five, tmp_path):
    engine = ConcurrentFake()
    lines: list[str] = []
    run = report.render_report(
        out_dir=tmp_path / "out", notebooks_dir=five, progress=lines.append, engine=engine
    )
    spans = engine.spans
    assert [n.name for n in run.notebooks] == ["01_a", "02_bench", "03_b", "04_c", "05_d"]
    assert all(not _overlap(spans["02_bench"], spans[s]) for s in spans if s != "02_bench")
    assert spans["02_bench"][1] <= min(spans[s][0] for s in spans if s != "02_bench"), (
        "the notebook that measures runs first; the others once it is done"
    )
    assert _overlap(spans["01_a"], spans["03_b"]), "two at a time, in the run's order"
    assert spans["04_c"][0] >= min(spans["01_a"][1], spans["03_b"][1]), "never three at once"
    manifest = json.loads((tmp_path / "out" / "latest" / "run.json").read_text())
    assert manifest["parallel"] == 2 and manifest["device"] == DEVICE
    assert [n["status"] for n in manifest["notebooks"]] == ["ok"] * 5
    assert all(n["seconds"] >= 0.3 and n["start_s"] >= 0 for n in manifest["notebooks"])
    index = (tmp_path / "out" / "latest" / "index.html").read_text()
    assert "<h2>Run time</h2>" in index and "5 notebooks in " in index and "up to two at a time" in index
    said = [line.strip() for line in lines]
    assert "[5/5] 05_d.ipynb ..." in said and any(line.startswith("[5/5] done in") for line in said)


@pytest.mark.slow  # a second or more: the full tier's
def test_one_at_a_time_where_asked_or_where_the_engine_cannot(five, tmp_path):
    engine = ConcurrentFake(seconds=0.05)
    run = report.render_report(
        out_dir=tmp_path / "one", notebooks_dir=five, progress=None, engine=engine, parallel=1
    )
    spans = sorted(engine.spans.values())
    assert run.parallel == 1 and all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    assert (
        report.render_report(
            out_dir=tmp_path / "fake", notebooks_dir=five, progress=None, engine=FakeEngine()
        ).parallel
        == 1
    )
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ParameterError, match="parallel .* must be a whole number of notebooks"):
            report.render_report(out_dir=tmp_path / "bad", notebooks_dir=five, progress=None, parallel=bad)


@pytest.mark.slow  # a second or more: the full tier's
def test_a_failure_lets_the_notebook_beside_it_finish_and_starts_no_more(five, tmp_path):
    out = tmp_path / "out"
    # The benchmark first, then 01 and 03 together; 03 fails while 01 still runs.
    engine = ConcurrentFake({"03_b": ("error", 2)}, durations={"03_b": 0.05, "01_a": 0.6})
    with pytest.raises(ReportError) as err:
        report.render_report(out_dir=out, notebooks_dir=five, progress=None, engine=engine)
    assert str(err.value).startswith("03_b.ipynb failed in cell 2 (execution count 2): ValueError: boom;")
    assert "04_c" not in engine.spans and "05_d" not in engine.spans, "nothing starts after a failure"
    (failed,) = [p for p in out.iterdir() if p.name.endswith(".failed")]
    manifest = json.loads((failed / "run.json").read_text())
    assert [(n["name"], n["status"]) for n in manifest["notebooks"]] == [
        ("01_a", "ok"),
        ("02_bench", "ok"),
        ("03_b", "failed"),
    ]
    assert (failed / "01_a.html").exists() and _hidden(out) == [] and not (out / "latest").exists()
    assert engine.interrupts == [], "a failure stops nothing that runs"


def test_ctrl_c_stops_the_notebook_running_beside(five, tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setenv(RUN_DIR_ENV, "/sentinel/run-dir")
    engine = ConcurrentFake({"03_b": ("interrupt", 2)}, hangs=("01_a",), durations={"03_b": 0.05})
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt, match=r"partial output kept in .*\.interrupted"):
        report.render_report(out_dir=out, notebooks_dir=five, progress=None, engine=engine)
    assert time.perf_counter() - t0 < 20, "the hung notebook was stopped, not waited for"
    assert engine.interrupts == [False], "stopped gently, and that was enough"
    assert (
        os.environ[RUN_DIR_ENV] == "/sentinel/run-dir" and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    )
    (kept,) = [p for p in out.iterdir() if p.name.endswith(".interrupted")]
    manifest = json.loads((kept / "run.json").read_text())
    assert [(n["name"], n["status"]) for n in manifest["notebooks"]] == [
        ("01_a", "interrupted"),
        ("02_bench", "ok"),
        ("03_b", "interrupted"),
    ]
    assert _hidden(out) == []


@pytest.mark.slow  # a second or more: the full tier's
def test_the_device_is_probed_beside_the_last_notebooks_never_beside_one_that_measures(
    five, tmp_path, monkeypatch
):
    engine = ConcurrentFake()
    probed: list[float] = []

    def probe(*a, **k):
        probed.append(time.perf_counter())
        time.sleep(0.2)
        return dict(DEVICE)

    monkeypatch.setattr(report_run, "detect_devices", probe)
    run = report.render_report(out_dir=tmp_path / "out", notebooks_dir=five, progress=None, engine=engine)
    (when,) = probed
    # The benchmark first, then 01 and 03, then 04 and 05 as slots free: the probe starts once
    # nothing is left to start and a slot is free, when the first of 04 and 05 is done.
    first_done = min(engine.spans["04_c"][1], engine.spans["05_d"][1])
    assert when >= first_done and run.device == DEVICE
    engine = ConcurrentFake()
    probed.clear()
    report.render_report(
        out_dir=tmp_path / "only", notebooks_dir=five, only=["02"], progress=None, engine=engine
    )
    (when,) = probed
    assert not engine.spans["02_bench"][0] <= when <= engine.spans["02_bench"][1]


def test_the_index_shows_each_notebooks_time_and_the_total():
    notebooks = [
        report.NotebookRun(name="01_a", parameters={}, status="ok", seconds=4.25, start_s=0.0),
        report.NotebookRun(name="02_<b>", parameters={}, status="ok", seconds=10.0, start_s=0.5),
        report.NotebookRun(name="03_c", parameters={}, status="interrupted"),
    ]
    run = report.Run(run_id="r1", started="now", notebooks=notebooks, device=DEVICE, seconds=10.5, parallel=2)
    page = report.index_html(run)
    assert "3 notebooks in 10.5 s, up to two at a time (14.2 s of notebook time)." in page
    assert "<td>02_&lt;b&gt;</td><td>+0.5 s</td><td>10.0 s</td>" in page
    assert "<td>03_c</td><td>–</td><td>–</td><td></td>" in page
    run.parallel, run.notebooks = 1, notebooks[:1]
    assert "1 notebook in 10.5 s.</p>" in report.index_html(run)


class BenchmarkingFake(ConcurrentFake):
    """Its ``02_bench`` saves a results document into the run folder, as the benchmark notebook does."""

    def __init__(self, device: dict):
        super().__init__(seconds=0.05)
        self.device = device

    def execute(self, notebook, output, parameters, kernel_name, cwd, cell_timeout_s):
        super().execute(notebook, output, parameters, kernel_name, cwd, cell_timeout_s)
        if Path(output).stem == "02_bench":
            doc = document(device=self.device, tensorflow="2.21.0")
            doc["environment"].update(cuda_build="12.5.1", cudnn_build="9")
            (Path(output).parent / "bench-results.json").write_text(json.dumps(doc))


@pytest.mark.slow  # a second or more: the full tier's
def test_where_the_benchmark_found_no_gpu_the_device_is_not_probed_again(five, tmp_path, monkeypatch):
    from gpukit.bench import device

    monkeypatch.setattr(device, "nvidia_smi", lambda: [])
    probed = []
    monkeypatch.setattr(report_run, "detect_devices", lambda *a, **k: probed.append(1) or dict(DEVICE))
    run = report.render_report(
        out_dir=tmp_path / "cpu", notebooks_dir=five, progress=None, engine=BenchmarkingFake(DEVICE)
    )
    assert probed == [] and run.device == {
        "gpus": [],
        "nvidia_smi": [],
        "tensorflow": "2.21.0",
        "cuda_build": "12.5.1",
        "cudnn_build": "9",
        "kind": "cpu",
        "name": f"{device.cpu_model()} ({os.cpu_count()} logical cores)",
    }
    run = report.render_report(
        out_dir=tmp_path / "gpu", notebooks_dir=five, progress=None, engine=BenchmarkingFake(GPU_A5000)
    )
    assert probed == [1] and run.device == DEVICE, "a GPU's probe lists every GPU: it runs"
