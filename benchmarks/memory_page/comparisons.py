"""The grid's cases set against the same cases measured another way: under TensorFlow's other CPU
kernels, and on a CPU with other 16-bit instructions."""

from __future__ import annotations

import statistics

from .._report import table_head
from .bands import TOLERANCE
from .cases import case_key, native_16bit


def _paired(rows: list[dict], others: list[dict], differ) -> list[tuple[dict, dict]]:
    """(grid row, other row) for each case of ``others`` the grid measured too, where ``differ(grid, other)``."""
    mine = {case_key(r): r for r in rows if r["measured"]}
    return [
        (mine[case_key(o)], o)
        for o in others
        if o.get("measured") and case_key(o) in mine and differ(mine[case_key(o)], o)
    ]


#: How far apart two kernels' peaks must be for the comparison to list the case.
KERNEL_GAP = 0.10


def _onednn(row: dict) -> bool:
    """Whether a row's runs ran oneDNN's CPU kernels (its ``onednn``: every run's answer)."""
    return any(row.get("onednn") or ())


def kernels_section(rows: list[dict], other: dict, path: str) -> list[str]:
    """The grid's cases measured again under the other CPU kernels (``other``: a ``--raw`` file
    whose rows say by ``onednn`` how they ran and whose ``kernels`` describes each way), against
    the grid's runs: Eigen's peak over oneDNN's, how much they move, and where."""
    pairs = _paired(
        rows,
        other["rows"],
        lambda r, o: (
            _onednn(o) != _onednn(r) and (o["precision"] == "fp32" or native_16bit(o) == native_16bit(r))
        ),
    )  # on one CPU's 16 bits
    if not pairs:
        return []
    # each pair as (oneDNN's row, Eigen's row, the grid's row)
    oriented = [(r, o, r) if _onednn(r) else (o, r, r) for r, o in pairs]
    ratio = [e["measured"] / d["measured"] for d, e, _ in oriented]
    moved = sorted(
        (p for p, x in zip(oriented, ratio) if abs(x - 1) > KERNEL_GAP),
        key=lambda p: -p[1]["measured"] / p[0]["measured"],
    )
    errs = [abs(r["predicted"] / o["measured"] - 1) for r, o in pairs]
    eigen_grid = sorted({r["model"] for r, _ in pairs if not _onednn(r)})
    names = {"eigen": "Eigen's", "onednn": "oneDNN's"}
    described = (
        "; ".join(f"{names.get(name, name)}: {text}" for name, text in other["kernels"].items())
        if isinstance(other["kernels"], dict)
        else other["kernels"]
    )
    lines = [
        "",
        "## The CPU kernels: Eigen's against oneDNN's",
        "",
        f"{len(pairs)} of the cases above were measured with TensorFlow's other CPU kernels too: Eigen's where "
        f"the grid ran oneDNN's, oneDNN's where it ran Eigen's ({', '.join(eigen_grid) or 'none'}); "
        f"{described}; the runs: `{path}`. Eigen's peak over oneDNN's: median {statistics.median(ratio):.2f}x, "
        f"from {min(ratio):.2f}x to {max(ratio):.2f}x; {sum(x > 1 + KERNEL_GAP for x in ratio)} higher by more than "
        f"{KERNEL_GAP:.0%}, {sum(x < 1 - KERNEL_GAP for x in ratio)} lower. Against the other kernels' runs the "
        f"estimate's median |error| would be {statistics.median(errs):.1%}, {sum(e <= TOLERANCE for e in errs)} of "
        f"{len(errs)} within ±{TOLERANCE:.0%}, the worst {max(errs):.1%}. The cases that move by more than "
        f"{KERNEL_GAP:.0%} (the grid's kernels marked *):",
        "",
        *table_head(
            "| model | batch | precision | optimizer | mode | predicted MiB | oneDNN MiB (range) | Eigen MiB (range) "
            "| Eigen / oneDNN |",
            "lrlllrrrr",
        ),
    ]

    def cell(row, grid):
        mark = "*" if row is grid else ""
        return f"{row['measured'] / 2**20:.1f}{mark} ({row['low'] / 2**20:.1f}–{row['high'] / 2**20:.1f})"

    for d, e, r in moved:
        lines.append(
            f"| {r['model']} | {r['batch']} | {r['precision']} | {r['optimizer']} | {r['mode']} | "
            f"{r['predicted'] / 2**20:.1f} | {cell(d, r)} | {cell(e, r)} | "
            f"{e['measured'] / d['measured']:.2f} |"
        )
    return lines


def other_cpu_section(rows: list[dict], other: dict, path: str) -> list[str]:
    """The grid's 16-bit cases measured on a CPU with other 16-bit instructions (``other``: a ``--raw``
    file whose rows say by ``native_16bit`` what their CPU had and whose ``cpu`` describes it): both
    measurements and the estimate's error against each."""
    pairs = _paired(rows, other["rows"], lambda r, o: native_16bit(o) != native_16bit(r))
    if not pairs:
        return []
    ratio = [r["measured"] / o["measured"] for r, o in pairs]
    errs_here = [abs(r["error"]) for r, _ in pairs]
    errs_there = [abs(r["predicted"] / o["measured"] - 1) for r, o in pairs]

    def says(row):
        native = native_16bit(row)
        return "not recorded" if native is None else ("+".join(native) or "none")

    lines = [
        "",
        "## 16-bit formats on a CPU without their instructions",
        "",
        f"{len(pairs)} of the cases above were measured on a CPU with other 16-bit instructions too "
        f"({other['cpu']}; the runs: `{path}`). A CPU without instructions for a 16-bit format multiplies its "
        "matrices through float32 copies of both operands and the result (`gpukit.bench.device.NATIVE_16BIT_FLAGS`); "
        "a GPU's tensor cores do not. The grid's rows are the runs on the CPU with the instructions. Their peak "
        f"over the other CPU's: median {statistics.median(ratio):.2f}x, from {min(ratio):.2f}x to {max(ratio):.2f}x. "
        f"The estimate's median |error| is {statistics.median(errs_here):.1%} against the grid's runs "
        f"(worst {max(errs_here):.1%}) and would be {statistics.median(errs_there):.1%} against the other CPU's "
        f"(worst {max(errs_there):.1%}).",
        "",
        *table_head(
            "| model | input | batch | precision | optimizer | mode | predicted MiB | grid MiB (range) | CPU's 16-bit "
            "| other CPU MiB (range) | its 16-bit | grid / other | error | error against the other |",
            "llrlllrrlrlrrr",
        ),
    ]

    def cell(row):
        return f"{row['measured'] / 2**20:.1f} ({row['low'] / 2**20:.1f}–{row['high'] / 2**20:.1f})"

    for r, o in pairs:
        lines.append(
            f"| {r['model']} | {r['input']} | {r['batch']} | {r['precision']} | {r['optimizer']} | "
            f"{r['mode']} | {r['predicted'] / 2**20:.1f} | {cell(r)} | {says(r)} | {cell(o)} | {says(o)} | "
            f"{r['measured'] / o['measured']:.2f} | {r['error']:+.1%} | "
            f"{r['predicted'] / o['measured'] - 1:+.1%} |"
        )
    return lines
