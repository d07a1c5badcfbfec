"""Strict CSV reading shared by the data files (catalogue, prices): a schema of typed
columns, and problems that name the file, line, column and the fix."""

from __future__ import annotations

import csv
import difflib
import math
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pandas as pd

from .errors import DataError, Problem


@dataclass(frozen=True)
class Field:
    """One column: its type, whether it may be empty, its range and meaning."""

    name: str
    kind: str  # text | choice | int | float | month | date | url | cc
    required: bool = True
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    help: str = ""
    default: str | None = None  # a column with a default may be left out of a file (older layouts)


class CellError(ValueError):
    """A single cell is wrong: ``str(self)`` says what and how to fix it."""


def parse_cell(field: Field, raw: str, today: date):
    """The typed value of one cell, or :class:`CellError` saying what is wrong and the fix."""
    text = raw.strip()
    if text == "":
        if field.required:
            raise CellError(
                f"is empty; {field.name} is required" + (f" ({field.help})" if field.help else "")
            )
        return None
    kind = field.kind
    if kind in ("int", "float"):
        try:
            value = float(text.replace("_", ""))
        except ValueError:
            raise CellError(
                f"{text!r} is not a number; write a plain number such as 19.2 (no units)"
            ) from None
        if math.isnan(value) or math.isinf(value):
            raise CellError(f"{text!r} is not a finite number")
        if kind == "int":
            if value != int(value):
                raise CellError(f"{text!r} is not a whole number; write an integer")
            value = int(value)
        if value == 0 and not field.required and (field.low or 0) > 0:
            raise CellError("is 0; leave it empty where the GPU lacks the mode or the figure is unknown")
        if field.low is not None and value < field.low or field.high is not None and value > field.high:
            raise CellError(f"{text} is out of range; expected {field.low:g} to {field.high:g}")
        return value
    if kind == "choice":
        if text not in field.choices:
            raise CellError(f"{text!r} is not one of {', '.join(field.choices)}")
        return text
    if kind == "cc":
        if not re.fullmatch(r"\d+\.\d", text):
            raise CellError(f"{text!r} is not a compute capability; write major.minor such as 8.6")
        return text
    if kind == "month":
        m = re.fullmatch(r"(\d{4})-(\d{2})", text)
        if not m or not 1 <= int(m.group(2)) <= 12:
            raise CellError(f"{text!r} is not a month; write YYYY-MM such as 2021-04")
        return text
    if kind == "date":
        try:
            value = date.fromisoformat(text)
        except ValueError:
            raise CellError(f"{text!r} is not a date; write YYYY-MM-DD such as 2026-11-29") from None
        if value > today:
            raise CellError(f"{text} is in the future; write the date the source was read")
        return text
    if kind == "url":
        if not re.fullmatch(r"https?://[^\s]+\.[^\s]+", text):
            raise CellError(f"{text!r} is not a web address; write the full https:// URL of the source")
        return text
    return text


def read_rows(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the non-blank rows (with their line numbers) of a UTF-8 CSV file."""
    if not path.exists():
        raise DataError([Problem(path, None, None, "file not found; pass the path of a CSV file")])
    if path.is_dir():
        raise DataError([Problem(path, None, None, "is a folder; pass the path of a CSV file")])
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            rows = [(reader.line_num, r) for r in reader]
    except UnicodeDecodeError as exc:
        raise DataError(
            [Problem(path, None, None, f"is not UTF-8 text ({exc.reason}); save it as UTF-8 CSV")]
        ) from None
    except csv.Error as exc:
        raise DataError([Problem(path, None, None, f"is not valid CSV ({exc})")]) from None
    return ([h.strip() for h in header] if header else []), [
        (n, r) for n, r in rows if any(c.strip() for c in r)
    ]


def parse_rows(
    path: Path, schema: tuple[Field, ...], today: date, what: str = "data"
) -> tuple[list[tuple[int, dict]], list[Problem]]:
    """Check the header against ``schema`` and parse every row.

    A wrong header raises at once; cell problems are returned with the rows that parsed, so a
    caller can add its own checks and report everything together.
    """
    header, rows = read_rows(path)
    columns = [f.name for f in schema]
    if not header:
        raise DataError([Problem(path, None, None, f"is empty; it needs a header row: {','.join(columns)}")])
    problems: list[Problem] = []
    seen: set[str] = set()
    for col in header:
        if col in seen:
            problems.append(Problem(path, 1, col, "appears twice in the header; keep one"))
        seen.add(col)
        if col not in columns:
            close = difflib.get_close_matches(col, columns, n=1)
            hint = f"; did you mean {close[0]}?" if close else "; remove it"
            problems.append(Problem(path, 1, col, f"is not a column of this file{hint}"))
    missing = [f.name for f in schema if f.name not in seen and f.default is None]
    if missing:
        problems.append(Problem(path, 1, None, f"header lacks column(s) {', '.join(missing)}; add them"))
    if problems:
        raise DataError(problems)
    if not rows:
        raise DataError([Problem(path, None, None, f"has a header but no {what} rows")])
    parsed: list[tuple[int, dict]] = []
    for line, raw in rows:
        label = raw[0].strip() if raw and raw[0].strip() else None
        if len(raw) != len(header):
            problems.append(
                Problem(
                    path,
                    line,
                    None,
                    (
                        f"has {len(raw)} fields, the header has {len(header)}; quote any value that contains a comma"
                    ),
                    label,
                )
            )
            continue
        cells = {**{f.name: f.default for f in schema if f.default is not None}, **dict(zip(header, raw))}
        row: dict = {}
        ok = True
        for field in schema:
            try:
                row[field.name] = parse_cell(field, cells[field.name], today)
            except CellError as exc:
                problems.append(Problem(path, line, field.name, str(exc), label))
                ok = False
        if ok:
            parsed.append((line, row))
    return parsed, problems


def to_frame(records: list[dict], schema: tuple[Field, ...]) -> pd.DataFrame:
    """Records as a frame with one dtype per column (floats, nullable ints, text)."""
    frame = pd.DataFrame.from_records(records, columns=[f.name for f in schema])
    for field in schema:
        if field.kind == "float":
            frame[field.name] = frame[field.name].astype("float64")
        elif field.kind == "int":
            frame[field.name] = frame[field.name].astype("Int64" if not field.required else "int64")
    return frame
