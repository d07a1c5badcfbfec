"""LLMs in a comparison: each model served by one engine on a server of each GPU (as many GPUs of
each as the larger model needs, a power of two as tensor parallel takes), its output tokens per
second at the largest batch the KV cache holds and for one sequence, and what a million output
tokens cost renting; and the verdict drawn from them."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .. import llm
from .. import precision as prec
from ..errors import ParameterError
from ..units import missing

#: Prompt and output tokens of a served request: a long prompt and a reasoning-length answer, the
#: lengths published Instinct-against-H200 serving runs use (``data/reference_serving_rocm.csv``).
SERVED_LENGTHS = (3200, 800)


def _server_size(model, weights: str, engine, rows: Sequence, tokens: int) -> int:
    """GPUs of each kind a comparison serves ``model`` on: the most either kind needs to hold one
    sequence, rounded up to a power of two; an error where either cannot hold it at all."""
    needed = []
    for row in rows:
        n = llm.gpus_needed_for_one(model, row, weights, tokens, engine=engine)
        if n is None:
            raise ParameterError(f"{model.name} at {weights} does not fit even {llm.MAX_GPUS} x {row['gpu']}")
        needed.append(n)
    return 1 << (max(needed) - 1).bit_length()


def serving_frame(
    ga,
    gb,
    models: Sequence[str],
    weights: str | None = None,
    engine: str | None = None,
    gpus: int | None = None,
    price_files=None,
    catalogue: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per model and GPU: :func:`gpukit.llm.serving_table` of the two GPUs, each model at
    ``weights`` (default: the checkpoint's own format) served by ``engine`` (default: the weights'
    usual one, on each device the profile of its family that describes it) on ``gpus`` of each
    (default: :func:`_server_size`)."""
    rows = []
    for name in models:
        m = llm.resolve_model(name)
        w = weights or m.native_weights
        e = llm.resolve_engine(engine or llm.default_engine(w))
        prompt, output = SERVED_LENGTHS
        n = gpus or _server_size(m, w, e, (ga.row, gb.row), prompt + output)
        for g in (ga, gb):
            device = llm.for_device(e, g.row)
            try:
                llm.check_engine_device(device, g.row)
            except prec.Unsupported as exc:
                rows.append({"model": m.name, "weights": w, "gpu": g.name, "gpus": n, "note": str(exc)})
                continue
            t = llm.serving_table(
                m, w, device, [g.name], n, "max", prompt, output, price_files=price_files, catalogue=catalogue
            )
            rows.append({**t.iloc[0].to_dict(), "model": m.name, "engine_name": device.name})
    return pd.DataFrame(rows)


def serving_error(engine_name: str) -> str:
    """How far to trust a served throughput of ``engine_name``: what published serving runs grade."""
    return "predicted; " + llm.serving_short_error(engine_name)


def serving_verdicts(a: str, b: str, frame: pd.DataFrame) -> list[dict]:
    """For each model both GPUs serve: which serves more output tokens per second on its server, and
    which serves a million of them for less renting; for a model only one can serve, that one."""
    out = []
    if frame.empty:
        return out
    for model, part in frame.groupby("model", sort=False):
        ra, rb = part[part["gpu"] == a].iloc[0], part[part["gpu"] == b].iloc[0]
        sa, sb = ra.get("serving_tokens_per_s"), rb.get("serving_tokens_per_s")
        prompt, output = SERVED_LENGTHS
        where = f"{model} ({ra['weights']}, {int(ra['gpus'])} GPUs of each, {prompt} + {output} tokens)"
        if missing(sa) or missing(sb):
            if missing(sa) and missing(sb):
                continue
            serves, not_ = (a, rb) if missing(sb) else (b, ra)
            out.append(
                {
                    "topic": f"serving {model}",
                    "verdict": f"Only {serves} serves {where}.",
                    "reason": f"{not_['gpu']}: {not_.get('note') or 'no prediction'}.",
                    "condition": "",
                }
            )
            continue
        fast, slow, fs, ss = (ra, rb, sa, sb) if sa >= sb else (rb, ra, sb, sa)
        verdict = f"{fast['gpu']} serves {fs / ss:.2f}x the output tokens/s of {slow['gpu']} on {where}."
        ca, cb = ra.get("usd_per_million_tokens"), rb.get("usd_per_million_tokens")
        if not (missing(ca) or missing(cb)):
            cheap, dear, cc, cd = (ra, rb, ca, cb) if ca <= cb else (rb, ra, cb, ca)
            verdict += (
                f" Renting, {cheap['gpu']} serves a million for {cd / cc:.2f}x less (${cc:.3g} vs ${cd:.3g})."
            )
        out.append(
            {
                "topic": f"serving {model}",
                "verdict": verdict,
                "reason": (
                    f"Predicted at the largest batch each server's KV cache holds ({int(fast['batch'])} sequences "
                    f"on {fast['gpu']}, {int(slow['batch'])} on {slow['gpu']}), {fs:,.0f} vs {ss:,.0f} tokens/s; "
                    f"{serving_error(str(ra['engine_name']))}."
                ),
                "condition": "At these lengths and the engine's profile; a newer engine build moves it.",
            }
        )
    return out
