"""The published speedups of a pair of GPUs, with the model's prediction for the GPUs and batch
sizes each source measured, and how a table or a verdict words them."""

from __future__ import annotations

import pandas as pd

from .. import perfmodel, specs
from ..perfmodel.grading import default_validation
from .numbers import times


def published_speedups(
    a: str | specs.GPU, b: str | specs.GPU, workload: str, precision: str, cat: pd.DataFrame
) -> list[dict]:
    """The published speedups of ``a`` over ``b`` on ``workload`` at ``precision`` (any memory or
    form-factor variant the name given fits, each source on its own), with the model's prediction
    for the very GPUs and batch sizes measured; empty when no source measured both."""
    table = default_validation(perfmodel.family(workload))
    if table.empty:
        return []
    fa, fb = (set(specs.gpu(g, cat).resolution.matches) for g in (a, b))
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


def oriented(found: dict, a_first: bool | None = None) -> tuple[str, str, float, float]:
    """One source's measurement of a pair as (first card, second card, published ratio, predicted
    ratio): ``a`` first when ``a_first``, the card the source measured faster first when it is None."""
    if a_first is None:
        a_first = found["published"] >= 1
    if a_first:
        return found["a"], found["b"], found["published"], found["predicted"]
    return found["b"], found["a"], 1 / found["published"], 1 / found["predicted"]


def published_text(found: list[dict], a_is_faster: bool | None = True, with_model: bool = True) -> str:
    """ "lambda-2021 measured RTX A5000 at 1.51× RTX A4000; the model gives 1.66× for its batch sizes",
    each source's measurement of the pair: the faster card first when ``a_is_faster`` (as the
    verdict states it), the card the source measured faster first when it is None; the model's
    ratio for the source's batch sizes with ``with_model``."""
    parts = []
    for f in found:
        fast, slow, pub, pred = oriented(f, a_is_faster)
        text = f"{f['source']} measured {fast} at {times(pub)} {slow}"
        parts.append(text + (f"; the model gives {times(pred)} for its batch sizes" if with_model else ""))
    return "; ".join(parts)


def model_at_published(found: list[dict]) -> str:
    """ "At lambda-2021's batch sizes the model gives A40 0.97× V100 SXM2 32GB, -21% from the
    published ratio": the model's ratio where each source measured the pair, the card the source
    measured faster first, and how far it is from that measurement (this pair's own error)."""
    parts = []
    for f in found:
        fast, slow, pub, pred = oriented(f)
        parts.append(
            f"{f['source']}'s batch sizes the model gives {fast} {times(pred)} {slow}, "
            f"{pred / pub - 1:+.0%} from the published ratio"
        )
    return "At " + "; at ".join(parts)
