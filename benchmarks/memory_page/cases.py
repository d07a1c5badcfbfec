"""A measured case as the script records it and the page reads it: its key, the 16-bit formats
its CPU had, its row in a table of cases."""

from __future__ import annotations

from .._report import table_head


def case_key(row: dict) -> tuple:
    """The case a row measured: what ``--resume`` and ``--merge-into`` match rows by, and the
    comparisons pair the grid's runs with another file's by."""
    return (
        row["model"],
        row["input"],
        row.get("seq_len"),
        row["batch"],
        row["precision"],
        row["optimizer"],
        row["mode"],
    )


def native_16bit(row: dict) -> tuple[str, ...] | None:
    """The 16-bit formats the CPU of a row's runs had instructions for (None: not recorded)."""
    native = row.get("native_16bit")
    return None if native is None else tuple(native)


def case_table(rows: list[dict]) -> list[str]:
    """A Markdown table of cases: the estimate, the median run, the range of runs and the error."""
    lines = [
        *table_head(
            "| model | input | batch | precision | optimizer | mode | predicted MiB | measured MiB | range MiB "
            "| error |",
            "llrlllrrlr",
        ),
    ]
    for r in rows:
        measured = f"{r['measured'] / 2**20:.1f}" if r["measured"] else r["note"][:60]
        spread = (
            f"{r['low'] / 2**20:.1f}–{r['high'] / 2**20:.1f}"
            if r["measured"] and r["low"] != r["high"]
            else ""
        )
        err = f"{r['error']:+.1%}" if r["error"] is not None else "—"
        lines.append(
            f"| {r['model']} | {r['input']} | {r['batch']} | {r['precision']} | {r['optimizer']} | "
            f"{r['mode']} | {r['predicted'] / 2**20:.1f} | {measured} | {spread} | {err} |"
        )
    return lines
