"""The top of the run's index, the answers before the evidence: each pair's bottom line (a table
and the figure of who wins), "which GPU for your money" (a table of choices per job), and the
pages, each with the question it answers.

Everything here is read from what the notebooks left in the run folder (``summary-compare-*``
from the head-to-head pages, ``summary-rank.json`` from the ranking page); a page that did not
run leaves its part out, and the index says which page would fill it.
"""

from __future__ import annotations

import html

from .records import NotebookRun, Run
from .timing import notebook_time

#: Each page of the report by the name after its number: its title, and the question it answers.
SECTIONS = {
    "which_gpu": (
        "Which GPU for your money",
        "every GPU ranked by work per dollar for a CNN, a transformer and an LLM, buying at a few budgets and renting",
    ),
    "specs": ("Specs", "what each GPU is on paper: the sourced catalogue, ranked by any figure"),
    "benchmark": (
        "Benchmark",
        "what the device here delivers (matmul, bandwidth, conv, ResNet-50, a transformer) against its datasheet",
    ),
    "cost_per_tflop": (
        "Cost per TFLOP",
        "what a TFLOP and a unit of work cost to buy, to rent and to power, and when buying beats renting",
    ),
    "memory_fit": ("Memory fit", "which model fits at which batch on which GPU, and where the memory goes"),
    "performance_model": (
        "Performance model",
        "how fast every GPU trains, predicted from what was measured here, and how right the predictions are",
    ),
    "tradeoffs": (
        "Head to head",
        "which of two GPUs to choose: per dollar, speed, memory and price, with verdicts",
    ),
    "fact_check": (
        "Fact-check",
        "what the source articles got wrong, claim by claim, against the datasheets",
    ),
    "llm": ("LLMs", "which LLMs fit where, how fast they generate, and what a million tokens costs"),
    "workshop": (
        "Workshop",
        "GPU trade-offs in exercises for a class, with the answers hidden until revealed",
    ),
}


def _esc(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _key(nb: NotebookRun) -> str:
    """A notebook's section: the name after its number, before any ``--`` of a pair."""
    return nb.name.split("--")[0][3:]


def _table(headers, rows) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="answer"><tr>{head}</tr>{body}</table>'


def _pair_page(pair: dict, run: Run) -> NotebookRun | None:
    """The head-to-head page of ``pair``: the pair notebook whose GPUs, as asked, name the two
    the comparison resolved (``V100`` asked, ``V100 PCIe 16GB`` compared)."""
    for nb in run.notebooks:
        if _key(nb) != "tradeoffs":
            continue
        asked = (str(nb.parameters.get("gpu_a", "")).lower(), str(nb.parameters.get("gpu_b", "")).lower())
        if asked[0] and asked[1] and asked[0] in pair["a"].lower() and asked[1] in pair["b"].lower():
            return nb
    return None


def _link(nb: NotebookRun | None, text: str) -> str:
    return f'<a href="{_esc(nb.html)}">{_esc(text)}</a>' if nb is not None and nb.html else _esc(text)


def bottom_lines_html(run: Run) -> str:
    """Each pair's bottom line: a table (what | A | B | which wins | measured error), the figure
    of who wins each row, and a link to its head-to-head page."""
    pairs = (run.summary or {}).get("pairs", [])
    lines = [p for p in pairs if p.get("bottom_line")]
    if not lines:
        return "<p>No pair was compared in this run (the head-to-head page did not run).</p>"
    order = {nb.name: i for i, nb in enumerate(run.notebooks)}
    pages = {id(p): _pair_page(p, run) for p in lines}
    lines.sort(key=lambda p: order.get(pages[id(p)].name, len(order)) if pages[id(p)] else len(order))
    out = []
    for pair in lines:
        a, b = pair["a"], pair["b"]
        rows = [(r["what"], r["a"], r["b"], r["wins"], r["error"]) for r in pair["bottom_line"]]
        image = (
            f'<img src="{_esc(pair["figure"])}" alt="{_esc(a)} against {_esc(b)}: who wins each row, and by how much">'
            if pair.get("figure")
            else ""
        )
        more = _link(pages[id(pair)], "the head-to-head page")
        out.append(
            f"<h3>{_esc(a)} or {_esc(b)}?</h3>{_table(pair.get('headers') or ('', a, b, '', ''), rows)}"
            f'{image}<p class="muted">Specs, throughput per workload, memory fit, cost and the verdicts: {more}.</p>'
        )
    return "".join(out)


def money_html(run: Run) -> str:
    """ "Which GPU for your money": per job, the best GPU per dollar for each budget, buying and
    renting, with the rankings' page linked."""
    rank = (run.summary or {}).get("rank") or {}
    choices = rank.get("choices") or []
    page = next((nb for nb in run.notebooks if _key(nb) == "which_gpu"), None)
    if not choices:
        return "<p>Nothing was ranked in this run (the ranking page did not run).</p>"
    out = [
        "<p>Every catalogue GPU ranked by work per dollar for each job; a budget leaves out what costs "
        f"more. Every GPU, with the figure of throughput against price: {_link(page, 'the ranking page')}.</p>"
    ]
    for job in choices:
        rows = [[r.get(c, "") for c in job["columns"]] for r in job["rows"]]
        out.append(
            f"<h3>{_esc(job['job'])}, {_esc(job['input'])}</h3>{_table(job['headers'], rows)}"
            f'<p class="muted">Predicted: {_esc(job["accuracy"])}.</p>'
        )
    return "".join(out)


def pages_html(run: Run) -> str:
    """The pages of the run, each with what it answers, its run time and how it went."""
    rows = []
    for nb in run.notebooks:
        key = _key(nb)
        title, answers = SECTIONS.get(key, (key.replace("_", " "), ""))
        if "--" in nb.name:
            title = f"{title}: {nb.parameters.get('gpu_a')} vs {nb.parameters.get('gpu_b')}"
        status = "" if nb.status == "ok" else f" ({nb.status})"
        rows.append(
            f"<tr><td>{_link(nb, title)}{_esc(status)}</td><td>{_esc(answers)}</td>"
            f"<td>{_esc(notebook_time(nb))}</td></tr>"
        )
    head = "<tr><th>page</th><th>what it answers</th><th>run time</th></tr>"
    return f'<table class="answer">{head}{"".join(rows)}</table>'
