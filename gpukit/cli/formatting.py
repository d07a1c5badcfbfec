"""How the command prints: fixed-width tables, the one-GPU card, numbers rounded for reading, and a
frame written to stdout as CSV or JSON when ``--format`` asks for it."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def format_value(value) -> str:
    """A cell's text: empty for a missing value or NaN, ``%g`` for a float."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if value != value else f"{value:g}"
    return str(value)


def format_table(rows: list[dict], columns: Sequence[str]) -> str:
    """A plain fixed-width table; empty cells where the GPU lacks a mode."""
    cells = [[format_value(r.get(c)) for c in columns] for r in rows]
    widths = [
        max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(columns)
    ]
    numeric = [all(_is_number(row[i]) for row in cells) for i in range(len(columns))]

    def line(values):
        return "  ".join(
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)
        ).rstrip()

    out = [line(columns), line(["-" * w for w in widths])]
    out += [line(row) for row in cells]
    return "\n".join(out)


def _is_number(text: str) -> bool:
    if text == "":
        return True
    try:
        float(text)
        return True
    except ValueError:
        return False


def format_card(row: dict) -> str:
    """One GPU, one field per line (the table view for a single GPU)."""
    width = max(len(k) for k in row)
    return "\n".join(f"{k.ljust(width)}  {format_value(v)}" for k, v in row.items())


def rounded(rows: list[dict]) -> list[dict]:
    """Rows for a text table: floats to three significant figures, NaN as empty."""
    return [
        {
            k: (
                float(f"{v:.3g}")
                if isinstance(v, float) and v == v
                else (None if isinstance(v, float) else v)
            )
            for k, v in r.items()
        }
        for r in rows
    ]


def emit(frame, fmt: str) -> bool:
    """Write ``frame`` as CSV or JSON records to stdout when ``fmt`` asks for it (True if written)."""
    if fmt == "csv":
        sys.stdout.write(frame.to_csv(index=False))
        return True
    if fmt == "json":
        print(frame.to_json(orient="records", indent=1, force_ascii=False))
        return True
    return False
