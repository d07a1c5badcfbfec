"""Widgets for exploring in JupyterLab (``interactive = True`` in a notebook's parameters).

Papermill runs leave ``interactive`` off, so rendered reports stay static; these functions
only build ipywidgets around package calls and hold no logic of their own.
"""

from __future__ import annotations

from . import compare as _compare
from . import cost, perfmodel, specs, tables


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
