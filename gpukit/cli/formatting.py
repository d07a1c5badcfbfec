"""How the command prints: fixed-width tables and the one-GPU card with the headers and cells a reader
takes in (:mod:`gpukit.present.labels`), and a frame written to stdout as CSV or JSON, raw column names and
full values, when ``--format`` asks for it."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import textwrap
from collections.abc import Iterator, Sequence

from ..present import labels


def format_value(value) -> str:
    """A cell's text: empty for a missing value or NaN, ``%g`` for a float."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if value != value else f"{value:g}"
    return str(value)


#: The width this command's tables fit (set by ``gpukit``'s entry from ``--wide`` and the terminal;
#: "auto" outside it: :func:`terminal_width`).
TABLE_WIDTH: int | None | str = "auto"
#: The narrowest a column of words is wrapped to before the table leaves out its last columns.
MIN_TEXT_WIDTH = 12
#: Characters between two columns of a fitted table (a space each side of rich's column divider).
GAP = 3


def terminal_width() -> int | None:
    """The width the answers are fitted to: ``COLUMNS`` where it is set, the terminal's where
    standard output is one; None for a pipe or a file, where tables print whole (a reader there
    greps or scrolls, and ``--format csv|json`` keeps every column anyway)."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) >= 40:
        return int(env)
    if sys.stdout.isatty():
        return shutil.get_terminal_size((100, 24)).columns
    return None


def table_width() -> int | None:
    """The width this command's tables fit: what ``gpukit``'s entry set (``--wide``, a format other
    than a table: None), else :func:`terminal_width`."""
    return terminal_width() if TABLE_WIDTH == "auto" else TABLE_WIDTH


def format_table(rows: list[dict], columns: Sequence[str], width: int | None | str = "auto") -> str:
    """A plain fixed-width table under the columns' headers (:func:`labels.label`), a header longer
    than its column's cells on two lines; yes or no, numbers to three significant figures with
    thousands separators, empty cells where the GPU lacks a mode. Wider than ``width`` (by default
    :func:`terminal_width`; None: never), its long cells wrap inside their columns (rich's table)."""
    cells = [[labels.cell(r.get(c), empty="") for c in columns] for r in rows]
    widest = [max((len(row[i]) for row in cells), default=0) for i in range(len(columns))]
    heads = [_header_lines(labels.label(c), w) for c, w in zip(columns, widest)]
    widths = [max(w, *map(len, h)) for w, h in zip(widest, heads)]
    numeric = [all(_is_number(row[i]) for row in cells) for i in range(len(columns))]
    if width == "auto":
        width = table_width()
    if width is not None and sum(widths) + 2 * (len(widths) - 1) > width:
        return _fitted_table(list(columns), cells, numeric, widths, width)

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


def _fitted_table(
    columns: list[str], cells: list[list[str]], numeric: list[bool], widths: list[int], width: int
) -> str:
    """The table fitted to ``width``: its first columns (a command lists the ones that answer first),
    figures never broken, headers and words wrapped inside their column down to
    :data:`MIN_TEXT_WIDTH`; the columns that still do not fit left out, and named under it."""
    headers = [labels.label(c) for c in columns]
    figures = [max((len(r[i]) for r in cells), default=0) for i in range(len(columns))]
    longest_word = [max((len(w) for w in h.split()), default=0) for h in headers]
    least = [
        max(f, h) if num else max(h, min(w, MIN_TEXT_WIDTH))
        for f, h, w, num in zip(figures, longest_word, widths, numeric)
    ]
    keep = len(columns)
    while keep > 1 and sum(least[:keep]) + GAP * (keep - 1) > width:
        keep -= 1
    # each column at least its narrowest, the room left given to the first columns first
    given = list(least[:keep])
    room = width - sum(given) - GAP * (keep - 1)
    for i in range(keep):
        more = min(room, max(widths[i] - given[i], 0))
        given[i] += more
        room -= more
    table = _rich_table(headers[:keep], [r[:keep] for r in cells], numeric[:keep], given)
    text = _render(table, width)
    if keep < len(columns):
        left = ", ".join(headers[keep:])
        text += "\n" + textwrap.fill(
            f"(not shown at this width: {left}; --wide or --format csv shows every column)", width
        )
    return text


def _rich_table(headers: list[str], cells: list[list[str]], numeric: list[bool], given: list[int]):
    """The table as rich lays it out: each column ``given`` characters wide, words wrapped inside it."""
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1), header_style="")
    for head, num, w in zip(headers, numeric, given):
        table.add_column(head, justify="right" if num else "left", width=w, overflow="fold")
    for row in cells:
        table.add_row(*row)
    return table


def _console(width: int):
    from rich.console import Console

    return Console(width=width, file=io.StringIO(), color_system=None, force_terminal=False, highlight=False)


def _render(table, width: int) -> str:
    console = _console(width)
    console.print(table)
    lines = console.file.getvalue().replace("\u2500", "-").splitlines()
    return "\n".join(line.rstrip() for line in lines if line.strip())


class _FittedLines(io.TextIOBase):
    """Standard output with each line wider than ``width`` wrapped as prose: at spaces, continued
    under its own indent (under a bullet's text for a bullet)."""

    def __init__(self, out, width: int):
        self._out, self._width, self._pending = out, width, ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            self._out.write(self._fit(line) + "\n")
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._out.write(self._fit(self._pending))
            self._pending = ""
        self._out.flush()

    def _fit(self, line: str) -> str:
        if len(line) <= self._width:
            return line
        indent = line[: len(line) - len(line.lstrip())]
        bullet = line.lstrip()[:2] if line.lstrip()[:2] in ("* ", "- ") else ""
        return textwrap.fill(
            line.strip(),
            self._width,
            initial_indent=indent,
            subsequent_indent=indent + " " * len(bullet),
            break_on_hyphens=False,
        )


@contextlib.contextmanager
def fitted_output(width: int | None) -> Iterator[None]:
    """Within it, what a command prints fits ``width`` columns (None: as it is)."""
    if width is None:
        yield
        return
    fitted = _FittedLines(sys.stdout, width)
    saved, sys.stdout = sys.stdout, fitted
    try:
        yield
    finally:
        sys.stdout = saved
        fitted.flush()
