"""How the command prints: fixed-width tables and the one-GPU card with the headers and cells a reader
takes in (:mod:`gpukit.present.labels`), and a frame written to stdout as CSV or JSON, raw column names and
full values, when ``--format`` asks for it."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..present import labels


def format_value(value) -> str:
    """A cell's text: empty for a missing value or NaN, ``%g`` for a float."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if value != value else f"{value:g}"
    return str(value)


def format_table(rows: list[dict], columns: Sequence[str]) -> str:
    """A plain fixed-width table under the columns' headers (:func:`labels.label`), a header longer
    than its column's cells on two lines; yes or no, numbers to three significant figures with
    thousands separators, empty cells where the GPU lacks a mode."""
    cells = [[labels.cell(r.get(c), empty="") for c in columns] for r in rows]
    widest = [max((len(row[i]) for row in cells), default=0) for i in range(len(columns))]
    heads = [_header_lines(labels.label(c), w) for c, w in zip(columns, widest)]
    widths = [max(w, *map(len, h)) for w, h in zip(widest, heads)]
    numeric = [all(_is_number(row[i]) for row in cells) for i in range(len(columns))]

    def line(values):
        return "  ".join(
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)
        ).rstrip()

    out = [line(h) for h in zip(*heads) if any(h)]
    out += [line(["-" * w for w in widths])]
    out += [line(row) for row in cells]
    return "\n".join(out)


def _header_lines(header: str, cells: int) -> tuple[str, str]:
    """``header`` as a top and a bottom line, broken at the space that leaves its column narrowest,
    before the unit where that is as narrow ("memory bandwidth" over "(GB/s)"), never inside the
    unit; whole on the bottom line where breaking would narrow a column ``cells`` wide by less
    than :data:`HEADER_BREAK_SAVES` characters (a GPU's name as a header stays whole)."""
    whole = max(len(header), cells)
    best, narrowest, depth = ("", header), whole, 0
    for i, char in enumerate(header):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char != " " or depth:
            continue
        top, bottom = header[:i], header[i + 1 :]
        width = max(len(top), len(bottom), cells)
        if width < narrowest or (width == narrowest and best[0] and bottom.startswith("(")):
            best, narrowest = (top, bottom), width
    return best if whole - narrowest >= HEADER_BREAK_SAVES else ("", header)


#: Characters a header's break must save its column to be worth a second line.
HEADER_BREAK_SAVES = 3


def _is_number(text: str) -> bool:
    if text in ("", "∞", "-∞"):
        return True
    try:
        float(text.replace(",", ""))
        return True
    except ValueError:
        return False


def format_card(row: dict) -> str:
    """One GPU, one field per line under its header (the table view for a single GPU)."""
    headers = {k: labels.label(k) for k in row}
    width = max(len(h) for h in headers.values())
    return "\n".join(
        f"{headers[k].ljust(width)}  {labels.cell(v, empty='')}".rstrip() for k, v in row.items()
    )


def rounded(rows: list[dict]) -> list[dict]:
    """Rows for a text table, NaN as empty; :func:`format_table` rounds each number as it writes it
    (three significant figures, the digits before the point kept)."""
    return [{k: None if labels.missing(v) else v for k, v in r.items()} for r in rows]


def emit(frame, fmt: str) -> bool:
    """Write ``frame`` as CSV or JSON records to stdout when ``fmt`` asks for it (True if written)."""
    if fmt == "csv":
        sys.stdout.write(frame.to_csv(index=False))
        return True
    if fmt == "json":
        print(frame.to_json(orient="records", indent=1, force_ascii=False))
        return True
    return False
