"""Progress a person can see: the report's notebooks done and left with an estimate of the time left
from the last run's, the benchmark's steps, a spinner for a wait; plain lines where the output is not
a terminal."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gpukit.present import terminal
from gpukit.report import progress
from gpukit.report.schedule import Job


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _jobs() -> list[Job]:
    nb = Path("notebooks")
    return [
        Job(1, nb / "01_bench.ipynb", "01_bench", {}, "bench", alone=True),
        Job(2, nb / "02_specs.ipynb", "02_specs", {}, "specs"),
        Job(3, nb / "06_pair.ipynb", "06_pair--a40-vs-v100", {"gpu_a": "A40", "gpu_b": "V100"}, "pair"),
        Job(4, nb / "07_llm.ipynb", "07_llm", {}, "llm"),
    ]


def test_last_times_reads_the_good_notebooks_of_the_latest_run(tmp_path):
    assert progress.last_times(tmp_path) == {}
    (tmp_path / "latest").mkdir()
    (tmp_path / "latest" / "run.json").write_text("{not json")
    assert progress.last_times(tmp_path) == {}
    record = {
        "notebooks": [
            {"name": "01_bench", "status": "ok", "seconds": 20.0},
            {"name": "02_specs", "status": "failed", "seconds": 1.0},
            {"name": "07_llm", "status": "ok", "seconds": None},
        ]
    }
    (tmp_path / "latest" / "run.json").write_text(json.dumps(record))
    assert progress.last_times(tmp_path) == {"01_bench": 20.0}


def test_time_left_counts_the_alone_notebook_whole_and_shares_the_rest():
    lines: list[str] = []
    clock = Clock()
    run = progress.RunProgress(lines.append, clock=clock)
    last = {"01_bench": 20.0, "02_specs": 4.0, "06_pair--a40-vs-v100": 8.0}  # 07_llm unknown: median 8
    run.begin("r1", _jobs(), Path("out/r1"), parallel=2, last=last)
    assert run.left() == pytest.approx(20 + (4 + 8 + 8) / 2)
    assert (
        lines[0] == "gpukit report: run r1, 4 notebook(s) -> out/r1 (about 30 s, from the last run's times)"
    )
    jobs = _jobs()
    run.started(jobs[0])
    clock.now += 15
    assert run.left() == pytest.approx(5 + 10)  # the benchmark has had 15 of its 20 s
    clock.now += 10  # it overran: nothing of it is left, not less than nothing
    assert run.left() == pytest.approx(10)
    run.finished(jobs[0], 25.0, ok=True)
    assert lines[-1] == "      [1/4] done in 25.0 s; 1 of 4 done, 25 s so far, about 10 s left"
    for job in jobs[1:]:
        run.started(job)
        run.finished(job, 1.0, ok=True)
    assert lines[-1] == "      [4/4] done in 1.0 s; 4 of 4 done, 25 s so far"
    assert "  [3/4] 06_pair.ipynb (A40 vs V100) ..." in lines


def test_without_a_last_run_there_is_no_estimate_and_a_failure_is_not_done():
    lines: list[str] = []
    run = progress.RunProgress(lines.append, clock=Clock())
    run.begin("r2", _jobs(), Path("out/r2"), parallel=1, last={})
    assert run.left() is None and lines[0] == "gpukit report: run r2, 4 notebook(s) -> out/r2"
    run.started(_jobs()[0])
    run.finished(_jobs()[0], 3.0, ok=False)
    assert run.done == set() and len(lines) == 2
    assert progress.duration(59.6) == "1 min 00 s" and progress.duration(42) == "42 s"


def test_a_terminal_gets_a_live_bar_with_the_time_left_and_the_lines_above_it():
    out = Tty()
    run = progress.LiveRunProgress(out)
    run.begin("r3", _jobs(), Path("out/r3"), parallel=2, last={"01_bench": 20.0})
    run.started(_jobs()[0])
    run.note(_jobs()[0], "cell 3 wrote to stderr")
    run.finished(_jobs()[0], 2.0, ok=True)
    run.close()
    run.end(Path("out/latest/index.html"), "r3", 2.0)
    text = out.getvalue()
    assert "gpukit report: run r3, 4 notebook(s)" in text and "note: cell 3 wrote to stderr" in text
    assert "done in 2.0 s; 1 of 4 done" in text and "Report: out/latest/index.html" in text
    assert run.bar is None, "the bar stops with the run"


def test_for_terminal_draws_only_on_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdout", Tty())
    assert isinstance(progress.for_terminal(), progress.LiveRunProgress)
    monkeypatch.setenv("TERM", "dumb")
    assert not isinstance(progress.for_terminal(), progress.LiveRunProgress)
    monkeypatch.setattr("sys.stdout", io.StringIO())
    monkeypatch.delenv("TERM")
    assert type(progress.for_terminal()) is progress.RunProgress


def test_steps_are_plain_lines_off_a_terminal_and_a_bar_on_one():
    plain = io.StringIO()
    with terminal.steps("benchmarking", plain) as show:
        show(1, 2, "matmul fp32: 1.2 TFLOP/s")
        show(2, 2, "bandwidth add fp32: 10 GB/s")
    assert plain.getvalue() == "[1/2] matmul fp32: 1.2 TFLOP/s\n[2/2] bandwidth add fp32: 10 GB/s\n"
    live = Tty()
    with terminal.steps("benchmarking", live) as show:
        show(1, 1, "matmul fp32: 1.2 TFLOP/s")
    assert "[1/1] matmul fp32: 1.2 TFLOP/s" in live.getvalue()
    quiet = io.StringIO()
    with terminal.waiting("fetching", quiet):
        pass
    assert quiet.getvalue() == "", "off a terminal, the command's own line says what came of the wait"


@pytest.mark.parametrize("flag, shown", [([], True), (["--no-progress"], False)])
def test_bench_shows_each_configuration_unless_asked_not_to(flag, shown, monkeypatch, capsys):
    import pandas as pd

    from gpukit import cli
    from gpukit.cli import bench as bench_cli

    class Rec:
        label, precision, throughput, throughput_unit, status, error = (
            "matmul 1024",
            "fp32",
            1.5,
            "TFLOP/s",
            "ok",
            None,
        )

    class Results:
        def frame(self):
            return pd.DataFrame({"configuration": ["matmul 1024"]})

    def run_benchmarks(progress=None, **_):
        if progress is not None:
            progress(1, 1, Rec())
        return Results()

    monkeypatch.setattr(bench_cli.bench, "run_benchmarks", run_benchmarks)
    assert cli.main(["bench", "--workloads", "matmul", "--format", "csv", *flag]) == 0
    err = capsys.readouterr().err
    assert (err == "[1/1] matmul 1024 fp32: 1.5 TFLOP/s\n") if shown else (err == "")
