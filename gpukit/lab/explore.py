"""Widgets for exploring in JupyterLab (``interactive = True`` in a notebook's parameters).

Papermill runs leave ``interactive`` off, so rendered reports stay static; these functions
only build ipywidgets around package calls and hold no logic of their own.
"""

from __future__ import annotations

from .. import compare as _compare
from .. import perfmodel, specs
from ..present import tables
from ..prices import cost


def comparison(result: _compare.Comparison, electricity_usd_per_kwh: float = 0.15):
    """Sliders for the batch size of the first workload and the electricity price; a table of
    both GPUs' predicted throughput and power cost per million items updates as they move."""
    import ipywidgets as w
    from IPython.display import display

    first = result.throughput.iloc[0]
    batch = w.IntSlider(
        value=int(first["batch_size"]),
        min=1,
        max=1024,
        step=1,
        description="batch size",
        continuous_update=False,
    )
    kwh = w.FloatSlider(
        value=electricity_usd_per_kwh,
        min=0.0,
        max=1.0,
        step=0.01,
        description="USD/kWh",
        continuous_update=False,
    )
    out = w.Output()

    def update(*_):
        table = perfmodel.predict_table(
            first["workload"], first["precision"], batch.value, "train", [result.a, result.b]
        )
        watts = dict(zip(specs.load_catalogue()["gpu"], specs.load_catalogue()["tdp_w"]))
        table["power_usd_per_million_items"] = [
            cost.usd_per_million_items(watts[g] / 1000 * kwh.value, thr)
            for g, thr in zip(table["gpu"], table["throughput"])
        ]
        out.clear_output(wait=True)
        with out:
            display(
                tables.show(
                    table[["gpu", "throughput", "throughput_unit", "bound", "power_usd_per_million_items"]]
                )
            )

    batch.observe(update, "value")
    kwh.observe(update, "value")
    update()
    return w.VBox([w.HBox([batch, kwh]), out])


#: What the ranking widget offers to rank: a model to train, or an LLM to serve (``llm:`` name).
RANK_CHOICES = (
    "resnet50",
    "bert-base",
    "bert-large",
    "gpt2-small",
    "llm:qwen3-8b",
    "llm:gpt-oss-20b",
    "llm:llama-3.3-70b",
)


def ranking(workload: str = "bert-base", budget_usd: float = 0.0, renting: bool = False):
    """Pick a job, a budget and buying or renting, and see every GPU ranked by work per dollar
    (:func:`gpukit.rank.rank`): the bottom line, the table and the figure update together. A budget
    of 0 means none; renting reads it as dollars per hour."""
    import ipywidgets as w
    from IPython.display import display

    from .. import plots, rank

    job = w.Dropdown(options=RANK_CHOICES, value=workload, description="job")
    budget = w.FloatText(value=budget_usd, description="budget $", step=100)
    kind = w.ToggleButtons(options=("buy", "rent"), value="rent" if renting else "buy")
    out = w.Output()

    def update(*_):
        price = rank.Price("cloud" if kind.value == "rent" else "street", budget_usd=budget.value or None)
        if job.value.startswith("llm:"):
            ranked = rank.rank_llm(rank.LLMJob(job.value[4:]), price)
        else:
            ranked = rank.rank(rank.Job(job.value), price)
        out.clear_output(wait=True)
        with out:
            display(rank.answer(ranked))
            display(plots.rank_figure(ranked))

    for control in (job, budget, kind):
        control.observe(update, "value")
    update()
    return w.VBox([w.HBox([job, budget, kind]), out])
