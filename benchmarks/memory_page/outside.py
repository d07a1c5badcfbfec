"""The models kept out of the grid's figures and bands, measured as its cases are: their own
summary, the family bands they miss, every case."""

from __future__ import annotations

import statistics

from gpukit import memory

from .bands import TOLERANCE
from .cases import case_table


def outside_section(rows: list[dict], path: str, family_bands: dict[tuple, dict] | None = None) -> list[str]:
    """Cases measured as the grid's are, of models kept out of its statistics and bands, and how many
    of them the band `gpukit fit` quotes for their family in their mode (``family_bands``: :func:`.bands.bands`
    by :data:`.bands.BAND_KEYS`) misses."""
    ok = [r for r in rows if r["error"] is not None]
    if not ok:
        return []
    errs = sorted(abs(r["error"]) for r in ok)
    models = ", ".join(sorted({r["model"] for r in ok}))
    bands_of = family_bands or {}
    missed = []
    for fam in sorted({r["family"] for r in ok}):
        mine = [r for r in ok if r["family"] == fam and (fam, r["mode"]) in bands_of]
        if not mine:
            continue
        out = [
            r
            for r in mine
            if not bands_of[fam, r["mode"]]["error_low"]
            <= r["predicted"] / r["high"] - 1
            <= r["predicted"] / r["low"] - 1
            <= bands_of[fam, r["mode"]]["error_high"]
        ]
        quoted = ", ".join(
            f"{memory.MODE_WORDS[m]} {b['error_low']:+.1%} to {b['error_high']:+.1%}"
            for m, b in ((m, bands_of[fam, m]) for m in memory.MODES if (fam, m) in bands_of)
            if any(r["mode"] == m for r in mine)
        )
        missed.append(
            f"{len(out)} of the {len(mine)} {fam} cases have runs outside the band `gpukit fit` quotes "
            f"for that family in their mode ({quoted})"
        )
    lines = [
        "",
        "## Outside the grid",
        "",
        f"Measured as the grid's cases are, and left out of its figures and of the families' error bands "
        f"(`OUTSIDE_GRID` in the script says why; the runs: `{path}`): {models}. `gpukit fit` quotes and uses "
        "each one's own band in each precision (`--model-bands`, `data/memory_error_models.csv`) in place of "
        f"its family's. "
        f"{len(ok)} cases: median |error| {statistics.median(errs):.1%}, "
        f"{sum(e <= TOLERANCE for e in errs)} within ±{TOLERANCE:.0%}, worst {errs[-1]:.1%}"
        + ("; " + "; ".join(missed) if missed else "")
        + ".",
        "",
    ]
    return lines + case_table(ok)
