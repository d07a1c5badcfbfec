"""The verdicts of a comparison, computed from its tables: which card is faster, which fits
larger batches, which is cheaper, and which scales better over its link, each with its reason
and the condition under which it turns."""

from __future__ import annotations

import pandas as pd

from .. import memory, perfmodel, specs
from .. import precision as prec
from ..errors import ParameterError
from .numbers import money, num, times
from .published import model_at_published, published_text
from .tables import FIT_CONDITIONS

#: Below this speedup two GPUs count as equally fast.
SAME_SPEED = 1.10


def speed_verdicts(a: specs.GPU, b: specs.GPU, thr: pd.DataFrame) -> list[dict]:
    """One verdict per throughput row: which card is faster and by how much, why (what bounds the
    step, each card's bandwidth and matrix throughput), and where a publication measured the pair,
    what it measured."""
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
        rf, rs = fast, slow
        bound_f = r["bound_a"] if fast is a else r["bound_b"]
        math_f = r["math_a"] if fast is a else r["math_b"]
        math_s = r["math_b"] if fast is a else r["math_a"]
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
                shown += "; published: " + published_text(r["published_rows"], None, with_model=False)
        if k < SAME_SPEED:
            verdict = f"{fast} and {slow} are about as fast ({fast} by {times(k)}, {shown})."
        else:
            verdict = f"{fast} is {times(k)} as fast as {slow} ({shown})."
        reason = (
            f"The step is mostly {bound_f}-bound on {fast}; it has {times(bw)} the memory bandwidth "
            f"({rf['memory_bandwidth_gbs']:g} vs {rs['memory_bandwidth_gbs']:g} GB/s) and {times(compute)} "
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
            reason += f" {model_at_published(r['published_rows'])}."
        elif "predicted" in basis:
            reason += f" No publication measured this pair; the model on this family: {r['model_error']}."
        out.append({"topic": topic, "verdict": verdict, "reason": reason, "condition": condition})
    return out


def fit_verdicts(a: specs.GPU, b: specs.GPU, fit: pd.DataFrame) -> list[dict]:
    """One verdict per model whose largest batch differs between the cards: the largest batch on
    each, within the estimate's measured error, and the batches only the larger card takes."""
    if fit.empty:
        return []
    out = []
    for model, g in fit.groupby("model", sort=False):
        ga, gb = g[g["gpu"] == a.name], g[g["gpu"] == b.name]
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
        rbig, rsmall = big, small
        only = only_a if big is a else only_b
        verdict = f"{model} trains at batch {lbig} on {big}, {lsmall} on {small}"
        if lsmall == 0:
            verdict = f"{model} does not fit on {small} even at batch 1; {big} takes batch {lbig}"
        # what the batches were estimated at: precision, optimizer, one example's size
        said = [", ".join(str(g[c].iloc[0]) for c in FIT_CONDITIONS if c in g)]
        reason = f"{big} has {rbig['memory_gb']:g} GB against {rsmall['memory_gb']:g} GB."
        gbig, gsmall = (ga, gb) if big is a else (gb, ga)
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


def cost_verdicts(a: specs.GPU, b: specs.GPU, costs: pd.DataFrame) -> list[dict]:
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
        va, vb = num(r["a"]), num(r["b"])
        if va is None or vb is None:
            missing = [str(g) for g, v in ((a, va), (b, vb)) if v is None]
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
                "verdict": f"{cheap} is {times(k)} cheaper {match[2]} than {dear}"
                + (f" ({kind} prices)." if kind else "."),
                "reason": f"USD {money(min(va, vb))} vs {money(max(va, vb))} ({r['item']}).",
                "condition": condition,
            }
        )
    return out


def link_verdict(a: specs.GPU, b: specs.GPU, thr: pd.DataFrame) -> list[dict]:
    """Two GPUs of each kind: predicted scaling over each one's link (NVLink or PCIe)."""
    if thr.empty:
        return []
    mixed = thr[thr["precision"] == "fp16"]
    first = (mixed if len(mixed) else thr).iloc[0]
    prof = perfmodel.profile(first["workload"], int(first["batch_size"]), first["precision"], "train")
    try:
        sa, sb = perfmodel.predict_scaling(prof, a.row, 2), perfmodel.predict_scaling(prof, b.row, 2)
    except (prec.Unsupported, ParameterError):
        return []
    ea, eb = sa["scaling_efficiency"], sb["scaling_efficiency"]
    bridges = []
    for name, row, s in ((a.name, a.row, sa), (b.name, b.row, sb)):
        if s["link"].startswith("PCIe") and float(row.get("nvlink_gbs") or 0) > 0:
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


def _buying(a: specs.GPU, b: specs.GPU, r: pd.Series) -> str:
    """Which card gives more throughput per $1,000 of its purchase price, best first."""
    missing = [str(g) for g, side in ((a, "a"), (b, "b")) if num(r[f"per_1k_usd_{side}"]) is None]
    if missing:
        return f"buying: no verdict, no purchase price for {', '.join(missing)}"
    (best, x, px), (other, y, py) = sorted(
        ((a, r["per_1k_usd_a"], r["price_a"]), (b, r["per_1k_usd_b"], r["price_b"])), key=lambda t: -t[1]
    )
    return (
        f"buying, {best} gives {times(x / y)} the {r['unit']} per dollar of {other} ({x:,.0f} vs {y:,.0f} "
        f"{r['unit']} per $1,000; {px} and {py})"
    )


def _renting(a: specs.GPU, b: specs.GPU, r: pd.Series) -> str:
    """Which card costs less per million items rented, cheapest first."""
    missing = [str(g) for g, side in ((a, "a"), (b, "b")) if num(r[f"usd_per_million_{side}"]) is None]
    if missing:
        return f"renting: no verdict, no cloud price for {', '.join(missing)}"
    (cheap, x, cx), (dear, y, cy) = sorted(
        ((a, r["usd_per_million_a"], r["cloud_a"]), (b, r["usd_per_million_b"], r["cloud_b"])),
        key=lambda t: t[1],
    )
    items = r["unit"].split("/")[0]
    return (
        f"renting, {cheap} costs {times(y / x)} less per million {items} than {dear} "
        f"(${money(x)} vs ${money(y)}; {cx} and {cy})"
    )


def value_verdicts(a: specs.GPU, b: specs.GPU, value: pd.DataFrame) -> list[dict]:
    """One verdict per row of ``value`` (:func:`gpukit.compare.tables.value_table`): which card
    gives more work per dollar, buying and renting, each price named with its kind or provider and
    its date, and the batch each card was taken at."""
    out = []
    for _, r in value.iterrows():
        if num(r["throughput_a"]) is None or num(r["throughput_b"]) is None:
            continue
        buying, renting = _buying(a, b, r), _renting(a, b, r)
        out.append(
            {
                "topic": f"per dollar, {r['workload']} training, {r['precision']}",
                "verdict": f"{buying[0].upper()}{buying[1:]}; {renting}.",
                "reason": f"{r['basis'].capitalize()} throughput, {r['batches']}: "
                f"{num(r['throughput_a']):,.0f} {r['unit']} on {a}, {num(r['throughput_b']):,.0f} on {b}.",
                "condition": f"At these dated prices; the throughput's error: {r['model_error']}.",
            }
        )
    return out
