"""The fitted update terms (``gpukit.memory.UPDATE_WORKSPACE_FIT``) refitted on the measured cases, and
with a family left out: the figures and the page's paragraph on them."""

from __future__ import annotations

from gpukit import memory


def fit_update_terms(rows: list[dict], bounded: bool = True) -> dict[str, tuple[float, ...]]:
    """The update terms (gpukit.memory.UPDATE_WORKSPACE_FIT) per optimizer, fitted on the float32
    training cases by gpukit.memory.fit_update_terms, each within gpukit.memory.update_term_bounds
    (``bounded=False``: the three beside the backward pass only not below zero, for comparison)."""
    out = {}
    train = [r for r in rows if r["mode"] == "train" and r["precision"] == "fp32" and r["measured"]]
    for opt in sorted({r["optimizer"] for r in train}):
        rs = [r for r in train if r["optimizer"] == opt]
        if len(rs) < 2:
            continue
        low, high = memory.update_term_bounds(opt)
        if not bounded:
            high = (float("inf"),) * 3 + high[3:]
        out[opt] = memory.fit_update_terms(
            [(r["trainable_bytes"], r["largest_variable_bytes"], r["largest_embedding_bytes"]) for r in rs],
            [r["measured"] for r in rs],
            [r["step_peak_bytes"] for r in rs],
            [r["resident_bytes"] for r in rs],
            low,
            high,
        )
    return out


def _refit_error(r: dict, terms: dict) -> float:
    pred = r["predicted"]
    if r["mode"] == "train" and r["optimizer"] in terms:
        pred = float(
            memory.with_update(
                r["resident_bytes"],
                r["step_peak_bytes"],
                r["trainable_bytes"],
                r["largest_variable_bytes"],
                r["largest_embedding_bytes"],
                terms[r["optimizer"]],
            )
        )
    return pred / r["measured"] - 1


def leave_one_family_out(rows: list[dict], bounded: bool = True) -> dict[str, float]:
    """Worst |error| on each family when the update terms are fitted without it."""
    worst = {}
    for fam in sorted({r["family"] for r in rows}):
        terms = fit_update_terms([r for r in rows if r["family"] != fam], bounded)
        errs = [abs(_refit_error(r, terms)) for r in rows if r["family"] == fam and r["measured"]]
        worst[fam] = max(errs) if errs else float("nan")
    return worst


def update_terms_lines(rows: list[dict]) -> list[str]:
    """The fitted update terms: what they are, and what refitting them on these rows gives."""
    return [
        "",
        "The update terms (`gpukit.memory.UPDATE_WORKSPACE_FIT`: beside the backward pass a share of the "
        "trainable weights, multiples of the largest dense-gradient variable and of the largest embedding table; "
        "after it, when the activations are gone, a multiple of the largest embedding table, whose update runs "
        "last) are the only fitted figures, each held between zero and what an update can hold "
        "(`gpukit.memory.update_term_bounds`: every gradient once plus the temporaries Keras's update step makes, "
        "one for plain SGD and three for the others, counted in its source). With the three beside the backward "
        "pass held only above zero, a fit without a family misses it by up to "
        + ", ".join(f"{v:.0%} ({k})" for k, v in leave_one_family_out(rows, bounded=False).items())
        + "; the bounds matter where one family has the large variables (the CNNs' fully connected kernels). "
        "Refitted on this run's float32 training cases they come out as "
        + ", ".join(
            f"{k} ({', '.join(f'{v:.2f}' for v in terms)})" for k, terms in fit_update_terms(rows).items()
        )
        + "; the last column refits them without the family and predicts it.",
        "",
    ]
