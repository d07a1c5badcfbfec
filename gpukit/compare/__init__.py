"""Head-to-head comparison of two GPUs, with verdicts computed from the numbers.

:func:`compare` gathers, for GPUs ``a`` and ``b``:

* ``specs`` — each figure of both and the ratio a/b (compute per precision, memory, bandwidth,
  power, NVLink, form factor);
* ``throughput`` — per workload and precision, the throughput of each (measured where a
  results document measured that very configuration on one of them, predicted by
  :mod:`gpukit.perfmodel` otherwise; ``basis_a``/``basis_b`` say which), the speedup, and what
  bounds the step on each;
* ``fit`` — per model and batch size, whether it fits on each and the largest batch;
* ``cost`` — dollars per peak TFLOP, TCO, cloud price, dollars per million items of the first
  workload, throughput per watt and per dollar (only where a price exists);
* ``verdicts`` — sentences generated from those tables, each with its reason and the condition
  under which it turns (never hand-written conclusions).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from .. import cost, memory, perfmodel, prices, specs
from .. import precision as prec
from ..errors import ParameterError

#: Spec rows of the comparison: (column, label, unit).
SPEC_ROWS = (
    ("architecture", "architecture", ""),
    ("form_factor", "form factor", ""),
    ("fp32_tflops", "FP32 (CUDA cores)", "TFLOPS"),
    ("tf32_tensor_tflops", "TF32 tensor", "TFLOPS"),
    ("fp16_tensor_tflops", "FP16 tensor, dense", "TFLOPS"),
    ("bf16_tensor_tflops", "BF16 tensor, dense", "TFLOPS"),
    ("int8_tensor_tops", "INT8 tensor, dense", "TOPS"),
    ("memory_gb", "memory", "GB"),
    ("memory_type", "memory type", ""),
    ("memory_bandwidth_gbs", "memory bandwidth", "GB/s"),
    ("l2_cache_mib", "L2 cache", "MiB"),
    ("tdp_w", "board power", "W"),
    ("nvlink_gbs", "NVLink", "GB/s"),
    ("pcie_gen", "PCIe generation", ""),
)
#: ResNet-50 and BERT-base fine-tuned on SQuAD (384 tokens): the CNN and the transformer that
#: publications measure across GPUs, so their speedups are graded (docs/perfmodel-accuracy.md).
DEFAULT_WORKLOADS = ("resnet50", "bert-base-squad")
DEFAULT_PRECISIONS = ("float32", "fp16")
DEFAULT_MODELS = ("ResNet50", "bert-base", "bert-large", "gpt2-medium", "keras-bert")
DEFAULT_FIT_BATCHES = (16, 64, 256)
#: Below this speedup two GPUs count as equally fast.
SAME_SPEED = 1.10


@dataclass
class Comparison:
    a: str
    b: str
    specs: pd.DataFrame
    throughput: pd.DataFrame
    fit: pd.DataFrame
    cost: pd.DataFrame
    verdicts: list[dict] = field(default_factory=list)
    efficiency_source: str = ""

    def frames(self) -> dict[str, pd.DataFrame]:
        return {
            "specs": self.specs,
            "throughput": self.throughput,
            "fit": self.fit,
            "cost": self.cost,
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
        for (model, batch), g in self.fit.groupby(["model", "batch_size"], sort=False):
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
            if v is None or (isinstance(v, float) and v != v):
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


def _both_notes(a: str, note_a: str, b: str, note_b: str) -> str:
    """Two cards' notes on one row, each named; empty where neither has one."""
    return "; ".join(f"{g}: {n}" for g, n in ((a, note_a), (b, note_b)) if n)


def _dated(row: pd.Series, what: str, note: str, label: str) -> str:
    """``label``, when a cost-table row's ``what`` price (``price`` or ``cloud``) was read and
    whether it is stale; the row's ``note`` where it has no such price (it says why)."""
    if _num(row["price_usd" if what == "price" else "cloud_usd_per_hour"]) is None:
        return row[note]
    return f"{label}, {row[f'{what}_date']}" + (", stale" if row[f"{what}_stale"] else "")


def _cloud_note(row: pd.Series) -> str:
    """Whose cloud price a row is and when it was read: rates differ far more between kinds of
    provider (a marketplace, a hyperscaler) than between cards."""
    offer = " ".join(str(x) for x in (row["cloud_provider"], row["cloud_offering"]) if x)
    return _dated(row, "cloud", "cloud_note", offer)


def _num(v) -> float | None:
    if v is None or isinstance(v, str):
        return None
    f = float(v)
    return None if f != f else f


def _ratio(x, y) -> float | None:
    x, y = _num(x), _num(y)
    if x is None or y is None or y == 0:
        return None
    return x / y


def _times(r: float) -> str:
    return f"{r:.2f}×"


def spec_table(ra: pd.Series, rb: pd.Series) -> pd.DataFrame:
    rows = []
    for col, label, unit in SPEC_ROWS:
        va, vb = ra[col], rb[col]
        va = None if isinstance(va, float) and va != va else va
        vb = None if isinstance(vb, float) and vb != vb else vb
        rows.append(
            {
                "spec": label,
                "unit": unit,
                "a": va,
                "b": vb,
                "a_over_b": _ratio(va, vb) if not isinstance(va, str) else None,
            }
        )
    return pd.DataFrame(rows)


def throughput_table(
    a: str,
    b: str,
    workloads: Sequence[str],
    precisions: Sequence[str],
    batch_size: int | None,
    results: list | None,
    cat: pd.DataFrame,
    asked: tuple[str, str] | None = None,
) -> tuple[pd.DataFrame, str]:
    """Throughput of catalogue GPUs ``a`` and ``b`` per workload and precision (measured where a
    results document has it, else predicted), with the model's measured error for the workload's
    family and the published speedups of the names ``asked`` (any of their variants)."""
    rows = []
    source = ""
    for w in workloads:
        for p in precisions:
            t = perfmodel.predict_table(w, p, batch_size, "train", [a, b], results=results, catalogue=cat)
            source = t["efficiency_source"].iloc[0]
            ra, rb = t[t["gpu"] == a].iloc[0], t[t["gpu"] == b].iloc[0]

            def pick(r):
                m = r["measured_throughput"]
                if m is not None and m == m:
                    return float(m), "measured"
                return _num(r["throughput"]), "predicted"

            ta, basis_a = pick(ra)
            tb, basis_b = pick(rb)
            note = "; ".join(n for n in (ra["note"], rb["note"]) if n and not n.startswith("measured"))
            published = published_speedups(*(asked or (a, b)), w, ra["precision"], cat)
            rows.append(
                {
                    "workload": w,
                    "precision": ra["precision"],
                    "batch_size": int(ra["batch_size"]),
                    "unit": ra["throughput_unit"],
                    "throughput_a": ta,
                    "throughput_b": tb,
                    "basis_a": basis_a,
                    "basis_b": basis_b,
                    "speedup_a_over_b": _ratio(ta, tb),
                    "bound_a": ra["bound"] if ta is not None else "",
                    "bound_b": rb["bound"] if tb is not None else "",
                    "math_a": ra["math"],
                    "math_b": rb["math"],
                    "model_error": perfmodel.accuracy_text(perfmodel.family(w)),
                    "published": _published_text(published),
                    "published_rows": published,
                    "note": note,
                }
            )
    return pd.DataFrame(rows), source


def published_speedups(a: str, b: str, workload: str, precision: str, cat: pd.DataFrame) -> list[dict]:
    """The published speedups of ``a`` over ``b`` on ``workload`` at ``precision`` (any memory or
    form-factor variant of either, each source on its own), with the model's prediction for the
    very GPUs and batch sizes measured; empty when no source measured both."""
    from ..perfmodel.grading import default_validation

    table = default_validation(perfmodel.family(workload))
    if table.empty:
        return []
    fa, fb = set(specs.resolve(a, cat).matches), set(specs.resolve(b, cat).matches)
    rows = table[(table["workload"] == workload) & (table["precision"] == precision)]
    out = []
    for _, r in rows.iterrows():
        if r["gpu_a"] in fa and r["gpu_b"] in fb:
            out.append(
                {
                    "source": r["source"],
                    "a": r["gpu_a"],
                    "b": r["gpu_b"],
                    "published": r["published_speedup"],
                    "predicted": r["predicted_speedup"],
                }
            )
        elif r["gpu_a"] in fb and r["gpu_b"] in fa:
            out.append(
                {
                    "source": r["source"],
                    "a": r["gpu_b"],
                    "b": r["gpu_a"],
                    "published": 1 / r["published_speedup"],
                    "predicted": 1 / r["predicted_speedup"],
                }
            )
    return out


def _oriented(found: dict, a_first: bool | None = None) -> tuple[str, str, float, float]:
    """One source's measurement of a pair as (first card, second card, published ratio, predicted
    ratio): ``a`` first when ``a_first``, the card the source measured faster first when it is None."""
    if a_first is None:
        a_first = found["published"] >= 1
    if a_first:
        return found["a"], found["b"], found["published"], found["predicted"]
    return found["b"], found["a"], 1 / found["published"], 1 / found["predicted"]


def _published_text(found: list[dict], a_is_faster: bool | None = True, with_model: bool = True) -> str:
    """ "lambda-2021 measured RTX A5000 at 1.51× RTX A4000; the model gives 1.66× for its batch sizes",
    each source's measurement of the pair: the faster card first when ``a_is_faster`` (as the
    verdict states it), the card the source measured faster first when it is None; the model's
    ratio for the source's batch sizes with ``with_model``."""
    parts = []
    for f in found:
        fast, slow, pub, pred = _oriented(f, a_is_faster)
        text = f"{f['source']} measured {fast} at {_times(pub)} {slow}"
        parts.append(text + (f"; the model gives {_times(pred)} for its batch sizes" if with_model else ""))
    return "; ".join(parts)


def _model_at_published(found: list[dict]) -> str:
    """ "At lambda-2021's batch sizes the model gives A40 0.97× V100 SXM2 32GB, -21% from the
    published ratio": the model's ratio where each source measured the pair, the card the source
    measured faster first, and how far it is from that measurement (this pair's own error)."""
    parts = []
    for f in found:
        fast, slow, pub, pred = _oriented(f)
        parts.append(
            f"{f['source']}'s batch sizes the model gives {fast} {_times(pred)} {slow}, "
            f"{pred / pub - 1:+.0%} from the published ratio"
        )
    return "At " + "; at ".join(parts)


#: The fit table's columns that say under what a memory verdict holds.
FIT_CONDITIONS = ("precision", "optimizer", "input")


def fit_table(
    a: str,
    b: str,
    models: Sequence[str],
    batches: Sequence[int],
    precision: str,
    optimizer: str,
    cat: pd.DataFrame,
) -> pd.DataFrame:
    frames = []
    for m in models:
        report = memory.fit_report([m], batches, [a, b], precision, optimizer, "train", catalogue=cat)
        # what the verdicts say they were estimated at: the precision, optimizer and one example's size
        frames.append(memory.fit_summary(report).assign(model=m, **{c: report[c] for c in FIT_CONDITIONS}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def cost_rows(
    a: str,
    b: str,
    book: prices.Prices,
    throughput: pd.DataFrame,
    price_kind: str,
    electricity_usd_per_kwh: float,
    years: float,
    utilization: float,
    cat: pd.DataFrame,
) -> pd.DataFrame:
    if price_kind == "any":  # compare like with like: a kind of price both cards have
        price_kind = cost.common_kind(book, [a, b]) or price_kind
    table = cost.cost_table(
        book, [a, b], ["fp32", "fp16"], price_kind, electricity_usd_per_kwh, years, utilization, catalogue=cat
    )
    kinds = {g: table.loc[table["gpu"] == g, "price_kind"].iloc[0] for g in (a, b)}
    kind_label = kinds[a] if kinds[a] == kinds[b] else f"{a} {kinds[a]}, {b} {kinds[b]}"
    rows = []

    def add(item, va, vb, note=""):
        rows.append({"item": item, "a": va, "b": vb, "a_over_b": _ratio(va, vb), "note": note})

    for p in ("fp32", "fp16"):
        ta = table[(table["gpu"] == a) & (table["precision"] == p)].iloc[0]
        tb = table[(table["gpu"] == b) & (table["precision"] == p)].iloc[0]
        add(
            f"USD per peak {p} TFLOPS (purchase)",
            _num(ta["usd_per_tflop"]),
            _num(tb["usd_per_tflop"]),
            _both_notes(a, ta["purchase_note"], b, tb["purchase_note"]),
        )
    ta = table[(table["gpu"] == a)].iloc[0]
    tb = table[(table["gpu"] == b)].iloc[0]
    bought = _both_notes(
        a,
        _dated(ta, "price", "purchase_note", f"{kinds[a]} price"),
        b,
        _dated(tb, "price", "purchase_note", f"{kinds[b]} price"),
    )
    if kinds[a] != kinds[b]:
        bought += ("; " if bought else "") + "different kinds of price: no kind both cards have"
    add(f"purchase price (USD, {kind_label})", _num(ta["price_usd"]), _num(tb["price_usd"]), bought)
    add(f"TCO over {years:g} years (USD)", _num(ta["tco_usd"]), _num(tb["tco_usd"]))
    add(
        "cloud price (USD per GPU-hour)",
        _num(ta["cloud_usd_per_hour"]),
        _num(tb["cloud_usd_per_hour"]),
        _both_notes(a, _cloud_note(ta), b, _cloud_note(tb)),
    )
    if not throughput.empty:
        mixed = throughput[throughput["precision"] == "fp16"]
        first = (mixed if len(mixed) else throughput).iloc[0]
        unit = first["unit"].split("/")[0]
        speeds = pd.DataFrame(
            {
                "gpu": [a, b],
                "throughput": [first["throughput_a"], first["throughput_b"]],
                "throughput_unit": [first["unit"]] * 2,
            }
        )
        work = cost.work_cost_table(
            book, speeds, price_kind, electricity_usd_per_kwh, years, utilization, catalogue=cat
        ).set_index("gpu")
        label = f"{first['workload']} {first['precision']}"
        add(
            f"USD per million {unit}, renting ({label})",
            _num(work.loc[a, "cloud_usd_per_million_items"]),
            _num(work.loc[b, "cloud_usd_per_million_items"]),
        )
        add(
            f"USD per million {unit}, owning ({label})",
            _num(work.loc[a, "owned_usd_per_million_items"]),
            _num(work.loc[b, "owned_usd_per_million_items"]),
        )
        ra, rb = cat[cat["gpu"] == a].iloc[0], cat[cat["gpu"] == b].iloc[0]
        add(
            f"{unit} per second per watt ({label})",
            _ratio(first["throughput_a"], ra["tdp_w"]),
            _ratio(first["throughput_b"], rb["tdp_w"]),
            "board power at full load",
        )
        add(
            f"{unit} per second per 1000 USD of purchase ({label})",
            _ratio(first["throughput_a"], (_num(ta["price_usd"]) or math.nan) / 1000),
            _ratio(first["throughput_b"], (_num(tb["price_usd"]) or math.nan) / 1000),
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- verdicts


def _speed_verdicts(a: str, b: str, thr: pd.DataFrame, ra: pd.Series, rb: pd.Series) -> list[dict]:
    out = []
    for _, r in thr.iterrows():
        topic = f"{r['workload']} training, {r['precision']}"
        basis = (
            r["basis_a"]
            if r["basis_a"] == r["basis_b"]
            else f"{r['basis_a']} for {a}, {r['basis_b']} for {b}"
        )
        if r["speedup_a_over_b"] is None:
            runs = a if r["throughput_a"] is not None else b
            out.append(
                {
                    "topic": topic,
                    "verdict": f"Only {runs} runs this natively.",
                    "reason": r["note"] + ".",
                    "condition": "Use fp16 (mixed_float16) on the other card.",
                }
            )
            continue
        s = r["speedup_a_over_b"]
        fast, slow, k = (a, b, s) if s >= 1 else (b, a, 1 / s)
        rf, rs = (ra, rb) if fast == a else (rb, ra)
        bound_f = r["bound_a"] if fast == a else r["bound_b"]
        math_f = r["math_a"] if fast == a else r["math_b"]
        math_s = r["math_b"] if fast == a else r["math_a"]
        peak_f = prec.math_unit(rf, r["precision"], True)[1]
        peak_s = prec.math_unit(rs, r["precision"], True)[1]
        bw = rf["memory_bandwidth_gbs"] / rs["memory_bandwidth_gbs"]
        compute = peak_f / peak_s
        shown = basis
        if "predicted" in basis:
            acc = perfmodel.family_accuracy(perfmodel.family(r["workload"]))
            if acc.get("pairs"):
                shown += (
                    f"; median error {acc['median_abs_error_pct']:.0f}% on published "
                    f"{perfmodel.family(r['workload'])} speedups"
                )
            if r.get("published_rows"):
                shown += "; published: " + _published_text(r["published_rows"], None, with_model=False)
        if k < SAME_SPEED:
            verdict = f"{fast} and {slow} are about as fast ({fast} by {_times(k)}, {shown})."
        else:
            verdict = f"{fast} is {_times(k)} as fast as {slow} ({shown})."
        reason = (
            f"The step is mostly {bound_f}-bound on {fast}; it has {_times(bw)} the memory bandwidth "
            f"({rf['memory_bandwidth_gbs']:g} vs {rs['memory_bandwidth_gbs']:g} GB/s) and {_times(compute)} "
            f"the matrix throughput ({math_f} {peak_f:g} vs {math_s} {peak_s:g} TFLOPS)."
        )
        if k < SAME_SPEED:
            condition = "Within 10 %: memory, price and power decide between them."
        elif compute < 1:
            condition = (
                f"More TFLOPS does not mean faster: {slow} has more peak compute, but this step is "
                f"held back by memory traffic, where {fast} leads."
            )
        elif bw < 1:
            condition = (
                f"{fast} wins on compute although {slow} has more bandwidth; memory-heavier steps narrow it."
            )
        else:
            condition = "Holds while the batch fits on both (see memory fit)."
        if r.get("published_rows"):
            # the verdict quotes the measurement; the reason adds the model's figure at the source's batch
            # sizes, the card the source measured faster first
            reason += f" {_model_at_published(r['published_rows'])}."
        elif "predicted" in basis:
            reason += f" No publication measured this pair; the model on this family: {r['model_error']}."
        out.append({"topic": topic, "verdict": verdict, "reason": reason, "condition": condition})
    return out


def _fit_verdicts(a: str, b: str, fit: pd.DataFrame, ra: pd.Series, rb: pd.Series) -> list[dict]:
    if fit.empty:
        return []
    out = []
    for model, g in fit.groupby("model", sort=False):
        ga, gb = g[g["gpu"] == a], g[g["gpu"] == b]
        la, lb = int(ga["largest_batch"].iloc[0]), int(gb["largest_batch"].iloc[0])
        only_a = [
            int(x) for x in ga.loc[ga["fits"].eq("yes").values & gb["fits"].eq("no").values, "batch_size"]
        ]
        only_b = [
            int(x) for x in gb.loc[gb["fits"].eq("yes").values & ga["fits"].eq("no").values, "batch_size"]
        ]
        if la == lb:
            continue
        big, small, lbig, lsmall = (a, b, la, lb) if la > lb else (b, a, lb, la)
        rbig, rsmall = (ra, rb) if big == a else (rb, ra)
        only = only_a if big == a else only_b
        verdict = f"{model} trains at batch {lbig} on {big}, {lsmall} on {small}"
        if lsmall == 0:
            verdict = f"{model} does not fit on {small} even at batch 1; {big} takes batch {lbig}"
        # what the batches were estimated at: precision, optimizer, one example's size
        said = [", ".join(str(g[c].iloc[0]) for c in FIT_CONDITIONS if c in g)]
        reason = f"{big} has {rbig['memory_gb']:g} GB against {rsmall['memory_gb']:g} GB."
        gbig, gsmall = (ga, gb) if big == a else (gb, ga)
        error = gbig["estimate_error"].iloc[0] if "estimate_error" in g else ""
        small_high = None
        if "largest_batch_low" in g and memory.batch_range(
            gbig["largest_batch_low"].iloc[0], gbig["largest_batch_high"].iloc[0]
        ):
            ranges = [
                memory.batch_range(x["largest_batch_low"].iloc[0], x["largest_batch_high"].iloc[0])
                for x in (gbig, gsmall)
            ]
            small_high = int(gsmall["largest_batch_high"].iloc[0])
            said.append(f"estimated; {ranges[0]} and {ranges[1]} within its measured error")
            reason += f" The estimate's measured error: {error}."
        elif error:
            reason += f" The estimate's error for this model: {error}."
        notes = "; ".join(n for n in said if n)
        verdict += f" ({notes})." if notes else "."
        condition = (
            f"At batch {', '.join(map(str, only))} only {big} fits, whatever the speed."
            if only
            else f"Above batch {lsmall} only {big} fits, whatever the speed"
            + (
                f"; above {small_high} even at the edge of the estimate's measured error."
                if small_high is not None and small_high != lsmall
                else "."
            )
        )
        out.append(
            {"topic": f"memory, {model}", "verdict": verdict, "reason": reason, "condition": condition}
        )
    return out


#: The cost rows a verdict is drawn from: (start of the row's item, topic, what "cheaper" is).
COST_VERDICTS = (
    ("purchase price", "cost to buy", "to buy"),
    ("TCO over", "cost to own, with power", "to own"),
    ("cloud price", "cost to rent (on-demand)", "to rent per GPU-hour"),
    ("USD per million", None, "per unit of work"),
)


def _money(usd: float) -> str:
    """Dollars to three significant figures, without an exponent: 0.263, 298, 4,150, 25,250."""
    return f"{usd:,.0f}" if abs(usd) >= 100 else f"{usd:.3g}"


def _cost_verdicts(a: str, b: str, costs: pd.DataFrame) -> list[dict]:
    """One verdict per cost row of :data:`COST_VERDICTS`: which card is cheaper and by how much,
    or "no verdict" naming the card without a dated, sourced price."""
    out = []
    for _, r in costs.iterrows():
        match = next((m for m in COST_VERDICTS if str(r["item"]).startswith(m[0])), None)
        if match is None:
            continue
        topic = match[1] or str(r["item"])
        if match[0] == "TCO over":
            topic = f"{topic} ({str(r['item'])[len('TCO over ') :].split(' (')[0]})"
        va, vb = _num(r["a"]), _num(r["b"])
        if va is None or vb is None:
            missing = [g for g, v in ((a, va), (b, vb)) if v is None]
            out.append(
                {
                    "topic": topic,
                    "verdict": f"No verdict: no price for {', '.join(missing)}.",
                    "reason": "gpukit only compares costs it has a dated, sourced price for.",
                    "condition": "Pass your own quotes with a price file to get one.",
                }
            )
            continue
        cheap, dear, k = (a, b, vb / va) if va <= vb else (b, a, va / vb)
        condition = "At the prices, electricity and utilisation given; prices move."
        if r.get("note"):
            condition = f"{str(r['note'])[0].upper()}{str(r['note'])[1:]}. {condition}"
        kind = str(r["item"])[len("purchase price (USD, ") : -1] if match[0] == "purchase price" else ""
        out.append(
            {
                "topic": topic,
                "verdict": f"{cheap} is {_times(k)} cheaper {match[2]} than {dear}"
                + (f" ({kind} prices)." if kind else "."),
                "reason": f"USD {_money(min(va, vb))} vs {_money(max(va, vb))} ({r['item']}).",
                "condition": condition,
            }
        )
    return out


def _link_verdict(a: str, b: str, ra: pd.Series, rb: pd.Series, thr: pd.DataFrame) -> list[dict]:
    """Two GPUs of each kind: predicted scaling over each one's link (NVLink or PCIe)."""
    if thr.empty:
        return []
    mixed = thr[thr["precision"] == "fp16"]
    first = (mixed if len(mixed) else thr).iloc[0]
    prof = perfmodel.profile(first["workload"], int(first["batch_size"]), first["precision"], "train")
    try:
        sa, sb = perfmodel.predict_scaling(prof, ra, 2), perfmodel.predict_scaling(prof, rb, 2)
    except (prec.Unsupported, ParameterError):
        return []
    ea, eb = sa["scaling_efficiency"], sb["scaling_efficiency"]
    bridges = []
    for name, row, s in ((a, ra, sa), (b, rb, sb)):
        if s["link"] != "NVLink" and float(row.get("nvlink_gbs") or 0) > 0:
            bridged = perfmodel.predict_scaling(prof, row, 2, link="nvlink")
            bridges.append(f"with an NVLink bridge two {name} would keep {bridged['scaling_efficiency']:.0%}")
    same = abs(ea - eb) < 0.02 and sa["link"] == sb["link"]
    if same and not bridges:
        return []
    better, worse, sbest, sworst = (a, b, sa, sb) if ea >= eb else (b, a, sb, sa)
    condition = (
        "Matters for multi-GPU training only, and less when the exchange overlaps the backward pass "
        "or the model is small."
    )
    if bridges:
        text = "; ".join(bridges)
        condition = f"{text[0].upper()}{text[1:]}. " + condition
    acc = perfmodel.family_accuracy("scaling")
    graded = (
        f"; median error {acc['median_abs_error_pct']:.0f}% on published N-GPU speedups"
        if acc.get("pairs")
        else ""
    )
    what = f"{first['workload']} {first['precision']} (predicted{graded})"
    if same:
        verdict = (
            f"Two {a} and two {b} keep about the same share of linear scaling on {what}: "
            f"{ea:.0%} and {eb:.0%}, both over {sa['link']}."
        )
    else:
        verdict = (
            f"Two {better} keep {sbest['scaling_efficiency']:.0%} of linear scaling on {what}, two {worse} "
            f"{sworst['scaling_efficiency']:.0%}."
        )
    return [
        {
            "topic": "two GPUs of each",
            "verdict": verdict,
            "reason": (
                f"Each step exchanges {sbest['gradient_mb']:.0f} MB of gradients: over "
                f"{sbest['link']} ({sbest['link_gbs_per_direction']:g} GB/s each way) on {better}, "
                f"{sworst['link']} ({sworst['link_gbs_per_direction']:g} GB/s) on {worse}. "
                f"Against published multi-GPU runs the model is {perfmodel.accuracy_text('scaling')}."
            ),
            "condition": condition,
        }
    ]


def compare(
    a: str,
    b: str,
    workloads: Sequence[str] = DEFAULT_WORKLOADS,
    precisions: Sequence[str] = DEFAULT_PRECISIONS,
    batch_size: int | None = None,
    models: Sequence[str] = DEFAULT_MODELS,
    fit_batch_sizes: Sequence[int] = DEFAULT_FIT_BATCHES,
    fit_precision: str = "fp16",
    optimizer: str = "adam",
    price_files=None,
    price_kind: str = "any",
    electricity_usd_per_kwh: float = 0.15,
    years: float = 3.0,
    utilization: float = 0.5,
    results: list | None = None,
    catalogue: pd.DataFrame | None = None,
) -> Comparison:
    """Everything gpukit knows about ``a`` against ``b``; see the module doc."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    ga, gb = specs.resolve(a, cat).gpu, specs.resolve(b, cat).gpu
    if ga == gb:
        raise ParameterError(f"{a!r} and {b!r} are the same GPU ({ga}); compare two different ones")
    ra, rb = cat[cat["gpu"] == ga].iloc[0], cat[cat["gpu"] == gb].iloc[0]
    thr, source = throughput_table(
        ga, gb, list(workloads), list(precisions), batch_size, results, cat, (a, b)
    )
    fit = fit_table(ga, gb, list(models), list(fit_batch_sizes), fit_precision, optimizer, cat)
    book = prices.load_prices(price_files)
    costs = cost_rows(ga, gb, book, thr, price_kind, electricity_usd_per_kwh, years, utilization, cat)
    verdicts = [
        {**v, "kind": kind}
        for kind, found in (
            ("speed", _speed_verdicts(ga, gb, thr, ra, rb)),
            ("memory", _fit_verdicts(ga, gb, fit, ra, rb)),
            ("cost", _cost_verdicts(ga, gb, costs)),
            ("scaling", _link_verdict(ga, gb, ra, rb, thr)),
        )
        for v in found
    ]
    return Comparison(ga, gb, spec_table(ra, rb), thr, fit, costs, verdicts, source)


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def save_for_report(result: Comparison) -> str | None:
    """Leave the verdicts for the report's index (``$GPUKIT_RUN_DIR/summary-compare-<a>-vs-<b>.json``)."""
    import os
    from pathlib import Path

    from .. import _atomic
    from ..results import RUN_DIR_ENV

    folder = os.environ.get(RUN_DIR_ENV)
    if not folder:
        return None
    path = Path(folder) / f"summary-compare-{_slug(result.a)}-vs-{_slug(result.b)}.json"
    doc = {
        "kind": "compare",
        "a": result.a,
        "b": result.b,
        "efficiency_source": result.efficiency_source,
        "verdicts": result.verdicts,
    }
    _atomic.write_text(path, json.dumps(doc, indent=1))
    return str(path)
