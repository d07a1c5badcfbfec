"""The :class:`Comparison` record and the forms it is written in: its tables as frames, one long
CSV-shaped table, JSON, Markdown and the verdicts as HTML."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field

import pandas as pd

from ..units import missing


@dataclass
class Comparison:
    """GPU ``a`` against GPU ``b``: the specs, throughput, fit and cost tables, the verdicts drawn
    from them, and where the efficiency factors of the predictions came from."""

    a: str
    b: str
    specs: pd.DataFrame
    throughput: pd.DataFrame
    fit: pd.DataFrame
    cost: pd.DataFrame
    verdicts: list[dict] = field(default_factory=list)
    efficiency_source: str = ""
    variant_notes: list[str] = field(default_factory=list)  # which variant a plain name picked
    value: pd.DataFrame = field(default_factory=pd.DataFrame)  # work per dollar (tables.value_table)
    serving: pd.DataFrame = field(default_factory=pd.DataFrame)  # LLMs served (llms.serving_frame)

    def frames(self) -> dict[str, pd.DataFrame]:
        return {
            "specs": self.specs,
            "throughput": self.throughput,
            "fit": self.fit,
            "cost": self.cost,
            "serving": self.serving,
            "verdicts": pd.DataFrame(self.verdicts, columns=["topic", "verdict", "reason", "condition"]),
        }

    def long(self) -> pd.DataFrame:
        """Every section as rows of ``section, item, a, b, a_over_b, note`` (the CSV form)."""
        rows = []
        for _, r in self.specs.iterrows():
            rows.append(
                {
                    "section": "specs",
                    "item": f"{r['spec']} ({r['unit']})" if r["unit"] else r["spec"],
                    "a": r["a"],
                    "b": r["b"],
                    "a_over_b": r["a_over_b"],
                    "note": "",
                }
            )
        for _, r in self.throughput.iterrows():
            rows.append(
                {
                    "section": "throughput",
                    "item": f"{r['workload']} {r['precision']} ({r['unit']})",
                    "a": r["throughput_a"],
                    "b": r["throughput_b"],
                    "a_over_b": r["speedup_a_over_b"],
                    "note": f"{r['basis_a']}/{r['basis_b']}; bound {r['bound_a']}/{r['bound_b']}; "
                    f"model error on this family: {r['model_error']}"
                    + (f"; published: {r['published']}" if r["published"] else "")
                    + (f"; {r['note']}" if r["note"] else ""),
                }
            )
        fits = self.fit.groupby(["model", "batch_size"], sort=False) if len(self.fit) else ()
        for (model, batch), g in fits:
            ra, rb = g[g["gpu"] == self.a].iloc[0], g[g["gpu"] == self.b].iloc[0]
            rows.append(
                {
                    "section": "fit",
                    "item": f"{model} batch {batch} fits",
                    "a": ra["fits"],
                    "b": rb["fits"],
                    "a_over_b": None,
                    "note": f"needs {ra['total_gib']:.1f} GiB; largest batch "
                    f"{ra['largest_batch']} vs {rb['largest_batch']}",
                }
            )
        served = self.serving.groupby("model", sort=False) if len(self.serving) else ()
        for model, g in served:
            ra, rb = g[g["gpu"] == self.a].iloc[0], g[g["gpu"] == self.b].iloc[0]
            for column, what in (
                ("serving_tokens_per_s", "output tokens/s served"),
                ("batch1_tokens_per_s", "output tokens/s, one sequence"),
                ("usd_per_million_tokens", "USD per million output tokens served, renting"),
            ):
                x, y = ra.get(column), rb.get(column)
                rows.append(
                    {
                        "section": "serving",
                        "item": f"{model} {ra['weights']} on {int(ra['gpus'])} GPUs: {what}",
                        "a": x,
                        "b": y,
                        "a_over_b": None if missing(x) or missing(y) or not y else x / y,
                        "note": "; ".join(
                            str(n)
                            for n in (ra.get("engine"), ra.get("note"), rb.get("note"))
                            if not missing(n) and n
                        ),
                    }
                )
        for _, r in self.cost.iterrows():
            rows.append(
                {
                    "section": "cost",
                    "item": r["item"],
                    "a": r["a"],
                    "b": r["b"],
                    "a_over_b": r["a_over_b"],
                    "note": r["note"],
                }
            )
        for v in self.verdicts:
            rows.append(
                {
                    "section": "verdict",
                    "item": v["topic"],
                    "a": None,
                    "b": None,
                    "a_over_b": None,
                    "note": f"{v['verdict']} Because {v['reason']} {v['condition']}".strip(),
                }
            )
        return pd.DataFrame(rows, columns=["section", "item", "a", "b", "a_over_b", "note"])

    def to_json(self) -> str:
        doc = {
            "a": self.a,
            "b": self.b,
            "efficiency_source": self.efficiency_source,
            "verdicts": self.verdicts,
        }
        for name, frame in self.frames().items():
            if name != "verdicts":
                doc[name] = json.loads(frame.to_json(orient="records"))
        return json.dumps(doc, indent=1)

    def markdown(self) -> str:
        def fmt(v):
            if missing(v):
                return "—"
            return f"{v:.3g}" if isinstance(v, float) else str(v)

        out = [f"# {self.a} vs {self.b}", "", "## Verdicts", ""]
        for v in self.verdicts:
            out.append(f"- **{v['topic']}**: {v['verdict']} {v['reason']} {v['condition']}".rstrip())
        out += ["", "## Specs", "", f"| spec | {self.a} | {self.b} | a/b |", "|---|---|---|---|"]
        for _, r in self.specs.iterrows():
            unit = f" ({r['unit']})" if r["unit"] else ""
            out.append(f"| {r['spec']}{unit} | {fmt(r['a'])} | {fmt(r['b'])} | {fmt(r['a_over_b'])} |")
        out += [
            "",
            "## Throughput",
            "",
            f"| workload | precision | {self.a} | {self.b} | a/b | bound | model error | published |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for _, r in self.throughput.iterrows():
            out.append(
                f"| {r['workload']} ({r['unit']}) | {r['precision']} | {fmt(r['throughput_a'])} "
                f"({r['basis_a']}) | {fmt(r['throughput_b'])} ({r['basis_b']}) | "
                f"{fmt(r['speedup_a_over_b'])} | {r['bound_a']} / {r['bound_b']} | {r['model_error']} | "
                f"{r['published'] or '—'} |"
            )
        out += ["", f"Efficiency factors: {self.efficiency_source}.", ""]
        return "\n".join(out)

    def verdicts_html(self) -> str:
        items = "".join(
            f"<li><b>{html.escape(v['topic'])}</b>: {html.escape(v['verdict'])} "
            f"<span class='reason'>{html.escape(v['reason'])}</span> "
            f"<i>{html.escape(v['condition'])}</i></li>"
            for v in self.verdicts
        )
        return f"<ul class='gpukit-verdicts'>{items}</ul>"

    def _repr_html_(self) -> str:
        return self.verdicts_html()
