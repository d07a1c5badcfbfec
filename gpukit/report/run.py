"""One run of the report: the run folder rendered hidden and renamed into place, the ``latest``
link switched atomically, SIGTERM treated as Ctrl-C, each notebook executed and its page written
(when, :mod:`.schedule` decides), what a failed or interrupted run keeps, and how a failure is
described (the cell that raised or timed out)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import nbformat
from nbclient.exceptions import CellTimeoutError

from .. import _atomic
from ..bench.device import cpu_only, detect_devices, environment
from ..bench.results import RUN_DIR_ENV, load_for_report
from ..errors import DataError, ParameterError, ReportError
from ..quiet import QUIET_ENV
from ..resources import OUTPUTS_DIR
from .engine import DEFAULT_CELL_TIMEOUT_S, Engine, PapermillEngine, _cell_limit
from .html import index_html, notebook_html
from .kernel import KERNEL_NAME
from .parameters import discover_notebooks, load_params_file, plan_jobs, plan_parameters
from .progress import RunProgress, last_times
from .records import NotebookRun, Run
from .schedule import Hooks, Job, Outcome, default_parallel, run_jobs, runs_alone


def run_summary(folder: Path) -> dict:
    """What the notebooks left for the index: the benchmark's results, each pair's bottom line and
    verdicts, and the rankings' choices."""
    out: dict = {"pairs": []}
    try:
        doc = load_for_report(folder=folder)
        if doc is not None:
            out["measured"] = doc.summary()
    except DataError as exc:
        out["measured"] = {"error": str(exc)}
    for path in sorted(folder.glob("summary-compare-*.json")):
        try:
            out["pairs"].append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    ranked = folder / "summary-rank.json"
    if ranked.exists():
        try:
            out["rank"] = json.loads(ranked.read_text())
        except (OSError, ValueError):
            pass
    return out


def _new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def _switch_latest(out_root: Path, run_dir: Path) -> None:
    """Point ``out_root/latest`` at ``run_dir`` atomically (a new symlink renamed over the old)."""
    latest = out_root / "latest"
    if latest.exists() and not latest.is_symlink():
        raise ReportError(f"{latest} is a real folder, not a link gpukit made; move it away and run again")
    tmp = out_root / f".latest.{secrets.token_hex(4)}"
    os.symlink(run_dir.name, tmp)
    os.replace(tmp, latest)


def _stderr_cells(nb_node) -> list[int]:
    """Indexes of cells that wrote to stderr (warnings, log noise): reports must have none."""
    return [
        i
        for i, c in enumerate(nb_node.cells)
        if c.cell_type == "code"
        and any(o.get("output_type") == "stream" and o.get("name") == "stderr" for o in c.get("outputs", []))
    ]


def _sigterm_as_interrupt() -> Callable[[], None]:
    """Make SIGTERM raise :class:`KeyboardInterrupt` (as Ctrl-C does) until the returned undo is called.

    Only in the main thread and only where SIGTERM still has its default action: a handler
    the caller installed is left alone.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        return lambda: None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return lambda: None

    def interrupt(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)

    def undo() -> None:
        if signal.getsignal(signal.SIGTERM) is interrupt:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)

    return undo


def render_report(
    out_dir: str | os.PathLike | None = None,
    parameters: Mapping | None = None,
    cli_parameters: Mapping[str, str] | None = None,
    params_file: str | os.PathLike | None = None,
    notebooks_dir: str | os.PathLike | None = None,
    only: Iterable[str] | None = None,
    kernel_name: str = KERNEL_NAME,
    progress: Callable[[str], None] | RunProgress | None = print,
    pairs: Iterable[tuple[str, str]] | None = None,
    engine: Engine | None = None,
    cell_timeout_s: float | None = DEFAULT_CELL_TIMEOUT_S,
    parallel: int | None = None,
) -> Run:
    """Render every report notebook into a new run folder under ``out_dir`` (default ``outputs/``).

    ``parameters`` (typed) and ``params_file`` (YAML/JSON) and ``cli_parameters`` (``-p``
    strings) go to each notebook that declares the name; later sources win. On success the
    run folder is renamed into place and ``out_dir/latest`` points at it. A notebook that
    fails, or a cell that runs longer than ``cell_timeout_s`` seconds (``None`` or 0: no
    limit), raises :class:`ReportError` naming the notebook and the cell; its partial output
    stays in ``<run>.failed`` and ``latest`` is not touched. Ctrl-C (or SIGTERM) keeps the
    partial output in ``<run>.interrupted`` and re-raises :class:`KeyboardInterrupt`, whose
    message says where. ``engine`` executes each notebook (default: :class:`PapermillEngine`),
    up to ``parallel`` at once where it can (default :func:`default_parallel`; see
    :mod:`gpukit.report.schedule`: a notebook that measures runs alone). The device is probed
    while the first notebooks run. ``$GPUKIT_RUN_DIR`` is set for the notebooks and restored
    afterwards, whatever happens. ``progress`` hears of each notebook starting and ending: a
    :class:`~gpukit.report.progress.RunProgress` (the command line's draws a bar), or a callable
    given its plain lines (``None``: silent), which estimate the time left from the last run's.
    """
    if not isinstance(progress, RunProgress):
        progress = RunProgress(progress or (lambda _msg: None))
    limit = _cell_limit(cell_timeout_s)
    engine = engine or PapermillEngine()
    width = _parallel_limit(parallel)
    out_root = Path(out_dir) if out_dir else OUTPUTS_DIR
    jobs = _plan_run(parameters, cli_parameters, params_file, notebooks_dir, only, pairs)

    out_root.mkdir(parents=True, exist_ok=True)
    run = Run(run_id=_new_run_id(), started=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"))
    run.parallel = width if engine.concurrent else 1
    partial = out_root / f".{run.run_id}.partial"
    latest = out_root / "latest"
    for key, value in QUIET_ENV.items():  # the kernel inherits these: no TensorFlow log noise
        os.environ.setdefault(key, value)
    partial.mkdir()
    previous_run_dir = os.environ.get(RUN_DIR_ENV)
    undo_sigterm = _sigterm_as_interrupt()
    rendering = _Rendering(run, partial, engine, kernel_name, limit, progress)
    try:
        os.environ[RUN_DIR_ENV] = str(partial.resolve())  # notebooks save their results here
        progress.begin(run.run_id, jobs, out_root / run.run_id, run.parallel, last_times(out_root))
        run.environment = environment()
        rendering.start()
        failed = run_jobs(jobs, rendering.work, rendering.hooks(), engine, run.parallel)
        rendering.probe.wait()
        if failed is not None:
            raise rendering.failure(failed)
        _finish_run(run, partial, rendering.t_run)
        final = out_root / run.run_id
        os.replace(partial, final)
        _switch_latest(out_root, final)
    except KeyboardInterrupt:
        rendering.probe.wait(start=False)  # only one under way: a new one would delay the interrupt
        kept = _keep_interrupted(run, partial, rendering.t_run)
        raise KeyboardInterrupt(f"partial output kept in {kept}; {latest} unchanged") from None
    finally:
        progress.close()
        _restore_run_dir(previous_run_dir)
        undo_sigterm()
    run.path = str(final)
    progress.end(latest / "index.html", run.run_id, run.seconds)
    return run


def _plan_run(
    parameters: Mapping | None,
    cli_parameters: Mapping[str, str] | None,
    params_file: str | os.PathLike | None,
    notebooks_dir: str | os.PathLike | None,
    only: Iterable[str] | None,
    pairs: Iterable[tuple[str, str]] | None,
) -> list[Job]:
    """The run's jobs (see :func:`plan_jobs`): the notebooks chosen, each with the parameters of
    the file, then the typed ones, then the command line's, and whether it runs alone."""
    notebooks = discover_notebooks(Path(notebooks_dir) if notebooks_dir else None, only)
    overrides = dict(load_params_file(params_file)) if params_file else {}
    overrides.update(parameters or {})
    plan = plan_parameters(notebooks, overrides, cli_parameters)
    alone = {nb: runs_alone(nb) for nb in notebooks}
    return [
        Job(i, nb, stem, params, title, alone[nb])
        for i, (nb, stem, params, title) in enumerate(plan_jobs(notebooks, plan, pairs), 1)
    ]


def _parallel_limit(parallel: int | None) -> int:
    """How many notebooks may run at once: ``parallel`` checked, or :func:`default_parallel`."""
    if parallel is None:
        return default_parallel()
    if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
        raise ParameterError(f"parallel {parallel!r} must be a whole number of notebooks, at least 1")
    return parallel


class _DeviceProbe:
    """:func:`detect_devices` in a thread of its own (its child process loads TensorFlow for
    seconds), started where a notebook slot is spare; :meth:`wait` puts what it found in the run.
    Where this run's benchmark found no GPU, that is the answer (:func:`cpu_only`), probed no more."""

    def __init__(self, run: Run, folder: Path):
        self.run, self.folder = run, folder
        self.found: dict = {}
        self.thread = threading.Thread(target=self._probe, name="gpukit-device-probe", daemon=True)

    def _probe(self) -> None:
        self.found = _benchmarked_cpu(self.folder) or detect_devices()

    def start(self) -> None:
        if self.thread.ident is None:
            self.thread.start()

    def wait(self, start: bool = True) -> None:
        """Wait for the probe (starting it first, unless not ``start``) and record what it found."""
        if start:
            self.start()
        if self.thread.ident is not None:
            self.thread.join()
            self.run.device = self.found


def _benchmarked_cpu(folder: Path) -> dict | None:
    """The device, from the results this run's benchmark saved in ``folder``, where they say
    TensorFlow saw no GPU; ``None`` where there are none (or they say a GPU: the probe lists them all)."""
    try:
        doc = load_for_report(folder=folder)
    except DataError:
        return None
    env = doc.environment if doc is not None else {}
    if doc is None or doc.device.kind != "cpu" or not env.get("tensorflow"):
        return None
    return cpu_only(env["tensorflow"], env.get("cuda_build"), env.get("cudnn_build"))


class _Rendering:
    """The jobs of one run being rendered into its ``partial`` folder: what :func:`run_jobs` is given
    to execute each (:meth:`work`, in any thread) and to settle it (:meth:`hooks`, in this one)."""

    def __init__(self, run, partial, engine, kernel_name, limit, progress: RunProgress):
        self.run, self.partial, self.engine = run, partial, engine
        self.kernel_name, self.limit, self.progress = kernel_name, limit, progress
        self.probe = _DeviceProbe(run, partial)
        self.entries: dict[int, NotebookRun] = {}
        self.t_run = time.perf_counter()

    def start(self) -> None:
        self.t_run = time.perf_counter()

    def hooks(self) -> Hooks:
        return Hooks(
            self.started,
            self.finished,
            self.interrupted,
            spare=self.probe.start,
            before_alone=lambda: self.probe.wait(start=False),  # a probe under way ends first
        )

    def started(self, job: Job) -> None:
        entry = NotebookRun(name=job.stem, parameters=job.parameters, title=job.title)
        entry.start_s = time.perf_counter() - self.t_run
        self.entries[job.number] = entry
        self.run.notebooks = [self.entries[n] for n in sorted(self.entries)]  # in the run's order
        self.progress.started(job)

    def work(self, job: Job) -> Outcome:
        """Execute ``job``'s notebook and write its HTML page; a failure is returned, not raised."""
        executed = self.partial / f"{job.stem}.ipynb"
        t0 = time.perf_counter()
        try:
            self.engine.execute(
                job.notebook, executed, job.parameters, self.kernel_name, Path.cwd(), self.limit
            )
        except BaseException as exc:  # noqa: BLE001 -- papermill/nbclient raise many kinds; Ctrl-C too
            return Outcome(time.perf_counter() - t0, exc)
        outcome = Outcome(time.perf_counter() - t0)
        nb_node = nbformat.read(executed, as_version=4)
        noisy = _stderr_cells(nb_node)
        if noisy:
            outcome.notes.append(f"cell(s) {', '.join(map(str, noisy))} of {job.title} wrote to stderr")
        page = notebook_html(nb_node, job.stem, job.parameters, self.run.run_id)
        _atomic.write_text(self.partial / f"{job.stem}.html", page)
        return outcome

    def finished(self, job: Job, outcome: Outcome) -> bool:
        entry = self.entries[job.number]
        entry.seconds = outcome.seconds
        if outcome.error is not None:
            entry.status = "failed"
            entry.error = _describe_failure(outcome.error, self.partial / f"{job.stem}.ipynb", self.limit)
            self.progress.finished(job, entry.seconds, ok=False)
            return False
        entry.status = "ok"
        entry.html, entry.ipynb = f"{job.stem}.html", f"{job.stem}.ipynb"
        for note in outcome.notes:
            self.progress.note(job, note)
        self.progress.finished(job, entry.seconds, ok=True)
        return True

    def interrupted(self, job: Job, seconds: float) -> None:
        entry = self.entries[job.number]
        entry.seconds, entry.status = seconds, "interrupted"
        self.progress.finished(job, seconds, ok=False)

    def failure(self, job: Job) -> ReportError:
        """The error of a run that ``job`` failed; the run is set aside as ``<run>.failed`` first."""
        entry = self.entries[job.number]
        failed = _set_aside(self.run, self.partial, self.t_run, "failed")
        what = entry.error if entry.error.startswith("timed out") else f"failed {entry.error}"
        name = job.notebook.name
        return ReportError(
            f"{name}{'' if job.stem == job.notebook.stem else f' ({job.title})'} {what}; "
            f"partial output kept in {failed}; {self.partial.parent / 'latest'} unchanged"
        )


def _keep_interrupted(run: Run, partial: Path, t_run: float) -> Path:
    """Where an interrupted run's output is kept: set aside as ``<run>.interrupted``, or, when the
    folder was being renamed as the interrupt came, wherever it went."""
    if partial.is_dir():
        return _set_aside(run, partial, t_run, "interrupted")
    out_root = partial.parent
    return next(
        (p for p in (out_root / run.run_id, out_root / f"{run.run_id}.failed") if p.exists()), partial
    )


def _restore_run_dir(previous: str | None) -> None:
    """Put ``$GPUKIT_RUN_DIR`` back as it was before the run (unset if it was)."""
    if previous is None:
        os.environ.pop(RUN_DIR_ENV, None)
    else:
        os.environ[RUN_DIR_ENV] = previous


def _finish_run(run: Run, folder: Path, t_run: float) -> None:
    run.seconds = time.perf_counter() - t_run
    run.summary = run_summary(folder)
    _atomic.write_text(folder / "run.json", json.dumps(asdict(run), indent=2, default=str))
    _atomic.write_text(folder / "index.html", index_html(run))


def _set_aside(run: Run, partial: Path, t_run: float, suffix: str) -> Path:
    """Write the index of an unfinished run and rename its folder to ``<run>.<suffix>``; returns it."""
    _finish_run(run, partial, t_run)
    kept = partial.parent / f"{run.run_id}.{suffix}"
    os.replace(partial, kept)
    return kept


def _first_line(source: str, width: int = 60) -> str:
    line = next((ln.strip() for ln in str(source).splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def _running_cell(executed: Path) -> tuple[int, str] | None:
    """(index, first source line) of the cell that was running when execution stopped.

    Read from papermill's cell metadata in the partially executed notebook: the cell marked
    ``running``, else the last one that started (papermill marks a cell whose execution
    raised "completed" on its way out). ``None`` where the notebook or its metadata is missing.
    """
    try:
        nb = nbformat.read(executed, as_version=4)
    except Exception:  # missing, half-written or not a notebook: nothing to say about cells
        return None
    started = None
    for i, cell in enumerate(nb.cells):
        meta = cell.get("metadata", {}).get("papermill", {})
        if meta.get("status") == "running":
            return i, _first_line(cell.source)
        if meta.get("start_time"):
            started = (i, _first_line(cell.source))
    return started


def _describe_failure(
    exc: BaseException, executed: Path | None = None, cell_timeout_s: float | None = None
) -> str:
    """'in cell N (Error: message)' for a cell error; 'timed out in cell N (source) after T s'
    for a cell that hit the timeout; the exception's first line otherwise."""
    if isinstance(exc, CellTimeoutError):
        cell = _running_cell(executed) if executed is not None else None
        where = f"in cell {cell[0]} ({cell[1]})" if cell else "in a cell"
        after = f" after {cell_timeout_s:g} s" if cell_timeout_s else ""
        return f"timed out {where}{after}"
    cell = getattr(exc, "exec_count", None)
    index = getattr(exc, "cell_index", None)
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    if ename:
        where = f"in cell {index}" if index is not None else "in a cell"
        if cell is not None:
            where += f" (execution count {cell})"
        return f"{where}: {ename}: {str(evalue).splitlines()[0] if evalue else ''}".rstrip(": ")
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"({type(exc).__name__}: {first})"
