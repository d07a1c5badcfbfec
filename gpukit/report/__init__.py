"""Render the report: run the notebooks with papermill, export HTML, write an index.

Layout of one run, rendered into a hidden ``.<run>.partial`` folder and renamed into place
only when every notebook succeeded::

    <out>/<run>/01_specs.ipynb      executed notebook (papermill records its parameters)
    <out>/<run>/01_specs.html       the same as HTML, code hidden behind a toggle
    <out>/<run>/index.html          every notebook with its parameters, run time, environment
    <out>/<run>/run.json            the same facts, machine-readable
    <out>/<run>/kernel.log          what the Jupyter kernels logged (kept out of the console)
    <out>/<run>/bench-results.json  what notebooks measured (the benchmark's results document)

Notebooks run in the caller's working folder, so relative paths in parameters mean what they
mean on the command line; ``$GPUKIT_RUN_DIR`` tells them the run folder.
    <out>/latest -> <run>           switched atomically after a successful run

A failing notebook (a cell that raises, or runs longer than the per-cell timeout) leaves
``<out>/<run>.failed/`` for inspection and ``latest`` untouched; Ctrl-C (or SIGTERM) leaves
``<out>/<run>.interrupted/``. Notebooks are executed by an :class:`Engine` (papermill by default).
"""

from __future__ import annotations

import abc
import difflib
import html
import json
import math
import os
import re
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import yaml

from .. import _atomic
from ..device import QUIET_ENV, detect_devices, environment, stderr_redirected
from ..errors import DataError, ParameterError, ReportError
from ..resources import NOTEBOOKS_DIR, OUTPUTS_DIR
from ..results import RUN_DIR_ENV, load_for_report

KERNEL_NAME = "gpukit"
#: Longest a single cell may run, in seconds, before the run fails (``None`` or 0: no limit).
DEFAULT_CELL_TIMEOUT_S = 600


#: The pairs a head-to-head notebook (one declaring ``gpu_a`` and ``gpu_b``) renders in the
#: default report; ``-p gpu_a``/``-p gpu_b`` render that one pair instead, and ``pairs`` add more.
DEFAULT_PAIRS = (("A40", "V100"), ("RTX A4000", "RTX A5000"))
PAIR_PARAMETERS = ("gpu_a", "gpu_b")
#: What each notebook is, for the index's list of sections (by the name after the number).
SECTIONS = {
    "workshop": "Workshop: GPU trade-offs, step by step",
    "specs": "Specs: the sourced catalogue",
    "benchmark": "Benchmark: what the device here delivers",
    "cost_per_tflop": "Cost per TFLOP and per unit of work",
    "memory_fit": "Memory fit: which model at which batch fits where",
    "performance_model": "Performance model: predictions for every GPU, graded",
    "tradeoffs": "Head to head",
    "fact_check": "Fact-check: what the articles got wrong",
    "llm": "LLMs: which fit, how fast they generate, what a million tokens cost",
}


@dataclass
class NotebookRun:
    """One executed notebook of a run (a head-to-head notebook once per pair)."""

    name: str
    parameters: dict
    title: str = ""
    status: str = "pending"  # ok | failed | interrupted
    seconds: float | None = None
    error: str | None = None
    html: str | None = None
    ipynb: str | None = None


@dataclass
class Run:
    """A whole report run: its id, notebooks, environment and where it was written."""

    run_id: str
    started: str
    notebooks: list[NotebookRun] = field(default_factory=list)
    environment: dict = field(default_factory=dict)
    device: dict = field(default_factory=dict)
    seconds: float | None = None
    path: str | None = None
    summary: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- kernel


def install_kernel(name: str = KERNEL_NAME, user: bool = False) -> str:
    """Register this Python as the Jupyter kernel ``name`` (in this environment unless
    ``user``), with TensorFlow's C++ logging turned down. Returns the kernelspec folder."""
    import sys

    from ipykernel.kernelspec import install

    return install(
        kernel_name=name,
        display_name=f"Python ({name})",
        user=user,
        prefix=None if user else sys.prefix,
        env=dict(QUIET_ENV),
    )


def ensure_kernel(name: str = KERNEL_NAME) -> None:
    """Register the ``gpukit`` kernel for this Python if Jupyter does not know it yet (a plain
    ``pip install`` has not run ``gpukit kernel``)."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        install_kernel(name)


# --------------------------------------------------------------------------- parameters


def discover_notebooks(notebooks_dir: Path | None = None, only: Iterable[str] | None = None) -> list[Path]:
    """The report's notebooks: ``NN_name.ipynb`` in ``notebooks_dir``, in number order.

    ``only`` keeps those whose stem or number prefix is named (``01_specs``, ``01``, ``specs``).
    """
    folder = Path(notebooks_dir) if notebooks_dir else NOTEBOOKS_DIR
    if not folder.is_dir():
        raise ReportError(f"notebook folder {folder} does not exist; pass --notebooks DIR")
    found = sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb") if p.is_file())
    if not found:
        raise ReportError(f"no notebooks named NN_name.ipynb in {folder}")
    if only:
        wanted = list(only)
        keep = []
        for w in wanted:
            hits = [p for p in found if w in (p.stem, p.name, p.stem[:2], p.stem[3:])]
            if not hits:
                names = ", ".join(p.stem for p in found)
                raise ReportError(f"no notebook {w!r} in {folder}; choose from {names}")
            keep.extend(h for h in hits if h not in keep)
        found = sorted(keep)
    return found


def declared_parameters(notebook: Path) -> dict[str, dict]:
    """The parameters a notebook declares: name -> {default, type, help} (from its parameters cell)."""
    import papermill

    try:
        raw = papermill.inspect_notebook(str(notebook))
    except Exception as exc:  # papermill raises several kinds for unreadable notebooks
        raise ReportError(f"cannot read the parameters of {notebook.name}: {exc}") from None
    out = {}
    for name, info in raw.items():
        try:
            default = yaml.safe_load(info["default"]) if info.get("default") is not None else None
        except yaml.YAMLError:
            default = info.get("default")
        out[name] = {
            "default": default,
            "type": info.get("inferred_type_name", "None"),
            "help": info.get("help", ""),
        }
    return out


def _type_name(value) -> str:
    return type(value).__name__


def _coerce(name: str, value, expected, notebook: str):
    """Check ``value`` against the notebook default's type; ints pass where floats are expected."""
    if expected is None or value is None:
        return value
    want = type(expected)
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, want) or (isinstance(value, bool) and want is not bool):
        raise ParameterError(
            f"parameter {name} of {notebook} expects {want.__name__} (default {expected!r}), "
            f"got {_type_name(value)} {value!r}"
        )
    return value


def parse_cli_value(text: str):
    """A ``-p NAME VALUE`` value: YAML scalars and lists (``3``, ``0.5``, ``true``, ``[A40, V100]``)."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def load_params_file(path: str | os.PathLike) -> dict:
    """A YAML or JSON mapping of parameters; a notebook's stem as key scopes a nested mapping to it."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ParameterError(f"parameters file {p} not found") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0]
        raise ParameterError(f"parameters file {p} is not valid YAML/JSON ({first})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ParameterError(
            f"parameters file {p} must hold a mapping of name: value, not a {_type_name(data)}"
        )
    return data


def plan_parameters(
    notebooks: list[Path], overrides: Mapping | None = None, raw_cli: Mapping[str, str] | None = None
) -> dict[str, dict]:
    """Parameters for each notebook: every given name goes to the notebooks that declare it.

    ``overrides`` hold typed values (from a parameters file: a notebook's stem as key scopes
    a nested mapping to that notebook); ``raw_cli`` hold ``-p`` strings, parsed as YAML
    unless the notebook expects a string. An unknown name or a wrong type is a
    :class:`ParameterError`.
    """
    declared = {nb.stem: declared_parameters(nb) for nb in notebooks}
    plan: dict[str, dict] = {nb.stem: {} for nb in notebooks}
    everything = sorted({n for d in declared.values() for n in d})

    def unknown(name: str) -> ParameterError:
        close = difflib.get_close_matches(name, everything, n=2)
        hint = f"did you mean {', '.join(close)}?" if close else f"known: {', '.join(everything)}"
        return ParameterError(f"no notebook takes a parameter {name!r}; {hint}")

    def assign(name: str, value, stems: list[str], from_cli: bool) -> None:
        takers = [s for s in stems if name in declared[s]]
        if not takers:
            raise unknown(name)
        for s in takers:
            expected = declared[s][name]["default"]
            v = value
            if from_cli:
                v = value if isinstance(expected, str) else parse_cli_value(value)
            plan[s][name] = _coerce(name, v, expected, f"{s}.ipynb")

    for key, value in (overrides or {}).items():
        if key in declared and isinstance(value, dict):
            for name, v in value.items():
                assign(name, v, [key], from_cli=False)
        else:
            assign(key, value, list(declared), from_cli=False)
    for name, text in (raw_cli or {}).items():
        assign(name, text, list(declared), from_cli=True)
    return plan


# --------------------------------------------------------------------------- HTML

_CSS = """
<style>
.gpukit-bar{font:14px/1.45 system-ui,sans-serif;margin:0 auto 1em;max-width:1100px;padding:.8em 1em;
  background:#f5f7fa;border:1px solid #d8dee6;border-radius:6px}
.gpukit-bar h1{font-size:1.2em;margin:0 0 .3em}
.gpukit-bar table{border-collapse:collapse;margin:.3em 0}
.gpukit-bar td,.gpukit-bar th{padding:.1em .8em .1em 0;text-align:left;vertical-align:top}
.gpukit-bar code{font-size:.95em}
body:not(:has(#gpukit-show-code:checked)) .jp-CodeCell .jp-Cell-inputWrapper{display:none}
body:not(:has(#gpukit-show-code:checked)) .jp-CodeCell .jp-Collapser{display:none}
</style>
"""


def _esc(value) -> str:
    return html.escape(str(value), quote=True)


def _params_table(params: Mapping) -> str:
    if not params:
        return "<p>Run with the notebook's default parameters.</p>"
    rows = "".join(
        f"<tr><th><code>{_esc(k)}</code></th><td><code>{_esc(json.dumps(v, default=str))}</code></td></tr>"
        for k, v in params.items()
    )
    return f"<table>{rows}</table>"


#: Script tags that load code from the network (nbconvert's template adds require.js and MathJax
#: from cdnjs); reports need neither, and must open without a network and without errors.
_REMOTE_SCRIPT = re.compile(r"<script\b[^>]*\bsrc=[\"']https?://[^\"']*[\"'][^>]*>\s*</script>", re.I)


def notebook_html(nb_node, title: str, parameters: Mapping, run_id: str) -> str:
    """The executed notebook as one HTML page: outputs shown, code hidden behind a toggle,
    a header naming the run and the parameters it was rendered with."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nb_node, resources={"metadata": {"name": title}})
    bar = (
        f'<div class="gpukit-bar"><h1>{_esc(title)}</h1>'
        f'<p>gpukit report run <code>{_esc(run_id)}</code> · <a href="index.html">all notebooks of this run</a>'
        f' · <a href="{_esc(title)}.ipynb">executed notebook</a> · '
        f'<label><input type="checkbox" id="gpukit-show-code"> show code</label></p>'
        f"<p>Parameters:</p>{_params_table(parameters)}</div>"
    )
    body = _REMOTE_SCRIPT.sub("", body)  # require.js and MathJax from a CDN: reports work offline
    body = body.replace("</head>", _CSS + "</head>", 1)
    head_end = body.find("<body")
    insert_at = body.find(">", head_end) + 1
    return body[:insert_at] + bar + body[insert_at:]


def index_html(run: Run) -> str:
    """The run's index page: every notebook with status, time and parameters; the environment."""
    rows = []
    for nb in run.notebooks:
        link = f'<a href="{_esc(nb.html)}">{_esc(nb.name)}</a>' if nb.html else _esc(nb.name)
        ipynb = f' (<a href="{_esc(nb.ipynb)}">.ipynb</a>)' if nb.ipynb else ""
        secs = f"{nb.seconds:.1f} s" if nb.seconds is not None else "–"
        status = _esc(nb.status) + (f": {_esc(nb.error)}" if nb.error else "")
        rows.append(
            f"<tr><td>{link}{ipynb}</td><td>{status}</td><td>{secs}</td>"
            f"<td>{_params_table(nb.parameters)}</td></tr>"
        )
    env = run.environment
    pk = "".join(
        f"<tr><th>{_esc(k)}</th><td>{_esc(v or 'not installed')}</td></tr>"
        for k, v in env.get("packages", {}).items()
    )
    dev = run.device
    device_rows = [("attached device", f"{dev.get('kind', '?').upper()}: {dev.get('name', '?')}")]
    if dev.get("kind") == "cpu":
        device_rows.append(("note", "no GPU is attached: TensorFlow runs on the CPU here"))
    for k in ("cuda_build", "cudnn_build"):
        if dev.get(k):
            device_rows.append((f"TensorFlow {k.replace('_', ' ')}", dev[k]))
    for smi in dev.get("nvidia_smi", []):
        device_rows.append(("nvidia-smi", ", ".join(f"{k}={v}" for k, v in smi.items())))
    if dev.get("probe_error"):
        device_rows.append(("probe", dev["probe_error"]))
    for k in ("host", "os", "python", "cpu", "cpu_count"):
        device_rows.append((k, env.get(k)))
    dev_html = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in device_rows)
    total = f"{run.seconds:.1f} s" if run.seconds is not None else "–"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>gpukit report {_esc(run.run_id)}</title>
<style>
body{{font:15px/1.5 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#1d2329}}
table{{border-collapse:collapse;margin:.5em 0 1.5em}} td,th{{border-bottom:1px solid #e3e7ec;padding:.35em .8em .35em 0;
text-align:left;vertical-align:top}} table table td,table table th{{border:0;padding:0 .6em 0 0}}
code{{font-size:.92em}} h1{{margin-bottom:.2em}} .muted{{color:#5b6570}}
</style></head><body>
<h1>gpukit report</h1>
<p class="muted">Run <code>{_esc(run.run_id)}</code>, started {_esc(run.started)} UTC,
{len(run.notebooks)} notebook(s) in {total}.</p>
<h2>Summary</h2>
{_summary_html(run)}
<h2>Sections</h2>
{_sections_html(run)}
<h2>Notebooks</h2>
<table><tr><th>notebook</th><th>status</th><th>run time</th><th>parameters</th></tr>{"".join(rows)}</table>
<h2>Environment</h2>
<table>{dev_html}</table>
<h3>Package versions</h3>
<table>{pk}</table>
</body></html>
"""


# --------------------------------------------------------------------------- running


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


def plan_jobs(
    notebooks: list[Path], plan: Mapping[str, dict], pairs: Iterable[tuple[str, str]] | None = None
) -> list[tuple[Path, str, dict, str]]:
    """(notebook, output stem, parameters, title) for each rendering of the run.

    A notebook that declares ``gpu_a`` and ``gpu_b`` renders once per pair: the
    :data:`DEFAULT_PAIRS`, or the pair set with ``gpu_a``/``gpu_b``, then any ``pairs`` added.
    """
    jobs = []
    extra = [tuple(p) for p in (pairs or [])]
    for nb in notebooks:
        params = dict(plan[nb.stem])
        declared = declared_parameters(nb)
        if not all(p in declared for p in PAIR_PARAMETERS):
            jobs.append((nb, nb.stem, params, nb.stem))
            continue
        if any(p in params for p in PAIR_PARAMETERS):
            chosen = [
                (
                    params.get("gpu_a", declared["gpu_a"]["default"]),
                    params.get("gpu_b", declared["gpu_b"]["default"]),
                )
            ]
        else:
            chosen = list(DEFAULT_PAIRS)
        for a, b in chosen + [p for p in extra if p not in chosen]:
            stem = f"{nb.stem}--{_slug(a)}-vs-{_slug(b)}"
            jobs.append((nb, stem, {**params, "gpu_a": a, "gpu_b": b}, f"{nb.stem}: {a} vs {b}"))
    return jobs


def run_summary(folder: Path) -> dict:
    """What the notebooks left for the index: the benchmark's results and each pair's verdicts."""
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
    llm = folder / "summary-llm.json"
    if llm.exists():
        try:
            out["llm"] = json.loads(llm.read_text())
        except (OSError, ValueError):
            pass
    return out


def _summary_html(run: Run) -> str:
    s = run.summary or {}
    dev = run.device
    parts = [f"<p><b>Device here:</b> {_esc(dev.get('kind', '?').upper())} {_esc(dev.get('name', '?'))}."]
    m = s.get("measured")
    if m and "error" not in m:
        parts.append(
            f" <b>Measured here:</b> {m['ok']} of {m['total']} benchmark configurations "
            f"({_esc(', '.join(m['workloads']))}) on {_esc(m['device'])}."
        )
    if dev.get("kind") != "gpu":
        parts.append(
            " <b>Predicted:</b> every GPU figure (no GPU is attached; the performance model "
            "predicts each catalogue GPU, graded against published measurements)."
        )
    else:
        parts.append(" <b>Predicted:</b> every catalogue GPU other than the attached one.")
    parts.append("</p>")
    for pair in s.get("pairs", []):
        verdicts = pair.get("verdicts", [])
        # What it costs leads, then speed, memory and scaling, as the head-to-head page orders them.
        cost_first = sorted(verdicts, key=lambda v: v.get("kind") != "cost")
        items = "".join(f"<li><b>{_esc(v['topic'])}</b>: {_esc(v['verdict'])}</li>" for v in cost_first)
        parts.append(f"<h3>{_esc(pair['a'])} vs {_esc(pair['b'])}</h3><ul>{items}</ul>")
    llm = s.get("llm")
    if llm and llm.get("verdicts"):
        items = "".join(f"<li>{_esc(v)}</li>" for v in llm["verdicts"])
        parts.append(
            f"<h3>LLMs on these pairs ({_esc(llm.get('weights', ''))}, {_esc(llm.get('context', ''))} "
            f"tokens of context)</h3><ul>{items}</ul>"
        )
    return "".join(parts)


def _sections_html(run: Run) -> str:
    items = []
    for nb in run.notebooks:
        key = nb.name.split("--")[0][3:]
        label = SECTIONS.get(key, key.replace("_", " "))
        if "--" in nb.name:
            label = f"{label}: {nb.parameters.get('gpu_a')} vs {nb.parameters.get('gpu_b')}"
        target = f'<a href="{_esc(nb.html)}">{_esc(label)}</a>' if nb.html else _esc(label)
        items.append(f"<li>{target}</li>")
    return f"<ul>{''.join(items)}</ul>"


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


class Engine(abc.ABC):
    """What executes one notebook of a run: the seam papermill's own ``engines.py`` has.

    :func:`render_report` calls :meth:`execute` once per rendering; :class:`PapermillEngine`
    is the default, and tests pass an engine that starts no kernel.
    """

    @abc.abstractmethod
    def execute(
        self,
        notebook: Path,
        output: Path,
        parameters: dict,
        kernel_name: str,
        cwd: Path,
        cell_timeout_s: float | None,
    ) -> None:
        """Execute ``notebook`` with ``parameters`` injected, writing the executed notebook to ``output``.

        The kernel ``kernel_name`` runs in folder ``cwd``; a cell running longer than
        ``cell_timeout_s`` seconds (``None``: no limit) raises
        :class:`nbclient.exceptions.CellTimeoutError`. On any failure ``output`` must hold what
        ran so far (papermill-style cell metadata), and the exception is raised.
        """


class PapermillEngine(Engine):
    """Runs notebooks with papermill; the kernel's own log lines go to ``kernel.log`` beside the output."""

    def execute(
        self,
        notebook: Path,
        output: Path,
        parameters: dict,
        kernel_name: str,
        cwd: Path,
        cell_timeout_s: float | None,
    ) -> None:
        """Execute one notebook with papermill (see :meth:`Engine.execute`).

        nbclient takes whole seconds, so a fractional ``cell_timeout_s`` is rounded up.
        """
        import papermill

        if kernel_name == KERNEL_NAME:
            ensure_kernel(kernel_name)
        timeout = math.ceil(cell_timeout_s) if cell_timeout_s else None
        with stderr_redirected(Path(output).parent / "kernel.log"):
            papermill.execute_notebook(
                str(notebook),
                str(output),
                parameters=parameters,
                kernel_name=kernel_name,
                progress_bar=False,
                log_output=False,
                cwd=str(cwd),
                execution_timeout=timeout,
            )


def _cell_limit(cell_timeout_s: float | None) -> float | None:
    """A per-cell timeout in seconds, checked: ``None`` for no limit (``None``, 0 or infinity)."""
    if cell_timeout_s is None:
        return None
    try:
        value = float(cell_timeout_s)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(cell_timeout_s, bool) or not value >= 0:
        raise ParameterError(
            f"cell timeout {cell_timeout_s!r} must be a number of seconds, at least 0 (0 means no limit)"
        )
    return None if value == 0 or math.isinf(value) else value


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
    progress: Callable[[str], None] | None = print,
    pairs: Iterable[tuple[str, str]] | None = None,
    engine: Engine | None = None,
    cell_timeout_s: float | None = DEFAULT_CELL_TIMEOUT_S,
) -> Run:
    """Render every report notebook into a new run folder under ``out_dir`` (default ``outputs/``).

    ``parameters`` (typed) and ``params_file`` (YAML/JSON) and ``cli_parameters`` (``-p``
    strings) go to each notebook that declares the name; later sources win. On success the
    run folder is renamed into place and ``out_dir/latest`` points at it. A notebook that
    fails, or a cell that runs longer than ``cell_timeout_s`` seconds (``None`` or 0: no
    limit), raises :class:`ReportError` naming the notebook and the cell; its partial output
    stays in ``<run>.failed`` and ``latest`` is not touched. Ctrl-C (or SIGTERM) keeps the
    partial output in ``<run>.interrupted`` and re-raises :class:`KeyboardInterrupt`, whose
    message says where. ``engine`` executes each notebook (default: :class:`PapermillEngine`).
    ``$GPUKIT_RUN_DIR`` is set for the notebooks and restored afterwards, whatever happens.
    """
    say = progress or (lambda _msg: None)
    limit = _cell_limit(cell_timeout_s)
    engine = engine or PapermillEngine()
    out_root = Path(out_dir) if out_dir else OUTPUTS_DIR
    notebooks = discover_notebooks(Path(notebooks_dir) if notebooks_dir else None, only)
    overrides = dict(load_params_file(params_file)) if params_file else {}
    overrides.update(parameters or {})
    plan = plan_parameters(notebooks, overrides, cli_parameters)
    jobs = plan_jobs(notebooks, plan, pairs)

    out_root.mkdir(parents=True, exist_ok=True)
    run = Run(run_id=_new_run_id(), started=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"))
    partial = out_root / f".{run.run_id}.partial"
    latest = out_root / "latest"
    for key, value in QUIET_ENV.items():  # the kernel inherits these: no TensorFlow log noise
        os.environ.setdefault(key, value)
    partial.mkdir()
    previous_run_dir = os.environ.get(RUN_DIR_ENV)
    undo_sigterm = _sigterm_as_interrupt()
    t_run = time.perf_counter()
    try:
        os.environ[RUN_DIR_ENV] = str(partial.resolve())  # notebooks save their results here
        say(f"gpukit report: run {run.run_id}, {len(jobs)} notebook(s) -> {out_root / run.run_id}")
        run.environment = environment()
        run.device = detect_devices()
        t_run = time.perf_counter()
        for i, (nb_path, stem, params, title) in enumerate(jobs, 1):
            entry = NotebookRun(name=stem, parameters=params, title=title)
            run.notebooks.append(entry)
            label = (
                nb_path.name
                if stem == nb_path.stem
                else f"{nb_path.name} ({params['gpu_a']} vs {params['gpu_b']})"
            )
            say(f"  [{i}/{len(jobs)}] {label} ...")
            executed = partial / f"{stem}.ipynb"
            t0 = time.perf_counter()
            try:
                engine.execute(nb_path, executed, params, kernel_name, Path.cwd(), limit)
            except KeyboardInterrupt:
                entry.seconds = time.perf_counter() - t0
                entry.status = "interrupted"
                raise
            except Exception as exc:  # papermill/nbclient raise many kinds: all mean "this notebook failed"
                entry.seconds = time.perf_counter() - t0
                entry.status = "failed"
                entry.error = _describe_failure(exc, executed, limit)
                failed = _set_aside(run, partial, t_run, "failed")
                what = entry.error if entry.error.startswith("timed out") else f"failed {entry.error}"
                raise ReportError(
                    f"{nb_path.name}{'' if stem == nb_path.stem else f' ({title})'} {what}; "
                    f"partial output kept in {failed}; {latest} unchanged"
                ) from None
            entry.seconds = time.perf_counter() - t0
            entry.status = "ok"
            nb_node = nbformat.read(executed, as_version=4)
            noisy = _stderr_cells(nb_node)
            if noisy:
                say(f"      note: cell(s) {', '.join(map(str, noisy))} of {title} wrote to stderr")
            _atomic.write_text(partial / f"{stem}.html", notebook_html(nb_node, stem, params, run.run_id))
            entry.html, entry.ipynb = f"{stem}.html", f"{stem}.ipynb"
            say(f"      done in {entry.seconds:.1f} s")
        _finish_run(run, partial, t_run)
        final = out_root / run.run_id
        os.replace(partial, final)
        _switch_latest(out_root, final)
    except KeyboardInterrupt:
        if partial.is_dir():
            kept = _set_aside(run, partial, t_run, "interrupted")
        else:  # interrupted while the folder was being renamed: say where it went
            kept = next(
                (p for p in (out_root / run.run_id, out_root / f"{run.run_id}.failed") if p.exists()), partial
            )
        raise KeyboardInterrupt(f"partial output kept in {kept}; {latest} unchanged") from None
    finally:
        if previous_run_dir is None:
            os.environ.pop(RUN_DIR_ENV, None)
        else:
            os.environ[RUN_DIR_ENV] = previous_run_dir
        undo_sigterm()
    run.path = str(final)
    say(f"Report: {latest / 'index.html'}  (run {run.run_id}, {run.seconds:.1f} s)")
    return run


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
    from nbclient.exceptions import CellTimeoutError

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
