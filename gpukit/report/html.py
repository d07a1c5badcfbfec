"""The report's HTML: each executed notebook as a page with its code hidden behind a toggle, and
the run's index: the answers first (:mod:`.front`: each pair's bottom line, which GPU for your
money, the pages), then the run's times, every notebook with its parameters, and the environment."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping

from nbconvert import HTMLExporter

from .front import bottom_lines_html, money_html, pages_html
from .records import Run
from .timing import timing_html

#: The page's look: the run's bar; code hidden unless asked for; a table of an output no wider
#: than the page, scrolling sideways inside its own box, its scrollbar drawn where a system would
#: hide it until used (so a reader sees there are columns beyond the edge).
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
.jp-OutputArea-output>table{display:block;max-width:100%;overflow:auto}
.jp-OutputArea-output>table::-webkit-scrollbar{width:10px;height:10px}
.jp-OutputArea-output>table::-webkit-scrollbar-track{background:#eef1f4}
.jp-OutputArea-output>table::-webkit-scrollbar-thumb{background:#a9b3be;border-radius:5px}
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


#: The environment table's row headers, as a reader says them.
ENVIRONMENT_LABELS = {
    "cuda_build": "CUDA TensorFlow was built with",
    "cudnn_build": "cuDNN TensorFlow was built with",
    "host": "Host name",
    "os": "Operating system",
    "python": "Python",
    "cpu": "CPU",
    "cpu_count": "Logical CPU cores",
}


def index_html(run: Run) -> str:
    """The run's index page: the answers first (each pair's bottom line, which GPU for your money,
    the pages), then the run's times, every notebook with its status and parameters, the environment."""
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
        f"<tr><th><code>{_esc(k)}</code></th><td>{_esc(v or 'not installed')}</td></tr>"
        for k, v in env.get("packages", {}).items()
    )
    dev = run.device
    device_rows = [("attached device", f"{dev.get('kind', '?').upper()}: {dev.get('name', '?')}")]
    if dev.get("kind") == "cpu":
        device_rows.append(("note", "no GPU is attached: TensorFlow runs on the CPU here"))
    for k in ("cuda_build", "cudnn_build"):
        if dev.get(k):
            device_rows.append((ENVIRONMENT_LABELS[k], dev[k]))
    for smi in dev.get("nvidia_smi", []):
        device_rows.append(("nvidia-smi", ", ".join(f"{k}={v}" for k, v in smi.items())))
    if dev.get("probe_error"):
        device_rows.append(("probe", dev["probe_error"]))
    for k in ("host", "os", "python", "cpu", "cpu_count"):
        device_rows.append((ENVIRONMENT_LABELS[k], env.get(k)))
    dev_html = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in device_rows)
    total = f"{run.seconds:.1f} s" if run.seconds is not None else "–"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>gpukit report {_esc(run.run_id)}</title>
<style>
body{{font:15px/1.5 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#1d2329}}
table{{border-collapse:collapse;margin:.5em 0 1.5em}} td,th{{border-bottom:1px solid #e3e7ec;padding:.35em .8em .35em 0;
text-align:left;vertical-align:top}} table table td,table table th{{border:0;padding:0 .6em 0 0}}
table.answer{{margin-bottom:.6em}} table.answer th{{font-weight:600;border-bottom:2px solid #c9d1da}}
img{{max-width:100%;height:auto;display:block;margin:.4em 0}}
code{{font-size:.92em}} h1{{margin-bottom:.2em}} h3{{margin:1.6em 0 .3em}} .muted{{color:#5b6570}}
</style></head><body>
<h1>gpukit report</h1>
<p class="muted">Run <code>{_esc(run.run_id)}</code>, started {_esc(run.started)} UTC,
{len(run.notebooks)} notebook(s) in {total}. {_device_line(run)}</p>
<h2>The bottom line</h2>
{bottom_lines_html(run)}
<h2>Which GPU for your money</h2>
{money_html(run)}
<h2>The pages</h2>
{pages_html(run)}
<h2>Run time</h2>
{timing_html(run)}
<h2>Notebooks and their parameters</h2>
<table><tr><th>notebook</th><th>status</th><th>run time</th><th>parameters</th></tr>{"".join(rows)}</table>
<h2>Environment</h2>
<table>{dev_html}</table>
<h3>Package versions</h3>
<table>{pk}</table>
</body></html>
"""


def _device_line(run: Run) -> str:
    """What was measured here and what was predicted, in a sentence or two."""
    s = run.summary or {}
    dev = run.device
    parts = [f"<b>Device here:</b> {_esc(dev.get('kind', '?').upper())} {_esc(dev.get('name', '?'))}."]
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
    return "".join(parts)
