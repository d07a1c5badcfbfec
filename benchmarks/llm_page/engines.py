"""Each engine profile graded on its own runs, in sample and with a GPU family held out, beside the
naive baselines on the same pairs (the first section of docs/accuracy/llm.md after the summary)."""

from __future__ import annotations

from gpukit import grading, llm
from gpukit.llm import baselines, calibrate
from gpukit.llm.grading import CONFIGURATION_PAIRED

from .._report import table_head

#: What the current llama.cpp profile is held to (issue targets, per test): the share of same-source
#: single-GPU pairs within :data:`gpukit.llm.calibrate.TOLERANCES`, and of winners right.
TARGETS = {"tg": 0.90, "pp": 0.75, "winners": 0.95}
TEST_NAMES = {"tg": "decode", "pp": "prefill"}


def _share(n: int, of: int) -> str:
    return f"{n} of {of} ({n / of:.0%})" if of else "–"


def _cells(summary: dict) -> str:
    return (
        f"{_share(summary['within_tolerance'], summary['pairs'])} | "
        f"{_share(summary['winners_right'], summary['decisive_pairs'])} | "
        + (f"{summary['median_abs_error_pct']:.1f}%" if summary["pairs"] else "–")
    )


def _baselines(rows, test: str) -> list[tuple[str, dict]]:
    """The naive baselines on ``rows``' pairs at ``test``'s tolerance."""
    tol = calibrate.TOLERANCES[test]
    if test == "pp":
        return [
            (
                "tensor peak ratio",
                grading.summarize(
                    baselines.grade(rows, baselines.peak_predictions(rows), CONFIGURATION_PAIRED, tol)
                ),
            )
        ]
    fixed = baselines.fit_fixed_cost(rows, CONFIGURATION_PAIRED)
    return [
        (
            "bandwidth ratio",
            grading.summarize(
                baselines.grade(rows, baselines.predictions(rows, 0.0), CONFIGURATION_PAIRED, tol)
            ),
        ),
        (
            f"bandwidth + {fixed * 1e6:.0f} µs a token",
            grading.summarize(
                baselines.grade(rows, baselines.predictions(rows, fixed), CONFIGURATION_PAIRED, tol)
            ),
        ),
    ]


def _values(values: dict) -> str:
    return ", ".join(f"{k} {'none' if v is None else f'{v:g}'}" for k, v in values.items())


def engine_section(name: str) -> list[str]:
    """One profile: what it describes, its in-sample grading per test beside the baselines, and each
    GPU family held out of a refit of its grid."""
    e = llm.ENGINES[name]
    lines = ["", f"### {e.label}", "", llm.engine_scope(name) + f" Sources: {', '.join(e.sources)}."]
    table = [
        "",
        *table_head("| test | prediction | pairs within tolerance | winners right | median error |", "llrrr"),
    ]
    graded = {}
    for test in ("tg", "pp"):
        rows = calibrate.runs(e, test)
        if rows.empty:
            continue
        tol = calibrate.TOLERANCES[test]
        s = grading.summarize(calibrate.grade(rows, e, test))
        graded[test] = s
        label = f"{TEST_NAMES[test]} (±{tol.speedup:.0%})"
        table.append(f"| {label} | the model | {_cells(s)} |")
        table += [f"| {label} | {what} | {_cells(b)} |" for what, b in _baselines(rows, test)]
    if not graded:
        return lines + ["", "No published single-GPU run of this profile's sources is in the data."]
    lines += table
    if name == "llama.cpp":
        lines += ["", _targets(graded)]
    for test, grid in calibrate.GRIDS.get(name, {}).items():
        if test not in graded:
            continue
        held = calibrate.held_out_summary(e, test, grid)
        fitted = calibrate.fit(e, test, grid)
        lines += [
            "",
            f"{TEST_NAMES[test].capitalize()} with one GPU family held out: the grid "
            f"({', '.join(grid)}) refitted without the family, then the pairs with one of its GPUs on either "
            f"side graded. Fitted on every family: {_values(fitted.values)}.",
            "",
            *table_head(
                "| family held out | refitted | pairs within tolerance | winners right | median error |",
                "llrrr",
            ),
        ]
        lines += [f"| {r['family']} | {_values(r['values'])} | {_cells(r)} |" for _, r in held.iterrows()]
    return lines


def _targets(graded: dict) -> str:
    parts = []
    for test in ("tg", "pp"):
        s = graded.get(test)
        if not s or not s["pairs"]:
            continue
        share, winners = s["within_tolerance"] / s["pairs"], s["winners_right"] / max(1, s["decisive_pairs"])
        parts.append(
            f"{TEST_NAMES[test]} {share:.0%} within ±{calibrate.TOLERANCES[test].speedup:.0%} against a target "
            f"of {TARGETS[test]:.0%} ({'met' if share >= TARGETS[test] else 'not met'}), winners {winners:.0%} "
            f"against {TARGETS['winners']:.0%} ({'met' if winners >= TARGETS['winners'] else 'not met'})"
        )
    return "Targets for a current llama.cpp: " + "; ".join(parts) + "."


def engines_section() -> list[str]:
    """Every profile of :data:`gpukit.llm.ENGINES` graded on its own runs."""
    out = [
        "",
        "## Each engine on its own runs",
        "",
        "Every engine profile (`gpukit.llm.ENGINES`) is graded on the single-GPU runs of its own sources, "
        "same-source pairs only: decode within ±20%, prefill within ±25%, winners called where the published gap "
        "exceeds 15% (`gpukit.llm.calibrate`). Beside the model, naive baselines on the very same pairs: for "
        "decode a bare ratio of datasheet bandwidths and the weights over that bandwidth plus one fixed time a "
        "token fitted to these pairs; for prefill a bare ratio of FP16 tensor peaks. Below each, the "
        "profile's constants refitted with one GPU family (architecture) left out, and graded on the pairs that "
        "involve it: the error to expect on a GPU family the fit never saw.",
    ]
    for name in llm.ENGINES:
        out += engine_section(name)
    return out
